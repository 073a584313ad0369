"""Per-group figures in the service. A decision may carry a group label, stored and
never given to the learner; /metrics (JSON and Prometheus text) and the policy page give per
group the decisions, acceptance, repayment and the rejected in the band the rule's shift
created; bad labels get a 422 for their own request."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.persistence import loads
from strategic_apple_tasting.service import store
from strategic_apple_tasting.service.learning import state_differences

from .conftest import wait_learned

#: Applicants of the warm-up and their outcomes: a lender whose outcomes rise with x0.
WARM = [([0.2 * k - 0.5, 0.1, -0.1], 0.8 * k - 1.0) for k in range(8)]


def _warm_up(client, groups: bool) -> dict:
    """The warm-up's decisions (each with a group label or none) and outcomes, then a
    publication: the learned, shifted rule."""
    labels = ["a" if k % 2 else "b" for k in range(len(WARM))]
    client.post("/decisions", json={"applicants": [
        {"id": f"w-{k}", "x": x, **({"group": labels[k]} if groups else {})}
        for k, (x, _) in enumerate(WARM)]}).raise_for_status()
    client.post("/outcomes", json={"outcomes": [
        {"id": f"w-{k}", "outcome": y} for k, (_, y) in enumerate(WARM)]}).raise_for_status()
    wait_learned(client, len(WARM))
    return client.post("/publish").json()


def _saved_state(server):
    engine = store.connect(server.database)
    with engine.connect() as conn:
        row = conn.execute(sa.select(store.learner_state.c.state)
                           .order_by(store.learner_state.c.seq.desc()).limit(1)).first()
        rules = conn.execute(sa.select(store.rules.c.beta, store.rules.c.threshold)
                             .order_by(store.rules.c.version)).all()
    engine.dispose()
    return loads(bytes(row.state)), [tuple(r) for r in rules]


def test_the_learner_never_sees_a_group(serve):
    """The same decisions and outcomes with group labels and without: the same rules and the
    same saved learner, bit for bit. The control: one outcome changed gives another learner
    (the comparison can fail)."""
    servers = [serve("--publish", "manual") for _ in range(3)]
    for k, server in enumerate(servers):
        with server.client() as c:
            if k == 2:  # the control: one outcome differs
                WARM[3] = (WARM[3][0], WARM[3][1] + 0.5)
            try:
                _warm_up(c, groups=k == 1)
            finally:
                if k == 2:
                    WARM[3] = (WARM[3][0], WARM[3][1] - 0.5)
        server.stop()
    (plain, plain_rules), (grouped, grouped_rules), (other, _) = map(_saved_state, servers)
    assert grouped_rules == plain_rules and len(plain_rules) == 2
    assert state_differences(plain, grouped) == []
    assert state_differences(plain, other) != []


def test_per_group_figures_in_metrics_prometheus_and_the_page(serve, tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    server = serve("--publish", "manual")
    with server.client() as c:
        rule = _warm_up(c, groups=True)
        beta, threshold = np.array(rule["beta"]), rule["threshold"]
        shift = 0.3 * np.linalg.norm(beta)  # SA-OLS told δ = 0.3, lazy agents: δ‖β‖
        assert shift > 0
        unit = beta / (beta @ beta)

        def at(score):  # features whose score under the rule is `score`
            return list(score * unit)
        # group a: one accepted, two in the band, one below it; group c: one in the band.
        plan = [("a", threshold + 0.05), ("a", threshold - 0.3 * shift),
                ("a", threshold - 0.7 * shift), ("a", threshold - 2.0 * shift),
                ("c", threshold - 0.5 * shift)]
        done = c.post("/decisions", json={"applicants": [
            {"id": f"g-{k}", "x": at(s), "group": g}
            for k, (g, s) in enumerate(plan)]}).json()
        accepted = [d["accepted"] for d in done["decisions"]]
        assert accepted == [True, False, False, False, False]
        c.post("/outcomes", json={"id": "g-0", "outcome": -1.0}).raise_for_status()
        c.post("/decisions", json={"x": at(threshold + 1.0)}).raise_for_status()  # no group
        figures = c.get("/metrics").json()["groups"]
        text = c.get("/metrics?format=prometheus").text
        # A rejection in the band names the allowance for gaming first; one below it does
        # not (the control).
        reasons = [[r["text"] for r in c.get(f"/decisions/g-{k}").json()["reasons"]]
                   for k in (1, 3)]
        assert reasons[0][0].startswith("the score would have cleared the threshold without "
                                        f"the allowance for gaming ({shift:.4g})")
        assert not any("allowance for gaming" in r for r in reasons[1])
        page = c.get("/operator").text
    # The warm-up: 4 each in a and b, all accepted; b's outcomes 0.8k − 1 for k = 0, 2, 4, 6
    # (−1, 0.6, 2.2, 3.8: 3 of 4 > 0), a's for k = 1, 3, 5, 7 (−0.2, 1.4, 3, 4.6: 3 of 4; g-0
    # adds a defaulted one).
    assert figures["a"] == {"decisions": 8, "accepted": 5, "acceptance_rate": 5 / 8,
                            "outcomes": 5, "repaid": 3, "repaid_share": 3 / 5,
                            "band_rejected": 2}
    assert figures["b"] == {"decisions": 4, "accepted": 4, "acceptance_rate": 1.0,
                            "outcomes": 4, "repaid": 3, "repaid_share": 0.75,
                            "band_rejected": 0}
    assert figures["c"] == {"decisions": 1, "accepted": 0, "acceptance_rate": 0.0,
                            "outcomes": 0, "repaid": 0, "repaid_share": None,
                            "band_rejected": 1}
    samples = {(s.name, s.labels.get("group")): s.value
               for f in text_string_to_metric_families(text) for s in f.samples}
    assert samples[("sat_group_decisions_total", "a")] == 8
    assert samples[("sat_group_band_rejected_total", "a")] == 2
    assert samples[("sat_group_repaid_share", "a")] == 3 / 5
    assert samples[("sat_group_acceptance_rate", "a")] == 5 / 8
    assert ("sat_group_repaid_share", "c") not in samples  # no outcome: no ratio
    assert "<h2>By group</h2>" in page and "shift" in page.split("<h2>By group</h2>")[1]
    engine = store.connect(server.database)
    with engine.connect() as conn:
        shifts = conn.execute(sa.select(store.rules.c.shift)
                              .order_by(store.rules.c.version)).scalars().all()
    engine.dispose()
    assert shifts[1] == pytest.approx(shift, rel=1e-12)
    # The export carries each decision's group and band flag.
    server.stop()
    out = tmp_path / "export"
    assert main(["serve", "export", "--database", server.database, "--out", str(out),
                 "--format", "parquet"]) == 0
    decisions = pd.read_parquet(out / "decisions.parquet").set_index("id")
    assert decisions.loc[[f"g-{k}" for k in range(5)], "group"].tolist() == list("aaaac")
    assert decisions.loc[[f"g-{k}" for k in range(5)], "band"].tolist() == [
        False, True, True, False, True]


@pytest.mark.parametrize(("body", "message"), [
    ({"x": [0.1, 0.2, 0.3], "group": "g" * 65}, "group: String should have at most 64"),
    ({"x": [0.1, 0.2, 0.3], "group": "a\x00b"}, "group: contains the NUL character"),
    ({"x": [0.1, 0.2, 0.3], "group": 5}, "group: Input should be a valid string"),
    ({"x": [0.1, 0.2, 0.3], "group": ""}, "group: String should have at least 1"),
    ({"applicants": [{"x": [0.1, 0.2, 0.3], "group": ["a"]}]},
     "applicants.0.group: Input should be a valid string"),
    ({"applicants": [{"x": [0.1, 0.2, 0.3]}], "group": "a"},
     "group belongs in each of applicants, not beside them"),
])
def test_a_bad_group_label_is_refused_for_its_request_only(serve, body, message):
    server = serve()
    with server.client() as c:
        bad = c.post("/decisions", json=body)
        good = c.post("/decisions", json={"x": [0.1, 0.2, 0.3], "group": "é-ok"})
        decided = c.get("/metrics").json()["decisions"]
    assert bad.status_code == 422 and message in bad.json()["error"], bad.text
    assert "\n" not in bad.json()["error"]
    assert good.status_code == 200 and decided == 1
