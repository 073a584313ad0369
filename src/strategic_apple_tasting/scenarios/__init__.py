"""Scenarios on real data: lending data sets as games on the engine.

:func:`load_german_credit` and :func:`load_csv` give applicants and their real outcomes
(:class:`LendingData`); :func:`load_fico` the FICO TransRisk tables; :func:`load_taiwan_credit`
the Taiwanese card holders of UCI's default of credit card clients; :func:`load_dataset` the
named data sets. :func:`data_game` makes any of them a game for the compiled engine;
:func:`run_lending` plays learners on it and :func:`compare_lending` gives the table a lender
reads (profit, regret against the best linear rule and against the least-squares rule).
"""

# The names below are loaded on first use (PEP 562), as the package's own are: the CLI reads
# DATASETS from .datasets while building its parser, and the other modules bring pandas,
# scipy and matplotlib, which `sat run` never needs (its first run within 3 s).

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

#: Where each public name is defined (relative to this package).
_SOURCES = {
    **dict.fromkeys(("DATASETS", "DataSet", "data_game", "from_lending", "load_dataset"),
                    ".datasets"),
    "load_fico": ".fico",
    **dict.fromkeys(("check_keeps_lending", "lending_pays"), ".lockout"),
    "load_taiwan_credit": ".taiwan",
    **dict.fromkeys(("format_groups", "group_summary"), ".groups"),
    **dict.fromkeys(("LendingData", "german_credit_path", "load_csv", "load_german_credit"),
                    ".lending"),
    **dict.fromkeys(("BEST_RULE", "LEARNERS", "compare_lending", "fitted_rule", "format_table",
                     "run_lending", "subset_agents"), ".run"),
}


if TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
    from .datasets import DATASETS, DataSet, data_game, from_lending, load_dataset
    from .fico import load_fico
    from .groups import format_groups, group_summary
    from .lending import LendingData, german_credit_path, load_csv, load_german_credit
    from .lockout import check_keeps_lending, lending_pays
    from .run import (
        BEST_RULE,
        LEARNERS,
        compare_lending,
        fitted_rule,
        format_table,
        run_lending,
        subset_agents,
    )
    from .taiwan import load_taiwan_credit

__all__ = ["BEST_RULE", "DATASETS", "LEARNERS", "DataSet", "LendingData",
           "check_keeps_lending", "compare_lending", "data_game", "fitted_rule",
           "format_groups", "format_table", "from_lending", "german_credit_path",
           "group_summary", "lending_pays", "load_csv", "load_dataset", "load_fico",
           "load_german_credit", "load_taiwan_credit", "run_lending", "subset_agents"]

__getattr__, __dir__ = lazy_names(__name__, _SOURCES, __all__)
