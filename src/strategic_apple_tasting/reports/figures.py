"""Figures of a sweep for the HTML report: regret with growth exponents, learning, settings.

Each function takes a results table (:func:`~strategic_apple_tasting.experiments.sweep.load`,
:func:`~strategic_apple_tasting.engine.simulate`) and returns a matplotlib figure;
:func:`save_figure` writes it as PNG and PDF. The theorems' regret exponents live on the
learner classes (``theorem``), read through :func:`theorem_of`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import theory
from ..engine.simulate import DATA_COLUMNS, ESTIMATE_COLUMNS, RESULT_COLUMNS
from ..learners import LEARNERS, Theorem, learner_class
from ..learners.introspect import param_names
from ..metrics import Estimate, exponent_across, exponent_along, mean_ci, regret_curves

if TYPE_CHECKING:
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, imported on first use: ``sat run``'s summary
    reads this module's helpers but draws nothing, and pyplot is a large part of its start-up
    (the first run after set-up within 3 s)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot

#: Most panels in one figure of final regret against a setting.
MAX_PANELS = 6


def names_in(table: pa.Table) -> dict[str, str]:
    """Results label → the learner's name (``learner_name`` column: registry name or import
    path), for the tables that carry it (results written before it existed do not).

    Examples
    --------
    >>> names_in(pa.table({"learner": ["fixed T0"], "learner_name": ["etc"]}))
    {'fixed T0': 'etc'}
    """
    if "learner_name" not in table.column_names:
        return {}
    pairs = table.select(["learner", "learner_name"]).to_pydict()
    return {lb: nm for lb, nm in zip(pairs["learner"], pairs["learner_name"], strict=True)
            if nm is not None}


def theorem_of(label: str, names: Mapping[str, str] | None = None) -> Theorem | None:
    """The theorem of the learner behind a results label (its class's ``theorem``), or None.

    Examples
    --------
    >>> theorem_of("exp3-sae").short(2), theorem_of("unknown-horizon").short(2)
    ('3/4', '2/3→1/2')
    >>> theorem_of("naive-greedy") is None
    True
    """
    name = learner_name(label, names)
    return None if name is None else learner_class(name).tags().theorem


def learner_name(label: str, names: Mapping[str, str] | None = None) -> str | None:
    """The registry name behind a results label (``"etc(exploration_rounds=500)"`` → ``"etc"``),
    from ``names`` (label → registry name) for custom labels, None when unknown.

    Examples
    --------
    >>> learner_name("sa-ols"), learner_name("etc(exploration_rounds=500)"), learner_name("mine")
    ('sa-ols', 'etc', None)
    """
    if names and label in names:
        return names[label]
    for name in (label, label.split("(", 1)[0]):
        if name in LEARNERS:
            return name
        if ":" in name:  # an import path (package.module:Class)
            try:
                learner_class(name)
            except ValueError:
                continue
            return name
    return None


def tuned_to_horizon(label: str, names: Mapping[str, str] | None = None) -> bool:
    """Whether the learner is tuned to the horizon (has a ``horizon`` parameter): its regret
    exponent is fitted across horizons, not along one run.

    Examples
    --------
    >>> tuned_to_horizon("etc"), tuned_to_horizon("sa-ols")
    (True, False)
    """
    name = learner_name(label, names)
    return name is not None and "horizon" in param_names(learner_class(name))


def theorem_text(label: str, d: int | None, names: Mapping[str, str] | None = None) -> str:
    """The theorem's exponent for a results label, ``"—"`` for learners without one.

    A label other than the registry name (``"etc(exploration_rounds=500)"``, a custom label)
    gets a dagger: the theorem assumes the learner's own tuning.

    Examples
    --------
    >>> theorem_text("sa-ols", 3), theorem_text("naive-greedy", 3)
    ('1/2 (thm:stochastic-main-app)', '—')
    """
    theorem = theorem_of(label, names)
    if theorem is None:
        return "—"
    return theorem.shown(d) + ("" if learner_name(label, names) == label else " †")


@functools.lru_cache(maxsize=256)
def _tau_star(d: int, delta: float, sigma: float) -> float:
    return theory.switching_time(d, delta, sigma=sigma)


def switching_times(rows: pa.Table) -> list[float]:
    """τ* (:func:`~strategic_apple_tasting.theory.switching_time`) of the unknown-horizon
    learner at its default tuning, for each distinct (dimension, delta, sigma) in ``rows``;
    empty when a column is missing or a value is out of that function's range.

    Examples
    --------
    >>> rows = pa.table({"dimension": [2, 2], "delta": [0.1, 0.1], "sigma": [0.1, 0.1]})
    >>> [round(tau) for tau in switching_times(rows)]
    [50437]
    """
    needed = ("dimension", "delta", "sigma")
    if not all(c in rows.column_names for c in needed):
        return []
    combos = set(zip(*(rows.column(c).to_pylist() for c in needed), strict=True))
    try:
        return sorted(_tau_star(int(d), float(delta), float(sigma))
                      for d, delta, sigma in combos)
    except (TypeError, ValueError):  # a missing value, or one switching_time refuses
        return []


def outside_theorem(rows: pa.Table, label: str, names: Mapping[str, str] | None = None
                    ) -> str:
    """Why ``label``'s runs in ``rows`` are outside its theorem's assumptions, so that the
    theorem's exponent is no yardstick for them ("" when none is known to be broken).

    Read from the table's setting columns against the assumptions the learner's theorem states
    (:class:`~strategic_apple_tasting.learners.Theorem`): the unknown-horizon learner at a
    largest horizon T whose fitting window (t ≥ T/10) starts before its switching time τ* (it
    is still in its explore-then-commit epochs, and ``thm:best-both``'s 1/2 holds only after
    τ*); the oracle when not every agent games lazily with δ > 0; any other strategy-aware
    learner when some agents are truthful (its theorem has every agent game).

    Parameters
    ----------
    rows : pyarrow.Table
        Results holding ``label``'s runs (other learners' rows are ignored).
    label : str
        The learner's label in the results.
    names : mapping, optional
        Results label → registry name, for custom labels.

    Returns
    -------
    str
        One line, starting "outside the theorem's assumptions: ", or "".

    Examples
    --------
    >>> rows = pa.table({"learner": ["oracle"], "t": [10], "horizon": [10],
    ...                  "truthful": [1.0], "delta": [0.1], "agents": ["lazy"]})
    >>> outside_theorem(rows, "oracle")
    "outside the theorem's assumptions: truthful = 1 (needs every agent to game: truthful = 0)"
    """
    theorem = theorem_of(label, names)
    if theorem is None:
        return ""
    rows = rows.filter(pc.equal(rows.column("learner"), label))
    if rows.num_rows == 0:
        return ""
    why = []
    for setting, (holds, needed) in theorem.assumptions.items():
        if setting not in rows.column_names:
            continue
        bad = [v for v in dict.fromkeys(rows.column(setting).to_pylist()) if not holds(v)]
        if bad:
            shown = ", ".join(format_value(v) for v in bad)
            why.append(f"{setting} = {shown} (needs {needed})")
    if theorem.after_switching_time:
        taus = switching_times(rows)
        horizon = int(pc.max(rows.column("horizon")).as_py())
        if taus and horizon / 10 < taus[-1]:
            tau = f"τ* = {taus[-1]:,.0f}" if len(taus) == 1 else f"τ* up to {taus[-1]:,.0f}"
            tuning = "" if learner_name(label, names) == label else " at the default tuning"
            why.append(f"T = {horizon:,} < {tau}{tuning} (still explore-then-commit; the 1/2 "
                       "rate holds after τ*)" if horizon < taus[-1] else
                       f"the fit's t ≥ T/10 = {horizon / 10:,.0f} starts before {tau}{tuning}")
    return ("outside the theorem's assumptions: " + "; ".join(why)) if why else ""


# --------------------------------------------------------------------------- table helpers


def settings_columns(table: pa.Table) -> list[str]:
    """The game-setting columns of a results table (horizon included), in table order: not
    the results, nor a data game's benchmarks, its totals by group or a learner's estimate of
    the budget."""
    return [c for c in table.column_names if c not in RESULT_COLUMNS and c not in DATA_COLUMNS
            and c not in ESTIMATE_COLUMNS and not c.startswith("group_")]


def swept_settings(table: pa.Table) -> list[str]:
    """The settings that take more than one value in ``table``."""
    frame = table.select(settings_columns(table)).to_pandas()
    return [c for c in frame.columns if frame[c].nunique(dropna=False) > 1]


def labels(table: pa.Table) -> list[str]:
    """Learner labels in the registry's order (then custom labels), the same in every figure.

    Examples
    --------
    >>> labels(pa.table({"learner": ["oracle", "mine", "sa-ols", "oracle"]}))
    ['sa-ols', 'oracle', 'mine']
    """
    order = list(LEARNERS)
    found = dict.fromkeys(table.column("learner").to_pylist())

    def rank(label: str) -> tuple[int, str]:
        name = learner_name(label)
        return (order.index(name) if name in order else len(order), label)
    return sorted(found, key=rank)


def palette(names: list[str]) -> dict[str, str]:
    """One colour per learner label, so a learner looks the same in every figure."""
    return {name: f"C{i % 10}" for i, name in enumerate(names)}


def largest_horizon(table: pa.Table) -> pa.Table:
    """Each learner's rows at its largest horizon (one run per seed, for curves)."""
    learner = table.column("learner").to_numpy(zero_copy_only=False)
    horizon = table.column("horizon").to_numpy()
    top = pd.Series(horizon).groupby(learner).transform("max").to_numpy()
    return table.filter(pa.array(horizon == top))


def final_rows(table: pa.Table) -> pa.Table:
    """The last recorded round of every run (``t == horizon``)."""
    return table.filter(pc.equal(table.column("t"), table.column("horizon")))


def format_value(value: object) -> str:
    """A setting's value as shown (``"—"`` when missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float | np.floating):
        return f"{float(value):g}"
    return str(value)


def _nonneg(values: np.ndarray) -> np.ndarray:
    return np.where(values > 0, values, np.nan)


def _log_yerr(mean: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Error bars for a log axis: an interval reaching zero or below is drawn down to a tenth
    of the mean (a log axis has no zero); no bar where there is no interval (one seed)."""
    mean, half = np.asarray(mean, dtype=float), np.asarray(half, dtype=float)
    # NaN fails both comparisons below, so a missing interval would otherwise be drawn as one
    # reaching down to a tenth of the mean.
    lower = np.where(np.isnan(half), np.nan, np.where(mean - half > 0, half, 0.9 * mean))
    return np.vstack([np.maximum(lower, 0), half])  # maximum keeps NaN: no bar


def has_positive(*arrays: np.ndarray) -> bool:
    """Whether any of ``arrays`` holds a finite value > 0 (something a log axis can show).

    Examples
    --------
    >>> has_positive(np.array([0.0, np.nan]), np.array([-1.0])), has_positive(np.array([2.0]))
    (False, True)
    """
    return any(np.any(np.isfinite(a) & (np.asarray(a, dtype=float) > 0)) for a in arrays)


#: Digits and minus sign as superscripts (DejaVu Sans, matplotlib's default font, has them all).
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
#: A log axis's tick label as matplotlib writes it (``$\\mathdefault{2\\times10^{-3}}$``).
_MATHTEXT_POWER = re.compile(r"\$\\mathdefault\{(-?)(?:([\d.]+)\\times)?10\^\{(-?\d+)\}\}\$")


def plain_power(label: str) -> str:
    r"""A log axis's tick label as plain text: ``10⁴`` and ``2×10⁻³`` instead of matplotlib's
    mathtext, whose parsing was a fifth of the time a report took to draw (every label is
    parsed again at each resolution it is drawn at). Any other label is returned as it is.

    Examples
    --------
    >>> plain_power(r"$\mathdefault{10^{4}}$"), plain_power(r"$\mathdefault{2\times10^{-3}}$")
    ('10⁴', '2×10⁻³')
    >>> plain_power("0.5")
    '0.5'
    """
    match = _MATHTEXT_POWER.fullmatch(label)
    if match is None:
        return label
    sign, mantissa, power = match.groups()
    return f"{sign}{mantissa + '×' if mantissa else ''}10{power.translate(_SUPERSCRIPT)}"


@functools.cache
def _plain_log_formatter() -> type:
    from matplotlib.ticker import LogFormatterSciNotation

    class PlainLogFormatter(LogFormatterSciNotation):
        """matplotlib's labels of a log axis (the same ticks labelled), as plain text."""

        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_power(super().__call__(x, pos))

    return PlainLogFormatter


def log_scale(ax: plt.Axes, *, x: bool = False, y: bool = False) -> None:
    """Put ``ax``'s x and/or y axis on a log scale, labelled as matplotlib labels it but in plain
    text (:func:`plain_power`)."""
    formatter = _plain_log_formatter()
    for wanted, axis, scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if wanted:
            scale("log")
            axis.set_major_formatter(formatter())
            axis.set_minor_formatter(formatter(labelOnlyBase=False))


def log_axes(ax: plt.Axes, positive: bool, what: str) -> bool:
    """Log–log axes for ``ax`` when it has something positive to show, else linear axes with a
    note in the panel saying there is nothing to show.

    matplotlib refuses to lay out a log axis with no positive data ("Data cannot be
    log-scaled"), as happens when every regret is 0 (the oracle) or a run has one round.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel, its data already plotted.
    positive : bool
        Whether the plotted data hold a value > 0 (:func:`has_positive`).
    what : str
        What is plotted, for the note (``"regret"``).

    Returns
    -------
    bool
        Whether the axes are logarithmic.
    """
    if positive:
        log_scale(ax, x=True, y=True)
        return True
    ax.text(0.5, 0.5, f"no {what} > 0:\nnothing to show on log axes", transform=ax.transAxes,
            ha="center", va="center", fontsize=10, color="0.35")
    # The panel plots only NaN (zeros hidden for the log view), so its ticks would be
    # matplotlib's arbitrary default range around 0.
    ax.set_xticks([])
    ax.set_yticks([])
    return False


def _marker(t: np.ndarray) -> str | None:
    """A marker for a curve of one point (a run of one round), which a line alone hides."""
    return "o" if np.size(t) == 1 else None


# --------------------------------------------------------------------------- exponents


@dataclass(frozen=True)
class ExponentFit:
    """A fitted growth exponent of one learner's regret: the log–log slope of the mean over
    seeds, with its 95% interval bootstrapped over seeds.

    ``along`` is ``"horizons"`` (final regret at each horizon, for learners tuned to it) or
    ``"run"`` (the mean regret curve for t ≥ T/10, for anytime learners). ``estimate`` is None
    and ``note`` says why when there is no fit; ``t``/``regret`` are the points fitted.
    """

    learner: str
    along: str
    estimate: Estimate | None = None
    note: str = ""
    t: np.ndarray = field(default_factory=lambda: np.empty(0))
    regret: np.ndarray = field(default_factory=lambda: np.empty(0))
    half: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def ok(self) -> bool:
        return self.estimate is not None and math.isfinite(self.estimate.value)

    @property
    def slope(self) -> float:
        return self.estimate.value if self.estimate is not None else math.nan

    def shown(self) -> str:
        """``"0.52 [0.49, 0.55]"`` (slope and its 95% interval) or why there is no fit."""
        if not self.ok:
            return self.note or "undefined"
        assert self.estimate is not None
        return self.estimate.shown(2)

    def line(self) -> tuple[np.ndarray, np.ndarray]:
        """The fitted line over the points used: rounds and fitted regret."""
        keep = (self.t >= self._cut()) & (self.regret > 0)
        x, y = np.log(self.t[keep]), np.log(self.regret[keep])
        intercept = y.mean() - self.slope * x.mean()
        t = np.array([self.t[keep].min(), self.t[keep].max()])
        return t, np.exp(intercept + self.slope * np.log(t))

    def _cut(self) -> float:
        return float(self.t.min()) if self.along == "horizons" else float(self.t.max()) / 10


def fit_exponent(table: pa.Table, label: str, names: Mapping[str, str] | None = None
                 ) -> ExponentFit:
    """The growth exponent of ``label``'s regret in ``table`` (one setting of the game).

    Learners tuned to the horizon are fitted across horizons (mean final regret at each, needs
    three or more); anytime learners along the mean curve at their largest horizon, t ≥ T/10.
    The interval is bootstrapped over seeds (:func:`~strategic_apple_tasting.metrics.bootstrap`).

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> table = simulate(Game(dimension=2), ["naive-greedy"], horizon=3000, seeds=2)
    >>> fit = fit_exponent(table, "naive-greedy")
    >>> fit.along, fit.ok
    ('run', True)
    """
    sub = table.filter(pc.equal(table.column("learner"), label))
    if tuned_to_horizon(label, names):
        final = final_rows(sub).to_pandas()
        horizons = np.sort(final["horizon"].unique())
        stats = [mean_ci(final.loc[final["horizon"] == h, "regret"].to_numpy()) for h in horizons]
        means = np.array([m for m, _ in stats])
        half = np.array([h for _, h in stats])
        fit = ExponentFit(label, "horizons", t=horizons.astype(float), regret=means, half=half)
        if horizons.size < 3:
            return _with(fit, note=f"undefined: needs ≥ 3 horizons (has {horizons.size})")
        if np.count_nonzero(means > 0) < 3:
            return _with(fit, note="undefined: regret 0" if not np.any(means > 0)
                         else "undefined: needs ≥ 3 horizons with regret > 0")
        return _with(fit, estimate=exponent_across(sub, label))
    runs = largest_horizon(sub)
    t, mean, half = regret_curves(runs, label)
    fit = ExponentFit(label, "run", t=t.astype(float), regret=mean, half=half)
    if np.count_nonzero((mean > 0) & (t >= t.max() / 10)) < 3:
        return _with(fit, note="undefined: regret 0" if not np.any(mean > 0)
                     else "undefined: < 3 rounds with regret > 0 for t ≥ T/10")
    return _with(fit, estimate=exponent_along(runs, label))


def _with(fit: ExponentFit, **changes: object) -> ExponentFit:
    return dataclasses.replace(fit, **changes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- figures


def _legend_below(fig: Figure, ax: plt.Axes, ncol: int = 1) -> None:
    handles, names = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=ncol,
                  fontsize=8.5, frameon=False)


def single_dimension(table: pa.Table) -> int | None:
    """The dimension d when every row shares one, else None."""
    if "dimension" not in table.column_names:
        return None
    values = set(table.column("dimension").to_pylist())
    return int(values.pop()) if len(values) == 1 else None


def regret_figure(table: pa.Table, fits: dict[str, ExponentFit], *, title: str = "",
                  colors: dict[str, str] | None = None,
                  names: Mapping[str, str] | None = None,
                  caveats: Mapping[str, str] | None = None) -> Figure:
    """Cumulative regret against rounds (mean with 95% band per learner, at each learner's
    largest horizon) and the log–log view with the fitted exponents beside the theorems'.

    A learner with a caveat (``caveats``: label → why its runs are outside its theorem's
    assumptions, :func:`outside_theorem`) has its theorem's exponent marked "n/a here" in the
    legend. With no regret > 0 at all the right panel stays linear and says so.

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> table = simulate(Game(dimension=2), ["sa-ols", "oracle"], horizon=200, seeds=2)
    >>> fig = regret_figure(table, {n: fit_exponent(table, n) for n in ("sa-ols", "oracle")})
    >>> len(fig.axes)
    2
    """
    curves = largest_horizon(table)
    d = single_dimension(table)
    colors = colors or palette(labels(table))
    fig, (ax_lin, ax_log) = _pyplot().subplots(1, 2, figsize=(11, 4.6))
    positive = False
    for name in labels(table):
        color = colors[name]
        t, mean, half = regret_curves(curves, name)
        positive |= has_positive(mean)
        ax_lin.plot(t, mean, color=color, lw=1.6, marker=_marker(t), label=name)
        ax_lin.fill_between(t, np.maximum(mean - half, 0), mean + half, color=color, alpha=0.2,
                            lw=0)
        fit = fits.get(name)
        text = name
        if fit is not None:
            how = "across T" if fit.along == "horizons" else "t ≥ T/10"
            theorem = theorem_of(name, names)
            shown = "—" if theorem is None else theorem.short(d)
            if theorem is not None and caveats and caveats.get(name):
                shown += " (n/a here: outside its assumptions)"
            text = (f"{name}: {fit.shown()} ({how}); theorem {shown}" if fit.ok
                    else f"{name}: {fit.shown()}; theorem {shown}")
        ax_log.plot(t, _nonneg(mean), color=color, lw=1.2, marker=_marker(t),
                    alpha=0.45 if fit is not None and fit.along == "horizons" else 1.0,
                    label=text)
        if fit is not None and fit.along == "horizons":
            ax_log.errorbar(fit.t, _nonneg(fit.regret), yerr=_log_yerr(fit.regret, fit.half),
                            fmt="o", ms=4, color=color, capsize=2, lw=1)
        if fit is not None and fit.ok:
            ft, fy = fit.line()
            ax_log.plot(ft, fy, color="black", lw=1.0, ls="--", alpha=0.8)
    ax_lin.set_xlabel("round t")
    ax_lin.set_ylabel("cumulative strategic regret")
    ax_lin.set_xlim(left=0)
    ax_lin.set_ylim(bottom=0)
    ax_lin.set_title("mean over seeds with 95% band", fontsize=10)
    logged = log_axes(ax_log, positive, "regret")
    across = any(f.along == "horizons" for f in fits.values())
    ax_log.set_xlabel("round t (dots: final regret at each horizon T)" if across else "round t")
    ax_log.set_ylabel("cumulative strategic regret")
    ax_log.set_title("log–log: fitted slope [95% CI over seeds] (dashed) vs theorem" if logged
                     else "exponents (no log–log view: regret 0)", fontsize=10)
    for ax in (ax_lin, ax_log):
        ax.grid(alpha=0.3, which="both")
    _legend_below(fig, ax_lin, ncol=2)
    _legend_below(fig, ax_log)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def clean_theory(setting: dict[str, object]) -> str:
    """Why SA-OLS's expected clean points d + c1·(t − d) do not apply to ``setting`` ("" when
    they do: uniform contexts, lazy agents, nobody truthful, r0 = 0, apple feedback).

    Examples
    --------
    >>> clean_theory({"contexts": "uniform-ball", "agents": "lazy", "truthful": 0.0,
    ...               "r0": 0.0, "feedback": "apple"})
    ''
    >>> clean_theory({"contexts": "mixture", "agents": "lazy", "truthful": 0.0,
    ...               "r0": 0.0, "feedback": "apple"})
    'contexts = mixture (needs uniform-ball or uniform-sphere)'
    """
    if setting.get("contexts") not in ("uniform-ball", "uniform-sphere"):
        return f"contexts = {setting.get('contexts')} (needs uniform-ball or uniform-sphere)"
    if setting.get("agents") != "lazy":
        return f"agents = {setting.get('agents')} (needs lazy agents)"
    if setting.get("truthful") != 0:
        return f"truthful = {format_value(setting.get('truthful'))} (needs 0)"
    if setting.get("r0") != 0:
        return f"r0 = {format_value(setting.get('r0'))} (needs 0)"
    if setting.get("feedback") != "apple":
        return (f"feedback = {setting.get('feedback')} (under bandit feedback learners also "
                "learn from rejected points)")
    return ""


def _setting(table: pa.Table) -> dict[str, object]:
    """The first row's settings (one game setting per table here)."""
    return {c: table.column(c)[0].as_py() for c in settings_columns(table)}


def learning_figure(table: pa.Table, *, title: str = "", colors: dict[str, str] | None = None
                    ) -> tuple[Figure, str]:
    """Clean points against SA-OLS's expected d + c1(d, δ/R)·(t − d), and the estimation error
    ‖θ̂ − θ‖ over time (means over seeds, NaN-aware, log axes).

    Returns the figure and a note on what is left out ("" if nothing).

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> table = simulate(Game(dimension=2), ["sa-ols"], horizon=200, seeds=2)
    >>> fig, note = learning_figure(table)
    >>> note
    ''
    """
    curves = largest_horizon(table)
    setting = _setting(curves)
    why = clean_theory(setting)
    notes = []
    fig, (ax_clean, ax_err) = _pyplot().subplots(1, 2, figsize=(11, 4.4))
    horizon = 0
    positive = False
    colors = colors or palette(labels(table))
    for name in labels(curves):
        color = colors[name]
        t, mean, half = regret_curves(curves, name, "clean")
        horizon = max(horizon, int(t.max()))
        ax_clean.plot(t, mean, color=color, lw=1.6, marker=_marker(t), label=name)
        ax_clean.fill_between(t, np.maximum(mean - half, 0), mean + half, color=color,
                              alpha=0.2, lw=0)
        t, err, half = regret_curves(curves, name, "theta_error")
        if has_positive(err):
            positive = True
            ax_err.plot(t, _nonneg(err), color=color, lw=1.6, marker=_marker(t), label=name)
            ax_err.fill_between(t, _nonneg(np.maximum(err - half, 0)), _nonneg(err + half),
                                color=color, alpha=0.15, lw=0)
        else:
            notes.append(name)
    if not why:
        d = int(setting["dimension"])  # type: ignore[arg-type]
        t = np.unique(np.linspace(0, horizon, 200).round().astype(int))
        expected = [theory.expected_clean_points(
            d, float(setting["delta"]), int(s),  # type: ignore[arg-type]
            radius=float(setting.get("radius") or 1.0),  # type: ignore[arg-type]
            surface=setting["contexts"] == "uniform-sphere") for s in t]
        ax_clean.plot(t, expected, color="black", ls="--", lw=1.2,
                      label="SA-OLS expected: d + c1(d, δ/R)·(t − d)")
    ax_clean.set_xlabel("round t")
    ax_clean.set_ylabel("clean points (learned from)")
    ax_clean.set_title("clean points vs c1·T" if not why else "clean points (no c1·T line)",
                       fontsize=10)
    ax_clean.set_xlim(left=0)
    ax_clean.set_ylim(bottom=0)
    log_axes(ax_err, positive, "estimation error")
    ax_err.set_xlabel("round t")
    ax_err.set_ylabel("‖θ̂ − (θ1 − θ0)‖")
    ax_err.set_title("estimation error: mean with 95% band", fontsize=10)
    for ax in (ax_clean, ax_err):
        ax.grid(alpha=0.3, which="both")
    _legend_below(fig, ax_clean, ncol=2)
    _legend_below(fig, ax_err, ncol=2)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    note = []
    if why:
        note.append(f"No c1·T line: {why}.")
    if notes:
        note.append(f"No estimation error to show for {', '.join(notes)} (none or zero).")
    return fig, " ".join(note)


def final_regret_figure(table: pa.Table, setting: str, swept: list[str], *,
                        colors: dict[str, str] | None = None) -> tuple[Figure, str]:
    """Mean final regret (95% CI over seeds) per learner against ``setting``, one panel per
    combination of the other swept settings (at most :data:`MAX_PANELS`).

    Returns the figure and a note ("" unless panels were left out).

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> import pyarrow as pa
    >>> table = pa.concat_tables([simulate(Game(dimension=2), ["sa-ols"], horizon=h, seeds=2)
    ...                           for h in (100, 200)])
    >>> fig, note = final_regret_figure(table, "horizon", ["horizon"])
    >>> note
    ''
    """
    others = [s for s in swept if s != setting]
    final, groups, note, fig, axes = _panels(table, others)
    values = final[setting].dropna().unique()
    numeric = pd.api.types.is_numeric_dtype(final[setting]) and final[setting].dtype != bool
    if numeric:
        values = np.sort(values.astype(float))
        logx = values.size > 1 and values.min() > 0 and values.max() / values.min() >= 10
    else:
        values = sorted(map(str, values))
        logx = False
    names = labels(table)
    colors = colors or palette(names)
    points = {}  # (panel, learner) -> x, mean, half
    for p, (_, group) in enumerate(groups):
        for name in names:
            rows = group[group["learner"] == name]
            if rows.empty:
                continue
            stats = [(float(v) if numeric else values.index(str(v)),
                      *mean_ci(cell["regret"].to_numpy()))
                     for v, cell in rows.groupby(setting, sort=True)]
            points[p, name] = np.array(sorted(stats)).T
    means = np.concatenate([m for _, m, _ in points.values()]) if points else np.empty(0)
    positive = means[means > 0]
    logy = positive.size > 0 and positive.max() / positive.min() >= 100
    if logy and np.any(means <= 0):
        zero = sorted({n for (_, n), (_, m, _) in points.items() if np.any(m <= 0)})
        note = (note + " " if note else "") + (
            f"Log scale: zero final regret is not shown ({', '.join(zero)}).")
    if logy:
        note = (note + " " if note else "") + (
            "On the log scale, intervals reaching zero are drawn down to a tenth of the mean.")
    handles = {}
    for p, (ax, (key, _)) in enumerate(zip(axes.flat, groups, strict=False)):
        for i, name in enumerate(names):
            if (p, name) not in points:
                continue
            x, m, h = points[p, name]
            if not numeric:  # side by side around each category, not joined by lines
                x = x + (i - (len(names) - 1) / 2) * min(0.1, 0.6 / len(names))
            yerr = _log_yerr(m, h) if logy else h
            if logy:
                m = _nonneg(m)
            handles[name] = ax.errorbar(x, m, yerr=yerr, marker="o", ms=4, capsize=3, lw=1.4,
                                        ls="-" if numeric else "none", color=colors[name],
                                        label=name)
        if numeric:
            if logx:
                log_scale(ax, x=True)
            ax.set_xticks(values)
            ax.set_xticklabels([format_value(float(v)) for v in values])
            ax.minorticks_off()
        else:
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels(values)
            ax.set_xlim(-0.5, len(values) - 0.5)
        ax.set_xlabel(setting)
        ax.set_ylabel("final regret (mean, 95% CI)")
        if logy:
            log_scale(ax, y=True)
        else:
            ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3, which="both" if logy else "major")
        _panel_title(ax, others, key)
    _finish_panels(fig, axes, len(groups), f"Final regret against {setting}",
                   list(handles.values()), list(handles), ncol=5)
    return fig, note


def _panels(table: pa.Table, others: list[str]) -> tuple:
    """The final rows, their groups by ``others`` (at most :data:`MAX_PANELS`, with a note
    when some are left out) and a figure with a panel for each."""
    final = final_rows(table).to_pandas()
    groups = list(final.groupby(others, dropna=False, sort=True)) if others else [((), final)]
    note = ""
    if len(groups) > MAX_PANELS:
        note = f"Showing {MAX_PANELS} of {len(groups)} combinations of {', '.join(others)}."
        groups = groups[:MAX_PANELS]
    ncols = min(3, len(groups))
    nrows = math.ceil(len(groups) / ncols)
    fig, axes = _pyplot().subplots(nrows, ncols, figsize=(4.4 * ncols, 3.6 * nrows + 0.6),
                             squeeze=False)
    return final, groups, note, fig, axes


def _panel_title(ax: plt.Axes, others: list[str], key: object) -> None:
    if others:
        key = key if isinstance(key, tuple) else (key,)
        ax.set_title(", ".join(f"{k} = {format_value(v)}"
                               for k, v in zip(others, key, strict=True)), fontsize=9.5)


def _finish_panels(fig: Figure, axes: np.ndarray, used: int, title: str, handles: list,
                   names: list[str], ncol: int) -> None:
    """Hide the unused panels, title the figure and put one legend below it."""
    for ax in axes.flat[used:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(handles), ncol), fontsize=9, frameon=False)


# --------------------------------------------------------------------------- saving


def with_c1(table: pa.Table) -> pa.Table | None:
    """``table`` with a column ``c1`` = c1(d, δ/R) (:func:`~strategic_apple_tasting.theory.c1`),
    the fraction of agents clean under the best shifted rule, for a sweep over the dimension or
    δ with contexts uniform in the ball (None otherwise: c1 is that model's)."""
    swept = swept_settings(table)
    if not ({"dimension", "delta"} & set(swept)) or "contexts" not in table.column_names \
            or set(table.column("contexts").to_pylist()) != {"uniform-ball"}:
        return None
    cells = zip(table.column("dimension").to_pylist(), table.column("delta").to_pylist(),
                table.column("radius").to_pylist(), strict=True)
    known: dict[tuple, float] = {}
    values = [known.setdefault(k, theory.c1(int(k[0]), min(1.0, k[1] / k[2])))
              for k in cells]
    return table.append_column("c1", pa.array(values, pa.float64()))


def c1_figure(table: pa.Table, others: list[str], *, colors: dict[str, str] | None = None
              ) -> tuple[Figure, str]:
    """Mean final regret (95% CI over seeds) against c1 on log–log axes, for a table from
    :func:`with_c1`: one colour per learner, one marker per dimension, points of one dimension
    (varying δ) joined; one panel per combination of the ``others`` settings (at most
    :data:`MAX_PANELS`). Returns the figure and a note ("" unless panels were left out)."""
    final, groups, note, fig, axes = _panels(table, others)
    names = labels(table)
    colors = colors or palette(names)
    markers = dict(zip(sorted(final["dimension"].unique()), "osD^v<>p*h", strict=False))
    for ax, (key, group) in zip(axes.flat, groups, strict=False):
        for name in names:
            for d, cells in group[group["learner"] == name].groupby("dimension", sort=True):
                stats = np.array(sorted((c1, *mean_ci(cell["regret"].to_numpy()))
                                        for c1, cell in cells.groupby("c1", sort=True))).T
                x, m, h = stats
                ax.errorbar(x, _nonneg(m), yerr=_log_yerr(m, h), marker=markers.get(d, "o"),
                            ms=5, capsize=3, lw=1.2, color=colors[name],
                            label=f"{name}, d = {d}")
        log_scale(ax, x=True, y=True)
        ax.set_xlabel("c1(d, δ/R)")
        ax.set_ylabel("final regret (mean, 95% CI)")
        ax.grid(alpha=0.3, which="both")
        _panel_title(ax, others, key)
    _finish_panels(fig, axes, len(groups), "Final regret against c1",
                   *axes.flat[0].get_legend_handles_labels(), ncol=4)
    return fig, note


def slug(text: str) -> str:
    """A file-name-safe form of ``text``.

    Examples
    --------
    >>> slug("final vs. budget_low")
    'final-vs-budget-low'
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def save_figure(fig: Figure, out_dir: str | os.PathLike, stem: str, *, dpi: int = 110
                ) -> bytes:
    """Write ``fig`` as ``stem.png`` and ``stem.pdf`` in ``out_dir``, close it, and return the
    PNG's bytes (for embedding). Both are cropped to the figure's tight bounding box (legends
    outside the axes included), found once: ``bbox_inches="tight"`` would draw the figure
    again for each file just to find it (a fifth of a report's drawing). Measuring the box
    places what a draw would place (a legend at ``loc="best"``), so no draw comes first."""
    from matplotlib import rcParams
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{stem}.png"
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        # What a one-off tight_layout() leaves: no engine to run, but savefig would still
        # draw the figure once more before each file as if there were one.
        fig.set_layout_engine(None)
    fig.set_dpi(dpi)  # the box found at the PNG's resolution, as savefig would find it
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(rcParams["savefig.pad_inches"])
    fig.savefig(png, dpi=dpi, bbox_inches=box)
    fig.savefig(out / f"{stem}.pdf", bbox_inches=box)
    _pyplot().close(fig)
    return png.read_bytes()
