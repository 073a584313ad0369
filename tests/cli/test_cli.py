"""The ``sat`` command line as a user runs it."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.engine import RESULT_COLUMNS
from strategic_apple_tasting.reports.load import load_results


def test_run_writes_parquet_and_prints_summary(tmp_path, capsys):
    code = main(["run", "--learner", "sa-ols", "--learner", "oracle", "--dimension", "3",
                 "--delta", "0.2", "--horizon", "2000", "--seeds", "3", "--feedback", "bandit",
                 "--sigma", "0.2", "--contexts", "uniform-sphere", "--out", str(tmp_path)])
    assert code == 0
    table = pq.read_table(tmp_path / "results.parquet")
    assert tuple(table.column_names[:len(RESULT_COLUMNS)]) == RESULT_COLUMNS
    assert set(table.column("learner").to_pylist()) == {"sa-ols", "oracle"}
    assert set(table.column("seed").to_pylist()) == {0, 1, 2}
    assert set(table.column("feedback").to_pylist()) == {"bandit"}
    assert set(table.column("contexts").to_pylist()) == {"uniform-sphere"}
    out = capsys.readouterr().out
    assert "regret (mean [95% CI])" in out and "exponent [95% CI]" in out and "oracle" in out
    assert (tmp_path / "summary.txt").read_text().startswith("learner")


def test_run_the_contextual_bandit_baselines(tmp_path):
    code = main(["run", "--learner", "linucb", "--learner", "lin-ts", "--learner",
                 "epsilon-greedy", "-d", "3", "-T", "300", "--seeds", "2", "--threads", "1",
                 "--out", str(tmp_path)])
    assert code == 0
    table = pq.read_table(tmp_path / "results.parquet")
    assert set(table.column("learner").to_pylist()) == {"linucb", "lin-ts", "epsilon-greedy"}


def test_demo_writes_results_figure_and_summary(tmp_path):
    code = main(["demo", "--horizon", "3000", "--seeds", "2", "--out", str(tmp_path)])
    assert code == 0
    for name in ("results.parquet", "regret.png", "summary.txt"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, message", [
    (["run", "--learner", "nope", "-d", "2", "-T", "5", "-o", "x"],
     "argument --learner/-l: learner must be one of sa-ols"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5"], "the following arguments are "
     "required: --out/-o"),
    (["run", "--learner", "sa-ols", "-d", "0", "-T", "5", "-o", "x"],
     "--dimension must be an integer from 1 to 100,000, got '0'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--delta", "nan"],
     "delta must be a finite number >= 0, got nan"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--delta", "abc"],
     "--delta must be a number, got 'abc'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--truthful", "2"],
     "truthful must be a probability in [0, 1], got 2.0"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--feedback", "bandit",
      "--r0", "1"], "r0 must be 0 under bandit feedback"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--radius", "-1"],
     "radius must be a finite number > 0, got -1.0"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--first-seed", "-3"],
     "--first-seed must be an integer from 0 to 2^63 - 1, got '-3'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--agents", "heterogeneous",
      "--budget-low", "0.5"], "budget-low must be a number in [0, delta=0.1], got 0.5"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--agents", "trembling",
      "--tremble", "-1"], "tremble must be a finite number >= 0, got -1.0"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--contexts", "empirical"],
     "argument --contexts: invalid choice: 'empirical'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--agents", "ellipsoid"],
     "cost must be given with agents = ellipsoid: the diagonal of A (2 numbers)"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--agents", "ellipsoid",
      "--cost", "1,x"], "--cost must be numbers separated by ',' (and rows by ';'), got '1,x'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--agents", "ellipsoid",
      "--cost", "1,2;3,4"], "cost must be the diagonal of A (2 numbers) or its 2 rows of 2 "
     "numbers, symmetric positive definite, got [[1.0, 2.0], [3.0, 4.0]]"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--cost", "1,2"],
     "cost applies only to agents = ellipsoid"),
    (["run", "--learner", "sa-ols", "-d", "1", "-T", "5", "-o", "x", "--contexts",
      "greedy-trap"], "greedy-trap at dimension 1 needs apple feedback and r0 > 0"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--delay", "-1"],
     "--delay must be an integer from 0 to 1,000,000,000, got '-1'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--period", "0"],
     "--period must be an integer from 1 to 1,000,000,000, got '0'"),
    (["run", "--learner", "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--delay-law", "poisson"],
     "argument --delay-law: invalid choice: 'poisson'"),
    (["lending", "--label", "bad", "-T", "5"], "--label applies only with --csv"),
    (["lending", "--csv", "loans.csv", "--label", "bad", "-T", "5"],
     "--csv needs --default-value"),
    (["lending", "--csv", "x/loans.csv", "--label", "bad", "--default-value", "1",
      "--features", "a", "-T", "5"], "loans.csv"),
    (["lending", "--delta", "-1", "-T", "5"], "--delta must be a finite number >= 0, got -1.0"),
    (["lending", "--horizon", "0"], "--horizon must be"),
    (["lending", "-T", "5", "--out", "x/table.txt"], "--out must end in .parquet or .csv"),
    (["lending", "-T", "5", "--report", "/etc/hostname"], "--report '/etc/hostname' is a file"),
    (["lending", "--protocol", "once", "-T", "1001"],
     "horizon must be at most the 1,000 rows under protocol 'once'"),
    (["lending", "--protocol", "replay", "--holdout-share", "0.5", "-T", "5"],
     "--holdout-share applies only with --protocol holdout"),
    (["lending", "--holdout-share", "1.5", "-T", "5"], "holdout_share must be a number in (0, 1)"),
    (["lending", "--data", "fico", "--protocol", "once", "-T", "5"],
     "protocol 'once' needs rows that are applicants"),
    (["lending", "--new-share", "0.5", "-T", "5"], "--new-share applies only with --backtest"),
    (["lending", "--backtest", "--new-share", "0", "--seeds", "1"],
     "new_share must be a number in (0, 1), got 0.0"),
    (["lending", "--backtest", "--data", "fico"], "--backtest needs applicants that are rows"),
    (["lending", "--backtest", "--estimate-delta"],
     "--estimate-delta does not apply with --backtest"),
    (["lending", "--backtest", "--history", "rejected"],
     "--history must be accepted or reweighted or both separated by ',', got 'rejected'"),
    (["lending", "--backtest", "--history", "accepted,accepted"],
     "--history must be accepted or reweighted"),
    (["lending", "--history", "reweighted", "-T", "5"],
     "--history applies only with --backtest"),
])
def test_bad_flags_give_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sat: error: ")
    assert message in err
    assert not (tmp_path / "x").exists()  # nothing written


def test_run_with_delays_and_periods_records_them(tmp_path):
    code = main(["run", "--learner", "sa-ols", "--learner", "linucb", "-d", "2", "-T", "400",
                 "--seeds", "2", "--delay", "7", "--delay-law", "uniform", "--period", "3",
                 "--out", str(tmp_path)])
    assert code == 0
    table = pq.read_table(tmp_path / "results.parquet")
    assert set(table.column("delay").to_pylist()) == {7}
    assert set(table.column("delay_law").to_pylist()) == {"uniform"}
    assert set(table.column("period").to_pylist()) == {3}


def test_lending_on_a_csv_of_ones_own(tmp_path, capsys):
    rng = np.random.default_rng(0)
    income, cash = rng.normal(size=200), rng.normal(size=200)
    bad = (income + 0.3 * rng.normal(size=200) < -0.5).astype(int)
    lines = ["bad,income,cash"] + [f"{b},{i:.4f},{c:.4f}" for b, i, c in zip(bad, income, cash,
                                                                               strict=True)]
    (tmp_path / "loans.csv").write_text("\n".join(lines) + "\n")
    code = main(["lending", "--csv", str(tmp_path / "loans.csv"), "--label", "bad",
                 "--default-value", "1", "--features", "income,cash", "--gameable", "cash",
                 "-l", "sa-ols", "-l", "oracle", "-l", "accept-all", "--delta", "0.5",
                 "-T", "300", "--seeds", "2", "--delay", "5", "--threads", "1",
                 "--out", str(tmp_path / "t.csv"), "--report", str(tmp_path / "report")])
    assert code == 0
    out = capsys.readouterr().out
    # What runs, how far, then the table: the oracle (the least-squares rule shifted) has no
    # regret against that rule answered by the agents.
    assert ("running 3 learners × 2 seeds × 300 applicants at δ = 0.5 (6 runs) on 1 "
            "thread(s), protocol holdout") in out
    assert "[6/6 runs] δ = 0.5:" in out
    assert "protocol holdout: per seed a share of rows" in out
    # The oracle is the least-squares rule fitted on the seed's learning rows, shifted: no
    # regret against that rule answered by the agents, and its held-out profit is the
    # cross-fitted least-squares rule's.
    oracle = next(line for line in out.splitlines() if line.startswith("| 0.5 | oracle | 2 |"))
    assert oracle.split(" | ")[7] == "0 (on every seed)"
    crossed = next(line for line in out.splitlines()
                   if line.startswith("| 0.5 | least-squares rule (cross-fitted) | 2 |"))
    assert oracle.split(" | ")[3] == crossed.split(" | ")[3] != "-"
    assert "| 0.5 | best linear rule (search) | 2 |" in out
    table = pd.read_csv(tmp_path / "t.csv")
    assert {"profit", "ls_regret", "stackelberg_regret", "best_rule_profit",
            "holdout_profit", "holdout_best_rule_profit"} <= set(table)
    assert set(table["delay"]) == {5} and set(table["gameable"]) == {"cash"}
    assert set(table["protocol"]) == {"holdout"} and set(table["holdout_share"]) == {0.3}
    page = (tmp_path / "report" / "index.html").read_text()
    assert page.count("<tr>") == 1 + 6 and "data:image/png;base64," in page
    assert "protocol holdout" in page and "held-out profit per 1,000" in page
    assert "least-squares rule" in page and "upper bound" in page
    assert (tmp_path / "report" / "profit-delta-0_5.png").read_bytes()[:4] == b"\x89PNG"


def test_lending_help_names_its_benchmarks_without_doubled_percent_signs(capsys):
    """``sat lending --help`` printed "95%% CI": argparse does not %-format a description."""
    with pytest.raises(SystemExit):
        main(["lending", "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "%%" not in out and "95% intervals" in out
    assert "best linear rule" in out and "least-squares rule" in out and "fico" in out


def test_lending_and_run_on_the_fico_tables(tmp_path, capsys):
    code = main(["lending", "--data", "fico", "-l", "sa-ols", "-l", "accept-all", "--delta",
                 "0.5", "-T", "400", "--seeds", "2", "--threads", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert "Federal Reserve" in out and "gameable: score" in out
    assert "| 0.5 | accept-all | 2 |" in out
    # the table by group (accept-all accepts everyone in every group)
    assert "by group (white, black, hispanic, asian" in out
    for group in ("white", "black", "hispanic", "asian"):
        assert re.search(rf"\| 0.5 \| accept-all \| {group} \| 0.5 \| 2 \| \d+ \| 100.0% \|",
                         out)
    code = main(["run", "--data", "fico", "-l", "sa-ols", "-T", "300", "--seeds", "2",
                 "--delta", "0.5", "--out", str(tmp_path / "run")])
    assert code == 0
    out = capsys.readouterr().out
    assert "d = 2" in out and "data fico" in out and "profit per 1,000" in out
    table = pq.read_table(tmp_path / "run" / "results.parquet").to_pandas()
    assert set(table["data"]) == {"fico"} and set(table["rewards"]) == {"recorded"}
    assert table["profit"].notna().all()


def test_lending_with_a_budget_per_group(capsys):
    """Each group games with its own budget (black and hispanic 0, so none of them
    moves), learners are told the largest, and the table by group shows each budget."""
    code = main(["lending", "--data", "fico", "-l", "sa-ols", "--delta-by-group",
                 "white=0.5,black=0,hispanic=0,asian=0.5", "-T", "600", "--seeds", "1",
                 "--threads", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert "δ by group: white 0.5, black 0, hispanic 0, asian 0.5" in out
    for group, budget in (("white", "0.5"), ("black", "0"), ("hispanic", "0"),
                          ("asian", "0.5")):
        row = re.search(rf"\| 0.5 \| sa-ols \| {group} \| {budget} \| 1 \| [^\n]*", out)
        assert row, group
        moved = row.group(0).split("|")[9].strip()
        assert (moved == "0.0%") == (budget == "0"), row.group(0)


def test_lending_estimates_the_budget_and_recommends_a_learner(capsys):
    """The estimate with its interval, the strategy-aware learners estimating δ, a
    recommendation measured on the data, and the table by group."""
    code = main(["lending", "--data", "fico", "-l", "sa-ols", "-l", "accept-all", "--delta",
                 "0.5", "-T", "3000", "--seeds", "2", "--threads", "1", "--estimate-delta"])
    assert code == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "estimated δ = " in ln)
    low, high = (float(v) for v in re.search(r"interval \[([\d.]+), ([\d.]+)\]",
                                             line).groups())
    assert low <= high and 0.25 <= high  # the applicants game with δ = 0.5
    assert "| 0.5 | sa-ols (δ estimated) | 2 |" in out
    assert re.search(r"recommended at δ = 0.5: (sa-ols \(δ estimated\)|accept-all): the "
                     r"highest mean held-out profit per 1,000 new applicants on this data", out)
    assert "by group (white, black, hispanic, asian" in out


def test_the_lenders_backtest_against_its_incumbent(tmp_path, capsys):
    code = main(["lending", "--backtest", "-l", "naive-logistic", "-l", "reject-all",
                 "--delta", "0.5", "--seeds", "2", "--threads", "1", "--refit-every", "10",
                 "--history", "accepted,reweighted",
                 "--out", str(tmp_path / "bt.csv"), "--report", str(tmp_path / "bt")])
    assert code == 0
    out = capsys.readouterr().out
    assert ("backtest: 2 learners (each from the accepted and the reweighted history) and 3 "
            "incumbent baselines × 2 seeds × about 300 new") in out
    # Each learner from both histories, paired: reject-all learns nothing from either.
    assert "| vs accepted-only history |" in out
    assert re.search(r"\| 0.5 \| reject-all, reweighted history \| 2 \| .* \| 0 \(on every "
                     r"seed\) \| 0 \|", out)
    assert ("protocol backtest (a random split per seed, new applicants met in a random "
            "order): each learner starts from the incumbent's history") in out
    for arm in ("naive-logistic", "reject-all", "incumbent", "incumbent, refitted"):
        assert f"| 0.5 | {arm} | 2 |" in out
    assert "| 0.5 | incumbent, cutoff raised | 2 |" in out and "(the reference)" in out
    assert re.search(r"at δ = 0.5: deploying naive-logistic instead of the incumbent, cutoff "
                     r"raised (gains|loses|is not distinguishable from it, gaining) [-+][\d.]+ "
                     r"per 1,000 new applicants \(95% interval", out)
    frame = pd.read_csv(tmp_path / "bt.csv")
    assert len(frame) == 2 * 7 and set(frame["new"]) == {300}
    assert set(frame["warm_start"].dropna()) == {"accepted", "reweighted"}
    page = (tmp_path / "bt" / "index.html").read_text()
    assert page.count("<tr>") == 1 + 7 and "vs refitted incumbent (paired)" in page
    assert "deploying naive-logistic instead of the incumbent, cutoff raised" in page


def test_a_sweep_spec_names_a_data_set(tmp_path, capsys):
    spec = tmp_path / "fico.toml"
    spec.write_text('horizon = 300\nseeds = 2\n[game]\ndata = "fico"\ndelta = [0.25, 1.0]\n'
                    'rewards = ["recorded", "linear"]\n[[learners]]\nname = "sa-ols"\n')
    assert main(["sweep", str(spec), "-o", str(tmp_path / "sw"), "--workers", "1"]) == 0
    table = load_results(tmp_path / "sw").to_pandas()
    assert set(zip(table["delta"], table["rewards"], strict=True)) == {
        (0.25, "recorded"), (0.25, "linear"), (1.0, "recorded"), (1.0, "linear")}
    assert table["profit"].notna().all() and set(table["dimension"]) == {2}
    capsys.readouterr()
    assert main(["report", str(tmp_path / "sw")]) == 0
    page = (tmp_path / "sw" / "report" / "index.html").read_text()
    assert "Profit and regret against fixed rules" in page


def test_console_script_exit_status():
    proc = subprocess.run([sys.executable, "-m", "strategic_apple_tasting", "run", "--learner",
                           "sa-ols", "-d", "2", "-T", "5", "-o", "x", "--sigma", "-1"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == "sat: error: sigma must be a finite number >= 0, got -1.0\n"


def test_run_every_learner_with_other_agent_and_context_models(tmp_path):
    # Every learner on the default models, then the other models with SA-OLS: each learner ×
    # context × agent model compiles the loop anew (~20 s), and these are compiled elsewhere.
    from strategic_apple_tasting.learners import LEARNERS

    argv = ["run", "-d", "2", "-T", "500", "--seeds", "1", "--out", str(tmp_path / "all")]
    for name in LEARNERS:
        argv += ["--learner", name]
    assert main(argv) == 0
    table = pq.read_table(tmp_path / "all" / "results.parquet")
    assert set(table.column("learner").to_pylist()) == set(LEARNERS)
    base = ["run", "-d", "2", "-T", "500", "--seeds", "1", "--learner", "sa-ols"]
    assert main([*base, "--contexts", "greedy-trap", "--out", str(tmp_path / "trap")]) == 0
    table = pq.read_table(tmp_path / "trap" / "results.parquet")
    assert set(table.column("contexts").to_pylist()) == {"greedy-trap"}
    assert main([*base, "--agents", "trembling", "--tremble", "0.02",
                 "--out", str(tmp_path)]) == 0
    table = pq.read_table(tmp_path / "results.parquet")
    assert set(table.column("agents").to_pylist()) == {"trembling"}
    assert set(table.column("tremble").to_pylist()) == {0.02}
    assert main([*base, "--agents", "ellipsoid", "--cost", "1,0.25",
                 "--out", str(tmp_path / "ellipse")]) == 0
    table = pq.read_table(tmp_path / "ellipse" / "results.parquet")
    assert set(table.column("cost").to_pylist()) == {"diag(1, 0.25)"}


def test_version():
    proc = subprocess.run([sys.executable, "-m", "strategic_apple_tasting", "--version"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("sat 0.")


def test_run_refuses_to_overwrite_an_earlier_run_unless_forced(tmp_path, capsys):
    argv = ["run", "-l", "oracle", "-d", "2", "-T", "200", "--seeds", "2", "-o", str(tmp_path)]
    assert main(argv) == 0
    first = (tmp_path / "results.parquet").read_bytes()
    assert main([*argv[:-2], "--first-seed", "5", "-o", str(tmp_path)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert (tmp_path / "results.parquet").read_bytes() == first  # untouched
    assert main([*argv[:-2], "--first-seed", "5", "--force", "-o", str(tmp_path)]) == 0
    assert set(pq.read_table(tmp_path / "results.parquet").column("seed").to_pylist()) == {5, 6}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files


def test_run_prints_progress_with_an_estimate_only_after_a_run_finished(tmp_path, capsys):
    assert main(["run", "-l", "oracle", "-d", "2", "-T", "200", "--seeds", "3", "--threads", "1",
                 "-o", str(tmp_path)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[")]
    assert [ln.split("]")[0] for ln in lines] == ["[1/3 runs", "[2/3 runs", "[3/3 runs"]
    assert "left" in lines[0] and "left" not in lines[-1]


def test_a_closed_pipe_loses_nothing(tmp_path):
    """`sat run ... | true`: the reader is gone before sat's first line (Python takes about a
    second to start, `true` a millisecond), so every write meets a closed pipe; the run still
    writes its results and summary, exits 0 and prints no traceback."""
    cmd = (f"{sys.executable} -m strategic_apple_tasting run -l oracle -d 2 -T 300 --seeds 2 "
           f"-o {tmp_path / 'out'} | true")
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True,
                          text=True)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr  # pipefail: sat itself exited 0
    assert pq.read_table(tmp_path / "out" / "results.parquet").num_rows > 0
    assert (tmp_path / "out" / "summary.txt").read_text().startswith("learner")


def test_a_sweep_shows_no_time_left_before_it_means_something():
    """The first cells' time is mostly compiling: an estimate from them was hours too long."""
    from strategic_apple_tasting.cli.common import progress_line
    from strategic_apple_tasting.experiments.sweep import Progress

    def at(done: int, rounds_done: int) -> str:
        return progress_line(Progress(done=done, total=20, skipped=0, rounds_done=rounds_done,
                                      rounds_total=1000, elapsed=10.0))
    assert at(1, 50).endswith("estimating the time left")   # one cell
    assert at(2, 50).endswith("estimating the time left")   # 5% of the rounds
    assert at(2, 100).endswith("about 90 s left")           # 10%: 100 rounds in 10 s
    assert "left" not in progress_line(Progress(done=20, total=20, skipped=0, rounds_done=1000,
                                                rounds_total=1000, elapsed=10.0))


def test_reproduce_runs_the_parts_asked_for_with_an_overall_progress_line(tmp_path, capsys,
                                                                          monkeypatch):
    """``--parts`` runs those bundled sweeps and the claims that read only them; each part
    starts with "== part k of n" and the time so far. (The lock-in part, shrunk: its check is
    the same.) ``--list`` names every part and what reads it."""
    from strategic_apple_tasting.experiments.claims import PARTS

    small = {**PARTS["quick"]["lock-in"], "seeds": 40, "seeds_per_cell": 20, "horizon": 200}
    monkeypatch.setitem(PARTS["quick"], "lock-in", small)
    out = tmp_path / "repro"
    assert main(["reproduce", "--quick", "--parts", "lock-in", "--out", str(out),
                 "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "== part 1 of 1: lock-in (4 cells); 0 s elapsed, estimating the time left" in printed
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["lock-in"]
    table = (out / "claims.md").read_text()
    assert table.count("\n| ") == 2 and "can lock into learning nothing" in table
    assert main(["reproduce", "--quick", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == ("stochastic: stochastic.stochastic, constants.constants, "
                         "c1bound.c1_bounds, lemmas.lemmas, cleanpoints.clean")
    assert len(listed) == len(PARTS["quick"]) + 2  # the parts that are not sweeps last
    assert listed[-2:] == ["backtest: backtest.rows", "adaptive-d1: adaptive.rows"]
    assert "warm-ups: delays.delays, delays.periods" in listed


def test_a_lenders_csv_with_categories_groups_and_a_cost_matrix_runs_in_one_command(tmp_path,
                                                                                     capsys):
    """Text columns are categories, a group column gives the table by group, the cost matrix
    sets what a loan earns; the gameable line names the column, not its levels; a bad book is
    refused in the command line's own words."""
    rng = np.random.default_rng(1)
    n = 240
    income = rng.normal(size=n)
    home = rng.choice(["own", "rent", "mortgage"], size=n)
    region = rng.choice(["north", "south"], size=n)
    bad = (income + 0.5 * (home == "rent") + 0.3 * rng.normal(size=n) < -0.3).astype(int)
    lines = ["bad,income,home,region"] + [f"{b},{i:.4f},{h},{r}" for b, i, h, r in
                                           zip(bad, income, home, region, strict=True)]
    (tmp_path / "book.csv").write_text("\n".join(lines) + "\n")
    book = ["lending", "--csv", str(tmp_path / "book.csv"), "--label", "bad",
            "--default-value", "1", "--features", "income,home", "--gameable", "home"]
    code = main([*book, "--group", "region", "--cost-matrix", "1,-5", "-l", "sa-ols",
                 "-l", "accept-all", "--delta", "0.5", "-T", "300", "--seeds", "1",
                 "--threads", "1"])
    assert code == 0
    out = capsys.readouterr().out
    assert f"{n} rows, d = 4, gameable: home\n" in out  # intercept, income, two levels
    assert "by group (north, south; the learners never see it):" in out
    # The cost matrix: +1 a repaid loan, −5 a default. Accept-all's held-out applicants are
    # 30% of each outcome's rows (89 defaults, 151 repaid: 27 and 45 held out), so it earns
    # (45 − 5·27)/72 per applicant: −1,250 per 1,000 (+250 with the default +1/−1).
    assert (bad.sum(), n - bad.sum()) == (89, 151)
    accept_all = next(line for line in out.splitlines() if line.startswith("| 0.5 | accept-all"))
    assert accept_all.split(" | ")[3] == "-1250 (one seed)"
    # The book's time order (a day a row): the backtest meets one window of the newest rows
    # a seed, in that order.
    dated = ["bad,income,home,region,day"] + [f"{line},{k}" for k, line in enumerate(lines[1:])]
    (tmp_path / "dated.csv").write_text("\n".join(dated) + "\n")
    assert main([*book[:2], str(tmp_path / "dated.csv"), *book[3:], "--time", "day",
                 "--backtest", "-l", "naive-logistic", "--delta", "0.5", "--seeds", "2",
                 "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "protocol backtest (the book's time order: the newest rows cut into one window" in out
    assert "| 0.5 | naive-logistic | 2 |" in out
    (tmp_path / "gap.csv").write_text("\n".join([*lines, "0,,own,north"]) + "\n")
    assert main([*book[:2], str(tmp_path / "gap.csv"), *book[3:], "-T", "5"]) == 2
    err = capsys.readouterr().err
    assert "--features: column 'income' has 1 missing or infinite values" in err
    assert "pass --missing drop to drop those rows" in err
