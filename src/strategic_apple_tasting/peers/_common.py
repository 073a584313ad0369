"""What the peer adapters share: the optional import, the round's published rule, the feedback.

An adapter keeps one *box* (its state, ``self.state``): the library's policy object plus what
the round froze (the library's random state, a uniform draw). The rule it publishes for a round
is "accept iff g(x') ≥ 0" with g a :class:`RoundRule`, which evaluates the box's ``value`` (the
library's own prediction at z) and refuses to run once the round is over: the library's model
moves on when the learner learns, so a rule stays in force for its round only.

With the rule goes its compiled twin (:mod:`.twins`, the box's :meth:`Box.twin`): g computed
from the parameters the library's prediction reads, which agents answer instead of calling the
library a hundred times a round; the rule's linear part is the twin's at the origin.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from ..game.policies import RULES, GeneralRule
from ..learners import Learner, LearnerTags

#: The extra that installs every peer library.
EXTRA = "peers"

#: A value of g strictly below 0 whose size carries no information: a rejecting tie.
TINY = math.ulp(0.0)


def library_available(module: str) -> bool:
    """Whether ``module`` (an optional peer library) can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def require(module: str, learner: str, *submodules: str) -> ModuleType:
    """Import the optional library ``module`` (and its ``submodules``, returning the last), or
    ``ValueError`` in one line naming the extra that installs it."""
    try:
        found = importlib.import_module(module)  # the top level first: a stubbed-out parent fails
        for sub in submodules:
            found = importlib.import_module(f"{module}.{sub}")
    except ImportError as exc:
        raise ValueError(f"learner {learner} needs the optional library {module!r} ({exc}); "
                         f"install it with: pip install 'strategic-apple-tasting[{EXTRA}]'"
                         ) from None
    return found


def examples_need(module: str) -> Callable[[type], type]:
    """Class decorator: when ``module`` is not installed, the class docstring's examples are
    marked ``+SKIP``, so its doctest is skipped rather than failed."""
    def mark(cls: type) -> type:
        if cls.__doc__ and not library_available(module):
            lines = []
            for line in cls.__doc__.splitlines():
                if line.lstrip().startswith((">>> ", "... ")):
                    line += "  # doctest: +SKIP"
                lines.append(line)
            cls.__doc__ = "\n".join(lines)
        return cls
    return mark


def flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")


#: The versions of each peer library the adapters are tested with, as the ``peers`` extra in
#: pyproject.toml pins them (tests/peers holds the two equal). The river and MABWiser adapters
#: read private fields of their libraries' objects, which a release may rename without notice:
#: :func:`check_fields` refuses, in one line, a library whose objects lack one.
TESTED = {"mabwiser": ">=2.7,<2.8", "river": ">=0.21,<0.27", "vowpalwabbit": ">=9.10,<10"}


def check_fields(library: str, obj: Any, where: str, names: tuple[str, ...]) -> None:
    """Fail loudly, in one line, when ``obj`` (the library's ``where``) lacks one of the private
    fields ``names`` an adapter reads: a release of the library outside the tested range
    (:data:`TESTED`) changed its internals, and the adapter would otherwise fail later, or
    worse, read something else."""
    missing = [name for name in names if not hasattr(obj, name)]
    if missing:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "(version unknown)"
        raise RuntimeError(f"{library} {version}: its {where} has no {missing[0]!r}, which "
                           f"the adapter reads (tested with {library}{TESTED[library]}): "
                           f"pip install '{library}{TESTED[library]}'")


def seed_from(rng: np.random.Generator) -> int:
    """A library seed drawn from the learner's Generator (a non-negative 31-bit int, which
    every peer library accepts)."""
    return int(rng.integers(0, 2**31 - 1))


class Box:
    """An adapter's state: the library's policy and what this round froze.

    Subclasses implement :meth:`value` (g at z, by the library's prediction), :meth:`freeze`
    (called when the round's rule is published), :meth:`end_round` (the round's feedback to the
    library) and optionally :meth:`values` (g at many points, batched when the library allows),
    :meth:`gradient` and :meth:`estimate`.
    """

    #: Whether the rule of a round is known to be linear in x' (a frozen sample of a linear
    #: model): its gradient is then the linear part found at publication.
    linear: ClassVar[bool] = False

    def __init__(self, d: int, intercept: bool) -> None:
        self.d = d
        self.intercept = intercept
        self.round = 0  # rounds finished

    def features(self, z: np.ndarray) -> np.ndarray:
        """The context the library sees: x' (and a constant 1 with an intercept)."""
        z = np.asarray(z, dtype=float)
        if not self.intercept:
            return z
        ones = np.ones((*z.shape[:-1], 1))
        return np.concatenate([z, ones], axis=-1)

    def freeze(self) -> None:
        """Fix this round's randomness (called once a round, before the rule is made)."""

    def value(self, z: np.ndarray) -> float:
        raise NotImplementedError

    def values(self, zs: np.ndarray) -> np.ndarray:
        """g at each row of ``zs`` (one library call per row unless a subclass batches)."""
        return np.array([self.value(z) for z in zs])

    gradient: Callable[[np.ndarray], np.ndarray] | None = None

    def twin(self) -> Any:
        """The round's rule as a compiled twin (:mod:`.twins`), read from the library's
        parameters after :meth:`freeze`; None if there is none (agents then call the library)."""
        return None

    def end_round(self, x_obs: np.ndarray, arm: int, reward: float | None) -> None:
        raise NotImplementedError

    def estimate(self) -> np.ndarray | None:
        return None


class RoundRule:
    """g (or ∇g) of the rule a box published for one round; picklable (the box pickles)."""

    __slots__ = ("box", "gradient", "round")

    def __init__(self, box: Box, round_: int, gradient: bool = False) -> None:
        self.box = box
        self.round = round_
        self.gradient = gradient

    def __getstate__(self) -> tuple:
        return (self.box, self.round, self.gradient)

    def __setstate__(self, state: tuple) -> None:
        self.box, self.round, self.gradient = state

    def __call__(self, z: np.ndarray) -> Any:
        if self.box.round != self.round:
            raise RuntimeError(f"this rule was published for round {self.round + 1}; the "
                               f"learner has learned since (a rule is in force for its round)")
        if self.gradient:
            return self.box.gradient(z)
        return self.box.value(z)


class PeerLearner(Learner, abstract=True):
    """Base of the adapters: a two-arm contextual bandit of a peer library as a Learner.

    Arm 1 is accept and arm 0 reject. The published rule is "accept iff g(x') ≥ 0" where g is
    built from the library's own prediction at x' (the round's randomness frozen), so agents
    answer the rule the library actually uses; its linear part (where agents' numerical search
    starts) is g's linearization at the origin. Under apple tasting a rejection is fed to the
    library as arm 0 with the known reward r0; under bandit feedback, with the observed reward.
    Unaware of gaming: it learns from every point it is given.
    """

    # Unaware of gaming, its rule the library's prediction. The rule reads the library's live
    # model (it holds no rule); the libraries do not promise that their updates commute, so
    # the adapters do not claim it. The learner's own calls take turns (its lock), but its
    # published rule calls the library's live model outside that lock: a rule evaluated in one
    # thread while another learns reads a model mid-update. Use an adapter from one thread at
    # a time.
    tags = LearnerTags(strategy_aware=False, nonlinear=True, holds_rules=False,
                       outcomes_commute=False, thread_safe=False)
    #: The library's import name (the top-level module).
    library: ClassVar[str]
    #: Relative step of the linearization at the origin (a step of g's own scale: the
    #: libraries predict in float32 (VW) or add a noise floor (river)).
    linearization_step: ClassVar[float] = 1e-4

    intercept: bool
    r0: float | None
    feedback: str | None

    def _require(self, *submodules: str) -> ModuleType:
        return require(self.library, self.name, *submodules)

    def _check_params(self) -> None:
        if self.r0 is None or self.feedback is None:
            raise ValueError(f"learner {self.name} needs r0 and feedback: give them, or bind it "
                             f"to a game first (Learner.bind)")
        super()._check_params()
        flag("intercept", self.intercept)

    def _box(self, d: int) -> Box:
        raise NotImplementedError

    def _init_state(self, d: int) -> Box:
        return self._box(d)

    def _publish(self) -> GeneralRule:
        box: Box = self.state
        box.freeze()
        d = self.dimension
        twin = box.twin()
        if twin is not None:  # the linear part: the twin's at the origin
            origin, beta = np.zeros(d), np.empty(d)
            threshold = -float(RULES[type(twin)](twin, origin, beta, True))
            if not (np.all(np.isfinite(beta)) and np.isfinite(threshold)):
                beta, threshold = np.zeros(d), 0.0
            gradient: Callable | None = None
            if box.linear:
                gradient = _Constant(beta)
            elif box.gradient is not None:
                gradient = RoundRule(box, box.round, gradient=True)
            return GeneralRule.from_function(RoundRule(box, box.round), beta, threshold,
                                             gradient=gradient, twin=twin)
        h = self.linearization_step
        points = np.zeros((2 * d + 1, d))
        points[np.arange(d), np.arange(d)] = h
        points[d + np.arange(d), np.arange(d)] = -h
        got = box.values(points)
        beta = (got[:d] - got[d:2 * d]) / (2.0 * h)
        threshold = -float(got[2 * d])  # g(x) ≈ g(0) + ⟨β, x⟩ ≥ 0
        if not np.all(np.isfinite(beta)):
            beta = np.zeros(d)
        gradient: Callable | None = None
        if box.linear:
            gradient = _Constant(beta)
        elif box.gradient is not None:
            gradient = RoundRule(box, box.round, gradient=True)
        return GeneralRule.from_function(RoundRule(box, box.round), beta, threshold,
                                         gradient=gradient)

    def _learn(self, rule: GeneralRule, x_obs: np.ndarray, accepted: bool,
               reward: float | None) -> bool:
        box: Box = self.state
        if reward is None and not accepted and self.feedback == "apple":
            reward = float(self.r0)  # the known reward of rejecting, fed as arm 0's
        box.end_round(x_obs, 1 if accepted else 0, reward)
        box.round += 1
        return reward is not None

    def _estimate(self) -> np.ndarray | None:
        return self.state.estimate()


class _Constant:
    """∇g of a rule that is linear in x' this round: its linear part."""

    __slots__ = ("beta",)

    def __init__(self, beta: np.ndarray) -> None:
        self.beta = np.array(beta, dtype=float)

    def __getstate__(self) -> np.ndarray:
        return self.beta

    def __setstate__(self, state: np.ndarray) -> None:
        self.beta = state

    def __call__(self, z: np.ndarray) -> np.ndarray:
        return self.beta.copy()
