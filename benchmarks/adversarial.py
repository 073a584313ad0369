"""Cost per round on the greedy trap: sampled-sae (O(N·d)) against EXP3-SAE (O(d + log T)).

Whole game rounds in the compiled engine (draw the context, publish, the agent's response, the
outcome, the update), at d = 2, 5, 10, for sampled-sae with N = 256, 1024, 4096 experts, EXP3-SAE
with the paper's parameters and SA-OLS. Each learner is compiled and warmed up on a short run
first; then the median of ``--repeats`` runs of ``--rounds`` rounds. Ratios are against EXP3-SAE
at the same d, measured in the same run.

Usage: ``python benchmarks/adversarial.py [--rounds N] [--repeats K]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from strategic_apple_tasting.engine.simulate import run_one
from strategic_apple_tasting.game import Game
from strategic_apple_tasting.game.contexts import GreedyTrap
from strategic_apple_tasting.learners import SAOLS, Exp3SAE, SampledSAE


def per_round(game: Game, learner, rounds: int, repeats: int) -> float:
    """Median seconds a round over ``repeats`` runs (after a warm-up run)."""
    run_one(game, learner.clone(), 0, np.array([min(rounds, 1000)]))
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        run_one(game, learner.clone(), seed, np.array([rounds]))
        times.append(time.perf_counter() - start)
    return statistics.median(times) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    learners = {"exp3-sae": Exp3SAE(), "sa-ols": SAOLS(),
                **{f"sampled-sae N={n}": SampledSAE(experts=n) for n in (256, 1024, 4096)}}
    print(f"{args.rounds:,} rounds, median of {args.repeats} runs; µs a round "
          "(ratio to exp3-sae at the same d)")
    print(f"{'learner':<22}" + "".join(f"{f'd = {d}':>20}" for d in (2, 5, 10)))
    cost = {name: {} for name in learners}
    for d in (2, 5, 10):
        game = Game(dimension=d, delta=0.1, sigma=0.1, contexts=GreedyTrap())
        for name, learner in learners.items():
            cost[name][d] = per_round(game, learner, args.rounds, args.repeats)
    for name in learners:
        ratio = {d: cost[name][d] / cost["exp3-sae"][d] for d in (2, 5, 10)}
        cells = "".join(f"{cost[name][d] * 1e6:>11.2f} ({ratio[d]:5.1f}×)" for d in (2, 5, 10))
        print(f"{name:<22}{cells}")


if __name__ == "__main__":
    main()
