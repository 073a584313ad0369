"""Getting data out and keeping the log bounded: ``sat serve export`` by time range
to CSV and Parquet (nothing changed, private files, bad flags in one line), and retention that
drops old log entries while ``sat serve check`` stays exact for what is kept."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import retention, store

from .conftest import free_port
from .test_durability import BUSY, Load, _rows


def _fill(server, tag: str, n: int) -> list[dict]:
    with server.client() as c:
        done = c.post("/decisions", json={"applicants": [
            {"id": f"{tag}-{k}", "x": [0.01 * k, 0.2, 0.3]} for k in range(n)]}).json()
        answered = [{"id": d["id"], "outcome": 0.5} for d in done["decisions"]
                    if d["accepted"]]
        if answered:
            c.post("/outcomes", json={"outcomes": answered}).raise_for_status()
    return done["decisions"]


@pytest.mark.parametrize("format_", ["csv", "parquet"])
def test_export_writes_each_table_in_a_time_range(serve, tmp_path, capsys, format_):
    server = serve("--publish", "manual")
    _fill(server, "early", 5)
    time.sleep(0.2)
    middle = time.time()
    time.sleep(0.2)
    late = _fill(server, "late", 3)
    with server.client() as c:
        c.post("/publish").raise_for_status()
    server.stop()
    before = os.stat(server.database.removeprefix("sqlite:///")).st_mtime_ns
    out = tmp_path / "export"
    assert main(["serve", "export", "--database", server.database, "--out", str(out),
                 "--format", format_]) == 0
    read = pd.read_csv if format_ == "csv" else pd.read_parquet
    everything = {t: read(out / f"{t}.{format_}") for t in ("decisions", "outcomes", "rules")}
    assert len(everything["decisions"]) == 8 and len(everything["outcomes"]) == 8
    assert list(everything["rules"]["version"]) == [1, 2]
    assert set(everything["decisions"]["key_id"]) == {server.key.split("_")[1]}
    assert list(everything["decisions"].columns[-3:]) == ["x1", "x2", "x3"]
    assert all((out / f"{t}.{format_}").stat().st_mode & 0o777 == 0o600 for t in everything)
    later = tmp_path / "later"
    assert main(["serve", "export", "--database", server.database, "--out", str(later),
                 "--format", format_, "--since", str(middle)]) == 0
    decisions = read(later / f"decisions.{format_}")
    assert list(decisions["id"]) == [d["id"] for d in late]
    assert list(read(later / f"rules.{format_}")["version"]) == [2]
    assert os.stat(server.database.removeprefix("sqlite:///")).st_mtime_ns == before
    capsys.readouterr()


@pytest.mark.parametrize(("flags", "message"), [
    (["--since", "yesterday"], "--since must be an ISO 8601 time"),
    (["--since", "2026-01-02", "--until", "2026-01-01"], "--until '2026-01-01' must come after"),
    (["--until", "nan"], "--until must be a finite number of unix seconds"),
    (["--format", "xlsx"], "invalid choice: 'xlsx'"),
])
def test_export_refuses_bad_flags_in_one_line_and_writes_nothing(serve, tmp_path, capsys,
                                                                 flags, message):
    server = serve("--publish", "manual")
    server.stop()
    status = main(["serve", "export", "--database", server.database,
                   "--out", str(tmp_path / "out"), *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and message in err[-1], err
    assert not (tmp_path / "out").exists()


def test_export_of_a_missing_database_creates_nothing(tmp_path, capsys):
    status = main(["serve", "export", "--database", f"sqlite:///{tmp_path}/none.db",
                   "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "does not exist" in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_retention_drops_old_entries_and_check_stays_exact(serve):
    # 0.00003 days = 2.6 s: entries go once a saved state older than that holds them.
    server = serve("--publish", "outcomes:10", "--snapshot-every", "20",
                   "--retain-days", "0.00003")
    with server.client() as c:  # the first rule accepts everyone (SA-OLS's warm-up)
        pending = c.post("/decisions", json={"id": "awaiting", "x": [0.1, 0.2, 0.3]}).json()
    assert pending["accepted"]
    sent = []
    deadline = time.monotonic() + 60
    k = 0
    # Decisions and outcomes keep coming until the learner has saved, pinned and pruned some
    # (watched in the database, not waited for by the clock).
    while not {d["id"] for d in sent} - set(_rows(server.database)[0]):
        assert time.monotonic() < deadline, "nothing pruned within 60 s"
        sent += _fill(server, f"r{k}", 10)
        k += 1
        time.sleep(0.1)
    _fill(server, "last", 30)
    time.sleep(1)
    server.stop()
    engine = store.connect(server.database)
    with engine.connect() as conn:
        kept = set(conn.execute(sa.select(store.decisions.c.id)).scalars())
        base = retention.base(conn)
    engine.dispose()
    assert base is not None and base > 0
    sent_ids = {d["id"] for d in sent}
    gone = sent_ids - kept
    # Entries went: fewer of the sent decisions are kept than were sent. (Compared with all
    # that is kept, the 30 "last" ones and "awaiting" included, the count raced the pruner.)
    assert gone and len(kept & sent_ids) < len(sent_ids)
    assert "awaiting" in kept  # a decision awaiting its outcome stays, however old
    assert main(["serve", "check", "--database", server.database]) == 0
    # A restart replays from the base and carries on.
    server.start()
    with server.client() as c:
        assert c.post("/outcomes", json={"id": "awaiting", "outcome": 1.0}).status_code == 200
        assert c.post("/publish").status_code == 200
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0


def test_kill_9_while_pruning_loses_nothing_that_must_stay(serve):
    # 0.00002 days = 1.7 s: under load the learner saves, pins, moves the base and prunes in
    # chunks all the time, so the kill lands among those writes.
    server = serve(*BUSY, "--retain-days", "0.00002")
    load = Load(server, "p").start()
    deadline = time.monotonic() + 60
    while True:  # kill only once pruning has begun (an acknowledged decision went)
        with load.guard:
            acknowledged = set(load.decided)
        if acknowledged - set(_rows(server.database)[0]):
            break
        assert time.monotonic() < deadline, "nothing pruned within 60 s"
        time.sleep(0.2)
    time.sleep(0.3)
    server.kill()
    load.join()
    decisions, outcomes = _rows(server.database)
    gone = set(load.decided) - set(decisions)
    assert gone, "nothing was pruned before the kill: the test checked nothing"
    for id_, ack in load.decided.items():
        if id_ in decisions:
            assert decisions[id_] == ack, id_
            if id_ in load.reported:
                assert outcomes[id_] == load.reported[id_], id_
        else:  # pruned: only a rejection or a decision whose outcome was acknowledged
            assert not ack[1] or id_ in load.reported, id_
    # The log kept replays exactly after the kill, and after a restart that learns on.
    assert main(["serve", "check", "--database", server.database]) == 0
    server.start()
    with server.client() as c:
        assert c.post("/publish").status_code == 200
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0


def test_kill_9_during_export_leaves_no_partial_file_under_a_final_name(serve, tmp_path):
    server = serve("--publish", "manual")
    for k in range(10):
        _fill(server, f"b{k}", 500)
    server.stop()
    database = server.database.removeprefix("sqlite:///")
    before = os.stat(database).st_mtime_ns

    def export(out):
        return subprocess.Popen([sys.executable, "-m", "strategic_apple_tasting", "serve",
                                 "export", "--database", server.database, "--out", str(out),
                                 "--format", "csv"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    start = time.monotonic()
    assert export(tmp_path / "whole").wait(120) == 0
    took = time.monotonic() - start
    whole = {p.name: pd.read_csv(p) for p in (tmp_path / "whole").glob("*.csv")}
    assert set(whole) == {"decisions.csv", "outcomes.csv", "rules.csv", "history.csv"}
    assert len(whole["decisions.csv"]) == 5000
    # Kills spread over a whole export's time (fixed moments: every run the same).
    for k, share in enumerate((0.3, 0.5, 0.65, 0.8, 0.9, 0.97)):
        out = tmp_path / f"killed-{k}"
        process = export(out)
        time.sleep(share * took)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        for path in out.glob("*.csv") if out.exists() else []:
            assert pd.read_csv(path).equals(whole[path.name]), (share, path.name)
    assert os.stat(database).st_mtime_ns == before  # the database untouched throughout


#: Declared features with a scaling (what the export names its columns by).
DECLARED = """[[features]]
name = "income"
unit = "k$"
mean = 50.0
scale = 10.0
[[features]]
name = "ratio"
mean = 0.3
scale = 0.1
[[features]]
name = "age"
mean = 40.0
scale = 5.0
"""
#: Ids and group labels a spreadsheet would read as formulas.
FORMULAS = ['=HYPERLINK("mailto:a@example.com","x")', "-1", "+1", "@me"]


def test_an_export_round_trips_through_a_start_log(serve, tmp_path, capsys, monkeypatch):
    from datetime import UTC, datetime

    import numpy as np

    from strategic_apple_tasting.service import warmstart
    from strategic_apple_tasting.service.config import ServiceConfig

    (tmp_path / "service.toml").write_text(DECLARED)
    server = serve("--publish", "manual", "--config", str(tmp_path / "service.toml"))
    xs = np.random.default_rng(7).uniform(-1, 1, (50, 3)) * [10, 0.1, 5] + [50, 0.3, 40]
    ids = [*FORMULAS, *[f"d{k}" for k in range(len(xs) - len(FORMULAS))]]
    sent = []  # (x, accepted, outcome) in log order, as a lender knows them
    with server.client() as c:
        for part in (slice(0, 30), slice(30, 50)):  # a rule learned between the two
            done = c.post("/decisions", json={"applicants": [
                {"id": i, "x": x.tolist(), "group": "=SUM(A1)" if k % 2 else "plain"}
                for k, (i, x) in enumerate(zip(ids[part], xs[part], strict=True))]}).json()
            outcomes = {d["id"]: round(float(x[0] - 50) / 10 + 0.1 * k, 6)
                        for k, (d, x) in enumerate(zip(done["decisions"], xs[part],
                                                       strict=True)) if d["accepted"]}
            if part.start == 0:  # a loan still running: no outcome yet
                running = list(outcomes)[-1]
                del outcomes[running]
            if outcomes:
                c.post("/outcomes", json={"outcomes": [{"id": i, "outcome": v} for i, v in
                                                       outcomes.items()]}).raise_for_status()
            c.post("/publish").raise_for_status()
            sent += [(x, d["accepted"], outcomes.get(d["id"]))
                     for d, x in zip(done["decisions"], xs[part], strict=True)
                     if d["id"] != running]
    server.stop()
    assert not all(accepted for _, accepted, _ in sent)  # rejections too
    out = tmp_path / "export"
    assert main(["serve", "export", "--database", server.database, "--out", str(out)]) == 0
    decisions = pd.read_csv(out / "decisions.csv", dtype=str, keep_default_na=False)
    rules = pd.read_csv(out / "rules.csv")
    names = ["income", "ratio", "age"]
    assert list(decisions.columns[-3:]) == names
    assert list(rules.columns[-3:]) == [f"beta_{n}" for n in names]
    # Every column of the rules table is a column of the export (beta: one a feature).
    assert set(store.rules.c.keys()) - {"beta", "published_at"} <= set(rules.columns)
    for time_ in [*decisions["time"], *rules["time"]]:
        assert "T" in time_ and datetime.fromisoformat(time_).tzinfo == UTC, time_
    assert list(decisions["id"][:4]) == [f"'{i}" for i in FORMULAS]
    assert set(decisions["group"]) == {"plain", "'=SUM(A1)"}
    # The history a lender would write by hand, and the export's, start the same learner.
    by_hand = tmp_path / "by-hand.csv"
    by_hand.write_text("income,ratio,age,accepted,outcome\n" + "".join(
        f"{','.join(map(repr, map(float, x)))},{str(a).lower()},{'' if y is None else repr(y)}\n"
        for x, a, y in sent))
    config = ServiceConfig(learner="sa-ols", params={"delta": 0.3, "r0": 0,
                                                     "feedback": "apple"},
                           dimension=3, features=ServiceConfig.read_file(
                               tmp_path / "service.toml")["features"])
    expected = warmstart.prepare(
        dataclasses.replace(config, start_log=str(by_hand))).learner.publish()
    # `sat serve --start-log` of the export: its first rule, numbered after the log's two.
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    again = f"sqlite:///{tmp_path}/again.db"
    capsys.readouterr()
    assert main(["serve", "--learner", "sa-ols", "--param", "delta=0.3", "--param", "r0=0",
                 "--config", str(tmp_path / "service.toml"), "--publish", "manual",
                 "--start-log", str(out / "history.csv"), "--database", again,
                 "--port", str(free_port())]) == 0
    assert (f"sat serve: started from log '{out / 'history.csv'}': its {len(sent)} rows "
            "were replayed as decisions under the learner's rules 1 (accept all) and 2 "
            "(reject all), so the first rule it publishes is version 3"
            ) in capsys.readouterr().err.splitlines()
    engine = store.connect(again)
    with engine.connect() as conn:
        first = conn.execute(sa.select(store.rules).order_by(store.rules.c.version)).first()
    engine.dispose()
    assert first.version == 3
    assert (json.loads(first.beta), first.threshold) == (expected.rule.beta.tolist(),
                                                         expected.rule.threshold)
    # The same from Parquet, whose times are UTC timestamps.
    parquet = tmp_path / "parquet"
    assert main(["serve", "export", "--database", server.database, "--out", str(parquet),
                 "--format", "parquet"]) == 0
    assert str(pd.read_parquet(parquet / "rules.parquet")["time"].dt.tz) == "UTC"
    again = warmstart.prepare(dataclasses.replace(
        config, start_log=str(parquet / "history.parquet"))).learner.publish()
    assert (again.rule.beta.tolist(), again.rule.threshold) == (
        expected.rule.beta.tolist(), expected.rule.threshold)
    # An export over an earlier one is refused (one line, nothing written) unless forced.
    before = (out / "decisions.csv").stat().st_mtime_ns
    capsys.readouterr()
    assert main(["serve", "export", "--database", server.database, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"sat: error: --out {str(out)!r} holds decisions.csv already (an earlier export's?): "
        "give --force to overwrite it, or another folder"]
    assert (out / "decisions.csv").stat().st_mtime_ns == before
    assert main(["serve", "export", "--database", server.database, "--out", str(out),
                 "--force"]) == 0
