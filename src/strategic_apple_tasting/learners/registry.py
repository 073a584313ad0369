"""The registry: a learner's name (as on the command line) → its class, and the lookup of a
learner by registry name, entry point or import path."""

from __future__ import annotations

import importlib
from importlib import metadata

from .base import Learner
from .baselines import AcceptAll, Oracle, RejectAll
from .epsilon_greedy import EpsilonGreedy
from .etc import ExploreThenCommit
from .exp3_sae import Exp3SAE
from .exp3p_sae import Exp3PSAE
from .greedy_ols import SAOLS, NaiveGreedyOLS, ShiftedOLS
from .lin_ts import LinTS
from .linucb import LinUCB
from .logistic import NaiveLogistic, OffsetLogistic, SALogistic
from .offset_ols import OffsetOLS
from .sampled_sae import SampledSAE
from .unknown_horizon import UnknownHorizon

#: Name (as on the command line) → learner class.
LEARNERS: dict[str, type[Learner]] = {
    cls.name: cls for cls in (SAOLS, ExploreThenCommit, UnknownHorizon, Exp3SAE, Exp3PSAE,
                              SampledSAE, Oracle, NaiveGreedyOLS, ShiftedOLS, OffsetOLS, AcceptAll,
                              RejectAll, LinUCB, LinTS, EpsilonGreedy, SALogistic, OffsetLogistic,
                              NaiveLogistic)
}


#: Entry-point group under which other packages register learners by name.
ENTRY_POINTS = "strategic_apple_tasting.learners"


def _allowed() -> str:
    return (f"one of {', '.join(LEARNERS)}, a learner installed under the entry-point group "
            f"{ENTRY_POINTS!r}, or an import path package.module:Class")


def _checked(name: str, cls: object) -> type[Learner]:
    if not (isinstance(cls, type) and issubclass(cls, Learner)):
        raise ValueError(f"learner {name!r} is {cls!r}, not a Learner subclass")
    if not isinstance(getattr(cls, "name", None), str):
        raise ValueError(f"learner {name!r} ({cls.__name__}) has no name: a learner class "
                         "sets name (and kernels, or _publish and _learn)")
    return cls


def learner_class(name: str) -> type[Learner]:
    """The learner class called ``name``: a registry name (:data:`LEARNERS`), a name registered
    by another package under :data:`ENTRY_POINTS`, or an import path ``package.module:Class``.

    Registered names come first, so an entry point may be called ``library:Policy`` (as the
    peer adapters are) without being taken for an import path. ``ValueError`` in one line if
    the name cannot be found or imported, or is not a learner.

    Examples
    --------
    >>> learner_class("sa-ols") is learner_class("strategic_apple_tasting.learners:SAOLS")
    True
    """
    if not isinstance(name, str):
        raise ValueError(f"learner must be {_allowed()}, got {name!r}")
    if name in LEARNERS:
        return LEARNERS[name]
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        if entry.name == name:
            try:
                found = entry.load()
            except Exception as exc:  # any error while importing the user's module
                raise ValueError(f"learner {name!r}: cannot import {entry.value!r} "
                                 f"({exc})") from None
            return _checked(name, found)
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            found = importlib.import_module(module)
        except Exception as exc:  # any error while importing the user's module
            raise ValueError(f"learner {name!r}: cannot import {module!r} "
                             f"({type(exc).__name__}: {exc})") from None
        for part in attr.split("."):
            if not hasattr(found, part):
                raise ValueError(f"learner {name!r}: {module!r} has no {attr!r}") from None
            found = getattr(found, part)
        return _checked(name, found)
    raise ValueError(f"learner must be {_allowed()}, got {name!r}")


def make_learner(name: str, **params) -> Learner:
    """Build a learner by name (:func:`learner_class`) with the given hyperparameters.

    Examples
    --------
    >>> make_learner("sa-ols", delta=0.2)
    SAOLS(delta=0.2, r0=None, feedback=None, agents=None, accept_when_locked=False, warmup=None)
    """
    return learner_class(name)(**params)
