"""Scenarios on real data: lending data sets as games on the engine (issues 11 and 21).

:func:`load_german_credit` and :func:`load_csv` give applicants and their real outcomes
(:class:`LendingData`); :func:`load_fico` the FICO TransRisk tables; :func:`load_dataset` the
named data sets. :func:`data_game` makes any of them a game for the compiled engine;
:func:`run_lending` plays learners on it and :func:`compare_lending` gives the table a lender
reads (profit, regret against the best linear rule and against the least-squares rule).
"""

from .datasets import DATASETS, DataSet, data_game, from_lending, load_dataset
from .fico import load_fico
from .lending import LendingData, german_credit_path, load_csv, load_german_credit
from .run import (
    BEST_RULE,
    LEARNERS,
    compare_lending,
    fitted_rule,
    format_table,
    run_lending,
    subset_agents,
)

__all__ = ["BEST_RULE", "DATASETS", "LEARNERS", "DataSet", "LendingData", "compare_lending",
           "data_game", "fitted_rule", "format_table", "from_lending", "german_credit_path",
           "load_csv", "load_dataset", "load_fico", "load_german_credit", "run_lending",
           "subset_agents"]
