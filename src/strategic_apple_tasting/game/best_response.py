"""Numerical best response to a general rule: accept iff g(x') ≥ 0 (LinUCB's optimistic rule).

An agent with true context x rejected by the rule (g(x) < 0) looks for the cheapest move v with
g(x + v) ≥ 0 and makes it if its cost is within budget, as a lazy agent does against a linear
threshold (DESIGN §2). The cost is ‖v‖ (lazy, trembling, heterogeneous agents) or ‖A^{1/2}v‖
(ellipsoidal cost), or ‖v‖ for a move within the gameable features G and infinite otherwise
(subset gaming, the ellipsoid with A⁻¹ = diag(1_G)). Write M for the metric (I, A⁻¹ or
diag(1_G)): at a cheapest move, the KKT conditions say the direction of v is M∇g(x + v)
(`def:br`'s lazy move is the case g linear). Every direction searched is some M·h, so a
subset gamer's moves stay in G.

Method (:func:`minimal_move`):

1. **Crossing.** Along a ray x + t·u (u of unit cost), sample g at ``SAMPLES`` points of
   (0, ``SEARCH``·budget] and refine the first bracket [g < 0, g ≥ 0] by the Illinois method
   (safeguarded regula falsi) to a relative width of ``BISECTION_RTOL``. The search reaches
   past the budget so that a start whose ray is too expensive can still descend to a cheaper
   direction.
2. **KKT fixed point.** At the crossing z, the candidate direction is M∇g(z), normalized to
   unit cost. Step from u towards it (full step first, halved until the new ray's crossing is
   nearer: the cost decreases at every accepted step) until the direction moves by less than
   ``DIRECTION_TOL`` or no step helps.
3. **Starts.** Descend from M∇g(x) and from Mβ (β the rule's linear part); try the origin,
   where norm-based rules are not differentiable (a bandit LinUCB rule is a cone with its apex
   there); then probe a fixed set of ``PROBES`` directions just short of the best cost so far
   (one evaluation of g each): a probe accepted there leads to a strictly cheaper move, so
   descend from it and go on probing.

The cheapest move found is made if its cost is within budget. The landing point is the upper
end of the final bracket, a point where g was *evaluated* ≥ 0 with the same arithmetic as the
published rule's test, so a mover is always accepted; its cost exceeds the crossing along its
ray by at most a relative ``BISECTION_RTOL``.

Tolerance (tests/game/test_best_response.py, against dense directions refined by SLSQP, d = 2
and 3, ℓ2 and ellipsoidal costs). Apple tasting: the rejected set {UCB1 < r0} is convex and the
move is the cheapest to a relative 1e-6 (1e-8 in 160 random cases). Bandit feedback:
{UCB1 ≥ UCB0} is a non-convex cone with several local minima, and the result is a local one
(a KKT point): in 226 random cases it was the cheapest to 1e-6 in all but 2, which cost 0.7%
and 3.4% more (their cheaper directions filled 0.08% and 0.5% of the sphere, too few for the
probes). In higher dimension the probes cover the sphere ever more thinly.

Randomness: each agent model draws exactly the random numbers its linear-threshold response
draws, in the same order (the truthful coin, the trembling overshoot, the heterogeneous budget),
so every learner meets the same agents (common random numbers). The search itself draws none.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._jit import NO_NRT, dispatch_on_class, njit
from .agents import (
    _EPS,
    ELLIPSOID,
    HETEROGENEOUS,
    MODELS,
    SUBSET,
    TREMBLING,
    AgentsCore,
    _honest,
    _stay,
    compiled_agents,
    uniform,
    within_budget,
)
from .policies import GeneralRule, rule_value

#: Points at which g is sampled along a ray to bracket its first crossing.
SAMPLES = 16
#: Samples along the ray of a KKT step (whose crossing is expected near the current one).
DESCENT_SAMPLES = 4
#: Rays are searched up to this multiple of the budget.
SEARCH = 2.0
#: Relative width of the final bracket of a crossing (Illinois refinement).
BISECTION_RTOL = 1e-13
#: The KKT iteration stops when the unit-cost direction moves by less than this.
DIRECTION_TOL = 1e-9
#: Largest number of KKT steps from one start.
MAX_STEPS = 60
#: Smallest damping factor tried before a KKT step is given up.
MIN_DAMPING = 1.0 / 1024.0
#: Directions of the fixed set probed to escape a local minimum.
PROBES = 128
#: A probe must beat the best cost so far by this relative margin.
PROBE_GAIN = 1e-6
#: Rows of scratch (each of length d) that the search itself needs; :func:`scratch_rows` gives
#: the whole scratch of :func:`minimal_move`, whose further rows a closed form may use.
SCRATCH_ROWS = 11


@njit(inline="always")
def scratch_rows(d):
    """Rows of scratch (each of length d) that :func:`minimal_move` needs at dimension d: the
    search's, then three d × d matrices and four vectors for a closed form
    (:data:`EXACT_MOVES`)."""
    return SCRATCH_ROWS + 3 * d + 4

# Scratch rows (the conjugate gradients of metric_cost reuse _CAND.._ZT).
_GRAD, _U, _Z, _BEST, _HN, _CAND, _GN, _TRIAL, _HTRIAL, _ZT, _GX = range(SCRATCH_ROWS)

# The search is compiled as separate functions, not inlined into its callers: inlined, the rule
# would be copied into every call site (slow to compile). Like the engine's loop they run
# without the NRT (they allocate nothing), so the engine can call them without reference counts.
_OUTLINED = {"inline": "never", **NO_NRT}


@njit(**_OUTLINED)
def _g(rule, z, grad, need_grad):
    return rule_value(rule, z, grad, need_grad)


@njit(**_OUTLINED)
def rule_accepts(rule, z, grad):
    """Whether a general rule accepts z: g(z) ≥ 0 (``grad`` is scratch of length d)."""
    return _g(rule, z, grad, False) >= 0.0


# The metric M of the agents' cost is the agents' model itself (an :class:`AgentsCore`): its
# kind chooses, at run time, the identity (ℓ2 cost), A⁻¹ (``cost_inv``, an ellipsoidal cost) or
# diag(1_G) (``gameable``, subset gaming). One type: the search is compiled once per rule type,
# not once per rule type and cost type.


@njit(inline="always")
def _times_matrix(m, h, out):
    """out = m h for a d × d matrix m."""
    d = h.shape[0]
    for i in range(d):
        acc = 0.0
        for j in range(d):
            acc += m[i, j] * h[j]
        out[i] = acc


@njit(inline="always")
def apply_metric(model, h, out):
    """out = M h, M the metric of ``model``'s agents (A⁻¹, diag(1_G) or the identity)."""
    if model.kind == ELLIPSOID:
        _times_matrix(model.cost_inv, h, out)
    elif model.kind == SUBSET:
        gameable = model.gameable
        for i in range(h.shape[0]):
            out[i] = h[i] if gameable[i] else 0.0
    else:
        for i in range(h.shape[0]):
            out[i] = h[i]


@njit(inline="always")
def identity_metric(model):
    """Whether the cost of a move is ‖v‖ for ``model``'s agents: neither an ellipsoidal cost nor
    a subset of gameable features."""
    return model.kind != ELLIPSOID and model.kind != SUBSET


@njit(inline="always")
def metric_cost(model, v, work):
    """The cost of a move v to ``model``'s agents: ‖v‖, sqrt(vᵀAv) for an ellipsoidal cost
    (only A⁻¹ is known), or for subset gaming ‖v‖ if v stays in G and ∞ otherwise."""
    if model.kind == SUBSET:
        gameable = model.gameable
        s = 0.0
        for i in range(v.shape[0]):
            if gameable[i]:
                s += v[i] * v[i]
            elif v[i] != 0.0:
                return math.inf  # a move off the gameable features cannot be bought
        return math.sqrt(s)
    if model.kind != ELLIPSOID:
        s = 0.0
        for i in range(v.shape[0]):
            s += v[i] * v[i]
        return math.sqrt(s)
    # Solve A⁻¹y = v by conjugate gradients (only A⁻¹ is known); vᵀy = vᵀAv.
    cost_inv = model.cost_inv
    d = v.shape[0]
    y = work[_CAND]
    r = work[_GN]
    p = work[_TRIAL]
    q = work[_HTRIAL]
    vv = 0.0
    for i in range(d):
        y[i] = 0.0
        r[i] = v[i]
        p[i] = v[i]
        vv += v[i] * v[i]
    rs = vv
    for _ in range(2 * d + 10):
        if not rs > 1e-32 * vv:
            break
        _times_matrix(cost_inv, p, q)
        pq = 0.0
        for i in range(d):
            pq += p[i] * q[i]
        if not pq > 0.0:
            break
        a = rs / pq
        rs_new = 0.0
        for i in range(d):
            y[i] += a * p[i]
            r[i] -= a * q[i]
            rs_new += r[i] * r[i]
        for i in range(d):
            p[i] = r[i] + (rs_new / rs) * p[i]
        rs = rs_new
    vy = 0.0
    for i in range(d):
        vy += v[i] * y[i]
    return math.sqrt(max(vy, 0.0))


@njit(**_OUTLINED)
def _apex_cost(metric, x, work):
    return metric_cost(metric, x, work)


@njit(**_OUTLINED)
def _unit_direction(metric, h, u):
    """u = M h / ‖h‖_M and h ← h / ‖h‖_M (so u has unit cost); returns ‖h‖_M (0: no direction)."""
    apply_metric(metric, h, u)
    q = 0.0
    for i in range(h.shape[0]):
        q += h[i] * u[i]
    if not (q > 0.0 and q < math.inf):
        return 0.0
    n = math.sqrt(q)
    for i in range(h.shape[0]):
        u[i] /= n
        h[i] /= n
    return n


@njit
def _point(x, t, u, z):
    for i in range(x.shape[0]):
        z[i] = x[i] + t * u[i]


@njit(**_OUTLINED)
def _first_sample(rule, x, u, limit, samples, z, grad):
    """The first k in 1..samples with g(x + (k/samples)·limit·u) ≥ 0; samples + 1 if none."""
    for k in range(1, samples + 1):
        _point(x, limit * (k / samples), u, z)
        if _g(rule, z, grad, False) >= 0.0:
            return k
    return samples + 1


@njit(**_OUTLINED)
def _crossing(rule, x, u, limit, samples, z, grad):
    """The first t in (0, limit] found with g(x + t·u) ≥ 0, and z = x + t·u; ∞ if none.

    g(x) < 0 is assumed. The bracket of the first of ``samples`` equally spaced samples where
    g ≥ 0 is refined by the Illinois method (regula falsi that halves the value kept twice; a
    bisection step whenever the secant falls outside). The returned t is the upper end of the
    final bracket: g(z) was evaluated ≥ 0 at exactly this z.
    """
    k = _first_sample(rule, x, u, limit, samples, z, grad)
    if k > samples:
        return math.inf
    hi = limit * (k / samples)
    ghi = _g(rule, z, grad, False)
    lo = limit * ((k - 1) / samples)
    if k > 1:
        _point(x, lo, u, z)
        glo = _g(rule, z, grad, False)
    else:
        glo = _g(rule, x, grad, False)
    side = 0
    for _ in range(200):
        width = hi - lo
        if not width > BISECTION_RTOL * hi:
            break
        m = hi - ghi * (width / (ghi - glo))
        if not lo < m < hi:
            m = lo + 0.5 * width
            if not lo < m < hi:
                break
        _point(x, m, u, z)
        gm = _g(rule, z, grad, False)
        if gm >= 0.0:
            hi = m
            ghi = gm
            if side == 1:
                glo *= 0.5
            side = 1
        else:
            lo = m
            glo = gm
            if side == -1:
                ghi *= 0.5
            side = -1
    _point(x, hi, u, z)
    return hi


@njit(**_OUTLINED)
def _descend(rule, metric, x, t, work):
    """KKT iteration from the crossing t along work[_U] (covector work[_HN]); returns the final
    cost t, with work[_U] its direction and work[_Z] its landing point."""
    d = x.shape[0]
    grad = work[_GRAD]
    u = work[_U]
    z = work[_Z]
    hn = work[_HN]
    cand = work[_CAND]
    gn = work[_GN]
    trial = work[_TRIAL]
    htrial = work[_HTRIAL]
    zt = work[_ZT]
    for _ in range(MAX_STEPS):
        _g(rule, z, grad, True)
        for i in range(d):
            gn[i] = grad[i]
        if _unit_direction(metric, gn, cand) == 0.0:
            break
        change = 0.0
        for i in range(d):
            change += (cand[i] - u[i]) ** 2
        if not math.sqrt(change) > DIRECTION_TOL:
            break
        w = 1.0
        improved = False
        while w >= MIN_DAMPING:
            # Blend the covectors: u = M·hn with hnᵀMhn = 1, so M·(hn + w(gn − hn)) is the
            # blend of the directions and its cost needs no A, only M = A⁻¹.
            q = 0.0
            for i in range(d):
                trial[i] = u[i] + w * (cand[i] - u[i])
                htrial[i] = hn[i] + w * (gn[i] - hn[i])
                q += htrial[i] * trial[i]
            if q > 0.0:
                n = math.sqrt(q)
                for i in range(d):
                    trial[i] /= n
                    htrial[i] /= n
                tt = _crossing(rule, x, trial, t, DESCENT_SAMPLES, zt, grad)
                if tt < t:
                    t = tt
                    for i in range(d):
                        u[i] = trial[i]
                        hn[i] = htrial[i]
                        z[i] = zt[i]
                    improved = True
                    break
            w *= 0.5
        if not improved:
            break
    return t


@njit(**_OUTLINED)
def _probe_direction(k, hn):
    """Covector k of a fixed set, uniform in the cube [−1, 1]^d (splitmix64 of k·d + i)."""
    d = hn.shape[0]
    for i in range(d):
        z = np.uint64(k * d + i + 1) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        hn[i] = float(z >> np.uint64(11)) * (2.0 / 9007199254740992.0) - 1.0


@njit(**_OUTLINED)
def _improve(rule, metric, x, limit, best_t, work):
    """Descend from the current start (work[_U], work[_HN]); keep it in work[_BEST] if cheaper."""
    t = _crossing(rule, x, work[_U], limit, SAMPLES, work[_Z], work[_GRAD])
    if t == math.inf:
        return best_t
    t = _descend(rule, metric, x, t, work)
    if t < best_t:
        u = work[_U]
        best = work[_BEST]
        for i in range(x.shape[0]):
            best[i] = u[i]
        return t
    return best_t


#: Rule-state class → compiled ``exact_move(rule, metric, budget, x, gx, out, work) -> cost``:
#: the cheapest move onto {g ≥ 0} without the search, for an agent at x with g(x) = gx < 0
#: (∞: none within budget, ``out`` = x), or NaN where it cannot tell (the search then runs).
#: A closed form lands with :func:`settle_move`; a bound alone may rule a move out. ``work``
#: rows from ``SCRATCH_ROWS`` on are the closed form's own.
EXACT_MOVES: dict[type, Any] = {}


@njit
def _no_exact_move(rule, metric, budget, x, gx, out, work):
    return math.nan


exact_move = dispatch_on_class(
    "exact_move", ("rule", "metric", "budget", "x", "gx", "out", "work"), EXACT_MOVES,
    "The cheapest move in closed form, ∞, or NaN to search (compiled-only; see EXACT_MOVES).",
    default=_no_exact_move)


@njit(**_OUTLINED)
def settle_move(rule, budget, x, t, out, work):
    """Land the move of length t from x towards ``out`` (a nearest boundary point a closed form
    found): pushed out by whole ulps until the rule's own test accepts it, as a lazy agent's
    move onto a linear threshold is (DESIGN §2). Returns its cost, ∞ if that is past the budget
    (``out`` = x), or NaN if the push does not reach an accepted point (the search then runs).
    The move's unit direction goes into ``work[3]``.
    """
    d = x.shape[0]
    best = work[_BEST]
    z = work[_Z]
    grad = work[_GRAD]
    if not t > 0.0:
        return math.nan
    for i in range(d):
        best[i] = (out[i] - x[i]) / t
        out[i] = x[i]
    bump = 4.0 * _EPS
    tiny = 5e-324
    for _ in range(40):
        if not within_budget(t, budget):
            return math.inf
        _point(x, t, best, z)
        if _g(rule, z, grad, False) >= 0.0:
            for i in range(d):
                out[i] = z[i]
            return t
        t = t * (1.0 + bump) + tiny
        bump *= 2.0
        tiny *= 2.0
    return math.nan


@njit(**_OUTLINED)
def minimal_move(rule, metric, budget, beta, x, out, work):
    """The cheapest move onto {g ≥ 0} if it costs at most ``budget``; returns its cost (∞: stay).

    ``rule`` is the rule's state (g through :func:`~.policies.rule_value`), ``metric`` the
    agents' model (an :class:`AgentsCore`, whose kind chooses the cost); ``beta`` the rule's
    linear part (a starting direction), ``work`` scratch of shape (:func:`scratch_rows` (d), d). The
    landing point goes into ``out`` (x if the agent stays) and the unit-cost direction of the
    move into ``work[3]``. A rule with a closed form (:data:`EXACT_MOVES`) is answered by it
    where it applies.
    """
    d = x.shape[0]
    grad = work[_GRAD]
    gx = work[_GX]
    u = work[_U]
    z = work[_Z]
    best = work[_BEST]
    hn = work[_HN]
    for i in range(d):
        out[i] = x[i]
    g0 = _g(rule, x, gx, False)
    if g0 >= 0.0 or not budget > 0.0:
        return math.inf
    cost = exact_move(rule, metric, budget, x, g0, out, work)
    if not math.isnan(cost):
        return cost
    for i in range(d):
        out[i] = x[i]
    _g(rule, x, gx, True)
    limit = SEARCH * budget
    best_t = math.inf
    for start in range(2):  # descend from ∇g(x), then from β
        for i in range(d):
            hn[i] = gx[i] if start == 0 else beta[i]
        if _unit_direction(metric, hn, u) > 0.0:
            best_t = _improve(rule, metric, x, limit, best_t, work)
    # The origin: norm-based rules (LinUCB's widths) are not differentiable there, and a
    # bandit LinUCB rule, positively homogeneous, has its apex there; descents only creep
    # towards such a corner.
    apex = math.inf
    for i in range(d):
        z[i] = 0.0
    if _g(rule, z, grad, False) >= 0.0:
        apex = _apex_cost(metric, x, work)
        if not apex > 0.0:
            apex = math.inf
    # Globalize: a probe direction accepted just short of the best cost so far leads to a
    # strictly cheaper move; descend from it, and go on probing at the new best cost.
    k = 0
    while k < PROBES:
        reach = min(best_t, apex, limit) * (1.0 - PROBE_GAIN)
        while k < PROBES:
            _probe_direction(k, hn)
            k += 1
            if _unit_direction(metric, hn, u) > 0.0:
                _point(x, reach, u, z)
                if _g(rule, z, grad, False) >= 0.0:
                    best_t = _improve(rule, metric, x, reach, best_t, work)
                    break
    if apex < best_t:
        if not within_budget(apex, budget):
            return math.inf
        for i in range(d):
            out[i] = 0.0
            best[i] = -x[i] / apex
        return apex
    if not within_budget(best_t, budget):
        return math.inf
    _point(x, best_t, best, out)
    return best_t


@njit(inline="always")
def _respond_rule_lazy(model, rng, rule, beta, x, out, work):
    if _honest(model, rng):
        return _stay(x, out)
    return minimal_move(rule, model, model.delta, beta, x, out, work) < math.inf


@njit(inline="always")
def _respond_rule_heterogeneous(model, rng, rule, beta, x, out, work):
    honest = _honest(model, rng)
    budget = model.low + (model.delta - model.low) * uniform(rng)
    if honest:
        return _stay(x, out)
    return minimal_move(rule, model, budget, beta, x, out, work) < math.inf


@njit(inline="always")
def _respond_rule_ellipsoid(model, rng, rule, beta, x, out, work):
    if _honest(model, rng):
        return _stay(x, out)
    return minimal_move(rule, model, model.delta, beta, x, out, work) < math.inf


@njit(inline="always")
def _respond_rule_subset(model, rng, rule, beta, x, out, work):
    if _honest(model, rng):
        return _stay(x, out)
    return minimal_move(rule, model, model.delta, beta, x, out, work) < math.inf


@njit(inline="always")
def _respond_rule_trembling(model, rng, rule, beta, x, out, work):
    honest = _honest(model, rng)
    u = 1.0 if model.adversarial else uniform(rng)
    if honest:
        return _stay(x, out)
    cost = minimal_move(rule, model, model.delta, beta, x, out, work)
    if cost == math.inf:
        return False
    # Overshoot along the move's direction, as against a linear rule. Past a non-linear
    # boundary the ray may leave the accepted set again: halve the overshoot until accepted
    # (after 60 halvings the agent keeps its minimal move).
    overshoot = u * min(model.delta - cost, model.tremble)
    direction = work[_BEST]
    z = work[_Z]
    grad = work[_GRAD]
    for _ in range(60):
        if not overshoot > 0.0:
            break
        _point(x, cost + overshoot, direction, z)
        if _g(rule, z, grad, False) >= 0.0:
            for i in range(x.shape[0]):
                out[i] = z[i]
            break
        overshoot *= 0.5
    return True


@njit
def _respond_rule(model, rng, rule, beta, x, out, work):
    kind = model.kind
    if kind == TREMBLING:
        return _respond_rule_trembling(model, rng, rule, beta, x, out, work)
    if kind == HETEROGENEOUS:
        return _respond_rule_heterogeneous(model, rng, rule, beta, x, out, work)
    if kind == ELLIPSOID:
        return _respond_rule_ellipsoid(model, rng, rule, beta, x, out, work)
    if kind == SUBSET:
        return _respond_rule_subset(model, rng, rule, beta, x, out, work)
    return _respond_rule_lazy(model, rng, rule, beta, x, out, work)


#: Compiled agent-model class → compiled respond_rule(model, rng, rule, beta, x, out, work) ->
#: moved; every built-in model reaches compiled code as an AgentsCore.
RESPOND_RULE = {AgentsCore: _respond_rule}


respond_rule = dispatch_on_class(
    "respond_rule", ("model", "rng", "rule", "beta", "x", "out", "work"), RESPOND_RULE,
    "Agent's reported context against a general rule into ``out``; whether it moved "
    "(compiled-only; ``work`` is scratch of shape (``SCRATCH_ROWS``, d)).")


def check_supported(model: Any, who: str) -> None:
    """Raise a one-line ValueError if agents of ``model`` cannot answer a general rule."""
    if type(compiled_agents(model)) not in RESPOND_RULE:
        allowed = [cls.name for cls in MODELS if AgentsCore in RESPOND_RULE]
        allowed += [getattr(cls, "name", cls.__name__) for cls in RESPOND_RULE
                    if cls is not AgentsCore]
        raise ValueError(f"agents {getattr(model, 'name', type(model).__name__)!r} have no "
                         f"numerical best response to the non-linear rules of {who}; "
                         f"allowed agents: {', '.join(allowed) or 'none'}")


def respond_to_rule(model: Any, policy: GeneralRule, x: np.ndarray,
                    rng: np.random.Generator | None = None) -> tuple[np.ndarray, bool]:
    """One agent's response to a general rule, from Python; returns (x_observed, moved).

    Examples
    --------
    The rule of :class:`~strategic_apple_tasting.learners.LinUCB` before any data, with
    r0 = 0.5, accepts outside the ball of radius 0.5 (UCB = α‖x‖/√λ): an agent at distance
    0.4 moves radially onto it.

    >>> import numpy as np
    >>> from strategic_apple_tasting.game import LazyBestResponse
    >>> from strategic_apple_tasting.learners import LinUCB
    >>> learner = LinUCB(r0=0.5, feedback="apple").reset(2)
    >>> x_obs, moved = respond_to_rule(LazyBestResponse(delta=0.2), learner.policy(),
    ...                                np.array([0.4, 0.0]))
    >>> moved, round(float(x_obs[0]), 9), float(x_obs[1])
    (True, 0.5, 0.0)
    """
    check_supported(model, "the learner")
    rng = np.random.default_rng() if rng is None else rng
    x = np.ascontiguousarray(x, dtype=float)
    out = np.empty(len(x))
    core = compiled_agents(model)
    work = np.empty((scratch_rows(len(x)), len(x)))
    respond = RESPOND_RULE[type(core)]
    beta = np.ascontiguousarray(policy.beta, dtype=float)
    if policy.twin is not None:
        # The twin's accepted set is inside the rule's: a mover lands where the rule accepts,
        # unless the two computations' rounding is wider than the margin; then the rule itself
        # answers, from the same random numbers.
        mark = _mark(rng)
        moved = respond(core, rng, policy.twin, beta, x, out, work)
        if not moved or policy.accepts(out):
            return out, bool(moved)
        _rewind(rng, mark)
    moved = respond(core, rng, policy.state, beta, x, out, work)
    return out, bool(moved)


def _mark(source: Any) -> Any:
    """Where a source of random numbers stands (a Generator's state, or how many uniforms drawn
    ahead have been taken)."""
    if isinstance(source, np.random.Generator):
        return source.bit_generator.state
    return int(source.taken[0])


def _rewind(source: Any, mark: Any) -> None:
    if isinstance(source, np.random.Generator):
        source.bit_generator.state = mark
    else:
        source.taken[0] = mark
