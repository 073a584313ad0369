"""Throughput of the paths outside the compiled engine's own learners, in one run:

* ``plain``: the guide's plain-Python ``Greedy`` (its code is read from
  ``docs/adding-a-learner.md``, so the figure is the guide's learner's) at d = 5 on the engine's
  reference path; target 20,000 rounds/s;
* ``linucb``: LinUCB in the game (the compiled engine, agents answering its optimistic rule) at
  d = 5; target 1,000,000 rounds/s;
* one row per peer adapter (MABWiser, river, Vowpal Wabbit) in the peers' claims game (d = 2,
  δ = 0.1, σ = 0.1, every agent gaming); target 5,000 rounds/s.

Each figure is rounds per second of wall time and of this process's CPU time (the machines are
shared: the CPU figure is what the code costs, the wall figure what a user waited), best of
``--repeat`` after a warm-up run that compiles or loads everything, and its ratio to the
draw-only floor of ``benchmarks/engine.py`` at the same d, measured in the same run.

    .venv/bin/python benchmarks/paths.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.learners import learner_class, make_learner

sys.path.insert(0, str(Path(__file__).parent))
from engine import _draw_only  # the floor, as benchmarks/engine.py measures it

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "adding-a-learner.md"
PEERS = ("mabwiser:LinUCB", "mabwiser:LinTS", "mabwiser:LinGreedy", "river:LinUCBDisjoint",
         "vw:cb_explore_adf")


def guide_greedy() -> type:
    """The guide's ``Greedy``: its first Python block, run as the module ``my_learners``."""
    text = GUIDE.read_text()
    block = re.search(r"```python\n# file: my_learners.py\n(.*?)```", text, re.S).group(1)
    module = types.ModuleType("my_learners")
    sys.modules["my_learners"] = module
    exec(compile(block, str(GUIDE), "exec"), module.__dict__)
    return module.Greedy


def timed(run) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def rate(game: Game, make, horizon: int, repeat: int, warmup: int) -> tuple[float, float]:
    """Best wall and CPU rounds/s of ``simulate`` on one seed."""
    simulate(game, [make()], warmup, seeds=1)
    best_wall = best_cpu = np.inf
    for _ in range(repeat):
        wall, cpu = timed(lambda: simulate(game, [make()], horizon, seeds=1))
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return horizon / best_wall, horizon / best_cpu


def floor(d: int, repeat: int, horizon: int = 2_000_000) -> float:
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    _draw_only(*rngs, 10, d)
    best = min(timed(lambda: _draw_only(*rngs, horizon, d))[1] for _ in range(repeat))
    return horizon / best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--plain-horizon", type=int, default=20_000)
    p.add_argument("--linucb-horizon", type=int, default=1_000_000)
    p.add_argument("--peer-horizon", type=int, default=2_000)
    p.add_argument("--paths", nargs="+", default=["plain", "linucb", *PEERS])
    args = p.parse_args()
    warnings.filterwarnings("ignore")  # the libraries' own deprecation notices
    floors = {d: floor(d, args.repeat) for d in (2, 5)}
    rows = []
    for path in args.paths:
        if path == "plain":
            greedy = guide_greedy()
            game, horizon, target = Game(dimension=5), args.plain_horizon, 20_000
            wall, cpu = rate(game, greedy, horizon, args.repeat, 2_000)
            name = "plain: the guide's Greedy (reference path)"
        elif path == "linucb":
            game, horizon, target = Game(dimension=5), args.linucb_horizon, 1_000_000
            wall, cpu = rate(game, lambda: make_learner("linucb"), horizon, args.repeat, 20_000)
            name = "LinUCB in the game (compiled engine)"
        else:
            try:
                learner_class(path)()
            except ValueError as exc:
                print(f"{path}: skipped ({exc})")
                continue
            game = Game(dimension=2, delta=0.1, sigma=0.1)
            horizon, target = args.peer_horizon, 5_000
            wall, cpu = rate(game, lambda p=path: make_learner(p), horizon, args.repeat, 500)
            name = f"peer {path}"
        d = game.dimension
        rows.append((name, d, horizon, wall, cpu, cpu / floors[d], target))
        print(f"{name}: {wall:,.0f} rounds/s wall, {cpu:,.0f} CPU", flush=True)
    print(f"\ndraw-only floor (CPU): d = 2 {floors[2] / 1e6:.1f} M/s, "
          f"d = 5 {floors[5] / 1e6:.1f} M/s")
    print("| path | d | T | rounds/s (wall) | rounds/s (CPU) | CPU / floor | target | met "
          "(CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, d, horizon, wall, cpu, ratio, target in rows:
        print(f"| {name} | {d} | {horizon:,} | {wall:,.0f} | {cpu:,.0f} | {ratio:.2e} | "
              f"{target:,} | {'yes' if cpu >= target else '**no**'} |")


if __name__ == "__main__":
    main()
