"""EXP3-SAE's lazy expert weights against the dense O(|E|) oracle of the tests.

For |E| ∈ {10³, 10⁵, 10⁷} (grids of 10 points an axis in d = 3, 5, 7) it prints rounds per
second of one EXP3 round (draw an expert from q, then rescale its weight) with:

* ``lazy``: :mod:`strategic_apple_tasting.learners.lazy_experts` in a compiled loop,
* ``dense``: the tests' deliberately naive oracle (one weight per expert, numpy sums and
  cumulative sums over all |E| every round),

and the lazy weights alone at |E| = 32^20 ≈ 1.3·10³⁰ (d = 20), where a dense array cannot
exist. Both are measured in the same run. Then EXP3.P-SAE's weights
(:mod:`strategic_apple_tasting.learners.exp3p_experts`: draw from p, then update every touched
weight and the untouched class) at |E| = 32^20 over T = 10³ and 10⁴ rounds: a round costs
O(d + k) with k the experts played so far, so the rate falls like 1/T.
Usage: ``python benchmarks/exp3.py [--rounds N] [--exp3p-rounds T ...] [--exp3p-only]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numba
import numpy as np

from strategic_apple_tasting.learners import exp3p_experts
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


@numba.njit
def _exp3p_rounds(weights, rng, rounds, coords, gamma, bonus):
    total = 0.0
    for _ in range(rounds):
        p = exp3p_experts.sample(weights, rng, gamma, coords)
        exp3p_experts.update(weights, coords, rng.random(), gamma, bonus)
        total += p
    return total


def exp3p_rate(d: int, n: int, rounds: int) -> float:
    """EXP3.P rounds a second over ``rounds`` rounds (T = ``rounds``, γ = 3/5 as at |E| ≫ T)."""
    coords = np.zeros(d, dtype=np.int64)
    gamma, bonus = 0.6, 10.0 / math.sqrt(float(n) ** d * rounds)
    warm = exp3p_experts.new_weights(d, n, 100)
    _exp3p_rounds(warm, np.random.default_rng(0), 10, coords, gamma, bonus)  # compile
    weights = exp3p_experts.new_weights(d, n, rounds)
    start = time.perf_counter()
    _exp3p_rounds(weights, np.random.default_rng(1), rounds, coords, gamma, bonus)
    return rounds / (time.perf_counter() - start)


def dense_rate(d: int, n: int, rounds: int) -> float:
    oracle = DenseOracle(d, n, capacity=rounds)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for _ in range(rounds):
        coords, q = oracle.sample(rng, GAMMA)
        oracle.scale(coords, math.exp(-ETA * (1.0 + LAM - rng.random()) / q))
    return rounds / (time.perf_counter() - start)


def exp3_table(rounds: int) -> None:
    print("| grid | |E| | lazy rounds/s | dense rounds/s | lazy/dense |")
    print("|---|---:|---:|---:|---:|")
    for d, dense_rounds in ((3, 2000), (5, 200), (7, 10)):
        lazy = lazy_rate(d, 10, rounds)
        dense = dense_rate(d, 10, dense_rounds)
        cells = (f"d = {d}, 10 an axis", f"1e{d}", f"{lazy:,.0f}", f"{dense:,.1f}",
                 f"{lazy / dense:,.0f}×")
        print("| " + " | ".join(cells) + " |", flush=True)
    huge = lazy_rate(20, 32, rounds)
    print(f"| d = 20, 32 an axis | {32.0**20:.2e} | {huge:,.0f} | (cannot allocate) | - |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000, help="lazy rounds per grid")
    parser.add_argument("--exp3p-rounds", type=int, nargs="+", default=[1_000, 10_000],
                        help="horizons T for EXP3.P-SAE's weights at |E| = 32^20")
    parser.add_argument("--exp3p-only", action="store_true", help="only EXP3.P-SAE's table")
    args = parser.parse_args()
    if not args.exp3p_only:
        exp3_table(args.rounds)
    print("\n| EXP3.P-SAE weights | |E| | T | rounds/s (mean over the T rounds) |")
    print("|---|---:|---:|---:|")
    for rounds in args.exp3p_rounds:
        rate = exp3p_rate(20, 32, rounds)
        print(f"| d = 20, 32 an axis | {32.0**20:.2e} | {rounds:,} | {rate:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
