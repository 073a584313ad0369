"""The lending game on the engine against the lending scenario's old loop, and the lender's table.

Speed (the default): German credit, SA-OLS (or ``--learners``), δ = 0.25, T = 20,000, 10 seeds,
one thread. In one run it times

* ``old loop``: the scenario's own Python loop before lending ran on the compiled engine
  (``legacy_lending.py``, the decision API round by round) on its seeds;
* ``engine, replayed``: the lending game on the compiled engine (``simulate``: the rounds, the
  per-seed benchmark replay, the table) on the *same applicants*, the old loop's rows played in
  order, one ``simulate`` call per seed, and checks that the two agree (profit and counts to the
  bit, regrets against the least-squares rule to 1e-9);
* ``engine``: the lending game on its own streams, all seeds in one ``simulate`` call;

after a warm-up that compiles and runs the search for the best linear rule once (its time is
printed apart: the search runs once per data set and process). Prints the times (best of
``--repeat`` for the engine) and the ratios.

Table (``--table``): every learner of the comparison at each budget on ``--data``, the lender's
table of ``sat lending`` (profit per 1,000 applicants, regrets against the best linear rule and
the least-squares rule).

Usage: ``python benchmarks/lending.py [--horizon 20000] [--seeds 10] [--delta 0.25]
[--learners sa-ols] [--repeat 3]`` or ``python benchmarks/lending.py --table [--data fico]
[--deltas 0.25 0.5 1] [--threads 2]``. German credit needs the ``lending`` extra.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from strategic_apple_tasting import simulate
from strategic_apple_tasting.engine.hindsight import game_search
from strategic_apple_tasting.scenarios import (
    LEARNERS,
    DataSet,
    compare_lending,
    data_game,
    format_table,
    from_lending,
    load_dataset,
    load_german_credit,
    run_lending,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import legacy_lending as old


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def speed(args: argparse.Namespace) -> None:
    data = load_german_credit()
    dataset = from_lending(data)
    seeds = list(range(args.seeds))
    game = data_game(dataset, delta=args.delta)
    took_search, search = _timed(lambda: game_search(game))
    simulate(game, args.learners, 200, seeds=[0])  # compile (or load) outside the timings
    print(f"German credit: n = {data.n}, d = {data.d}; learners {', '.join(args.learners)}; "
          f"δ = {args.delta:g}, T = {args.horizon:,}, {len(seeds)} seeds, one thread")
    print(f"the best linear rule, by {search.describe()}: {took_search:.2f} s (once per data "
          f"set and process)")
    took_old, before = _timed(lambda: old.run_lending(
        data, args.learners, horizon=args.horizon, seeds=seeds, delta=args.delta))
    agents = old.subset_agents(data.gameable, args.delta)
    games = []
    for s in seeds:
        rows = old._Streams.make(np.random.SeedSequence(0), s, data, agents, args.horizon,
                                 0.0).rows
        replay = DataSet(dataset.contexts._replace(order=rows.astype(np.int64)),
                         dataset.gameable, dataset.source)
        games.append(data_game(replay, delta=args.delta))

    def replayed() -> pd.DataFrame:
        return pd.concat([simulate(g, args.learners, args.horizon, seeds=[s]).to_pandas()
                          for s, g in zip(seeds, games, strict=True)])

    took_replay, now = min((_timed(replayed) for _ in range(args.repeat)), key=lambda r: r[0])
    took_engine = min(_timed(lambda: simulate(game, args.learners, args.horizon, seeds=seeds))[0]
                      for _ in range(args.repeat))
    now = now[now.t == args.horizon].set_index(["learner", "seed"])
    was = before.set_index(["learner", "seed"])
    exact = all((was.loc[k].reward, was.loc[k].accepted, was.loc[k].moved, was.loc[k].clean,
                 was.loc[k].gamed_as_clean) == (now.loc[k].profit, now.loc[k].accepted,
                                                now.loc[k].moved, now.loc[k].clean,
                                                now.loc[k].gamed_as_clean) for k in was.index)
    gap = max(float(np.max(np.abs(was.regret - now.ls_regret.loc[was.index]))),
              float(np.max(np.abs(was.stackelberg_regret
                                  - now.ls_stackelberg_regret.loc[was.index]))))
    rounds = len(args.learners) * len(seeds) * args.horizon
    print("| loop | seconds | µs a round | old / this |\n|---|---:|---:|---:|")
    for name, took in (("old loop", took_old), ("engine, replayed", took_replay),
                       ("engine", took_engine)):
        print(f"| {name} | {took:.3f} | {1e6 * took / rounds:.2f} | {took_old / took:.0f}× |")
    print(f"same applicants: profit and counts equal to the bit: {'yes' if exact else 'NO'}; "
          f"largest difference of the regrets against the least-squares rule: {gap:.1e}")


def table(args: argparse.Namespace) -> None:
    data = load_dataset(args.data)
    print(f"data: {data.source}; n = {data.n}, d = {data.d}, gameable: "
          f"{', '.join(data.gameable_names())}")
    print(f"the best linear rule, by {game_search(data_game(data)).describe()}")
    start = time.perf_counter()
    runs = pd.concat([run_lending(data, args.learners, horizon=args.horizon, seeds=args.seeds,
                                  delta=d, threads=args.threads, per_decade=5)
                      for d in args.deltas], ignore_index=True)
    print(f"T = {args.horizon:,}, {args.seeds} seeds, {args.threads} thread(s): "
          f"{time.perf_counter() - start:.0f} s (compilation included)")
    print(format_table(compare_lending(runs)))
    if args.csv:
        runs.to_csv(args.csv, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="the lender's table instead")
    parser.add_argument("--data", default="german-credit", help="--table: the data set")
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--delta", type=float, default=0.25)
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    parser.add_argument("--learners", nargs="+", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--csv", help="--table: also write every run's rows here")
    args = parser.parse_args()
    if args.table:
        args.learners = args.learners or list(LEARNERS)
        table(args)
    else:
        args.learners = args.learners or ["sa-ols"]
        speed(args)


if __name__ == "__main__":
    main()
