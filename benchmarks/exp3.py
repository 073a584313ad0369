"""EXP3-SAE's lazy expert weights against the dense O(|E|) oracle of the tests.

For |E| ∈ {10³, 10⁵, 10⁷} (grids of 10 points an axis in d = 3, 5, 7) it prints rounds per
second of one EXP3 round (draw an expert from q, then rescale its weight) with:

* ``lazy``: :mod:`strategic_apple_tasting.learners.lazy_experts` in a compiled loop,
* ``dense``: the tests' deliberately naive oracle (one weight per expert, numpy sums and
  cumulative sums over all |E| every round),

and the lazy weights alone at |E| = 32^20 ≈ 1.3·10³⁰ (d = 20), where a dense array cannot
exist. Both are measured in the same run. Usage: ``python benchmarks/exp3.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numba
import numpy as np

from strategic_apple_tasting.learners.lazy_experts import (
    new_experts,
    sample_expert,
    scale_log_weight,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.learners.test_lazy_experts import DenseOracle

GAMMA, ETA, LAM = 0.1, 0.01, 0.5


@numba.njit
def _lazy_rounds(state, rng, rounds, coords):
    total = 0.0
    for _ in range(rounds):
        q = sample_expert(state, rng, GAMMA, coords)
        reward = rng.random()
        scale_log_weight(state, coords, -ETA * (1.0 + LAM - reward) / q)
        total += q
    return total


def lazy_rate(d: int, n: int, rounds: int) -> float:
    coords = np.zeros(d, dtype=np.int64)
    warm = new_experts(d, n, 1000)
    _lazy_rounds(warm, np.random.default_rng(0), 10, coords)  # compile outside the timing
    state = new_experts(d, n, rounds)
    start = time.perf_counter()
    _lazy_rounds(state, np.random.default_rng(1), rounds, coords)
    return rounds / (time.perf_counter() - start)


def dense_rate(d: int, n: int, rounds: int) -> float:
    oracle = DenseOracle(d, n, capacity=rounds)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for _ in range(rounds):
        coords, q = oracle.sample(rng, GAMMA)
        oracle.scale(coords, math.exp(-ETA * (1.0 + LAM - rng.random()) / q))
    return rounds / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000, help="lazy rounds per grid")
    args = parser.parse_args()
    print("| grid | |E| | lazy rounds/s | dense rounds/s | lazy/dense |")
    print("|---|---:|---:|---:|---:|")
    for d, dense_rounds in ((3, 2000), (5, 200), (7, 10)):
        lazy = lazy_rate(d, 10, args.rounds)
        dense = dense_rate(d, 10, dense_rounds)
        cells = (f"d = {d}, 10 an axis", f"1e{d}", f"{lazy:,.0f}", f"{dense:,.1f}",
                 f"{lazy / dense:,.0f}×")
        print("| " + " | ".join(cells) + " |", flush=True)
    huge = lazy_rate(20, 32, args.rounds)
    print(f"| d = 20, 32 an axis | {32.0**20:.2e} | {huge:,.0f} | (cannot allocate) | - |")


if __name__ == "__main__":
    main()
