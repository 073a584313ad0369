"""The lending report: a self-contained page of a data game's comparison, in money.

It says which benchmark is which (the best linear rule found by a search over the rows, with
its method and how close it is to the bound; the least-squares rule; each answered by the
gaming applicants and on their true features), shows the lender's table
(:func:`~strategic_apple_tasting.scenarios.compare_lending`) and, per budget, each learner's
cumulative profit and its regret against the best linear rule answered by the agents.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..engine.hindsight import game_search
from ..game.game import budget_label
from ..scenarios import BEST_RULE, DataSet, LendingData, compare_lending, data_game, from_lending
from ..scenarios.run import protocol_caption, shown_mean, table_columns
from .pages import Figures, escape, html_table, write_page
from .plots import regret_figure


def benchmark_text(data: DataSet | None, table: pd.DataFrame) -> str:
    """Which benchmark is which, and how the best linear rule was found (one paragraph;
    ``data`` None: a data set the page cannot reload, whose search is not described)."""
    r0 = float(table["r0"].iloc[0]) if "r0" in table else 0.0
    rewards = str(table["rewards"].iloc[0]) if "rewards" in table else "recorded"
    how = "a search over the rows (engine/best_rule.py)"
    if data is not None:
        how = escape(game_search(data_game(data, r0=r0, rewards=rewards)).describe())
    return (
        "Regret is measured against two fixed linear rules, each in two versions: "
        "<em>Stackelberg</em>, the rule published and answered by the same gaming applicants "
        "(what a lender could have earned with that rule), and <em>true features</em>, the "
        "rule applied to the applicants' features before gaming. The <strong>best linear "
        f"rule</strong> is found by {how}. On each "
        "seed its threshold is chosen in hindsight on the applicants drawn, for each of the "
        "search's directions, so its regrets are lower bounds on regret against the best linear "
        "rule. The <strong>least-squares rule</strong> θ* is fitted on every row's outcome (on "
        "each seed's learning rows under the holdout protocol); it is not the best linear "
        "rule, and a "
        "learner can earn more than it (a negative regret).")


def lender_table(summary: pd.DataFrame) -> str:
    """:func:`~strategic_apple_tasting.scenarios.compare_lending`'s summary as an HTML table."""
    rows = []
    columns = table_columns(summary)
    for r in summary.to_dict("records"):
        cells = [escape(r["learner"]), f"{r['delta']:g}", str(r["seeds"])]
        for key, interval in columns.values():
            value = r.get(key, np.nan)
            if value is None or (isinstance(value, float) and np.isnan(value)):
                cells.append("-")
            else:
                cells.append(escape(shown_mean(value, r[f"{key}_ci"])) if interval
                             else f"{value:.0f}")
        rows.append(cells)
    return (f"<p>{escape(protocol_caption(summary))}</p>\n"
            + html_table(["learner", "δ", "seeds", *columns], rows, text_columns=1))


def group_section(runs: pd.DataFrame, names: tuple[str, ...]) -> str:
    """Who pays: the per-group table (:func:`~strategic_apple_tasting.scenarios.group_summary`)
    with what each column counts."""
    from ..scenarios.groups import GROUP_COLUMNS, group_summary

    rows = []
    for r in group_summary(runs, names).to_dict("records"):
        cells = [escape(r["learner"]), f"{r['delta']:g}", escape(r["group"]), f"{r['budget']:g}",
                 str(r["seeds"])]
        for key, fmt in GROUP_COLUMNS.values():
            value = float(r[key])
            cells.append("-" if np.isnan(value) else escape(fmt.format(value)))
        rows.append(cells)
    note = ("<h2>By group</h2><p>Each applicant's group (" + escape(", ".join(names)) + ") is "
            "carried with the data; no learner sees it. Shares are of the group's applicants "
            "(<em>accepted who repaid</em>: of its accepted, in expectation), pooled over seeds "
            "at the last round; a mover's distance is in standardized units; <em>its budget</em> "
            "is the group's own (δ, the largest, is what a learner is told). <em>Honest "
            "rejected by the shift</em> counts applicants who did not move, were rejected, and "
            "whose true score reached the learner's threshold less the shift it adds for "
            "gaming: the rule before the shift would have accepted them (Milli et al. 2019's "
            "social burden, counted in applicants; 0 for a learner that does not shift).</p>")
    return note + html_table(["learner", "δ", "group", "its budget", "seeds", *GROUP_COLUMNS],
                             rows, text_columns=(0, 2))


def _budgets(runs: pd.DataFrame, deltas: list[float]) -> list[Any]:
    """The runs' budgets: each δ, or each group's budgets where the runs had them
    (``delta_by_group``)."""
    from ..experiments.settings import group_budget_setting

    if "delta_by_group" not in runs:
        return deltas
    out: list[Any] = []
    for delta in deltas:
        given = runs.loc[runs["delta"] == delta, "delta_by_group"].dropna()
        out.append(group_budget_setting(str(given.iloc[0])) if len(given) else delta)
    return out


def burden_section(data: DataSet, deltas: list[Any], figures: Figures) -> str:
    """The FICO finding (Milli et al. 2019; Hu et al. 2019): a strategy-robust threshold puts a
    larger social burden on the groups with lower scores (:mod:`..scenarios.burden`)."""
    from ..scenarios.burden import burden_curves
    from .plots import burden_figure

    grid = np.linspace(-1.5, 1.5, 61)
    parts = ["<h2>Who pays for strategy-robustness</h2><p>A threshold τ on the standardized "
             "score, answered by this package's agents; for each τ the lender's profit and "
             "each group's social burden (Milli et al. 2019): the mean distance a repaying "
             "applicant moves to be accepted. The marked point is the most profitable "
             "threshold under gaming. Here a move costs the same distance of standardized "
             "score for everyone and does not change the chance of repaying; Milli et al. "
             "price a move by the change in repayment probability, and Hu et al. give the "
             "groups different costs.</p>"]
    for k, delta in enumerate(deltas):
        curves = burden_curves(data, delta, grid)
        label = budget_label(delta)  # δ = 0.5, or each group's
        fig = burden_figure(curves, title=label)
        stem = (f"burden-delta-{delta:g}".replace(".", "_") if not isinstance(delta, dict)
                else f"burden-by-group-{k}")
        parts.append(figures.embed(fig, stem, f"burden against profit at {label}",
                                   f"Each group's social burden against the lender's profit "
                                   f"as the threshold rises, at {label}."))
    return "".join(parts)


def money_note(scale: float) -> str:
    """What the lender's table's numbers are."""
    return ("Money is in the data's own units (one reward unit is "
            f"{scale:g} of them); profit and regrets are per 1,000 applicants. Means over "
            "seeds with 95% intervals; <em>gamed as clean</em> is the largest over seeds. The "
            f"row <em>{escape(BEST_RULE)}</em> is that rule's own profit, answered by the "
            "agents, searched and scored on the same applicants: an in-sample reference. Under "
            "the holdout protocol the rows <em>cross-fitted</em> are rules chosen on each "
            "seed's learning rows and scored on its held-out ones.")


def named_data(table: pd.DataFrame) -> DataSet | None:
    """The bundled data set a data game's table was played on, if it can be reloaded."""
    from ..scenarios import DATASETS, load_dataset

    title = str(table["data"].iloc[0]) if "data" in table else ""
    if title not in DATASETS:
        return None
    try:
        return load_dataset(title)
    except ValueError:  # German credit's extra is not installed here
        return None


def write_lending_report(runs: pd.DataFrame, data: DataSet | LendingData,
                         out_dir: str | os.PathLike, *, title: str | None = None) -> Path:
    """Write ``index.html`` (and each figure as PNG and PDF) for a lending comparison.

    ``runs`` is :func:`~strategic_apple_tasting.scenarios.run_lending`'s table (at one budget
    or more, concatenated). Returns the page's path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv, run_lending
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "loans.csv").write_text("bad,income,cash\\n0,3,1\\n1,1,0\\n0,2,2\\n1,0,1\\n")
    >>> data = load_csv(tmp / "loans.csv", label="bad", default_value=1,
    ...                 features=["income", "cash"], gameable=["cash"])
    >>> runs = run_lending(data, ["oracle", "accept-all"], horizon=40, seeds=2, delta=0.5)
    >>> write_lending_report(runs, data, tmp / "report").name
    'index.html'
    """
    data = from_lending(data) if isinstance(data, LendingData) else data
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = compare_lending(runs)
    horizon = int(runs["t"].max())
    seeds = int(runs["seed"].nunique())
    scale = float(runs["reward_scale"].iloc[0])
    figures = Figures(out)
    gameable = ", ".join(data.gameable_names()) or "none"
    delay = int(runs["delay"].iloc[0]) if "delay" in runs else 0
    period = int(runs["period"].iloc[0]) if "period" in runs else 1
    deltas = list(dict.fromkeys(runs["delta"]))
    title = title or f"Lending: {data.title}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<p>Applicants: {escape(data.source)} ({data.n} rows, d = {data.d} with the intercept). "
        f"Gameable features: {escape(gameable)}. Each round draws a row; the applicant moves the "
        "gameable features, within the budget δ (standardized units), to be accepted if it "
        "can; the learner sees the loan's real outcome only if it accepts (rejecting earns "
        f"r0). T = {horizon:,}, {seeds} seeds, outcomes {delay} rounds late, a rule published "
        f"every {period} round(s), on the compiled engine.</p>",
        f"<p>{benchmark_text(data, runs)}</p>",
        f"<p>{money_note(scale)}</p>",
        lender_table(summary),
    ]
    if data.contexts.group_names and "group_applicants" in runs:
        body.append(group_section(runs, data.contexts.group_names))
    if data.title == "fico":
        body.append(burden_section(data, _budgets(runs, deltas), figures))
    for delta in deltas:
        at = runs[runs["delta"] == delta]
        stem = f"delta-{delta:g}".replace(".", "_")
        money = at[["learner", "seed", "t"]].assign(regret=at["profit"] * scale)
        fig = regret_figure(pa.Table.from_pandas(money, preserve_index=False),
                            title=f"δ = {delta:g}: mean over {at['seed'].nunique()} seeds with "
                            "95% band", ylabel="cumulative profit", clip_band=False)
        body.append(figures.embed(fig, f"profit-{stem}", f"profit at δ = {delta:g}",
                                  f"Cumulative profit at δ = {delta:g}, in the data's units."))
        regret = at[["learner", "seed", "t"]].assign(regret=at["stackelberg_regret"] * scale)
        fig = regret_figure(pa.Table.from_pandas(regret, preserve_index=False),
                            title=f"δ = {delta:g}: mean over {at['seed'].nunique()} seeds with "
                            "95% band", ylabel="regret vs best linear rule", clip_band=False)
        body.append(figures.embed(
            fig, f"regret-{stem}", f"regret at δ = {delta:g}",
            f"Cumulative regret against the best linear rule answered by the agents "
            f"(Stackelberg; a lower bound) at δ = {delta:g}, in the data's units."))
    return write_page(out / "index.html", title, "\n".join(body))
