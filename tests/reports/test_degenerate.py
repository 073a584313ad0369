"""`sat report` and `sat results` on `sat run` output and on degenerate but valid results: every
regret 0, one round, one seed, d = 1, a learner missing at a horizon, no estimate of θ; and the
caveats beside theorem exponents for runs outside a theorem's assumptions."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.storage import write_table
from strategic_apple_tasting.reports import figures as F
from strategic_apple_tasting.reports import load_results, plot_regret, summary_text

# The HTML escapes the apostrophe; the text summary does not.
CAVEAT = r"outside the theorem(?:'|&#x27;)s assumptions: "


def _run(out: Path, *args: str) -> None:
    assert main(["run", *args, "--threads", "1", "--out", str(out)]) == 0


def _report(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """`sat report DIR` (exit 0 and index.html plus figures written): the page's text."""
    capsys.readouterr()
    assert main(["report", str(directory)]) == 0, capsys.readouterr().err
    page = directory / "report" / "index.html"
    assert capsys.readouterr().out.strip() == str(page)
    for stem in ("regret-01", "learning-01"):
        assert (page.parent / f"{stem}.png").stat().st_size > 5_000
        assert (page.parent / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    return page.read_text(encoding="utf-8")


def _results(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["results", str(directory)]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def oracle_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sat run` of the oracle alone: every regret is 0 (agents game lazily, δ > 0)."""
    out = tmp_path_factory.mktemp("oracle")
    _run(out, "-l", "oracle", "-d", "2", "-T", "200", "--seeds", "2")
    return out


@pytest.fixture(scope="module")
def one_round(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`sat run` at horizon 1, d = 1, one seed."""
    out = tmp_path_factory.mktemp("one-round")
    _run(out, "-l", "sa-ols", "-l", "unknown-horizon", "-l", "accept-all", "-d", "1", "-T", "1",
         "--seeds", "1")
    return out


def test_run_output_is_accepted_by_report_and_results(oracle_only, capsys):
    page = _report(oracle_only, capsys)
    assert "Results report:" in page
    assert "oracle" in _results(oracle_only, capsys)
    assert load_results(oracle_only).num_rows > 0


def test_every_regret_zero_gives_a_report_with_undefined_exponents(oracle_only, capsys):
    page = _report(oracle_only, capsys)
    assert "undefined: regret 0" in page
    text = _results(oracle_only, capsys)
    assert "undefined: regret 0" in text and "nan" not in text.lower()
    # Agents game lazily with δ > 0: the oracle's theorem applies, so no caveat (the control
    # for the caveat tests below).
    assert not re.search(CAVEAT, page) and not re.search(CAVEAT, text)


def test_horizon_one_with_d_1_and_one_seed_gives_a_report(one_round, capsys):
    page = _report(one_round, capsys)
    assert "1 seed: no interval" in page and "± 0" not in page
    text = _results(one_round, capsys)
    assert "1 seed: no interval" in text and "undefined" in text
    # accept-all never estimates θ: its error is no number, shown as such, not as nan.
    assert re.search(r"accept-all .* -\s*$", text, re.M)
    assert "nan" not in text.lower()


def test_unknown_horizon_before_its_switching_time_is_flagged(one_round, capsys):
    page = _report(one_round, capsys)
    assert re.search(CAVEAT + r"T = 1 &lt; τ\* = [\d,]+", page)
    text = _results(one_round, capsys)
    assert re.search(r"undefined: regret 0 ‡", text)
    assert re.search(r"‡ unknown-horizon: " + CAVEAT + r"T = 1 < τ\*", text)
    assert "‡ sa-ols" not in text


def test_oracle_with_truthful_agents_is_flagged(tmp_path, capsys):
    _run(tmp_path, "-l", "oracle", "-l", "naive-greedy", "-d", "2", "-T", "300", "--seeds",
         "2", "--truthful", "1")
    page = _report(tmp_path, capsys)
    assert re.search(r"<td class=text>0 \(knows θ; when every agent games\)</td>"
                     r"<td class=text><strong>" + CAVEAT + r"truthful = 1", page)
    assert len(re.findall(CAVEAT, page)) == 1  # naive greedy's row (no theorem) has none
    text = _results(tmp_path, capsys)
    assert re.search(r"^‡ oracle: " + CAVEAT + "truthful = 1", text, re.M)


def test_switching_time_caveat_depends_on_the_horizon():
    def rows(horizon: int) -> pa.Table:
        return pa.table({"learner": ["unknown-horizon"], "t": [horizon], "horizon": [horizon],
                         "dimension": [2], "delta": [0.1], "sigma": [0.1]})
    (tau,) = F.switching_times(rows(10))
    assert 10_000 < tau < 1e6
    assert f"T = 1,000 < τ* = {tau:,.0f}" in F.outside_theorem(rows(1000), "unknown-horizon")
    assert "starts before τ*" in F.outside_theorem(rows(int(2 * tau)), "unknown-horizon")
    assert F.outside_theorem(rows(int(20 * tau)), "unknown-horizon") == ""
    assert F.outside_theorem(rows(1000), "sa-ols") == ""  # not its rows, nor its theorem


@pytest.mark.parametrize(("setting", "value", "flagged"), [
    ("truthful", 0.0, False), ("truthful", 0.5, True), ("delta", 0.0, True),
    ("agents", "trembling", True)])
def test_oracle_caveat_reads_the_settings(setting, value, flagged):
    row = {"learner": ["oracle"], "t": [5], "horizon": [5], "truthful": [0.0],
           "delta": [0.1], "agents": ["lazy"], setting: [value]}
    caveat = F.outside_theorem(pa.table(row), "oracle")
    assert bool(caveat) is flagged
    if flagged:
        assert f"{setting} = {F.format_value(value)}" in caveat


def test_learner_missing_at_a_horizon_and_one_seed(tmp_path, capsys):
    game = Game(dimension=2)
    parts = [simulate(game, ["sa-ols", "etc"], horizon=100, seeds=[0]),
             simulate(game, ["sa-ols"], horizon=200, seeds=[0]),
             simulate(game, ["sa-ols", "etc", "accept-all"], horizon=400, seeds=[0])]
    write_table(pa.concat_tables(parts), tmp_path / "results.parquet")
    page = _report(tmp_path, capsys)
    assert (tmp_path / "report" / "final-vs-horizon.png").stat().st_size > 5_000
    assert "undefined: needs ≥ 3 horizons (has 2)" in page
    assert "no interval" in page and "± 0" not in page
    text = _results(tmp_path, capsys)
    assert "horizon = 200" in text and "nan" not in text.lower()


def test_a_directory_of_neither_kind_is_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    for command in ("report", "results"):
        assert main([command, str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sat: error: ") and err.count("\n") == 1
        assert "spec.json and cells/" in err and "results.parquet" in err


def test_unreadable_or_foreign_results_are_one_line(tmp_path, capsys):
    (tmp_path / "results.parquet").write_bytes(b"not parquet\nat all\n")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sat: error: cannot read ") and err.count("\n") == 1
    write_table(pa.table({"learner": ["a"], "seed": [0]}), tmp_path / "results.parquet")
    assert main(["results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "lacks the column(s) t, regret" in err and err.count("\n") == 1


def test_log_error_bars_leave_out_missing_intervals():
    bars = F._log_yerr(np.array([2.0, 2.0, 2.0]), np.array([np.nan, 1.0, 3.0]))
    assert np.isnan(bars[:, 0]).all()  # one seed: no bar, not one down to a tenth
    assert bars[0, 1] == 1.0 and bars[0, 2] == pytest.approx(1.8)


def test_figures_of_all_zero_regret_fall_back_to_linear_axes(oracle_only, tmp_path):
    table = load_results(oracle_only)
    fig = F.regret_figure(table, {"oracle": F.fit_exponent(table, "oracle")})
    assert fig.axes[1].get_yscale() == "linear"
    assert any("nothing to show on log axes" in t.get_text() for t in fig.axes[1].texts)
    plt.close(fig)
    assert plot_regret(table, tmp_path / "regret.png").stat().st_size > 5_000
    assert "undefined: regret 0" in summary_text(table)


def test_strategy_aware_learners_are_flagged_when_agents_are_truthful():
    """SA-OLS's √T assumes every agent games; with truthful agents its shift wrongly rejects a
    band every round. A baseline (no theorem) and the same learner at truthful = 0 are not
    flagged: the control."""
    from strategic_apple_tasting.reports.figures import outside_theorem

    def rows(truthful: float, learner: str) -> pa.Table:
        return pa.table({"learner": [learner], "t": [10], "horizon": [10],
                         "truthful": [truthful], "delta": [0.1], "agents": ["lazy"]})
    assert "truthful = 0.5" in outside_theorem(rows(0.5, "sa-ols"), "sa-ols")
    assert "truthful = 0.5" in outside_theorem(rows(0.5, "etc"), "etc")
    assert outside_theorem(rows(0.0, "sa-ols"), "sa-ols") == ""
    assert outside_theorem(rows(0.5, "naive-greedy"), "naive-greedy") == ""
