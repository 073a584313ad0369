"""The names of :class:`~.base.Learner` that earlier releases offered and this one keeps as
aliases, for one release: a learner's tags as class attributes (``SAOLS.strategy_aware``: read
``SAOLS.tags().strategy_aware``), its runtime under the base's old private names (``self._d``,
``self._rng``, ``self._state``: read ``self.dimension``, ``self.generator``, ``self.state``), and
the decision desk's methods forwarded one by one (``learner.decide(...)``: call
``learner.desk.decide(...)``), and four methods that became functions of the learner's public
face (``param_names``, ``model_attributes`` and ``check_configurations``: :mod:`.introspect`;
``compiled_belief``: :func:`.binding.compiled_belief_of`).

Reading a tag or the runtime through an alias, or calling a moved method, warns
(``DeprecationWarning``); the desk's
forwarders do not (they are the decision API's calls of earlier releases, on paths a service
runs per request), but are deprecated just the same and go in the next release, with this
module.
"""

from __future__ import annotations

import warnings
from typing import Any

from . import binding, introspect
from .tags import TAG_NAMES


def _moved(old: str, new: str, module: str = "introspect") -> None:
    warnings.warn(f"{old} is deprecated: call strategic_apple_tasting.learners.{module}.{new}",
                  DeprecationWarning, stacklevel=3)


class _TagAlias:
    """A tag read as a class attribute, as earlier releases declared it: ``tags()``'s field."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, learner: Any, cls: type) -> Any:
        warnings.warn(f"{cls.__name__}.{self.name} is deprecated: read "
                      f"{cls.__name__}.tags().{self.name}", DeprecationWarning, stacklevel=2)
        return getattr(cls.tags(), self.name)


class _RuntimeAlias:
    """The base's old private name of a part of its runtime, read-only: its public name."""

    def __init__(self, public: str) -> None:
        self.public = public

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, learner: Any, cls: type) -> Any:
        if learner is None:
            return self
        warnings.warn(f"{cls.__name__}.{self.name} is deprecated: read self.{self.public}",
                      DeprecationWarning, stacklevel=2)
        return getattr(learner, self.public)


class LegacyLearnerAPI:
    """The deprecated names :class:`~.base.Learner` keeps for one release (this module's
    description); every one of them reads or calls a current name."""

    _d = _RuntimeAlias("dimension")
    _rng = _RuntimeAlias("generator")
    _state = _RuntimeAlias("state")

    desk: Any

    @classmethod
    def param_names(cls) -> list[str]:
        """Deprecated: :func:`~.introspect.param_names`."""
        _moved(f"{cls.__name__}.param_names()", "param_names(cls)")
        return list(introspect.param_names(cls))

    @classmethod
    def check_configurations(cls) -> list[Any]:
        """Deprecated: ``tags = LearnerTags(check_with=...)``, read by
        :func:`~.introspect.check_configurations`."""
        _moved(f"{cls.__name__}.check_configurations()", "check_configurations(cls)")
        return introspect.check_configurations(cls)

    def model_attributes(self) -> dict[str, Any]:
        """Deprecated: :func:`~.introspect.model_attributes`."""
        _moved(f"{type(self).__name__}.model_attributes()", "model_attributes(learner)")
        return introspect.model_attributes(self)

    def compiled_belief(self) -> Any:
        """Deprecated: :func:`~.binding.compiled_belief_of`."""
        _moved(f"{type(self).__name__}.compiled_belief()", "compiled_belief_of(learner)",
               "binding")
        return binding.compiled_belief_of(self)

    def publish(self, time: float | None = None) -> Any:
        """Deprecated alias of ``desk.publish``."""
        return self.desk.publish(time)

    def publish_every(self, outcomes: int | None = None, period: float | None = None) -> Any:
        """Deprecated alias of ``desk.publish_every`` (returns the learner)."""
        self.desk.publish_every(outcomes, period)
        return self

    def adopt(self, rule: Any, time: float | None = None) -> Any:
        """Deprecated alias of ``desk.adopt``."""
        return self.desk.adopt(rule, time)

    def rule_in_force(self) -> Any:
        """Deprecated alias of ``desk.rule_in_force``."""
        return self.desk.rule_in_force()

    def decide(self, x_obs: Any, id: int | str | None = None, time: float | None = None) -> Any:
        """Deprecated alias of ``desk.decide``."""
        return self.desk.decide(x_obs, id, time)

    def record(self, x_obs: Any, id: int | str, accepted: bool, version: int, time: float
               ) -> Any:
        """Deprecated alias of ``desk.record``."""
        return self.desk.record(x_obs, id, accepted, version, time)

    def hold(self, version: int) -> None:
        """Deprecated alias of ``desk.hold``."""
        self.desk.hold(version)

    def release(self, version: int) -> None:
        """Deprecated alias of ``desk.release``."""
        self.desk.release(version)

    def pending(self) -> list[int | str]:
        """Deprecated alias of ``desk.pending``."""
        return self.desk.pending()

    def report(self, id: int | str, outcome: float) -> bool:
        """Deprecated alias of ``desk.report``."""
        return self.desk.report(id, outcome)

    @property
    def clock(self) -> float:
        """Deprecated alias of ``desk.clock``."""
        return self.desk.clock

    def desk_record(self) -> Any:
        """Deprecated alias of ``desk.desk_record``."""
        return self.desk.desk_record()

    def restore_desk(self, record: Any) -> None:
        """Deprecated alias of ``desk.restore_desk``."""
        self.desk.restore_desk(record)


for _name in TAG_NAMES:
    setattr(LegacyLearnerAPI, _name, _TagAlias(_name))
