"""The service as a lender runs it: a decision looked up and explained, declared
features (units, means, scales), the API key behind every write, Prometheus metrics, steady
publications (a minimum interval, count and time), the acceptance cap."""

from __future__ import annotations

import itertools
import json
import time

import numpy as np
import sqlalchemy as sa

from strategic_apple_tasting.game.policies import score
from strategic_apple_tasting.service import store

from .conftest import SA_OLS, httpx, wait_learned

FEATURES = """
[[features]]
name = "income"
unit = "USD/year"
definition = "yearly income before tax"
mean = 50000
scale = 20000

[[features]]
name = "debt"
unit = "USD"
definition = "outstanding debt"
mean = 10000
scale = 5000
"""


def _settings(tmp_path, extra: str = "") -> str:
    path = tmp_path / "service.toml"
    path.write_text(extra + "\n" + FEATURES)
    return str(path)


def _rule(tmp_path, beta, threshold) -> str:
    path = tmp_path / "rule.json"
    path.write_text(json.dumps({"beta": beta, "threshold": threshold}))
    return str(path)


def _key_id(key: str) -> str:
    return key.split("_")[1]


def test_a_decision_is_looked_up_and_explained_and_its_numbers_reproduce_it(serve, tmp_path):
    server = serve("--config", _settings(tmp_path), *SA_OLS, "--publish", "manual",
                   "--start-rule", _rule(tmp_path, [1.0, -0.5], 0.1), dimension=2)
    rng = np.random.default_rng(7)
    xs = np.column_stack([rng.normal(50_000, 20_000, 40), rng.normal(10_000, 5_000, 40)])
    with server.client() as c:
        done = c.post("/decisions", json={"applicants": [
            {"id": f"loan-{k}", "x": x.tolist()} for k, x in enumerate(xs)]}).json()
        accepted = [d["id"] for d in done["decisions"] if d["accepted"]]
        assert 0 < len(accepted) < len(xs)  # both kinds are explained
        assert c.post("/outcomes", json={"id": accepted[0], "outcome": 1.25}).status_code == 200
        policy = c.get("/policy").json()
        beta, threshold = np.array(policy["beta"]), policy["threshold"]
        means, scales = np.array([50_000.0, 10_000.0]), np.array([20_000.0, 5_000.0])
        for k, d in enumerate(done["decisions"]):
            doc = c.get(f"/decisions/{d['id']}").json()
            assert doc["accepted"] == d["accepted"] and doc["version"] == d["version"] == 1
            assert doc["key_id"] == _key_id(server.key)
            # The numbers reproduce the decision, bit for bit, from what the response shows
            # and from the published rule and the declared scaling.
            z = [f["standardized"] for f in doc["features"]]
            assert z == ((xs[k] - means) / scales).tolist()
            assert [f["value"] for f in doc["features"]] == xs[k].tolist()
            assert [f["weight"] for f in doc["features"]] == beta.tolist()
            assert doc["score"] == score(beta, np.array(z))
            total = 0.0
            for f in doc["features"]:
                assert f["contribution"] == f["weight"] * f["standardized"]
                total += f["contribution"]
            assert total == doc["score"]
            assert doc["threshold"] == threshold
            assert doc["margin"] == doc["score"] - threshold
            assert (doc["score"] >= doc["threshold"]) == doc["accepted"]
            if doc["accepted"]:
                assert doc["reasons"] == []
            else:
                reasons = doc["reasons"]
                lowered = sorted((f for f in doc["features"] if f["contribution"] < 0),
                                 key=lambda f: f["contribution"])
                assert [r.get("feature") for r in reasons] == (
                    [f["name"] for f in lowered] or [None])
                for r, f in zip(reasons, lowered, strict=False):
                    assert f["name"] in r["text"] and f["unit"] in r["text"]
            assert doc["outcome"] == (1.25 if d["id"] == accepted[0] else None)
        # Looked up with a key only; an unknown id is a 404 in one line.
        assert httpx.get(f"{server.url}/decisions/loan-0").status_code == 401
        missing = c.get("/decisions/loan-x")
        assert missing.status_code == 404 and "'loan-x' is unknown" in missing.json()["error"]


def test_the_api_key_behind_every_write_is_recorded(serve):
    server = serve("--publish", "manual")
    with server.client() as c:
        c.post("/decisions", json={"id": "k-1", "x": [0.1, 0.2, 0.3]}).raise_for_status()
        c.post("/outcomes", json={"id": "k-1", "outcome": 1.0}).raise_for_status()
        c.post("/publish").raise_for_status()
    engine = store.connect(server.database)
    with engine.connect() as conn:
        d = conn.execute(sa.select(store.decisions.c.key_id)).scalar_one()
        o = conn.execute(sa.select(store.outcomes.c.key_id)).scalar_one()
        r = conn.execute(sa.select(store.rules.c.key_id).order_by(store.rules.c.version)
                         ).scalars().all()
    engine.dispose()
    assert d == o == _key_id(server.key)
    assert r == [None, _key_id(server.key)]  # the first rule: the service's own at its start


def test_prometheus_metrics_parse_and_count_per_rule_version(serve):
    from prometheus_client.parser import text_string_to_metric_families

    server = serve("--publish", "manual")
    with server.client() as c:
        c.post("/decisions", json={"applicants": [
            {"id": f"m-{k}", "x": [0.1 * k, 0.2, 0.3]} for k in range(6)]}).raise_for_status()
        c.post("/outcomes", json={"outcomes": [
            {"id": f"m-{k}", "outcome": 1.0 if k % 3 else -1.0} for k in range(6)]}
            ).raise_for_status()
        c.post("/publish").raise_for_status()  # learns everything logged first
        c.post("/decisions", json={"id": "m-after", "x": [5.0, 5.0, 5.0]}).raise_for_status()
        for _ in range(100):
            if c.get("/metrics").json()["learner_lag"] == 0:
                break
            time.sleep(0.05)
        figures = c.get("/metrics").json()
        scraped = c.get("/metrics", headers={"Accept": "text/plain;version=0.0.4"})
        assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
        families = {f.name: f for f in text_string_to_metric_families(scraped.text)}
        same = c.get("/metrics?format=prometheus").text
        bad = c.get("/metrics?format=xml")
    assert bad.status_code == 422 and "format must be json or prometheus" in bad.json()["error"]
    assert {f.name for f in text_string_to_metric_families(same)} == set(families)

    def value(name, **labels):
        return next(s.value for s in families[name].samples
                    if s.labels == labels and s.name in (name, name + "_total"))
    assert value("sat_decisions") == figures["decisions"] == 7
    assert value("sat_accepted") == figures["accepted"]
    assert value("sat_outcomes") == 6 and value("sat_outcomes_learned") == 6
    assert value("sat_learner_lag_entries") == 0 and value("sat_rule_version") == 2
    assert value("sat_rule_decisions", version="1") == 6
    assert value("sat_rule_decisions", version="2") == 1
    assert value("sat_rule_accepted", version="1") == 6  # SA-OLS's warm-up accepts everyone
    assert value("sat_rule_repaid", version="1") == 4
    assert value("sat_rule_repayment_ratio", version="1") == 4 / 6
    assert value("sat_rule_outcome_sum", version="1") == 2.0


def _burst(server) -> list:
    """200 outcomes in one batch; the rules once the learner has learned them all."""
    with server.client() as c:
        ids = [f"b-{k}" for k in range(200)]
        c.post("/decisions", json={"applicants": [
            {"id": i, "x": [0.01 * k, 0.2, 0.3]} for k, i in enumerate(ids)]}
            ).raise_for_status()
        c.post("/outcomes", json={"outcomes": [{"id": i, "outcome": 1.0} for i in ids]}
               ).raise_for_status()
        wait_learned(c, 200)
        return c.get("/policy/history").json()["rules"]


def test_a_minimum_interval_keeps_a_batch_of_outcomes_from_publishing_a_burst(serve):
    # The control: outcomes:1 alone publishes a rule per outcome learned, a burst.
    assert len(_burst(serve("--publish", "outcomes:1"))) > 20
    rules = _burst(serve("--publish", "outcomes:1", "--min-interval", "3"))
    times = [r["effective_unix"] for r in rules]
    # Every publication by the cadence came 3 s at least after the one before (the first is
    # the start's), so no more of them than the time taken allows.
    assert all(b - a >= 3.0 for a, b in itertools.pairwise(times)), times
    assert len(rules) <= 2 + (time.time() - times[0]) / 3.0, times


def test_publication_by_count_or_time_whichever_comes_first(serve):
    server = serve("--publish", "outcomes:1000,period:1")
    with server.client() as c:
        c.post("/decisions", json={"id": "t-1", "x": [0.1, 0.2, 0.3]}).raise_for_status()
        c.post("/outcomes", json={"id": "t-1", "outcome": 1.0}).raise_for_status()
        deadline = time.monotonic() + 30
        while len(rules := c.get("/policy/history").json()["rules"]) < 2:
            assert time.monotonic() < deadline, "no publication by the period in 30 s"
            time.sleep(0.1)
    # The period published though the count (1 of 1,000) was far; a second after the first.
    assert rules[1]["effective_unix"] - rules[0]["effective_unix"] >= 1.0


def test_the_acceptance_cap_holds_before_the_first_learned_rule(serve):
    server = serve("--publish", "manual", "--warm-cap", "3")
    with server.client() as c:
        first = c.post("/decisions", json={"applicants": [
            {"id": f"c-{k}", "x": [0.1, 0.2, 0.3]} for k in range(2)]}).json()["decisions"]
        rest = c.post("/decisions", json={"applicants": [
            {"id": f"c-{k}", "x": [0.1, 0.2, 0.3]} for k in range(2, 10)]}).json()["decisions"]
        decisions = first + rest
        assert [d["accepted"] for d in decisions] == [True] * 3 + [False] * 7
        assert [d.get("capped", False) for d in decisions] == [False] * 3 + [True] * 7
        again = c.post("/decisions", json={"id": "c-9", "x": [0.1, 0.2, 0.3]}).json()
        assert again == decisions[9]  # a retry gets the recorded decision
        refused = c.post("/outcomes", json={"id": "c-9", "outcome": 1.0})
        assert refused.status_code == 409 and "acceptance cap" in refused.json()["error"]
        explained = c.get("/decisions/c-9").json()
        assert explained["capped"] and "warm_cap" in explained["reasons"][0]["text"]
        c.post("/outcomes", json={"outcomes": [{"id": f"c-{k}", "outcome": 1.0}
                                               for k in range(3)]}).raise_for_status()
        c.post("/publish").raise_for_status()  # a rule learned from 3 outcomes: no cap
        after = c.post("/decisions", json={"applicants": [
            {"id": f"c-after-{k}", "x": [0.1, 0.2, 0.3]} for k in range(5)]}).json()
    assert not any(d.get("capped") for d in after["decisions"])
    assert main_check(server) == 0


def main_check(server) -> int:
    from strategic_apple_tasting.cli.main import main

    return main(["serve", "check", "--database", server.database])


def test_looking_up_a_decision_refuses_bad_input_in_one_line(serve):
    server = serve("--publish", "manual")
    with server.client() as c:
        c.post("/decisions", json={"id": "q-1", "x": [0.1, 0.2, 0.3]}).raise_for_status()
        counts = ("decisions", "accepted", "outcomes", "rule_version")
        before = {k: c.get("/metrics").json()[k] for k in counts}
        for headers, path, status, message in (
                ({"Authorization": ""}, "/decisions/q-1", 401, "needs an API key"),
                ({"Authorization": "Bearer sat_x"}, "/decisions/q-1", 401, "malformed"),
                ({"Authorization": "Bearer sat_0a0a0a0a0a0a_nope"}, "/decisions/q-1", 401,
                 "not valid"),
                ({}, "/decisions/" + "z" * 129, 422, "from 1 to 128 characters, got 129"),
                ({}, "/decisions/nobody", 404, "'nobody' is unknown"),
                ({}, "/metrics?format=yaml", 422, "format must be json or prometheus")):
            r = c.get(path, headers=headers)
            assert r.status_code == status, (path, r.text)
            error = r.json()["error"]
            assert message in error and "\n" not in error, error
        assert {k: c.get("/metrics").json()[k] for k in counts} == before  # nothing changed


def test_check_compares_the_shadow_learner_too(serve, capsys):
    from strategic_apple_tasting.persistence import dumps
    from strategic_apple_tasting.service.config import ServiceConfig

    shadow = ["--shadow", "sa-ols", "--shadow-param", "delta=0.1", "--shadow-param", "r0=0"]
    server = serve("--publish", "manual", *shadow)
    with server.client() as c:
        c.post("/decisions", json={"applicants": [
            {"id": f"sh-{k}", "x": [0.1 * k - 0.4, 0.2, 0.3]} for k in range(9)]}
            ).raise_for_status()
        c.post("/outcomes", json={"outcomes": [{"id": f"sh-{k}", "outcome": 0.1 * k - 0.3}
                                               for k in range(9)]}).raise_for_status()
        c.post("/publish").raise_for_status()
    server.stop()
    assert main_check(server) == 0
    # Control: the saved shadow replaced by a fresh one: the replay from nothing differs.
    fresh = ServiceConfig(dimension=3, params={"delta": 0.3, "r0": 0, "feedback": "apple"},
                          shadow="sa-ols", shadow_params={"delta": 0.1, "r0": 0}).make_shadow()
    engine = store.connect(server.database)
    s = store.learner_state
    with store.transaction(engine) as conn:
        newest = conn.execute(sa.select(sa.func.max(s.c.seq))).scalar_one()
        conn.execute(sa.update(s).where(s.c.seq == newest).values(shadow=dumps(fresh)))
    engine.dispose()
    capsys.readouterr()
    assert main_check(server) == 1
    assert "the shadow learner's" in capsys.readouterr().out
