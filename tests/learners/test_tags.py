"""One tags object per learner class: what the checks, engine, loader and reports
read of a learner class, collected from its class attributes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from strategic_apple_tasting.checks import learner_checks
from strategic_apple_tasting.game import FEEDBACK, Game, LinearThreshold
from strategic_apple_tasting.learners import LEARNERS, Learner, LearnerTags
from strategic_apple_tasting.reports.figures import theorem_of


class AppleOnly(Learner):
    """A user learner that declares nothing but the feedback it learns under."""

    name = "apple-only"
    supported_feedback = ("apple",)

    def __init__(self, r0=None, feedback=None):
        self.r0, self.feedback = r0, feedback

    def _init_state(self, d):
        return None

    def _publish(self):
        return LinearThreshold(beta=np.ones(self._d), threshold=0.0)

    def _learn(self, rule, x_obs, accepted, reward):
        return False


def test_a_user_learner_gets_the_defaults():
    tags = AppleOnly.tags()
    assert isinstance(tags, LearnerTags)
    assert tags == LearnerTags(feedback=("apple",))
    assert tags.strategy_aware and tags.outcomes_commute and not tags.nonlinear
    with pytest.raises(dataclasses.FrozenInstanceError):
        tags.nonlinear = True  # type: ignore[misc]


def test_the_tags_are_the_class_declarations_for_every_registered_learner():
    for name, cls in LEARNERS.items():
        tags = cls.tags()
        assert tags is cls.tags(), name  # one object per class
        assert (tags.strategy_aware, tags.outcomes_commute, tags.nonlinear,
                tags.published_fields, tags.theorem, tags.holds_rules, tags.thread_safe) == (
            cls.strategy_aware, cls.outcomes_commute, cls.nonlinear, cls.published_fields,
            cls.theorem, cls.holds_rules, cls.thread_safe), name
        assert tags.feedback == FEEDBACK, name
    assert LEARNERS["linucb"].tags().nonlinear  # from its kernels' rule
    assert LEARNERS["exp3-sae"].tags().published_fields == ("played", "q_played")
    assert theorem_of("exp3-sae") is LEARNERS["exp3-sae"].tags().theorem


def test_a_learner_is_refused_a_feedback_it_does_not_learn_under():
    with pytest.raises(ValueError, match=r"^feedback must be one of apple \(what apple-only "
                                         r"learns under\), got 'bandit'$"):
        AppleOnly(r0=0.0, feedback="bandit").reset(2)
    game = Game(dimension=2, feedback="bandit")
    with pytest.raises(ValueError, match=r"^learner apple-only learns under feedback apple "
                                         r"only, but the game has feedback='bandit'$"):
        AppleOnly().bind(game.instance(0))
    AppleOnly().bind(Game(dimension=2).instance(0))  # its own mode binds


def test_the_checks_run_only_the_supported_feedback():
    modes = {name.rsplit("[", 1)[1] for _, _, name in learner_checks(AppleOnly())}
    assert modes == {"apple]"}


def test_a_bad_declaration_is_refused_with_the_class():
    with pytest.raises(ValueError, match="supported_feedback must be a non-empty tuple"):
        class Both(AppleOnly):
            name = "both"
            supported_feedback = ("apple", "full")
