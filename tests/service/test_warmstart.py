"""Starting a service from what a lender knows: a saved learner (the first request
is decided as that learner would), a historical log replayed first (bad rows: one line, exit
status 2, nothing written), a published rule; a restart keeps its start, another is refused.
And an existing database of the first schema upgrades in place."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.persistence import dumps, loads
from strategic_apple_tasting.service import warmstart
from strategic_apple_tasting.service.config import ServiceConfig

from .conftest import free_port

PARAMS = {"delta": 0.3, "r0": 0, "feedback": "apple"}


def _config(**more) -> ServiceConfig:
    return ServiceConfig(learner="sa-ols", params=dict(PARAMS), dimension=3, **more)


def _taught(rounds: int = 60):
    """An SA-OLS learner taught offline through the decision API (nothing left pending)."""
    learner = _config().make_learner()
    rng = np.random.default_rng(11)
    truth = np.array([1.0, -0.5, 0.25])
    for k in range(rounds):
        if k % 20 == 0:
            rule = learner.publish(time=float(k))
        x = rng.uniform(-1, 1, 3)
        accepted = rule.rule.accepts(x)
        learner.record(x, f"offline-{k}", accepted, rule.version, time=float(k))
        if accepted:
            learner.report(f"offline-{k}", float(truth @ x + rng.normal(0, 0.1)))
    assert not learner.pending()
    return learner


def test_a_service_started_from_a_saved_learner_decides_as_that_learner(serve, tmp_path):
    path = tmp_path / "learner.sat"
    path.write_bytes(dumps(_taught()))
    server = serve("--publish", "manual", "--start-learner", str(path))
    # In process: the same saved learner's next rule decides the same applicants.
    here = loads(path.read_bytes(), "test").publish()
    assert not np.array_equal(here.rule.beta, np.zeros(3))  # a learned rule, not a first guess
    xs = np.random.default_rng(3).uniform(-1, 1, (50, 3))
    with server.client() as c:
        first = c.post("/decisions", json={"id": "first", "x": xs[0].tolist()}).json()
        policy = c.get("/policy").json()
        rest = c.post("/decisions", json={"applicants": [
            {"id": f"w-{k}", "x": x.tolist()} for k, x in enumerate(xs[1:])]}).json()
    assert policy["beta"] == here.rule.beta.tolist() and policy["threshold"] == \
        here.rule.threshold
    decided = [first["accepted"]] + [d["accepted"] for d in rest["decisions"]]
    assert decided == [here.rule.accepts(x) for x in xs]
    assert 0 < sum(decided) < len(xs)  # the learned rule tells applicants apart
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0
    # A restart with the same start is the same service; another start is refused.
    server.start()
    server.stop()
    other = tmp_path / "other.sat"
    other.write_bytes(dumps(_taught(40)))
    assert main(["serve", "--start-learner", str(other), "--learner", "sa-ols",
                 *[f"--param={k}={json.dumps(v)}" for k, v in PARAMS.items()],
                 "-d", "3", "--database", server.database, "--port", str(free_port())]) == 2


def _history(tmp_path, rows: list[str]) -> str:
    path = tmp_path / "history.csv"
    path.write_text("x1,x2,x3,accepted,outcome\n" + "\n".join(rows) + "\n")
    return str(path)


def test_a_historical_log_is_learned_before_the_first_request(serve, tmp_path):
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(80):
        x = rng.uniform(-1, 1, 3).round(6)
        accepted = bool(x[0] > -0.3)
        outcome = f"{x[0] - 0.2 + rng.normal(0, 0.1):.6f}" if accepted else ""
        rows.append(f"{x[0]},{x[1]},{x[2]},{str(accepted).lower()},{outcome}")
    history = _history(tmp_path, rows)
    start = warmstart.prepare(_config(start_log=history))
    here = start.learner.publish()
    server = serve("--publish", "manual", "--start-log", history)
    with server.client() as c:
        policy = c.get("/policy").json()
    assert policy["beta"] == here.rule.beta.tolist() and policy["threshold"] == \
        here.rule.threshold
    assert not np.array_equal(here.rule.beta, np.zeros(3))
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0


def test_a_logistic_learner_keeps_a_historical_log_whole_for_its_exact_refit(tmp_path):
    """Replayed from a log, a logistic learner keeps every row for its exact refit, as in the
    backtest (else only its first 5·d points are refit exactly); one started from nothing
    keeps its default (the control), and so does a learner with no such parameter."""
    rng = np.random.default_rng(2)
    rows = []
    for _ in range(150):
        x = rng.uniform(-1, 1, 3).round(6)
        rows.append(f"{x[0]},{x[1]},{x[2]},true,{1.0 if x[0] > -0.5 else -5.0}")
    history = _history(tmp_path, rows)
    config = ServiceConfig(learner="offset-logistic", params=dict(
        PARAMS, repaid=1.0, defaulted=-5.0), dimension=3, start_log=history)
    assert warmstart.prepare(config).learner.batch_points == 150
    assert config.make_learner().batch_points is None
    assert warmstart.prepare(_config(start_log=history)).learner.get_params().get(
        "batch_points") is None


@pytest.mark.parametrize(("row", "message"), [
    ("0.1,0.2,abc,true,1.0", "row 3: column 'x3' must be a finite number, got 'abc'"),
    ("0.1,0.2,0.3,maybe,1.0", "row 3: column 'accepted' must be true or false"),
    ("0.1,0.2,0.3,true,", "row 3: an accepted decision needs its outcome"),
    ("0.1,0.2,0.3,false,1.0", "row 3: a rejection has no outcome under apple tasting"),
    ("0.1,0.2,inf,true,1.0", "row 3: column 'x3' must be a finite number"),
])
def test_a_bad_row_of_a_historical_log_is_one_line_and_nothing_is_written(
        tmp_path, capsys, monkeypatch, row, message):
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("sat serve served"))
    history = _history(tmp_path, ["0.1,0.2,0.3,true,1.0", "0.3,0.2,0.1,false,", row])
    database = tmp_path / "service.db"
    status = main(["serve", "--learner", "sa-ols",
                   *[f"--param={k}={json.dumps(v)}" for k, v in PARAMS.items()], "-d", "3",
                   "--start-log", history, "--database", f"sqlite:///{database}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("sat: error: "), err
    assert message in err[0], err[0]
    assert list(tmp_path.iterdir()) == [tmp_path / "history.csv"]  # no database made


def test_a_service_started_from_a_rule_decides_by_it_then_learns(serve, tmp_path):
    path = tmp_path / "rule.json"
    path.write_text(json.dumps({"beta": [1.0, 0.0, 0.0], "threshold": 0.2}))
    server = serve("--publish", "manual", "--start-rule", str(path))
    with server.client() as c:
        done = c.post("/decisions", json={"applicants": [
            {"id": f"r-{k}", "x": [0.1 * k - 0.5, 0.0, 0.0]} for k in range(11)]}).json()
        assert [d["accepted"] for d in done["decisions"]] == [0.1 * k - 0.5 >= 0.2
                                                              for k in range(11)]
        c.post("/outcomes", json={"outcomes": [{"id": d["id"], "outcome": 1.0}
                                               for d in done["decisions"] if d["accepted"]]}
               ).raise_for_status()
        assert c.post("/publish").json()["version"] == 2
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0


def test_a_database_of_the_first_schema_upgrades_in_place(tmp_path, serve):
    server = serve("--publish", "manual")
    with server.client() as c:
        c.post("/decisions", json={"id": "old-1", "x": [0.1, 0.2, 0.3]}).raise_for_status()
        c.post("/outcomes", json={"id": "old-1", "outcome": 1.0}).raise_for_status()
    server.stop()
    path = server.database.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:  # back to schema 0001: drop what later ones added
        for table in ("start_state", "shadow_rules", "shadow_decisions", "rule_stats",
                      "counters", "group_counts", "access_log", "shadow_events",
                      "skipped_entries"):
            db.execute(f"DROP TABLE {table}")
        for table, column in (("decisions", "key_id"), ("decisions", '"group"'),
                              ("decisions", "capped"), ("outcomes", "key_id"),
                              ("rules", "key_id"), ("rules", "source"), ("rules", "learned"),
                              ("learner_state", "shadow"), ("learner_state", "pinned"),
                              ("log_counter", "warm_accepted"), ("rules", "shift"),
                              ("decisions", "band"), ("decisions", "propensity"),
                              ("decisions", "explored"), ("rules", "explored"),
                              ("rules", "restores"), ("api_keys", "scopes"),
                              ("api_keys", "expires_at"), ("api_keys", "last_used_at"),
                              ("decisions", "decided_by"),
                              ("decisions", "by_version"), ("decisions", "rule_accepted"),
                              ("rules", "promotes"), ("learner_state", "candidates")):
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("UPDATE alembic_version SET version_num = '0001'")
    server.start()
    with server.client() as c:
        assert c.get("/decisions/old-1").json()["outcome"] == 1.0
        assert c.post("/publish").json()["version"] == 2
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0


@pytest.mark.parametrize(("make", "message"), [
    (lambda: ServiceConfig(learner="shifted-ols", params={"delta": 0.3, "r0": 0},
                           dimension=3).make_learner(),
     "is learner ShiftedOLS, but the service runs 'sa-ols'"),
    (lambda: ServiceConfig(learner="sa-ols", params={**PARAMS, "delta": 0.5},
                           dimension=3).make_learner(), "has delta = 0.5"),
    (lambda: ServiceConfig(learner="sa-ols", params=PARAMS, dimension=4).make_learner(),
     "has dimension 4"),
])
def test_a_saved_learner_that_is_not_the_services_is_refused_in_one_line(
        tmp_path, capsys, monkeypatch, make, message):
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("sat serve served"))
    path = tmp_path / "learner.sat"
    path.write_bytes(dumps(make()))
    status = main(["serve", "--learner", "sa-ols",
                   *[f"--param={k}={json.dumps(v)}" for k, v in PARAMS.items()], "-d", "3",
                   "--start-learner", str(path), "--database", f"sqlite:///{tmp_path}/s.db"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_historical_log_naming_a_feature_column_twice_is_one_line(
        tmp_path, capsys, monkeypatch, suffix):
    # pandas reads a CSV's second x2 as "x2.1" without a word: the check reads the header.
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("sat serve served"))
    path = tmp_path / f"history{suffix}"
    if suffix == ".csv":
        path.write_text("x1,x2,x3,x2,accepted,outcome\n0.1,0.2,0.3,0.9,true,1.0\n")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table([pa.array([v]) for v in (0.1, 0.2, 0.3, 0.9, True, 1.0)],
                                names=["x1", "x2", "x3", "x2", "accepted", "outcome"]), path)
    status = main(["serve", "--learner", "sa-ols",
                   *[f"--param={k}={json.dumps(v)}" for k, v in PARAMS.items()], "-d", "3",
                   "--start-log", str(path), "--database", f"sqlite:///{tmp_path}/s.db"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err == [f"sat: error: --start-log {str(path)!r} names column 'x2' "
                                   "twice; give every column its own name"], err
    assert not (tmp_path / "s.db").exists()
