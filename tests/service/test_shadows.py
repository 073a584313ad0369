"""Candidates on a live service: shadows attached and detached by name under load and
replayed in place; a canary's share of decisions, logged with its name and propensity, filed
with the live learner as the live rule would have observed it; a shadow's rule promoted."""

from __future__ import annotations

import base64
import json
import threading
import time

import numpy as np
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.learners import learner_class, make_learner
from strategic_apple_tasting.persistence import dumps
from strategic_apple_tasting.service import learning, settings, store
from strategic_apple_tasting.service.deciding import CANARY_STREAM, coin

from .test_rollback import _teach

SHADOW = ["--shadow", "sa-ols", "--shadow-param", "delta=0.1", "--shadow-param", "r0=0"]
CANDIDATE = ["--learner", "sa-ols", "--param", "delta=0.1", "--param", "r0=0"]


def _base(tmp_path, slope: float = -2.0):
    """A saved SA-OLS learner taught that outcomes fall with x0 (the live rule, taught the
    opposite, accepts what it rejects): the shadows' parameters, nothing pending."""
    learner = make_learner("sa-ols", delta=0.1, r0=0, feedback="apple").reset(
        3, np.random.default_rng(1))
    learner.publish(time=0)
    rng = np.random.default_rng(0)
    for k in range(40):
        x = rng.uniform(-1, 1, 3)
        decided = learner.decide(x, time=k + 1)
        if decided.accepted:
            learner.report(decided.id, slope * x[0] + 0.1)
    learner.publish(time=100)
    path = tmp_path / "base.sat"
    path.write_bytes(dumps(learner))
    return path


def _rows(database: str, query):
    engine = store.connect(database)
    try:
        with engine.connect() as conn:
            return conn.execute(query).all()
    finally:
        engine.dispose()


def test_shadows_attach_and_detach_under_load_and_every_replay_rebuilds_them(
        serve, tmp_path, capsys):
    server = serve("--publish", "manual", *SHADOW)
    key_file = tmp_path / "key"
    key_file.write_text(server.key)
    base = _base(tmp_path)
    cli = ["--url", server.url, "--key-file", str(key_file)]
    with server.client() as c:
        _teach(c, "a", 2.0, 0)
    stop = threading.Event()

    def load(worker: int) -> None:
        rng = np.random.default_rng(worker)
        with server.client() as c:
            k = 0
            while not stop.is_set():
                xs = rng.uniform(-1, 1, (20, 3))
                answer = c.post("/decisions", json={"applicants": [
                    {"id": f"load-{worker}-{k + j}", "x": x.tolist()} for j, x in enumerate(xs)]})
                if answer.status_code == 200:
                    done = answer.json()["decisions"]
                    c.post("/outcomes", json={"outcomes": [
                        {"id": d["id"], "outcome": float(xs[j][0])}
                        for j, d in enumerate(done) if d["accepted"]]})
                k += 20

    threads = [threading.Thread(target=load, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.3)
        fresh = main(["serve", "shadows", "attach", "fresh", *CANDIDATE, *cli])
        time.sleep(0.3)
        with server.client() as c:
            c.post("/publish").raise_for_status()
        based = main(["serve", "shadows", "attach", "based", *CANDIDATE, "--base", str(base),
                      *cli])
        time.sleep(0.3)
        with server.client() as c:
            c.post("/publish").raise_for_status()
        gone = main(["serve", "shadows", "detach", "fresh", *cli])
        time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert (fresh, based, gone) == (0, 0, 0)
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" at log position")[0] for line in out] == [
        "shadow 'fresh' attached", "shadow 'based' attached", "shadow 'fresh' detached"]
    with server.client() as c:
        assert [s["name"] for s in c.get("/shadows").json()["shadows"]] == ["shadow", "based"]
        figures = c.get("/metrics").json()["shadows"]
        assert set(figures) == {"shadow", "based"}
        assert figures["based"]["decisions"] > 0 and 0 <= figures["based"]["agreement"] <= 1
        # the base had published two; one at its attach, one beside /publish
        assert figures["based"]["rule_version"] == 4
        assert set(figures["based"]["estimate"]) & {"ips", "refused"}
        # Every bad input is one line.
        import httpx

        assert httpx.post(f"{server.url}/shadows", json={"name": "x", "learner": "sa-ols"}
                          ).status_code == 401
        refusals = [
            (c.post("/shadows", json={"name": "based", "learner": "sa-ols"}), 409,
             "shadow 'based' was attached before (a name is used once: its rows keep it): "
             "give another name"),
            (c.post("/shadows", json={"name": "fresh", "learner": "sa-ols"}), 409,
             "shadow 'fresh' was attached before (a name is used once: its rows keep it): "
             "give another name"),
            (c.post("/shadows", json={"name": "shadow", "learner": "sa-ols"}), 409,
             "shadow 'shadow' is the settings' shadow (--shadow): give another name"),
            (c.post("/shadows/detach", json={"name": "shadow"}), 409,
             "shadow 'shadow' is the settings' shadow (--shadow): it goes with the settings, "
             "not on a live service"),
            (c.post("/shadows/detach", json={"name": "nobody"}), 404,
             "no shadow is attached as 'nobody': GET /shadows lists them"),
            (c.post("/promote", json={"name": "fresh"}), 404,
             "no shadow is attached as 'fresh': GET /shadows lists them"),
            (c.post("/shadows", json={"name": "a b", "learner": "sa-ols"}), 422,
             "name: a shadow's name must be 1 to 64 letters, digits, '-', '_' or '.', got "
             "'a b'"),
            (c.post("/shadows", json={"name": "p", "learner": "os:path"}), 422,
             "learner must be a registered learner's name, got 'os:path'"),
            (c.post("/shadows", json={"name": "p", "learner": "sa-ols", "base": "%%"}), 422,
             "base must be a saved learner's bytes in base64"),
            (c.post("/shadows", json={"name": "p", "learner": "sa-ols",
                                      "params": {"delta": 0.1, "r0": 0},
                                      "base": base64.b64encode(b"not a learner").decode()}),
             422, None),
        ]
        try:
            learner_class("no-such")
        except ValueError as exc:
            refusals.append((c.post("/shadows", json={"name": "p", "learner": "no-such"}),
                             422, str(exc)))
        for answer, status, message in refusals:
            assert answer.status_code == status, answer.text
            error = answer.json()["error"]
            assert "\n" not in error and (message is None or error == message), error
        assert "the base of shadow 'p'" in refusals[9][0].json()["error"]
    assert main(["serve", "shadows", "detach", "nobody", *cli]) == 1
    assert capsys.readouterr().err.strip() == ("sat serve shadows detach: the service answered "
                                                "404: no shadow is attached as 'nobody': GET "
                                                "/shadows lists them")
    assert main(["serve", "shadows", "attach", "p", "--learner", "no-such", *cli]) == 2
    assert main(["serve", "shadows", "list", "--url", server.url]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[:2] for line in listed] == [["shadow", "sa-ols"],
                                                         ["based", "sa-ols"]]
    server.stop()
    e, sd, d = store.shadow_events, store.shadow_decisions, store.decisions
    events = _rows(server.database, sa.select(e.c.name, e.c.kind, e.c.seq, e.c.key_id)
                   .order_by(e.c.id))
    assert [(r.name, r.kind) for r in events] == [("fresh", "attach"), ("based", "attach"),
                                                  ("fresh", "detach")]
    assert all(r.key_id is not None for r in events)  # audited: the key that asked
    attached, detached = events[0].seq, events[2].seq
    seen = [r.seq for r in _rows(server.database, sa.select(sd.c.seq).where(
        sd.c.name == "fresh").order_by(sd.c.seq))]
    between = [r.seq for r in _rows(server.database, sa.select(d.c.seq).where(
        d.c.seq > attached, d.c.seq <= detached).order_by(d.c.seq))]
    assert seen == between and seen  # every decision from its attach to its detach, no other
    assert main(["serve", "check", "--database", server.database]) == 0
    capsys.readouterr()
    # A restart rebuilds every shadow in place.
    server.start()
    with server.client() as c:
        assert [s["name"] for s in c.get("/shadows").json()["shadows"]] == ["shadow", "based"]
        after = c.get("/metrics").json()["shadows"]["based"]
    assert after["decisions"] == len(_rows(server.database, sa.select(sd.c.seq).where(
        sd.c.name == "based"))) > figures["based"]["decisions"] - 1
    server.stop()
    # Control: without its detach event, the replay from nothing keeps 'fresh' attached.
    engine = store.connect(server.database)
    with store.transaction(engine) as conn:
        conn.execute(sa.delete(e).where(e.c.kind == "detach"))
    engine.dispose()
    assert main(["serve", "check", "--database", server.database]) == 1
    assert "the shadows attached (shadow, based against shadow, fresh, based)" in \
        capsys.readouterr().out


def test_a_canary_decides_its_share_and_a_promotion_puts_its_rule_in_force(
        serve, tmp_path, capsys):
    server = serve("--publish", "manual")
    key_file = tmp_path / "key"
    key_file.write_text(server.key)
    base = base64.b64encode(_base(tmp_path).read_bytes()).decode()
    attach = {"name": "flip", "learner": "sa-ols", "params": {"delta": 0.1, "r0": 0},
              "base": base, "canary": 0.25}
    rng = np.random.default_rng(3)
    ids = [f"c-{k}" for k in range(2000)]
    xs = rng.uniform(-1, 1, (len(ids), 3))
    with server.client() as c:
        _teach(c, "a", 2.0, 0)  # the live rule accepts high x0, the canary's low x0
        start = c.get("/metrics").json()["outcomes_learned"]
        c.post("/shadows", json=attach).raise_for_status()
        over = c.post("/shadows", json={**attach, "name": "more", "canary": 0.3})
        assert (over.status_code, over.json()["error"]) == (
            422, "canary 0.3 with the canaries attached (0.25) would decide over 0.5 of the "
            "applicants")
        beyond = c.post("/shadows", json={**attach, "name": "more", "canary": 0.6})
        assert (beyond.status_code, beyond.json()["error"]) == (
            422, "canary: Input should be less than or equal to 0.5 (got 0.6)")
        answers = {}
        for k in range(0, len(ids), 500):
            done = c.post("/decisions", json={"applicants": [
                {"id": i, "x": x.tolist()} for i, x in zip(ids[k:k + 500], xs[k:k + 500],
                                                            strict=True)]}).json()
            answers.update((a["id"], a) for a in done["decisions"])
        c.post("/outcomes", json={"outcomes": [
            {"id": i, "outcome": float(2 * xs[k][0] + 0.1)} for k, i in enumerate(ids)
            if answers[i]["accepted"]]}).raise_for_status()
        deadline = time.monotonic() + 60
        while (before := c.get("/metrics").json())["learner_lag"]:
            assert time.monotonic() < deadline, "the learner did not catch up in 60 s"
            time.sleep(0.05)
        d, sd = store.decisions, store.shadow_decisions
        rows = {r.id: r for r in _rows(server.database, sa.select(
            d.c.id, d.c.accepted, d.c.decided_by, d.c.rule_accepted, d.c.propensity,
            sd.c.accepted.label("flip")).select_from(d.join(sd, sd.c.decision_id == d.c.id))
            .where(sd.c.name == "flip", d.c.id.like("c-%")))}
        canaried = {i for i, r in rows.items() if r.decided_by == "flip"}
        # The draw is the id's coin on the canary's own stream (not exploration's), ...
        expected = {i for i in ids if coin(0, i, CANARY_STREAM) < 0.25}
        assert canaried == expected != {i for i in ids if coin(0, i) < 0.25}
        assert {i for i in ids if answers[i].get("canary") == "flip"} == canaried
        # ... a fair one: Binomial(2000, 0.25) has mean 500 and sd 19.4; ±5 sd.
        assert 403 <= len(canaried) <= 597 and len(rows) == len(ids)
        # Each propensity is the mixture's probability of the action taken.
        for r in rows.values():
            live = r.rule_accepted if r.decided_by else r.accepted
            p = 0.75 * live + 0.25 * r.flip
            assert r.propensity == (p if r.accepted else 1 - p), r
        # Both disagreements occur; the live learner learns only the outcomes it observed:
        # the canary's acceptances of applicants its rule rejects are not its own.
        took = sum(r.accepted and not r.rule_accepted for r in rows.values() if r.decided_by)
        refused = sum(r.rule_accepted and not r.accepted for r in rows.values() if r.decided_by)
        assert took > 0 and refused > 0
        accepted = sum(r.accepted for r in rows.values())
        assert before["outcomes_learned"] == start + accepted - took  # not start + accepted
        figures = before["shadows"]["flip"]
        assert figures["canary"] == 0.25 and figures["canary_decisions"] == len(canaried)
        # Promotion: the canary's rule goes into force, audited.
        newest = json.loads(_rows(server.database, sa.select(store.shadow_rules.c.beta).where(
            store.shadow_rules.c.name == "flip").order_by(
                store.shadow_rules.c.version.desc()).limit(1))[0].beta)
    cli = ["--url", server.url, "--key-file", str(key_file)]
    assert main(["serve", "promote", "flip", *cli]) == 0
    assert capsys.readouterr().out.startswith(
        f"rule version {before['rule_version'] + 1} is in force: shadow 'flip''s rule")
    with server.client() as c:
        policy = c.get("/policy").json()
    assert policy["beta"] == newest and policy["promotes"] == "flip"
    assert main(["serve", "promote", "nobody", *cli]) == 1
    assert capsys.readouterr().err.strip() == ("sat serve promote: the service answered 404: no "
                                                "shadow is attached as 'nobody': GET /shadows "
                                                "lists them")
    server.stop()
    r = store.rules
    promoted = _rows(server.database, sa.select(r.c.source, r.c.key_id, r.c.promotes).where(
        r.c.promotes.is_not(None)))
    assert [(p.source, p.promotes) for p in promoted] == [("promoted", "flip")]
    assert promoted[0].key_id is not None
    # Every outcome reported was taken; the live learner awaits none: a canary's rejection of
    # an applicant its rule accepts was never filed with it (filed, it would wait for ever).
    engine = store.connect(server.database)
    try:
        restored = learning.restore(engine, settings.merge(settings.read_at(server.database),
                                                           {"database": server.database}))
    finally:
        engine.dispose()
    assert restored.learner.pending() == []
    assert main(["serve", "check", "--database", server.database]) == 0
