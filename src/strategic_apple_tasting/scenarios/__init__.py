"""Scenarios on real data: the semi-synthetic lending scenario (issue 11, part 4).

:func:`load_german_credit` and :func:`load_csv` give applicants and their real outcomes
(:class:`LendingData`); :func:`run_lending` plays the strategic apple-tasting game on them and
:func:`compare_lending` summarizes it per learner with intervals over seeds.
"""

from .lending import LendingData, german_credit_path, load_csv, load_german_credit
from .run import LEARNERS, compare_lending, fitted_rule, format_table, run_lending, subset_agents

__all__ = ["LEARNERS", "LendingData", "compare_lending", "fitted_rule", "format_table",
           "german_credit_path", "load_csv", "load_german_credit", "run_lending",
           "subset_agents"]
