"""Metrics an operator can trust: ``/metrics`` counters that never go down (running counts,
kept across retention and restarts), every documented name present, readiness apart from
liveness, a bound on distinct group labels, saved states by time as well as by count, and a
publication with nothing new that stores nothing."""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import retention, store

from .test_durability import _rows

DOCS = Path(__file__).resolve().parents[2] / "docs" / "service.md"
#: The process's own counters start again with the process (a new
#: ``process_start_time_seconds`` tells a scraper so); the service's never do.
PROCESS = ("sat_http_", "process_", "python_")
SHADOW = ["--shadow", "sa-ols", "--shadow-param", "delta=0.1", "--shadow-param", "r0=0"]


def _scrape(client) -> dict[tuple[str, tuple], float]:
    from prometheus_client.parser import text_string_to_metric_families

    response = client.get("/metrics", headers={"Accept": "text/plain"})
    assert response.status_code == 200
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.text)
            for s in family.samples}


def _documented() -> list[str]:
    """The names docs/service.md's metrics table lists, but those shown only when the learner
    estimates δ (this server is told δ)."""
    rows = re.findall(r"^ *\| `([a-z_]+)` \| (\w+) \| (.*) \|$", DOCS.read_text(), re.M)
    assert len(rows) > 20, "docs/service.md has no metrics table"
    return [name for name, _, what in rows if "estimates δ" not in what]


def _send(client, tag: str, n: int) -> int:
    """``n`` decisions, three groups, the accepted ones' outcomes; how many were accepted."""
    done = client.post("/decisions", json={"applicants": [
        {"id": f"{tag}-{k}", "x": [0.01 * k, 0.2, 0.3], "group": "abc"[k % 3]}
        for k in range(n)]}).json()["decisions"]
    answered = [{"id": d["id"], "outcome": 0.5 if k % 2 else -0.5}
                for k, d in enumerate(done) if d["accepted"]]
    if answered:
        client.post("/outcomes", json={"outcomes": answered}).raise_for_status()
    return len(answered)


def _monotone(before: dict, after: dict, same_process: bool) -> list[str]:
    """Every ``_total`` of ``before`` in ``after`` and no lower (the process's own only within
    one process)."""
    return [f"{name}{dict(labels)}: {value} -> {after.get((name, labels))}"
            for (name, labels), value in before.items()
            if name.endswith("_total") and (same_process or not name.startswith(PROCESS))
            and not after.get((name, labels), -1) >= value]


def test_counters_never_go_down_across_retention_and_a_restart(serve):
    # 0.00003 days = 2.6 s: rows go once a saved state older than that holds them.
    server = serve("--publish", "outcomes:10", "--snapshot-every", "20",
                   "--retain-days", "0.00003", *SHADOW)
    sent = accepted = 0
    with server.client() as c:
        scrapes = [_scrape(c)]
        deadline = time.monotonic() + 60
        k = 0
        while not sent or len(_rows(server.database)[0]) == sent:  # until some rows went
            assert time.monotonic() < deadline, "nothing pruned within 60 s"
            accepted += _send(c, f"r{k}", 12)
            sent += 12
            k += 1
            scrapes.append(_scrape(c))
            time.sleep(0.1)
        c.post("/publish").raise_for_status()  # everything logged is learned
        scrapes.append(_scrape(c))
    kept = len(_rows(server.database)[0])
    last = scrapes[-1]
    # The counts are of events, not of rows: fewer rows are kept than were counted (a count
    # of the log's rows, as /metrics made before, went down here).
    assert last[("sat_decisions_total", ())] == sent > kept
    assert last[("sat_accepted_total", ())] == last[("sat_outcomes_total", ())] == accepted
    assert sum(last[("sat_group_decisions_total", (("group", g),))] for g in "abc") == sent
    assert last[("sat_shadow_decisions_total", ())] == sent
    for before, after in itertools.pairwise(scrapes):
        assert _monotone(before, after, same_process=True) == []
    server.stop()
    server.start()  # a restart: the service's counts stand, the process's start again
    with server.client() as c:
        after = _scrape(c)
    assert _monotone(last, after, same_process=False) == []
    assert after[("process_start_time_seconds", ())] > last[("process_start_time_seconds", ())]
    assert after[("sat_decisions_total", ())] == sent
    # Every documented name is there (this server has groups and a shadow, is told δ).
    names = {name for name, _ in after} | {n.removesuffix("_bucket") for n, _ in after}
    missing = [n for n in _documented() if n not in names]
    assert missing == []
    # The control: a name the docs do not list is seen as missing by the same comparison.
    assert "sat_nonexistent_total" not in names
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0


def test_requests_are_counted_by_route_method_and_status(serve):
    server = serve()
    with server.client() as c:
        c.get("/policy")
        c.post("/decisions", json={"x": [1.0]})  # 422
        c.get("/decisions/unknown-id")  # 404, one series for every id
        c.get("/no/such/path")
        samples = _scrape(c)
    count = {dict(labels)["route"] + " " + dict(labels)["method"] + " "
             + dict(labels)["status"]: v for (name, labels), v in samples.items()
             if name == "sat_http_requests_total"}
    assert count["/policy GET 200"] == 1 and count["/decisions POST 422"] == 1
    assert count["/decisions/{decision_id} GET 404"] == 1
    assert count["unmatched GET 404"] == 1
    assert samples[("sat_http_request_duration_seconds_count",
                    (("method", "GET"), ("route", "/policy")))] == 1
    assert samples[("process_resident_memory_bytes", ())] > 0


def test_ready_is_apart_from_health(serve):
    active = serve()
    standby = serve(database=active.database)  # the same database: it stands by
    with standby.client() as c:
        doc = c.get("/ready").json()
    assert doc == {"ready": True, "role": "all", "schema": store.HEAD, "learner": "standby",
                   "reasons": []}
    # A log row written past the service that cannot be read (its features are not JSON)
    # stops the learner: not ready. (One it can read but not learn is skipped instead.)
    engine = store.connect(active.database)
    with store.transaction(engine) as conn:
        seq = store.take_positions(conn, 1)
        conn.execute(sa.insert(store.decisions).values(
            id="bad", seq=seq, features="[1.0, oops]", accepted=True, version=1,
            created_at=store.now()))
    engine.dispose()
    with active.client() as c:
        deadline = time.monotonic() + 30
        while (health := c.get("/health")).status_code == 200:
            assert time.monotonic() < deadline, "the learner did not stop"
            time.sleep(0.05)
        ready = c.get("/ready")
    error = health.json()["learner_error"]
    assert ready.status_code == 503
    assert ready.json() == {"ready": False, "role": "all", "schema": store.HEAD,
                            "learner": "stopped",
                            "reasons": [f"the learner has stopped: {error}"]}


def test_distinct_group_labels_are_bounded(serve):
    server = serve("--max-groups", "2")
    refused = ("group 'c' would be distinct group label 3: this service counts at most 2 "
               "(max_groups); use a label it counts already, or restart it with a higher "
               "--max-groups")
    with server.client() as c:
        assert c.post("/decisions", json={"id": "1", "x": [0.1, 0.2, 0.3],
                                          "group": "a"}).status_code == 200
        both = c.post("/decisions", json={"applicants": [
            {"id": "2", "x": [0.1, 0.2, 0.3], "group": "b"},
            {"id": "3", "x": [0.1, 0.2, 0.3], "group": "a"}]})
        assert both.status_code == 200  # the control: two labels are within the bound
        over = c.post("/decisions", json={"applicants": [
            {"id": "4", "x": [0.1, 0.2, 0.3], "group": "a"},
            {"id": "5", "x": [0.1, 0.2, 0.3], "group": "c"}]})
        assert over.status_code == 422 and over.json() == {"error": refused}
        assert c.post("/decisions", json={"id": "6", "x": [0.1, 0.2, 0.3]}).status_code == 200
        assert set(c.get("/metrics").json()["groups"]) == {"a", "b"}
    assert set(_rows(server.database)[0]) == {"1", "2", "3", "6"}  # nothing of the refused
    server.stop()
    server.start()  # the labels counted are the database's: the bound holds after a restart
    with server.client() as c:
        again = c.post("/decisions", json={"id": "7", "x": [0.1, 0.2, 0.3], "group": "c"})
        assert again.status_code == 422 and again.json() == {"error": refused}
        assert c.post("/decisions", json={"id": "8", "x": [0.1, 0.2, 0.3],
                                          "group": "b"}).status_code == 200


def test_a_publication_with_nothing_read_since_stores_nothing(serve):
    server = serve("--publish", "manual")
    engine = store.connect(server.database)

    def rules() -> int:
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(store.rules)).scalar()
    with server.client() as c:
        first = c.get("/policy").json()
        same = c.post("/publish").json()
        assert same == {"published": "unchanged", **first} and rules() == 1
        # The control: a decision read since is something new, so a new rule is published.
        c.post("/decisions", json={"id": "one", "x": [0.1, 0.2, 0.3]}).raise_for_status()
        second = c.post("/publish").json()
        assert second["version"] == first["version"] + 1 and "published" not in second
        assert c.post("/publish").json() == {"published": "unchanged", **second}
        forced = c.post("/publish?force=true").json()  # what the game over the wire asks
        assert forced["version"] == second["version"] + 1 and rules() == 3
    engine.dispose()


def test_saved_states_by_time_let_retention_work_at_any_volume(serve):
    # A saved state every 0.12 s of a growing log, never by count here (a million entries):
    # rows older than 0.00003 days (2.6 s) still go, and check replays from a recent base.
    server = serve("--publish", "manual", "--snapshot-every", "1000000",
                   "--snapshot-minutes", "0.002", "--retain-days", "0.00003")
    sent: set[str] = set()
    deadline = time.monotonic() + 60
    with server.client() as c:
        k = 0
        while not sent or sent <= set(_rows(server.database)[0]):  # until some rows went
            assert time.monotonic() < deadline, "nothing pruned within 60 s"
            done = c.post("/decisions", json={"id": f"t{k}", "x": [0.1, 0.2, 0.3]}).json()
            if done["accepted"]:
                c.post("/outcomes", json={"id": f"t{k}", "outcome": 1.0}).raise_for_status()
            sent.add(f"t{k}")
            k += 1
            time.sleep(0.2)
    server.stop()
    engine = store.connect(server.database)
    with engine.connect() as conn:
        base = retention.base(conn)
    engine.dispose()
    assert base is not None and base > 0
    assert main(["serve", "check", "--database", server.database]) == 0


def test_bad_new_settings_are_refused_in_one_line(tmp_path):
    from strategic_apple_tasting.service.config import ServiceConfig

    for setting, value, message in (
            ("snapshot_minutes", 0, "snapshot_minutes must be a number of minutes from 0 "
             "(excluded) to 1e9, got 0"),
            ("max_groups", 0, "max_groups must be an integer >= 1, got 0")):
        config = ServiceConfig(params={"delta": 0.3, "r0": 0.0},
                               database=f"sqlite:///{tmp_path}/x.db", **{setting: value})
        with pytest.raises(ValueError) as info:
            config.check()
        assert str(info.value) == message
