"""One client's bad values never fail another client's write: refused per request before the
group commit (422 for that request alone), and, should the database refuse a group for one
request's values all the same, the group is written again request by request."""

from __future__ import annotations

import asyncio
import threading

import pytest
import sqlalchemy as sa

from strategic_apple_tasting.service import store
from strategic_apple_tasting.service.deciding import ServiceError, Writer

CLIENTS = 8
EACH = 30


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/isolation.db"
    return request.getfixturevalue("postgres_db")


def test_a_nul_in_an_id_is_refused_for_that_request_alone(serve, database):
    server = serve("--publish", "manual", database=database)
    answers: dict[str, list[tuple[int, str]]] = {"valid": [], "bad": []}
    guard = threading.Lock()
    tag = database.rsplit("/", 1)[-1].replace(".", "-")

    def post(c, kind: str, path: str, body: dict) -> None:
        r = c.post(path, json=body)
        with guard:
            answers[kind].append((r.status_code, r.json().get("error", "")))

    def valid(k: int) -> None:
        with server.client() as c:
            for i in range(EACH):
                post(c, "valid", "/decisions", {"id": f"{tag}-ok-{k}-{i}", "x": [0.1, 0.2, 0.3]})

    def bad() -> None:
        with server.client() as c:
            for i in range(EACH):
                post(c, "bad", "/decisions", {"id": f"{tag}-bad\x00{i}", "x": [0.1, 0.2, 0.3]}
                     if i % 2 else {"applicants": [
                         {"id": f"{tag}-fine-{i}", "x": [0.1, 0.2, 0.3]},
                         {"id": f"{tag}-bad-\x00-{i}", "x": [0.1, 0.2, 0.3]}]})
                post(c, "bad", "/outcomes", {"id": f"{tag}-bad\x00{i}", "outcome": 1.0})

    threads = [threading.Thread(target=valid, args=(k,)) for k in range(CLIENTS)]
    threads.append(threading.Thread(target=bad))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    wrong = [a for a in answers["valid"] if a[0] != 200]
    assert len(answers["valid"]) == CLIENTS * EACH and not wrong, (len(wrong), wrong[:3])
    assert len(answers["bad"]) == 2 * EACH
    for status, line in answers["bad"]:
        assert status == 422 and "id" in line and "NUL" in line, (status, line)
    with server.client() as c:
        metrics = c.get("/metrics").json()
        assert metrics["decisions"] == CLIENTS * EACH and metrics["database_error"] is None
        assert c.get("/health").json()["status"] == "ok"


#: Values a database refuses that the HTTP layer would have refused first: given to the writer
#: directly, as a request with a value nobody foresaw.
REFUSED = {"sqlite": ["lone-\ud800"], "postgresql": ["nul-\x00", "lone-\udfff"]}


def test_a_group_the_database_refuses_is_written_again_request_by_request(database):
    engine = store.connect(database)
    store.migrate(engine)
    kind = engine.url.get_backend_name()
    with store.transaction(engine) as conn:
        conn.execute(sa.insert(store.rules).values(
            version=990, kind="linear", beta="[0.0, 0.0, 0.0]", threshold=-1.0,
            probability=1.0, after_seq=0, log_at=0, published_at=0.0))
    writer = Writer(engine, bandit=False)

    async def group() -> list:
        good = [asyncio.ensure_future(writer.submit("decisions", [(f"group-{k}", [0.1] * 3)]))
                for k in range(6)]
        bad = [asyncio.ensure_future(writer.submit("decisions", [(v, [0.2] * 3)]))
               for v in REFUSED[kind]]
        await asyncio.sleep(0)  # every request queued before the writer takes its first group
        writer.start()
        return await asyncio.gather(*good, *bad, return_exceptions=True)

    try:
        results = asyncio.run(group())
    finally:
        writer.stop()
    good, bad = results[:6], results[6:]
    assert all(isinstance(r, list) and r[0]["accepted"] for r in good), good
    for result in bad:
        assert isinstance(result, ServiceError) and result.status == 422, result
        assert "cannot store" in result.message and "\n" not in result.message
    with engine.connect() as conn:
        ids = set(conn.execute(sa.select(store.decisions.c.id)).scalars())
        conn.close()
    engine.dispose()
    assert ids == {f"group-{k}" for k in range(6)}
    assert writer.failure is None  # a refused value is not a database failure


def test_a_damaged_database_is_the_servers_fault_not_the_requests(tmp_path):
    """SQLite's "database disk image is malformed" (a damaged file) answers 503 and sets the
    writer's failure (so /health says so): a client told 422 would drop its request. The
    control: a value the driver cannot encode is still that request's 422."""
    import sqlite3

    engine = store.connect(f"sqlite:///{tmp_path}/damaged.db")
    writer = Writer(engine, bandit=False)
    damaged = sa.exc.DatabaseError("INSERT INTO decisions ...", {},
                                   sqlite3.DatabaseError("database disk image is malformed"))
    answer = writer._refusal(damaged)
    assert answer.status == 503 and "database disk image is malformed" in answer.message
    assert writer.failure is not None
    unencodable = sa.exc.StatementError("cannot encode", "INSERT ...", {},
                                        UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogate"))
    assert writer._refusal(unencodable).status == 422
    engine.dispose()
