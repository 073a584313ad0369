"""The logistic learners on German credit (the logistic learners for real loans): results tables for
``benchmarks/RESULTS.md``.

Plays German credit's data game on the compiled engine
(:func:`strategic_apple_tasting.scenarios.run_lending`: the rows drawn uniformly, each with its
recorded outcome, subset gaming of the checking and savings balances and the telephone, rewards
+1 repaid / −5 defaulted, scaled to +0.2 / −1 for the learners) with one group of learners at
each budget, and prints the lender's table (:func:`~strategic_apple_tasting.scenarios.run.
compare_lending`) as Markdown: profit per 1,000 applicants and the regrets against the best
linear rule found by the search and against the least-squares rule (both answered by the
agents), in the data's units (+1 / −5), each a mean over seeds with a 95% Student-t half-width.
``--rewards linear`` replaces each reward by the least-squares rule's own prediction
(σ = 0: the linear model exactly right, the issue's misspecification experiment);
``--truthful 1`` switches gaming off.

Groups (``--group``):

* ``main``: the three logistic learners against SA-OLS, offset-ols, naive greedy, shifted-ols,
  accept-all;
* ``ridge``: sa-logistic's prior precision 0, 0.1, 1 (the default) and 10;
* ``kept``: sa-logistic keeping 0 (the online fit alone), 50, 100, 5·d (the default, 245)
  and 1,000 points for its exact refits;
* ``buffer``: :class:`BatchLogistic` refitting at each doubling of its learned points, on
  all of them or on its first 1,000, 250, 100 or 50 (later ones as sa-logistic's rows);
* ``batch``: sa-logistic against :class:`BatchLogistic`, the same learner refitting the batch
  maximum likelihood on every point it has learned (a Python learner: the approximation's cost
  in regret).

Usage: ``python benchmarks/logistic.py --group main [--horizon 20000] [--seeds 10]
[--deltas 0.25 0.5 1] [--rewards recorded] [--truthful 0] [--workers 1] [--csv out.csv]``

``--speed`` instead times the compiled engine (``simulate``, one thread, the synthetic game at
δ = 0.1, best of 3 after a run that compiles) for the logistic learners against SA-OLS at
d = 5 and 49 (German credit's dimension): agent-rounds per second.
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.game.agents import CLEAN_MARGIN, REACH
from strategic_apple_tasting.game.policies import clean_above
from strategic_apple_tasting.learners import Learner, NaiveLogistic, OffsetLogistic, SALogistic
from strategic_apple_tasting.learners.binding import belief_of
from strategic_apple_tasting.scenarios import load_german_credit
from strategic_apple_tasting.scenarios.run import BEST_RULE, compare_lending


class BatchLogistic(Learner):
    """SA-Logistic with a batch fit of the first ``buffer`` clean points it learned (all of them
    if None): at each refit, w maximizes their penalized likelihood plus the quadratic of every
    later point (linearized at its rule, as sa-logistic's rows), by Newton's method with
    backtracking from the current w; between refits, online Newton steps as sa-logistic's.
    Refits come after every ``every`` learned points, or (``every=0``) each time the count of
    learned points doubles from d. A yardstick in Python, not a learner to deploy."""

    name = "batch-logistic"

    def __init__(self, delta=None, r0=None, feedback=None, agents=None, repaid=None,
                 defaulted=None, ridge=1.0, every=1, buffer=None):
        self.delta, self.r0, self.feedback, self.agents = delta, r0, feedback, agents
        self.repaid, self.defaulted, self.ridge = repaid, defaulted, ridge
        self.every, self.buffer = every, buffer

    def _init_state(self, d: int) -> None:
        self._X: list[np.ndarray] = []
        self._y: list[float] = []
        self._w = np.zeros(d)
        self._h = self.ridge * np.eye(d)
        self._h_late, self._b_late = np.zeros((d, d)), np.zeros(d)  # rows past the buffer
        self._model = belief_of(self)
        self._rounds = self._learned = 0
        self._next = d

    def _publish(self) -> LinearThreshold:
        d = self.dimension
        if self._rounds < d:
            return LinearThreshold(beta=np.zeros(d), threshold=-1.0)
        repaid, defaulted = self.repaid, self.defaulted
        p = (self.r0 - defaulted) / (repaid - defaulted)
        beta = self._w.copy()
        threshold = math.log(p / (1 - p)) + float(REACH[type(self._model)](self._model, beta))
        return LinearThreshold(beta=beta, threshold=threshold)

    def _learn(self, rule, x_obs, accepted, reward) -> bool:
        self._rounds += 1
        if not accepted or reward is None:
            return False
        beta = np.asarray(rule.beta, dtype=float)
        margin = float(CLEAN_MARGIN[type(self._model)](self._model, beta))
        if not clean_above(beta, float(rule.threshold), x_obs, margin):
            return False
        repaid, defaulted = self.repaid, self.defaulted
        y = min(max((reward - defaulted) / (repaid - defaulted), 0.0), 1.0)
        s = float(np.clip(beta @ x_obs, -30, 30))
        p = 1 / (1 + math.exp(-s))
        a = p * (1 - p)
        if self.buffer is None or len(self._X) < self.buffer:
            self._X.append(x_obs.copy())
            self._y.append(y)
        else:
            self._h_late += a * np.outer(x_obs, x_obs)
            self._b_late += x_obs * (a * s + y - p)
        self._h += a * np.outer(x_obs, x_obs)
        self._w = self._w + np.linalg.solve(self._h, x_obs * (y - p))
        self._learned += 1
        if (self.every and self._learned % self.every == 0) or (
                not self.every and self._learned >= self._next):
            self._next *= 2
            self._batch()
        return True

    def _batch(self) -> None:
        X, y = np.array(self._X), np.array(self._y)
        h_late, b_late = self._h_late, self._b_late

        def objective(w: np.ndarray) -> float:
            s = X @ w
            return float(np.sum(np.logaddexp(0.0, s) - y * s) + self.ridge * (w @ w) / 2
                         + (w @ h_late @ w) / 2 - b_late @ w)

        w, value = self._w, objective(self._w)
        for _ in range(100):  # Newton's method with backtracking: the objective never rises
            p = 1 / (1 + np.exp(-np.clip(X @ w, -30, 30)))
            grad = X.T @ (p - y) + self.ridge * w + h_late @ w - b_late
            hess = ((X * (p * (1 - p))[:, None]).T @ X + self.ridge * np.eye(len(w))
                    + h_late)
            step, size = np.linalg.solve(hess, grad), 1.0
            while objective(w - size * step) > value and size > 1e-10:
                size /= 2
            w = w - size * step
            value = objective(w)
            if np.abs(size * step).max() < 1e-9:
                break
        self._w, self._h = w, hess


def _groups(every: int) -> dict[str, list[tuple[str, Any]]]:
    return {
        "main": [("sa-logistic", SALogistic()), ("offset-logistic", OffsetLogistic()),
                 ("naive-logistic", NaiveLogistic()), ("sa-ols", "sa-ols"),
                 ("offset-ols", "offset-ols"), ("naive-greedy", "naive-greedy"),
                 ("shifted-ols", "shifted-ols"), ("accept-all", "accept-all")],
        "ridge": [(f"sa-logistic (ridge {r:g})", SALogistic(ridge=r))
                  for r in (0.0, 0.1, 1.0, 10.0)],
        "kept": [(f"sa-logistic (batch_points {b})", SALogistic(batch_points=b))
                 for b in (0, 50, 100, None, 1000)],
        "batch": [("sa-logistic (online)", SALogistic()),
                  (f"sa-logistic (batch every {every})", BatchLogistic(every=every))],
        "buffer": [(f"sa-logistic (batch of {b or 'all'}, refit at doublings)",
                    BatchLogistic(every=0, buffer=b)) for b in (None, 1000, 250, 100, 50)],
    }


def _one(args: tuple) -> pd.DataFrame:
    group, horizon, seed, delta, every, rewards, truthful = args
    from strategic_apple_tasting import simulate
    from strategic_apple_tasting.scenarios.datasets import data_game, from_lending

    specs = _groups(every)[group]
    game = data_game(from_lending(load_german_credit()), delta=delta, truthful=truthful,
                     rewards=rewards, sigma=0.0 if rewards == "linear" else None)
    table = simulate(game, [lr for _, lr in specs], horizon, [seed]).to_pandas()
    names = list(dict.fromkeys(table["learner"]))  # the engine's labels, in the given order
    table["learner"] = table["learner"].map(dict(zip(names, [lb for lb, _ in specs],
                                                     strict=True)))
    return table


def summarize(table: pd.DataFrame) -> str:
    """The lender's table per δ × learner as Markdown (means ± 95% half-widths)."""
    out = compare_lending(table)
    lines = ["| δ | learner | seeds | profit /1,000 | regret vs best linear rule | regret vs "
             "least-squares rule | accepted | moved | clean | gamed as clean |",
             "|" + "---|" * 10]
    for row in out.itertuples():
        if row.learner == BEST_RULE:
            lines.append(f"| {row.delta:g} | {row.learner} | {row.seeds} | "
                         f"{row.profit:.1f} ± {row.profit_ci:.1f} | | | | | | |")
            continue
        lines.append(
            f"| {row.delta:g} | {row.learner} | {row.seeds} | {row.profit:.1f} ± "
            f"{row.profit_ci:.1f} | {row.regret:.0f} ± {row.regret_ci:.0f} | "
            f"{row.ls_regret:.0f} ± {row.ls_regret_ci:.0f} | {row.accepted:.0f} | "
            f"{row.moved:.0f} | {row.clean:.0f} | {row.gamed_as_clean} |")
    return "\n".join(lines)


def speed(horizon: int = 200_000, repeat: int = 3) -> str:
    """Agent-rounds per second of the compiled engine, one thread, two seeds."""
    from strategic_apple_tasting import Game, simulate

    names = ("sa-ols", "offset-ols", "sa-logistic", "offset-logistic", "naive-logistic")
    lines = ["| d | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
    for d in (5, 49):
        game = Game(dimension=d, delta=0.1)
        rates = []
        for name in names:
            simulate(game, [name], 100, seeds=1)  # compile, or load the cache, untimed
            best = math.inf
            for _ in range(repeat):
                start = time.perf_counter()
                simulate(game, [name], horizon, seeds=2)
                best = min(best, time.perf_counter() - start)
            rates.append(2 * horizon / best)
        lines.append(f"| {d} | " + " | ".join(f"{r / 1e6:.2f} M/s" for r in rates) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", default="main", choices=sorted(_groups(1)))
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    parser.add_argument("--every", type=int, default=1,
                        help="batch group: refit the batch fit after this many points")
    parser.add_argument("--rewards", default="recorded", choices=["recorded", "linear"])
    parser.add_argument("--truthful", type=float, default=0.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--csv", help="also write the per-seed table here")
    parser.add_argument("--speed", action="store_true", help="time the compiled engine")
    args = parser.parse_args()
    if args.speed:
        print(speed())
        return
    start = time.perf_counter()
    jobs = [(args.group, args.horizon, s, d, args.every, args.rewards, args.truthful)
            for d in args.deltas for s in range(args.seeds)]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            parts = list(pool.map(_one, jobs))
    else:
        parts = [_one(job) for job in jobs]
    table = pd.concat(parts, ignore_index=True)
    if args.csv:
        table.to_csv(args.csv, index=False)
    print(f"group {args.group}: T = {args.horizon}, {args.seeds} seeds, rewards "
          f"{args.rewards}, truthful {args.truthful:g}, wall time "
          f"{time.perf_counter() - start:.0f} s ({args.workers} worker(s))")
    print(summarize(table))


if __name__ == "__main__":
    main()
