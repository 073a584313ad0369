"""Numbers the service takes and learns: a request beyond the learner's input bound
is a 422 for that request alone, the probe's applicant (x = [0, 0, 1e-300] in the warm-up) no
longer stops the learner, and a log entry the learner cannot learn (one written past the
service) is skipped with a logged refusal, reported by ``sat serve check``.

The server's learner is SA-OLS with an input bound of 10, a learner written elsewhere (by
import path): the service must refuse what this learner would refuse, not a bound of its own.
"""

from __future__ import annotations

import math
import os
import textwrap
import time

import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import store

from .conftest import Server

D = 3
BOUND = 10.0
TIGHT = textwrap.dedent("""
    import dataclasses

    from strategic_apple_tasting.learners import SAOLS


    class TightSAOLS(SAOLS):
        tags = dataclasses.replace(SAOLS.tags(), input_bound=10.0)
""")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numerics")
    (folder / "tight_learner.py").write_text(TIGHT)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        # the server process imports it by path
        mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
            str(folder), os.environ.get("PYTHONPATH")])))
        s = Server(f"sqlite:///{folder}/service.db",
                   ["--learner", "tight_learner:TightSAOLS", "--param", "delta=0.3",
                    "--param", "r0=0", "--param", 'feedback="apple"', "--publish", "manual",
                    "--dimension", str(D)], folder / "server.log").start()
        yield s
        if s.process is not None and s.process.poll() is None:
            s.process.kill()
            s.process.wait()


@pytest.fixture(scope="module")
def client(server):
    with server.client() as c:
        yield c


def refused(response, *words: str) -> str:
    assert response.status_code == 422, response.text
    doc = response.json()
    assert list(doc) == ["error"] and "\n" not in doc["error"], doc
    for word in words:
        assert word in doc["error"], (word, doc["error"])
    return doc["error"]


def counts(client) -> tuple[int, int]:
    doc = client.get("/metrics").json()
    return doc["decisions"], doc["outcomes"]


def test_beyond_the_learners_bound_is_a_422_for_that_request_alone(client):
    before = counts(client)
    refused(client.post("/decisions", json={"id": "big-x", "x": [11.0, 0.0, 0.0]}),
            "x.0: must be at most 10 in magnitude, the learner's input bound (got 11.0)")
    refused(client.post("/decisions", json={"applicants": [
        {"id": "big-b0", "x": [0.1, 0.2, 0.3]}, {"id": "big-b1", "x": [0.1, 0.2, -12.5]}]}),
        "applicants.1.x.2: must be at most 10", "(got -12.5)")
    assert counts(client) == before  # the batch's good applicant was not written either
    r = client.post("/decisions", json={"id": "at-bound", "x": [10.0, -10.0, 10.0]})
    assert r.status_code == 200 and r.json()["accepted"], r.text
    refused(client.post("/outcomes", json={"id": "at-bound", "outcome": -11.0}),
            "outcome: must be at most 10 in magnitude, the learner's input bound (got -11.0)")
    refused(client.post("/outcomes", json={"outcomes": [
        {"id": "at-bound", "outcome": 1.0}, {"id": "nobody", "outcome": 1e300}]}),
        "outcomes.1.outcome: must be at most 10", "(got 1e+300)")
    assert client.post("/outcomes", json={"id": "at-bound", "outcome": 10.0}).status_code == 200
    assert counts(client) == (before[0] + 1, before[1] + 1)
    assert client.get("/health").json()["status"] == "ok"


def test_the_probes_applicant_is_learned_and_the_learner_keeps_publishing(client):
    """x = [0, 0, 1e-300] decided and reported under the warm-up rule put a NaN into SA-OLS's
    fit; the next publication stopped the learner ("SAOLS._publish() must give a finite beta
    ... nan") for good."""
    plain = [[0.5, 0.1, -0.2], [-0.3, 0.4, 0.2], [0.2, -0.1, 0.6], [0.6, 0.3, 0.1]]
    made = client.post("/decisions", json={"applicants": [
        {"id": "probe", "x": [0.0, 0.0, 1e-300]},
        *({"id": f"plain-{k}", "x": x} for k, x in enumerate(plain)),
        {"id": "waiting", "x": [0.2, 0.2, 0.2]}]})
    assert all(d["accepted"] for d in made.json()["decisions"]), made.text
    # The probe's outcome first (its direction still empty), then enough points to fill it.
    r = client.post("/outcomes", json={"outcomes": [
        {"id": "probe", "outcome": 0.5},
        *({"id": f"plain-{k}", "outcome": sum(x) / 2} for k, x in enumerate(plain))]})
    assert r.status_code == 200, r.text
    for _ in range(2):
        r = client.post("/publish")
        assert r.status_code == 200, r.text
        rule = r.json()
        assert all(math.isfinite(b) for b in rule["beta"]) and math.isfinite(rule["threshold"])
    health = client.get("/health")
    assert health.status_code == 200 and health.json()["learner_error"] is None


def test_an_entry_the_learner_cannot_learn_is_skipped_logged_and_checked(server, capsys):
    """An outcome of 1e300 written into the log past the service (as a release that checked
    less could have): the learner cannot learn it. ``check`` names it as an entry to skip;
    a restarted learner skips it with a logged refusal (a ``skipped_entries`` row, counted
    on ``/metrics``) and goes on learning and publishing, where it used to stop for good and
    stop again at every restart. The control: with that row deleted, the replay skips an
    entry the log says was learned, and ``check`` fails naming it."""
    server.stop()  # the learner saves itself at the stop
    assert main(["serve", "check", "--database", server.database]) == 0
    assert capsys.readouterr().out.strip().endswith("can be learned")
    engine = store.connect(server.database)
    with store.transaction(engine) as conn:
        seq = store.take_positions(conn, 1)
        conn.execute(sa.insert(store.outcomes).values(
            decision_id="waiting", seq=seq, outcome=1e300, created_at=store.now()))
    why = "outcome must be at most 10 in magnitude (the learner's input bound), got 1e+300"
    assert main(["serve", "check", "--database", server.database]) == 0
    assert capsys.readouterr().out.strip().endswith(
        f"can be learned; 1 entry to skip (not learned yet), the first at position {seq} "
        f"(decision 'waiting': {why})")
    server.start()
    with server.client() as c:
        deadline = time.monotonic() + 30
        while (doc := c.get("/metrics").json())["learner_lag"]:
            assert time.monotonic() < deadline, doc
            time.sleep(0.05)
        assert doc["skipped_entries"] == 1 and doc["learner_error"] is None, doc
        assert c.get("/health").json()["status"] == "ok"
        r = c.post("/decisions", json={"id": "after-skip", "x": [0.3, 0.1, 0.2]})
        assert r.status_code == 200, r.text
        if r.json()["accepted"]:
            c.post("/outcomes", json={"id": "after-skip", "outcome": 0.4}).raise_for_status()
        assert c.post("/publish").status_code == 200  # it learns and publishes on
        prom = c.get("/metrics", params={"format": "prometheus"}).text
        assert "sat_skipped_entries_total 1.0" in prom
    server.stop()
    assert f"log entry {seq} (outcome of decision 'waiting') skipped by the learner: {why}" \
        in server.log.read_text()
    assert main(["serve", "check", "--database", server.database]) == 0
    assert capsys.readouterr().out.strip().endswith(
        f"can be learned; 1 entry skipped, the first at position {seq} "
        f"(decision 'waiting': {why})")
    with store.transaction(engine) as conn:  # the control
        conn.execute(sa.delete(store.skipped_entries))
    engine.dispose()
    assert main(["serve", "check", "--database", server.database]) == 1
    assert capsys.readouterr().out.strip() == (
        f"the log cannot be replayed: replay diverged: the learner cannot learn log entry "
        f"{seq} ({why}), which it learned when it ran")


def test_a_raw_value_within_the_bound_but_beyond_it_standardized_is_a_422(serve, tmp_path):
    """A feature declared with mean 0.3 and scale 0.3: 9.9e8 is within the raw bound (1e9)
    but 3.3e9 standardized, beyond SA-OLS's bound, so it is that request's 422, and the
    learner never meets it (it goes on learning; the log replays). The control: a value
    within the bound standardized is decided."""
    settings = tmp_path / "service.toml"
    settings.write_text('[[features]]\nname = "ratio"\nmean = 0.3\nscale = 0.3\n'
                        '[[features]]\nname = "b"\n[[features]]\nname = "c"\n')
    server = serve("--config", str(settings), "--publish", "manual")
    with server.client() as c:
        refused = c.post("/decisions", json={"id": "big", "x": [9.9e8, 0.0, 0.0]})
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"] == (
            "x.0: 990000000.0 is 3.3e+09 standardized (declared mean 0.3, scale 0.3), beyond "
            "the learner's input bound 1e+09: give a value from -3e+08 to 3e+08")
        assert c.post("/decisions", json={"id": "fine", "x": [2.0e8, 0.0, 0.0]}
                      ).status_code == 200
        c.post("/outcomes", json={"id": "fine", "outcome": 1.0}).raise_for_status()
        assert c.post("/publish").status_code == 200
        assert c.get("/health").json()["status"] == "ok"
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0
