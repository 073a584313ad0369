"""Plain-text summary tables of a run."""

from __future__ import annotations

import math

import pyarrow as pa

from ..metrics import FinalSummary, final_summary
from .figures import fit_exponent, largest_horizon, names_in, outside_theorem, theorem_of


def format_number(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits; "-" for NaN."""
    if math.isnan(x):
        return "-"
    return f"{x:.{digits}g}"


def regret_text(s: FinalSummary) -> str:
    """Mean final regret with its 95% interval, or why there is none."""
    return s.regret_estimate.shown(4)


def summary_text(table: pa.Table) -> str:
    """Per-learner final regret (mean [95% CI] over seeds), its growth exponent [95% CI], and
    the ground-truth counters (means). ``learned`` (every point learned from, rejected ones
    included) is shown under bandit feedback, where it differs from ``clean``.

    An exponent is "undefined" when there is nothing to fit (regret 0, one round). A ‡ marks a
    learner whose runs are outside its theorem's assumptions
    (:func:`~strategic_apple_tasting.reports.figures.outside_theorem`), with a footnote saying
    why: its exponent is no evidence for or against the theorem.

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> print(summary_text(simulate(Game(dimension=2), ["oracle"], horizon=10, seeds=2)))
    ... # doctest: +ELLIPSIS
    learner ...
    """
    runs = largest_horizon(table)
    summaries = final_summary(runs)
    estimated = not all(s.stackelberg_exact for s in summaries)
    bandit = any(s.learned != s.clean for s in summaries)
    header = ("learner", "seeds", "T", "regret (mean [95% CI])", "exponent [95% CI]",
              "stackelberg*" if estimated else "stackelberg", "realized", "accepted",
              "clean", *(("learned",) if bandit else ()), "gamed_as_clean", "‖θ̂−θ‖")
    rows = [header]
    caveats = []
    names = names_in(table)
    for s in summaries:
        exponent = fit_exponent(table, s.learner).shown()
        caveat = outside_theorem(table, s.learner, names)
        if caveat:
            exponent += " ‡"
            theorem = theorem_of(s.learner, names).short(None)
            caveats.append(f"‡ {s.learner}: {caveat}; its theorem's exponent ({theorem}) is no "
                           "yardstick here.")
        rows.append((s.learner, str(s.seeds), str(s.horizon), regret_text(s), exponent,
                     format_number(s.stackelberg_regret), format_number(s.realized_regret),
                     format_number(s.accepted, 6), format_number(s.clean, 6),
                     *((format_number(s.learned, 6),) if bandit else ()),
                     format_number(s.gamed_as_clean, 6), format_number(s.theta_error, 3)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if estimated and "profit" in table.column_names:
        lines.append("* Stackelberg regret against the best linear rule found by a search over "
                     "the rows, answered by the agents: a lower bound.")
    elif estimated:
        lines.append("* Stackelberg regret against the best of a searched set of fixed policies: a "
                     "lower bound (these agents do not induce every half-space).")
    lines.append("exponent: log–log slope of mean regret (t ≥ T/10 along the run; across "
                 "horizons for learners tuned to T), its interval bootstrapped over seeds.")
    lines.extend(caveats)
    if "profit" in table.column_names:
        lines.extend(_lender_lines(runs))
    return "\n".join(lines)


def _lender_lines(runs: pa.Table) -> list[str]:
    """A data game's money: profit and regret against fixed rules, in the data's units."""
    from ..scenarios import compare_lending, format_table

    frame = runs.to_pandas()
    return ["", "A data game: regret above is against accepting exactly the applicants who "
            "repay (an upper bound on regret against any rule). Against fixed rules, in the "
            f"data's units ({float(frame['reward_scale'].iloc[0]):g} a reward unit; profit "
            "per 1,000 applicants; the best linear rule is a search's, so regret against it "
            "is a lower bound; the least-squares rule is not the best linear rule):",
            format_table(compare_lending(frame))]
