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

from engine import draw_only_rate, engine_rate


def main() -> None:
    d, horizon, repeat, tag = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    for _ in range(repeat):  # one right after the other: the same load falls on both
        engine = engine_rate(d, horizon, threads=1, repeat=1)
        floor = draw_only_rate(d, horizon, repeat=1)
        print(f"{tag} d={d} engine {engine / 1e6:.3f} floor {floor / 1e6:.3f} "
              f"ratio {engine / floor:.3f}", flush=True)


if __name__ == "__main__":
    main()
