"""Every registered learner, in each configuration its class gives, through every public check
(:mod:`strategic_apple_tasting.checks`), as scikit-learn's ``parametrize_with_checks`` does for
estimators. A learner added to the registry is checked automatically."""

from __future__ import annotations

import pytest

from strategic_apple_tasting.checks import check_learner, parametrize_with_checks
from strategic_apple_tasting.learners import LEARNERS, AcceptAll

CONFIGURATIONS = [learner for name in sorted(LEARNERS)
                  for learner in LEARNERS[name].check_configurations()]


@parametrize_with_checks(CONFIGURATIONS)
def test_learner_conformance(learner, check):
    check(learner)


def test_check_learner_names_the_check_that_fails():
    """The control: a learner that breaks a promise fails, and the message says which."""
    class Doubling(AcceptAll):
        name = "doubling"

        def __init__(self, feedback=None, scale=1.0):
            super().__init__(feedback)
            self.scale = 2 * scale  # not stored as given: a clone is not the same learner

    with pytest.raises(AssertionError, match=r"fails check_params_round_trip\[apple\]"):
        check_learner(Doubling(), checks=["check_params_round_trip"], feedback=["apple"])
    check_learner(AcceptAll(), checks=["check_params_round_trip"], feedback=["apple"])


def test_check_learner_refuses_what_is_not_a_learner():
    with pytest.raises(ValueError, match="learner must be a Learner instance, got 'sa-ols'"):
        check_learner("sa-ols")
    with pytest.raises(ValueError, match="checks must be among"):
        check_learner(AcceptAll(), checks=["check_nothing"])
