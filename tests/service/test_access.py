"""Who may do what, until when, how often, and who read what: key scopes (403 naming the
scope), expiry, last use (written at most once a minute), rate limits (429 with Retry-After,
on an injected clock), the access log of explanations read, and key files written 0600."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import UTC, datetime

import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import keys, store
from strategic_apple_tasting.service.ratelimit import RateLimits

pytest.importorskip("sqlalchemy", reason="the 'serve' extra is not installed")
httpx = pytest.importorskip("httpx", reason="the 'serve' extra is not installed")



def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# -- scopes, expiry, last use ----------------------------------------------------------------
def test_scopes_are_read_in_their_order_and_bad_ones_refused():
    assert keys.parse_scopes("admin, decide") == ("decide", "admin")
    assert keys.DEFAULT_SCOPES == ("decide", "report")
    for text, why in (("decide,publish", "'publish' is not one"),
                      ("decide,decide", "one is repeated")):
        with pytest.raises(ValueError) as caught:
            keys.parse_scopes(text)
        assert str(caught.value) == ("--scope must name scopes from decide, report, explain, "
                                     f"admin joined by commas ({why}), got {text!r}")


def test_expiry_is_days_from_now_or_a_date_in_the_future():
    now = datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    assert keys.parse_expiry("30", now) == now + 30 * 86_400
    assert keys.parse_expiry("2026-04-01", now) == datetime(2026, 4, 1, tzinfo=UTC).timestamp()
    with pytest.raises(ValueError, match=r"^--expires '2026-02-01' is in the past: give a "
                       r"later date$"):
        keys.parse_expiry("2026-02-01", now)
    with pytest.raises(ValueError, match=r"^--expires must be a number of days from 0 to "
                       r"36,600 \(exclusive of 0\), got '0'$"):
        keys.parse_expiry("0", now)


def test_a_key_works_until_it_expires(engine):
    now = [1_000_000.0]
    expires = now[0] + 86_400
    key = keys.create_key(engine, "until", expires_at=expires)
    check = keys.KeyCheck(engine, clock=lambda: now[0])
    assert check.verify(f"Bearer {key}") == (key.split("_")[1], None, ("decide", "report"))
    now[0] = expires  # the moment it expires it stops (the cache keeps the expiry, not a verdict)
    assert check.check(f"Bearer {key}") == (None, "the API key expired at 1970-01-13T13:46:40"
                                            "+00:00 (sat serve keys create makes a new one)")


def test_last_use_is_written_at_most_once_a_minute_per_key(engine):
    now = [5_000.0]
    key = keys.create_key(engine, "busy", keys.SCOPES)
    id_ = key.split("_")[1]
    check = keys.KeyCheck(engine, clock=lambda: now[0])
    due = []
    for step in range(130):  # a request a second for 130 s
        now[0] = 5_000.0 + step
        if check.use_due(id_):
            due.append(step)
            check.write_use(id_)
    assert due == [0, 60, 120]
    (listed,) = keys.list_keys(engine)
    assert listed["last_used_at"] == 5_120.0 and listed["scopes"] == keys.SCOPES


def test_keys_made_before_scopes_keep_every_scope(tmp_path):
    """An upgrade takes nothing from a client that works today."""
    url = f"sqlite:///{tmp_path}/old.db"
    engine = store.connect(url)
    try:
        store.migrate(engine, "0005")  # a database as the release before scopes made it
        with engine.begin() as conn:  # a key as that release made it
            conn.exec_driver_sql("INSERT INTO api_keys (id, hash, name, created_at) VALUES "
                                 "('old', 'x', 'narrow', 0)")
        store.migrate(engine)
        assert [k["scopes"] for k in keys.list_keys(engine)] == [keys.SCOPES]
        assert [k["id"] for k in keys.list_keys(engine)] == ["old"]
    finally:
        engine.dispose()


# -- rate limits (a token bucket per key, on an injected clock) ------------------------------
def test_a_token_bucket_per_key_refuses_past_its_rate_and_refills():
    now = [0.0]
    limits = RateLimits(rate=4.0, clock=lambda: now[0])
    assert [limits.take("a") for _ in range(5)] == [None, None, None, None, 0.25]
    assert limits.take("b") is None  # another key has its own bucket
    now[0] = 0.25
    assert limits.take("a") is None and limits.take("a") == 0.25
    now[0] = 100.0  # a bucket holds at most its burst, however long it waited
    assert [limits.take("a") for _ in range(5)][-1] == 0.25


def test_buckets_are_bounded_whatever_keys_arrive():
    from strategic_apple_tasting.service import ratelimit

    limits = RateLimits(rate=1.0, clock=lambda: 0.0)
    for k in range(3 * ratelimit.MAX_KEYS):
        limits.take(f"k{k}")
    assert len(limits) == ratelimit.MAX_KEYS


# -- over HTTP -------------------------------------------------------------------------------
ROUTES = [  # (method, path, body, scope needed)
    ("POST", "/decisions", {"id": "scoped-1", "x": [0.1, 0.2, 0.3]}, "decide"),
    ("POST", "/outcomes", {"id": "scoped-1", "outcome": 1.0}, "report"),
    ("GET", "/decisions/scoped-1", None, "explain"),
    ("POST", "/publish", None, "admin"),
    ("POST", "/rollback", {"version": 1}, "admin"),
]
DOES = {"decide": "decide", "report": "report outcomes", "explain": "read explanations",
        "admin": "publish, roll back or change the rule"}


def test_each_route_needs_its_scope_and_each_read_is_logged(serve, tmp_path, capsys):
    server = serve("--publish", "manual")
    engine = store.connect(server.database)
    try:
        one = {scope: keys.create_key(engine, scope, [scope]) for scope in keys.SCOPES}
    finally:
        engine.dispose()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for method, path, body, needed in ROUTES:
            for scope, key in one.items():
                if scope == needed:
                    continue
                r = c.request(method, path, json=body, headers=_bearer(key))
                assert r.status_code == 403, (path, scope, r.text)
                assert r.json()["error"] == (
                    f"API key {key.split('_')[1]} may not {DOES[needed]}: that needs scope "
                    f"{needed!r}, and it has {scope} (sat serve keys create --scope {needed} "
                    "makes a key that may)")
            # the control: the key with the scope passes the gate
            r = c.request(method, path, json=body, headers=_bearer(one[needed]))
            assert r.status_code in (200, 409), (path, r.text)  # 409: version 1 is in force
        reader = one["explain"]
        for _ in range(2):
            assert c.get("/decisions/scoped-1", headers=_bearer(reader)).status_code == 200
        assert c.get("/decisions/unknown", headers=_bearer(reader)).status_code == 404
    capsys.readouterr()
    assert main(["serve", "keys", "access-log", "--database", server.database]) == 0
    lines = capsys.readouterr().out.splitlines()
    reader_id = reader.split("_")[1]
    assert [line.split("\t")[1:] for line in lines] == [[reader_id, "explain", "scoped-1"]] * 3
    assert all(datetime.fromisoformat(line.split("\t")[0]).tzinfo for line in lines)
    assert main(["serve", "keys", "access-log", "--decision", "unknown",
                 "--database", server.database]) == 0
    assert capsys.readouterr().out == ""  # a read refused (unknown) reveals nothing: no record
    assert main(["serve", "keys", "list", "--database", server.database]) == 0
    listed = {line.split("\t")[0]: line.split("\t")[1:] for line in
              capsys.readouterr().out.splitlines()}
    used = listed[reader_id]
    assert used[:4] == ["active", "explain", "explain", "expires never"], used
    assert used[4].startswith("last used 20"), used  # written on its first request
    assert listed[server.key.split("_")[1]][2] == "decide,report,explain,admin"


def test_a_key_over_its_rate_limit_gets_429_with_retry_after(serve):
    # One request per 100 s, a burst of one: the second request is refused however slow
    # the machine, and another key is not.
    server = serve("--publish", "manual", "--rate-limit", "0.01")
    with server.client() as c:
        assert c.post("/decisions", json={"id": "rate-1", "x": [0.1, 0.2, 0.3]}
                      ).status_code == 200
        r = c.post("/decisions", json={"id": "rate-2", "x": [0.1, 0.2, 0.3]})
        assert r.status_code == 429 and r.headers["retry-after"] == "100", r.text
        assert r.json()["error"] == (f"API key {server.key.split('_')[1]} is over its rate "
                                     "limit of 0.01 requests a second (rate_limit): retry "
                                     "after 100 s")
        assert c.get("/policy").status_code == 200  # public routes are not limited
    engine = store.connect(server.database)
    try:
        other = keys.create_key(engine, "other")
    finally:
        engine.dispose()
    with httpx.Client(base_url=server.url, timeout=30, headers=_bearer(other)) as c:
        assert c.post("/decisions", json={"id": "rate-2", "x": [0.1, 0.2, 0.3]}
                      ).status_code == 200


# -- key files -------------------------------------------------------------------------------
def test_keys_create_out_writes_a_private_file_and_never_overwrites_unasked(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/k.db"
    out = tmp_path / "lender.key"
    before = os.umask(0o022)  # the usual umask: `> lender.key` would make it 0644
    try:
        assert main(["serve", "keys", "create", "--name", "lender", "--scope",
                     "decide,report,explain", "--expires", "2999-01-01", "--out", str(out),
                     "--database", url]) == 0
    finally:
        os.umask(before)
    key = out.read_text().strip()
    assert oct(stat.S_IMODE(os.stat(out).st_mode)) == "0o600"
    said, err = capsys.readouterr()
    assert said == (f"key {key.split('_')[1]} written to {out} (mode 0600); scopes "
                    "decide,report,explain, expires 2999-01-01T00:00:00+00:00; keep this "
                    "key: only its hash is stored\n") and err == ""
    assert main(["serve", "keys", "create", "--name", "again", "--out", str(out),
                 "--database", url]) == 2
    assert capsys.readouterr().err == (f"sat: error: --out {str(out)!r} exists: give --force "
                                       "to replace it\n")
    assert out.read_text().strip() == key
    with sqlite3.connect(tmp_path / "k.db") as db:  # refused before a key was made
        assert db.execute("SELECT count(*) FROM api_keys").fetchone()[0] == 1
    assert main(["serve", "keys", "create", "--name", "again", "--out", str(out), "--force",
                 "--database", url]) == 0
    assert out.read_text().strip() != key
    assert oct(stat.S_IMODE(os.stat(out).st_mode)) == "0o600"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
