"""Every registered learner, in each configuration its class gives, through every public check
(:mod:`strategic_apple_tasting.checks`), as scikit-learn's ``parametrize_with_checks`` does for
estimators. A learner added to the registry is checked automatically."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting.checks import check_learner, parametrize_with_checks
from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.learners import LEARNERS, AcceptAll, Learner, LearnerTags
from strategic_apple_tasting.learners.introspect import check_configurations

CONFIGURATIONS = [learner for name in sorted(LEARNERS)
                  for learner in check_configurations(LEARNERS[name])]


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


class _RidgeBySolve(Learner):
    """Greedy ridge regression as the guide first wrote it: ``np.linalg.solve`` of I + Σxxᵀ,
    exactly singular in double precision once a feature of 10⁹ makes 1 + 10¹⁸ = 10¹⁸."""

    name = "ridge-by-solve"
    tags = LearnerTags(strategy_aware=False)

    def __init__(self, r0=None, feedback=None, fallback=False):
        self.r0, self.feedback, self.fallback = r0, feedback, fallback

    def _init_state(self, d):
        self._gram, self._xy = np.eye(d), np.zeros(d)

    def _publish(self):
        return LinearThreshold(beta=self._estimate(), threshold=self.r0)

    def _learn(self, rule, x_obs, accepted, reward):
        if reward is None:
            return False
        self._gram += np.outer(x_obs, x_obs)
        self._xy += reward * x_obs
        return True

    def _estimate(self):
        try:
            return np.linalg.solve(self._gram, self._xy)
        except np.linalg.LinAlgError:
            if not self.fallback:
                raise
            return np.linalg.lstsq(self._gram, self._xy, rcond=None)[0]


def test_check_stays_finite_rejects_a_learner_that_breaks_at_the_bound():
    """The control: a learner whose fit fails at the input bound fails the check, which names
    the applicant; with the guide's fallback to least squares it passes."""
    with pytest.raises(AssertionError, match=r"fails check_stays_finite\[apple\]: at applicant "
                       r"\d+ of the run that starts 'at the bound'.*LinAlgError"):
        check_learner(_RidgeBySolve(), checks=["check_stays_finite"], feedback=["apple"])
    check_learner(_RidgeBySolve(fallback=True), checks=["check_stays_finite"])
