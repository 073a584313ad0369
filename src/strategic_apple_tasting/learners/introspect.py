"""What a learner holds, read from its public face: the names of its hyperparameters
(``__init__``'s parameters), the attributes it keeps on itself besides them, and the instances
the public checks run it in.

The loader, the saved-file writer, the sweeps' specs and the public checks ask for these; they
are functions rather than methods of :class:`~.base.Learner` so that the base's public surface
is the per-round API and the hooks alone.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

_PARAM_NAMES: dict[tuple[type, Any], tuple[str, ...]] = {}

#: The attribute under which the base keeps its runtime (its lock, dimension, generator, state
#: and desk): a learner's own, never part of its model.
RUNTIME = "_Learner__run"


def param_names(cls: type) -> tuple[str, ...]:
    """The names of a learner class's hyperparameters (``__init__``'s parameters), in order:
    read once per class (the per-round and decision API ask for them every round, and
    ``inspect.signature`` took a third of a plain-Python learner's round).

    >>> from strategic_apple_tasting.learners import SAOLS
    >>> param_names(SAOLS)[:3]
    ('delta', 'r0', 'feedback')
    """
    key = (cls, cls.__init__)
    names = _PARAM_NAMES.get(key)
    if names is None:
        sig = inspect.signature(cls.__init__)
        names = _PARAM_NAMES[key] = tuple(p for p in sig.parameters if p != "self")
    return names


def model_attributes(learner: Any) -> dict[str, Any]:
    """What ``learner`` keeps on itself besides its hyperparameters, its state and the base's
    runtime: a plain-Python learner may keep its model there (``self._gram``), which a saved
    file holds as its ``attributes``."""
    params = set(param_names(type(learner)))
    return {k: v for k, v in vars(learner).items() if k not in params and k != RUNTIME}


def check_configurations(cls: type) -> list[Any]:
    """The instances the public checks (:mod:`strategic_apple_tasting.checks`) run a learner
    class in: one for each entry of its ``tags().check_with`` (by default one, with the
    defaults). A class that still overrides the ``check_configurations`` classmethod of
    earlier releases is asked instead, with a ``DeprecationWarning``.

    >>> from strategic_apple_tasting.learners import SAOLS
    >>> check_configurations(SAOLS)
    [SAOLS(delta=None, r0=None, feedback=None, agents=None, accept_when_locked=False, warmup=None), SAOLS(delta=None, r0=None, feedback=None, agents=None, accept_when_locked=True, warmup=None)]
    """  # noqa: E501
    own = next((k for k in cls.__mro__ if "check_configurations" in k.__dict__), None)
    if own is not None and own.__name__ != "LegacyLearnerAPI":
        warnings.warn(f"{cls.__name__}.check_configurations is deprecated: declare tags = "
                      f"LearnerTags(check_with=(...)), the hyperparameters of each instance",
                      DeprecationWarning, stacklevel=2)
        return list(cls.check_configurations())
    return [cls(**params) for params in cls.tags().check_with]


__all__ = ["RUNTIME", "check_configurations", "model_attributes", "param_names"]
