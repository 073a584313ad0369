"""Agent models: how an agent with true context x answers a published policy (`def:br`).

Like context models, an agent model is an immutable ``NamedTuple`` of its parameters. Compiled
code reaches a model's behaviour through functions dispatched on the class of its compiled form:

* :func:`respond` (the environment): the agent's reported context and whether it moved,
* :func:`reach` (a learner's belief): the most score ⟨β, x'⟩ − ⟨β, x⟩ an agent can gain, the
  shift of a strategy-aware threshold (δ‖β‖, or δ·sqrt(βᵀA⁻¹β) under an ellipsoidal cost),
* :func:`clean_margin` (a learner's belief): how far above the threshold a point must lie to be
  certainly unmoved (0 for lazy agents, γ‖β‖ under a γ-trembling hand, `cond:clean-app`).

Every model has ``delta`` (the budget) and ``truthful`` (the chance an agent does not game).

Compiled code receives every built-in model as one type, :class:`AgentsCore` (its
``compiled()``), whose ``kind`` chooses the model's arithmetic at run time: the engine's loop and
a learner's kernels (whose state holds the agent model it believes in) are then compiled once
for all five models, not once for each. The branch costs nothing measurable in the loop
(`benchmarks/RESULTS.md`), and each model's arithmetic is the same as when it was its own type.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from .._jit import NO_NRT, dispatch_on_class, njit
from .policies import norm, score

_EPS = 2.220446049250313e-16
#: Relative slack on a budget: `def:br` allows a move of exactly δ, and a move whose length
#: rounding has made a few ulps longer than δ (1e-17 for δ = 0.1) is such a tie, not a refusal.
BUDGET_SLACK = 16 * _EPS


@njit(inline="always")
def within_budget(cost, budget):
    """Whether a move of this cost is within budget, ties settled for the agent (False for NaN)."""
    return cost <= budget * (1.0 + BUDGET_SLACK)


@njit(inline="always")
def lazy_move(beta, threshold, budget, x, out):
    """Lazy best response to (β, c) within an ℓ2 budget; returns whether the agent moved.

    A rejected agent that can reach the boundary moves straight along β/‖β‖ onto it. The landing
    point is then pushed out by whole ulps until :func:`score` accepts it, so a mover is always
    accepted whatever the rounding (DESIGN §2, "Floating point"); the push is a few ulps of the
    step, so the budget holds to relative precision 1e-12. A needed distance that rounding
    puts a few ulps past the budget is a tie, and the agent moves (:func:`within_budget`).
    """
    d = x.shape[0]
    for i in range(d):
        out[i] = x[i]
    s = score(beta, x)
    if s >= threshold:
        return False
    nb = norm(beta)
    if nb == 0.0:
        return False
    step = (threshold - s) / nb
    if not within_budget(step, budget):
        return False
    bump = 4.0 * _EPS
    tiny = 5e-324  # the smallest subnormal: escapes a step of 0 without overshooting a tiny one
    for _ in range(200):
        for i in range(d):
            out[i] = x[i] + step * (beta[i] / nb)
        if score(beta, out) >= threshold:
            return True
        step = step * (1.0 + bump) + tiny
        bump *= 2.0
        tiny *= 2.0
    for i in range(d):  # unreachable in floating point; stay put rather than lie
        out[i] = x[i]
    return False


def _check_common(model) -> None:
    if not (isinstance(model.delta, int | float) and not isinstance(model.delta, bool)
            and math.isfinite(model.delta) and model.delta >= 0):
        raise ValueError(f"delta must be a finite number >= 0, got {model.delta!r}")
    if not (isinstance(model.truthful, int | float) and not isinstance(model.truthful, bool)
            and 0 <= model.truthful <= 1):
        raise ValueError(f"truthful must be a probability in [0, 1], got {model.truthful!r}")


def _settings(model) -> dict:
    """The model's own scalar settings, for results tables (delta and truthful excluded)."""
    return {k: v for k, v in model._asdict().items()
            if k not in ("delta", "truthful") and isinstance(v, int | float)}


def _respond_once(model, beta, threshold, x, rng=None):
    """The response of one agent, from Python; returns (x_observed, moved)."""
    rng = np.random.default_rng() if rng is None else rng
    out = np.empty(len(x))
    core = compiled_agents(model)
    moved = RESPOND[type(core)](core, rng, np.ascontiguousarray(beta, dtype=float),
                                float(threshold), np.ascontiguousarray(x, dtype=float), out)
    return out, bool(moved)

#: ``AgentsCore.kind`` of each built-in model.
LAZY, TREMBLING, HETEROGENEOUS, ELLIPSOID, SUBSET = 0, 1, 2, 3, 4


class AgentsCore(NamedTuple):
    """An agent model as compiled code receives it (``model.compiled()``): one type for the five
    built-in models, ``kind`` choosing the arithmetic. Fields a model does not have are 0
    (``cost_inv`` an empty matrix, ``gameable`` an empty mask).

    It is a function of the model's parameters only: a saved learner's state is rebuilt with
    the one its parameters give (:mod:`..persistence`).

    Examples
    --------
    >>> core = TremblingHand(delta=0.2, tremble=0.05).compiled()
    >>> core.kind == TREMBLING, core.delta, core.cost_inv.shape
    (True, 0.2, (0, 0))
    """

    kind: int
    delta: float
    truthful: float
    tremble: float
    adversarial: bool
    low: float
    cost_inv: np.ndarray  # A⁻¹ of an ellipsoidal cost, (d, d); (0, 0) for the other models
    gameable: np.ndarray  # subset gaming's mask of G, (d,) booleans; (0,) for the other models

    from_parameters = True  # rebuilt from the learner's parameters when a learner is loaded


def _core(model, kind: int, tremble: float = 0.0, adversarial: bool = False, low: float = 0.0,
          cost_inv=None, gameable=None) -> AgentsCore:
    matrix = np.zeros((0, 0)) if cost_inv is None else np.array(cost_inv, dtype=float, order="C")
    mask = (np.zeros(0, dtype=np.bool_) if gameable is None
            else np.array(gameable, dtype=np.bool_, order="C"))
    return AgentsCore(kind, float(model.delta), float(model.truthful), float(tremble),
                      bool(adversarial), float(low), matrix, mask)


class LazyBestResponse(NamedTuple):
    """Agents that move the least distance needed to be accepted, if within budget ``delta``.

    With probability ``truthful`` an agent reports its context unchanged. Moved contexts are
    not projected back into the ball.

    Examples
    --------
    >>> import numpy as np
    >>> agents = LazyBestResponse(delta=0.5)
    >>> x_obs, moved = agents.respond_once(np.array([1.0, 0.0]), 0.5, np.array([0.2, 0.1]))
    >>> moved, float(x_obs[0]) >= 0.5
    (True, True)
    """

    delta: float = 0.1
    truthful: float = 0.0

    name = "lazy"
    check = _check_common
    settings = _settings
    respond_once = _respond_once

    def compiled(self) -> AgentsCore:
        """This model as compiled code receives it."""
        return _core(self, LAZY)


class TremblingHand(NamedTuple):
    """γ-trembling hand (`app:trembling`): a mover overshoots the boundary by α.

    α ∈ [0, min(δ − m, γ)] for a mover that needed distance m. It is uniform on that interval,
    or its maximum when ``adversarial``; the uniform is drawn every round (used or not) so that
    all learners meet the same agents.

    Examples
    --------
    >>> import numpy as np
    >>> agents = TremblingHand(delta=0.5, tremble=0.1, adversarial=True)
    >>> x_obs, moved = agents.respond_once(np.array([1.0, 0.0]), 0.5, np.array([0.2, 0.0]))
    >>> round(float(x_obs[0]), 12)
    0.6
    """

    delta: float = 0.1
    truthful: float = 0.0
    tremble: float = 0.05
    adversarial: bool = False

    name = "trembling"
    settings = _settings
    respond_once = _respond_once

    def compiled(self) -> AgentsCore:
        """This model as compiled code receives it."""
        return _core(self, TREMBLING, tremble=self.tremble, adversarial=self.adversarial)

    def check(self) -> None:
        _check_common(self)
        if not (isinstance(self.tremble, int | float) and math.isfinite(self.tremble)
                and self.tremble >= 0):
            raise ValueError(f"tremble must be a finite number >= 0, got {self.tremble!r}")


class HeterogeneousBudgets(NamedTuple):
    """Lazy agents whose budgets δ_t are drawn uniformly from [``low``, ``delta``], one per agent.

    A learner that believes this model shifts by the largest budget, ``delta``.

    Examples
    --------
    >>> HeterogeneousBudgets(delta=0.3, low=0.1).name
    'heterogeneous'
    """

    delta: float = 0.1
    truthful: float = 0.0
    low: float = 0.0

    name = "heterogeneous"
    settings = _settings
    respond_once = _respond_once

    def compiled(self) -> AgentsCore:
        """This model as compiled code receives it."""
        return _core(self, HETEROGENEOUS, low=self.low)

    def check(self) -> None:
        _check_common(self)
        if not (isinstance(self.low, int | float) and 0 <= self.low <= self.delta):
            raise ValueError(f"low must be a number in [0, delta={self.delta!r}], "
                             f"got {self.low!r}")


class EllipsoidalCost(NamedTuple):
    """Lazy agents with budget ‖A^{1/2}(x' − x)‖ ≤ δ for a known positive definite A (footnote 2).

    The cheapest move to the boundary is along A⁻¹β and can raise the score by at most
    δ·sqrt(βᵀA⁻¹β), which replaces δ‖β‖ in strategy-aware thresholds. Build it with
    :meth:`from_cost` (which inverts and checks A).

    Examples
    --------
    >>> import numpy as np
    >>> agents = EllipsoidalCost.from_cost(np.diag([4.0, 1.0]), delta=0.2)
    >>> agents.cost_inv.tolist()
    [[0.25, 0.0], [0.0, 1.0]]
    """

    delta: float = 0.1
    truthful: float = 0.0
    cost_inv: np.ndarray | None = None

    name = "ellipsoid"
    respond_once = _respond_once

    def compiled(self) -> AgentsCore:
        """This model as compiled code receives it."""
        return _core(self, ELLIPSOID, cost_inv=self.cost_inv)

    def settings(self) -> dict:
        """The cost A for results tables, as text: ``"diag(4, 1)"`` or its rows."""
        if self.cost_inv is None:
            return {}
        a = np.round(np.linalg.inv(self.cost_inv), 10) + 0.0  # + 0.0: no "-0"
        if np.array_equal(a, np.diag(np.diag(a))):
            return {"cost": f"diag({', '.join(f'{v:g}' for v in np.diag(a))})"}
        return {"cost": "; ".join(", ".join(f"{v:g}" for v in row) for row in a)}

    @classmethod
    def from_cost(cls, cost, delta: float = 0.1, truthful: float = 0.0) -> EllipsoidalCost:
        a = np.asarray(cost, dtype=float)
        if a.ndim != 2 or a.shape[0] != a.shape[1] or not np.all(np.isfinite(a)):
            raise ValueError(f"cost must be a finite square matrix, got shape {a.shape}")
        if not np.allclose(a, a.T, rtol=1e-12, atol=0):
            raise ValueError("cost must be symmetric")
        if np.linalg.eigvalsh(a).min() <= 0:
            raise ValueError("cost must be positive definite")
        inv = np.linalg.inv(a)
        return cls(delta=delta, truthful=truthful, cost_inv=(inv + inv.T) / 2)

    def check(self) -> None:
        _check_common(self)
        if self.cost_inv is None:
            raise ValueError("cost must be given: use EllipsoidalCost.from_cost(A, delta=...)")


class SubsetGaming(NamedTuple):
    """Lazy agents that can move only the features where ``gameable`` is True, within ``delta``.

    A move v costs ‖v‖ if it stays in the gameable features G and is impossible otherwise. The
    cheapest move that raises ⟨β, x⟩ by g is g·β_G/‖β_G‖² (Cauchy–Schwarz on the coordinates
    in G), of cost g/‖β_G‖: an agent moves iff c − ⟨β, x⟩ ≤ δ‖β_G‖, and a strategy-aware
    rule shifts by δ‖β_G‖. It is the ellipsoidal cost with A⁻¹ = diag(1_G) (whose A is
    infinite off G), computed in O(d) and to the same bits as that model; unlike it, it
    describes itself in results tables: which features are gameable, by name where the data
    has names (:meth:`named_settings`).

    Examples
    --------
    >>> import numpy as np
    >>> agents = SubsetGaming(delta=0.5, gameable=np.array([False, True]))
    >>> x_obs, moved = agents.respond_once(np.array([1.0, 1.0]), 0.4, np.zeros(2))
    >>> moved, float(x_obs[0]), round(float(x_obs[1]), 12)
    (True, 0.0, 0.4)
    >>> agents.named_settings(("income", "cash"))
    {'gameable': 'cash'}
    """

    delta: float = 0.1
    truthful: float = 0.0
    gameable: np.ndarray | None = None

    name = "subset"
    respond_once = _respond_once

    def compiled(self) -> AgentsCore:
        """This model as compiled code receives it."""
        return _core(self, SUBSET, gameable=self.gameable)

    def settings(self) -> dict:
        """The gameable features by index (``"x1, x3"``), or ``"none"``."""
        return self.named_settings(())

    def named_settings(self, names: tuple[str, ...]) -> dict:
        """The gameable features by name (by index ``x<i>`` where there are no names)."""
        if self.gameable is None:
            return {}
        index = np.flatnonzero(self.gameable)
        shown = [names[i] if names else f"x{i}" for i in index]
        return {"gameable": ", ".join(shown) or "none"}

    def check(self) -> None:
        _check_common(self)
        g = self.gameable
        if not (isinstance(g, np.ndarray) and g.ndim == 1 and g.dtype == np.bool_):
            raise ValueError(f"gameable must be a 1-D boolean array (a mask of the gameable "
                             f"features), got {type(g).__name__} of shape "
                             f"{getattr(g, 'shape', None)}")

    def check_dimension(self, d: int) -> None:
        """Refuse a mask of another dimension than the game's (called by the game)."""
        if self.gameable.shape != (d,):
            raise ValueError(f"gameable must have one entry per feature ({d}), got "
                             f"{self.gameable.shape[0]}")


class Uniforms(NamedTuple):
    """Uniform draws of an agents' stream made ahead of time, which compiled code takes in
    order where it would call the stream's ``random()`` (:func:`uniform`): the Python side of
    the game passes them instead of the Generator, whose every crossing into compiled code
    costs microseconds (numba looks up its C functions each time). The values are the
    stream's, in its order, so the agents are the same."""

    values: np.ndarray  # float64
    taken: np.ndarray  # int64 (1,): how many have been used


def uniform(source):
    """The next uniform double of ``source``: a Generator's ``random()`` or the next of a
    :class:`Uniforms` (compiled-only)."""
    raise NotImplementedError("uniform is compiled-only")


@overload(uniform, inline="always")
def _uniform_overload(source):
    if isinstance(source, types.NumPyRandomGeneratorType):
        return lambda source: source.random()
    if isinstance(source, types.BaseNamedTuple) and source.instance_class is Uniforms:
        def take(source):
            i = source.taken[0]
            source.taken[0] = i + 1
            return source.values[i]
        return take
    return None


def draws_per_round(model) -> int:
    """How many uniforms an agent of ``model`` (compiled form) draws each round, whatever the
    rule: the truthful coin, the trembling overshoot, the heterogeneous budget."""
    if type(model) is not AgentsCore:
        raise ValueError(f"draws_per_round needs a built-in agent model, got {model!r}")
    coin = 1 if 0.0 < model.truthful < 1.0 else 0
    if model.kind == TREMBLING:
        return coin + (0 if model.adversarial else 1)
    return coin + (1 if model.kind == HETEROGENEOUS else 0)


@njit(inline="always")
def _honest(model, rng):
    # The coin is drawn every round whatever the policy, so every learner meets the same agents.
    if 0.0 < model.truthful < 1.0:
        return uniform(rng) < model.truthful
    return model.truthful >= 1.0


@njit(inline="always")
def _stay(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i]
    return False


# The lazy response (the paper's, and the common case) is inlined into the engine's loop; the
# other models' are compiled once each, as functions of their own, and called from the switch:
# all four inlined (with the five context models' draws) made numba's inliner, which retypes
# the loop at each site, take ten times as long to compile it for the same machine code.
_OUTLINED = {"inline": "never", **NO_NRT}


@njit(inline="always")
def _respond_lazy(model, rng, beta, threshold, x, out):
    if _honest(model, rng):
        return _stay(x, out)
    return lazy_move(beta, threshold, model.delta, x, out)


@njit(**_OUTLINED)
def _respond_trembling(model, rng, beta, threshold, x, out):
    honest = _honest(model, rng)
    u = 1.0 if model.adversarial else uniform(rng)
    if honest:
        return _stay(x, out)
    if not lazy_move(beta, threshold, model.delta, x, out):
        return False
    nb = norm(beta)
    m = (threshold - score(beta, x)) / nb
    overshoot = u * min(model.delta - m, model.tremble)
    if overshoot > 0.0:
        for i in range(x.shape[0]):
            out[i] += overshoot * (beta[i] / nb)
        if score(beta, out) < threshold:  # cannot happen going further in; stay safe anyway
            lazy_move(beta, threshold, model.delta, x, out)
    return True


@njit(**_OUTLINED)
def _respond_heterogeneous(model, rng, beta, threshold, x, out):
    honest = _honest(model, rng)
    budget = model.low + (model.delta - model.low) * uniform(rng)
    if honest:
        return _stay(x, out)
    return lazy_move(beta, threshold, budget, x, out)


def metric_quadratic(metric, beta):
    """βᵀMβ for M = A⁻¹ (a matrix) or diag(1_G) (the boolean mask of G), summed in index order
    (compiled-only). For the mask it is ‖β_G‖², to the bit the matrix diag(1_G)'s value: that
    one's off-G terms add zeros."""
    raise NotImplementedError("metric_quadratic is compiled-only")


def _is_mask(metric) -> bool:
    return isinstance(metric, types.Array) and isinstance(metric.dtype, types.Boolean)


@overload(metric_quadratic, inline="always")
def _metric_quadratic_overload(metric, beta):
    if _is_mask(metric):
        def subset(metric, beta):
            q = 0.0
            for i in range(beta.shape[0]):
                if metric[i]:
                    q += beta[i] * beta[i]
            return q
        return subset

    def matrix(metric, beta):
        q = 0.0
        for i in range(beta.shape[0]):
            for j in range(beta.shape[0]):
                q += beta[i] * metric[i, j] * beta[j]
        return q
    return matrix


def metric_direction(metric, beta, i):
    """(Mβ)_i, the i-th coordinate of the cheapest move's direction (compiled-only)."""
    raise NotImplementedError("metric_direction is compiled-only")


@overload(metric_direction, inline="always")
def _metric_direction_overload(metric, beta, i):
    if _is_mask(metric):
        # β_i on G, 0 off it: the matrix diag(1_G)'s row sum below, to the bit.
        return lambda metric, beta, i: beta[i] if metric[i] else 0.0

    def matrix(metric, beta, i):
        direction = 0.0
        for j in range(beta.shape[0]):
            direction += metric[i, j] * beta[j]
        return direction
    return matrix


@njit(inline="always")
def _metric_move(metric, budget, beta, threshold, x, out):
    """The cheapest move onto the boundary under the metric M (ellipsoidal cost A⁻¹, or subset
    gaming's diag(1_G)): along Mβ, of cost gain/sqrt(βᵀMβ), made if within budget."""
    s = score(beta, x)
    if s >= threshold:
        return _stay(x, out)
    q = metric_quadratic(metric, beta)
    if q <= 0.0:
        return _stay(x, out)
    gain = threshold - s
    if not within_budget(gain / math.sqrt(q), budget):
        return _stay(x, out)
    d = x.shape[0]
    step = gain / q
    bump = 4.0 * _EPS
    tiny = 5e-324
    for _ in range(200):  # as lazy_move: push out by ulps until accepted
        for i in range(d):
            out[i] = x[i] + step * metric_direction(metric, beta, i)
        if score(beta, out) >= threshold:
            return True
        step = step * (1.0 + bump) + tiny
        bump *= 2.0
        tiny *= 2.0
    return _stay(x, out)


@njit(**_OUTLINED)
def _respond_ellipsoid(model, rng, beta, threshold, x, out):
    if _honest(model, rng):
        return _stay(x, out)
    return _metric_move(model.cost_inv, model.delta, beta, threshold, x, out)


@njit(**_OUTLINED)
def _respond_subset(model, rng, beta, threshold, x, out):
    if _honest(model, rng):
        return _stay(x, out)
    return _metric_move(model.gameable, model.delta, beta, threshold, x, out)


@njit(inline="always")
def _respond(model, rng, beta, threshold, x, out):
    kind = model.kind
    if kind == LAZY:
        return _respond_lazy(model, rng, beta, threshold, x, out)
    if kind == TREMBLING:
        return _respond_trembling(model, rng, beta, threshold, x, out)
    if kind == HETEROGENEOUS:
        return _respond_heterogeneous(model, rng, beta, threshold, x, out)
    if kind == ELLIPSOID:
        return _respond_ellipsoid(model, rng, beta, threshold, x, out)
    return _respond_subset(model, rng, beta, threshold, x, out)


@njit
def _reach(model, beta):
    if model.kind == ELLIPSOID:
        return model.delta * math.sqrt(metric_quadratic(model.cost_inv, beta))
    if model.kind == SUBSET:
        return model.delta * math.sqrt(metric_quadratic(model.gameable, beta))
    return model.delta * norm(beta)


@njit(inline="always")
def _clean_margin(model, beta):
    if model.kind == TREMBLING:
        return model.tremble * norm(beta)
    return 0.0


@njit(inline="always")
def _budget(model, rng):
    honest = _honest(model, rng)
    budget = model.delta
    if model.kind == TREMBLING:
        if not model.adversarial:
            uniform(rng)  # the overshoot draw of _respond_trembling
    elif model.kind == HETEROGENEOUS:
        budget = model.low + (model.delta - model.low) * uniform(rng)
    return 0.0 if honest else budget


#: The built-in agent models.
MODELS = (LazyBestResponse, TremblingHand, HeterogeneousBudgets, EllipsoidalCost,
          SubsetGaming)
#: Compiled agent-model class → compiled respond(model, rng, beta, threshold, x, out) -> moved.
#: Every built-in model reaches compiled code as an :class:`AgentsCore`.
RESPOND = {AgentsCore: _respond}
#: Compiled agent-model class → compiled reach(model, beta): the largest gain from gaming.
REACH = {AgentsCore: _reach}
#: Compiled agent-model class → compiled clean_margin(model, beta).
CLEAN_MARGIN = {AgentsCore: _clean_margin}
#: Compiled agent-model class → compiled budget(model, rng): this agent's budget (0 if
#: truthful), drawing exactly what ``respond`` draws, so a replay meets the same agents as
#: every learner.
BUDGET = {AgentsCore: _budget}

#: Name (as on the command line) → agent model class.
AGENTS = {cls.name: cls for cls in MODELS}


def compiled_agents(model):
    """``model`` as compiled code receives it: a built-in model's :class:`AgentsCore`, or the
    model itself (one registered in the tables above under its own class)."""
    compiled = getattr(model, "compiled", None)
    return model if compiled is None else compiled()


def is_agent_model(model) -> bool:
    """Whether ``model`` is an agent model: a built-in one or one registered in :data:`RESPOND`."""
    return type(model) in MODELS or type(model) in RESPOND


def induces_every_halfspace(model) -> bool:
    """Whether every half-space of true contexts is the accepted set of some linear threshold.

    True when all agents share one budget and either all game or none do (DESIGN §2): then a
    policy (β, c) accepts exactly {⟨β, x⟩ ≥ c − reach(β)} (overshooting movers are still
    accepted), the best policy induces the pointwise optimum, and Stackelberg regret equals
    strategic regret. False with heterogeneous budgets or a truthful fraction strictly in (0, 1).

    Examples
    --------
    >>> induces_every_halfspace(LazyBestResponse(delta=0.2)), induces_every_halfspace(
    ...     LazyBestResponse(delta=0.2, truthful=0.3))
    (True, False)
    """
    if model.delta == 0 or model.truthful == 1:
        return True  # nobody moves
    if model.truthful != 0:
        return False
    return getattr(model, "low", model.delta) == model.delta


respond = dispatch_on_class(
    "respond", ("model", "rng", "beta", "threshold", "x", "out"), RESPOND,
    "Write agent's reported context into ``out``; return whether it moved (compiled-only).")
reach = dispatch_on_class(
    "reach", ("model", "beta"), REACH,
    "The largest gain in score ⟨β, ·⟩ an agent of ``model`` can buy (compiled-only).")
agent_budget = dispatch_on_class(
    "agent_budget", ("model", "rng"), BUDGET,
    "This round's agent's budget, 0 if it is truthful (compiled-only; draws as ``respond``).")
clean_margin = dispatch_on_class(
    "clean_margin", ("model", "beta"), CLEAN_MARGIN,
    "Band above the threshold in which a point may have moved (compiled-only).")


def with_row_budget(model, budgets, row):
    """The agent of data row ``row``: ``model`` with budget ``budgets[row]`` (per-group budgets
    of a data game, each row its group's; ``budgets`` empty: ``model`` itself). Compiled-only;
    a built-in model (:class:`AgentsCore`) only, any other model is returned as it is (a game
    refuses per-group budgets for it)."""
    raise NotImplementedError("with_row_budget is compiled-only")


@overload(with_row_budget, inline="always")
def _with_row_budget_overload(model, budgets, row):
    if not (isinstance(model, types.BaseNamedTuple) and model.instance_class is AgentsCore):
        return lambda model, budgets, row: model

    def rebudget(model, budgets, row):
        if budgets.shape[0] == 0:
            return model
        # The same model with its delta replaced: every response then runs the arithmetic it
        # runs for a game of that one budget, so the two engine paths agree to the bit.
        return AgentsCore(model.kind, budgets[row], model.truthful, model.tremble,
                          model.adversarial, model.low, model.cost_inv, model.gameable)
    return rebudget
