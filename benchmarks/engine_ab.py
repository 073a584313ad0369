"""SA-OLS's engine rate beside the draw-only floor, in turn in one process: for comparing two
checkouts run alternately (``PYTHONPATH`` pointing at each one's ``src``, each with its own
``SAT_CACHE_DIR``), on a machine too busy for the figures of ``benchmarks/engine.py`` to be
compared across runs.

Each of ``REPEAT`` lines gives the engine's agent-rounds per second (``simulate``, SA-OLS,
δ = 0.1, 2 seeds × T rounds, one thread), then the floor's (the draw-only loop of
``benchmarks/engine.py``: d + 2 normals and one more a round), then their ratio, measured one
right after the other.

Usage: ``python benchmarks/engine_ab.py D T REPEAT TAG`` (as in ``benchmarks/RESULTS.md``)
"""

from __future__ import annotations

import sys
import time

import numba
import numpy as np

from strategic_apple_tasting import Game, simulate


@numba.njit(cache=False)
def _draw_only(context_rng, noise_rng, horizon, d):
    acc = 0.0
    for _ in range(horizon):
        for _ in range(d + 2):
            acc += context_rng.standard_normal()
        acc += noise_rng.standard_normal()
    return acc


def main() -> None:
    d, horizon, repeat, tag = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    game = Game(dimension=d, delta=0.1)
    simulate(game, ["sa-ols"], 100, seeds=1)  # compile (or load the cache) outside the timing
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    _draw_only(*rngs, 10, d)
    for _ in range(repeat):
        start = time.perf_counter()
        simulate(game, ["sa-ols"], horizon, seeds=2)
        engine = 2 * horizon / (time.perf_counter() - start)
        start = time.perf_counter()
        _draw_only(*rngs, horizon, d)
        floor = horizon / (time.perf_counter() - start)
        print(f"{tag} d={d} engine {engine / 1e6:.3f} floor {floor / 1e6:.3f} "
              f"ratio {engine / floor:.3f}", flush=True)


if __name__ == "__main__":
    main()
