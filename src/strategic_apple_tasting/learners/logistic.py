"""Logistic learners for real outcomes (issue 21): SA-OLS's protocol with a logistic model.

A lender sees a loan repaid or defaulted, and scores applicants with a logistic model. Here the
reward of accepting is one of two values, ``repaid`` and ``defaulted``, and a reward in between
is a fractional label: the learner's label for a reward r is

    y = (r − defaulted) / (repaid − defaulted), clipped to [0, 1],

and it models E[y | x] = σ(⟨w, x⟩) (a logistic regression; with rewards between the two values,
Papke and Wooldridge's fractional logit). Accepting then earns defaulted + (repaid −
defaulted)·σ(⟨w, x⟩) in expectation, which clears r0 iff σ(⟨w, x⟩) ≥ p* = (r0 − defaulted) /
(repaid − defaulted), that is iff

    ⟨w, x⟩ ≥ logit(p*):

a linear threshold on the log-odds, which agents answer as any other (p* ≤ 0: accept everyone;
p* ≥ 1: nobody is worth a loan). The strategy-aware learners shift it by the agents' reach of w
(δ‖w‖ for lazy agents, δ‖w_G‖ when only the features G can be gamed) and, like SA-OLS, certify a
point clean only strictly above that boundary:

==========================  ============================  =====================================
learner                     threshold                     learns from
==========================  ============================  =====================================
:class:`SALogistic`         logit(p*) + reach(w)          accepted *clean* points
:class:`OffsetLogistic`     logit(p*) + reach(w)          every accepted point, with an offset
                                                          column g = 1 for a point that may
                                                          have moved (as offset-ols)
:class:`NaiveLogistic`      logit(p*) (unaware)           every accepted point
==========================  ============================  =====================================

**The fit, online and in bounded memory.** Logistic regression has no finite sufficient
statistic, so no exact refit is possible without keeping every point. Each point enters one
weighted least-squares fit, as a step of iteratively reweighted least squares taken at the rule
the point was decided under: with s = ⟨β, x⟩ the rule's log-odds of the point (clipped to
±:data:`LOGIT_CLIP`), p = σ(s) and a = p(1 − p), the row √a·x with response √a·(s + (y − p)/a)
is rotated into a QR factor (:mod:`.least_squares`, O(d²) a point, stable over 10⁷ points), and w
solves it. With a rule published every round and outcomes at once, this is the online Newton
step (the extended Kalman filter of logistic regression): w ← w + H⁻¹x(y − p), H = ridge·I +
Σ a·xxᵀ. Taking s from the rule, not from the learner's current fit, makes a point's row depend
on its own decision only, so outcomes learned late and in any order leave the same fit (to
rounding), as the decision service needs. A point's row is never re-linearized: the first points
are linearized at poor rules (the warm-up's at w = 0), so the fit is not the batch maximum
likelihood; the difference fades as points accumulate (``tests/learners/test_logistic.py``
measures it against a batch fit).

**Warm-up** (all three): accept everyone for d rounds (nobody games a rule that accepts
everyone: those points are clean). **Bandit feedback**: a rejected applicant's reward is the
reward of not lending, which these learners take as a constant (it is the lender's, not the
applicant's): their r0 is the mean of the rejection rewards seen so far (the given r0 until the
first), and the rule stays a linear threshold. They never use it to fit w.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import clean_margin, reach
from ..game.game import check_number
from ..game.policies import clean_above, norm, score
from .base import Learner, LearnerKernels
from .decisions import serialized
from .inputs import check_bound
from .least_squares import add_point, new_factor, solve

#: The rule's log-odds of a point are clipped to ±LOGIT_CLIP before the point is linearized.
#: Beyond it p(1 − p) < 10⁻¹³ and the working response (y − p)/a would pass 10¹³; the clip
#: keeps each row's entries within a few million of its features, whatever the rule.
LOGIT_CLIP = 30.0
#: The rewards of a repaid and a defaulted loan when neither the learner nor its game sets them.
DEFAULT_REPAID, DEFAULT_DEFAULTED = 1.0, -1.0

# counts[...]: rounds seen, clean points fitted, points fitted that may have moved, w stale
# (0/1), rejection rewards seen (bandit)
_ROUNDS, _CLEAN, _GAMED, _STALE, _REJECTED = 0, 1, 2, 3, 4


class LogisticState(NamedTuple):
    agents: Any  # the agent model the learner believes in (compiled NamedTuple)
    r0: float
    repaid: float  # reward of a repaid loan: label 1
    defaulted: float  # reward of a defaulted loan: label 0
    shift: bool  # shift the threshold by the agents' reach
    clean_only: bool  # learn from clean points only
    offset: bool  # learn from every accepted point, with an offset column for movers
    bandwidth: float  # > 0: weight exp(−((s − c)/bandwidth)²/2) around the boundary c
    counts: np.ndarray  # int64, see _ROUNDS.. above
    fit: np.ndarray  # (k+1, k+1): QR factor of [√a·X | √a·z], k = d (+1 with the offset)
    coef: np.ndarray  # (k,): w (and the movers' offset)
    rejected: np.ndarray  # (1,): the sum of rejection rewards seen (bandit)
    row: np.ndarray  # (k,) scratch
    work: np.ndarray  # (k+1,) scratch


@njit(inline="always")
def _refit(state):
    if state.counts[_STALE]:
        solve(state.fit, state.coef)
        state.counts[_STALE] = 0


@njit(inline="always")
def _fill(beta, value):
    for i in range(beta.shape[0]):
        beta[i] = 0.0
    return value


@njit
def _policy(state, rng, beta):
    d = beta.shape[0]
    counts = state.counts
    if counts[_ROUNDS] < d:
        return _fill(beta, -1.0)  # warm-up: accept everyone
    r0 = state.r0 if counts[_REJECTED] == 0 else state.rejected[0] / counts[_REJECTED]
    # p*: the probability of repayment at which lending earns r0 in expectation.
    p = (r0 - state.defaulted) / (state.repaid - state.defaulted)
    if p <= 0.0:
        return _fill(beta, -1.0)  # every loan is worth r0: accept everyone
    if p >= 1.0:
        return _fill(beta, 1.0)  # no loan is worth r0: reject everyone
    _refit(state)
    for i in range(d):
        beta[i] = state.coef[i]
    threshold = math.log(p) - math.log1p(-p)
    if state.shift:
        threshold += reach(state.agents, beta)
    return threshold


@njit(inline="always")
def _add(state, beta, x, moved, reward):
    """One IRLS step's row for the point, linearized at the rule's log-odds of it."""
    d = x.shape[0]
    s = min(max(score(beta, x), -LOGIT_CLIP), LOGIT_CLIP)
    # σ(s) and 1 − σ(s), each without cancellation.
    e = math.exp(-abs(s))
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)
    p, q = (big, small) if s >= 0.0 else (small, big)
    a = p * q
    y = (reward - state.defaulted) / (state.repaid - state.defaulted)
    y = min(max(y, 0.0), 1.0)
    m = 1.0
    if state.bandwidth > 0.0 and norm(beta) > 0.0:  # (an accept-all rule's s = 0 is no fit's)
        p_star = (state.r0 - state.defaulted) / (state.repaid - state.defaulted)
        c = math.log(p_star) - math.log1p(-p_star) if 0.0 < p_star < 1.0 else 0.0
        u = (s - c) / state.bandwidth
        m = math.exp(-0.5 * u * u)
    if m * a == 0.0:
        return
    root = math.sqrt(a * m)
    add_point_z = root * s + (y - p) * root / a
    row = state.row
    for i in range(d):
        row[i] = root * x[i]
    if state.offset:
        row[d] = root if moved else 0.0
    add_point(state.fit, row, add_point_z, state.work)
    state.counts[_STALE] = 1


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    counts = state.counts
    used = False
    if observed:
        if accepted:
            # Strictly above the boundary by the agents' margin: no mover lands there (a rule
            # that accepts everyone makes every point clean).
            clean = clean_above(beta, threshold, x, clean_margin(state.agents, beta))
            if clean or not state.clean_only:
                _add(state, beta, x, not clean, reward)
                counts[_CLEAN if clean else _GAMED] += 1
                # "used" is learned as unmoved: the engine's count of gamed points learned as
                # clean stays a bookkeeping check for the offset variant.
                used = clean or not state.offset
        else:  # bandit: the reward of not lending
            state.rejected[0] += reward
            counts[_REJECTED] += 1
            used = True
    counts[_ROUNDS] += 1
    return used


@njit
def _estimate(state, out):
    # w is on the log-odds scale, not an estimate of θ1 − θ0 (see coefficients()).
    return False


KERNELS = LearnerKernels(LogisticState, _policy, _update, _estimate)


class _Logistic(Learner):
    kernels = KERNELS
    _shift: bool
    _clean_only: bool
    _offset: bool

    def __init__(self, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None,
                 repaid: float | None = None, defaulted: float | None = None,
                 ridge: float = 1.0, bandwidth: float | None = None) -> None:
        self.bandwidth = bandwidth
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents
        self.repaid = repaid
        self.defaulted = defaulted
        self.ridge = ridge

    def _rewards(self) -> tuple[float, float]:
        """(repaid, defaulted) as numbers, or ``ValueError`` in one line."""
        bound = type(self).input_bound
        given = (DEFAULT_REPAID if self.repaid is None else self.repaid,
                 DEFAULT_DEFAULTED if self.defaulted is None else self.defaulted)
        repaid, defaulted = (check_bound(name, check_number(name, value), bound)
                             for name, value in zip(("repaid", "defaulted"), given, strict=True))
        if not repaid > defaulted:
            raise ValueError(f"repaid must be larger than defaulted (the reward of a repaid "
                             f"loan above a defaulted one's), got repaid={given[0]!r} and "
                             f"defaulted={given[1]!r}")
        return repaid, defaulted

    def _ridge(self) -> float:
        return check_bound("ridge", check_number("ridge", self.ridge, low=0.0),
                           type(self).input_bound)

    def _check_params(self) -> None:
        super()._check_params()
        self._rewards()
        self._ridge()

    def milestones(self, d: int) -> list[int]:
        return [d]

    def _init_state(self, d: int) -> LogisticState:
        if self.r0 is None:
            raise ValueError(f"{self.name} needs r0 (taken from the game by bind)")
        repaid, defaulted = self._rewards()
        k = d + self._offset
        fit = new_factor(k)
        # The prior N(0, I/ridge) as k rows √ridge·e_i with response 0.
        fit[np.arange(k), np.arange(k)] = math.sqrt(self._ridge())
        return LogisticState(
            agents=self._belief(), r0=float(self.r0), repaid=repaid, defaulted=defaulted,
            shift=self._shift, clean_only=self._clean_only, offset=self._offset,
            bandwidth=0.0 if self.bandwidth is None else float(self.bandwidth),
            counts=np.zeros(5, dtype=np.int64), fit=fit, coef=np.zeros(k),
            rejected=np.zeros(1), row=np.zeros(k), work=np.zeros(k + 1))

    @serialized
    def coefficients(self) -> np.ndarray | None:
        """The fitted log-odds coefficients w (for :class:`OffsetLogistic`, then the movers'
        offset), or None before the first point is fitted: σ(⟨w, x⟩) is the modelled
        probability of repayment. (``estimate()`` is None: w is no estimate of θ1 − θ0.)"""
        self._require_reset()
        counts = self._state.counts
        if counts[_CLEAN] + counts[_GAMED] == 0:
            return None
        _refit(self._state)
        return self._state.coef.copy()


class SALogistic(_Logistic):
    """Strategy-aware logistic regression: SA-OLS's protocol with a logistic model.

    Accepts iff ⟨w, x'⟩ ≥ logit(p*) + reach(w), p* = (r0 − defaulted) / (repaid − defaulted),
    and refits w only on accepted points strictly above that boundary, which lazy agents cannot
    have moved. See the module docstring for the labels, the online fit and bandit feedback.
    No theorem: the paper's analysis is for a linear reward.

    Parameters
    ----------
    delta : float, optional
        The agents' budget as the learner believes it (None: the game's).
    r0 : float, optional
        Reward of rejecting (None: the game's).
    feedback : {"apple", "bandit"}, optional
        Feedback mode (None: the game's). Under bandit feedback r0 becomes the mean of the
        rejection rewards seen (module docstring).
    agents : agent model, optional
        How the learner believes agents respond (None: the game's; lazy agents without one).
    repaid, defaulted : float, optional
        The rewards of a repaid and of a defaulted loan, repaid > defaulted (None: the game's,
        if it declares them, else 1 and −1). A reward between them is a fractional label; one
        beyond them counts as the nearer.
    ridge : float
        Precision of the Gaussian prior N(0, I/ridge) on w (an L2 penalty; 0: none, and
        directions without data are left at 0).

    Examples
    --------
    >>> learner = SALogistic(delta=0.1, r0=0.0, feedback="apple", repaid=0.2, defaulted=-1.0)
    >>> learner = learner.reset(d=2, rng=0)
    >>> for x, outcome in (([1.0, 0.5], 0.2), ([1.0, -0.5], -1.0)):  # the warm-up: accept
    ...     used = learner.update(x, learner.act(x), outcome)
    >>> learner.coefficients().round(3).tolist()   # one Newton step from w = 0, ridge 1
    [0.0, 0.444]
    >>> rule = learner.policy()   # logit(5/6) + 0.1·‖w‖: lend iff P(repaid) clears 5/6
    >>> round(rule.threshold, 3), learner.act([1.0, 0.8])
    (1.654, False)
    """
    name = "sa-logistic"
    _shift = True
    _clean_only = True
    _offset = False


class OffsetLogistic(_Logistic):
    """SA-Logistic's shifted rule, refit on clean points and on gamed ones with a
    fitted offset (offset-ols's idea on the log-odds scale).

    Every accepted point enters the fit as [x', g], g = 1 for a point not certified clean (it
    may have moved onto the boundary), 0 otherwise: a mover's log-odds are those of where it
    landed less its move times ⟨w, u⟩, and the coefficient of g absorbs their mean, as in
    :class:`~strategic_apple_tasting.learners.OffsetOLS` (unbiased only where a mover's distance
    is not correlated with where along the boundary it lands; on the logistic scale also only to
    first order in the move). ``update`` returns True for points learned as unmoved only.

    Parameters
    ----------
    delta, r0, feedback, agents, repaid, defaulted, ridge
        As for :class:`SALogistic`.
    Examples
    --------
    >>> learner = OffsetLogistic(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)
    >>> learner.update([1.0, 0.5], learner.act([1.0, 0.5]), 1.0)   # warm-up: clean
    True
    >>> learner.coefficients().shape   # w, then the movers' offset
    (3,)
    """
    name = "offset-logistic"
    _shift = True
    _clean_only = False
    _offset = True


class NaiveLogistic(_Logistic):
    """Logistic regression unaware of gaming: accept iff ⟨w, x'⟩ ≥ logit(p*), refit
    on every accepted point. What a lender's scorecard does when it ignores gaming.

    Parameters
    ----------
    delta, r0, feedback, agents, repaid, defaulted, ridge
        As for :class:`SALogistic` (``delta`` and ``agents`` are unused: it ignores gaming).
    Examples
    --------
    >>> learner = NaiveLogistic(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)
    >>> learner.update([1.0, 0.5], learner.act([1.0, 0.5]), -1.0)
    True
    """
    name = "naive-logistic"
    strategy_aware = False
    _shift = False
    _clean_only = False
    _offset = False
