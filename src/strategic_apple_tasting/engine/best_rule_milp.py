"""A mixed-integer check of the best linear rule on a data set's rows (DESIGN §2, "Data").

:mod:`.best_rule` finds the best linear rule by a search over directions: exact for each
direction, heuristic over them. This module asks a mixed-integer program (``scipy.optimize.milp``,
HiGHS) the same question, to get a rule *and* an upper bound the solver proved, so that the
search's shortfall can be stated.

The program. A rule (β, c) accepts row i iff ⟨β, x_i⟩ ≥ c and is worth
V(β, c) = Σ_i w_i·g_i·1{⟨β, x_i⟩ ≥ c} (:mod:`.best_rule`'s definition). Variables: β in the box
[−1, 1]^d, the threshold c in [−R, R + m], and a binary z_i per row (accepted); maximize
Σ_i w_i·g_i·z_i subject to, with s_i = ⟨β, x_i⟩ and a margin m (in score units),

- a row that gains (w_i·g_i > 0): z_i = 1 ⇒ s_i ≥ c, as s_i − c ≥ −M_i·(1 − z_i);
- a row that loses (w_i·g_i < 0): z_i = 0 ⇒ s_i ≤ c − m, as s_i − c ≤ −m + M_i·z_i.

Only the direction that the objective pushes against is written: a gaining row is never
counted accepted when it is not, a losing row never counted rejected when it is not, so a
solution's objective is at most its rule's value, and any rule the program can represent has a
solution worth its value (set z_i to what it does). Rows with w_i·g_i = 0 are left out (they do
not change a value), identical rows are one binary (a rule cannot tell them apart).

Choices, and why:

- **The threshold is kept as its own variable c** rather than folded into β through the
  intercept column: a threshold must range over the scores, up to R = max_i ‖x_i‖₁ in the box's
  units, which the box [−1, 1] on an intercept's coefficient would cut short, and rows need not
  have an intercept. A constant column's coefficient is then redundant with c, so it is fixed to
  0 (it only shifts every score alike); this changes no rule's accepted set.
- **c ∈ [−R, R + m]**: with β in the box, |s_i| ≤ ‖x_i‖₁ ≤ R, so c = −R accepts every row,
  c = R + m rejects every row with margin m, and a threshold outside the interval accepts the
  same rows as its end.
- **Big-M**: M_i = ‖x_i‖₁ + R + m (norms over the non-constant columns, R their largest over
  the rows in the program), the largest that c − s_i and s_i − c + m can be over the box and
  the threshold's interval, so no rule in the box is cut off.
- **The margin is relative**: m = ``margin``·2R, a fraction of the span [−R, R] of the scores
  in the box. What matters numerically is m / M_i: HiGHS takes z_i within 1e-6 of 0 as 0, which
  lets a row counted rejected score up to 1e-6·M_i above c − m. With an absolute m = 1e-4 on
  German credit (M_i ≈ 110) that is the whole margin: after 30 s the solver's incumbent had
  ‖β‖∞ = 3e-5, its losing rows on the boundary, counted rejected and in fact accepted; its
  objective was 0.0812 per applicant, 5% above the search, and the rule, re-evaluated, was
  worth 0.0464. At m = 1e-4·2R the tolerance is about 1% of the margin. Margins below 1e-5 of
  the span are refused for that reason.

What the bound bounds. ``bound`` is the solver's dual bound, an upper bound on the program's
optimum, that is on the value of every rule the program can represent: rules with some β in
the box (‖β‖∞ ≤ 1 on the non-constant columns) that put every rejected row at least m below
the threshold (⟨β, x_i⟩ ≤ c − m); for a given rule, its margin once β is scaled to ‖β‖∞ = 1 on
those columns (:func:`rule_margin`) being ≥ m is enough. A linear rule whose rejected rows come
closer to its boundary than that at every scaling is **not** covered: the bound is not a bound
over all linear rules (without a margin, β = 0 would represent "accept every row that gains"
and the program would prove nothing), and a comparison says whether a given rule is covered.
The bound is also capped by the value of accepting exactly the rows that gain, which bounds
every rule. Both are up to the solver's tolerances (above): tolerances enlarge the set the
solver searches, so they loosen the bound rather than break it; the primal rule is never taken
on the solver's word, its value is re-evaluated.

The rule returned is the solver's direction β with its best threshold chosen exactly
(:func:`.best_rule.exact_value`, as the search does) among the cuts that keep the margin less
the solver's tolerances, 1e-6·max_i M_i + 1e-7 (rows whose scores are closer than that times
‖β‖∞ go together): the margin the solver's own rules keep, about 1% short of m (cutting at m
exactly dropped a German-credit rule's value from 0.0860 to 0.0777), so the rule stays in the
class the solver searched and its value is at most the bound; ``value`` is recomputed on the
rows, never the solver's objective. ``free_value`` is β's best threshold without the margin,
the search's definition: it can exceed the bound, as that rule may be outside the class.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .best_rule import RuleSearch, exact_value

#: HiGHS's integrality tolerance (mip_feasibility_tolerance): z_i within it of 0 counts as 0.
_TOLERANCE = 1e-6
#: HiGHS's status codes as scipy reports them.
_STATUS = {0: "optimal", 1: "time limit", 2: "infeasible", 3: "unbounded", 4: "other"}


@dataclass(frozen=True)
class MilpRule:
    """What the mixed-integer program found and proved (module docstring).

    Attributes
    ----------
    beta : numpy.ndarray
        (d,) the rule's direction, in the box [−1, 1]^d (constant columns' coefficients 0).
    threshold : float
        The rule's threshold: the best for ``beta`` that keeps the margin, chosen exactly
        (+inf: accept nobody).
    value : float
        The rule's value Σ_i w_i·g_i·1{⟨β, x_i⟩ ≥ c}, re-evaluated on the rows.
    bound : float
        An upper bound on the value of every rule the program represents (β in the box,
        rejected rows at least ``margin`` below the threshold): the solver's dual bound, capped
        by the value of accepting exactly the rows that gain.
    gap : float
        (bound − value) / |bound| (0 when both are 0).
    status : str
        "optimal", "time limit", or the solver's other outcomes.
    seconds : float
        Wall time of the solve.
    free_value : float
        ``beta``'s value with its best threshold regardless of the margin (at least ``value``;
        not covered by ``bound``).
    objective : float
        The solver's objective of its incumbent (NaN without one): at most its rule's value.
    margin : float
        The program's margin m in score units (``margin`` × 2R, module docstring).
    binaries : int
        Binaries in the program (rows that gain or lose, identical rows merged).
    nodes : int
        Branch-and-bound nodes the solver explored.
    """

    beta: np.ndarray
    threshold: float
    value: float
    bound: float
    gap: float
    status: str
    seconds: float
    free_value: float
    objective: float
    margin: float
    binaries: int
    nodes: int

    def describe(self) -> str:
        """One line: the rule's value, the proved bound, the gap and how the solve ended."""
        return (f"a mixed-integer program over {self.binaries} rows (HiGHS, β in [−1, 1]^d, "
                f"margin {self.margin:.3g} in score): a rule worth {self.value:.5g} per applicant, "
                f"an upper bound {self.bound:.5g} on rules with that margin (gap {self.gap:.1%}), "
                f"{self.status} after {self.seconds:.1f} s and {self.nodes} nodes")


def _check_inputs(rows: object, gain: object, weights: object
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.asarray(rows, dtype=float)
    if rows.ndim != 2 or rows.shape[0] == 0 or rows.shape[1] == 0:
        raise ValueError(f"rows must be a non-empty (n, d) array, got shape {rows.shape}")
    n = rows.shape[0]
    if not np.all(np.isfinite(rows)):
        raise ValueError(f"rows must be finite, got {int(np.sum(~np.isfinite(rows)))} "
                         f"NaN or infinite entries")
    gain = np.asarray(gain, dtype=float)
    if gain.shape != (n,):
        raise ValueError(f"gain must have shape ({n},) like rows' first axis, got {gain.shape}")
    if not np.all(np.isfinite(gain)):
        raise ValueError(f"gain must be finite, got {int(np.sum(~np.isfinite(gain)))} "
                         f"NaN or infinite entries")
    if weights is None:
        weights = np.full(n, 1.0 / n)
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (n,):
        raise ValueError(f"weights must have shape ({n},) like rows' first axis, "
                         f"got {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError(f"weights must be finite and ≥ 0, got min {float(np.min(weights))!r}")
    return rows, gain, weights


def _number(name: str, value: object, allowed: str, ok: Callable[[float], bool]) -> None:
    """A one-line ValueError unless ``value`` is a finite real number (not a bool) that is ok."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or not ok(float(value))):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")


def _with_margin(scores: np.ndarray, gap: float) -> np.ndarray:
    """Each score replaced by the lowest of its run: sorted scores closer than ``gap`` to the
    next one below them are one run, so exact_value cuts only where a gap ≥ ``gap`` separates
    the rows it accepts from those it rejects (and its threshold is a row's own score)."""
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    first = np.maximum.accumulate(np.where(np.r_[True, np.diff(s) >= gap], np.arange(len(s)), 0))
    out = np.empty_like(scores)
    out[order] = s[first]
    return out


def _varying(rows: np.ndarray) -> np.ndarray:
    """The columns that vary over the rows (a constant column only shifts every score)."""
    return np.ptp(rows, axis=0) > 0


def rule_margin(rows: np.ndarray, beta: np.ndarray, threshold: float) -> float:
    """How far below the threshold the rule's rejected rows are, with β scaled to the
    program's box: min over accepted of ⟨β, x⟩ − max over rejected, over ‖β‖∞ on the columns
    that vary. The program can represent the rule if this is ≥ its margin (sufficient, not
    necessary: another β may accept the same rows with a wider margin). +inf if the rule
    accepts every row or none.

    Examples
    --------
    >>> rows = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 3.0]])
    >>> rule_margin(rows, np.array([0.0, 2.0]), 2.0)
    1.0
    """
    rows = np.asarray(rows, dtype=float)
    beta = np.asarray(beta, dtype=float)
    scores = rows @ beta
    accepted = scores >= threshold
    scale = float(np.max(np.abs(beta[_varying(rows)]), initial=0.0))
    if accepted.all() or not accepted.any() or scale == 0:
        return math.inf
    return float((scores[accepted].min() - scores[~accepted].max()) / scale)


def milp_best_rule(rows: np.ndarray, gain: np.ndarray, weights: np.ndarray | None = None, *,
                   time_limit: float = 10.0, margin: float = 1e-4,
                   mip_rel_gap: float = 0.0) -> MilpRule:
    """The best linear rule on ``rows`` by a mixed-integer program, with a proved upper bound
    over the rules it represents (module docstring: what the bound does and does not cover).

    Parameters
    ----------
    rows : numpy.ndarray
        (n, d) contexts.
    gain : numpy.ndarray
        (n,) each row's mean reward of accepting minus r0.
    weights : numpy.ndarray, optional
        (n,) probabilities of drawing each row (uniform if None).
    time_limit : float
        Seconds HiGHS may take (> 0); it stops with its incumbent and bound.
    margin : float
        How far below the threshold a rejected row must score, β in [−1, 1]^d, as a fraction
        of the span 2R of the scores (in [1e-5, 0.5]; module docstring).
    mip_rel_gap : float
        HiGHS's relative gap at which it stops as optimal (in [0, 1); 0: proved exactly, up to
        its absolute gap 1e-6).

    Returns
    -------
    MilpRule

    Examples
    --------
    >>> rows = np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> found = milp_best_rule(rows, np.array([-1.0, -1.0, 1.0, 1.0]), time_limit=5)
    >>> found.value, found.bound, found.status
    (0.5, 0.5, 'optimal')
    >>> bool(rows[2] @ found.beta >= found.threshold > rows[1] @ found.beta)
    True
    """
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    rows, gain, weights = _check_inputs(rows, gain, weights)
    _number("time_limit", time_limit, "a finite number of seconds > 0", lambda t: t > 0)
    _number("margin", margin, "a fraction of the scores' span in [1e-5, 0.5] (smaller is "
            "within the solver's integrality tolerance)", lambda m: 1e-5 <= m <= 0.5)
    _number("mip_rel_gap", mip_rel_gap, "a number in [0, 1)", lambda g: 0 <= g < 1)
    d = rows.shape[1]
    wg = weights * gain
    trivial = float(wg[wg > 0].sum())
    varying = _varying(rows)
    x = rows[:, varying]
    # Identical rows are one binary worth their summed w·g; rows worth 0 are left out.
    unique, inverse = np.unique(x, axis=0, return_inverse=True)
    merged = np.bincount(inverse.ravel(), weights=wg, minlength=unique.shape[0])
    keep = merged != 0
    x, v = unique[keep], merged[keep]
    k, p = x.shape[0], x.shape[1]
    norms = np.abs(x).sum(axis=1)
    big_r = float(norms.max(initial=0.0))
    m = margin * 2 * big_r if big_r > 0 else 1.0  # no column varies: any m rejects alike
    big_m = norms + big_r + m
    # Variables: β (p), c, z (k); HiGHS minimizes −Σ v_i·z_i. Per row, s_i − c − M_i·z_i is
    # ≥ −M_i for a gaining row (z_i = 1 ⇒ s_i ≥ c) and ≤ −m for a losing one (z_i = 0 ⇒
    # s_i ≤ c − m).
    cost = np.r_[np.zeros(p + 1), -v]
    gains_row = v > 0
    lower = np.where(gains_row, -big_m, -np.inf)
    upper = np.where(gains_row, np.inf, -m)
    bounds = Bounds(np.r_[-np.ones(p), -big_r, np.zeros(k)],
                    np.r_[np.ones(p), big_r + m, np.ones(k)])
    integrality = np.r_[np.zeros(p + 1), np.ones(k)]
    started = time.perf_counter()
    if k:
        matrix = sparse.hstack([sparse.csr_array(x), sparse.csr_array(-np.ones((k, 1))),
                                sparse.diags_array(-big_m)], format="csr")
        res = milp(cost, integrality=integrality, bounds=bounds,
                   constraints=LinearConstraint(matrix, lower, upper),
                   options={"time_limit": float(time_limit), "mip_rel_gap": float(mip_rel_gap)})
        status = _STATUS.get(int(res.status), "other")
        solution, nodes = res.x, int(res.get("mip_node_count") or 0)
        dual = res.get("mip_dual_bound")
        solver_bound = -float(dual) if dual is not None and np.isfinite(dual) else math.inf
        objective = -float(res.fun) if solution is not None else math.nan
    else:  # nothing gains or loses: every rule is worth 0
        status, solution, nodes, solver_bound, objective = "optimal", None, 0, 0.0, 0.0
    seconds = time.perf_counter() - started
    beta = np.zeros(d)
    if solution is not None:
        beta[varying] = solution[:p]
    scores = rows @ beta
    free_value = exact_value(scores, wg)[0]
    # The cuts the solver could make: the margin less its tolerances (module docstring).
    kept = max(m - _TOLERANCE * float(big_m.max(initial=0.0)) - 1e-7, 0.0)
    value, threshold = exact_value(_with_margin(scores, kept * np.max(np.abs(beta))), wg)
    bound = min(solver_bound, trivial)
    gap = 0.0 if bound == value == 0 else (bound - value) / abs(bound) if bound else math.inf
    return MilpRule(beta=beta, threshold=threshold, value=value, bound=bound, gap=gap,
                    status=status, seconds=seconds, free_value=free_value, objective=objective,
                    margin=float(m), binaries=k, nodes=nodes)


def rule_value(rows: np.ndarray, gain: np.ndarray, weights: np.ndarray, beta: np.ndarray,
               threshold: float) -> float:
    """The value of the rule (β, c) on the rows: Σ_i w_i·g_i·1{⟨β, x_i⟩ ≥ c}.

    Examples
    --------
    >>> rule_value(np.eye(2), np.array([1.0, -1.0]), np.full(2, 0.5), np.array([1.0, 0.0]), 1.0)
    0.5
    """
    rows, gain, weights = _check_inputs(rows, gain, weights)
    return float((weights * gain)[rows @ np.asarray(beta, dtype=float) >= threshold].sum())


def compare_with_search(rows: np.ndarray, gain: np.ndarray, weights: np.ndarray | None,
                        search: RuleSearch, milp: MilpRule) -> dict[str, float | bool | str]:
    """The search's rule and the program's side by side, against the program's bound.

    Both rules are re-evaluated on the rows (a search made on other rows, gains or weights is
    refused). ``search_gap`` and ``milp_gap`` are (bound − value) / bound: how much either
    could be short of the best rule the program represents. ``search_covered`` says whether the
    bound is known to cover the search's rule (its margin, :func:`rule_margin`, at least the
    program's); if not, the search's value may exceed the bound without contradiction.

    Examples
    --------
    >>> from strategic_apple_tasting.engine.best_rule import search_rules
    >>> rows = np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> gain, w = np.array([-1.0, -1.0, 1.0, 1.0]), np.full(4, 0.25)
    >>> found = milp_best_rule(rows, gain, w, time_limit=5)
    >>> report = compare_with_search(rows, gain, w, search_rules(rows, gain, w, restarts=1), found)
    >>> report["search_gap"], report["milp_gap"], report["search_covered"]
    (0.0, 0.0, True)
    """
    rows, gain, weights = _check_inputs(rows, gain, weights)
    if not isinstance(search, RuleSearch):
        raise ValueError(f"search must be a RuleSearch, got {type(search).__name__}")
    if not isinstance(milp, MilpRule):
        raise ValueError(f"milp must be a MilpRule, got {type(milp).__name__}")
    beta = search.directions[search.best]
    search_value = rule_value(rows, gain, weights, beta, search.threshold)
    if not math.isclose(search_value, search.value, rel_tol=1e-9, abs_tol=1e-12):
        raise ValueError(f"search must be made on these rows, gains and weights: its value "
                         f"{search.value!r} is {search_value!r} on them")
    milp_value = rule_value(rows, gain, weights, milp.beta, milp.threshold)
    bound = milp.bound

    def short(value: float) -> float:
        return 0.0 if bound == value else (bound - value) / abs(bound) if bound else math.inf

    search_margin = rule_margin(rows, beta, search.threshold)
    return {"search_value": search_value, "milp_value": milp_value, "milp_bound": bound,
            "search_gap": short(search_value), "milp_gap": short(milp_value),
            "milp_over_search": (milp_value / search_value - 1 if search_value
                                 else math.inf if milp_value > 0 else 0.0),
            "search_margin": search_margin, "search_covered": search_margin >= milp.margin,
            "trivial_bound": float((weights * gain)[gain > 0].sum()),
            "milp_status": milp.status, "milp_seconds": milp.seconds}
