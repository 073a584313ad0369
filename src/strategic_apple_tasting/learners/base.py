"""The learner protocol (DESIGN §5), in two tiers, and the tables through which compiled code
reaches compiled learners.

**Every learner** is a Python object holding hyperparameters (stored as given) that plays the
per-round API: :meth:`Learner.reset`, then each round :meth:`~Learner.policy` (the rule published
for the round), :meth:`~Learner.act` and :meth:`~Learner.update` (the round's feedback), and
:meth:`~Learner.estimate`. Behind those, a learner gives four hooks:

* ``_init_state(d)``: the state for contexts of dimension d (``self._rng`` is the learner's
  Generator),
* ``_publish() -> LinearThreshold | GeneralRule``: this round's rule,
* ``_learn(rule, x_obs, accepted, reward) -> used``: learn from the feedback under the rule in
  force (``reward`` None when nothing was observed); returns whether the point entered the
  learner's data,
* ``_estimate() -> array | None``: the estimate of θ1 − θ0, if there is one.

A **plain-Python learner** writes those hooks; the engine runs it on its Python reference path
(:mod:`..engine.reference`). A **compiled learner** instead sets ``kernels``, a
:class:`LearnerKernels`: a ``NamedTuple`` state and compiled functions

* ``policy(state, rng, beta) -> threshold``: the linear threshold to commit to this round (β
  into ``beta``),
* ``update(state, rng, beta, threshold, x, accepted, reward, observed) -> used``,
* ``estimate(state, out) -> bool``: write the current estimate of θ1 − θ0, if there is one,

(a kernel compiled ``inline="always"`` with exactly these parameter names is inlined into the
engine's loop without a one-line caller to type: :func:`~.._jit.dispatch_on_class`),

and, for a rule that is not a linear threshold (LinUCB),

* ``rule(state, z, grad, need_grad) -> g(z)``: it accepts iff g(x') ≥ 0 (∇g into ``grad`` when
  ``need_grad``); ``policy`` then writes the rule's linear part, the start of agents'
  numerical best response (:mod:`..game.best_response`),
* ``linear(state) -> bool``: whether this round's rule is exactly the linear threshold that
  ``policy`` wrote (then agents respond in closed form, as to any other learner).

and, for a state whose values the kernels index by (counters, slots, phases), a Python

* ``check(state, template, where)``: raise ``ValueError`` naming the field if a state read from
  a saved file (already of the template's shapes and dtypes) breaks an invariant the kernels
  rely on (:meth:`Learner._check_state`).

The hooks of a compiled learner call these same functions, and so does the compiled engine
(through :func:`learner_policy` etc., resolved at compile time by the state's class): one
implementation of each algorithm, on both of the engine's paths.
"""

from __future__ import annotations

import functools
import inspect
import math
import threading
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._jit import dispatch_on_class, njit
from .._stamps import note_kernels
from ..game.agents import LazyBestResponse, is_agent_model
from ..game.best_response import check_supported
from ..game.game import FEEDBACK, check_number
from ..game.policies import RULES, GeneralRule, LinearThreshold
from .budget import BudgetBelief, estimating_belief, observe, parse_estimate
from .decisions import (
    Decision,
    DecisionDesk,
    DeskHooks,
    DeskRecord,
    PublishedRule,
)
from .inputs import INPUT_BOUND, all_finite, check_bound, check_vector
from .tags import LearnerTags
from .theorem import Theorem


@njit
def never_linear(state):
    """The ``linear`` of a learner whose rule is never a linear threshold."""
    return False


class LearnerKernels(NamedTuple):
    """A learner's compiled core: its state class and its compiled functions.

    ``rule`` and ``linear`` are given only by learners whose rule may be non-linear; the
    engine then compiles the general-rule path for them (``linear`` defaults to
    :func:`never_linear`). Every other learner keeps the linear-threshold path. ``check`` (plain
    Python) checks a state read from a saved file before any kernel sees it.
    """

    state: type
    policy: Callable
    update: Callable
    estimate: Callable
    rule: Callable | None = None
    linear: Callable | None = None
    check: Callable | None = None


_POLICY: dict[type, Callable] = {}
_UPDATE: dict[type, Callable] = {}
_ESTIMATE: dict[type, Callable] = {}
_LINEAR: dict[type, Callable] = {}


def has_rule(state_cls: type | None) -> bool:
    """Whether learners with this state class may publish a general (non-linear) rule."""
    return state_cls in RULES


learner_policy = dispatch_on_class(
    "learner_policy", ("state", "rng", "beta"), _POLICY,
    "Compiled-only: the learner's policy this round (β into ``beta``, returns c).")
learner_update = dispatch_on_class(
    "learner_update",
    ("state", "rng", "beta", "threshold", "x", "accepted", "reward", "observed"), _UPDATE,
    "Compiled-only: feed back one round; returns whether the point was used for learning.")
learner_estimate = dispatch_on_class(
    "learner_estimate", ("state", "out"), _ESTIMATE,
    "Compiled-only: write the estimate of θ1 − θ0 into ``out``; False if none yet.")
learner_linear = dispatch_on_class(
    "learner_linear", ("state",), _LINEAR,
    "Compiled-only: whether a general-rule learner's rule this round is its linear part.")


#: What the base class keeps on a learner (its dimension, generator, state, decision desk and
#: lock); the rest, besides its hyperparameters, is the learner's own (:meth:`Learner.
#: model_attributes`, which a saved file holds).
BASE_ATTRIBUTES = frozenset({"_d", "_rng", "_state", "_desk", "_lock"})

_PARAM_NAMES: dict[tuple[type, Any], tuple[str, ...]] = {}
_TAGS: dict[type, LearnerTags] = {}


def _param_names(cls: type) -> tuple[str, ...]:
    """The names of ``cls.__init__``'s parameters: read once per class (the per-round and
    decision API ask for them every round, and ``inspect.signature`` took a third of a
    plain-Python learner's round)."""
    key = (cls, cls.__init__)
    names = _PARAM_NAMES.get(key)
    if names is None:
        sig = inspect.signature(cls.__init__)
        names = _PARAM_NAMES[key] = tuple(p for p in sig.parameters if p != "self")
    return names


def serialized(method: Callable) -> Callable:
    """A public method of a learner, run while holding the learner's own lock: calls from
    several threads take turns, so the learner's state is always that of some serial order of
    them. The lock is reentrant (a public method may call another)."""
    @functools.wraps(method)
    def locked(self: Learner, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


def _nbytes(state: Any) -> int:
    """Bytes of every array in a state (namedtuples nest)."""
    if isinstance(state, np.ndarray):
        return int(state.nbytes)
    if isinstance(state, tuple):
        return sum(_nbytes(v) for v in state)
    return 0


class Learner:
    """Base class of every learner: hyperparameters in ``__init__``, state in :meth:`reset`.

    Subclasses set ``name`` (the name in results tables), ``strategy_aware`` (False for
    baselines that learn from points agents may have gamed) and either ``kernels`` (a compiled
    learner) or the hooks ``_publish`` and ``_learn`` (a plain-Python learner; ``nonlinear =
    True`` if it may publish a :class:`~strategic_apple_tasting.game.GeneralRule`), and
    implement ``_init_state(d)``. ``delta``, ``r0``, ``feedback``, ``agents``, ``sigma`` and
    ``horizon`` left as ``None`` are taken from the game by :meth:`bind`; the per-round API needs
    ``r0`` and ``feedback`` set (``agents`` defaults to lazy agents, whose budget ``delta``
    overrides).

    Examples
    --------
    A plain-Python learner that accepts above a fixed score:

    >>> import numpy as np
    >>> from strategic_apple_tasting.game import LinearThreshold
    >>> class Fixed(Learner):
    ...     name = "fixed"
    ...     strategy_aware = False
    ...     def __init__(self, threshold=0.0):
    ...         self.threshold = threshold
    ...     def _init_state(self, d):
    ...         return None
    ...     def _publish(self):
    ...         return LinearThreshold(beta=np.ones(self._d), threshold=self.threshold)
    ...     def _learn(self, rule, x_obs, accepted, reward):
    ...         return False
    >>> learner = Fixed(threshold=0.5).reset(2, rng=0)
    >>> learner.act([0.3, 0.3]), learner.update([0.3, 0.3], True, 1.0)
    (True, False)
    """

    name: ClassVar[str]
    #: The regret its theorem proves, and on what assumptions (None: the paper proves none).
    theorem: ClassVar[Theorem | None] = None
    #: The compiled core; None for a plain-Python learner.
    kernels: ClassVar[LearnerKernels | None] = None
    strategy_aware: ClassVar[bool] = True
    #: Whether the learner may publish a GeneralRule (agents answer it numerically, so the
    #: game's agent model must have a numerical best response; checked by :meth:`bind`).
    nonlinear: ClassVar[bool] = False
    #: Whether outcomes learned in any order leave the state that decision order leaves (to
    #: rounding): checked by :func:`strategic_apple_tasting.checks.check_outcomes_in_any_order`.
    outcomes_commute: ClassVar[bool] = True
    #: Arrays of the state or attributes (named as the loader names them: ``"state.history"``,
    #: ``"attribute._seen"``) whose shape changes during a run. A saved file's other arrays must
    #: have the template's shape exactly; these only its dtype and number of dimensions (check
    #: the rest in :meth:`_check_state`).
    variable_shapes: ClassVar[tuple[str, ...]] = ()
    #: State fields that ``policy`` sets and ``update`` reads (copied with each published
    #: rule and put back while learning from an outcome of a decision made under it).
    published_fields: ClassVar[tuple[str, ...]] = ()
    #: Whether a published rule stays valid while outcomes are learned. False for a learner
    #: whose rule reads its live model (the peer libraries' adapters): it must publish again
    #: after learning before it decides, and it cannot hold a rule for a period.
    holds_rules: ClassVar[bool] = True
    #: The largest magnitude of a feature or an outcome the API takes (``r0`` and ``delta``
    #: too): beyond it every entry refuses in one line, before any kernel. A learner whose
    #: arithmetic needs less sets a smaller one. The public check
    #: :func:`~strategic_apple_tasting.checks.check_stays_finite` feeds inputs at it (and 0,
    #: subnormal numbers, mixed scales, repeated and collinear points).
    input_bound: ClassVar[float] = INPUT_BOUND
    #: Whether the learner may be used from several threads at once. Every public method of
    #: the per-round and decision API (and ``reset``, ``save``, ``estimate``) holds the
    #: learner's own lock, made with the learner, so calls from several threads take turns and
    #: leave the state of some serial order of them. False for a learner whose published rule
    #: reads state that another call changes outside that lock (the peer adapters' rules call
    #: their library's live model): use such a learner from one thread at a time.
    thread_safe: ClassVar[bool] = True
    #: The feedback modes the learner learns under (a game or ``feedback`` parameter outside
    #: them is refused in one line).
    supported_feedback: ClassVar[tuple[str, ...]] = FEEDBACK

    def __new__(cls, *args: Any, **kwargs: Any) -> Learner:
        learner = super().__new__(cls)
        learner._lock = threading.RLock()
        return learner

    def __getstate__(self) -> dict[str, Any]:
        # A lock does not pickle, and a copy of a learner is a learner of its own: it gets a
        # new lock (__setstate__).
        state = self.__dict__.copy()
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kernels is None and "name" in cls.__dict__ and not (
                cls._publish is not Learner._publish and cls._learn is not Learner._learn):
            raise TypeError(f"learner {cls.__name__} must set kernels (a compiled learner) or "
                            "define _publish and _learn (a plain-Python learner)")
        kernels = cls.__dict__.get("kernels")
        if kernels is not None:
            cls.nonlinear = kernels.rule is not None
            note_kernels(kernels.state, [kernels.policy, kernels.update, kernels.estimate,
                                         kernels.rule, kernels.linear])
            _POLICY[kernels.state] = kernels.policy
            _UPDATE[kernels.state] = kernels.update
            _ESTIMATE[kernels.state] = kernels.estimate
            if kernels.rule is not None:
                RULES[kernels.state] = kernels.rule
                _LINEAR[kernels.state] = kernels.linear or never_linear
        _TAGS[cls] = LearnerTags.of(cls)  # a bad declaration is refused with the class

    @classmethod
    def tags(cls) -> LearnerTags:
        """What this learner class is (strategy-aware, nonlinear, its theorem, ...), collected
        from its class attributes into one object (:class:`~.tags.LearnerTags`): what the
        checks, the engine, the loader and the reports read."""
        tags = _TAGS.get(cls)
        if tags is None:
            tags = _TAGS[cls] = LearnerTags.of(cls)
        return tags

    @classmethod
    def check_configurations(cls) -> list[Learner]:
        """The instances the public checks (:mod:`strategic_apple_tasting.checks`) run this
        learner in: by default one, with default hyperparameters; a learner whose options take
        other code paths gives one instance for each."""
        return [cls()]

    # -- hyperparameters -------------------------------------------------------------------
    @classmethod
    def param_names(cls) -> list[str]:
        """The names of the hyperparameters (``__init__``'s parameters), in order."""
        return list(_param_names(cls))

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters, as given to the constructor."""
        return {p: getattr(self, p) for p in _param_names(type(self))}

    def clone(self, **overrides: Any) -> Learner:
        """A fresh, unreset learner with the same hyperparameters (some overridden)."""
        unknown = set(overrides) - set(self.param_names())
        if unknown:
            raise ValueError(f"{self.name} has no parameter {sorted(unknown)[0]!r}; "
                             f"allowed: {', '.join(self.param_names())}")
        return type(self)(**{**self.get_params(), **overrides})

    def bind(self, instance: Any, horizon: int | None = None) -> Learner:
        """A clone whose unset ``delta``, ``r0``, ``feedback``, ``agents`` (the learner's belief
        about how agents respond), ``sigma``, ``repaid`` and ``defaulted`` (for a game that
        declares its outcomes' rewards) and ``break_even_column`` (for one whose loans each have
        their own) are the game instance's, and whose unset ``horizon`` is
        the run's (for learners tuned to the horizon)."""
        game = instance.game
        # repaid, defaulted: the rewards of a game whose outcomes are loans (real data).
        known = {"delta": game.delta, "r0": game.r0, "feedback": game.feedback,
                 "agents": game.agents, "sigma": game.sigma, "horizon": horizon,
                 "repaid": getattr(game, "repaid", None),
                 "defaulted": getattr(game, "defaulted", None),
                 "break_even_column": getattr(game, "break_even_column", None)}
        params = self.get_params()
        fill = {k: v for k, v in known.items()
                if k in params and params[k] is None and v is not None}
        if params.get("feedback") not in (None, game.feedback):
            raise ValueError(f"learner {self.name} has feedback={params['feedback']!r} "
                             f"but the game has feedback={game.feedback!r}")
        tags = self.tags()
        if game.feedback not in tags.feedback:
            raise ValueError(f"learner {self.name} learns under feedback "
                             f"{', '.join(tags.feedback)} only, but the game has "
                             f"feedback={game.feedback!r}")
        if tags.nonlinear:
            check_supported(game.agents, self.name)
        return self.clone(**fill)

    def _belief(self) -> Any:
        """The agent model this learner assumes: ``agents`` (default lazy) with ``delta``."""
        params = self.get_params()
        model = params.get("agents")
        model = LazyBestResponse() if model is None else model
        if not is_agent_model(model):
            raise ValueError(f"agents must be an agent model, got {model!r}")
        cap = parse_estimate(params.get("delta"))
        if cap is None and params.get("delta") is not None:
            model = model._replace(delta=params["delta"])
        model.check()
        if "tremble" in model._fields:  # a length its clean band is shifted by, as by delta
            check_bound("agents.tremble", float(model.tremble), type(self).input_bound)
        if cap is not None:  # delta="estimate": the budget is learned from the applicants
            return BudgetBelief.new(model, cap)
        return model

    def compiled_belief(self) -> BudgetBelief:
        """:meth:`_belief` as compiled code receives it (a learner's state holds it): a
        :class:`~.budget.BudgetBelief`, told or estimating, over the model's compiled form. One
        type for every built-in agent model and for both ways of knowing δ, so the learner's
        kernels compile once for all."""
        belief = self._belief()
        if not isinstance(belief, BudgetBelief):
            belief = BudgetBelief.known(belief)
        return belief.compiled()

    def check_params(self) -> None:
        """Refuse, with a ``ValueError`` in one line, a hyperparameter out of its range (what
        :meth:`reset` checks first; the oracle refuses ``delta="estimate"`` here)."""
        self._check_params()

    def _check_params(self) -> None:
        params = self.get_params()
        bound = type(self).input_bound
        if "delta" in params and parse_estimate(params["delta"]) is None:
            check_bound("delta", check_number("delta", params["delta"], low=0.0), bound)
        if "r0" in params:
            check_bound("r0", check_number("r0", params["r0"]), bound)
        if "feedback" in params and params["feedback"] not in FEEDBACK:
            raise ValueError(f"feedback must be one of {', '.join(FEEDBACK)}, "
                             f"got {params['feedback']!r}")
        supported = self.tags().feedback
        if params.get("feedback") is not None and params["feedback"] not in supported:
            raise ValueError(f"feedback must be one of {', '.join(supported)} (what "
                             f"{self.name} learns under), got {params['feedback']!r}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- state -----------------------------------------------------------------------------
    def _init_state(self, d: int) -> Any:
        raise NotImplementedError

    def check_state(self, state: Any, template: Any, where: str) -> None:
        """:meth:`_check_state`, the learner's own check of a state read from a saved file
        (the loader calls it)."""
        self._check_state(state, template, where)

    def _check_state(self, state: Any, template: Any, where: str) -> None:
        """Raise ``ValueError`` naming the field (``f"{where}.counts[1]"``) if ``state``, read
        from a saved file, breaks an invariant this learner's code relies on.

        The loader calls it before anything uses the state, with the learner's own template
        (``_init_state(d)`` of the saved parameters); the state has the template's fields,
        dtypes and shapes already, and for a compiled learner its scalars equal the template's.
        A plain-Python learner's attributes are set on ``self`` by then. By default the kernels'
        own check (:class:`LearnerKernels`), if any.
        """
        kernels = type(self).kernels
        if kernels is not None and kernels.check is not None:
            kernels.check(state, template, where)

    def model_attributes(self) -> dict[str, Any]:
        """What the learner keeps on itself besides its hyperparameters, its state and the
        decision bookkeeping: a plain-Python learner may keep its model there
        (``self._gram``), which a saved file holds as its ``attributes``."""
        params = set(self.get_params())
        return {k: v for k, v in vars(self).items()
                if k not in params and k not in BASE_ATTRIBUTES}

    def milestones(self, d: int) -> list[int]:
        """Rounds after which this learner changes phase (explore-then-commit's T0, ...), for a
        learner bound to a run: the engine records its totals there too. None by default."""
        return []

    def state_bytes(self, d: int) -> int:
        """Bytes of this (bound) learner's state at dimension ``d``, estimated without building
        it: the engine refuses a run that cannot fit in memory before allocating anything.

        By default a compiled learner's state arrays are measured at d = 1, 2, 3 and
        extrapolated as a quadratic in d (the least-squares learners hold d × d matrices); a
        learner whose state grows otherwise overrides this. A plain-Python learner's state is
        not measured (0) unless it overrides this.
        """
        if type(self).kernels is None:
            return 0
        try:
            sizes = [_nbytes(self._init_state(k)) for k in (1, 2, 3)]
        except ValueError:  # parameters tied to the true d (the oracle's θ): measure at d
            return _nbytes(self._init_state(d))
        # Second differences of a quadratic are constant: a + b·k + c·k² through three points.
        c = (sizes[2] - 2 * sizes[1] + sizes[0]) / 2
        b = sizes[1] - sizes[0] - 3 * c
        a = sizes[0] - b - c
        return int(max(sizes[2], a + b * d + c * d * d))

    @serialized
    def reset(self, d: int, rng: np.random.Generator | np.random.SeedSequence | int | None = None
              ) -> Learner:
        """Create all state for contexts of dimension ``d``; returns ``self``.

        ``rng`` is a Generator (used as given), a SeedSequence or an integer seed (a Generator
        is made from it), or None (fresh entropy).
        """
        if not (isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 1):
            raise ValueError(f"d must be an integer >= 1, got {d!r}")
        self._check_params()
        if rng is not None and not isinstance(rng, np.random.Generator | np.random.SeedSequence) \
                and not (isinstance(rng, int | np.integer) and not isinstance(rng, bool)
                         and rng >= 0):
            raise ValueError(f"rng must be a numpy.random.Generator, a SeedSequence or an "
                             f"integer seed >= 0, got {rng!r}")
        self._d = int(d)
        # An integer seed or a SeedSequence becomes a Generator: the compiled code draws from
        # a Generator only.
        self._rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self._state = self._init_state(self._d)
        self._desk = DecisionDesk(DeskHooks(
            name=self.name, publish=self._next_rule, learn=self._learn, state=self._live_state,
            params=self.get_params, tags=type(self).tags, feedback=self._feedback(),
            dimension=self._d, input_bound=type(self).input_bound))
        return self

    def _next_rule(self) -> LinearThreshold | GeneralRule:
        return self._checked_rule(self._publish())

    def _live_state(self) -> Any:
        return self._state

    def _feedback(self) -> str | None:
        """The learner's ``feedback`` parameter (None if it has none)."""
        return getattr(self, "feedback", None) if "feedback" in self.param_names() else None

    @serialized
    def restore(self, state: Any, rng: np.random.Generator) -> None:
        """Put a state and generator read from a saved file in place of those :meth:`reset`
        made (the loader's entry; it has checked them with :meth:`check_state`)."""
        self._require_reset()
        self._state = state
        self._rng = rng

    @property
    def dimension(self) -> int:
        """The dimension d of the contexts, given to :meth:`reset`."""
        self._require_reset()
        return self._d

    @property
    def generator(self) -> np.random.Generator:
        """The learner's random generator (what :meth:`reset` made of its ``rng``)."""
        self._require_reset()
        return self._rng

    def _require_reset(self) -> None:
        if not hasattr(self, "_state"):
            raise RuntimeError(f"call {type(self).__name__}.reset(d, rng) first")

    # -- the per-round API -----------------------------------------------------------------
    @serialized
    def policy(self) -> LinearThreshold | GeneralRule:
        """The rule to publish for this round (sampled and committed, if randomized).

        A :class:`LinearThreshold`, or for a learner whose rule is not linear this round
        (LinUCB) a :class:`~strategic_apple_tasting.game.policies.GeneralRule`; both have
        ``accepts(x)``.
        """
        self._require_reset()
        return self._desk.current().rule

    def _checked_rule(self, rule: Any) -> LinearThreshold | GeneralRule:
        """A rule from ``_publish``, or ``ValueError`` naming what is wrong with it."""
        who = f"{type(self).__name__}._publish()"
        if not isinstance(rule, LinearThreshold | GeneralRule):
            raise ValueError(f"{who} must return a LinearThreshold or a GeneralRule, "
                             f"got {rule!r}")
        if isinstance(rule, GeneralRule) and not self.tags().nonlinear:
            raise ValueError(f"{who} returned a GeneralRule but {type(self).__name__} does "
                             "not set nonlinear = True")
        beta = np.asarray(rule.beta)
        if beta.shape != (self._d,) or not (beta.dtype.kind in "biuf"
                                             and all_finite(beta.astype(float, copy=False))):
            raise ValueError(f"{who} must give a finite beta of shape ({self._d},), got "
                             f"{rule.beta!r}")
        if not (isinstance(rule.threshold, int | float) and math.isfinite(rule.threshold)):
            raise ValueError(f"{who} must give a finite threshold, got {rule.threshold!r}")
        return rule

    # -- the hooks: a compiled learner's run its kernels -------------------------------------
    def _publish(self) -> LinearThreshold | GeneralRule:
        """This round's rule (called once a round, by :meth:`policy`)."""
        kernels = self.kernels
        beta = np.empty(self._d)
        threshold = float(kernels.policy(self._state, self._rng, beta))
        if kernels.rule is not None and not (kernels.linear or never_linear)(self._state):
            return GeneralRule.publish(self._state, beta, threshold)
        return LinearThreshold(beta=beta, threshold=threshold)

    def _learn(self, rule: LinearThreshold | GeneralRule, x_obs: np.ndarray, accepted: bool,
               reward: float | None) -> bool:
        """Learn from one round's feedback under ``rule`` (``reward`` None if unobserved)."""
        live = estimating_belief(self._state)
        if live is not None:
            observe(live, rule.beta, float(rule.threshold), x_obs)
        return self.kernels.update(self._state, self._rng, rule.beta, rule.threshold, x_obs,
                                   accepted, 0.0 if reward is None else reward,
                                   reward is not None)

    def _estimate(self) -> np.ndarray | None:
        """The estimate of θ1 − θ0, or None (default for a plain-Python learner: none)."""
        if self.kernels is None:
            return None
        out = np.empty(self._d)
        return out if self.kernels.estimate(self._state, out) else None

    @serialized
    def act(self, x_obs: Any) -> bool:
        """Accept (True) or reject the observed context under the committed rule."""
        self._require_reset()
        return self.policy().accepts(check_vector("x_obs", x_obs, self._d, self.input_bound))

    @serialized
    def update(self, x_obs: Any, accepted: bool, reward: float | None) -> bool:
        """Report the round's outcome (``reward`` None when nothing was observed).

        Returns whether the point was used for learning. Ends the round: the next
        :meth:`policy` call gives the next round's rule.
        """
        self._require_reset()
        x = check_vector("x_obs", x_obs, self._d, self.input_bound)
        if not isinstance(accepted, bool | np.bool_):
            raise ValueError(f"accepted must be True or False (a bool), got {accepted!r}")
        if reward is not None:
            reward = check_bound("reward", check_number(
                "reward", float(reward) if isinstance(reward, np.floating) else reward),
                self.input_bound)
            if not accepted and self._feedback() == "apple":
                # Apple tasting: a rejected applicant's outcome is never seen, so learning
                # from one would use information the principal cannot have.
                raise ValueError(f"reward must be None when accepted is False under apple "
                                 f"tasting (a rejected applicant's outcome is not observed), "
                                 f"got {reward!r}")
        # The per-round API is the decision API's special case: the round's outcome is learned
        # under the rule in force, and the next policy() call publishes.
        version = self._desk.current().version
        used = self._desk.learn_under(version, x, bool(accepted),
                                      None if reward is None else float(reward))
        self._desk.end_round()
        return used

    # -- the decision API: the learner's desk (:mod:`.decisions`), under the learner's lock --
    @serialized
    def publish(self, time: float | None = None) -> PublishedRule:
        """Publish the learner's next rule: it decides from now on. Returns it with its
        version (1, 2, ...) and the time it took effect (:meth:`.DecisionDesk.publish`)."""
        self._require_reset()
        return self._desk.publish(time)

    @serialized
    def publish_every(self, outcomes: int | None = None, period: float | None = None
                      ) -> Learner:
        """Publish automatically: after every ``outcomes`` reports, and/or at the first
        decision once ``period`` has passed on the decision clock since the rule in force took
        effect (:meth:`.DecisionDesk.publish_every`). Returns ``self``."""
        self._require_reset()
        self._desk.publish_every(outcomes, period)
        return self

    @serialized
    def adopt(self, rule: LinearThreshold, time: float | None = None) -> PublishedRule:
        """Publish a given linear rule in place of the learner's own next rule
        (:meth:`.DecisionDesk.adopt`)."""
        self._require_reset()
        return self._desk.adopt(rule, time)

    @serialized
    def rule_in_force(self) -> PublishedRule | None:
        """The published rule deciding now (None before the first publication)."""
        self._require_reset()
        return self._desk.rule_in_force()

    @serialized
    def decide(self, x_obs: Any, id: int | str | None = None, time: float | None = None
               ) -> Decision:
        """Decide one applicant under the rule in force (:meth:`.DecisionDesk.decide`)."""
        self._require_reset()
        return self._desk.decide(x_obs, id, time)

    @serialized
    def record(self, x_obs: Any, id: int | str, accepted: bool, version: int, time: float
               ) -> Decision:
        """File a decision made elsewhere under published rule ``version``
        (:meth:`.DecisionDesk.record`)."""
        self._require_reset()
        return self._desk.record(x_obs, id, accepted, version, time)

    @serialized
    def hold(self, version: int) -> None:
        """Keep published rule ``version`` until :meth:`release` (:meth:`.DecisionDesk.hold`)."""
        self._require_reset()
        self._desk.hold(version)

    @serialized
    def release(self, version: int) -> None:
        """Undo one :meth:`hold` of ``version`` (:meth:`.DecisionDesk.release`)."""
        self._require_reset()
        self._desk.release(version)

    @serialized
    def pending(self) -> list[int | str]:
        """Ids of the decisions whose outcomes are awaited, in decision order."""
        self._require_reset()
        return self._desk.pending()

    @serialized
    def report(self, id: int | str, outcome: float) -> bool:
        """Feed back the outcome of decision ``id``; returns whether the point was used for
        learning (:meth:`.DecisionDesk.report`)."""
        self._require_reset()
        return self._desk.report(id, outcome)

    @property
    def clock(self) -> float:
        """The decision clock: the last time given to the API, else the decisions made."""
        self._require_reset()
        return self._desk.clock

    @serialized
    def desk_record(self) -> DeskRecord:
        """The decision bookkeeping, for saving (:meth:`.DecisionDesk.desk_record`)."""
        self._require_reset()
        return self._desk.desk_record()

    @serialized
    def restore_desk(self, record: DeskRecord) -> None:
        """Take ``record`` as the decision bookkeeping (the loader's entry)."""
        self._require_reset()
        self._desk.restore_desk(record)

    @serialized
    def save(self, path: Any) -> Any:
        """Write this learner (its parameters, state, random generator and decisions awaiting
        outcomes) to ``path``: a versioned file of JSON and arrays, no pickle
        (:mod:`.persistence`); :func:`~strategic_apple_tasting.learners.load` reads it back.
        Returns the path."""
        from .persistence import save

        return save(self, path)

    @serialized
    def estimate(self) -> np.ndarray | None:
        """Current estimate of θ1 − θ0 (θ1 under apple tasting), or None if there is none."""
        self._require_reset()
        est = self._estimate()
        if est is not None:
            est = np.asarray(est, dtype=float)
            if est.shape != (self._d,):
                raise ValueError(f"{type(self).__name__}._estimate() must return None or an "
                                 f"array of shape ({self._d},), got shape {est.shape}")
        return est

    @property
    def state(self) -> Any:
        """The learner's state (for a compiled learner, what the compiled engine runs on)."""
        self._require_reset()
        return self._state
