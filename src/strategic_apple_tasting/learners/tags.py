"""What a learner class is, in one object: its tags.

A learner class declares what it is in one place, ``tags = LearnerTags(...)`` on the class;
every field has a default, so a learner that declares nothing is a linear, strategy-aware
learner whose outcomes commute, with no theorem, for both feedback modes, taking inputs up to
:data:`~.inputs.INPUT_BOUND`. A subclass inherits its parent's tags (and may declare its own).
:meth:`~.base.Learner.tags` gives them: the public checks, the engine, the loader, the service,
the registry's reports and the decision desk read a learner class only through it.

The class attributes of earlier releases (``strategy_aware = False``, ``supported_feedback =
("apple",)``, ...) still declare the same fields for one release: the base class folds them into
the class's tags with a ``DeprecationWarning`` (:func:`declared_tags`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any

from ..game.game import FEEDBACK
from .inputs import INPUT_BOUND
from .theorem import Theorem


@dataclass(frozen=True)
class LearnerTags:
    """What a learner class is, as the code that runs it needs to know.

    Attributes
    ----------
    strategy_aware
        Whether it learns only from points agents cannot have gamed (False for baselines that
        learn from points agents may have moved).
    outcomes_commute
        Whether outcomes learned in any order leave the state that decision order leaves (to
        rounding): :func:`~strategic_apple_tasting.checks.check_outcomes_in_any_order`.
    nonlinear
        Whether it may publish a :class:`~strategic_apple_tasting.game.GeneralRule` (agents
        answer it numerically; a compiled learner is nonlinear iff its kernels give ``rule``).
    published_fields
        State fields its ``policy`` sets and its ``update`` reads (EXP3-SAE's played expert):
        copied with each published rule and put back while a late outcome is learned.
    supported_feedback
        The feedback modes it learns under (both, unless it declares fewer): a game or a
        ``feedback`` parameter outside them is refused in one line. (``feedback`` is its
        deprecated alias.)
    theorem
        The regret its theorem proves, and on what assumptions (None: no theorem).
    holds_rules
        Whether a published rule stays valid while outcomes are learned (False for a rule that
        reads its live model: the peer adapters).
    thread_safe
        Whether it may be used from several threads at once (each public method holds the
        learner's lock; False when its rule reads state changed outside it).
    input_bound
        The largest magnitude of a feature or an outcome its API takes (``r0`` and ``delta``
        too): beyond it every entry refuses in one line, before any hook. A learner whose
        arithmetic needs less declares a smaller one; the service and
        :func:`~strategic_apple_tasting.checks.check_stays_finite` hold to it.
    check_with
        The hyperparameters of each instance the public checks run it in
        (:func:`~.introspect.check_configurations`): by default one, with the defaults; a
        learner whose options take other code paths gives one entry for each
        (``({}, {"batch_points": 0})``).
    variable_shapes
        Arrays of the state or attributes (named as the loader names them:
        ``"state.history"``, ``"attribute._seen"``) whose shape changes during a run: a saved
        file's other arrays must have the template's shape exactly, these only its dtype and
        number of dimensions.

    Examples
    --------
    >>> tags = LearnerTags(strategy_aware=False, supported_feedback=("apple",))
    >>> tags.strategy_aware, tags.nonlinear, tags.supported_feedback
    (False, False, ('apple',))
    >>> LearnerTags(input_bound=0.0)
    Traceback (most recent call last):
    ...
    ValueError: input_bound must be a finite number > 0, got 0.0
    """

    strategy_aware: bool = True
    outcomes_commute: bool = True
    nonlinear: bool = False
    published_fields: tuple[str, ...] = ()
    supported_feedback: tuple[str, ...] = FEEDBACK
    theorem: Theorem | None = None
    holds_rules: bool = True
    thread_safe: bool = True
    input_bound: float = INPUT_BOUND
    variable_shapes: tuple[str, ...] = ()
    # Dictionaries do not hash: tags compare by it, and hash without it.
    check_with: tuple[dict[str, Any], ...] = dataclasses.field(default=({},), hash=False)

    def __post_init__(self) -> None:
        # Normalized so that a declaration by list or numpy bool equals one by tuple and bool.
        for name in ("strategy_aware", "outcomes_commute", "nonlinear", "holds_rules",
                     "thread_safe"):
            object.__setattr__(self, name, bool(getattr(self, name)))
        for name in ("published_fields", "supported_feedback", "variable_shapes"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{name} must be a tuple of names, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        unknown = [f for f in self.supported_feedback if f not in FEEDBACK]
        if unknown or not self.supported_feedback:
            raise ValueError(f"supported_feedback must be a non-empty tuple of "
                             f"{', '.join(FEEDBACK)}, got {self.supported_feedback!r}")
        if isinstance(self.check_with, dict) or not self.check_with or not all(
                isinstance(p, dict) and all(isinstance(k, str) for k in p)
                for p in self.check_with):
            raise ValueError(f"check_with must be a non-empty tuple of dictionaries of "
                             f"hyperparameters, got {self.check_with!r}")
        object.__setattr__(self, "check_with", tuple(dict(p) for p in self.check_with))
        bound = self.input_bound
        if isinstance(bound, bool) or not isinstance(bound, int | float) \
                or not (math.isfinite(bound) and bound > 0):
            raise ValueError(f"input_bound must be a finite number > 0, got {bound!r}")
        object.__setattr__(self, "input_bound", float(bound))
        if self.theorem is not None and not isinstance(self.theorem, Theorem):
            raise ValueError(f"theorem must be a Theorem or None, got {self.theorem!r}")

    @property
    def feedback(self) -> tuple[str, ...]:
        """Deprecated alias of :attr:`supported_feedback` (one name for one tag)."""
        warnings.warn("LearnerTags.feedback is deprecated: read supported_feedback",
                      DeprecationWarning, stacklevel=2)
        return self.supported_feedback


#: The fields of :class:`LearnerTags` that were class attributes of their own before
#: (``check_with`` was a classmethod, ``check_configurations``: :mod:`._aliases` keeps it).
TAG_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(LearnerTags)
                                   if f.name != "check_with")


def declared_tags(cls: type, inherited: LearnerTags, stacklevel: int) -> LearnerTags:
    """The tags a learner class declares: its own ``tags`` (else ``inherited``), with any tag
    still declared by a class attribute of the earlier releases folded in (a
    ``DeprecationWarning`` naming them; ``stacklevel`` points it at the class statement)."""
    own = cls.__dict__.get("tags", inherited)
    if not isinstance(own, LearnerTags):
        raise TypeError(f"learner {cls.__name__}: tags must be a LearnerTags(...), got "
                        f"{own!r}")
    old: dict[str, Any] = {n: cls.__dict__[n] for n in TAG_NAMES if n in cls.__dict__}
    if not old:
        return own
    warnings.warn(f"learner {cls.__name__} declares {', '.join(old)} as class attributes, "
                  f"deprecated: write tags = LearnerTags({', '.join(f'{n}=...' for n in old)})",
                  DeprecationWarning, stacklevel=stacklevel + 1)
    return dataclasses.replace(own, **old)
