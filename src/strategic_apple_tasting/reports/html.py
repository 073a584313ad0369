"""A self-contained HTML report of a sweep (``sat report``): figures embedded, tables inline.

The page needs nothing outside itself (no scripts, stylesheets or fonts from elsewhere; the
figures are PNG data URIs), so it can be mailed or archived as one file. Each figure is also
written beside it as PNG and PDF.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .._version import __version__
from ..experiments.claims import YES, Claim, Consistency, tally
from ..metrics import final_summary
from . import figures as F
from .pages import CSS, Figures, escape, html_page, html_table, write_page  # noqa: F401
from .summary import format_number, regret_text

#: Most combinations of swept settings that get their own section of figures.
MAX_SECTIONS = 12

def _settings_section(runs: pd.DataFrame, swept: list[str], constant: dict[str, object]
                      ) -> str:
    """The constant settings once, then one row per combination of the swept ones."""
    order = F.labels(pa.table({"learner": runs["learner"].unique()}))
    parts = ['<h2 id="settings">Settings</h2>']
    if constant:
        parts.append("<h3>The same in every run</h3>")
        parts.append(html_table(["setting", "value"],
                                [[escape(k), escape(F.format_value(v))]
                                 for k, v in constant.items()],
                                text_columns=2))
    if swept:
        parts.append(f"<h3>Every combination of the swept settings ({escape(', '.join(swept))})"
                     "</h3>")
        rows = []
        for key, group in runs.groupby(swept, dropna=False, sort=True):
            key = key if isinstance(key, tuple) else (key,)
            rows.append([escape(F.format_value(v)) for v in key]
                        + [escape(", ".join(lb for lb in order if lb in set(group["learner"]))),
                           str(group["seed"].nunique()), str(len(group))])
        parts.append(html_table([*map(escape, swept), "learners", "seeds", "runs"], rows,
                                text_columns=len(swept) + 1))
    return "\n".join(parts)


def _summary_tables(table: pa.Table, fits: dict[str, F.ExponentFit], d: int | None,
                    names: Mapping[str, str] | None, caveats: Mapping[str, str]
                    ) -> tuple[str, bool, bool]:
    """The final-round summary at each learner's largest horizon, then the growth exponents
    beside the theorems', with a caveat where the runs are outside a theorem's assumptions.

    Returns the HTML and whether a Stackelberg lower bound and a dagger appear."""
    rows, exponents = [], []
    lower = dagger = False
    order = F.labels(table)
    for s in sorted(final_summary(F.largest_horizon(table)),
                    key=lambda s: order.index(s.learner)):
        stackelberg = format_number(s.stackelberg_regret)
        if not s.stackelberg_exact:
            stackelberg += " *"
            lower = True
        rows.append([escape(s.learner), str(s.seeds), f"{s.horizon:,}", escape(regret_text(s)),
                     stackelberg,
                     format_number(s.realized_regret), format_number(s.accepted, 6),
                     format_number(s.clean, 6), format_number(s.gamed_as_clean, 6),
                     format_number(s.theta_error, 3)])
        fit = fits[s.learner]
        if fit.along == "horizons":
            how = f"across {fit.t.size} horizon(s): final regret at each T"
        else:
            how = "along the run: mean regret for t ≥ T/10"
        theorem = F.theorem_text(s.learner, d, names)
        dagger |= theorem.endswith("†")
        caveat = caveats.get(s.learner, "")
        exponents.append([escape(s.learner), escape(how), escape(fit.shown()), escape(theorem),
                          f"<strong>{escape(caveat)}</strong>" if caveat else ""])
    summary = html_table(["learner", "seeds", "T", "regret (mean [95% CI])",
                          "Stackelberg regret", "realized", "accepted", "clean",
                          "gamed as clean", "‖θ̂−θ‖"], rows)
    growth = html_table(["learner", "fitted", "exponent [95% CI over seeds]",
                         "theorem's exponent", "caveat"], exponents, text_columns=(0, 1, 3, 4))
    if any(row[-1] for row in exponents):  # a caveat is a sentence: let it wrap
        growth = growth.replace("<table>", '<table class="wrap">', 1)
    text = (f"<h3>Final round (means over seeds)</h3>\n{summary}\n"
            f"<h3>Regret growth exponents</h3>\n{growth}")
    return text, lower, dagger


def _lender_section(table: pa.Table) -> str:
    """A data game's money: the lender's table and which benchmark is which."""
    from ..scenarios import compare_lending
    from .lending import benchmark_text, lender_table, money_note, named_data

    frame = table.to_pandas()
    scale = float(frame["reward_scale"].iloc[0])
    return ("<h3>Profit and regret against fixed rules (a data game)</h3>\n"
            f"<p>{benchmark_text(named_data(frame), frame)} The regret below the lender's "
            "table is against accepting exactly the applicants who repay: an upper bound on "
            "regret against any rule.</p>\n"
            f"<p>{money_note(scale)}</p>\n{lender_table(compare_lending(frame))}\n")


def write_report(table: pa.Table, out_dir: str | os.PathLike, *, title: str | None = None,
                 learners: Mapping[str, str] | None = None, status: str | None = None
                 ) -> Path:
    """Write a self-contained HTML report of a results table; returns the path of index.html.

    The page shows, for each combination of the swept game settings (at most
    :data:`MAX_SECTIONS`): a summary table (final regret with 95% CI, Stackelberg regret, the
    ground-truth counters, the fitted growth exponent beside the theorem's); cumulative regret
    against rounds with 95% bands and its log–log view with the fitted exponents (across
    horizons for learners tuned to the horizon, along the run for anytime ones); clean points
    against SA-OLS's expected c1·T; the estimation error over time. Then final regret against
    each swept setting, and a table of every setting. Each figure is also written to
    ``out_dir`` as PNG and PDF.

    Parameters
    ----------
    table : pyarrow.Table
        Results, e.g. :func:`~strategic_apple_tasting.experiments.sweep.load` of a sweep or
        :func:`~strategic_apple_tasting.simulate`'s table.
    out_dir : path
        Directory for ``index.html`` and the figures (created if needed).
    title : str, optional
        Page title.
    learners : mapping, optional
        Results label → registry name, for custom labels (``"etc (fixed T0)"`` → ``"etc"``);
        labels that are registry names, or one followed by parameters, need no entry.
    status : str, optional
        One line shown under the heading, e.g. how many of a sweep's planned cells the table
        holds (:meth:`~strategic_apple_tasting.experiments.sweep.Completeness.heading`).

    Returns
    -------
    pathlib.Path
        The path of ``index.html``.

    Examples
    --------
    >>> import tempfile
    >>> from strategic_apple_tasting import Game, simulate
    >>> table = simulate(Game(dimension=2), ["sa-ols", "oracle"], horizon=300, seeds=2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = write_report(table, tmp)
    ...     page.name, (page.parent / "regret-01.pdf").exists()
    ('index.html', True)
    """
    if table.num_rows == 0:
        raise ValueError("the results table is empty: nothing to report")
    learners = {**F.names_in(table), **(learners or {})}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = title or "Strategic apple tasting: results report"
    settings = F.settings_columns(table)
    frame = table.select(["learner", "seed", *settings]).to_pandas()
    swept = F.swept_settings(table)
    constant = {c: frame[c].iloc[0] for c in settings if c not in swept}
    grouping = [s for s in swept if s != "horizon"]
    figs = Figures(out)
    colors = F.palette(F.labels(table))
    runs = frame.drop_duplicates(["learner", "seed", *settings])

    if grouping:
        groups = [(k if isinstance(k, tuple) else (k,), g.index.to_numpy())
                  for k, g in frame.groupby(grouping, dropna=False, sort=True)]
    else:
        groups = [((), frame.index.to_numpy())]
    shown = groups[:MAX_SECTIONS]
    headings = [", ".join(f"{k} = {F.format_value(v)}" for k, v in zip(grouping, key,
                                                                      strict=True))
                or "All runs" for key, _ in shown]
    sections = []
    lower = dagger = False
    for i, ((_, index), name) in enumerate(zip(shown, headings, strict=True), start=1):
        section, low, dag = _combination_section(table.take(index), i, name, figs, colors,
                                                 learners)
        sections.append(section)
        lower |= low
        dagger |= dag
    more = ""
    if len(groups) > MAX_SECTIONS:
        more = (f'<p class="note">{len(groups)} combinations of {escape(", ".join(grouping))}: '
                f"the first {MAX_SECTIONS} have figures here; the settings table and the "
                "final-regret figures cover all of them (<code>sat results DIR</code> prints "
                "every summary).</p>")
    finals = _final_figures(table, swept, figs, colors)
    toc = [f'<li><a href="#combo-{i}">{escape(name)}</a></li>'
           for i, name in enumerate(headings, start=1)]
    if finals:
        toc.append('<li><a href="#final">Final regret against each swept setting</a></li>')
    toc.append('<li><a href="#settings">Settings</a></li>')
    body = "\n".join([
        f"<h1>{escape(title)}</h1>",
        *([f'<p class="status" id="status">{escape(status)}</p>'] if status else []),
        f'<p class="meta">{_meta_line(table, frame, runs, swept)}</p>',
        f"<nav><ul>{''.join(toc)}</ul></nav>", more, *sections,
        *(['<h2 id="final">Final regret against each swept setting</h2>', *finals]
          if finals else []),
        _settings_section(runs, swept, constant),
        "<h2>Notes</h2>",
        *(f'<p class="note">{n}</p>' for n in _notes(lower, dagger, "profit" in
                                                      table.column_names))])
    return write_page(out / "index.html", title, body)


def _combination_section(sub: pa.Table, i: int, name: str, figs: Figures,
                         colors: Mapping[str, Any], learners: Mapping[str, str]
                         ) -> tuple[str, bool, bool]:
    """The section of one combination of the swept settings: the lender's table (a data
    game), the summary tables, the regret figure and the learning figure; and whether its
    tables hold a lower bound (*) or a relabelled learner (†)."""
    d = F.single_dimension(sub)
    fits = {lb: F.fit_exponent(sub, lb, learners) for lb in F.labels(sub)}
    caveats = {lb: F.outside_theorem(sub, lb, learners) for lb in F.labels(sub)}
    summary, lower, dagger = _summary_tables(sub, fits, d, learners, caveats)
    fig = F.regret_figure(sub, fits, colors=colors, names=learners, caveats=caveats)
    regret = figs.embed(
        fig, f"regret-{i:02d}", f"Regret, {name}",
        "Left: cumulative strategic regret against rounds, mean over seeds with a 95% "
        "band, at each learner's largest horizon. Right: the same on log–log axes; dashed "
        "lines are the fitted growth exponents (across horizons for learners tuned to the "
        "horizon, dots with 95% CI at each horizon; along the run for t ≥ T/10 otherwise), "
        "beside the theorems' exponents.")
    fig, note = F.learning_figure(sub, colors=colors)
    learning = figs.embed(
        fig, f"learning-{i:02d}", f"Clean points and estimation error, {name}",
        "Left: points each learner learned from (clean), mean with 95% band, against "
        "SA-OLS's expected number d + c1(d, δ/R)·(t − d) (<code>cor:c1</code>). Right: "
        f"estimation error ‖θ̂ − (θ1 − θ0)‖ over time. {escape(note)}")
    lender = _lender_section(sub) if "profit" in sub.column_names else ""
    return (f'<h2 id="combo-{i}">{escape(name)}</h2>\n{lender}{summary}\n{regret}\n'
            f"{learning}", lower, dagger)


def _final_figures(table: pa.Table, swept: list[str], figs: Figures,
                   colors: Mapping[str, Any]) -> list[str]:
    """Final regret against each swept setting, and against c1(d, δ/R) when d or δ is
    swept."""
    finals = []
    for setting in swept:
        fig, note = F.final_regret_figure(table, setting, swept, colors=colors)
        finals.append(figs.embed(
            fig, f"final-vs-{F.slug(setting)}", f"Final regret against {setting}",
            f"Mean final regret (at t = T) with 95% CI over seeds, per learner, against "
            f"{escape(setting)}. {escape(note)}"))
    by_c1 = F.with_c1(table)
    if by_c1 is not None:
        rest = [s for s in swept if s not in ("dimension", "delta", "radius", "horizon")]
        fig, note = F.c1_figure(by_c1, rest, colors=colors)
        finals.append(figs.embed(
            fig, "final-vs-c1", "Final regret against c1(d, δ/R)",
            "Mean final regret with 95% CI over seeds, per learner and dimension (points of "
            "one dimension, varying δ, are joined), against c1(d, δ/R) = "
            "P(⟨u, x⟩ ≥ δ/R), the fraction of agents (contexts uniform in the ball) that stay "
            "clean under the best shifted rule (<code>cor:c1</code>): SA-OLS learns from "
            f"those only, and its regret bound carries 1/c1. {escape(note)}"))
    return finals


def _notes(lower: bool, dagger: bool, data_game: bool) -> list[str]:
    """The notes under the page: what * and † mean where the tables use them, and how the
    exponents are fitted."""
    notes = []
    if lower and data_game:
        notes.append("* Stackelberg regret against the best linear rule found by a search over "
                     "the rows, answered by the agents: a lower bound.")
    elif lower:
        notes.append("* Stackelberg regret against the best of a searched set of fixed "
                     "policies: a lower bound (these agents do not induce every half-space).")
    if dagger:
        notes.append("† A relabelled or re-parametrised learner: the theorem's exponent holds "
                     "for the learner's default tuning.")
    notes.append("Theorem exponents: E[regret] = Õ(T<sup>exponent</sup>) as the paper states "
                 "it; “—”: no theorem (baselines). A caveat marks runs outside a theorem's "
                 "assumptions (the unknown-horizon learner before its switching time τ*, the "
                 "oracle or any strategy-aware learner when not every agent games): there "
                 "the theorem's exponent is no yardstick for the fitted one. An exponent is "
                 "“undefined” when there is nothing positive to fit (regret 0) or too few "
                 "points. Fitted exponents are "
                 "least-squares slopes of log mean regret on log t; their 95% intervals come "
                 "from resampling whole seeds (points along one run are dependent, so a "
                 "regression's standard error is no interval).")
    return notes


def _meta_line(table: pa.Table, frame: pd.DataFrame, runs: pd.DataFrame, swept: list[str]) -> str:
    """The line under the heading: the learners, seeds, runs, horizons, what is swept, and
    when and by which version the page was made."""
    every = F.labels(table)
    horizons = sorted(frame["horizon"].unique()) if "horizon" in frame else []
    return (f"{len(every)} learner(s) ({escape(', '.join(every))}), "
            f"{frame['seed'].nunique()} seed(s), {len(runs)} run(s), horizon(s) "
            f"{escape(', '.join(f'{int(h):,}' for h in horizons))}; swept: "
            f"{escape(', '.join(swept) or 'nothing')}. Generated "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC by strategic-apple-tasting "
            f"{escape(__version__)}.")


def write_claims_page(claims: list[Claim], consistency: list[Consistency],
                      parts: Mapping[str, str], path: str | os.PathLike,
                      *, title: str = "The paper's claims, reproduced") -> Path:
    """The claims table ("claim, measured, control, theory, verdict"), the consistency checks,
    and links to each part's report.

    ``parts`` maps a part's name to its report's path relative to ``path``'s directory.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def verdict(c: Claim) -> str:
        text = escape(c.verdict) if c.verdict == YES else f"<strong>{escape(c.verdict)}</strong>"
        return f"{text}: {escape(c.reason)}" if c.reason else text
    body_rows = [[escape(c.claim), f"{escape(c.label)}: <code>{escape(c.source)}</code>",
                  escape(c.measured_text),
                  escape(c.control_text), escape(c.check.text), verdict(c)] for c in claims]
    checks = "".join(f"<li>{'ok' if k.holds else '<strong>FAILS</strong>'}: {escape(k.what)} "
                     f"(<code>{escape(k.source)}</code>): {escape(k.measured)}</li>"
                     for k in consistency)
    links = "".join(f'<li><a href="{escape(href)}">{escape(name)}</a></li>'
                    for name, href in parts.items())
    body = "\n".join([
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">{escape(tally(claims))}. Generated '
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC by strategic-apple-tasting "
        f"{escape(__version__)}.</p>",
        '<p class="note">Each claim is measured with its 95% interval over seeds and judged '
        "by a check; a control (the same check on something that must fail it) shows that the "
        "check can fail. A row whose control passes too reads \u201cnot discriminating at this "
        "T\u201d.</p>",
        html_table(["claim", "source", "measured", "control", "theory", "verdict"], body_rows,
                   text_columns=(0, 1, 2, 3, 4, 5)).replace("<table>", '<table class="wrap">', 1),
        "<h2>Consistency checks</h2>",
        '<p class="note">True by construction of the simulator or the learners: a failure is '
        "a bug, not a finding.</p>", f"<ul>{checks}</ul>",
        "<h2>Reports of the sweeps behind them</h2>", f"<ul>{links}</ul>"])
    return write_page(path, title, body)
