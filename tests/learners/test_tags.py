"""One tags object per learner class, declared in one place (``tags = LearnerTags(...)``) and
read through ``tags()``; the class attributes of earlier releases still declare it, with a
DeprecationWarning, for one release."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from strategic_apple_tasting.checks import learner_checks
from strategic_apple_tasting.game import FEEDBACK, Game, LinearThreshold
from strategic_apple_tasting.learners import LEARNERS, SAOLS, Learner, LearnerTags
from strategic_apple_tasting.learners.tags import TAG_NAMES
from strategic_apple_tasting.reports.figures import theorem_of


class AppleOnly(Learner):
    """A user learner that declares nothing but the feedback it learns under."""

    name = "apple-only"
    tags = LearnerTags(supported_feedback=("apple",))

    def __init__(self, r0=None, feedback=None):
        self.r0, self.feedback = r0, feedback

    def _init_state(self, d):
        return None

    def _publish(self):
        return LinearThreshold(beta=np.ones(self.dimension), threshold=0.0)

    def _learn(self, rule, x_obs, accepted, reward):
        return False


def test_a_user_learner_gets_the_defaults():
    tags = AppleOnly.tags()
    assert isinstance(tags, LearnerTags)
    assert tags == LearnerTags(supported_feedback=("apple",))
    assert tags.strategy_aware and tags.outcomes_commute and not tags.nonlinear
    with pytest.raises(dataclasses.FrozenInstanceError):
        tags.nonlinear = True  # type: ignore[misc]
    assert AppleOnly().tags() is tags  # an instance reads its class's


def test_the_tag_fields_are_the_class_attributes_of_earlier_releases():
    assert TAG_NAMES == ("strategy_aware", "outcomes_commute", "nonlinear", "published_fields",
                         "supported_feedback", "theorem", "holds_rules", "thread_safe",
                         "input_bound", "variable_shapes")


def test_every_registered_learner_declares_its_tags_in_one_object():
    for name, cls in LEARNERS.items():
        tags = cls.tags()
        assert tags is cls.tags(), name  # one object per class
        assert tags.supported_feedback == FEEDBACK, name
        assert tags.input_bound == 1e9, name
        # Declared once: no tag is left as a class attribute of its own.
        for klass in cls.__mro__:
            assert not set(TAG_NAMES) & set(vars(klass)) or klass.__name__ == "LegacyLearnerAPI"
    assert LEARNERS["linucb"].tags().nonlinear  # from its kernels' rule
    assert not LEARNERS["naive-greedy"].tags().strategy_aware
    assert LEARNERS["exp3-sae"].tags().published_fields == ("played", "q_played")
    assert theorem_of("exp3-sae") is LEARNERS["exp3-sae"].tags().theorem


def test_a_subclass_inherits_its_parents_tags_or_declares_its_own():
    class Child(AppleOnly):
        name = "child"

    class Own(AppleOnly):
        name = "own"
        tags = LearnerTags(strategy_aware=False)

    assert Child.tags() is AppleOnly.tags()
    assert Own.tags() == LearnerTags(strategy_aware=False)  # replaces, feedback both again


def test_the_old_class_attributes_still_declare_tags_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"^learner Old declares strategy_aware, "
                                                r"input_bound as class attributes, deprecated: "
                                                r"write tags = LearnerTags\(") as caught:
        class Old(AppleOnly):
            name = "old"
            strategy_aware = False
            input_bound = 1e6

    assert caught[0].filename == __file__  # it points at the class statement
    # Folded into the inherited tags: the parent's feedback stays.
    assert Old.tags() == LearnerTags(strategy_aware=False, input_bound=1e6,
                                     supported_feedback=("apple",))
    with pytest.raises(ValueError, match=r"^x_obs\[0\] must be at most 1e\+06 in magnitude"):
        Old(r0=0.0, feedback="apple").reset(1).act([2e6])
    # Control: the same declaration in one object warns nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class New(AppleOnly):
            name = "new"
            tags = LearnerTags(strategy_aware=False, input_bound=1e6,
                               supported_feedback=("apple",))
    assert New.tags() == Old.tags()


def test_reading_a_tag_as_a_class_attribute_warns_and_reads_the_tags():
    with pytest.warns(DeprecationWarning, match=r"^SAOLS.input_bound is deprecated: read "
                                                r"SAOLS.tags\(\).input_bound$"):
        assert SAOLS.input_bound == SAOLS.tags().input_bound == 1e9
    with pytest.warns(DeprecationWarning, match="strategy_aware is deprecated"):
        assert SAOLS(delta=0.1).strategy_aware is True  # on an instance too
    with pytest.warns(DeprecationWarning, match=r"^LearnerTags.feedback is deprecated: read "
                                                r"supported_feedback$"):
        assert AppleOnly.tags().feedback == ("apple",)


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
    with pytest.raises(ValueError, match=r"^supported_feedback must be a non-empty tuple"):
        class Both(AppleOnly):
            name = "both"
            tags = LearnerTags(supported_feedback=("apple", "full"))
    with pytest.raises(ValueError, match=r"^supported_feedback must be a non-empty tuple"), \
            pytest.warns(DeprecationWarning):
        class OldBoth(AppleOnly):
            name = "old-both"
            supported_feedback = ("apple", "full")
    with pytest.raises(ValueError, match=r"^input_bound must be a finite number > 0, got inf$"):
        LearnerTags(input_bound=float("inf"))
    with pytest.raises(TypeError, match=r"^learner Loose: tags must be a LearnerTags"):
        class Loose(AppleOnly):
            name = "loose"
            tags = "strategy_aware=False"


def test_the_checks_run_the_instances_the_tags_declare():
    """``check_with`` gives one instance's hyperparameters each; the classmethod of earlier
    releases still answers (warning), and a subclass still overriding it is still asked."""
    from strategic_apple_tasting.learners.introspect import check_configurations

    class Two(AppleOnly):
        name = "two"
        tags = LearnerTags(supported_feedback=("apple",), check_with=({}, {"r0": 0.5}))

    assert [lr.r0 for lr in check_configurations(Two)] == [None, 0.5]
    assert [lr.r0 for lr in check_configurations(AppleOnly)] == [None]  # the default: one
    with pytest.warns(DeprecationWarning, match=r"^Two.check_configurations\(\) is deprecated"):
        assert [lr.r0 for lr in Two.check_configurations()] == [None, 0.5]

    class Old(AppleOnly):
        name = "old"

        @classmethod
        def check_configurations(cls):
            return [cls(r0=0.25)]

    with pytest.warns(DeprecationWarning, match=r"^Old.check_configurations is deprecated"):
        assert [lr.r0 for lr in check_configurations(Old)] == [0.25]
    for bad in ({}, (), ({"r0": 1}, "r0=1"), ({1: 2},)):
        with pytest.raises(ValueError, match=r"^check_with must be a non-empty tuple of "
                                             r"dictionaries of hyperparameters, got "):
            LearnerTags(check_with=bad)


def test_the_methods_that_became_functions_warn_and_answer_the_same():
    from strategic_apple_tasting.learners import binding, introspect

    learner = SAOLS(delta=0.1, r0=0.0, feedback="apple")
    with pytest.warns(DeprecationWarning, match=r"^SAOLS.param_names\(\) is deprecated: call "
                                                r"strategic_apple_tasting.learners.introspect"):
        assert SAOLS.param_names() == list(introspect.param_names(SAOLS))
    with pytest.warns(DeprecationWarning, match=r"^SAOLS.model_attributes\(\) is deprecated"):
        assert learner.model_attributes() == introspect.model_attributes(learner) == {}
    with pytest.warns(DeprecationWarning, match=r"^SAOLS.compiled_belief\(\) is deprecated: "
                                                r"call strategic_apple_tasting.learners.binding"):
        old = learner.compiled_belief()
    assert repr(old) == repr(binding.compiled_belief_of(learner))  # arrays: no ==
