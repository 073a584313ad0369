"""Who pays for strategy-robustness on the FICO tables (Milli, Miller, Dragan and
Hardt, "The Social Cost of Strategic Classification", 2019; Hu, Immorlica and Vaughan, "The
Disparate Effects of Strategic Manipulation", 2019).

A one-score game: the lender accepts iff the reported standardized score z′ ≥ τ, and each
applicant answers τ with this package's agents (:class:`~..game.SubsetGaming` on the score,
lazy, budget δ). For each τ of a grid, exactly over the tables' rows (each weighted by how
often it is drawn): the lender's profit per applicant and, per group, the **social burden**
(Milli et al.'s): the mean distance a repaying applicant moves to be accepted, over the group's
repaying applicants (those who cannot reach τ are counted apart, as rejected repayers).
Raising τ above the threshold that is best without gaming makes the rule strategy-robust; the
burden of a group grows with the share of its repaying applicants just below τ.

Where this game's cost model differs from theirs: here moving costs the same distance in
standardized score for every applicant and group (one budget δ), and a move changes the score
only, not the applicant's chance of repaying; Milli et al. use a cost that is a function of the
score (in their FICO example, proportional to the change in the repayment probability), and Hu
et al. give the groups different costs. Groups with different budgets are run here as separate
δ per group (``delta`` a mapping).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..game import SubsetGaming
from .datasets import DataSet


def burden_curves(data: DataSet, delta: float | Mapping[str, float],
                  thresholds: np.ndarray) -> pd.DataFrame:
    """Profit and each group's burden at each threshold τ (on the data's standardized score).

    Returns one row per threshold × group: ``threshold, group, profit`` (the lender's expected
    reward per applicant, in reward units), ``burden`` (mean distance moved to be accepted per
    repaying applicant of the group; a rejected one counts 0, its cost is in the next column),
    ``rejected_repayers`` (the share of them rejected) and ``delta``.

    Examples
    --------
    >>> from strategic_apple_tasting.scenarios import load_fico
    >>> curves = burden_curves(load_fico(), 0.0, np.array([0.0]))
    >>> curves["burden"].tolist()  # without gaming nobody moves
    [0.0, 0.0, 0.0, 0.0]
    """
    ctx = data.contexts
    if ctx.groups is None or ctx.dimension != 2:
        raise ValueError("data must be a one-score data set with groups (the FICO tables)")
    names = ctx.group_names
    budgets = ({g: float(delta) for g in names} if not isinstance(delta, Mapping)
               else {g: float(delta[g]) for g in names})
    p = ctx.probabilities()
    mean = ctx.recorded().mean
    z = ctx.rows[:, 1]
    out = []
    for tau in np.asarray(thresholds, dtype=float):
        beta = np.array([-tau, 1.0])
        accepted = np.zeros(ctx.n, dtype=bool)
        dist = np.zeros(ctx.n)
        for i in range(ctx.n):
            agents = SubsetGaming(delta=budgets[names[ctx.groups[i]]], gameable=data.gameable)
            x_obs, moved = agents.respond_once(beta, 0.0, ctx.rows[i])
            accepted[i] = x_obs[1] >= tau
            dist[i] = abs(x_obs[1] - z[i]) if moved else 0.0
        profit = float(np.sum(p * accepted * mean))
        for g, name in enumerate(names):
            mask = ctx.groups == g
            w = p[mask] * ctx.repaid[mask]
            out.append({"threshold": float(tau), "group": name, "profit": profit,
                        "burden": float(np.sum(w * dist[mask] * accepted[mask]) / w.sum()),
                        "rejected_repayers": float(np.sum(w * ~accepted[mask]) / w.sum()),
                        "delta": budgets[name]})
    return pd.DataFrame(out)


def robust_threshold(data: DataSet, delta: float | Mapping[str, float],
                     thresholds: np.ndarray) -> float:
    """The threshold of the grid with the highest profit when the applicants game."""
    curves = burden_curves(data, delta, thresholds).drop_duplicates("threshold")
    return float(curves.loc[curves["profit"].idxmax(), "threshold"])
