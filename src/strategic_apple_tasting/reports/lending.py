"""The lending scenario's report: a self-contained page of its comparison and regret curves."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..scenarios import LendingData, compare_lending
from ..scenarios.run import shown_mean
from .html import _e, _Figures, _table, _write_page
from .plots import regret_figure


def write_lending_report(runs: pd.DataFrame, data: LendingData, out_dir: str | os.PathLike,
                         *, title: str | None = None) -> Path:
    """Write ``index.html`` (and each figure as PNG and PDF) for a lending comparison.

    ``runs`` is :func:`~strategic_apple_tasting.scenarios.run_lending`'s table (recorded at
    several rounds for the curves, at one δ or more). Returns the page's path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv, run_lending
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "loans.csv").write_text("bad,income,cash\\n0,3,1\\n1,1,0\\n0,2,2\\n1,0,1\\n")
    >>> data = load_csv(tmp / "loans.csv", label="bad", default_value=1,
    ...                 features=["income", "cash"], gameable=["cash"])
    >>> runs = run_lending(data, ["oracle", "accept-all"], horizon=40, seeds=2, delta=0.5,
    ...                    record_at=[10, 20, 40])
    >>> write_lending_report(runs, data, tmp / "report").name
    'index.html'
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    horizon = int(runs["t"].max())
    seeds = int(runs["seed"].nunique())
    deltas = list(dict.fromkeys(runs["delta"]))
    summary = compare_lending(data, horizon=horizon, seeds=seeds, deltas=deltas, table=runs)
    figures = _Figures(out)
    rows = [[_e(r.learner), f"{r.delta:g}", str(r.seeds), _e(shown_mean(r.regret, r.regret_ci)),
             _e(shown_mean(r.stackelberg_regret, r.stackelberg_ci)), f"{r.accepted:.0f}",
             f"{r.moved:.0f}", f"{r.clean:.0f}", str(r.gamed_as_clean)]
            for r in summary.itertuples(index=False)]
    gameable = ", ".join(data.gameable_names()) or "none"
    delay = int(runs["delay"].iloc[0]) if "delay" in runs else 0
    period = int(runs["period"].iloc[0]) if "period" in runs else 1
    title = title or "Lending scenario"
    body = [
        f"<h1>{_e(title)}</h1>",
        f"<p>Applicants: {_e(data.source)} ({data.n} rows, d = {data.d} with the intercept). "
        f"Gameable features: {_e(gameable)}. Each round draws a row; the applicant moves the "
        "gameable features, within the budget δ (standardized units), to be accepted if it "
        "can; the learner sees the loan's real outcome only if it accepts (rejecting earns "
        f"r0 = 0). T = {horizon}, {seeds} seeds, outcomes {delay} rounds late, a rule "
        f"published every {period} round(s).</p>",
        "<p>Regret is against the least-squares rule fitted on every row's label, scored on "
        "the same sampled applicants (it can be negative: that rule is the best least-squares "
        "rule, not the best rule); the Stackelberg regret is against that rule shifted by the "
        "budget and answered by the same agents. Means over seeds with 95% intervals; "
        "<em>gamed as clean</em> is the largest over seeds.</p>",
        _table(["learner", "δ", "seeds", "regret", "Stackelberg regret", "accepted", "moved",
                "clean", "gamed as clean"], rows, text_columns=1),
    ]
    for delta in deltas:
        at = runs[runs["delta"] == delta]
        fig = regret_figure(
            pa.Table.from_pandas(at[["learner", "seed", "t", "regret"]], preserve_index=False),
            title=f"δ = {delta:g}: mean over {at['seed'].nunique()} seeds with 95% band",
            ylabel="cumulative regret against the fitted rule", clip_band=False)
        stem = f"regret-delta-{delta:g}".replace(".", "_")
        body.append(figures.embed(fig, stem, f"regret curves at δ = {delta:g}",
                                  f"Cumulative regret at δ = {delta:g}."))
    return _write_page(out / "index.html", title, "\n".join(body))
