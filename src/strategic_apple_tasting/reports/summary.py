"""Plain-text summary tables of a run."""

from __future__ import annotations

import math

import pyarrow as pa

from ..metrics import final_summary


def _num(x: float, digits: int = 4) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.{digits}g}"


def summary_text(table: pa.Table) -> str:
    """Per-learner final regret (mean ± 95% CI over seeds) and ground-truth counters (means).

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> print(summary_text(simulate(Game(dimension=2), ["oracle"], horizon=10, seeds=2)))
    ... # doctest: +ELLIPSIS
    learner ...
    """
    summaries = final_summary(table)
    estimated = not all(s.stackelberg_exact for s in summaries)
    header = ("learner", "seeds", "T", "regret (mean ± 95% CI)",
              "stackelberg*" if estimated else "stackelberg", "realized", "accepted",
              "clean", "gamed_as_clean", "‖θ̂−θ‖")
    rows = [header]
    for s in summaries:
        rows.append((s.learner, str(s.seeds), str(s.horizon),
                     f"{_num(s.regret)} ± {_num(s.regret_ci, 2)}",
                     _num(s.stackelberg_regret), _num(s.realized_regret),
                     _num(s.accepted, 6), _num(s.clean, 6), _num(s.gamed_as_clean, 6),
                     _num(s.theta_error, 3)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if estimated:
        lines.append("* Stackelberg regret against the best of a searched set of fixed policies: a "
                     "lower bound (these agents do not induce every half-space).")
    return "\n".join(lines)
