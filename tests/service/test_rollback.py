"""Rollback: an earlier rule put back in force, under load, as a new version that names the
one it restores; nothing acknowledged is lost, the learner keeps learning, the log replays."""

from __future__ import annotations

import threading
import time

import numpy as np
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import store

from .conftest import wait_learned


def _teach(client, tag: str, slope: float, learned: int) -> dict:
    """Eight accepted decisions whose outcomes rise with x0 by ``slope``, then a publication."""
    xs = [[0.2 * k - 0.5, 0.1, -0.1] for k in range(8)]
    done = client.post("/decisions", json={"applicants": [
        {"id": f"{tag}-{k}", "x": x} for k, x in enumerate(xs)]}).json()["decisions"]
    client.post("/outcomes", json={"outcomes": [
        {"id": d["id"], "outcome": slope * xs[k][0] + 0.1}
        for k, d in enumerate(done) if d["accepted"]]}).raise_for_status()
    wait_learned(client, learned + sum(d["accepted"] for d in done))
    return client.post("/publish").json()


def test_a_rollback_under_load_restores_a_rule_and_loses_nothing(serve, tmp_path, capsys):
    server = serve("--publish", "manual")
    key_file = tmp_path / "key"
    key_file.write_text(server.key)
    with server.client() as c:
        first = _teach(c, "a", 2.0, 0)
        learned = c.get("/metrics").json()["outcomes_learned"]
        second = _teach(c, "b", -4.0, learned)
        assert second["beta"] != first["beta"]
    acknowledged: list[str] = []
    stop = threading.Event()

    def load(worker: int) -> None:
        rng = np.random.default_rng(worker)
        with server.client() as c:
            k = 0
            while not stop.is_set():
                batch = [{"id": f"load-{worker}-{k + j}", "x": rng.uniform(-1, 1, 3).tolist()}
                         for j in range(20)]
                answer = c.post("/decisions", json={"applicants": batch})
                if answer.status_code == 200:
                    acknowledged.extend(d["id"] for d in answer.json()["decisions"])
                k += 20

    threads = [threading.Thread(target=load, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.3)
        status = main(["serve", "rollback", str(first["version"]), "--url", server.url,
                       "--key-file", str(key_file)])
        time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert status == 0
    assert capsys.readouterr().out.startswith(
        f"rule version {second['version'] + 1} is in force: it restores version "
        f"{first['version']}")
    with server.client() as c:
        policy = c.get("/policy").json()
        assert policy["version"] == second["version"] + 1 and policy["restores"] == \
            first["version"]
        assert policy["beta"] == first["beta"] and policy["threshold"] == first["threshold"]
        # Refusals: without a key (401), the rule in force (409), a version never published
        # (404), each one line.
        import httpx

        assert httpx.post(f"{server.url}/rollback", json={"version": 1}).status_code == 401
        assert c.post("/rollback", json={"version": policy["version"]}).status_code == 409
        missing = c.post("/rollback", json={"version": 99})
        assert missing.status_code == 404 and missing.json()["error"] == (
            "rule version 99 was never published: GET /policy/history lists them")
        # The learner keeps learning: its next publication is its own rule again.
        learned = c.get("/metrics").json()["outcomes_learned"]
        after = _teach(c, "c", 1.0, learned)
        assert after["version"] == policy["version"] + 1 and after["restores"] is None
    assert main(["serve", "rollback", "99", "--url", server.url, "--key-file",
                 str(key_file)]) == 1
    assert capsys.readouterr().err.strip() == ("sat serve rollback: the service answered 404: "
                                                "rule version 99 was never published: GET "
                                                "/policy/history lists them")
    server.stop()
    engine = store.connect(server.database)
    with engine.connect() as conn:
        ids = set(conn.execute(sa.select(store.decisions.c.id)).scalars())
        rows = conn.execute(sa.select(store.rules.c.version, store.rules.c.key_id,
                                      store.rules.c.source)
                            .where(store.rules.c.restores.is_not(None))).all()
    engine.dispose()
    assert acknowledged and set(acknowledged) <= ids  # nothing acknowledged is lost
    assert len(acknowledged) == len(set(acknowledged))
    assert [(r.version, r.source) for r in rows] == [(policy["version"], "rollback")]
    assert rows[0].key_id is not None  # audited: the key that asked
    assert main(["serve", "check", "--database", server.database]) == 0
