"""Clean points under any policy: ``cond:clean`` (lazy agents) and ``cond:clean-app``
(γ-trembling agents), checked on the game's own best responses.

The condition: under a shifted linear policy β (accept iff ⟨β, x'⟩ ≥ δ‖β‖ + r0), a reported
context with ⟨β, x'⟩ > δ‖β‖ + r0 (> (δ + γ)‖β‖ + r0 for γ-trembling agents) was not moved,
x' = x. It is a statement about one round: it holds for a sequence of policies, however chosen,
if it holds for every policy, so the rows put agents before many policies, each answered by the
game's agent models (:class:`~strategic_apple_tasting.game.LazyBestResponse`,
:class:`~strategic_apple_tasting.game.TremblingHand`, their compiled best response):

* random directions at scales from 10⁻⁶ to 10⁶ and r0 ∈ {−0.2, 0, 0.2};
* adversarial ones: a direction with one coordinate 10⁸ times the others, at the same scales;
* agents uniform in the ball, and as many placed where the condition is hardest: just below
  the boundary at distances 0, ulps, δ/2, δ(1 ± 10⁻¹²), δ and beyond (where a mover lands),
  and just above it (where a trembling mover lands).

Each row counts the reports the condition calls clean that were moved (its test is the
package's :func:`~strategic_apple_tasting.game.policies.clean_above`, the condition with a band
of 10⁻⁹ of the score's scale for rounding: a lazy mover lands within ulps of the boundary, which
exact arithmetic puts on it and floating point a few ulps above). The count must be 0. The
control is the same count with the condition's δ halved (lazy agents) or without γ (trembling
agents): movers land above it, so it must find them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...game import LazyBestResponse, TremblingHand, UniformBall, draw_contexts
from ...game.policies import clean_above, norm, score
from .measures import exact
from .rows import PAPER, Check, Claim, Control, Row

#: The stream of the policies and agents: fixed, so the table is the same on every run.
SEED = 20_231_217
#: Dimensions, agents' budgets, trembles and rejecting rewards r0 tried.
DIMENSIONS = (2, 3, 10)
DELTAS = (0.1, 0.3, 1.0)
GAMMA = 0.05
R0 = (-0.2, 0.0, 0.2)
#: Policies per (d, δ) of each kind, and agents uniform in the ball per policy.
POLICIES = 8
UNIFORM_AGENTS = 20
#: Where the hardest agents are placed: their distance below the boundary, in units of δ
#: (negative: above it), then a few ulps below and above.
OFFSETS = (0.0, 0.5, 1.0 - 1e-12, 1.0, 1.0 + 1e-12, 1.5, -0.25, -0.5)
ULPS = (1e-15, -1e-15)
#: No moved point may be called clean.
NONE = Check("0 moved points called clean", low=0.0, high=0.0)


def directions(d: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Random and adversarially scaled policy directions (:data:`POLICIES` of each)."""
    for k in range(POLICIES):
        scale = 10.0 ** rng.uniform(-6, 6)
        beta = rng.standard_normal(d)
        yield scale * beta / np.linalg.norm(beta)
        skew = np.full(d, 1e-8) * rng.choice([-1.0, 1.0], d)
        skew[k % d] = rng.choice([-1.0, 1.0])
        yield scale * skew


def agents_for(beta: np.ndarray, threshold: float, delta: float, rng: np.random.Generator
               ) -> np.ndarray:
    """Agents uniform in the ball, and agents placed just beside the boundary ⟨β, x⟩ =
    ``threshold`` at the distances of :data:`OFFSETS` (× δ) and :data:`ULPS`."""
    d = beta.shape[0]
    u = beta / norm(beta)
    uniform = draw_contexts(UniformBall(), d, UNIFORM_AGENTS, rng)
    placed = []
    for z in draw_contexts(UniformBall(), d, len(OFFSETS) + len(ULPS), rng):
        on = z + (threshold - score(beta, z)) / norm(beta) * u  # on the boundary (to rounding)
        placed.append(on)
    steps = [o * delta for o in OFFSETS] + list(ULPS)
    moved_from = np.array([p - s * u for p, s in zip(placed, steps, strict=True)])
    return np.vstack([uniform, moved_from])


def count(model, conditions: tuple[tuple[float, float], ...]
          ) -> tuple[list[tuple[int, int, int]], int]:
    """Over every d, δ, policy and r0, for agents of ``model``'s kind with budget δ: per
    condition (k, γ'), which reads ⟨β, x'⟩ > k·δ‖β‖ + r0 + γ'‖β‖, (moved reports it calls
    clean, the same with the bare strict inequality of exact arithmetic, reports it calls
    clean); and the number of movers. One pass: every condition sees the same reports."""
    rng = np.random.default_rng(np.random.SeedSequence(SEED))
    tallies = [[0, 0, 0] for _ in conditions]
    movers = 0
    for d in DIMENSIONS:
        for delta in DELTAS:
            agents = model._replace(delta=delta)
            for beta in directions(d, rng):
                nb = norm(beta)
                for r0 in R0:
                    threshold = delta * nb + r0  # the shifted policy the learner publishes
                    for x in agents_for(beta, threshold, delta, rng):
                        x_obs, moved = agents.respond_once(beta, threshold, x, rng)
                        moved = moved or not np.array_equal(x_obs, x)
                        movers += moved
                        s = score(beta, x_obs)
                        for tally, (k, gamma) in zip(tallies, conditions, strict=True):
                            line, margin = k * delta * nb + r0, gamma * nb
                            called = bool(clean_above(beta, line, x_obs, margin))
                            tally[0] += called and moved
                            tally[1] += moved and s > line + margin
                            tally[2] += called
    return [(a, b, c) for a, b, c in tallies], movers


def clean_row(claim: str, source: str, model, gamma: float, control_what: str,
              control: tuple[float, float]) -> Claim:
    """The row of the condition with γ = ``gamma`` for agents of ``model``'s kind, its control
    the condition (k, γ') = ``control``."""
    (found, control_found), movers = count(model, ((1.0, gamma), control))
    bad, bare, clean = found
    return Claim(
        claim, source, "moved reports the condition calls clean", exact(bad, 0), NONE,
        Control(control_what, exact(control_found[0], 0)),
        detail=f"{clean:,} reports called clean, {movers:,} movers, over d = "
               f"{', '.join(map(str, DIMENSIONS))}, δ = {', '.join(f'{v:g}' for v in DELTAS)}, "
               f"r0 = {', '.join(f'{v:g}' for v in R0)}, {2 * POLICIES} policies each "
               f"(random and skewed, ‖β‖ = 10^±6); with the bare strict inequality (no "
               f"rounding band) {bare} movers pass it: they land ulps above the boundary",
        why="a moved report passes the condition", label=PAPER)


def clean_rows() -> list[Row]:
    """``cond:clean`` for lazy agents and ``cond:clean-app`` for γ-trembling agents."""
    return [
        clean_row("a report with ⟨β, x'⟩ > δ‖β‖ + r0 was not moved, under any shifted linear "
                  "policy", "cond:clean", LazyBestResponse(), 0.0,
                  "the condition with δ/2 in place of δ", (0.5, 0.0)),
        clean_row(f"γ-trembling agents (γ = {GAMMA:g}, largest overshoot): a report with "
                  f"⟨β, x'⟩ > (δ + γ)‖β‖ + r0 was not moved, under any shifted linear policy",
                  "cond:clean-app", TremblingHand(tremble=GAMMA, adversarial=True), GAMMA,
                  "the condition without γ (cond:clean's, for lazy agents)", (1.0, 0.0)),
    ]


def clean(*_tables) -> list[Row]:
    """The rows (they read no part: the agents answer policies chosen here)."""
    return clean_rows()


__all__ = ["clean", "clean_row", "clean_rows", "count"]
