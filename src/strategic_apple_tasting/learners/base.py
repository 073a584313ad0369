"""The learner protocol (DESIGN §5) and the tables through which compiled code reaches learners.

A learner is a Python object holding hyperparameters (stored as given), plus a compiled core: a
``NamedTuple`` state and three compiled functions,

* ``policy(state, rng, beta_out) -> threshold``: the linear threshold to commit to this round,
* ``update(state, rng, beta, threshold, x_obs, accepted, reward, observed) -> used``: learn
  from the round's feedback under the policy (β, c) that was in force; returns whether the
  point entered the learner's data,
* ``estimate(state, out) -> bool``: write the current estimate of θ1 − θ0, if there is one.

A learner whose rule is not a linear threshold (LinUCB) also gives

* ``rule(state, z, grad, need_grad) -> g(z)``: it accepts iff g(x') ≥ 0 (∇g into ``grad`` when
  ``need_grad``); ``policy`` then writes the rule's linear part, the start of agents'
  numerical best response (:mod:`..game.best_response`),
* ``linear(state) -> bool``: whether this round's rule is exactly the linear threshold that
  ``policy`` wrote (then agents respond in closed form, as to any other learner).

The per-round methods of :class:`Learner` call these same functions, and so does the simulation
engine (through :func:`learner_policy` etc., resolved at compile time by the state's class):
one implementation of each algorithm.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numba.extending import overload

from .._jit import njit, note_kernels, state_class
from ..game.agents import RESPOND, LazyBestResponse
from ..game.best_response import check_supported
from ..game.game import FEEDBACK, _finite
from ..game.policies import RULES, GeneralRule, LinearThreshold


@njit
def never_linear(state):
    """The ``linear`` of a learner whose rule is never a linear threshold."""
    return False


class LearnerKernels(NamedTuple):
    """A learner's compiled core: its state class and its compiled functions.

    ``rule`` and ``linear`` are given only by learners whose rule may be non-linear; the
    engine then compiles the general-rule path for them (``linear`` defaults to
    :func:`never_linear`). Every other learner keeps the linear-threshold path.
    """

    state: type
    policy: Callable
    update: Callable
    estimate: Callable
    rule: Callable | None = None
    linear: Callable | None = None


_POLICY: dict[type, Callable] = {}
_UPDATE: dict[type, Callable] = {}
_ESTIMATE: dict[type, Callable] = {}
_LINEAR: dict[type, Callable] = {}


def has_rule(state_cls: type | None) -> bool:
    """Whether learners with this state class may publish a general (non-linear) rule."""
    return state_cls in RULES


def learner_policy(state, rng, beta_out):
    """Compiled-only: the learner's policy this round (β into ``beta_out``, returns c)."""
    raise NotImplementedError("compiled-only; call Learner.policy() from Python")


def learner_update(state, rng, beta, threshold, x_obs, accepted, reward, observed):
    """Compiled-only: feed back one round; returns whether the point was used for learning."""
    raise NotImplementedError("compiled-only; call Learner.update() from Python")


def learner_estimate(state, out):
    """Compiled-only: write the estimate of θ1 − θ0 into ``out``; False if none yet."""
    raise NotImplementedError("compiled-only; call Learner.estimate() from Python")


def learner_linear(state):
    """Compiled-only: whether a general-rule learner's rule this round is its linear part."""
    raise NotImplementedError("compiled-only; Learner.policy() returns a LinearThreshold then")


@overload(learner_policy, inline="always")
def _policy_overload(state, rng, beta_out):
    impl = _POLICY.get(state_class(state))
    if impl is not None:
        return lambda state, rng, beta_out: impl(state, rng, beta_out)
    return None


@overload(learner_update, inline="always")
def _update_overload(state, rng, beta, threshold, x_obs, accepted, reward, observed):
    impl = _UPDATE.get(state_class(state))
    if impl is not None:
        return lambda state, rng, beta, threshold, x_obs, accepted, reward, observed: impl(
            state, rng, beta, threshold, x_obs, accepted, reward, observed)
    return None


@overload(learner_estimate, inline="always")
def _estimate_overload(state, out):
    impl = _ESTIMATE.get(state_class(state))
    if impl is not None:
        return lambda state, out: impl(state, out)
    return None


@overload(learner_linear, inline="always")
def _linear_overload(state):
    impl = _LINEAR.get(state_class(state))
    if impl is not None:
        return lambda state: impl(state)
    return None


def _vector(name: str, x: Any, d: int) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()!r}")
    return arr


def _nbytes(state: Any) -> int:
    """Bytes of every array in a state (namedtuples nest)."""
    if isinstance(state, np.ndarray):
        return int(state.nbytes)
    if isinstance(state, tuple):
        return sum(_nbytes(v) for v in state)
    return 0


class Learner:
    """Base class of every learner: hyperparameters in ``__init__``, state in :meth:`reset`.

    Subclasses set ``name`` (the registry key), ``kernels`` (their compiled core) and
    ``strategy_aware`` (False for baselines that learn from points agents may have gamed), and
    implement ``_init_state(d)``. ``delta``, ``r0``, ``feedback`` and ``agents`` left as
    ``None`` are taken from the game by :meth:`bind`; the per-round API needs ``r0`` and
    ``feedback`` set (``agents`` defaults to lazy agents, whose budget ``delta`` overrides).
    """

    name: ClassVar[str]
    kernels: ClassVar[LearnerKernels]
    strategy_aware: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kernels = cls.__dict__.get("kernels")
        if kernels is not None:
            note_kernels(kernels.state, [kernels.policy, kernels.update, kernels.estimate,
                                         kernels.rule, kernels.linear])
            _POLICY[kernels.state] = kernels.policy
            _UPDATE[kernels.state] = kernels.update
            _ESTIMATE[kernels.state] = kernels.estimate
            if kernels.rule is not None:
                RULES[kernels.state] = kernels.rule
                _LINEAR[kernels.state] = kernels.linear or never_linear

    @classmethod
    def check_configurations(cls) -> list[Learner]:
        """The instances the public checks (:mod:`strategic_apple_tasting.checks`) run this
        learner in: by default one, with default hyperparameters; a learner whose options take
        other code paths gives one instance for each."""
        return [cls()]

    # -- hyperparameters -------------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters, as given to the constructor."""
        return {p: getattr(self, p) for p in self._param_names()}

    def clone(self, **overrides: Any) -> Learner:
        """A fresh, unreset learner with the same hyperparameters (some overridden)."""
        unknown = set(overrides) - set(self._param_names())
        if unknown:
            raise ValueError(f"{self.name} has no parameter {sorted(unknown)[0]!r}; "
                             f"allowed: {', '.join(self._param_names())}")
        return type(self)(**{**self.get_params(), **overrides})

    def bind(self, instance: Any, horizon: int | None = None) -> Learner:
        """A clone whose unset ``delta``, ``r0``, ``feedback``, ``agents`` (the learner's belief
        about how agents respond) and ``sigma`` are the game instance's, and whose unset
        ``horizon`` is the run's (for learners tuned to the horizon)."""
        game = instance.game
        known = {"delta": game.delta, "r0": game.r0, "feedback": game.feedback,
                 "agents": game.agents, "sigma": game.sigma, "horizon": horizon}
        params = self.get_params()
        fill = {k: v for k, v in known.items()
                if k in params and params[k] is None and v is not None}
        if params.get("feedback") not in (None, game.feedback):
            raise ValueError(f"learner {self.name} has feedback={params['feedback']!r} "
                             f"but the game has feedback={game.feedback!r}")
        if self.kernels.rule is not None:
            check_supported(game.agents, self.name)
        return self.clone(**fill)

    def _belief(self) -> Any:
        """The agent model this learner assumes: ``agents`` (default lazy) with ``delta``."""
        params = self.get_params()
        model = params.get("agents")
        model = LazyBestResponse() if model is None else model
        if type(model) not in RESPOND:
            raise ValueError(f"agents must be an agent model, got {model!r}")
        if params.get("delta") is not None:
            model = model._replace(delta=params["delta"])
        model.check()
        return model

    def _check_params(self) -> None:
        params = self.get_params()
        if "delta" in params:
            _finite("delta", params["delta"], low=0.0)
        if "r0" in params:
            _finite("r0", params["r0"])
        if "feedback" in params and params["feedback"] not in FEEDBACK:
            raise ValueError(f"feedback must be one of {', '.join(FEEDBACK)}, "
                             f"got {params['feedback']!r}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- state -----------------------------------------------------------------------------
    def _init_state(self, d: int) -> Any:
        raise NotImplementedError

    def milestones(self, d: int) -> list[int]:
        """Rounds after which this learner changes phase (explore-then-commit's T0, ...), for a
        learner bound to a run: the engine records its totals there too. None by default."""
        return []

    def state_bytes(self, d: int) -> int:
        """Bytes of this (bound) learner's state at dimension ``d``, estimated without building
        it: the engine refuses a run that cannot fit in memory before allocating anything.

        By default the state's arrays are measured at d = 1, 2, 3 and extrapolated as a
        quadratic in d (the least-squares learners hold d × d matrices); a learner whose state
        grows otherwise overrides this.
        """
        try:
            sizes = [_nbytes(self._init_state(k)) for k in (1, 2, 3)]
        except ValueError:  # parameters tied to the true d (the oracle's θ): measure at d
            return _nbytes(self._init_state(d))
        # Second differences of a quadratic are constant: a + b·k + c·k² through three points.
        c = (sizes[2] - 2 * sizes[1] + sizes[0]) / 2
        b = sizes[1] - sizes[0] - 3 * c
        a = sizes[0] - b - c
        return int(max(sizes[2], a + b * d + c * d * d))

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
        self._committed: LinearThreshold | GeneralRule | None = None
        return self

    def _require_reset(self) -> None:
        if not hasattr(self, "_state"):
            raise RuntimeError(f"call {type(self).__name__}.reset(d, rng) first")

    # -- the per-round API -----------------------------------------------------------------
    def policy(self) -> LinearThreshold | GeneralRule:
        """The rule to publish for this round (sampled and committed, if randomized).

        A :class:`LinearThreshold`, or for a learner whose rule is not linear this round
        (LinUCB) a :class:`~strategic_apple_tasting.game.policies.GeneralRule`; both have
        ``accepts(x)``.
        """
        self._require_reset()
        if self._committed is None:
            beta = np.empty(self._d)
            threshold = float(self.kernels.policy(self._state, self._rng, beta))
            kernels = self.kernels
            if kernels.rule is not None and not (kernels.linear or never_linear)(self._state):
                self._committed = GeneralRule.publish(self._state, beta, threshold)
            else:
                self._committed = LinearThreshold(beta=beta, threshold=threshold)
        return self._committed

    def act(self, x_obs: Any) -> bool:
        """Accept (True) or reject the observed context under the committed rule."""
        self._require_reset()
        return self.policy().accepts(_vector("x_obs", x_obs, self._d))

    def update(self, x_obs: Any, accepted: bool, reward: float | None) -> bool:
        """Report the round's outcome (``reward`` None when nothing was observed).

        Returns whether the point was used for learning. Ends the round: the next
        :meth:`policy` call gives the next round's rule.
        """
        self._require_reset()
        x = _vector("x_obs", x_obs, self._d)
        if not isinstance(accepted, bool | np.bool_):
            raise ValueError(f"accepted must be True or False (a bool), got {accepted!r}")
        if reward is not None:
            reward = _finite("reward", float(reward) if isinstance(reward, np.floating)
                             else reward)
            if not accepted and self.get_params().get("feedback") == "apple":
                # Apple tasting: a rejected applicant's outcome is never seen, so learning
                # from one would use information the principal cannot have.
                raise ValueError(f"reward must be None when accepted is False under apple "
                                 f"tasting (a rejected applicant's outcome is not observed), "
                                 f"got {reward!r}")
        rule = self.policy()
        used = self.kernels.update(self._state, self._rng, rule.beta, rule.threshold, x,
                                   bool(accepted), 0.0 if reward is None else float(reward),
                                   reward is not None)
        self._committed = None
        return bool(used)

    def estimate(self) -> np.ndarray | None:
        """Current estimate of θ1 − θ0 (θ1 under apple tasting), or None if there is none."""
        self._require_reset()
        out = np.empty(self._d)
        return out if self.kernels.estimate(self._state, out) else None

    @property
    def state(self) -> Any:
        """The compiled state (what the engine runs on)."""
        self._require_reset()
        return self._state
