"""The agents' budget δ estimated from the applicants.

The principal sees every applicant's reported x′, rejected ones included, and knows the rule
(β, c) each was decided under. Write each applicant's distance to that boundary in units of
the budget, v = (⟨β, x′⟩ − c) / reach₁(β), where reach₁(β) is the score one unit of budget
buys (‖β‖, ‖β_G‖ under subset gaming, sqrt(βᵀA⁻¹β) under an ellipsoidal cost). Lazy movers
land exactly on the boundary: a **pile** at v = 0 (to :data:`LANDING`, either side), and a
**hole** on [−δ, 0) where they would have been; with a truthful fraction τ the hole keeps a
share τ of its applicants. This is the shape the bunching literature reads at a notch (Saez
2010; Kleven and Waseem 2013), and here the principal knows where the notch is.

The estimator is a profile likelihood of the band's width. For a candidate δ, let C(δ) be the
number of applicants whose *true* v lies in [−δ, 0): the counterfactual, from a quadratic fit
of the histogram of v on both sides of the band ([−δ − w, −δ) and (0, w), where nobody lands),
summed over the band. The P applicants of the pile and the H(δ) observed in [−δ, 0) are, given
the positions of everyone else, a Poisson split of those C(δ): the pile with rate (1 − τ)·C(δ),
the hole with τ·C(δ); the positions outside the band do not depend on (δ, τ). With τ profiled
out (τ̂ = H / (P + H)) the log-likelihood is

    ℓ(δ) = P·log C(δ) + P·log(1 − τ̂) + H·log τ̂,

maximized over a grid of bin edges. Without truthful applicants ℓ rises with δ until the first
applicant below the boundary that did not move, and then falls by about log P: the estimate is
the hole's edge. Its error is that of an edge: the gap to the first unmoved applicant, which is
exponential with rate λ = N·f(−δ) (the density of applicants there), and ℓ falls by λ·(δ̂ − δ)
below δ̂. So the interval {δ : ℓ(δ̂) − ℓ(δ) ≤ log(1/(1 − level))} over the grid of bin edges,
widened by one bin each way (the edge lies inside a bin, next to an edge of the set), covers δ
with probability ``level`` in the limit (tested at T = 10⁵, d = 5:
``tests/learners/test_budget.py``).

That calibration assumes a density of distances. On a data set's rows redrawn T times, or on
scores that sit on a grid, the distances are **atoms**: a finite set of values, each seen about
m times. The unmoved applicants then leave a gap below the hole's edge that no horizon closes
(δ is identified only up to the gap between the last atom inside the hole, which moved and is
never seen, and the first outside it), and ℓ, counting each atom m times, overstates the
evidence m-fold: the interval came out a bin wide just below the first unmoved atom and missed
δ (German credit and FICO at δ = 0.25: [0.253, 0.2545] and [0.2645, 0.266]). The histogram's
dispersion D̂ (≈ 1 for a density, ≈ m + 1 for atoms; :func:`_dispersion`) detects them, and the
set is then read at κ·D̂, a quasi-likelihood's threshold, and reaches at least as far below the
edge as the gaps between the atoms beyond it say δ may lie (:func:`_gap_reach`): the interval
reaches down across the gap (``benchmarks/budget_coverage.py``). The estimate itself is
unchanged: the atoms' edge, the top of what the data allow.
With a truthful fraction the same profile finds where the density of unmoved applicants steps
from τ·f up to f; with heterogeneous budgets the hole fades out and there is no edge (the
claims table says how close the estimate comes).

Without a pile nobody moved: the estimate is 0, and the interval ends where the unmoved
applicants seen in [−δ, 0) exceed κ.

**A learner's δ** (``delta="estimate"``, or ``"estimate:0.8"`` to cap it at 0.8; default cap
:data:`DELTA_MAX`). Every strategy-aware learner reads its agents' budget only through the
agent model it believes in, held as a :class:`BudgetBelief` (its shift is the belief's reach on
β); ``delta="estimate"`` makes that belief estimate: the learner's own agent model at budget 1
(``base``), times the δ in force. Each decided applicant is observed (its distance to the rule
it was decided under, binned) before the learner's own update, by one compiled function that
both of the engine's paths and the decision API call (:func:`observe`); the estimate is
refreshed after each observation up to the 1024th, then after every doubling. The δ in force
starts at the cap (no evidence yet: the cautious end, since a shift too small accepts gamed
applicants while one too large only costs a band of honest ones). Once movers are seen it is
the estimate rounded up to its bin's far edge: not the interval's upper end, because with few
movers a truthful share leaves the likelihood flat up to the cap, and a learner held there
rejects almost everyone for hundreds of rounds (measured: SA-OLS at d = 5, δ = 0.1 paid 27 in
regret against 1.2 with the true δ, and 3.7 with the estimate; 6 seeds, T = 10⁵). Without a
pile the estimate is 0 and the δ in force is the interval's upper end: where the applicants
seen unmoved in [−δ, 0) become too many (more than κ = log(1/(1 − level))) for a budget δ that
nobody used.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba.extending import overload

from .._jit import njit, state_class
from ..game.agents import (
    CLEAN_MARGIN,
    REACH,
    LazyBestResponse,
    clean_margin,
    compiled_agents,
    reach,
)
from ..game.policies import score

#: How far from the boundary (in budget units, either side) a point still counts as having
#: landed on it: a mover is pushed by a few ulps to be accepted (DESIGN §2, "Floating point"),
#: and its score recomputed on another float path may come out a rounding error below.
LANDING = 1e-9
#: Bins per unit of budget in the histogram of distances.
BINS_PER_UNIT = 2000
_H = 1.0 / BINS_PER_UNIT
#: A learner's default cap on δ (``delta="estimate"``): the unit ball's radius.
DELTA_MAX = 1.0
#: Width on each side of the band over which the counterfactual density is fitted.
WINDOW = 0.25
#: The interval's coverage.
LEVEL = 0.95
#: Degree of the counterfactual density's fit.
DEGREE = 1
#: The histogram's dispersion (:func:`_dispersion`) above which the distances are read as
#: atoms and the interval is widened by it. A continuous density gives 1 with sd 0.04–0.07
#: (measured on normal draws, 30 to 10⁷ applicants: the largest of 200 draws was 1.23), so
#: 1.5 is not reached by chance and the continuous interval is the same as before; atoms seen
#: once each on average (m = 1) give 2 (1.6 at the least of 50 draws). Below it the atoms are
#: seen about 0.5 times each or less, and the unwidened interval still covers at ≥ 90% (the
#: gap's rate is then λ·(1 − e^−m)/m ≥ λ/1.27).
ATOMS = 1.5
#: Observations before a learner's first estimate.
FIRST_REFRESH = 1
#: Until this many observations a learner refreshes its estimate after each one, then after
#: every doubling.
EVERY_ROUND = 1024


class BudgetEstimate(NamedTuple):
    """An estimate of the agents' budget with its interval.

    ``delta`` the estimate, ``low`` and ``high`` its interval at ``level``; ``pile`` the
    applicants found on the boundary, ``hole`` those observed inside [−δ̂, 0), ``truthful``
    the share of the band's applicants that did not move (τ̂), ``n`` the applicants seen;
    ``dispersion`` how much the distances repeat (1: a continuous density; about m + 1 when
    each distinct distance is seen m times, as when a data set's rows are redrawn or its
    scores sit on a grid), the factor the interval's likelihood threshold was widened by.
    """

    delta: float
    low: float
    high: float
    level: float
    pile: int
    hole: int
    truthful: float
    n: int
    dispersion: float = 1.0


def boundary_distances(beta: np.ndarray, threshold: np.ndarray, x_obs: np.ndarray,
                       reach_unit: np.ndarray) -> np.ndarray:
    """Each applicant's distance v = (⟨β_t, x′_t⟩ − c_t) / reach₁(β_t) to the boundary of the
    rule it was decided under, in units of budget (rows of ``beta`` and ``x_obs``, entries of
    ``threshold`` and ``reach_unit``; a rule with reach₁ = 0 cannot be gamed and gives NaN)."""
    beta = np.atleast_2d(np.asarray(beta, dtype=float))
    x_obs = np.atleast_2d(np.asarray(x_obs, dtype=float))
    score = np.einsum("ij,ij->i", beta, x_obs) if len(beta) == len(x_obs) else x_obs @ beta[0]
    reach = np.asarray(reach_unit, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(reach > 0, (score - np.asarray(threshold, dtype=float)) / reach, np.nan)


def _check(name: str, value: float, low: float, high: float = math.inf) -> float:
    if not (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and low < value < high):
        raise ValueError(f"{name} must be a number in ({low:g}, {high:g}), got {value!r}")
    return float(value)


class BudgetBelief(NamedTuple):
    """A strategy-aware learner's belief about its agents' budget: told (:meth:`known`) or
    estimated from the applicants as it plays (:meth:`new`, ``delta="estimate"``).

    One compiled type for both, so a learner's kernels and the engine's loop are compiled once
    whether it is told δ or estimates it: a told belief is the agent model itself (``base``, at
    its budget) with an empty histogram, and its reach is the model's; an estimating one holds
    the believed model at budget 1 (``base``) and the estimator, and its reach is the δ in
    force times the model's. ``delta`` is the told budget or the estimate's cap (where the
    learner starts); ``current`` holds the δ in force, the estimate, its interval, τ̂ and the
    hole's count; ``below`` and ``above`` the histogram of distances (bins of width
    1/:data:`BINS_PER_UNIT`), ``counts`` the observations, the pile, the next refresh and the
    refreshes made; ``work`` and ``aux`` the estimator's scratch (nothing is allocated while
    playing). All of them are empty for a told belief.

    Examples
    --------
    >>> told = BudgetBelief.known(LazyBestResponse(delta=0.2))
    >>> told.estimating, told.delta, told.below.shape
    (False, 0.2, (0,))
    >>> learning = BudgetBelief.new(LazyBestResponse(), cap=0.8)
    >>> learning.estimating, float(learning.current[0]), learning.base.delta
    (True, 0.8, 1.0)
    """

    delta: float
    truthful: float
    base: Any
    level: float
    current: np.ndarray
    below: np.ndarray
    above: np.ndarray
    counts: np.ndarray
    work: np.ndarray
    aux: np.ndarray

    name = "belief"
    #: Names this record had in saved learners (``delta="estimate"`` beliefs).
    former_names = ("EstimatedBudget",)

    @classmethod
    def known(cls, model: Any) -> BudgetBelief:
        """The belief of a learner told its agents' budget: ``model`` (at its ``delta``)."""
        return cls(delta=float(model.delta), truthful=float(model.truthful), base=model,
                   level=LEVEL, current=np.zeros(0), below=np.zeros(0), above=np.zeros(0),
                   counts=np.zeros(0, dtype=np.int64), work=np.zeros((0, 0)), aux=np.zeros(0))

    @classmethod
    def new(cls, base: Any, cap: float = DELTA_MAX, window: float = WINDOW,
            level: float = LEVEL) -> BudgetBelief:
        """A fresh estimating belief: ``base`` (an agent model; its budget is ignored) and the
        cap."""
        k_max = math.ceil(cap / _H)
        k_win = math.ceil(window / _H)
        nb = k_max + k_win + 1
        current = np.zeros(6)
        current[0] = cap
        return cls(delta=float(cap), truthful=float(base.truthful),
                   base=base._replace(delta=1.0), level=float(level), current=current,
                   below=np.zeros(nb), above=np.zeros(k_win),
                   counts=np.array([0, 0, FIRST_REFRESH, 0], dtype=np.int64),
                   work=np.zeros((8, nb + 1)), aux=np.zeros(8))

    @property
    def estimating(self) -> bool:
        """Whether the budget is estimated from the applicants (a told belief has no
        histogram)."""
        return len(self.below) > 0

    def check(self) -> None:
        self.base.check()

    def compiled(self) -> BudgetBelief:
        """This belief as compiled code receives it (a learner's state holds it): ``base`` as
        its compiled form (:class:`~..game.agents.AgentsCore` for a built-in model), the
        learned arrays shared."""
        return self._replace(base=compiled_agents(self.base))

    def settings(self) -> dict:
        return {}


@njit(inline="always")
def _estimating(model):
    return model.below.shape[0] > 0


@njit(inline="always")
def _reach_belief(model, beta):
    # A told belief's reach is its model's, as when the state held the model itself: the
    # same arithmetic, so results do not depend on the wrapper.
    if not _estimating(model):
        return reach(model.base, beta)
    return model.current[0] * reach(model.base, beta)


@njit(inline="always")
def _margin_belief(model, beta):
    return clean_margin(model.base, beta)


REACH[BudgetBelief] = _reach_belief
CLEAN_MARGIN[BudgetBelief] = _margin_belief


@njit(inline="always")
def _bin(model, v):
    """Add one distance to the histogram (the pile counted apart; NaN and far points skipped)."""
    model.counts[0] += 1
    # Two-sided: a mover's distance can come out a rounding error below 0 when its score is
    # computed on another float path than the rule's (standardized features, the service's
    # request); read as the hole's, it would take the pile away and move the estimate.
    if -LANDING < v < LANDING:
        model.counts[1] += 1
    elif v < 0.0:
        k = int(-v / _H)
        if k < model.below.shape[0]:
            model.below[k] += 1.0
    elif v >= 0.0:
        j = int(v / _H)
        if j < model.above.shape[0]:
            model.above[j] += 1.0


@njit(inline="always")
def _dispersion(below, above, k, k_win):
    """How much the distances pile up at repeated values around the band [−k/BINS_PER_UNIT, 0):
    the histogram's dispersion over the two fitting windows, D̂ = Σ (n_j − n_{j+1})² /
    Σ (n_j + n_{j+1}) over adjacent bins (differences, so that a smooth trend in the density
    adds nothing), or 1 when it is below :data:`ATOMS`.

    Independent applicants from a density give Poisson counts, and D̂ ≈ 1. Distances that
    repeat (rows redrawn, scores on a grid: atoms, each seen m times on average) give counts
    that come in lumps of about m, and D̂ ≈ m + 1 (a compound Poisson: E[X²]/E[X] for a lump X
    of mean m, more if the atoms' weights differ)."""
    num = 0.0
    den = 0.0
    for i in range(k, k + k_win - 1):
        step = below[i] - below[i + 1]
        num += step * step
        den += below[i] + below[i + 1]
    for j in range(k_win - 1):
        step = above[j] - above[j + 1]
        num += step * step
        den += above[j] + above[j + 1]
    if not den > 0.0 or num <= ATOMS * den:
        return 1.0
    return num / den


@njit(inline="always")
def _gap_sum(below, k, k_win, w):
    """Σ (G − w)⁺ over the gaps G (in bins) between the occupied bins of ``below[k:k+k_win]``,
    and Σ G."""
    last = -1
    over = 0.0
    total = 0.0
    for i in range(k, k + k_win):
        if below[i] > 0.0:
            if last >= 0:
                gap = i - last
                total += gap
                over += max(gap - w, 0)
            last = i
    return over, total


@njit
def _gap_reach(below, k, k_win, level):
    """How far (in bins) below the first unmoved atom δ may lie, read from the gaps between the
    atoms beyond the hole's edge (the bins from ``k`` on, the fitting window): the least w with
    Σ (G − w)⁺ ≤ (1 − level)·Σ G. For a δ placed at random among atoms with those gaps, the
    distance up to the next atom exceeds w with chance E[(G − w)⁺]/E[G] (a renewal process's
    forward recurrence time), so δ ≥ edge − w at ``level``: the exponential gaps of atoms at
    random places give w ≈ κ·mean gap, a regular grid w ≈ level·g, clusters their long gaps.
    With no two occupied bins, the whole window."""
    over, total = _gap_sum(below, k, k_win, 0)
    if not total > 0.0:
        return k_win
    lo = 0  # Σ (G − lo)⁺ > (1 − level)·Σ G
    hi = k_win  # Σ (G − hi)⁺ = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        over, _ = _gap_sum(below, k, k_win, mid)
        if over <= (1.0 - level) * total:
            hi = mid
        else:
            lo = mid
    return hi


@njit
def _refresh(model):
    """The estimate from the histogram into ``model.current`` (:func:`estimate_budget`);
    returns the dispersion the interval was widened by (:func:`_dispersion`).

    Why it is long: compiled code that scans the histogram's windows once, keeping the scan's
    running sums in locals; it mirrors :func:`estimate_budget` step for step (the tests hold
    the two equal), which a split would no longer show."""
    below, above, work, aux, cur = model.below, model.above, model.work, model.aux, model.current
    pile = float(model.counts[1])
    model.counts[3] += 1
    k_win = above.shape[0]
    nb = below.shape[0]
    k_max = nb - k_win - 1
    kappa = -math.log(1.0 - model.level)
    if pile == 0.0:
        # Nobody moved: the estimate is 0. Had the budget been δ, the H(δ) applicants seen in
        # [−δ, 0) (all unmoved) would have moved, and seeing none of an expected H would be
        # a chance of e^−H: δ is above the interval once H(δ) > κ. With atoms of about D̂
        # applicants each, H applicants are H/D̂ independent values: H(δ) > κ·D̂.
        spread = _dispersion(below, above, 0, k_win)
        seen = 0.0
        k = 0
        while k < k_max and seen + below[k] <= kappa * spread:
            seen += below[k]
            k += 1
        for i in range(1, 6):
            cur[i] = 0.0
        cur[4] = 1.0
        cur[3] = min((k + 1) * _H, model.delta)
        cur[0] = cur[3]
        return spread
    # Prefix sums over the bins below: work[p, i] = Σ_{j<i} c_j^p (p = 0..4) and
    # work[5 + p, i] = Σ_{j<i} n_j c_j^p (p = 0..2), c_j the bin's center, n_j its count.
    for p in range(8):
        work[p, 0] = 0.0
        aux[p] = 0.0
    for i in range(nb):
        c = -(i + 0.5) * _H
        cp = 1.0
        for p in range(5):
            work[p, i + 1] = work[p, i] + cp
            if p < 3:
                work[5 + p, i + 1] = work[5 + p, i] + below[i] * cp
            cp *= c
    for j in range(k_win):
        c = (j + 0.5) * _H
        cp = 1.0
        for p in range(5):
            aux[p] += cp
            if p < 3:
                aux[5 + p] += above[j] * cp
            cp *= c
    best_ell = -math.inf
    best_k = 1
    spread = 1.0
    for sweep in range(2):  # the maximum, then the set within kappa of it
        lo_k = k_max
        hi_k = 1
        if sweep == 1:
            # Atoms (distances that repeat: rows redrawn, scores on a grid). The likelihood
            # counts every applicant as an independent draw from a density, so that the gap
            # from the hole's edge to the first unmoved applicant is exponential with rate
            # λ = N·f(−δ) and ℓ falls by λ·(δ̂ − δ) below δ̂. With atoms, the unmoved
            # applicants sit on a finite set of values: δ̂ is read just below the first atom
            # outside the hole, and δ can be anywhere down to the last atom inside it, which
            # moved and is never seen. That gap does not shrink with N: it is exponential with
            # the rate of *distinct* values, λ/m for atoms seen m times each, and ℓ (which
            # counts each atom m times) overstates the evidence m-fold. So the set is read at
            # κ·D̂ (D̂ ≈ m + 1, a quasi-likelihood's dispersion): ℓ's fall over the gap,
            # about m·λ_atoms·gap, is then measured against κ·m, and the interval reaches
            # down to the resolution the atoms allow. Atoms at random places are covered at
            # `level`; a regular grid (gaps all g, the same D̂) gets a few g (2g measured on a
            # grid of 0.01), more than its identified set [a − g, a): from the histogram the
            # two look alike. A continuous density gives D̂ ≈ 1 and keeps κ (see ATOMS).
            spread = _dispersion(below, above, best_k, k_win)
        for k in range(1, k_max + 1):
            ell, hole, tau = _ell(work, aux, pile, k, k_win)
            if sweep == 0:
                if ell > best_ell:
                    best_ell, best_k = ell, k
                    cur[4], cur[5] = tau, hole
            elif ell >= best_ell - kappa * spread:
                lo_k = min(lo_k, k)
                hi_k = max(hi_k, k)
    if spread > 1.0:
        # The likelihood's fall below δ̂ is steeper than the atoms' rate alone (the fitting
        # window then takes in part of the empty hole), and a data set's atoms cluster (German
        # credit's 0/1 features: gaps from 0.0003 to 0.026 near one edge), so κ·D̂ alone
        # missed δ in 7 of 40 draws there. The gaps themselves say how far below the first
        # unmoved atom δ may lie (:func:`_gap_reach`): the interval reaches that far too.
        lo_k = max(1, min(lo_k, best_k - _gap_reach(below, best_k, k_win, model.level)))
    cap = model.delta
    cur[1] = best_k * _H
    cur[2] = (lo_k - 1) * _H
    cur[3] = min((hi_k + 1) * _H, cap)
    # The δ in force: the estimate, rounded up to the bin's far edge (where the hole ends when
    # every applicant games). Not the interval's upper end: with few movers the truthful share
    # leaves the likelihood flat up to the cap, and a learner would stay at the cap for
    # hundreds of rounds, rejecting almost everyone.
    cur[0] = min(cur[1] + _H, cap)
    return spread


@njit(inline="always")
def _ell(work, aux, pile, k, k_win):
    """ℓ at the band [−kh, 0), the hole's count and τ̂ there."""
    m0 = work[0, k + k_win] - work[0, k] + aux[0]
    m1 = work[1, k + k_win] - work[1, k] + aux[1]
    m2 = work[2, k + k_win] - work[2, k] + aux[2]
    m3 = work[3, k + k_win] - work[3, k] + aux[3]
    m4 = work[4, k + k_win] - work[4, k] + aux[4]
    t0 = work[5, k + k_win] - work[5, k] + aux[5]
    t1 = work[6, k + k_win] - work[6, k] + aux[6]
    t2 = work[7, k + k_win] - work[7, k] + aux[7]
    if DEGREE == 1:  # a line through both sides
        det = m0 * m2 - m1 * m1
        a = (t0 * m2 - m1 * t1) / det
        b = (m0 * t1 - m1 * t0) / det
        q = 0.0
    else:  # a quadratic, from the normal equations by Cramer's rule
        det = m0 * (m2 * m4 - m3 * m3) - m1 * (m1 * m4 - m3 * m2) + m2 * (m1 * m3 - m2 * m2)
        a = (t0 * (m2 * m4 - m3 * m3) - m1 * (t1 * m4 - m3 * t2)
             + m2 * (t1 * m3 - m2 * t2)) / det
        b = (m0 * (t1 * m4 - t2 * m3) - t0 * (m1 * m4 - m3 * m2)
             + m2 * (m1 * t2 - t1 * m2)) / det
        q = (m0 * (m2 * t2 - m3 * t1) - m1 * (m1 * t2 - m3 * t0)
             + t0 * (m1 * m3 - m2 * m2)) / det
    band = a * work[0, k] + b * work[1, k] + q * work[2, k]
    hole = work[5, k]
    tau = hole / (pile + hole)
    ell = pile * math.log(max(band, 1e-300))
    if hole > 0.0:
        ell += pile * math.log1p(-tau) + hole * math.log(tau)
    return ell, hole, tau


@njit
def observe(model, beta, threshold, x_obs):
    """Observe one decided applicant (compiled; both engine paths and the decision API call
    it before the learner's own update): its distance to the rule's boundary, and a refresh
    of the estimate after every doubling of the observations."""
    unit = reach(model.base, beta)
    if not unit > 0.0:
        return
    _bin(model, (score(beta, x_obs) - threshold) / unit)
    if model.counts[0] >= model.counts[2]:
        # Every observation at first (the δ in force falls from the cap as evidence comes),
        # then after every doubling (a refresh costs a pass over the histogram).
        n = model.counts[0]
        model.counts[2] = n + 1 if n < EVERY_ROUND else 2 * n
        _refresh(model)


@njit
def _observe_all(model, distances):
    for v in distances:
        if not math.isnan(v):
            _bin(model, v)


def observe_point(state, beta, threshold, x_obs):
    """Compiled-only: :func:`observe` the applicant if ``state``'s agent belief estimates its
    budget, else nothing (a run-time test of the belief: told and estimating beliefs are one
    type; a state without a belief compiles to nothing)."""
    raise NotImplementedError("compiled-only")


def estimating_belief(state: Any) -> BudgetBelief | None:
    """The estimating :class:`BudgetBelief` a learner's state holds (its live estimate of the
    agents' budget, ``delta="estimate"``), or None: what the learner's per-round API, the
    engine and the decision service read."""
    live = getattr(state, "agents", None)
    return live if isinstance(live, BudgetBelief) and live.estimating else None


def holds_belief(state_type) -> bool:
    """Whether a learner state (a numba type) holds a :class:`BudgetBelief`."""
    cls = state_class(state_type)
    if cls is None or "agents" not in getattr(cls, "_fields", ()):
        return False
    agents = state_type.types[cls._fields.index("agents")]
    return state_class(agents) is BudgetBelief


@overload(observe_point, inline="always")
def _observe_point_overload(state, beta, threshold, x_obs):
    if holds_belief(state):
        def watch(state, beta, threshold, x_obs):
            if _estimating(state.agents):
                observe(state.agents, beta, threshold, x_obs)
        return watch

    def nothing(state, beta, threshold, x_obs):
        pass
    return nothing


def parse_estimate(value: Any) -> float | None:
    """The cap of ``delta="estimate"`` or ``"estimate:<cap>"`` (None: not an estimate)."""
    if not isinstance(value, str):
        return None
    if value == "estimate":
        return DELTA_MAX
    head, _, cap = value.partition(":")
    if head == "estimate" and cap:
        try:
            number = float(cap)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and 0 < number <= 1e6:
            return number
    raise ValueError(f"delta must be a number >= 0, 'estimate' or 'estimate:<cap>' with a cap "
                     f"in (0, 1e6], got {value!r}")


def estimate_budget(distances: np.ndarray, *, delta_max: float = DELTA_MAX,
                    window: float = WINDOW, level: float = LEVEL) -> BudgetEstimate:
    """Estimate δ from applicants' distances to the boundary (:func:`boundary_distances`),
    with the compiled estimator a learner runs (:class:`BudgetBelief`).

    Parameters
    ----------
    distances : numpy.ndarray
        One distance per applicant, in budget units (NaN: a rule that cannot be gamed, skipped).
    delta_max : float
        The largest budget considered (the search's range; a learner's starting δ).
    window : float
        Width on each side of the band over which the counterfactual density is fitted.
    level : float
        Coverage of the interval.

    Returns
    -------
    BudgetEstimate

    Examples
    --------
    Applicants spread evenly on [−1, 1]; those in [−0.3, 0) moved onto the boundary:

    >>> v = np.linspace(-1, 1, 20001)
    >>> v = np.where((v >= -0.3) & (v < 0), 0.0, v)
    >>> est = estimate_budget(v)
    >>> round(est.delta, 3), est.low <= 0.3 <= est.high, est.hole
    (0.3, True, 0)
    """
    delta_max = _check("delta_max", delta_max, 0.0, 1e6 + 1)
    window = _check("window", window, 0.0, 1e6 + 1)
    level = _check("level", level, 0.0, 1.0)
    v = np.ascontiguousarray(np.asarray(distances, dtype=float).ravel())
    model = BudgetBelief.new(LazyBestResponse(), delta_max, window, level).compiled()
    _observe_all(model, v)
    spread = _refresh(model)
    cur = model.current
    n = int(model.counts[0])
    pile = int(model.counts[1])
    tau = float(cur[4]) if pile else (1.0 if n else math.nan)
    return BudgetEstimate(float(cur[1]), float(cur[2]), float(cur[3]), level, pile,
                          int(cur[5]), tau, n, float(spread))
