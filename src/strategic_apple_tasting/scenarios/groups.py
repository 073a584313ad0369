"""The lender's table by group: who is accepted, who repays, who moves and who pays
for the shift, per group of a data set (German credit's sex and age band, FICO's four groups),
from a results table's per-group columns (:mod:`..engine.groups`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine.groups import GROUP_COUNTS

#: The per-group table's columns: header → (summary column, format).
GROUP_COLUMNS = {
    "applicants": ("applicants", "{:.0f}"), "accepted": ("acceptance", "{:.1%}"),
    "accepted who repaid": ("repaid", "{:.1%}"), "moved": ("moved", "{:.1%}"),
    "mean distance moved": ("distance", "{:.3g}"),
    "honest rejected by the shift": ("burden", "{:.2%}"),
}


def group_summary(runs: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """The lender's table by group: one row per learner × budget × group, from each run's final
    totals, each share pooled over seeds (a sum over seeds divided by a sum).

    Columns: ``learner``, ``delta``, ``group``, ``budget`` (the group's own budget: its entry
    of the runs' ``delta_by_group`` with per-group budgets, else ``delta``), ``seeds``,
    ``applicants`` (per run),
    ``acceptance`` (share accepted), ``repaid`` (share of the accepted who repaid, expected),
    ``moved`` (share of applicants who moved), ``distance`` (mean distance moved by a mover),
    ``burden`` (share of applicants who were honest and rejected by the shift). A share whose
    denominator is 0 on every seed is NaN.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"learner": ["a"], "delta": [0.1], "seed": [0], "t": [10],
    ...     "group_applicants": [[6.0, 4.0]], "group_accepted": [[3.0, 1.0]],
    ...     "group_repaid": [[3.0, 0.0]], "group_moved": [[1.0, 0.0]],
    ...     "group_distance": [[0.5, 0.0]], "group_burden": [[0.0, 1.0]]})
    >>> group_summary(runs, ("f", "m"))[["group", "acceptance", "repaid", "burden"]]
      group  acceptance  repaid  burden
    0     f        0.50     1.0    0.00
    1     m        0.25     0.0    0.25
    """
    if "group_applicants" not in runs or not names:
        raise ValueError("runs must have per-group columns (a data game whose rows have "
                         "groups: German credit or FICO)")
    # Runs with budgets per group are told apart by them too (two sets of budgets may share
    # their largest, the table's delta).
    keys = ["learner", "delta"] + (["delta_by_group"] if "delta_by_group" in runs else [])
    final = runs[runs["t"] == runs.groupby([*keys, "seed"], dropna=False)["t"].transform("max")]
    rows = []
    for key, part in final.groupby(keys, sort=False, dropna=False):
        learner, delta = key[0], key[1]
        budgets = _budgets(part, names, float(delta))
        totals = {c: np.stack([np.asarray(v, dtype=float) for v in part[f"group_{c}"]])
                  for c in GROUP_COUNTS}
        for g, name in enumerate(names):
            t = {c: totals[c][:, g].sum() for c in GROUP_COUNTS}
            rows.append({
                "learner": learner, "delta": float(delta), "group": name,
                "budget": budgets[g], "seeds": len(part), "applicants": t["applicants"] / len(part),
                "acceptance": _share(t["accepted"], t["applicants"]),
                "repaid": _share(t["repaid"], t["accepted"]),
                "moved": _share(t["moved"], t["applicants"]),
                "distance": _share(t["distance"], t["moved"]),
                "burden": _share(t["burden"], t["applicants"]),
            })
    return pd.DataFrame(rows)


def _budgets(part: pd.DataFrame, names: tuple[str, ...], delta: float) -> list[float]:
    """Each group's budget in these runs: read from ``delta_by_group`` (``name=budget,...``,
    :func:`~..game.game.format_group_budgets`), or ``delta`` for every group."""
    if "delta_by_group" not in part or part["delta_by_group"].isna().all():
        return [delta] * len(names)
    given = dict(item.rsplit("=", 1) for item in str(part["delta_by_group"].iloc[0]).split(","))
    return [float(given[n]) for n in names]


def _share(part: float, whole: float) -> float:
    return float(part / whole) if whole > 0 else float("nan")


def format_groups(summary: pd.DataFrame) -> str:
    """:func:`group_summary` as a Markdown table (shares of each group's applicants, of its
    accepted for *accepted who repaid*; a mover's mean distance in standardized units).

    Examples
    --------
    >>> print(format_groups(pd.DataFrame([{"delta": 0.5, "learner": "oracle", "group": "f",
    ...     "budget": 0.5, "seeds": 2, "applicants": 10.0, "acceptance": 0.5, "repaid": 0.8,
    ...     "moved": 0.1, "distance": 0.25, "burden": 0.0}])).splitlines()[2])
    | 0.5 | oracle | f | 0.5 | 2 | 10 | 50.0% | 80.0% | 10.0% | 0.25 | 0.00% |
    """
    head = "| δ | learner | group | its budget | seeds | " + " | ".join(GROUP_COLUMNS) + " |"
    lines = [head, "|" + "---|" * (5 + len(GROUP_COLUMNS))]
    for r in summary.to_dict("records"):
        cells = [f"{r['delta']:g}", str(r["learner"]), str(r["group"]), f"{r['budget']:g}",
                 str(r["seeds"])]
        for key, fmt in GROUP_COLUMNS.values():
            value = float(r[key])
            cells.append("-" if math.isnan(value) else fmt.format(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
