"""The learner protocol (DESIGN §5): the base class of every learner, in two tiers.

**Every learner** is a Python object holding hyperparameters (stored as given) that plays the
per-round API: :meth:`Learner.reset`, then each round :meth:`~Learner.policy` (the rule published
for the round), :meth:`~Learner.act` and :meth:`~Learner.update` (the round's feedback), and
:meth:`~Learner.estimate`; the decision API (publish, decide by id, report outcomes late) is its
desk, :attr:`Learner.desk` (:mod:`.decisions`). What a learner class is (strategy-aware,
nonlinear, its theorem, its input bound, ...) it declares in one object, ``tags =
LearnerTags(...)`` (:mod:`.tags`). Behind the API, a learner gives four hooks, of the same shape
in both tiers:

* ``_init_state(d) -> state``: the learner's state for contexts of dimension d (its generator is
  ``self.generator``), kept by the base as :attr:`Learner.state`: a compiled learner's is an
  instance of its kernels' state class (checked at :meth:`~Learner.reset`); a plain-Python
  learner's is anything (None when it keeps its model in attributes of its own, ``self._gram``),
* ``_publish() -> LinearThreshold | GeneralRule``: this round's rule,
* ``_learn(rule, x_obs, accepted, reward) -> used``: learn from the feedback under the rule in
  force (``reward`` None when nothing was observed); returns whether the point entered the
  learner's data,
* ``_estimate() -> array | None``: the estimate of θ1 − θ0, if there is one.

A **plain-Python learner** writes the last three; the engine runs it on its Python reference path
(:mod:`..engine.reference`). A **compiled learner** sets ``kernels`` instead (:mod:`.kernels`),
which the base's hooks call, as the compiled engine does.

The base keeps what it needs of a reset learner (its lock, dimension, generator, state and desk)
in one object under a name no subclass can write (:class:`_Runtime`); a subclass that defines
one of the names the base reserves (:data:`RESERVED`), or a concrete one without a ``name``, is
refused in one line when its class statement runs.
"""

from __future__ import annotations

import dataclasses
import dis
import functools
import math
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np

from ..game.game import check_number
from ..game.policies import GeneralRule, LinearThreshold
from . import binding
from ._aliases import LegacyLearnerAPI
from .decisions import DecisionDesk, DeskHooks, DeskRecord
from .inputs import all_finite, check_bound, check_vector
from .introspect import param_names
from .kernels import (
    LearnerKernels,
    has_rule,
    learner_estimate,
    learner_linear,
    learner_policy,
    learner_update,
    never_linear,
    register_kernels,
)
from .tags import TAG_NAMES, LearnerTags, declared_tags

# The engine reaches the compiled learners' tables here (:mod:`.kernels`).
__all__ = ["RESERVED", "Learner", "LearnerKernels", "has_rule", "learner_estimate",
           "learner_linear", "learner_policy", "learner_update", "never_linear", "serialized"]

#: Names a learner class may not define or assign: the base's runtime as earlier releases named
#: it (read-only aliases for one release), and the methods that hold the lock and keep the
#: runtime. A subclass overriding one would bypass them, or be overwritten by them.
RESERVED = frozenset({"_d", "_rng", "_state", "_desk", "_lock", "desk", "reset", "restore",
                      "policy", "act", "update", "estimate", "state", "dimension", "generator"})

def serialized(method: Callable) -> Callable:
    """A public method of a learner, run while holding the learner's own lock: calls from
    several threads take turns, so the learner's state is always that of some serial order of
    them. The lock is reentrant (a public method may call another, or its desk)."""
    @functools.wraps(method)
    def locked(self: Learner, *args: Any, **kwargs: Any) -> Any:
        with self._Learner__run.lock:
            return method(self, *args, **kwargs)
    return locked


def _nbytes(state: Any) -> int:
    """Bytes of every array in a state (namedtuples nest)."""
    if isinstance(state, np.ndarray):
        return int(state.nbytes)
    if isinstance(state, tuple):
        return sum(_nbytes(v) for v in state)
    return 0


def _next_rule(learner: Learner) -> LinearThreshold | GeneralRule:
    """The learner's next rule from its ``_publish``, or ``ValueError`` naming what is wrong
    with it (a function, not a method: the desk holds it, and a copy of the desk pickles it)."""
    rule, cls = learner._publish(), type(learner)
    who, d = f"{cls.__name__}._publish()", learner._Learner__run.d
    if not isinstance(rule, LinearThreshold | GeneralRule):
        raise ValueError(f"{who} must return a LinearThreshold or a GeneralRule, got {rule!r}")
    if isinstance(rule, GeneralRule) and not cls.tags().nonlinear:
        raise ValueError(f"{who} returned a GeneralRule but {cls.__name__} does not declare "
                         "tags = LearnerTags(nonlinear=True)")
    beta = np.asarray(rule.beta)
    if beta.shape != (d,) or not (beta.dtype.kind in "biuf"
                                  and all_finite(beta.astype(float, copy=False))):
        raise ValueError(f"{who} must give a finite beta of shape ({d},), got {rule.beta!r}")
    if not (isinstance(rule.threshold, int | float) and math.isfinite(rule.threshold)):
        raise ValueError(f"{who} must give a finite threshold, got {rule.threshold!r}")
    return rule


def _live_state(learner: Learner) -> Any:
    """The learner's state as it is now (the desk copies its published fields)."""
    return learner._Learner__run.state


def _quadratic_bytes(init_state: Callable[[int], Any], d: int) -> int:
    """Bytes of the states ``init_state`` makes at d = 1, 2, 3, extrapolated as a quadratic in
    ``d`` (the least-squares learners hold d × d matrices)."""
    try:
        sizes = [_nbytes(init_state(k)) for k in (1, 2, 3)]
    except ValueError:  # parameters tied to the true d (the oracle's θ): measure at d
        return _nbytes(init_state(d))
    # Second differences of a quadratic are constant: a + b·k + c·k² through three points.
    c = (sizes[2] - 2 * sizes[1] + sizes[0]) / 2
    b = sizes[1] - sizes[0] - 3 * c
    a = sizes[0] - b - c
    return int(max(sizes[2], a + b * d + c * d * d))


def _checked_feedback(accepted: Any, reward: Any, bound: float, feedback: str | None
                      ) -> float | None:
    """A round's feedback as the per-round API takes it: ``accepted`` a bool, ``reward`` None
    or a finite number within the learner's input bound (None for a rejection under apple
    tasting); else ``ValueError`` in one line."""
    if not isinstance(accepted, bool | np.bool_):
        raise ValueError(f"accepted must be True or False (a bool), got {accepted!r}")
    if reward is None:
        return None
    reward = check_bound("reward", check_number(
        "reward", float(reward) if isinstance(reward, np.floating) else reward), bound)
    if not accepted and feedback == "apple":
        # Apple tasting: a rejected applicant's outcome is never seen, so learning from one
        # would use information the principal cannot have.
        raise ValueError(f"reward must be None when accepted is False under apple tasting (a "
                         f"rejected applicant's outcome is not observed), got {reward!r}")
    return float(reward)


def _desk_for(learner: Learner, run: _Runtime) -> DecisionDesk:
    """A fresh decision desk for a learner just reset: its hooks call the learner's, under its
    lock."""
    return DecisionDesk(DeskHooks(
        name=learner.name, publish=functools.partial(_next_rule, learner),
        learn=learner._learn, state=functools.partial(_live_state, learner),
        params=learner.get_params, tags=type(learner).tags,
        feedback=learner.get_params().get("feedback"), dimension=run.d), lock=run.lock)


def _generator(rng: Any) -> np.random.Generator:
    """The Generator a learner draws from: ``rng`` itself, or one made from a SeedSequence, an
    integer seed or None (fresh entropy); anything else is refused in one line."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None and not isinstance(rng, np.random.SeedSequence) \
            and not (isinstance(rng, int | np.integer) and not isinstance(rng, bool) and rng >= 0):
        raise ValueError(f"rng must be a numpy.random.Generator, a SeedSequence or an integer "
                         f"seed >= 0, got {rng!r}")
    # The compiled code draws from a Generator only.
    return np.random.default_rng(rng)


class _Runtime:
    """What the base keeps on a learner: its lock (made with the learner) and, from
    :meth:`~Learner.reset` on, its dimension ``d``, generator, state and decision desk. One
    object under one name-mangled attribute, so no name of a subclass can overwrite it."""

    __slots__ = ("d", "desk", "lock", "rng", "state")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.d: int | None = None  # None until reset
        self.rng: np.random.Generator | None = None
        self.state: Any = None
        self.desk: DecisionDesk | None = None

    def __getstate__(self) -> tuple:
        return self.d, self.rng, self.state, self.desk

    def __setstate__(self, saved: tuple) -> None:
        # A lock does not pickle, and a copy of a learner is a learner of its own: a new lock,
        # which its desk shares.
        self.d, self.rng, self.state, self.desk = saved
        self.lock = threading.RLock()
        if self.desk is not None:
            self.desk.lock = self.lock


def _code_objects(value: Any) -> Iterator[types.CodeType]:
    """The code of a class attribute that is a function (or wraps one), nested code too."""
    for func in (value, getattr(value, "__func__", None), getattr(value, "fget", None),
                 getattr(value, "fset", None), getattr(value, "__wrapped__", None)):
        code = getattr(func, "__code__", None)
        stack = [code] if isinstance(code, types.CodeType) else []
        while stack:
            code = stack.pop()
            yield code
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))


def _check_class(cls: type, abstract: bool) -> None:
    """Refuse, in one line, a learner class that cannot work: a concrete one without a
    ``name`` or without its hooks, or one that defines or assigns a reserved name."""
    who = f"learner class {cls.__qualname__}"
    defined = sorted(RESERVED & set(cls.__dict__))
    if defined:
        raise TypeError(f"{who} defines {defined[0]!r}, a name the Learner base reserves "
                        f"({', '.join(sorted(RESERVED))}): name it otherwise")
    for attr, value in cls.__dict__.items():
        for code in _code_objects(value):
            if RESERVED.isdisjoint(code.co_names):  # no attribute of those names at all
                continue
            for ins in dis.get_instructions(code):
                if ins.opname in ("STORE_ATTR", "DELETE_ATTR") and ins.argval in RESERVED:
                    raise TypeError(f"{who} assigns {ins.argval!r} in {attr}, a name the "
                                    "Learner base reserves (its state is what _init_state "
                                    "returns, read as self.state): name it otherwise")
    if abstract:
        return
    name = getattr(cls, "name", None)
    if not (isinstance(name, str) and name):
        raise TypeError(f"{who} has no name: set name = '...' (its name in results tables), "
                        f"or declare a base for other learners abstract: "
                        f"class {cls.__name__}(..., abstract=True)")
    if getattr(cls, "kernels", None) is None and not (
            cls._publish is not Learner._publish and cls._learn is not Learner._learn):
        raise TypeError(f"learner {cls.__name__} must set kernels (a compiled learner) or "
                        "define _publish and _learn (a plain-Python learner)")
    if cls._init_state is Learner._init_state:
        raise TypeError(f"learner {cls.__name__} must define _init_state(d), which returns "
                        "its state")


class Learner(LegacyLearnerAPI):
    """Base class of every learner: hyperparameters in ``__init__``, state in :meth:`reset`.

    Subclasses set ``name`` (the name in results tables), declare what they are in ``tags =
    LearnerTags(...)`` (``strategy_aware=False`` for baselines that learn from points agents may
    have gamed, ...), implement ``_init_state(d)`` and either set ``kernels`` (a compiled
    learner) or define the hooks ``_publish`` and ``_learn`` (a plain-Python learner). A class
    that is only a base for others says so: ``class Base(Learner, abstract=True)``.
    ``delta``, ``r0``, ``feedback``, ``agents``, ``sigma`` and ``horizon`` left as ``None`` are
    taken from the game by :meth:`bind`; the per-round API needs ``r0`` and ``feedback`` set
    (``agents`` defaults to lazy agents, whose budget ``delta`` overrides).

    Examples
    --------
    A plain-Python learner that accepts above a fixed score:

    >>> import numpy as np
    >>> from strategic_apple_tasting.game import LinearThreshold
    >>> class Fixed(Learner):
    ...     name = "fixed"
    ...     tags = LearnerTags(strategy_aware=False)
    ...     def __init__(self, threshold=0.0):
    ...         self.threshold = threshold
    ...     def _init_state(self, d):
    ...         return None
    ...     def _publish(self):
    ...         return LinearThreshold(beta=np.ones(self.dimension), threshold=self.threshold)
    ...     def _learn(self, rule, x_obs, accepted, reward):
    ...         return False
    >>> learner = Fixed(threshold=0.5).reset(2, rng=0)
    >>> learner.act([0.3, 0.3]), learner.update([0.3, 0.3], True, 1.0)
    (True, False)
    >>> Fixed.tags().strategy_aware
    False
    """

    name: ClassVar[str]
    #: The compiled core; None for a plain-Python learner.
    kernels: ClassVar[LearnerKernels | None] = None
    __tags: ClassVar[LearnerTags] = LearnerTags()

    def __new__(cls, *args: Any, **kwargs: Any) -> Learner:
        learner = super().__new__(cls)
        # self.__run in the class's methods; spelled out so this module's functions (serialized,
        # _next_rule) read the same attribute.
        learner._Learner__run = _Runtime()
        return learner

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_class(cls, abstract)
        tags = declared_tags(cls, cls.__tags, stacklevel=2)
        for name in (*TAG_NAMES, "tags"):  # read through tags() from now on
            if name in cls.__dict__:
                delattr(cls, name)
        if cls.kernels is not None:  # a compiled learner is nonlinear iff its kernels' rule is
            tags = dataclasses.replace(tags, nonlinear=cls.kernels.rule is not None)
        if "kernels" in cls.__dict__ and cls.kernels is not None:
            register_kernels(cls.kernels)
        cls.__tags = tags

    @classmethod
    def tags(cls) -> LearnerTags:
        """What this learner class is (strategy-aware, nonlinear, its theorem, its input bound,
        ...), as it declares in ``tags = LearnerTags(...)`` (:class:`~.tags.LearnerTags`): what
        the checks, the engine, the loader, the service and the reports read."""
        return cls.__tags

    # -- hyperparameters -------------------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """The hyperparameters, as given to the constructor."""
        return {p: getattr(self, p) for p in param_names(type(self))}

    def clone(self, **overrides: Any) -> Learner:
        """A fresh, unreset learner with the same hyperparameters (some overridden)."""
        names = param_names(type(self))
        unknown = set(overrides) - set(names)
        if unknown:
            raise ValueError(f"{self.name} has no parameter {sorted(unknown)[0]!r}; "
                             f"allowed: {', '.join(names)}")
        return type(self)(**{**self.get_params(), **overrides})

    def bind(self, instance: Any, horizon: int | None = None) -> Learner:
        """A clone whose hyperparameters left None are the game instance's (δ, r0, feedback,
        the agents, σ, a data game's rewards) and whose unset ``horizon`` is the run's
        (:func:`.binding.bind`)."""
        return binding.bind(self, instance, horizon)

    def check_params(self) -> None:
        """Refuse, with a ``ValueError`` in one line, a hyperparameter out of its range (what
        :meth:`reset` checks first; a learner adds its own checks in ``_check_params``)."""
        self._check_params()

    def _check_params(self) -> None:
        binding.check_params(self.name, self.get_params(), self.tags())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- state -----------------------------------------------------------------------------
    def _init_state(self, d: int) -> Any:
        """The hook: the learner's state for dimension ``d`` (see the module's description)."""
        raise NotImplementedError

    def check_state(self, state: Any, template: Any, where: str) -> None:
        """Raise ``ValueError`` naming the field (``f"{where}.counts[1]"``) if ``state``, read
        from a saved file, breaks an invariant this learner's code relies on: the loader's
        call, before anything uses the state, with the learner's own template
        (``_init_state(d)``), whose fields, dtypes and shapes (and a compiled learner's
        scalars) the state has already. It runs the hook ``_check_state``, by default the
        kernels' own check (:class:`LearnerKernels`), if any."""
        self._check_state(state, template, where)

    def _check_state(self, state: Any, template: Any, where: str) -> None:
        kernels = type(self).kernels
        if kernels is not None and kernels.check is not None:
            kernels.check(state, template, where)

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
        return _quadratic_bytes(self._init_state, d)

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
        generator = _generator(rng)
        run = self.__run
        before = run.d, run.rng, run.state, run.desk
        run.d, run.rng = int(d), generator  # _init_state may read them
        try:
            run.state = self._init_state(run.d)
            kernels = type(self).kernels
            if kernels is not None and not isinstance(run.state, kernels.state):
                raise TypeError(f"{type(self).__name__}._init_state(d) must return a "
                                f"{kernels.state.__name__} (its kernels' state), got "
                                f"{type(run.state).__name__}")
        except BaseException:  # a learner whose reset failed is as it was before
            run.d, run.rng, run.state, run.desk = before
            raise
        run.desk = _desk_for(self, run)
        return self

    def __reset_run(self) -> _Runtime:
        """The runtime of a reset learner, or ``RuntimeError`` in one line."""
        run = self.__run
        if run.d is None:
            raise RuntimeError(f"call {type(self).__name__}.reset(d, rng) first")
        return run

    @serialized
    def restore(self, state: Any, rng: np.random.Generator, desk: DeskRecord | None = None
                ) -> None:
        """Put a state, generator and decision bookkeeping read from a saved file in place of
        those :meth:`reset` made (the loader's entry; it has checked them)."""
        run = self.__reset_run()
        run.state, run.rng = state, rng
        if desk is not None:
            run.desk.restore_desk(desk)

    @property
    def dimension(self) -> int:
        """The dimension d of the contexts, given to :meth:`reset`."""
        return self.__reset_run().d

    @property
    def generator(self) -> np.random.Generator:
        """The learner's random generator (what :meth:`reset` made of its ``rng``)."""
        return self.__reset_run().rng

    @property
    def state(self) -> Any:
        """The learner's state, what its ``_init_state`` returned (for a compiled learner, what
        the compiled engine runs on)."""
        return self.__reset_run().state

    @property
    def desk(self) -> DecisionDesk:
        """The learner's decision desk: publish rules, decide applicants by id, report
        outcomes late (:class:`~.decisions.DecisionDesk`); its methods hold the learner's
        lock."""
        return self.__reset_run().desk

    # -- the per-round API -----------------------------------------------------------------
    @serialized
    def policy(self) -> LinearThreshold | GeneralRule:
        """The rule to publish for this round (sampled and committed, if randomized).

        A :class:`LinearThreshold`, or for a learner whose rule is not linear this round
        (LinUCB) a :class:`~strategic_apple_tasting.game.policies.GeneralRule`; both have
        ``accepts(x)``.
        """
        return self.__reset_run().desk.current().rule

    # -- the hooks: a compiled learner's run its kernels -------------------------------------
    def _publish(self) -> LinearThreshold | GeneralRule:
        """This round's rule (called once a round, by :meth:`policy`)."""
        run = self.__run
        return self.kernels.publish_rule(run.state, run.rng, run.d)

    def _learn(self, rule: LinearThreshold | GeneralRule, x_obs: np.ndarray, accepted: bool,
               reward: float | None) -> bool:
        """Learn from one round's feedback under ``rule`` (``reward`` None if unobserved)."""
        run = self.__run
        return self.kernels.learn(run.state, run.rng, rule, x_obs, accepted, reward)

    def _estimate(self) -> np.ndarray | None:
        """The estimate of θ1 − θ0, or None (default for a plain-Python learner: none)."""
        run = self.__run
        return None if self.kernels is None else self.kernels.estimate_of(run.state, run.d)

    @serialized
    def act(self, x_obs: Any) -> bool:
        """Accept (True) or reject the observed context under the committed rule."""
        run = self.__reset_run()
        x = check_vector("x_obs", x_obs, run.d, self.tags().input_bound)
        return self.policy().accepts(x)

    @serialized
    def update(self, x_obs: Any, accepted: bool, reward: float | None) -> bool:
        """Report the round's outcome (``reward`` None when nothing was observed).

        Returns whether the point was used for learning. Ends the round: the next
        :meth:`policy` call gives the next round's rule.
        """
        run = self.__reset_run()
        bound = self.tags().input_bound
        x = check_vector("x_obs", x_obs, run.d, bound)
        reward = _checked_feedback(accepted, reward, bound, run.desk.hooks.feedback)
        # The per-round API is the decision API's special case: the round's outcome is learned
        # under the rule in force, and the next policy() call publishes.
        version = run.desk.current().version
        used = run.desk.learn_under(version, x, bool(accepted), reward)
        run.desk.end_round()
        return used

    @serialized
    def estimate(self) -> np.ndarray | None:
        """Current estimate of θ1 − θ0 (θ1 under apple tasting), or None if there is none."""
        d = self.__reset_run().d
        est = self._estimate()
        if est is not None:
            est = np.asarray(est, dtype=float)
            if est.shape != (d,):
                raise ValueError(f"{type(self).__name__}._estimate() must return None or an "
                                 f"array of shape ({d},), got shape {est.shape}")
        return est
