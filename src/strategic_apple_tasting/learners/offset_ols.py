"""Offset OLS: SA-OLS's shifted rule, refit on clean *and* gamed points (the paper's first open
problem, learning from unclean data).

SA-OLS (`alg:sa-ols`) throws away every accepted point on its boundary, because a lazy agent may
have moved there; where c1(d, δ) is small that is nearly all of them. Yet a gamed point says a
lot. Under the shifted rule (β, δ‖β‖ + r0) a lazy mover with true context x lands at
x' = x + m·u, u = β/‖β‖, m ∈ (0, δ], and its reward is

    y = ⟨θ1, x⟩ + ε = ⟨θ1, x'⟩ − m·⟨θ1, u⟩ + ε.

Split θ1 = a·u + θ⊥. Every gamed point under one rule has ⟨u, x'⟩ fixed, so across such points
y = const − (m − m̄)·a + ⟨θ⊥, x'⊥⟩ + ε: the landing points' spread *along the boundary* measures
θ⊥, which is exactly what sets the rule's direction, provided the move m is not correlated with
where along the boundary the agent lands (true for a context density symmetric about the
boundary's foot, such as the uniform ball; biased otherwise). The unknown mean offset m̄·a is one
nuisance coefficient: every accepted point enters one least-squares fit of y on [x', g], g = 1
for a point on the boundary (not certified clean) and 0 for a clean one, and θ̂1 is the fit's
first d coefficients. Clean points pin a; gamed points pin θ⊥ and the offset.

The offset m̄·⟨θ1, u⟩ drifts as the rule turns, but only at second order in the rule's angle
error (⟨θ1, u⟩ = ‖θ1‖cos φ), so early gamed points bias the fit little and their weight fades.
Under bandit feedback rejected points fit θ̂0 as in SA-OLS (nobody games to be rejected).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import clean_margin, reach
from ..game.policies import clean_above
from ._invariants import (
    MOST_ROUNDS,
    cached,
    count,
    finite,
    fixed,
    flag,
    upper_triangular,
)
from .base import LearnerKernels
from .binding import compiled_belief_of
from .greedy_ols import _GreedyOLS
from .least_squares import add_point, new_factor, solve
from .tags import LearnerTags

# counts[...]: rounds seen, clean points fitted into θ̂1, gamed points fitted, θ̂ stale (0/1)
_ROUNDS, _CLEAN, _GAMED, _STALE = 0, 1, 2, 3


class OffsetOLSState(NamedTuple):
    agents: Any  # the agent model the learner believes in
    r0: float
    bandit: bool
    counts: np.ndarray  # int64, see _ROUNDS.. above
    fit1: np.ndarray  # (d+2, d+2): QR factor of [X' | g | y] over accepted points
    fit0: np.ndarray  # (d+1, d+1): QR factor of [X | y] over rejected points (bandit)
    theta1: np.ndarray  # (d+1,): θ̂1 and the gamed points' offset
    theta0: np.ndarray  # (d,): θ̂0 (zero under apple tasting)
    row: np.ndarray  # (d+1,) scratch: [x', g]
    work1: np.ndarray  # (d+2,) scratch for fit1
    work0: np.ndarray  # (d+1,) scratch for fit0


@njit(inline="always")
def _warm_up_rounds(state, d):
    return 2 * d if state.bandit else d


@njit(inline="always")
def _refit(state):
    if state.counts[_STALE]:
        solve(state.fit1, state.theta1)
        if state.bandit:
            solve(state.fit0, state.theta0)
        state.counts[_STALE] = 0


@njit
def _policy(state, rng, beta):
    d = beta.shape[0]
    rounds = state.counts[_ROUNDS]
    if rounds < _warm_up_rounds(state, d):
        for i in range(d):
            beta[i] = 0.0
        return -1.0 if rounds < d else 1.0  # accept all, then (bandit) reject all
    _refit(state)
    for i in range(d):
        beta[i] = state.theta1[i] - state.theta0[i]
    return state.r0 + reach(state.agents, beta)


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    d = x.shape[0]
    counts = state.counts
    used = False
    if observed:
        if accepted:
            # Nobody games a rule that accepts everyone: warm-up points are clean, and so is
            # every point strictly above the boundary.
            clean = counts[_ROUNDS] < d or clean_above(
                beta, threshold, x, clean_margin(state.agents, beta))
            row = state.row
            for i in range(d):
                row[i] = x[i]
            row[d] = 0.0 if clean else 1.0
            add_point(state.fit1, row, reward, state.work1)
            counts[_CLEAN if clean else _GAMED] += 1
            used = clean  # "used" counts points learned as unmoved (the engine's bookkeeping)
        else:  # bandit: nobody games to be rejected
            add_point(state.fit0, x, reward, state.work0)
            used = True
        counts[_STALE] = 1
    counts[_ROUNDS] += 1
    return used


@njit
def _estimate(state, out):
    _refit(state)
    for i in range(out.shape[0]):
        out[i] = state.theta1[i] - state.theta0[i]
    return state.counts[_CLEAN] + state.counts[_GAMED] > 0


def check_state(state: OffsetOLSState, template: OffsetOLSState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: the belief as
    the parameters make it, counts >= 0, the fits finite and triangular, θ̂ their fit when the
    state says it is current."""
    fixed(state.agents, template.agents, f"{where}.agents")
    counts = state.counts
    rounds = count(counts[_ROUNDS], f"{where}.counts[{_ROUNDS}] (rounds)", 0, MOST_ROUNDS)
    clean = count(counts[_CLEAN], f"{where}.counts[{_CLEAN}] (clean points)", 0, rounds)
    count(counts[_GAMED], f"{where}.counts[{_GAMED}] (gamed points)", 0, rounds - clean)
    flag(counts[_STALE], f"{where}.counts[{_STALE}] (θ̂ stale)")
    upper_triangular(state.fit1, f"{where}.fit1")
    upper_triangular(state.fit0, f"{where}.fit0")
    finite(state.theta1, f"{where}.theta1")
    finite(state.theta0, f"{where}.theta0")
    if not counts[_STALE]:
        theta1 = np.zeros_like(state.theta1)
        solve(state.fit1, theta1)
        cached(state.theta1, theta1, f"{where}.theta1", f"the fit of {where}.fit1")
        if state.bandit:
            theta0 = np.zeros_like(state.theta0)
            solve(state.fit0, theta0)
            cached(state.theta0, theta0, f"{where}.theta0", f"the fit of {where}.fit0")


KERNELS = LearnerKernels(OffsetOLSState, _policy, _update, _estimate, check=check_state)


class OffsetOLS(_GreedyOLS):
    """SA-OLS's shifted rule, refit on clean points and on gamed ones with one fitted offset.

    Accepts iff ⟨θ̂, x'⟩ ≥ δ‖θ̂‖ + r0, as SA-OLS does (same warm-up: accept everyone for d rounds,
    then under bandit feedback reject everyone for d). θ̂1 is the least-squares fit of the
    reward on [x', g] over every accepted point, g = 1 for a point not certified clean (on the
    boundary: it may have moved) and 0 otherwise; the coefficient of g absorbs the mean
    distance movers travelled, times ⟨θ1, u⟩ (module docstring). No theorem: the paper proves
    nothing for it, and the correction is unbiased only where a mover's distance is not
    correlated with where along the boundary it lands.

    ``update`` returns True for a point learned as unmoved (clean) only, so the engine's
    count of gamed points learned as clean stays 0; gamed points enter the fit through the
    offset.

    Parameters
    ----------
    delta, r0, feedback, agents
        As for :class:`~strategic_apple_tasting.learners.SAOLS`.

    Examples
    --------
    >>> import numpy as np
    >>> learner = OffsetOLS(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)
    >>> accepted = learner.act([0.5, 0.2])
    >>> learner.update([0.5, 0.2], accepted, 0.3 if accepted else None)
    True
    """

    name = "offset-ols"
    kernels = KERNELS  # its own, over SA-OLS's hyperparameters and warm-up (milestones)
    tags = LearnerTags()  # strategy-aware, without SA-OLS's theorem

    def _init_state(self, d: int) -> Any:
        if self.r0 is None:
            raise ValueError("offset-ols needs r0 (taken from the game by bind)")
        return OffsetOLSState(
            agents=compiled_belief_of(self), r0=float(self.r0), bandit=self.feedback == "bandit",
            counts=np.zeros(4, dtype=np.int64), fit1=new_factor(d + 1), fit0=new_factor(d),
            theta1=np.zeros(d + 1), theta0=np.zeros(d), row=np.zeros(d + 1),
            work1=np.zeros(d + 2), work0=np.zeros(d + 1))
