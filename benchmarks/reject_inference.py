"""Reject inference in the lender's backtest: does a learner gain from the reweighted history?

Runs :func:`strategic_apple_tasting.scenarios.backtest.backtest` on German credit (the
``lending`` extra) with every learner started from the incumbent's history twice, as it is
(``accepted``) and with its accepted loans reweighted by augmentation (``reweighted``: each
weighs 1 / its score decile's acceptance share), on the same seeds, and prints per budget and
learner the profit per 1,000 new applicants from each history and their paired difference
(reweighted less accepted, per seed; mean and 95% interval by
:func:`strategic_apple_tasting.metrics.mean_ci`), as Markdown.

Usage: ``python benchmarks/reject_inference.py [--seeds 20] [--delta 0.5 --delta 1]
[--learner NAME ...] [--bands 10] [--threads 2]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from strategic_apple_tasting.learners.history import BANDS
from strategic_apple_tasting.metrics import mean_ci
from strategic_apple_tasting.scenarios.backtest import REWEIGHTED, backtest
from strategic_apple_tasting.scenarios.datasets import load_dataset

LEARNERS = ("naive-logistic", "sa-logistic", "offset-logistic", "sa-ols")


def table(frame: pd.DataFrame) -> str:
    """Per budget and learner: each history's profit and their paired difference."""
    lines = ["| δ | learner | seeds | accepted-only history | reweighted history | "
             "reweighted − accepted (paired) | 95% interval | new applicants accepted "
             "(accepted-only / reweighted) |",
             "|---|---|---|---|---|---|---|---|"]
    learners = frame[frame["warm_start"] == "accepted"]
    for (delta, arm), plain in learners.groupby(["delta", "arm"], sort=False):
        rew = frame[(frame["delta"] == delta) & (frame["arm"] == arm + REWEIGHTED)]
        a, b = plain.set_index("seed"), rew.set_index("seed").loc[plain["seed"]]
        (ma, ha), (mb, hb) = mean_ci(a["profit"].to_numpy()), mean_ci(b["profit"].to_numpy())
        diff, half = mean_ci((b["profit"] - a["profit"]).to_numpy())
        lines.append(f"| {delta:g} | {arm} | {len(a)} | {ma:.1f} ± {ha:.1f} | "
                     f"{mb:.1f} ± {hb:.1f} | {diff:+.1f} ± {half:.1f} | "
                     f"[{diff - half:.1f}, {diff + half:.1f}] | "
                     f"{a['accepted'].mean():.0f} / {b['accepted'].mean():.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--delta", type=float, action="append")
    parser.add_argument("--learner", action="append")
    parser.add_argument("--bands", type=int, default=BANDS)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    data = load_dataset("german-credit")
    start = time.perf_counter()
    frames = [backtest(data, args.learner or LEARNERS, delta=delta, seeds=args.seeds,
                       history=("accepted", "reweighted"), bands=args.bands,
                       threads=args.threads)
              for delta in args.delta or (0.5, 1.0)]
    frame = pd.concat(frames, ignore_index=True)
    took = time.perf_counter() - start
    loans = frame.drop_duplicates("seed")
    print(f"German credit backtest, {args.seeds} seeds, {args.bands} score bands: "
          f"{int(np.mean(loans['new']))} new applicants a seed after a history of "
          f"{int(np.mean(loans['history']))} rows ({np.mean(loans['history_loans']):.0f} "
          f"loans with outcomes, on average); {took:.0f} s; profit per 1,000 new applicants, "
          f"mean ± 95% half-width over seeds")
    print(table(frame))


if __name__ == "__main__":
    main()
