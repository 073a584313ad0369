"""Logistic learners for real outcomes: SA-OLS's protocol with a logistic model.

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

**Each loan's own break-even.** Where the rewards depend on the loan (its amount, rate, loss
given default), one p* for all loans is wrong: a loan of amount a at rate ρ losing a share l
of a default breaks even at p*ᵢ = (r0 + a·l) / (a·ρ + a·l), its own. A data game of such a
book carries logit(p*ᵢ) as a feature of each row, not gameable
(:class:`~strategic_apple_tasting.game.DataContexts`'s ``break_even_column``); with
``break_even_column`` set (by the game, or by hand) the rule weighs that column −1 and fits
w on the other columns only:

    accept iff ⟨w, x'⟩ − logit(p*ᵢ) ≥ reach(w), that is σ(⟨w, x'⟩) ≥ p*ᵢ (shifted),

still a linear threshold that agents answer as any other; the label of a loan is then 1 iff
it earned more than r0 (its two rewards straddle r0, or its column decides it alone).

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
everyone: those points are clean).

**No lock-out** (all three). Under apple tasting a rule that accepts nobody learns nothing
more: a fit that puts every applicant's P(repaid) below p* (a ridge-held fit after a few
warm-up loans can) would reject everyone for ever, on a book where lending pays. So once the
learner's own rule has granted no loan for ``patience`` rounds in a row, each round it
*explores* with probability ``explore``: it publishes the accept-all rule (as in the
warm-up, nobody games it, so the loan it grants is clean and its outcome is learned by every
variant), each such round counted (:attr:`_Logistic.explored`) with its propensity, the
share ``explore``. It stops as soon as its own rule grants a loan again. The cost is bounded
in the paper's terms: an exploring round earns at least the worst loan's reward where the
rule earned r0, so exploration adds at most ``explore`` · (r0 − defaulted) per round spent
locked out to the strategic regret, and nothing on a book where the rule keeps lending (no
coin is drawn then: those runs are the same to the bit as without it). ``explore = 0``
turns it off. **Bandit feedback**: a rejected applicant's reward is the
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
from ..game.policies import clean_above, score
from ._invariants import (
    MOST_ROUNDS,
    cached,
    count,
    finite,
    fixed,
    flag,
    upper_triangular,
    within,
)
from .base import Learner, LearnerKernels, serialized
from .binding import compiled_belief_of
from .inputs import check_bound
from .least_squares import add_point, new_factor, solve
from .tags import LearnerTags

#: The log-odds of a point are clipped to ±LOGIT_CLIP before the point is linearized. Beyond
#: it p(1 − p) < 10⁻¹³ and the working response (y − p)/a would pass 10¹³; the clip keeps each
#: row's entries within a few million of its features, whatever the fit.
LOGIT_CLIP = 30.0
#: The rewards of a repaid and a defaulted loan when neither the learner nor its game sets them.
DEFAULT_REPAID, DEFAULT_DEFAULTED = 1.0, -1.0
#: Points kept for the exact refit, per feature, when ``batch_points`` is None; the most a
#: learner may keep.
BATCH_PER_FEATURE, MAX_BATCH_POINTS = 5, 100_000
#: Newton steps in one refit at most; a refit ends sooner once a step moves no coefficient by
#: more than REFIT_TOL times (1 + the largest).
REFIT_STEPS, REFIT_TOL = 50, 1e-10

#: Exploration's defaults: the share of rounds that explore once locked out, and how many
#: rounds without a loan of the learner's own rule count as locked out (module docstring).
#: A lender can defend both: a locked-out scorecard learns from one loan in twenty at most,
#: and only after turning a hundred applicants away in a row.
EXPLORE, PATIENCE = 0.05, 100
#: The largest ``patience`` accepted (rounds).
MAX_PATIENCE = 10**9

# counts[...]: rounds seen, clean points fitted, points fitted that may have moved, w stale
# (0/1), rejection rewards seen (bandit), points kept, points learned, next refit, rounds
# since the own rule last granted a loan, rounds explored
(_ROUNDS, _CLEAN, _GAMED, _STALE, _REJECTED, _KEPT, _LEARNED, _NEXT, _IDLE,
 _EXPLORED) = range(10)


class LogisticState(NamedTuple):
    agents: Any  # the agent model the learner believes in (compiled NamedTuple)
    r0: float
    repaid: float  # reward of a repaid loan: label 1
    defaulted: float  # reward of a defaulted loan: label 0
    shift: bool  # shift the threshold by the agents' reach
    clean_only: bool  # learn from clean points only
    offset: bool  # learn from every accepted point, with an offset column for movers
    own: int  # the column of each loan's own break-even log-odds (-1: one for all, p*)
    explore: float  # the probability of exploring a round once locked out
    patience: int  # rounds without a loan of the own rule before it counts as locked out
    counts: np.ndarray  # int64, see _ROUNDS.. above
    fit: np.ndarray  # (k+1, k+1): QR factor of the prior and every learned row, k = d (+1)
    late: np.ndarray  # (k+1, k+1): QR factor of the prior and the rows learned once kept is full
    trial: np.ndarray  # (k+1, k+1) scratch of a refit
    kept: np.ndarray  # (B, k+1): [u, y] of the first B points learned (u = x, or [x, g])
    coef: np.ndarray  # (k,): w (and the movers' offset)
    target: np.ndarray  # (k,) scratch of a refit: the Newton step's solution
    rejected: np.ndarray  # (1,): the sum of rejection rewards seen (bandit)
    row: np.ndarray  # (k,) scratch
    work: np.ndarray  # (k+1,) scratch


@njit(inline="always")
def _current(state):
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
    own = state.own
    threshold = 0.0  # each loan's own break-even is in its column, weighted −1
    if own < 0:
        r0 = state.r0 if counts[_REJECTED] == 0 else state.rejected[0] / counts[_REJECTED]
        # p*: the probability of repayment at which lending earns r0 in expectation.
        p = (r0 - state.defaulted) / (state.repaid - state.defaulted)
        if p <= 0.0:
            return _fill(beta, -1.0)  # every loan is worth r0: accept everyone
        if p >= 1.0:
            return _fill(beta, 1.0)  # no loan is worth r0: reject everyone
        threshold = math.log(p) - math.log1p(-p)
    # Locked out: explore. The coin is drawn only then, so a learner that keeps lending
    # draws nothing and runs as it would without exploration.
    if counts[_IDLE] >= state.patience and state.explore > 0.0:
        if rng.random() < state.explore:
            counts[_EXPLORED] += 1
            return _fill(beta, -1.0)
    _current(state)
    for i in range(d):
        beta[i] = state.coef[i]
    if own >= 0:
        beta[own] = -1.0
    if state.shift:
        threshold += reach(state.agents, beta)
    return threshold


@njit(inline="always")
def _weigh(row, s, y):
    """Scale the features u in ``row`` into the point's IRLS row linearized at log-odds s:
    √a·u, a = p(1 − p), p = σ(s); returns its response √a·s + (y − p)/√a."""
    s = min(max(s, -LOGIT_CLIP), LOGIT_CLIP)
    # σ(s) and 1 − σ(s), each without cancellation.
    e = math.exp(-abs(s))
    big, small = 1.0 / (1.0 + e), e / (1.0 + e)
    p, q = (big, small) if s >= 0.0 else (small, big)
    root = math.sqrt(p * q)
    for i in range(row.shape[0]):
        row[i] *= root
    return root * s + (y - p) / root


@njit(inline="always")
def _copy(source, dest):
    # Element loops, not slice assignment: the engine's loop runs without the NRT.
    for i in range(source.shape[0]):
        for j in range(source.shape[1]):
            dest[i, j] = source[i, j]


@njit
def _linearize(state, coef):
    """trial = late and every kept point's row linearized at ``coef``."""
    _copy(state.late, state.trial)
    kept, row = state.kept, state.row
    k = row.shape[0]
    for j in range(state.counts[_KEPT]):
        s = 0.0
        for i in range(k):
            row[i] = kept[j, i]
            s += coef[i] * kept[j, i]
        add_point(state.trial, row, _weigh(row, s, kept[j, k]), state.work)


@njit
def _objective(state, coef):
    """The negative penalized log-likelihood of the kept points at ``coef``, with the late rows
    (and the prior) as the quadratic their factor holds: ½‖R·coef − r‖²."""
    kept, late = state.kept, state.late
    k = coef.shape[0]
    total = 0.0
    for j in range(state.counts[_KEPT]):
        s = 0.0
        for i in range(k):
            s += coef[i] * kept[j, i]
        total += max(s, 0.0) + math.log1p(math.exp(-abs(s))) - kept[j, k] * s
    for i in range(k):
        r = -late[i, k]
        for j in range(i, k):
            r += late[i, j] * coef[j]
        total += 0.5 * r * r
    return total


@njit
def _refit_kept(state):
    """Newton's method with backtracking on the kept points' likelihood (the late rows as
    their quadratic), from the current fit; then fit = late and the kept rows linearized at
    the result."""
    _current(state)
    coef, target, row = state.coef, state.target, state.row
    k = coef.shape[0]
    old = _objective(state, coef)
    for _ in range(REFIT_STEPS):
        _linearize(state, coef)
        solve(state.trial, target)
        t = 1.0
        while True:  # the step toward the target, halved until the objective does not rise
            for i in range(k):
                row[i] = coef[i] + t * (target[i] - coef[i])
            new = _objective(state, row)
            if new <= old:  # (False for NaN: halve)
                break
            t *= 0.5
            if t < 1e-10:
                break
        if t < 1e-10:
            break
        largest = 0.0
        change = 0.0
        for i in range(k):
            largest = max(largest, abs(coef[i]))
            change = max(change, abs(row[i] - coef[i]))
            coef[i] = row[i]
        old = new
        if change <= REFIT_TOL * (1.0 + largest):
            break
    _linearize(state, coef)
    _copy(state.trial, state.fit)
    state.counts[_STALE] = 1


@njit(inline="always")
def _add(state, beta, x, moved, reward):
    """Learn one point: its row, linearized at the rule's log-odds of it, enters the fit (and
    the late rows, once B points are kept); the first B points are kept, and refit exactly each
    time the count of points learned doubles."""
    d = x.shape[0]
    counts, row, kept = state.counts, state.row, state.kept
    k = row.shape[0]
    for i in range(d):
        row[i] = x[i]
    if state.offset:
        row[d] = 1.0 if moved else 0.0
    # The point's log-odds under the rule it met: ⟨w, x⟩, without the break-even column's
    # term when each loan has its own (its weight is fixed, not fitted).
    s = score(beta, x)
    own = state.own
    if own >= 0:
        s -= beta[own] * x[own]
        row[own] = 0.0
        # A loan's two rewards straddle r0 (else its column decides it alone): repaid iff
        # it earned more than rejecting.
        y = 1.0 if reward > state.r0 else 0.0
    else:
        y = (reward - state.defaulted) / (state.repaid - state.defaulted)
        y = min(max(y, 0.0), 1.0)
    late = counts[_KEPT] >= kept.shape[0]
    if not late:
        for i in range(k):
            kept[counts[_KEPT], i] = row[i]
        kept[counts[_KEPT], k] = y
        counts[_KEPT] += 1
    z = _weigh(row, s, y)
    add_point(state.fit, row, z, state.work)
    if late:
        add_point(state.late, row, z, state.work)
    counts[_STALE] = 1
    counts[_LEARNED] += 1
    if kept.shape[0] > 0 and counts[_LEARNED] >= counts[_NEXT]:
        counts[_NEXT] *= 2
        _refit_kept(state)


@njit(inline="always")
def _accepts_everyone(beta, threshold):
    if threshold >= 0.0:
        return False
    for i in range(beta.shape[0]):
        if beta[i] != 0.0:
            return False
    return True


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    counts = state.counts
    # A loan granted by the learner's own rule ends a lock-out; one granted by a rule that
    # accepts everyone (the warm-up, an exploring round) does not. Told by the rule itself,
    # not by a flag the policy sets: with delayed outcomes the round updated is not the
    # round last published.
    if accepted and not _accepts_everyone(beta, threshold):
        counts[_IDLE] = 0
    elif counts[_ROUNDS] >= beta.shape[0]:
        counts[_IDLE] += 1
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


def check_state(state: LogisticState, template: LogisticState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: the belief as
    the parameters make it, counts in range (the kept points inside ``kept``, which the
    kernels index by that count), the factors finite and triangular, the kept points finite
    with labels in [0, 1], w their fit when the state says it is current."""
    fixed(state.agents, template.agents, f"{where}.agents")
    counts = state.counts
    at = f"{where}.counts"
    rounds = count(counts[_ROUNDS], f"{at}[{_ROUNDS}] (rounds)", 0, MOST_ROUNDS)
    clean = count(counts[_CLEAN], f"{at}[{_CLEAN}] (clean points)", 0, rounds)
    gamed = count(counts[_GAMED], f"{at}[{_GAMED}] (gamed points)", 0, rounds - clean)
    flag(counts[_STALE], f"{at}[{_STALE}] (w stale)")
    count(counts[_REJECTED], f"{at}[{_REJECTED}] (rejection rewards)", 0,
          rounds - clean - gamed)
    # Every point learned is a clean or a gamed one; the first B of them are kept.
    learned = count(counts[_LEARNED], f"{at}[{_LEARNED}] (points learned)", clean + gamed,
                    clean + gamed)
    kept = count(counts[_KEPT], f"{at}[{_KEPT}] (points kept)", min(learned, len(state.kept)),
                 min(learned, len(state.kept)))
    # The refit schedule doubles from d: kept below 2^62, it cannot overflow.
    count(counts[_NEXT], f"{at}[{_NEXT}] (next refit)", int(template.counts[_NEXT]),
          MOST_ROUNDS)
    count(counts[_IDLE], f"{at}[{_IDLE}] (rounds without a loan)", 0, rounds)
    count(counts[_EXPLORED], f"{at}[{_EXPLORED}] (rounds explored)", 0, rounds + 1)
    for name in ("fit", "late"):
        upper_triangular(getattr(state, name), f"{where}.{name}")
    finite(state.kept[:kept], f"{where}.kept")
    within(state.kept[:kept, -1], f"{where}.kept[:, -1] (labels)", 0.0, 1.0)
    finite(state.coef, f"{where}.coef")
    finite(state.rejected, f"{where}.rejected")
    if not counts[_STALE]:
        coef = np.zeros_like(state.coef)
        solve(state.fit, coef)
        cached(state.coef, coef, f"{where}.coef", f"the fit of {where}.fit")


KERNELS = LearnerKernels(LogisticState, _policy, _update, _estimate, check=check_state)


class _Logistic(Learner, abstract=True):
    kernels = KERNELS
    # Which points are kept for the exact refit depends on the order outcomes arrive in.
    tags = LearnerTags(outcomes_commute=False)
    _shift: bool
    _clean_only: bool
    _offset: bool

    def __init__(self, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None,
                 repaid: float | None = None, defaulted: float | None = None,
                 ridge: float = 1.0, batch_points: int | None = None,
                 explore: float = EXPLORE, patience: int = PATIENCE,
                 break_even_column: int | None = None) -> None:
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents
        self.repaid = repaid
        self.defaulted = defaulted
        self.ridge = ridge
        self.batch_points = batch_points
        self.explore = explore
        self.patience = patience
        self.break_even_column = break_even_column

    def _rewards(self) -> tuple[float, float]:
        """(repaid, defaulted) as numbers, or ``ValueError`` in one line."""
        bound = self.tags().input_bound
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
                           self.tags().input_bound)

    def _batch_points(self, d: int) -> int:
        if self.batch_points is None:
            return BATCH_PER_FEATURE * d
        if not (isinstance(self.batch_points, int | np.integer)
                and not isinstance(self.batch_points, bool)
                and 0 <= self.batch_points <= MAX_BATCH_POINTS):
            raise ValueError(f"batch_points must be an integer from 0 to {MAX_BATCH_POINTS:,} "
                             f"or None ({BATCH_PER_FEATURE}·d), got {self.batch_points!r}")
        return int(self.batch_points)

    def _patience(self) -> int:
        if not (isinstance(self.patience, int | np.integer) and not isinstance(self.patience, bool)
                and 1 <= self.patience <= MAX_PATIENCE):
            raise ValueError(f"patience must be an integer from 1 to 10^9 (rounds without a "
                             f"loan before the learner explores), got {self.patience!r}")
        return int(self.patience)

    def _own(self, d: int | None) -> int:
        """The break-even column as the kernels read it (−1: none), checked against d."""
        k = self.break_even_column
        if k is None:
            return -1
        if not (isinstance(k, int | np.integer) and not isinstance(k, bool) and k >= 0
                and (d is None or k < d)):
            top = "d − 1" if d is None else f"{d - 1}"
            raise ValueError(f"break_even_column must be a feature's index from 0 to {top} "
                             f"or None, got {k!r}")
        return int(k)

    def _check_params(self) -> None:
        super()._check_params()
        self._own(None)
        self._rewards()
        self._ridge()
        self._batch_points(1)
        check_number("explore", self.explore, 0.0, 1.0)
        self._patience()

    def milestones(self, d: int) -> list[int]:
        return [d]

    def _init_state(self, d: int) -> LogisticState:
        if self.r0 is None:
            raise ValueError(f"{self.name} needs r0 (taken from the game by bind)")
        repaid, defaulted = self._rewards()
        k = d + self._offset
        prior = new_factor(k)
        # The prior N(0, I/ridge) as k rows √ridge·e_i with response 0.
        prior[np.arange(k), np.arange(k)] = math.sqrt(self._ridge())
        counts = np.zeros(10, dtype=np.int64)
        counts[_NEXT] = d  # the first refit: at the warm-up's end
        return LogisticState(
            agents=compiled_belief_of(self), r0=float(self.r0), repaid=repaid, defaulted=defaulted,
            shift=self._shift, clean_only=self._clean_only, offset=self._offset,
            own=self._own(d), explore=float(self.explore), patience=self._patience(), counts=counts,
            fit=prior, late=prior.copy(), trial=new_factor(k),
            kept=np.zeros((self._batch_points(d), k + 1)), coef=np.zeros(k),
            target=np.zeros(k), rejected=np.zeros(1), row=np.zeros(k), work=np.zeros(k + 1))

    @property
    @serialized
    def explored(self) -> int:
        """Rounds this learner explored (published accept-all because its own rule had
        granted no loan for ``patience`` rounds), each with propensity ``explore``."""
        return int(self.state.counts[_EXPLORED])

    @serialized
    def coefficients(self) -> np.ndarray | None:
        """The fitted log-odds coefficients w (for :class:`OffsetLogistic`, then the movers'
        offset), or None before the first point is fitted: σ(⟨w, x⟩) is the modelled
        probability of repayment. (``estimate()`` is None: w is no estimate of θ1 − θ0.)"""
        state = self.state
        counts = state.counts
        if counts[_CLEAN] + counts[_GAMED] == 0:
            return None
        _current(state)
        return state.coef.copy()


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
    batch_points : int, optional
        How many of the first points learned are kept and refit exactly (Newton's method on
        their likelihood, later points as their quadratic) each time the count of points
        learned doubles; None: 5·d, 0: the online fit alone. At most 100,000.
    explore : float
        In [0, 1]: once locked out, the probability that a round explores (publishes the
        accept-all rule; module docstring). 0: never.
    patience : int
        Rounds after the warm-up without a loan granted by the learner's own rule after which
        it counts as locked out and explores (1 to 10^9).
    break_even_column : int, optional
        The feature holding each loan's own break-even log-odds (None: the game's, if its
        loans each have their own; else one p* for all, from ``repaid`` and ``defaulted``).
        Its weight in the rule is −1, never fitted: the learner accepts iff ⟨w, x'⟩ clears
        the loan's own break-even (+ the shift), and a loan counts as repaid iff it earned
        more than r0 (module docstring).

    Examples
    --------
    >>> learner = SALogistic(delta=0.1, r0=0.0, feedback="apple", repaid=0.2, defaulted=-1.0)
    >>> learner = learner.reset(d=2, rng=0)
    >>> for x, outcome in (([1.0, 0.5], 0.2), ([1.0, -0.5], -1.0)):  # the warm-up: accept
    ...     used = learner.update(x, learner.act(x), outcome)
    >>> learner.coefficients().round(3).tolist()   # their penalized maximum likelihood
    [0.0, 0.445]
    >>> rule = learner.policy()   # logit(5/6) + 0.1·‖w‖: lend iff P(repaid) clears 5/6
    >>> round(rule.threshold, 3), learner.act([1.0, 0.8])
    (1.654, False)
    """
    name = "sa-logistic"
    # Checked with exact refits, and with the online fit alone.
    tags = LearnerTags(outcomes_commute=False, check_with=({}, {"batch_points": 0}))
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
    delta, r0, feedback, agents, repaid, defaulted, ridge, batch_points, explore, patience,
    break_even_column
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
    delta, r0, feedback, agents, repaid, defaulted, ridge, batch_points, explore, patience,
    break_even_column
        As for :class:`SALogistic` (``delta`` and ``agents`` are unused: it ignores gaming).
    Examples
    --------
    >>> learner = NaiveLogistic(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)
    >>> learner.update([1.0, 0.5], learner.act([1.0, 0.5]), -1.0)
    True
    """
    name = "naive-logistic"
    tags = LearnerTags(outcomes_commute=False, strategy_aware=False)
    _shift = False
    _clean_only = False
    _offset = False
