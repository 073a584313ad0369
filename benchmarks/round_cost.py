"""Cost of a round against the quantity the paper's cost claims scale with.

The paper: EXP3-SAE's expert set grows like (T^{1/(d+2)})^d, exponential in d, and its EXP3
round is linear in the expert count; SA-OLS costs O(d²) a round (a rank-one update of a d × d
matrix). This measures the learner's own round, its kernels (publish the rule, decide, learn the
outcome: the code the engine runs) in a compiled loop over contexts uniform in the ball and
rewards drawn beforehand, the median of ``--repeats`` runs after a warm-up run that compiles,
with accept-all's round at the same setting in the same run as the reference (the loop's floor):

* SA-OLS at d = 8 … 256, at δ = 0.1 (it learns from clean points only, a share that falls fast
  with d) and at δ = 0 (it learns from every accepted point): the exponent of its time over the
  floor, fitted on log–log over the largest half of the dimensions, beside the theory's 2 for a
  round that learns, with the share of rounds learned from;
* at d = 2, against the expert count |E| (the grid's points per axis set to n, |E| = n², for
  EXP3-SAE and EXP3.P-SAE; N sampled experts for sampled-sae): the exponent of time per round
  in |E|, beside a dense EXP3's 1.

Usage: ``python benchmarks/round_cost.py [--rounds N] [--repeats K] [--dims ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

from strategic_apple_tasting.game import Game, UniformBall, draw_contexts
from strategic_apple_tasting.game.policies import score
from strategic_apple_tasting.learners import SAOLS, AcceptAll, Exp3SAE, SampledSAE
from strategic_apple_tasting.learners.exp3p_sae import Exp3PSAE
from strategic_apple_tasting.learners.kernels import learner_policy, learner_update
from strategic_apple_tasting.metrics import log_slopes


@numba.njit
def _rounds(state, rng, xs, rewards):
    beta = np.empty(xs.shape[1])
    learned = 0
    for t in range(xs.shape[0]):
        threshold = learner_policy(state, rng, beta)
        x = xs[t]
        a = score(beta, x) >= threshold
        learned += learner_update(state, rng, beta, threshold, x, a, rewards[t], a)
    return learned


def _inputs(d: int, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = draw_contexts(UniformBall(), d, rounds, rng)
    rewards = xs[:, 0] + 0.1 * rng.standard_normal(rounds)
    return xs, rewards


def per_round(d: int, learner, rounds: int, repeats: int, delta: float = 0.1
              ) -> tuple[float, float]:
    """Median seconds a round over ``repeats`` runs (after a warm-up run that compiles), and
    the share of rounds the learner learned from."""
    game = Game(dimension=d, delta=delta, sigma=0.1)
    times, learned = [], 0
    for seed in range(repeats + 1):
        inst = game.instance(seed)
        bound = learner.clone().bind(inst, rounds).reset(d, inst.rngs["learner"])
        xs, rewards = _inputs(d, rounds if seed else min(rounds, 100), seed)
        start = time.perf_counter()
        used = _rounds(bound.state, bound.generator, xs, rewards)
        if seed:  # the first run compiles
            times.append(time.perf_counter() - start)
            learned += used
    return statistics.median(times) / rounds, learned / (repeats * rounds)


def exponent(x: list[float], y: list[float]) -> float:
    """The least-squares slope of log y on log x."""
    return float(log_slopes(np.array(x), np.array([y]))[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dims", type=int, nargs="+", default=[8, 16, 32, 64, 128, 256])
    parser.add_argument("--axis", type=int, nargs="+", default=[8, 32, 128, 512, 2048],
                        help="grid points per axis at d = 2 (|E| = n²)")
    parser.add_argument("--sampled", type=int, nargs="+", default=[64, 256, 1024, 4096],
                        help="sampled-sae's expert counts N")
    parser.add_argument("--exp3p-rounds", type=int, default=20_000,
                        help="rounds of EXP3.P-SAE (its round is O(k), k the experts played)")
    args = parser.parse_args()
    rounds, repeats = args.rounds, args.repeats
    print(f"median of {repeats} runs; µs a round (ratio to accept-all at the same setting)")

    # SA-OLS learns only from clean points (accepted above the band gaming can reach), whose
    # share falls fast with d at δ > 0: at δ = 0 it learns from every accepted point, and the
    # update's O(d²) is paid on about half the rounds.
    for delta in (0.1, 0.0):
        print(f"\nSA-OLS against d (δ = {delta:g}, σ = 0.1; {rounds:,} rounds)")
        extra = []
        for d in args.dims:
            floor, _ = per_round(d, AcceptAll(), rounds, repeats, delta)
            ours, share = per_round(d, SAOLS(), rounds, repeats, delta)
            extra.append(max(ours - floor, 1e-12))
            print(f"  d = {d:>3}: sa-ols {ours * 1e6:8.3f}  accept-all {floor * 1e6:8.3f}  "
                  f"({ours / floor:6.2f}×)  extra {extra[-1] * 1e6:8.3f}  "
                  f"learned from {share:.3f} of rounds")
        top = min(len(args.dims), max(3, len(args.dims) // 2))
        print(f"  exponent of SA-OLS's extra time in d, d = {args.dims[-top]}…{args.dims[-1]}: "
              f"{exponent(args.dims[-top:], extra[-top:]):.2f} (theory: 2 for a round that "
              f"learns, the rank-one update); over every d: {exponent(args.dims, extra):.2f}")

    floor, _ = per_round(2, AcceptAll(), rounds, repeats)
    print(f"\nagainst the expert count |E| (d = 2; accept-all {floor * 1e6:.3f} µs)")
    for name, make, sizes, n_rounds in (
            ("exp3-sae", lambda n: Exp3SAE(points_per_axis=n), args.axis, rounds),
            ("exp3p-sae", lambda n: Exp3PSAE(points_per_axis=n), args.axis,
             args.exp3p_rounds),
            ("sampled-sae", lambda n: SampledSAE(experts=n), args.sampled, rounds)):
        counts, costs = [], []
        for n in sizes:
            count = n * n if name != "sampled-sae" else n
            cost, _ = per_round(2, make(n), n_rounds, repeats)
            counts.append(count)
            costs.append(cost)
            print(f"  {name:<12} |E| = {count:>9,}: {cost * 1e6:9.3f}  ({cost / floor:7.1f}×)")
        print(f"  exponent of {name}'s time a round in |E| ({n_rounds:,} rounds): "
              f"{exponent(counts, costs):.2f} (a dense EXP3 round: 1)")


if __name__ == "__main__":
    main()
