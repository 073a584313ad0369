"""`sat report`: a self-contained HTML page with its figures, checked in headless Chromium."""

from __future__ import annotations

import contextlib
import io
import math
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from strategic_apple_tasting import theory
from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.spec import check_spec
from strategic_apple_tasting.experiments.sweep import _Inline, load, run_sweep
from strategic_apple_tasting.reports import figures as F
from strategic_apple_tasting.reports.plots import regret_curves

# Three horizons so the across-horizon fit of ETC (tuned to the horizon) is exercised; two budgets
# so the report has two sections and a final-regret figure per swept setting.
SPEC = {"horizon": [200, 400, 800], "seeds": 2, "seeds_per_cell": 2,
        "game": {"dimension": 2, "delta": [0.1, 0.3]},
        "learners": [{"name": "sa-ols"}, {"name": "oracle"}, {"name": "naive-greedy"},
                     {"name": "etc"}]}
FIGURES = ("regret-01", "learning-01", "regret-02", "learning-02", "final-vs-delta",
           "final-vs-horizon", "final-vs-c1")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    run_sweep(check_spec(SPEC), out, executor=_Inline())
    return out


@pytest.fixture(scope="module")
def report(sweep, tmp_path_factory):
    """The report written by `sat report`, and what the command printed."""
    out = tmp_path_factory.mktemp("report")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["report", str(sweep), "--out", str(out)])
    assert status == 0
    return out, printed.getvalue()


def test_report_writes_page_and_every_figure_as_png_and_pdf(report):
    out, printed = report
    assert printed.strip() == str(out / "index.html")
    page = (out / "index.html").read_text(encoding="utf-8")
    for stem in FIGURES:
        assert (out / f"{stem}.png").stat().st_size > 10_000
        assert (out / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    images = re.findall(r'<img src="([^"]*)"', page)
    assert len(images) == len(FIGURES)
    assert all(src.startswith("data:image/png;base64,") for src in images)
    # Self-contained: no scripts, stylesheets, fonts or anything else fetched from elsewhere.
    assert not re.search(r"https?://", page)
    assert "<script" not in page and "<link rel=\"stylesheet\"" not in page


def test_report_shows_summaries_exponents_theorems_and_settings(report):
    page = (report[0] / "index.html").read_text(encoding="utf-8")
    assert "delta = 0.1" in page and "delta = 0.3" in page
    assert page.count("regret (mean [95% CI])") == 2
    assert "± 0" not in page
    assert "Stackelberg regret" in page
    assert "across 3 horizon(s)" in page and "along the run: mean regret for t ≥ T/10" in page
    assert "2/3 (thm:etc-reg)" in page and "1/2 (thm:stochastic-main-app)" in page
    # No theorem, so nothing to be outside of: an empty caveat.
    assert re.search(r"<td class=text>naive-greedy</td>.*?<td class=text>—</td>"
                     r"<td class=text></td></tr>", page)
    assert "outside the theorem" not in page.split("<h2>Notes</h2>")[0]
    assert "SA-OLS&#x27;s expected number" in page or "SA-OLS's expected number" in page
    assert "The same in every run" in page and "Every combination of the swept settings" in page
    # Exponents with intervals bootstrapped over seeds, never a regression's "± s.e.".
    num = r"(-?\d[\d.e+-]*)"
    fits = re.findall(rf"<td>{num} \[{num}, {num}\]</td>", page)
    assert len(fits) >= 4  # sa-ols, naive-greedy and etc at each budget (oracle: regret 0)
    assert all(float(lo) <= float(v) <= float(hi) for v, lo, hi in fits)


def test_etc_is_fitted_across_horizons_and_needs_three_of_them(sweep):
    table = load(sweep)
    table = table.filter(pc.equal(table.column("delta"), 0.3))
    fit = F.fit_exponent(table, "etc")
    assert fit.along == "horizons" and fit.ok and list(fit.t) == [200, 400, 800]
    one = table.filter(pc.equal(table.column("horizon"), 800))
    assert F.fit_exponent(one, "etc").shown() == "undefined: needs ≥ 3 horizons (has 1)"
    anytime = F.fit_exponent(table, "naive-greedy")
    assert anytime.along == "run" and anytime.ok
    assert F.fit_exponent(table, "oracle").shown() == "undefined: regret 0"


def test_theorem_exponents_live_on_the_learner_classes():
    from strategic_apple_tasting.learners import SAOLS

    rate = {name: F.theorem_of(name) for name in ("sa-ols", "etc", "exp3-sae", "oracle")}
    assert rate["sa-ols"] is SAOLS.tags().theorem
    assert F.theorem_of("sa-ols(delta=0.2)") is SAOLS.tags().theorem
    assert rate["sa-ols"].exponent(5) == 0.5
    assert math.isclose(rate["etc"].exponent(5), 2 / 3)
    assert math.isclose(rate["exp3-sae"].exponent(1), 2 / 3)
    assert rate["oracle"].exponent(3) == 0
    assert F.theorem_text("naive-greedy", 2) == "—"
    assert F.theorem_text("etc(exploration_rounds=50)", 2).endswith("†")
    assert F.tuned_to_horizon("exp3-sae") and not F.tuned_to_horizon("unknown-horizon")


def test_curves_are_nan_aware():
    table = pa.table({"learner": ["a"] * 4, "seed": [0, 0, 1, 1], "t": [1, 2, 1, 2],
                      "theta_error": [np.nan, 1.0, np.nan, 3.0]})
    t, mean, half = regret_curves(table, "a", "theta_error")
    assert list(t) == [1, 2] and np.isnan(mean[0]) and mean[1] == 2.0 and half[1] > 0


def test_report_of_a_missing_sweep_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sat: error: ") and "is not a sweep directory" in err
    assert "results.parquet" in err  # a `sat run` output directory is accepted too
    assert err.count("\n") == 1



def test_report_renders_in_headless_chromium(browser, report, tmp_path):
    out, _ = report

    def inspect(page):
        images = page.eval_on_selector_all(
            "img", "imgs => imgs.map(i => [i.complete, i.naturalWidth, "
            "i.getBoundingClientRect().width])")
        return images, page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")

    (images, overflow), errors, _ = browser((out / "index.html").as_uri(), inspect,
                                            tmp_path / "report.png")
    assert errors == []
    assert len(images) == len(FIGURES)
    assert all(done and natural > 0 and shown > 0 for done, natural, shown in images)
    assert overflow <= 0  # nothing wider than the window: wide tables scroll in their box
    assert (tmp_path / "report.png").stat().st_size > 50_000


def test_the_c1_figure_is_drawn_only_for_uniform_ball_contexts_over_d_or_delta(sweep):
    table = load(sweep)
    got = F.with_c1(table)
    row = got.slice(0, 1).to_pylist()[0]
    assert row["c1"] == theory.c1(row["dimension"], row["delta"] / row["radius"])
    # Controls: nothing swept over d or δ, or contexts other than the uniform ball.
    one = table.filter(pc.equal(table.column("delta"), table.column("delta")[0]))
    assert F.with_c1(one) is None
    other = table.set_column(table.column_names.index("contexts"), "contexts",
                             pa.array(["mixture"] * table.num_rows))
    assert F.with_c1(other) is None
