"""A lender's question answered on its data: how far do applicants game, and which
learner to deploy when that is not known.

:func:`estimate_lending_budget` publishes the least-squares rule for T applicants of a data
game and estimates the budget from where their reported features land
(:func:`~strategic_apple_tasting.learners.budget.estimate_budget`). :func:`estimating` gives
each strategy-aware learner ``delta="estimate"`` (the oracle, a benchmark, stays told δ);
:func:`recommend` picks, from a comparison run on the data, the learner with the highest mean
profit: measured, not guessed, and saying when the runner-up's interval overlaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..engine.probe import probe_rule
from ..learners import Learner, make_learner
from ..learners.budget import DELTA_MAX, BudgetEstimate, estimate_budget
from .datasets import DataSet, data_game
from .run import BEST_RULE, CROSS_FITTED


def estimate_lending_budget(data: DataSet, *, delta: float, truthful: float = 0.0,
                            horizon: int, seed: int = 0,
                            cap: float = DELTA_MAX) -> BudgetEstimate:
    """The budget estimated from ``horizon`` applicants of ``data`` (gaming with ``delta``,
    a share ``truthful`` honest) answering the least-squares rule θ* (accept iff ⟨θ*, x′⟩ ≥
    0), up to ``cap``."""
    game = data_game(data, delta=delta, truthful=truthful)
    theta = np.asarray(game.theta1, dtype=float)
    return estimate_budget(probe_rule(game, theta, float(game.r0), horizon, seed=seed),
                           delta_max=cap)


def estimating(names: Sequence[str]) -> list[tuple[str, Learner]]:
    """Each learner by name, a strategy-aware one (but the oracle) with ``delta="estimate"``
    and labelled ``"<name> (δ estimated)"``."""
    out: list[tuple[str, Learner]] = []
    for name in names:
        learner = make_learner(name)
        if (learner.tags().strategy_aware and "delta" in learner.get_params()
                and name != "oracle"):
            out.append((f"{name} (δ estimated)", make_learner(name, delta="estimate")))
        else:
            out.append((name, learner))
    return out


def recommend(summary: pd.DataFrame) -> tuple[str, str]:
    """The learner with the highest mean profit in :func:`~.run.compare_lending`'s summary
    (the oracle and the fixed rules, benchmarks chosen with what no learner knows, left out),
    and why, in one line. Under the ``holdout`` protocol the profit compared is the held-out
    one (on applicants no learner met); otherwise the online profit, and the line says it is
    in-sample under ``replay``.

    Examples
    --------
    >>> summary = pd.DataFrame({"learner": ["a", "b", "oracle"], "profit": [5.0, 3.0, 9.0],
    ...                         "profit_ci": [1.0, 0.5, 0.1]})
    >>> recommend(summary)[0]
    'a'
    """
    rows = summary[~summary["learner"].isin(["oracle", BEST_RULE, *CROSS_FITTED.values()])]
    held = "holdout" in rows and bool(rows["holdout"].notna().any())
    key = "holdout" if held else "profit"
    rows = rows.sort_values(key, ascending=False, kind="stable")
    if rows.empty:
        raise ValueError("summary must hold at least one learner besides the benchmarks")
    best = rows.iloc[0]
    protocol = str(best.get("protocol", "replay"))
    where = {"holdout": "held-out profit per 1,000 new applicants",
             "replay": "profit per 1,000 applicants, in-sample (rows redrawn)"}.get(
                 protocol if held or protocol == "replay" else "", "profit per 1,000 applicants")
    why = f"the highest mean {where} on this data ({_shown(best, key)})"
    if len(rows) > 1:
        second = rows.iloc[1]
        gap = best[key] - second[key]
        if gap <= _half(best, key) + _half(second, key):
            why += (f"; the runner-up {second['learner']} ({_shown(second, key)}) is within "
                    "the intervals: more seeds would separate them")
        else:
            why += f", ahead of {second['learner']} ({_shown(second, key)})"
    return str(best["learner"]), why


def _half(row: Any, key: str = "profit") -> float:
    half = float(row.get(f"{key}_ci", np.nan))
    return 0.0 if np.isnan(half) else half


def _shown(row: Any, key: str = "profit") -> str:
    half = float(row.get(f"{key}_ci", np.nan))
    tail = "" if np.isnan(half) else f" ± {half:.2g}"
    return f"{float(row[key]):.4g}{tail}"


def format_estimate(est: BudgetEstimate, cap: float = DELTA_MAX) -> str:
    """One line: the estimate, its interval, what it was read from.

    Examples
    --------
    >>> line = format_estimate(BudgetEstimate(0.25, 0.2495, 0.2505, 0.95, 310, 0, 0.0, 20000))
    >>> line[:61]
    'estimated δ = 0.25, 95% interval [0.2495, 0.2505] (310 applic'
    >>> line[61:]
    'ants on the boundary, 0 unmoved in the band, truthful share 0; 20,000 applicants)'

    On distances that repeat (a data set's rows redrawn, scores on a grid) the line says why
    the interval is wide:

    >>> format_estimate(BudgetEstimate(0.2655, 0.236, 0.283, 0.95, 1493, 0, 0.0, 20000,
    ...                                101.0)).split("; ", 2)[2]
    'the distances repeat (lumps of about 100 applicants): δ is known only to the gap between them'
    """
    line = (f"estimated δ = {est.delta:.4g}, {est.level:.0%} interval [{est.low:.4g}, "
            f"{est.high:.4g}] ({est.pile:,} applicants on the boundary, {est.hole:,} unmoved "
            f"in the band, truthful share {est.truthful:.2g}; {est.n:,} applicants)")
    if est.dispersion > 1.0:
        line += (f"; the distances repeat (lumps of about {est.dispersion - 1:.0f} "
                 "applicants): δ is known only to the gap between them")
    if est.high >= cap:
        line += f"; the interval reaches the cap {cap:g}: the budget may be larger"
    return line
