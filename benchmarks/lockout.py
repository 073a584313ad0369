"""The logistic learners' lock-out, and exploration once locked out, on the lending books.

Each logistic learner runs with exploration off (``explore=0``), at 1%, the default 5% and
20%, beside naive greedy (which never locks out: it fits a line, not a probability against
5/6), on the same seeds (paired). Printed per book and budget: the share of applicants
granted and the profit per 1,000 applicants, ± the half-width of its 95% interval over
seeds, and how many rounds each learner explored at the default share on seed 0. FICO's
rows are a population (every draw is a new applicant from it); German credit is scored on
held-out rows (protocol holdout).

    python benchmarks/lockout.py --seeds 10 --horizon 100000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from strategic_apple_tasting.engine import simulate
from strategic_apple_tasting.learners import make_learner
from strategic_apple_tasting.metrics import mean_ci
from strategic_apple_tasting.scenarios.datasets import data_game, load_dataset

LOGISTIC = ("offset-logistic", "sa-logistic", "naive-logistic")
SHARES = (0.0, 0.01, 0.05, 0.2)


def _shown(values: np.ndarray) -> str:
    mean, half = mean_ci(values)
    return f"{mean:.1f} ± {half:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--data", default="fico,german-credit")
    parser.add_argument("--delta", default="0,0.5,1")
    args = parser.parse_args()
    for book in args.data.split(","):
        protocol = "replay" if book == "fico" else "holdout"
        column = "profit" if protocol == "replay" else "holdout_profit"
        print(f"\n## {book} (protocol {protocol}; T = {args.horizon:,}, {args.seeds} seeds)\n")
        print("| δ | learner | explore | granted | profit per 1,000 | explored rounds |")
        print("|---:|---|---:|---:|---:|---:|")
        for delta in (float(v) for v in args.delta.split(",")):
            data = load_dataset(book)
            game = data_game(data, delta=delta, protocol=protocol)
            scale = float(data.contexts.reward_scale)
            arms = [(name, share, make_learner(name, explore=share))
                    for name in LOGISTIC for share in SHARES]
            arms.append(("naive-greedy", None, make_learner("naive-greedy")))
            started = time.perf_counter()
            table = simulate(game, [lr for *_, lr in arms], args.horizon,
                             args.seeds).to_pandas()
            last = table[table["t"] == args.horizon]
            for k, (name, share, _) in enumerate(arms):
                label = last["learner"].unique()[k]
                runs = last[last["learner"] == label].sort_values("seed")
                granted = runs["accepted"].to_numpy() / args.horizon
                # In the data's units: online profit is a total over T, held-out profit is
                # per applicant, both in the rewards' scaled units.
                per = 1000.0 * scale / (args.horizon if protocol == "replay" else 1.0)
                profit = runs[column].to_numpy(dtype=float) * per
                explored = "" if share != 0.05 else _explored(game, name, share, args)
                print(f"| {delta:g} | {name} | {'' if share is None else f'{share:g}'} | "
                      f"{np.mean(granted):.1%} | {_shown(profit)} | {explored} |")
            print(f"<!-- δ = {delta:g}: {time.perf_counter() - started:.0f} s -->")


def _explored(game, name: str, share: float, args: argparse.Namespace) -> str:
    """Rounds explored on seed 0, from the per-round API's count (the engine keeps no
    learner state; the per-round API decides as the engine does, a conformance check)."""
    from strategic_apple_tasting.checks import replay

    learner = replay(game, make_learner(name, explore=share), 0, args.horizon)["learner"]
    return f"{learner.explored:,}"


if __name__ == "__main__":
    main()
