"""What scoring held-out applicants costs beside the engine's run (the ``holdout`` protocol).

Plays German credit at δ = 0.25 with ``sat lending``'s default learners on the compiled
engine, one thread, at the recorded rounds ``sat lending`` uses (10 a decade), under protocol
``replay``, and then scores every run's recorded rules on a seed's held-out applicants
(:func:`strategic_apple_tasting.engine.holdout.score_rules`, compiled), timing both in the same
process, in turn, best of ``--repeats``. Prints the engine's time, the scoring's time and their
ratio (the ratio, measured in one run, is what to quote: the machine is shared and noisy).

The per-seed searches of the cross-fitted best rule are not scoring: they run once per seed
and learning split, cached for every budget, and are timed on their own line.

Usage: ``python benchmarks/holdout.py [--horizon 20000] [--seeds 4] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from strategic_apple_tasting.engine.best_rule import search_rules
from strategic_apple_tasting.engine.grid import recording_grid
from strategic_apple_tasting.engine.holdout import held_out, score_rules
from strategic_apple_tasting.engine.simulate import run_one
from strategic_apple_tasting.learners import make_learner
from strategic_apple_tasting.scenarios import LEARNERS, data_game, load_dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = load_dataset("german-credit")
    game = data_game(data, delta=0.25, protocol="holdout")
    grid = recording_grid(args.horizon, 10)
    learners = [make_learner(name) for name in LEARNERS]
    parts = {s: held_out(game, s) for s in range(args.seeds)}
    run_one(game, learners[0], 0, grid)  # loads the compiled loops
    score_rules(parts[0], np.zeros((1, game.dimension + 1)))
    engine, scoring = [], []
    for _ in range(args.repeats):
        rules, took = [], 0.0
        for lr in learners:
            for s in range(args.seeds):
                start = time.perf_counter()
                out = run_one(game, lr, s, grid)
                took += time.perf_counter() - start
                rules.append((s, out[3]))
        engine.append(took)
        start = time.perf_counter()
        for s, recorded in rules:
            score_rules(parts[s], recorded)
        scoring.append(time.perf_counter() - start)
    part = parts[0]
    weights = np.full(len(part.learn), 1.0 / len(part.learn))
    start = time.perf_counter()
    search_rules(part.rows[part.learn], (part.mean - part.r0)[part.learn], weights)
    search = time.perf_counter() - start
    runs = len(learners) * args.seeds
    print(f"German credit, δ = 0.25, T = {args.horizon:,}, {len(grid)} recorded rounds, "
          f"{len(LEARNERS)} learners × {args.seeds} seeds ({runs} runs), "
          f"{len(part.held)} held-out applicants, best of {args.repeats}")
    print(f"engine runs: {min(engine):.3f} s; scoring their recorded rules on the held-out "
          f"applicants: {min(scoring):.3f} s; scoring / engine = "
          f"{min(scoring) / min(engine):.4f}")
    print(f"one seed's search of the best rule on its learning rows (cached per split): "
          f"{search:.2f} s")


if __name__ == "__main__":
    main()
