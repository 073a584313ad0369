"""The backtest report: a self-contained page of a lender's backtest
(:func:`~strategic_apple_tasting.scenarios.backtest.backtest`): what was compared, the table
with each arm's profit on new applicants and its paired differences from the raised and the
refitted incumbent, and one sentence per budget on what deploying the first learner gains.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from ..scenarios import DataSet
from ..scenarios.backtest import REFERENCE, REFITTED, compare_backtest, gain_sentence
from ..scenarios.run import shown_mean
from .pages import escape, html_table, write_page


def backtest_table(summary: pd.DataFrame) -> str:
    """:func:`~strategic_apple_tasting.scenarios.backtest.compare_backtest`'s summary as an
    HTML table."""
    rows = []
    for r in summary.to_dict("records"):
        delta = f"{r['delta']:g}" if isinstance(r["delta"], float) else str(r["delta"])
        vs = ("(the reference)" if r["arm"] == REFERENCE
              else shown_mean(r["vs_reference"], r["vs_reference_ci"]))
        again = "-" if r["arm"] == REFITTED else shown_mean(r["vs_refitted"],
                                                             r["vs_refitted_ci"])
        accepted = "-" if math.isnan(r["accepted"]) else f"{r['accepted']:.0f}"
        rows.append([escape(r["arm"]), escape(delta), str(r["seeds"]),
                     escape(shown_mean(r["profit"], r["profit_ci"])), escape(vs),
                     escape(again), accepted])
    return html_table(["arm", "δ", "seeds", "profit per 1,000 new applicants",
                       "vs raised incumbent (paired)", "vs refitted incumbent (paired)",
                       "accepted"], rows, text_columns=1)


def write_backtest_report(frame: pd.DataFrame, data: DataSet, out_dir: str | os.PathLike, *,
                          title: str | None = None) -> Path:
    """Write ``index.html`` for a backtest's table (``frame``: one row per seed and arm).
    Returns the page's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = compare_backtest(frame)
    first = frame.iloc[0]
    title = title or f"Backtest: {data.title}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<p>Applicants: {escape(data.source)} ({data.n} rows, d = {data.d} with the "
        f"intercept). Per seed the rows split into a history of {int(first['history'])} and "
        f"{int(first['new'])} new applicants, stratified by outcome. An incumbent logistic "
        "scorecard, fitted on a share of the history with every outcome, decides the rest of "
        "the history at the cost matrix's break-even; only the loans it granted have known "
        "outcomes. Every learner starts from that history and meets each new applicant once, "
        "in a random order, each applicant gaming the rule in force within δ; outcomes are "
        "seen only for loans granted. The baselines meet the same applicants: the incumbent "
        "kept, its cutoff raised by δ·‖w<sub>gameable</sub>‖, and the raised incumbent "
        "refitted after every few loans on every outcome it knows.</p>",
        "<p>Money is in the data's own units per 1,000 new applicants; means over seeds with "
        "95% intervals, differences paired by seed.</p>",
        backtest_table(summary),
        "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in gain_sentence(summary))
        + "</ul>",
    ]
    return write_page(out / "index.html", title, "\n".join(body))
