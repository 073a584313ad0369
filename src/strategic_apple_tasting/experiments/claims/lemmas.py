"""SA-OLS's per-round lemmas, measured round by round: ``lem:leq0`` and ``lem:l2-bandit-1``.

* ``lem:leq0``: every round, ⟨θ̂^(a*_t)_t − θ̂^(a_t)_t, x_t⟩ ≤ 0, for SA-OLS's estimates and
  lazy agents: the learner's action never disagrees with its own estimate on the agent's true
  context. Under apple tasting θ̂^(0) is the known reward r0 of rejecting, so the quantity is
  (a* − a)(⟨θ̂_t, x_t⟩ − r0). It is measured on every round after the warm-up of d rounds
  (which accepts every agent, whatever its partial estimate says; the proof of
  ``thm:stochastic-main-app`` counts them apart) of games played through the per-round API
  (:func:`play`: the game's own contexts, agents and noise, the learner's own policy, act and
  update), and the row counts the rounds where it is > 0. The control is SA-OLS told δ/2
  against the same agents: agents that game further than the learner assumes reach its rule
  from below its estimate's boundary.
* ``lem:l2-bandit-1``: with probability 1 − γ_t, ‖θ − θ̂_{t+1}‖ ≤ (2/(c0 c1 c2))·
  sqrt(14 d σ² log(2d/γ_t)/t). The row reads the estimation error the engine records (after
  round t, that is θ̂_{t+1}) at every recorded round of the stochastic part, on each seed, with
  γ_t = γ = 0.05, and counts the share of (seed, round) pairs over the bound: at most γ. Only
  rounds where the bound is below 1 = ‖θ‖ (the error of the estimate 0) are counted: above it
  the bound says nothing. The control is shifted-ols (learns from gamed points, inconsistent)
  against the same bound. It is read at the stochastic part's game (d = 3, δ = 0.3, σ = 0.1:
  the bound is 60/√t, above shifted-ols's error until t ≈ 470,000) and at the
  ``estimation-bound`` part's (d = 2, δ = 0.3, σ = 0.01, where it is small).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from ... import theory
from ...engine import reference
from ...game import Game
from ...learners import SAOLS, Learner
from ...metrics import seed_matrix
from .measures import exact, setting
from .rows import PAPER, Check, Claim, Control, Row

#: The rounds and seeds of the per-round games (a few seconds on the per-round API). The seeds
#: are the learner's and the game's: SA-OLS and its control meet the same agents.
ROUNDS = 1_000
SEEDS = (0, 1, 2, 3)
#: The confidence γ_t of lem:l2-bandit-1's bound, the same every round.
GAMMA = 0.05
#: lem:leq0 holds every round: no round may break it.
EVERY_ROUND = Check("0 rounds with (a* − a)(⟨θ̂, x⟩ − r0) > 0", low=0.0, high=0.0)


class Step(NamedTuple):
    """One round of :func:`play`: what the lemmas read."""

    t: int
    x: np.ndarray  # the true context
    estimate: np.ndarray | None  # θ̂_t, the estimate behind this round's rule
    accepted: bool
    best: bool  # a*_t: π*'s decision


def play(game: Game, learner: Learner, seed: int, rounds: int) -> list[Step]:
    """Play ``rounds`` rounds of ``game`` (instance ``seed``) with ``learner`` on the engine's
    per-round loop (:func:`strategic_apple_tasting.engine.reference.play`), keeping what each
    round's lemma reads: the learner's estimate as it decided."""
    inst = game.instance(seed)
    bound = learner.bind(inst, rounds).reset(game.dimension, inst.rngs["learner"])
    steps: list[Step] = []

    def watch(x: np.ndarray, accepted: bool, best: bool) -> None:
        estimate = bound.estimate()
        steps.append(Step(len(steps) + 1, x, None if estimate is None else np.array(estimate),
                          accepted, best))
    for _ in reference.play(inst, bound, rounds, watch):
        pass
    return steps


def leq0_violations(game: Game, learner: Learner, seeds=SEEDS, rounds: int = ROUNDS
                    ) -> tuple[int, int, float]:
    """Rounds where (a* − a)(⟨θ̂_t, x_t⟩ − r0) > 0, rounds checked (after the warm-up, where
    an estimate exists), and the largest value of the quantity."""
    bad = checked = 0
    worst = -math.inf
    r0 = game.r0
    for seed in seeds:
        for step in play(game, learner, seed, rounds):
            if step.t <= game.dimension or step.estimate is None:
                continue  # the warm-up accepts every agent, whatever its partial estimate
            q = (int(step.best) - int(step.accepted)) * (float(step.estimate @ step.x) - r0)
            checked += 1
            bad += q > 0
            worst = max(worst, q)
    return bad, checked, worst


def leq0_row(d: int, delta: float, sigma: float, told: float | None = None) -> Claim:
    """lem:leq0 on every round of SA-OLS's games, against SA-OLS told δ/2. ``told``, if given,
    is the δ SA-OLS is told in place of the agents' (a sabotage: below it, agents outreach)."""
    game = Game(dimension=d, delta=delta, sigma=sigma)
    bad, checked, worst = leq0_violations(game, SAOLS(delta=told))
    wrong, _, control_worst = leq0_violations(game, SAOLS(delta=delta / 2))
    return Claim(
        "every round, ⟨θ̂^(a*) − θ̂^(a), x⟩ ≤ 0 (SA-OLS's action agrees with its estimate on "
        "the true context)", "lem:leq0",
        "rounds where it is > 0", exact(bad, 0), EVERY_ROUND,
        Control("SA-OLS told δ/2 (agents game further than it assumes)", exact(wrong, 0)),
        detail=f"{checked:,} rounds checked ({len(SEEDS)} seeds × {ROUNDS:,} rounds, the "
               f"warm-up's {d} left out, per-round API) at d = {d}, δ = {delta:g}, "
               f"σ = {sigma:g}; largest value {worst + 0.0:.3g} (control's "
               f"{control_worst + 0.0:.3g})",
        why="SA-OLS accepted a report whose true context its estimate rejects, or the "
            "reverse", label=PAPER)


def l2_bound(t: np.ndarray, d: int, delta: float, sigma: float, c0: float = 1.0,
             gamma: float = GAMMA) -> np.ndarray:
    """lem:l2-bandit-1's bound on ‖θ − θ̂_{t+1}‖ after t rounds."""
    c = c0 * theory.c1(d, delta) * theory.c2(d, delta)
    return 2 / c * np.sqrt(14 * d * sigma ** 2 * math.log(2 * d / gamma) / t)


def _over(table: pa.Table, learner: str, d: int, delta: float, sigma: float
          ) -> tuple[int, int, float, np.ndarray]:
    """(seed, round) pairs over the bound, pairs counted (rounds t ≥ d where the bound is
    below 1), the largest error / bound, and the rounds counted."""
    t, errors = seed_matrix(table, learner, "theta_error")
    bound = l2_bound(t.astype(float), d, delta, sigma)
    keep = (t >= d) & (bound < 1.0)
    ratio = errors[:, keep] / bound[keep]
    valid = np.isfinite(ratio)  # a seed without a record there, or no estimate yet
    worst = float(ratio[valid].max()) if valid.any() else math.nan
    return int((ratio[valid] > 1).sum()), int(valid.sum()), worst, t[keep]


def l2_row(table: pa.Table) -> Claim:
    """lem:l2-bandit-1's bound, per recorded round of the stochastic part."""
    d, delta, sigma = (setting(table, k) for k in ("dimension", "delta", "sigma"))
    over, pairs, worst, t = _over(table, "sa-ols", d, delta, sigma)
    c_over, c_pairs, c_worst, _ = _over(table, "shifted-ols", d, delta, sigma)
    k = float(l2_bound(np.array([1.0]), d, delta, sigma)[0])
    # The bound reaches the control's error (its mean at the last recorded round) only at
    # t = (k / error)²: before that the control cannot fail, whatever the learner.
    _, control_errors = seed_matrix(table, "shifted-ols", "theta_error")
    plateau = float(np.nanmean(control_errors[:, -1]))
    share = exact(over / pairs if pairs else math.nan, 0)
    first = f"t ≥ {int(t[0]):,}" if t.size else "no round"
    return Claim(
        f"with probability 1 − γ, ‖θ − θ̂_(t+1)‖ ≤ (2/(c0 c1 c2))·sqrt(14 d σ² log(2d/γ)/t) "
        f"(γ = {GAMMA:g}; d = {d}, δ = {delta:g}, σ = {sigma:g})", "lem:l2-bandit-1",
        "share of (seed, recorded round) pairs over the bound", share,
        Check(f"≤ γ = {GAMMA:g}", high=GAMMA),
        Control("shifted-ols (learns from gamed points) against the same bound",
                exact(c_over / c_pairs if c_pairs else math.nan, 0)),
        detail=f"{over}/{pairs} pairs over it, rounds {first} (where the bound "
               f"{k:.3g}/√t is below 1 = ‖θ‖); "
               f"largest error/bound {worst:.3g} (shifted-ols {c_over}/{c_pairs}, largest "
               f"{c_worst:.3g}; its error at the end, {plateau:.3g}, is under the bound up to "
               f"t ≈ {(k / plateau) ** 2:,.0f})",
        why="the error exceeds the bound more often than γ",
        regime="" if pairs else f"the bound {k:.3g}/√t is not below 1 at any recorded round",
        label=PAPER)


def sharp(table: pa.Table) -> list[Row]:
    """lem:l2-bandit-1's bound where it is small (the ``estimation-bound`` part: d = 2,
    δ = 0.3, σ = 0.01)."""
    return [l2_row(table)]


def lemmas(table: pa.Table) -> list[Row]:
    """The per-round lemmas at the stochastic part's game."""
    d, delta, sigma = (setting(table, k) for k in ("dimension", "delta", "sigma"))
    return [leq0_row(int(d), float(delta), float(sigma)), l2_row(table)]
