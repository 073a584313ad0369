"""What a learner class is, in one object: its tags.

A learner class declares what it is with class attributes (``strategy_aware = False``,
``nonlinear = True``, ...), each with a default, so a learner that declares nothing is a linear,
strategy-aware learner whose outcomes commute, with no theorem, for both feedback modes.
:meth:`~.base.Learner.tags` collects them into one frozen :class:`LearnerTags`, which the
public checks, the engine, the loader, the registry's reports and the decision desk read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..game.game import FEEDBACK
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
    feedback
        The feedback modes it learns under (both, unless it declares fewer).
    theorem
        The regret its theorem proves, and on what assumptions (None: no theorem).
    holds_rules
        Whether a published rule stays valid while outcomes are learned (False for a rule that
        reads its live model: the peer adapters).
    thread_safe
        Whether it may be used from several threads at once (each public method holds the
        learner's lock; False when its rule reads state changed outside it).
    """

    strategy_aware: bool = True
    outcomes_commute: bool = True
    nonlinear: bool = False
    published_fields: tuple[str, ...] = ()
    feedback: tuple[str, ...] = FEEDBACK
    theorem: Theorem | None = None
    holds_rules: bool = True
    thread_safe: bool = True

    def __post_init__(self) -> None:
        unknown = [f for f in self.feedback if f not in FEEDBACK]
        if unknown or not self.feedback:
            raise ValueError(f"supported_feedback must be a non-empty tuple of "
                             f"{', '.join(FEEDBACK)}, got {self.feedback!r}")

    @classmethod
    def of(cls, learner_class: type) -> LearnerTags:
        """The tags a learner class declares by its class attributes."""
        get: Any = getattr
        return cls(
            strategy_aware=bool(get(learner_class, "strategy_aware", True)),
            outcomes_commute=bool(get(learner_class, "outcomes_commute", True)),
            nonlinear=bool(get(learner_class, "nonlinear", False)),
            published_fields=tuple(get(learner_class, "published_fields", ())),
            feedback=tuple(get(learner_class, "supported_feedback", FEEDBACK)),
            theorem=get(learner_class, "theorem", None),
            holds_rules=bool(get(learner_class, "holds_rules", True)),
            thread_safe=bool(get(learner_class, "thread_safe", True)),
        )
