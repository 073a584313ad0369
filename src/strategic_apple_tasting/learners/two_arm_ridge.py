"""The two-arm ridge fit shared by the contextual-bandit baselines that ignore gaming: LinUCB
(:mod:`.linucb`), linear Thompson sampling (:mod:`.lin_ts`) and ε-greedy (:mod:`.epsilon_greedy`)
(DESIGN §3, "Baselines").

All three keep a ridge regression per arm and learn from every point they observe, gamed or not
(``strategy_aware=False``): accepted points feed arm 1, and under bandit feedback rejected
points feed arm 0. None shifts its rule by the agents' reach.

=====================  ========================================================================
learner                rule published each round
=====================  ========================================================================
:class:`LinUCB`        accept iff UCB1(x') ≥ r0 (bandit: UCB1(x') ≥ UCB0(x')), with
                       UCB_a(x) = ⟨θ̂_a, x⟩ + α·sqrt(xᵀV_a⁻¹x): *not* a linear threshold, so
                       agents answer it by numerical best response (:mod:`..game.best_response`)
:class:`LinTS`         sample θ̃_a ~ N(θ̂_a, v²V_a⁻¹), commit to accept iff ⟨θ̃1 − θ̃0, x'⟩ ≥ r0
:class:`EpsilonGreedy` with probability ε_t accept all or reject all (a fair coin), otherwise
                       accept iff ⟨θ̂1 − θ̂0, x'⟩ ≥ r0
=====================  ========================================================================

Ridge regression: V_a = λI + Σ x xᵀ over arm a's points and θ̂_a = V_a⁻¹ Σ x r. The prior is d
pseudo-points √λ·e_i with reward 0 at the top of the Givens QR factor of :mod:`.least_squares`,
whose triangle R_a then satisfies R_aᵀR_a = V_a: LinUCB's width is ‖R_a⁻ᵀx‖ (one forward
substitution) and a Thompson sample is θ̂_a + v·R_a⁻¹ξ with ξ ~ N(0, I) (one back
substitution); no inverse is formed. Under apple tasting arm 0 has no data and plays no part
(θ0 = 0, its reward is the known r0).

The three share one compiled core (one state class, the learner's kind a field), so the
engine compiles its loop once for all of them; the core declares its rule linear in every round
but LinUCB's (with α > 0).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import ELLIPSOID, SUBSET
from ..game.best_response import EXACT_MOVES, SCRATCH_ROWS, identity_metric, settle_move
from ..game.game import check_number
from ..game.optimistic import frobenius, invert_triangle, nearest_point
from ._invariants import MOST_ROUNDS, cached, count, finite, flag, upper_triangular
from .base import Learner, LearnerKernels
from .least_squares import add_point, solve
from .tags import LearnerTags

LINUCB, THOMPSON, EPSILON = 0, 1, 2

# counts[...]: rounds seen, points in arm 1's fit, in arm 0's fit, θ̂ stale (0/1)
_ROUNDS, _N1, _N0, _STALE = 0, 1, 2, 3


class RidgeBanditState(NamedTuple):
    kind: int  # LINUCB, THOMPSON or EPSILON
    bandit: bool
    r0: float
    alpha: float  # LinUCB: width of the confidence bonus
    scale: float  # lin-ts: v, the posterior scale
    epsilon: float  # ε-greedy: ε_t = min(1, ε·t^(−decay))
    decay: float
    counts: np.ndarray  # int64, see _ROUNDS.. above
    fits: np.ndarray  # (2, d+1, d+1): QR factors of [√λ·I, 0; X, r] for arm 1 and arm 0
    theta: np.ndarray  # (2, d): θ̂1, θ̂0
    work: np.ndarray  # (3, d+1) scratch: Givens row, then two substitution vectors


def new_state(d: int, kind: int, *, bandit: bool, r0: float, ridge: float, alpha: float = 0.0,
              scale: float = 0.0, epsilon: float = 0.0, decay: float = 0.0
              ) -> RidgeBanditState:
    """A fresh state: ridge prior λ on both arms, no data."""
    fits = np.zeros((2, d + 1, d + 1))
    for arm in range(2):
        fits[arm, :d, :d] = math.sqrt(ridge) * np.eye(d)
    counts = np.zeros(4, dtype=np.int64)
    counts[_STALE] = 1
    return RidgeBanditState(
        kind=int(kind), bandit=bool(bandit), r0=float(r0), alpha=float(alpha),
        scale=float(scale), epsilon=float(epsilon), decay=float(decay), counts=counts,
        fits=fits, theta=np.zeros((2, d)), work=np.zeros((3, d + 1)))


@njit
def _refit(state):
    counts = state.counts
    if counts[_STALE]:
        solve(state.fits[0], state.theta[0])
        solve(state.fits[1], state.theta[1])
        counts[_STALE] = 0


@njit
def _back_substitute(factor, y, d):
    """y[:d] ← R⁻¹y[:d] in place (R the d × d upper triangle of the factor)."""
    for k in range(d - 1, -1, -1):
        acc = y[k]
        for j in range(k + 1, d):
            acc -= factor[k, j] * y[j]
        y[k] = acc / factor[k, k]


@njit
def _add_sample(factor, scale, sign, rng, beta, y):
    """beta += sign·scale·R⁻¹ξ, ξ ~ N(0, I) drawn in index order (R the factor's triangle)."""
    d = beta.shape[0]
    for k in range(d):
        y[k] = rng.standard_normal()
    _back_substitute(factor, y, d)
    for i in range(d):
        beta[i] += sign * scale * y[i]


@njit
def _policy(state, rng, beta):
    d = beta.shape[0]
    if state.kind == EPSILON:
        t = float(state.counts[_ROUNDS] + 1)
        eps = state.epsilon if state.decay == 0.0 else min(1.0, state.epsilon * t ** -state.decay)
        u = rng.random()  # drawn every round
        if u < eps:  # explore: accept all or reject all, each with probability ε_t/2
            for i in range(d):
                beta[i] = 0.0
            return -1.0 if u < 0.5 * eps else 1.0
    _refit(state)
    theta = state.theta
    for i in range(d):
        beta[i] = theta[0, i] - theta[1, i]
    if state.kind == THOMPSON:
        _add_sample(state.fits[0], state.scale, 1.0, rng, beta, state.work[1])
        if state.bandit:
            _add_sample(state.fits[1], state.scale, -1.0, rng, beta, state.work[1])
    return state.r0


@njit
def _width(factor, z, w):
    """‖R⁻ᵀz‖ = sqrt(zᵀV⁻¹z), with w = R⁻ᵀz (forward substitution)."""
    s = 0.0
    for k in range(z.shape[0]):
        acc = z[k]
        for j in range(k):
            acc -= factor[j, k] * w[j]
        w[k] = acc / factor[k, k]
        s += w[k] * w[k]
    return math.sqrt(s)


@njit
def _add_width_gradient(factor, w, width, coef, grad):
    """grad += coef·V⁻¹z/‖R⁻ᵀz‖, from w = R⁻ᵀz (back substitution in place: R⁻¹w = V⁻¹z)."""
    d = grad.shape[0]
    _back_substitute(factor, w, d)
    for i in range(d):
        grad[i] += coef * (w[i] / width)


@njit
def _rule(state, z, grad, need_grad):
    """LinUCB: g(z) = UCB1(z) − r0 (bandit: UCB1(z) − UCB0(z) − r0), ∇g into grad if asked.

    Evaluated right after the round's policy, which refit θ̂. At z = 0 a width has no
    gradient; its part of ∇g is taken as 0 (a subgradient).
    """
    theta = state.theta
    d = z.shape[0]
    g = 0.0
    for i in range(d):
        g += (theta[0, i] - theta[1, i]) * z[i]
    g -= state.r0
    w1 = state.work[1]
    w0 = state.work[2]
    width1 = _width(state.fits[0], z, w1)
    width0 = _width(state.fits[1], z, w0) if state.bandit else 0.0
    g += state.alpha * (width1 - width0)
    if need_grad:
        for i in range(d):
            grad[i] = theta[0, i] - theta[1, i]
        if width1 > 0.0:
            _add_width_gradient(state.fits[0], w1, width1, state.alpha, grad)
        if width0 > 0.0:
            _add_width_gradient(state.fits[1], w0, width0, -state.alpha, grad)
    return g


@njit
def _linear(state):
    return state.kind != LINUCB or state.alpha == 0.0


@njit(inline="always")
def _reach_scale(model, d):
    """The longest ‖v‖ of a move of unit cost to ``model``'s agents: 1 (ℓ2, or subset gaming's
    diag(1_G)), or sqrt(λ_max(A⁻¹)) ≤ ‖A⁻¹‖_F^½ for an ellipsoidal cost."""
    if model.kind == ELLIPSOID:
        return math.sqrt(frobenius(model.cost_inv, d))
    return 1.0


@njit(inline="always")
def _euclidean(model):
    """Whether the cost is ‖v‖: no metric, or subset gaming with every feature gameable
    (diag(1_G) is then the identity)."""
    if model.kind != SUBSET:
        return identity_metric(model)
    gameable = model.gameable
    for i in range(gameable.shape[0]):
        if not gameable[i]:
            return False
    return True


@njit
def _exact_move(state, metric, budget, x, gx, out, work):
    """LinUCB's rule answered without the search: a bound rules out every agent that cannot
    reach {g ≥ 0}, and under apple tasting with an ℓ2 cost (subset gaming's too when every
    feature is gameable) the move is the closed form of :mod:`..game.optimistic`; an agent of a
    bandit rule (two widths: not convex), with an ellipsoidal cost or gaming some features only
    that the bound does not rule out is left to the search."""
    d = x.shape[0]
    spare = work[SCRATCH_ROWS:]
    inv = spare[0:d]
    theta = state.theta
    # |g(x + v) − g(x)| ≤ ‖v‖·(‖θ̂1 − θ̂0‖ + α(‖R1⁻¹‖ + ‖R0⁻¹‖)), each norm ≤ its Frobenius norm.
    s = 0.0
    for i in range(d):
        s += (theta[0, i] - theta[1, i]) ** 2
    lip = math.sqrt(s)
    invert_triangle(state.fits[0], d, inv)
    lip += state.alpha * frobenius(inv, d)
    if state.bandit:
        invert_triangle(state.fits[1], d, inv)
        lip += state.alpha * frobenius(inv, d)
    reach = budget * _reach_scale(metric, d)
    if gx + reach * lip * (1.0 + 1e-9) < 0.0:
        return math.inf
    if state.bandit or not _euclidean(metric) or not state.alpha > 0.0:
        return math.nan
    diff = spare[3 * d + 2]
    for i in range(d):
        diff[i] = theta[0, i] - theta[1, i]
    dist = nearest_point(diff, state.r0, state.alpha, state.fits[0], x, out, spare)
    if math.isnan(dist):
        return math.nan
    return settle_move(state, budget, x, dist, out, work)


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    counts = state.counts
    counts[_ROUNDS] += 1
    if not observed:
        return False
    which = 0 if accepted else 1  # arm 1's data, or arm 0's (bandit feedback)
    add_point(state.fits[which], x, reward, state.work[0])
    counts[_N1 + which] += 1
    counts[_STALE] = 1
    return True


@njit
def _estimate(state, out):
    _refit(state)
    theta = state.theta
    for i in range(out.shape[0]):
        out[i] = theta[0, i] - theta[1, i]
    return state.counts[_N1] > 0


def check_state(state: RidgeBanditState, template: RidgeBanditState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: counts >= 0 and
    consistent, the factors finite and triangular with positive diagonals (the substitutions
    divide by them; the ridge prior makes them so), θ̂ their fit when the state says it is
    current."""
    counts = state.counts
    rounds = count(counts[_ROUNDS], f"{where}.counts[{_ROUNDS}] (rounds)", 0, MOST_ROUNDS)
    n1 = count(counts[_N1], f"{where}.counts[{_N1}] (arm 1's points)")
    count(counts[_N0], f"{where}.counts[{_N0}] (arm 0's points)", 0, rounds - n1)
    flag(counts[_STALE], f"{where}.counts[{_STALE}] (θ̂ stale)")
    fits = state.fits
    upper_triangular(fits, f"{where}.fits")
    d = state.theta.shape[1]
    for arm in range(2):
        diagonal = np.diagonal(fits[arm])[:d]
        if not np.all(diagonal > 0.0):
            k = int(np.argmin(diagonal > 0.0))
            raise ValueError(f"{where}.fits[{arm}, {k}, {k}] must be > 0 (a ridge factor's "
                             f"diagonal), got {float(diagonal[k])!r}")
    finite(state.theta, f"{where}.theta")
    if not counts[_STALE]:
        theta = np.zeros_like(state.theta)
        solve(fits[0], theta[0])
        solve(fits[1], theta[1])
        cached(state.theta, theta, f"{where}.theta", f"the fit of {where}.fits")


KERNELS = LearnerKernels(RidgeBanditState, _policy, _update, _estimate, rule=_rule,
                         linear=_linear, check=check_state)
EXACT_MOVES[RidgeBanditState] = _exact_move


class RidgeBandit(Learner, abstract=True):
    """Base of the three learners over the two-arm ridge fit (one compiled core)."""

    kernels = KERNELS
    tags = LearnerTags(strategy_aware=False)
    _kind: int
    ridge: float
    r0: float | None
    feedback: str | None

    def _check_params(self) -> None:
        super()._check_params()
        check_number("ridge", self.ridge, 0.0, open_low=True)

    def _new_state(self, d: int, **kw: float) -> RidgeBanditState:
        return new_state(d, self._kind, bandit=self.feedback == "bandit", r0=float(self.r0),
                         ridge=float(self.ridge), **kw)
