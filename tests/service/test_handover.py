"""Handing over: a standby ``sat serve --role all`` waits for the learner's lock and
takes over when the active learner dies, losing nothing acknowledged; on PostgreSQL a learner
whose lock session ends stops learning and takes the lock again, so two learners never learn
at once."""

from __future__ import annotations

import time

import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import store
from strategic_apple_tasting.service.locking import SingleLearner

from .test_durability import BUSY, Load, _rows, kill_under_load


def _wait(predicate, seconds: float, what: str) -> float:
    """Seconds until ``predicate()`` holds (an assertion naming ``what`` after ``seconds``)."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < seconds, f"{what} not within {seconds} s"
        time.sleep(0.05)
    return time.monotonic() - start


def _learning(server) -> bool:
    with server.client() as c:
        health = c.get("/health").json()
    return health["status"] == "ok" and health["standby"] is False


def test_the_standby_takes_over_when_the_learner_is_killed_under_load(serve):
    active = serve(*BUSY)
    standby = serve(*BUSY, database=active.database)
    standby.key = active.key
    assert "standing by" in standby.log.read_text() and not _learning(standby)
    # Clients on both processes; the active learner is killed under their load.
    on_active, on_standby = Load(active, "a").start(), Load(standby, "s", clients=2).start()
    kill_under_load(active, on_active, 0.5)
    took = _wait(lambda: _learning(standby), 10.0, "the standby's takeover")
    time.sleep(0.5)
    assert standby.process.poll() is None
    on_standby_ids = set(on_standby.decided)
    with standby.client() as c:  # it learns: a publication by hand works, and counts all
        rule = c.post("/publish").json()
        assert rule["version"] >= 2
        # The clients stop first: under their load the learner, on a busy machine, can trail
        # them by a few outcomes at every moment.
        on_standby.stop()
        _wait(lambda: c.get("/metrics").json()["learner_lag"] == 0, 30, "the learner's lag")
        m = c.get("/metrics").json()
    standby.stop()
    decisions, outcomes = _rows(active.database)
    for load in (on_active, on_standby):
        for id_, ack in load.decided.items():
            assert decisions[id_] == ack, id_
        for id_, value in load.reported.items():
            assert outcomes[id_] == value, id_
    assert on_standby_ids and m["learner_error"] is None and m["outcomes_learned"] >= len(
        on_active.reported)
    assert "took over as the learner" in standby.log.read_text()
    assert main(["serve", "check", "--database", active.database]) == 0
    print(f"takeover after {took:.2f} s")


def _lock_sessions(url: str) -> list[int]:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        pids = conn.execute(sa.text(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = :k AND granted"),
            {"k": SingleLearner.KEY}).scalars().all()
    engine.dispose()
    return list(pids)


def _terminate(url: str, pid: int) -> None:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    engine.dispose()


def test_a_postgresql_learner_whose_lock_session_ends_stops_and_takes_it_again(serve,
                                                                               postgres_db):
    server = serve("--publish", "manual", database=postgres_db)
    with server.client() as c:
        c.post("/decisions", json={"id": "p-1", "x": [0.1, 0.2, 0.3]}).raise_for_status()
        c.post("/outcomes", json={"id": "p-1", "outcome": 1.0}).raise_for_status()
    [held] = _lock_sessions(postgres_db)
    _terminate(postgres_db, held)  # as a server restart does: the lock goes with the session
    _wait(lambda: "stopped learning, standing by" in server.log.read_text(), 10,
          "the learner noticing its lost lock")
    _wait(lambda: _learning(server), 10, "the lock taken again")
    [again] = _lock_sessions(postgres_db)
    assert again != held
    with server.client() as c:
        assert c.post("/publish").json()["version"] == 2
        assert c.get("/metrics").json()["outcomes_learned"] == 1
    server.stop()
    assert main(["serve", "check", "--database", postgres_db]) == 0


def test_two_postgresql_learners_never_learn_at_once(serve, postgres_db):
    first = serve("--publish", "manual", database=postgres_db)
    second = serve("--publish", "manual", database=postgres_db)
    second.key = first.key
    assert _learning(first) and not _learning(second)
    [held] = _lock_sessions(postgres_db)
    _terminate(postgres_db, held)
    # One of them takes the lock again (whichever asks first); never both. The old holder
    # notices at its next check (every ALIVE_EVERY = 1 s when idle; until then each of its
    # write transactions finds the lock gone first, `SingleLearner.verify`), so /health may
    # show both learning until then. Once it has noticed, exactly one learns, always.
    _wait(lambda: "stopped learning, standing by" in first.log.read_text(), 10,
          "the old holder noticing its lost lock")
    _wait(lambda: [_learning(first), _learning(second)].count(True) == 1, 10,
          "exactly one learner again")
    for _ in range(20):
        assert [_learning(first), _learning(second)].count(True) == 1
        assert len(_lock_sessions(postgres_db)) == 1
        time.sleep(0.1)
    learner = first if _learning(first) else second
    with learner.client() as c:  # (nothing logged since the first rule: publish all the same)
        assert c.post("/publish?force=true").json()["version"] == 2
    other = second if learner is first else first
    with other.client() as c:
        assert c.post("/publish").status_code == 409
    first.stop()
    second.stop()
    engine = store.connect(postgres_db)
    with engine.connect() as conn:
        versions = conn.execute(sa.select(store.rules.c.version)).scalars().all()
    engine.dispose()
    assert sorted(versions) == [1, 2]


def test_kill_9_under_load_with_a_warm_start_a_shadow_and_retention(serve, tmp_path):
    """The new writes (the warm start's row, the shadow's rules and decisions, per-rule
    figures, pinned states) under ``kill -9``: nothing acknowledged lost, and the log replays
    to the saved learner and shadow."""
    from .test_durability import retry_everything

    start = tmp_path / "rule.json"  # a lender's accept-all rule to start from
    start.write_text('{"beta": [0, 0, 0], "threshold": -1}')
    server = serve(*BUSY, "--shadow", "sa-ols", "--shadow-param", "delta=0.1",
                   "--shadow-param", "r0=0", "--start-rule", str(start),
                   "--retain-days", "1")
    for cycle in range(2):
        load = Load(server, f"w{cycle}").start()
        kill_under_load(server, load, 0.4 + 0.3 * cycle)
        server.start()
        retry_everything(server, load)
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0
    engine = store.connect(server.database)
    with engine.connect() as conn:
        shadow_rules = conn.execute(sa.select(sa.func.count()).select_from(
            store.shadow_rules)).scalar_one()
        rules = conn.execute(sa.select(sa.func.count()).select_from(store.rules)).scalar_one()
        figures = conn.execute(sa.select(sa.func.sum(store.rule_stats.c.decisions))
                               ).scalar_one()
        decisions = conn.execute(sa.select(sa.func.count()).select_from(store.decisions)
                                 ).scalar_one()
    engine.dispose()
    assert shadow_rules == rules >= 2  # one beside each live publication, none lost or doubled
    assert figures == decisions  # each decision counted once, across the kills
