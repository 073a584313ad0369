"""The decision service as its users meet it: a real ``sat serve`` over HTTP. Every endpoint,
the API keys, refusals of bad input (one line, nothing changed), retries, what the public
endpoints show, and the command line's refusals of a bad configuration.

One server is shared by the module (each test uses its own ids); its rule is SA-OLS's warm-up
rule (accept everyone) until :func:`test_publish_learns_the_outcomes_and_changes_the_rule`, the
last test of the file and the only one that publishes on it.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import os
import re
import socket
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.learners import LEARNERS
from strategic_apple_tasting.service import keys, store

from .conftest import SA_OLS, Server, free_port, httpx

D = 3
MAX_BATCH = 8
MAX_BODY = 16_384
X = [0.1, 0.2, 0.3]
#: What a refused request must leave as it was.
COUNTED = ("decisions", "accepted", "outcomes")


# -- servers ---------------------------------------------------------------------------------
def _start(tmp_path_factory, name: str, *flags: str, forked: bool = True) -> Server:
    folder = tmp_path_factory.mktemp(name)
    server = Server(f"sqlite:///{folder}/service.db", [*flags, "--dimension", str(D)],
                    folder / "server.log", forked=forked)
    return server.start()


def _finish(server: Server) -> None:
    if server.process is not None and server.process.poll() is None:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """SA-OLS (d = 3), published by hand, with small limits (batches of 8, bodies of 16 KiB):
    the command itself, a new process (the other tests' servers are forked, :mod:`.forked`)."""
    s = _start(tmp_path_factory, "http", *SA_OLS, "--publish", "manual",
               "--max-batch", str(MAX_BATCH), "--max-body", str(MAX_BODY), forked=False)
    yield s
    _finish(s)


@pytest.fixture(scope="module")
def client(server):
    with server.client() as c:
        yield c


@pytest.fixture(scope="module")
def rejecting(tmp_path_factory):
    """A server whose learner rejects everyone (its outcomes are never observed)."""
    if "reject-all" not in LEARNERS:
        pytest.skip("no reject-all learner in the registry")
    s = _start(tmp_path_factory, "reject", "--learner", "reject-all", "--publish", "manual")
    yield s
    _finish(s)


# -- helpers ---------------------------------------------------------------------------------
def refused(response, status: int, *words: str) -> str:
    """The refusal's one line, checked: the status, ``{"error": line}``, the words in it."""
    assert response.status_code == status, response.text
    doc = response.json()
    assert list(doc) == ["error"], doc
    line = doc["error"]
    assert isinstance(line, str) and line.strip() and "\n" not in line, line
    for word in words:
        assert word in line, (word, line)
    return line


def raw(client, path: str, text: str):
    """POST ``text`` as it is (JSON with NaN, not JSON at all...)."""
    return client.post(path, content=text.encode(),
                       headers={"content-type": "application/json"})


def counts(client) -> dict[str, int]:
    doc = client.get("/metrics").json()
    return {**{k: doc[k] for k in COUNTED},
            "rules": len(client.get("/policy/history").json()["rules"])}


def settled(client, timeout: float = 15.0) -> dict:
    """``GET /metrics`` once the learner has learned everything logged (a response comes after
    its commit, so what a request wrote is counted in the lag until it is learned)."""
    deadline = time.monotonic() + timeout
    while True:
        doc = client.get("/metrics").json()
        if doc["learner_lag"] == 0:
            return doc
        assert time.monotonic() < deadline, f"the learner did not catch up: {doc}"
        time.sleep(0.02)


def decide(client, id_: str, x=X) -> dict:
    r = client.post("/decisions", json={"id": id_, "x": x})
    assert r.status_code == 200, r.text
    return r.json()


def accepted(client, *ids: str) -> None:
    """Decide ``ids`` (features X), all accepted (the warm-up rule accepts everyone)."""
    r = client.post("/decisions", json={"applicants": [{"id": i, "x": X} for i in ids]})
    assert r.status_code == 200, r.text
    assert all(d["accepted"] for d in r.json()["decisions"]), r.json()


def unknown(client, id_: str) -> bool:
    """Whether no decision has id ``id_`` (an outcome for it is refused as unknown)."""
    r = client.post("/outcomes", json={"id": id_, "outcome": 0.0})
    assert r.status_code in (200, 404, 409), r.text
    return r.status_code == 404


# -- the public endpoints --------------------------------------------------------------------
def test_health_policy_history_and_metrics(client):
    assert client.get("/health").json() == {"status": "ok", "role": "all", "standby": False,
                                            "learner_error": None, "database_error": None}
    policy = client.get("/policy")
    assert policy.status_code == 200 and policy.headers["content-type"] == "application/json"
    rule = policy.json()
    assert isinstance(rule["version"], int) and rule["version"] >= 1
    assert len(rule["beta"]) == D and all(math.isfinite(b) for b in rule["beta"])
    assert math.isfinite(rule["threshold"]) and rule["kind"] == "linear"
    assert rule["learner"] == "sa-ols"
    assert rule["params"] == {"delta": 0.3, "r0": 0, "feedback": "apple"}
    assert abs(rule["effective_unix"] - time.time()) < 3600
    history = client.get("/policy/history").json()["rules"]
    versions = [r["version"] for r in history]
    assert versions == sorted(set(versions)) and versions[0] == 1
    assert history[-1] == rule
    metrics = client.get("/metrics").json()
    assert {"decisions", "accepted", "outcomes", "outcomes_pending", "outcomes_learned",
            "clean_points", "learner_lag", "rule_version", "rule_age_seconds",
            "learner_error", "database_error"} <= set(metrics)
    assert metrics["rule_version"] == rule["version"] and metrics["learner_error"] is None
    assert metrics["database_error"] is None
    assert all(isinstance(metrics[k], int) and metrics[k] >= 0 for k in COUNTED)
    assert 0 <= metrics["rule_age_seconds"] < 3600


def test_openapi_lists_the_write_endpoints(client):
    doc = client.get("/openapi.json").json()
    paths = doc["paths"]
    for path in ("/decisions", "/outcomes", "/publish"):
        assert set(paths[path]) == {"post"}, (path, paths[path])
    for path in ("/policy/history", "/metrics", "/health", "/", "/operator"):
        assert set(paths[path]) == {"get"}, (path, paths[path])
    assert set(paths["/policy"]) == {"get", "head"}  # (a monitor's HEAD is answered too)
    schemas = doc["components"]["schemas"]
    assert {"x", "id", "applicants"} <= set(schemas["DecisionsIn"]["properties"])
    assert {"id", "outcome", "outcomes"} <= set(schemas["OutcomesIn"]["properties"])


def test_the_pages_show_the_rule_in_force(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    version = client.get("/policy").json()["version"]
    assert "<p id=rule>" in page.text and "points reach" in page.text
    operator = client.get("/operator")
    assert operator.status_code == 200
    assert f"version {version}" in operator.text
    assert "<figure id=acceptance><svg" in operator.text
    for text in (page.text, operator.text):  # nothing from elsewhere
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    # The operator's page needs a key (the control: the applicants' page does not).
    url = str(client.base_url).rstrip("/")
    assert httpx.get(f"{url}/operator").status_code == 401
    assert httpx.get(f"{url}/").status_code == 200


# -- deciding and reporting ------------------------------------------------------------------
def test_one_decision_and_one_outcome(client):
    before = counts(client)
    version = client.get("/policy").json()["version"]
    assert decide(client, "single-1") == {"id": "single-1", "accepted": True,
                                          "version": version}
    anonymous = client.post("/decisions", json={"x": [0.3, -0.2, 0.1]})
    assert anonymous.status_code == 200, anonymous.text
    made = anonymous.json()
    assert len(made["id"]) == 32 and int(made["id"], 16) >= 0 and made["accepted"] is True
    r = client.post("/outcomes", json={"id": "single-1", "outcome": 0.4})
    assert r.status_code == 200 and r.json() == {"id": "single-1", "recorded": "now"}
    after = counts(client)
    assert after["decisions"] == before["decisions"] + 2
    assert after["accepted"] == before["accepted"] + 2
    assert after["outcomes"] == before["outcomes"] + 1
    assert after["rules"] == before["rules"]


def test_a_batch_of_decisions_and_a_batch_of_outcomes(client):
    before = counts(client)
    applicants = [{"id": f"batch-{k}", "x": [k / 10, -k / 20, 0.5]} for k in range(5)]
    r = client.post("/decisions", json={"applicants": [*applicants, {"x": X}]})
    assert r.status_code == 200, r.text
    decisions = r.json()["decisions"]
    assert [d["id"] for d in decisions[:5]] == [a["id"] for a in applicants]
    assert len(decisions[5]["id"]) == 32
    assert all(d["accepted"] is True for d in decisions)
    r = client.post("/outcomes", json={"outcomes": [
        {"id": f"batch-{k}", "outcome": k / 7} for k in range(4)]})
    assert r.status_code == 200, r.text
    assert r.json() == {"outcomes": [{"id": f"batch-{k}", "recorded": "now"}
                                     for k in range(4)]}
    after = counts(client)
    assert after["decisions"] == before["decisions"] + 6
    assert after["outcomes"] == before["outcomes"] + 4
    assert client.get("/metrics").json()["outcomes_pending"] >= 2  # batch-4 and the anonymous


# -- API keys --------------------------------------------------------------------------------
WRITES = (("/decisions", {"id": "auth-never", "x": X}),
          ("/outcomes", {"id": "auth-never", "outcome": 1.0}),
          ("/publish", None))


def test_writes_refuse_no_key_a_malformed_key_and_a_wrong_key(server, client):
    key_id, secret = server.key.split("_", 2)[1:]
    headers = {
        "no key": ({}, "needs an API key"),
        "not bearer": ({"Authorization": f"Token {server.key}"}, "needs an API key"),
        "malformed": ({"Authorization": "Bearer letmein"}, "malformed"),
        "wrong secret": ({"Authorization": f"Bearer sat_{key_id}_{secret[::-1]}"},
                         "not valid"),
        "mistyped": ({"Authorization": f"Bearer {server.key[:-1]}"}, "not valid"),
        "unknown id": ({"Authorization": f"Bearer sat_{'0' * 12}_{secret}"}, "not valid"),
    }
    before = counts(client)
    with httpx.Client(base_url=server.url, timeout=30) as anyone:
        for path, body in WRITES:
            for case, (header, words) in headers.items():
                r = anyone.post(path, json=body, headers=header)
                assert r.status_code == 401, (path, case, r.text)
                refused(r, 401, words)
    assert counts(client) == before
    assert unknown(client, "auth-never")


def test_a_revoked_key_stops_working_within_the_cache_time(server, client, capsys):
    assert main(["serve", "keys", "create", "--name", "to-revoke",
                 "--database", server.database]) == 0
    out, err = capsys.readouterr()
    key = out.strip()
    assert key.startswith("sat_") and err == ("sat serve: scopes decide,report, expires never; "
                                              "keep this key: only its hash is stored\n")
    key_id = key.split("_")[1]
    body = {"id": "revoke-unknown", "outcome": 0.0}  # the key works: the decision is unknown
    with httpx.Client(base_url=server.url, timeout=30,
                      headers={"Authorization": f"Bearer {key}"}) as c:
        refused(c.post("/outcomes", json=body), 404, "revoke-unknown")
        assert main(["serve", "keys", "revoke", key_id, "--database", server.database]) == 0
        revoked = time.monotonic()
        assert capsys.readouterr().out == f"revoked {key_id}\n"
        while (r := c.post("/outcomes", json=body)).status_code == 404:
            assert time.monotonic() - revoked < keys.CACHE_SECONDS + 0.5, "key still works"
            time.sleep(0.05)
        refused(r, 401, "not valid")
    refused(client.post("/outcomes", json=body), 404)  # the other key still works
    assert main(["serve", "keys", "revoke", key_id, "--database", server.database]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an active key" in err
    assert main(["serve", "keys", "list", "--database", server.database]) == 0
    assert f"{key_id}\trevoked\tto-revoke\tdecide,report\texpires never\t" in \
        capsys.readouterr().out


def test_keys_list_never_prints_a_secret(server, capsys):
    assert main(["serve", "keys", "create", "--name", "listed",
                 "--database", server.database]) == 0
    key = capsys.readouterr().out.strip()
    assert main(["serve", "keys", "list", "--database", server.database]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert f"{key.split('_')[1]}\tactive\tlisted\tdecide,report\t" in out
    assert f"{server.key.split('_')[1]}\tactive\ttests\tdecide,report,explain,admin\t" in out
    for k in (key, server.key):
        secret = k.split("_", 2)[2]
        assert len(secret) >= 40 and secret not in out
        assert hashlib.sha256(k.encode()).hexdigest() not in out


def test_the_database_keeps_only_a_hash_of_a_key(server):
    secret = server.key.split("_", 2)[2]
    engine = store.connect(server.database)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(store.api_keys)).all()
            stored = conn.execute(sa.text("SELECT * FROM api_keys")).all()
    finally:
        engine.dispose()
    assert hashlib.sha256(server.key.encode()).hexdigest() in {r.hash for r in rows}
    text = repr(stored)
    assert secret not in text and server.key not in text
    assert secret[:16] not in text  # nor a recognisable part of it


# -- bad input -------------------------------------------------------------------------------
def test_bad_decisions_are_refused_in_one_line_and_change_nothing(client):
    before = counts(client)
    many = [{"id": f"bad-many-{k}", "x": X} for k in range(MAX_BATCH + 1)]
    cases = [
        ({"id": "bad-short", "x": [0.1, 0.2]}, ("x has 2 features", f"decides on {D}")),
        ({"id": "bad-long", "x": [0.1] * 4}, ("x has 4 features",)),
        ('{"id": "bad-nan", "x": [NaN, 0.2, 0.3]}', ("x.0", "finite")),
        ('{"id": "bad-inf", "x": [0.1, Infinity, 0.3]}', ("x.1", "finite")),
        ('{"id": "bad-minf", "x": [0.1, 0.2, -Infinity]}', ("x.2", "finite")),
        ({"id": "bad-text", "x": ["a", 0.2, 0.3]}, ("x.0", "number")),
        ({"id": "bad-missing"}, ("(x, and optionally id)",)),
        ({"id": "bad-extra", "x": X, "colour": "red"}, ("colour", "not permitted")),
        ({"id": "", "x": X}, ("id",)),
        ({"id": "bad-both", "x": X, "applicants": [{"x": X}]}, ("not both",)),
        ({"applicants": [{"id": "bad-b0", "x": X}, {"id": "bad-b1", "x": [0.1]}]},
         ("applicants.1.x has 1 features",)),
        ('{"applicants": [{"id": "bad-b2", "x": [0.1, 0.2, 0.3]}, '
         '{"id": "bad-b3", "x": [0.1, 0.2, NaN]}]}', ("applicants.1.x.2", "finite")),
        ({"applicants": [{"id": "bad-b4", "x": X}, {"id": "bad-b5"}]},
         ("applicants.1.x", "required")),
        ({"applicants": [{"id": "bad-b6", "x": X}, {"id": "bad-b7", "x": X, "y": 1}]},
         ("applicants.1.y", "not permitted")),
        ({"applicants": [{"id": "bad-b8", "x": X}], "id": "bad-b9"}, ("id belongs",)),
        ({"applicants": []}, ("applicants has 0 entries", "max_batch")),
        ({"applicants": many}, (f"applicants has {MAX_BATCH + 1} entries",
                                f"from 1 to {MAX_BATCH}", "max_batch")),
        ({"applicants": [{"id": "bad-r", "x": X}, {"id": "bad-r0", "x": X},
                         {"id": "bad-r", "x": X}]}, ("applicants", "repeats an id")),
        ("id=bad-form&x=0.1", ("JSON",)),
        ('{"id": "bad-cut", "x": [0.1,', ("JSON",)),
        ("[0.1, 0.2, 0.3]", ("body",)),
        # the decision service
        ({"id": "bad-nul\x00", "x": X}, ("id", "NUL", "cannot store")),
        ({"applicants": [{"id": "bad-n0", "x": X}, {"id": "\x00", "x": X}]},
         ("applicants.1.id", "NUL")),
        ('{"id": "bad-lone-\\ud800", "x": [0.1, 0.2, 0.3]}', ("id", "unicode")),
    ]
    for body, words in cases:
        r = raw(client, "/decisions", body) if isinstance(body, str) else \
            client.post("/decisions", json=body)
        assert 400 <= r.status_code < 500, (body, r.text)
        refused(r, r.status_code, *words)
    assert counts(client) == before
    for id_ in ("bad-b0", "bad-b2", "bad-b4", "bad-b6", "bad-b8", "bad-r0", "bad-many-0",
                "bad-extra", "bad-n0"):
        assert unknown(client, id_), id_


def test_bad_outcomes_are_refused_in_one_line_and_change_nothing(client):
    accepted(client, "bado-1", "bado-2")
    assert client.post("/outcomes", json={"id": "bado-1", "outcome": 0.5}).status_code == 200
    before = counts(client)
    many = [{"id": "bado-2", "outcome": 0.1}] * (MAX_BATCH + 1)
    cases = [
        ({"id": "bado-2"}, 422, ("needs both id and outcome",)),
        ({"outcome": 0.1}, 422, ("needs both id and outcome",)),
        ('{"id": "bado-2", "outcome": NaN}', 422, ("outcome", "finite")),
        ('{"id": "bado-2", "outcome": -Infinity}', 422, ("outcome", "finite")),
        ({"id": "bado-2", "outcome": "good"}, 422, ("outcome", "number")),
        ({"id": "bado-2", "outcome": 0.1, "note": "x"}, 422, ("note", "not permitted")),
        ({"id": "bado-2", "outcome": 0.1, "outcomes": []}, 422, ("not both",)),
        ({"outcomes": [{"id": "bado-2", "outcome": 0.1}, {"id": "bado-1"}]}, 422,
         ("outcomes.1.outcome", "required")),
        ('{"outcomes": [{"id": "bado-2", "outcome": 0.1}, {"id": "bado-1", "outcome": NaN}]}',
         422, ("outcomes.1.outcome", "finite")),
        ({"outcomes": [{"id": "bado-2", "outcome": 0.1, "when": 3}]}, 422,
         ("outcomes.0.when", "not permitted")),
        ({"outcomes": []}, 422, ("outcomes has 0 entries", "max_batch")),
        ({"outcomes": many}, 422, (f"outcomes has {MAX_BATCH + 1} entries", "max_batch")),
        ({"outcomes": [{"id": "bado-2", "outcome": 0.1}, {"id": "bado-2", "outcome": 0.1}]},
         422, ("repeats an id",)),
        ("outcome: 0.1", 422, ("JSON",)),
        ({"id": "bado-nobody", "outcome": 0.1}, 404, ("'bado-nobody'", "unknown")),
        ({"outcomes": [{"id": "bado-2", "outcome": 0.1},
                       {"id": "bado-nobody", "outcome": 0.1}]}, 404, ("'bado-nobody'",)),
        ({"id": "bado-1", "outcome": 0.6}, 409, ("'bado-1'", "already has outcome 0.5")),
        ({"outcomes": [{"id": "bado-2", "outcome": 0.1}, {"id": "bado-1", "outcome": 0.7}]},
         409, ("'bado-1'", "cannot be changed")),
        # the decision service
        ({"id": "bado-2\x00", "outcome": 0.1}, 422, ("id", "NUL")),
        ({"outcomes": [{"id": "bado-2", "outcome": 0.1}, {"id": "\x00", "outcome": 0.1}]}, 422,
         ("outcomes.1.id", "NUL")),
    ]
    for body, status, words in cases:
        r = raw(client, "/outcomes", body) if isinstance(body, str) else \
            client.post("/outcomes", json=body)
        refused(r, status, *words)
    assert counts(client) == before
    # Nothing of the refused batches was kept: bado-2 takes another value than they gave.
    r = client.post("/outcomes", json={"id": "bado-2", "outcome": 0.25})
    assert r.json() == {"id": "bado-2", "recorded": "now"}


def test_a_decision_id_reused_for_other_features_is_a_conflict(client):
    first = decide(client, "reuse-1", [0.1, 0.2, 0.3])
    before = counts(client)
    refused(client.post("/decisions", json={"id": "reuse-1", "x": [0.1, 0.2, 0.31]}), 409,
            "'reuse-1'", "other features")
    refused(client.post("/decisions", json={"applicants": [
        {"id": "reuse-new", "x": X}, {"id": "reuse-1", "x": [0.3, 0.2, 0.1]}]}), 409,
        "'reuse-1'")
    assert counts(client) == before
    assert unknown(client, "reuse-new")
    assert decide(client, "reuse-1", [0.1, 0.2, 0.3]) == first


def test_an_outcome_of_a_rejection_is_a_conflict_under_apple_tasting(rejecting):
    with rejecting.client() as c:
        assert c.get("/policy").json()["learner"] == "reject-all"
        made = decide(c, "rejected-1", [0.9, 0.9, 0.9])
        assert made["accepted"] is False
        decide(c, "rejected-2")
        refused(c.post("/outcomes", json={"id": "rejected-1", "outcome": 1.0}), 409,
                "'rejected-1'", "rejection")
        refused(c.post("/outcomes", json={"outcomes": [
            {"id": "rejected-2", "outcome": 1.0}]}), 409, "'rejected-2'", "rejection")
        metrics = c.get("/metrics").json()
    assert (metrics["decisions"], metrics["accepted"], metrics["outcomes"],
            metrics["outcomes_pending"]) == (2, 0, 0, 0)


def _oversized() -> str:
    """A valid request, padded (JSON allows trailing spaces) to more than MAX_BODY bytes."""
    body = '{"applicants": [{"id": "huge-1", "x": [0.1, 0.2, 0.3]}]}'
    return body + " " * (MAX_BODY + 1 - len(body))


def test_a_body_over_max_body_is_413(client):
    before = counts(client)
    r = raw(client, "/decisions", _oversized())
    refused(r, 413, "max_body")
    assert counts(client) == before and unknown(client, "huge-1")


def test_a_chunked_body_over_max_body_is_413(client):
    before = counts(client)
    text = _oversized().encode()
    chunks = (text[k:k + 1024] for k in range(0, len(text), 1024))
    r = client.post("/decisions", content=chunks, headers={"content-type": "application/json"})
    assert counts(client) == before and unknown(client, "huge-1")
    refused(r, 413, "max_body")


#: Bodies in a form the service does not read: (headers, body, status, words). Each refusal
#: says what is expected.
EXPECTED = "Content-Type: application/json, as UTF-8, uncompressed"
FORMS = [
    # the decision service
    ({"content-type": "text/plain"}, b'{"id": "form-1", "x": [0.1, 0.2, 0.3]}', 415,
     ("Content-Type 'text/plain'", EXPECTED)),
    ({"content-type": "application/x-www-form-urlencoded"}, b"id=form-2&x=0.1", 415,
     ("Content-Type", EXPECTED)),
    ({}, b'{"id": "form-3", "x": [0.1, 0.2, 0.3]}', 415, ("no Content-Type", EXPECTED)),
    ({"content-type": "application/json", "content-encoding": "gzip"},
     gzip.compress(b'{"id": "form-4", "x": [0.1, 0.2, 0.3]}'), 415,
     ("Content-Encoding 'gzip'", EXPECTED)),
    ({"content-type": "application/json; charset=latin-1"},
     '{"id": "form-5-caf\u00e9", "x": [0.1, 0.2, 0.3]}'.encode("latin-1"), 415,
     ("charset 'latin-1'", EXPECTED)),
    ({"content-type": "application/json"},
     '{"id": "form-6-caf\u00e9", "x": [0.1, 0.2, 0.3]}'.encode("latin-1"), 400,
     ("not UTF-8", "byte 0xe9 at position 18", EXPECTED)),
    ({"content-type": "application/json"},
     '{"id": "form-7", "x": [0.1, 0.2, 0.3]}'.encode("utf-16"), 400, ("not UTF-8", EXPECTED)),
    ({"content-type": "application/json"},
     '{"id": "form-8", "x": [0.1, 0.2, 0.3]}'.encode("utf-16-le"), 400, ("NUL byte", EXPECTED)),
]


def test_a_body_in_another_form_is_refused_saying_what_is_expected(client):
    before = counts(client)
    for path in ("/decisions", "/outcomes"):
        for headers, body, status, words in FORMS:
            r = client.post(path, content=body, headers=headers)
            refused(r, status, *words)
    assert counts(client) == before
    for k in range(1, 9):
        assert unknown(client, f"form-{k}")
    # The accepted form, with its charset said: decided.
    r = client.post("/decisions", content=b'{"id": "form-ok", "x": [0.1, 0.2, 0.3]}',
                    headers={"content-type": 'application/json; charset="UTF-8"'})
    assert r.status_code == 200, r.text


def test_a_body_trickled_in_is_cut_off_at_the_body_deadline(serve):
    """A client that sends its body a byte at a time holds no connection past
    ``--body-timeout`` (1 s here): 408, and the connection is closed."""
    import socket

    server = serve("--body-timeout", "1")
    head = (f"POST /decisions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n"
            "Content-Type: application/json\r\nContent-Length: 60\r\n\r\n{")
    with socket.create_connection(("127.0.0.1", server.port), timeout=0.2) as s:
        s.sendall(head.encode())
        started, answer = time.monotonic(), b""
        while time.monotonic() - started < 8:
            try:
                s.sendall(b" ")
                chunk = s.recv(4096)
            except TimeoutError:
                continue
            except OSError:  # reset: the server closed the connection
                break
            if not chunk:
                break
            answer += chunk
        held = time.monotonic() - started
    assert held < 3, f"the connection was held {held:.1f} s"
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"body_timeout" in answer and b"connection: close" in answer.lower(), answer
    with server.client() as c:  # and the service goes on
        assert c.post("/decisions", json={"id": "after-slow", "x": X}).status_code == 200


def test_a_write_without_a_key_is_401_whatever_its_body(server):
    with httpx.Client(base_url=server.url, timeout=30) as anyone:
        refused(anyone.post("/decisions", json={"x": X, "colour": "red"}), 401, "API key")


def test_an_unknown_path_or_method_answers_in_the_error_format(client):
    refused(client.get("/decisions"), 405)
    refused(client.get("/nothing-here"), 404)


# -- retries ---------------------------------------------------------------------------------
def test_a_retried_decision_gets_the_same_decision_and_no_new_row(client):
    first = decide(client, "retry-d", [0.4, 0.5, -0.6])
    before = counts(client)
    assert decide(client, "retry-d", [0.4, 0.5, -0.6]) == first
    r = client.post("/decisions", json={"applicants": [{"id": "retry-d", "x": [0.4, 0.5, -0.6]},
                                                       {"id": "retry-e", "x": X}]})
    assert r.status_code == 200, r.text
    assert r.json()["decisions"][0] == first
    after = counts(client)
    assert after["decisions"] == before["decisions"] + 1  # retry-e only


def test_a_retried_outcome_is_acknowledged_and_learned_once(client):
    accepted(client, "retry-o")
    start = settled(client)
    r = client.post("/outcomes", json={"id": "retry-o", "outcome": 0.3})
    assert r.json() == {"id": "retry-o", "recorded": "now"}
    once = settled(client)
    assert once["outcomes_learned"] == start["outcomes_learned"] + 1
    assert once["outcomes"] == start["outcomes"] + 1
    r = client.post("/outcomes", json={"id": "retry-o", "outcome": 0.3})
    assert r.status_code == 200 and r.json() == {"id": "retry-o", "recorded": "already"}
    r = client.post("/outcomes", json={"outcomes": [{"id": "retry-o", "outcome": 0.3}]})
    assert r.json() == {"outcomes": [{"id": "retry-o", "recorded": "already"}]}
    again = settled(client)
    assert (again["outcomes_learned"], again["outcomes"]) == (once["outcomes_learned"],
                                                              once["outcomes"])


# -- privacy ---------------------------------------------------------------------------------
def test_public_endpoints_never_show_features_outcomes_or_ids(server, client):
    features = [[0.123456789, -0.234567891, 0.345678912], [0.456789123, 0.567891234, -0.6789]]
    outcomes = [0.987654321, -0.876543219]
    secrets = ["123456789", "234567891", "345678912", "456789123", "567891234", "987654321",
               "876543219", "private-applicant"]
    before = counts(client)
    r = client.post("/decisions", json={"applicants": [
        {"id": f"private-applicant-{k}", "x": x} for k, x in enumerate(features)]})
    assert all(d["accepted"] for d in r.json()["decisions"]), r.text
    r = client.post("/outcomes", json={"outcomes": [
        {"id": f"private-applicant-{k}", "outcome": y} for k, y in enumerate(outcomes)]})
    assert r.status_code == 200, r.text
    metrics = settled(client)
    assert metrics["decisions"] == before["decisions"] + 2  # they are there...
    assert metrics["outcomes"] == before["outcomes"] + 2
    with httpx.Client(base_url=server.url, timeout=30) as anyone:  # ...and never shown
        for path in ("/", "/policy", "/policy/history", "/metrics", "/health", "/openapi.json",
                     "/docs"):
            r = anyone.get(path)
            assert r.status_code == 200, (path, r.text)
            for secret in secrets:
                assert secret not in r.text, (path, secret)


# -- the command line ------------------------------------------------------------------------
@pytest.fixture
def no_serving(monkeypatch):
    """``sat serve`` in process: it must fail before it listens (if not, the test fails here
    rather than serving for ever)."""
    uvicorn = pytest.importorskip("uvicorn")

    def run(*args, **kwargs):
        raise AssertionError("sat serve started to serve")
    monkeypatch.setattr(uvicorn, "run", run)


def _unwritable(folder: Path, monkeypatch) -> None:
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root writes anywhere: see the folder as others would
        real = os.access
        monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if (
            Path(path) == folder and mode & os.W_OK) else real(path, mode, *a, **k))


BAD_CONFIGURATIONS = {
    "missing learner parameter": (["--learner", "sa-ols", "--param", "r0=0"],
                                  ("params.delta", "must be given")),
    "bad cadence": ([*SA_OLS, "--publish", "often"], ("publish must be one of", "'often'")),
    "unwritable database directory": (SA_OLS, ("is not writable",)),
    "unknown config setting": (["--config", "{tmp}/service.toml"],
                               ("unknown setting 'colour'",)),
}


@pytest.mark.parametrize("case", BAD_CONFIGURATIONS)
def test_serve_refuses_a_bad_configuration_in_one_line(case, tmp_path, capsys, monkeypatch,
                                                       no_serving):
    flags, words = BAD_CONFIGURATIONS[case]
    folder = tmp_path / "data"
    if case == "unwritable database directory":
        _unwritable(folder, monkeypatch)
    else:
        folder.mkdir()
    (tmp_path / "service.toml").write_text('learner = "sa-ols"\ndimension = 3\n'
                                           'colour = "red"\n[params]\ndelta = 0.3\nr0 = 0\n')
    flags = [f.replace("{tmp}", str(tmp_path)) for f in flags]
    try:
        status = main(["serve", *flags, "--dimension", "3", "--port", str(free_port()),
                       "--database", f"sqlite:///{folder}/service.db"])
    finally:
        folder.chmod(0o755)
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith("sat: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)
    assert list(folder.iterdir()) == []  # no database made


def test_a_restart_with_another_learner_or_dimension_is_refused(server, client, capsys,
                                                                no_serving):
    rule = client.get("/policy").json()
    shifted = ["--learner", "shifted-ols", "--param", "delta=0.3", "--param", "r0=0",
               "--param", 'feedback="apple"', "--dimension", "3"]
    for flags, words in (([*SA_OLS, "--dimension", "4"], ("created with dimension = 3",
                                                          "this start gives 4")),
                         (shifted, ("created with learner = 'sa-ols'", "'shifted-ols'")),
                         ([*SA_OLS, "--dimension", "3", "--seed", "5"], ("seed = 0",))):
        status = main(["serve", *flags, "--database", server.database,
                       "--port", str(free_port())])
        out, err = capsys.readouterr()
        assert status == 2 and out == "", err
        assert err.startswith("sat: error: ") and err.count("\n") == 1, err
        for word in words:
            assert word in err, (word, err)
    assert client.get("/policy").json() == rule
    assert client.get("/health").json()["status"] == "ok"


def test_keys_take_the_database_given_before_the_subcommand(server, tmp_path, capsys,
                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    status = main(["serve", "--database", server.database, "keys", "list"])
    out = capsys.readouterr().out
    assert not (tmp_path / "sat-service.db").exists()
    assert status == 0 and f"{server.key.split('_')[1]}\tactive\ttests" in out


# -- a learner that cannot learn what it is given ---------------------------------------------
def test_huge_values_neither_stop_the_learner_nor_hang_a_publication(serve):
    server = serve("--publish", "manual")
    big = 1e308
    with server.client() as c:
        r = c.post("/decisions", json={"applicants": [
            {"id": f"big-{k}", "x": [big if j != k else -big for j in range(D)]}
            for k in range(D + 1)]})
        if r.status_code == 200:
            c.post("/outcomes", json={"outcomes": [
                {"id": f"big-{k}", "outcome": big * (-1) ** k} for k in range(D + 1)]})
        else:
            refused(r, 422, "x")
        try:
            published = c.post("/publish", timeout=3).status_code
        except httpx.ReadTimeout:
            published = "no answer in 3 s"
        health = c.get("/health")
    assert published == 200
    assert health.status_code == 200, health.text


# -- publishing (last: the only test that changes the shared server's rule) --------------------
def test_publish_learns_the_outcomes_and_changes_the_rule(client):
    warm = client.get("/policy").json()
    assert warm["beta"] == [0.0] * D and warm["threshold"] < 0  # accept everyone
    history = client.get("/policy/history").json()["rules"]
    theta = [1.0, -0.5, 0.25]
    xs = [[0.5, 0.1, -0.2], [-0.3, 0.4, 0.2], [0.2, -0.1, 0.6], [0.6, 0.3, 0.1],
          [-0.1, -0.5, 0.3]]
    r = client.post("/decisions", json={"applicants": [
        {"id": f"learn-{k}", "x": x} for k, x in enumerate(xs)]})
    made = r.json()["decisions"]
    assert all(d["accepted"] and d["version"] == warm["version"] for d in made), r.text
    r = client.post("/outcomes", json={"outcomes": [
        {"id": f"learn-{k}", "outcome": sum(t * v for t, v in zip(theta, x, strict=True))}
        for k, x in enumerate(xs)]})
    assert r.status_code == 200, r.text

    r = client.post("/publish")
    assert r.status_code == 200, r.text
    rule = r.json()
    assert rule["version"] == warm["version"] + 1
    assert rule["beta"] != warm["beta"] and all(math.isfinite(b) for b in rule["beta"])
    assert math.isfinite(rule["threshold"]) and rule["threshold"] >= 0  # δ‖β‖ + r0
    assert client.get("/policy").json() == rule
    assert client.get("/policy/history").json()["rules"] == [*history, rule]
    metrics = client.get("/metrics").json()  # a publication first learns all that is logged
    assert metrics["outcomes_learned"] == metrics["outcomes"] and metrics["learner_lag"] == 0
    assert metrics["rule_version"] == rule["version"]
    assert f"version {rule['version']}" in client.get("/operator").text

    # Decisions now follow the new rule; a retry keeps the decision it had.
    beta = rule["beta"]
    norm = math.sqrt(sum(b * b for b in beta))
    scale = (abs(rule["threshold"]) + 1) / norm ** 2
    assert decide(client, "after-up", [b * scale for b in beta]) == {
        "id": "after-up", "accepted": True, "version": rule["version"]}
    assert decide(client, "after-down", [-b * scale for b in beta]) == {
        "id": "after-down", "accepted": False, "version": rule["version"]}
    assert decide(client, "learn-0", xs[0]) == made[0]

    # Nothing new learned: the next publication is a new version of the same rule.
    again = client.post("/publish").json()
    assert again["version"] == rule["version"] + 1
    assert (again["beta"], again["threshold"]) == (rule["beta"], rule["threshold"])


def test_a_decision_id_with_a_slash_is_refused_and_head_policy_is_answered(client):
    """An id GET /decisions/{id} could not address is refused when it is decided (the
    control: the same id without the slash is decided); HEAD /policy answers as GET does."""
    refused = client.post("/decisions", json={"id": "a/b", "x": [0.1, 0.2, 0.3]})
    assert refused.status_code == 422 and "contains '/'" in refused.json()["error"]
    assert client.post("/decisions", json={"id": "a-b", "x": [0.1, 0.2, 0.3]}
                       ).status_code == 200
    head = client.head("/policy")
    assert head.status_code == 200 and head.content == b""


def test_a_body_just_over_the_default_max_body_gets_its_413_not_a_reset(serve):
    """A body a little over the default max_body (4 MiB), sent whole with its length: the
    client reads the 413. Answered before the body was read, the connection closed with most
    of it unread, and the client's send got a reset instead of the answer."""
    server = serve()
    key = server.key
    limit = 4 * 1024 * 1024
    body = b'{"id": "big", "x": [0.1, 0.2, 0.3]}'.ljust(limit + 100_000)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"POST /decisions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode() + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"(max_body)" in answer, answer


@pytest.mark.parametrize(("text", "status", "line"), [
    ('{"id": "twice", "x": [0.1, 0.2, 0.3], "x": [9.0, 9.0, 9.0]}', 422,
     "key 'x' is given twice in one object of the body: give each key once"),
    ('{"applicants": [{"id": "twice-b", "x": [0.1, 0.2, 0.3], "id": "other"}]}', 422,
     "key 'id' is given twice in one object of the body: give each key once"),
    ('{"id": "deep", "x": ' + "[" * 3_000 + "]" * 3_000 + "}", 400,
     "the body nests arrays or objects too deeply to read (a request needs a few levels)"),
])
def test_a_body_with_two_meanings_or_no_reading_is_refused_saying_why(client, text, status,
                                                                      line):
    """A key given twice took its last value without a word (the applicant decided on
    features the client may not have meant); a body nested 3,000 deep got a 400 with no
    reason. Both are refused before anything is written, saying why. (3,000 levels: past
    the parser's depth, within this server's max_body.)"""
    before = counts(client)
    assert refused(raw(client, "/decisions", text), status) == line
    assert counts(client) == before and unknown(client, "twice") and unknown(client, "deep")


def test_whoami_names_the_key_and_its_scopes_and_needs_one(server, client):
    doc = client.get("/whoami").json()
    assert doc == {"key": server.key.split("_")[1], "scopes": list(keys.SCOPES)}, doc
    refused(httpx.get(f"{server.url}/whoami"), 401, "API key")  # the control: no key
    refused(httpx.get(f"{server.url}/whoami", headers={"Authorization": "Bearer sat_x_y"}),
            401)
