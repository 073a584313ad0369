"""Compiled twins of the peer libraries' rules, which agents answer.

A peer adapter's rule is "accept iff g(x') ≥ 0" with g the library's own prediction, a Python
call of tens of microseconds; agents' best response evaluates g a hundred times a round. Each
round the adapter reads the parameters its library's prediction uses (a ridge fit's
coefficients and inverse matrix, a Bayesian regression's posterior, a frozen sample, the
identified hyperplane of a pmf) into a twin: the same g in compiled code, less a margin, so
that its accepted set lies inside the library's (:meth:`GeneralRule.from_function
<strategic_apple_tasting.game.policies.GeneralRule.from_function>`'s ``twin``). Agents answer
the twin; a mover whose landing point the library rejects all the same is answered with the
library's g (:func:`~strategic_apple_tasting.game.best_response.respond_to_rule`). Decisions
stay the library's.

* :class:`LinearTwin`: accept iff ⟨w, z⟩ + c ≥ 0 (a frozen sample of a linear model, an
  exploring round's constant decision, the hyperplane of Vowpal Wabbit's SquareCB pmf): agents
  move onto it in closed form.
* :class:`UCBGapTwin`: UCB1(z̄) − UCB0(z̄) with UCB_a = ⟨θ_a, z̄⟩ + α·sqrt(z̄ᵀM_a z̄) (MABWiser's
  LinUCB, z̄ = (z, 1) with an intercept).
* :class:`BayesGapTwin`: UCB_a = ⟨m_a, z̄⟩ + sqrt(1/β_a + z̄ᵀS_a z̄ + Σ_i e_a,i z̄_i²) (river's
  LinUCBDisjoint: a Bayesian regression's predictive mean plus deviation, e the prior variance
  of features it has not seen).

A difference of two widths is not convex: agents answer the last two by the numerical search
(compiled), after a bound rules out those who cannot reach the rule at all.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import njit
from ..game.best_response import EXACT_MOVES, identity_metric, settle_move
from ..game.policies import RULES


class LinearTwin(NamedTuple):
    """Accept iff ⟨w, z⟩ + offset ≥ 0 (``offset`` includes the margin)."""

    w: np.ndarray
    offset: float


class UCBGapTwin(NamedTuple):
    """UCB1 − UCB0 of two ridge fits, less ``rel`` of the terms' size."""

    theta: np.ndarray  # (2, k): θ1, θ0 (k = d + 1 with an intercept)
    inv: np.ndarray  # (2, k, k): M1, M0 (the ridge matrices' inverses)
    alpha: float
    intercept: bool
    rel: float
    work: np.ndarray  # (2, k) scratch: M_a z̄


class BayesGapTwin(NamedTuple):
    """UCB1 − UCB0 of two Bayesian linear regressions, less ``rel`` of the terms' size."""

    mean: np.ndarray  # (2, k): m1, m0
    cov: np.ndarray  # (2, k, k): S1, S0
    extra: np.ndarray  # (2, k): the prior variance of each feature an arm has not seen (0 else)
    noise: np.ndarray  # (2,): 1/β of each arm
    intercept: bool
    rel: float
    work: np.ndarray  # (2, k) scratch: S_a z̄


@njit
def _linear_rule(state, z, grad, need_grad):
    g = state.offset
    for i in range(z.shape[0]):
        g += state.w[i] * z[i]
    if need_grad:
        for i in range(z.shape[0]):
            grad[i] = state.w[i]
    return g


@njit
def _linear_move(state, metric, budget, x, gx, out, work):
    """Onto the hyperplane along w (ℓ2 cost); another cost is left to the search."""
    if not identity_metric(metric):
        return math.nan
    d = x.shape[0]
    s = 0.0
    for i in range(d):
        s += state.w[i] * state.w[i]
    if not s > 0.0:
        return math.inf  # a constant rule: nobody can move into it
    nw = math.sqrt(s)
    t = -gx / nw
    for i in range(d):
        out[i] = x[i] + t * (state.w[i] / nw)
    return settle_move(state, budget, x, t, out, work)


@njit(inline="always")
def _zbar(z, k, i):
    """Entry i of z̄ = (z, 1) (k = d + 1) or z (k = d)."""
    return z[i] if i < z.shape[0] else 1.0


@njit
def _ucb_rule(state, z, grad, need_grad):
    k = state.theta.shape[1]
    d = z.shape[0]
    g = 0.0
    size = 1e-300
    for a in range(2):
        sign = 1.0 if a == 0 else -1.0
        mean = 0.0
        for i in range(k):
            mean += state.theta[a, i] * _zbar(z, k, i)
        quad = 0.0
        for i in range(k):
            acc = 0.0
            for j in range(k):
                acc += state.inv[a, i, j] * _zbar(z, k, j)
            state.work[a, i] = acc
            quad += acc * _zbar(z, k, i)
        width = state.alpha * math.sqrt(max(quad, 0.0))
        g += sign * (mean + width)
        size += abs(mean) + width
        if need_grad:
            for i in range(d):
                part = state.theta[a, i]
                if width > 0.0:
                    part += state.alpha * state.alpha * state.work[a, i] / width
                grad[i] = sign * part + (grad[i] if a == 1 else 0.0)
    return g - state.rel * size


@njit
def _bayes_rule(state, z, grad, need_grad):
    k = state.mean.shape[1]
    d = z.shape[0]
    g = 0.0
    size = 1e-300
    for a in range(2):
        sign = 1.0 if a == 0 else -1.0
        mean = 0.0
        var = state.noise[a]
        for i in range(k):
            zi = _zbar(z, k, i)
            mean += state.mean[a, i] * zi
            acc = state.extra[a, i] * zi
            for j in range(k):
                acc += state.cov[a, i, j] * _zbar(z, k, j)
            state.work[a, i] = acc
            var += acc * zi
        sigma = math.sqrt(max(var, 0.0))
        g += sign * (mean + sigma)
        size += abs(mean) + sigma
        if need_grad:
            for i in range(d):
                part = state.mean[a, i]
                if sigma > 0.0:
                    part += state.work[a, i] / sigma
                grad[i] = sign * part + (grad[i] if a == 1 else 0.0)
    return g - state.rel * size


@njit(inline="always")
def _frobenius_sqrt(m, a, k):
    """sqrt(‖m[a]‖_F) ≥ sqrt(λ_max(m[a])): the most ‖v‖_M grows per unit of ‖v‖."""
    s = 0.0
    for i in range(k):
        for j in range(k):
            s += m[a, i, j] * m[a, i, j]
    return math.sqrt(math.sqrt(s))


@njit(inline="always")
def _out_of_reach(gx, budget, metric, lip):
    """Whether |g(x + v) − g(x)| ≤ ‖v‖·lip keeps g below 0 for every move within budget (an
    ellipsoidal cost's moves are left to the search)."""
    if not identity_metric(metric):
        return False
    return gx + budget * lip * (1.0 + 1e-9) < 0.0


@njit
def _ucb_screen(state, metric, budget, x, gx, out, work):
    d = x.shape[0]
    k = state.theta.shape[1]
    s = 0.0
    for i in range(d):
        s += (state.theta[0, i] - state.theta[1, i]) ** 2
    lip = math.sqrt(s) + state.alpha * (_frobenius_sqrt(state.inv, 0, k)
                                        + _frobenius_sqrt(state.inv, 1, k))
    return math.inf if _out_of_reach(gx, budget, metric, lip) else math.nan


@njit
def _bayes_screen(state, metric, budget, x, gx, out, work):
    d = x.shape[0]
    k = state.mean.shape[1]
    s = 0.0
    for i in range(d):
        s += (state.mean[0, i] - state.mean[1, i]) ** 2
    lip = math.sqrt(s)
    for a in range(2):
        top = 0.0
        for i in range(k):
            top = max(top, state.extra[a, i])
        lip += _frobenius_sqrt(state.cov, a, k) + math.sqrt(top)
    return math.inf if _out_of_reach(gx, budget, metric, lip) else math.nan


RULES[LinearTwin] = _linear_rule
RULES[UCBGapTwin] = _ucb_rule
RULES[BayesGapTwin] = _bayes_rule
EXACT_MOVES[LinearTwin] = _linear_move
EXACT_MOVES[UCBGapTwin] = _ucb_screen
EXACT_MOVES[BayesGapTwin] = _bayes_screen


def linear_twin(w: np.ndarray, offset: float, rel: float) -> LinearTwin:
    """The twin of "accept iff ⟨w, z⟩ + offset ≥ 0", its offset lowered by ``rel`` of the sizes
    involved (unit contexts: Σ|w_i| + |offset|)."""
    w = np.ascontiguousarray(w, dtype=float)
    return LinearTwin(w, float(offset) - rel * (float(np.abs(w).sum()) + abs(float(offset))))
