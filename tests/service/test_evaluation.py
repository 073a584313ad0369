"""Exploration and off-policy evaluation. On simulated logs whose truth is known, the
inverse-propensity and doubly robust intervals cover a candidate's true value; the same check
rejects an estimator that ignores the logged propensities (the control); a candidate that
accepts where the log never explored is refused. In a running service, exploration accepts
its share at random with each propensity logged, the learner files those as its rule's
rejections, the log replays exactly, and ``sat serve evaluate`` estimates a candidate."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service.deciding import coin
from strategic_apple_tasting.service.evaluation import Unsupported, estimate

from .conftest import wait_learned

#: The log's rule accepts x1 >= 0.5; the candidate accepts x1 + x2 >= 0. An accepted
#: applicant earns 1 + x1 - 0.5·x2 + N(0, 1); a rejected one r0 = 0. With x ~ N(0, I₂),
#: s = x1 + x2 ~ N(0, 2) and E[x1 | s] = E[x2 | s] = s/2, so the candidate's true value is
#: E[1{s ≥ 0}(1 + s/2 − s/4)] = 1/2 + E[s·1{s ≥ 0}]/4 = 1/2 + 1/(4√π) per applicant.
TRUTH = 1000.0 * (0.5 + 1.0 / (4.0 * math.sqrt(math.pi)))


def _log(seed: int, n: int = 5000, explore: float = 0.2):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    rule = x[:, 0] >= 0.5
    explored = ~rule & (rng.random(n) < explore)
    accepted = rule | explored
    propensity = np.where(rule, 1.0, np.where(explored, explore, 1.0 - explore))
    y = np.where(accepted, 1.0 + x[:, 0] - 0.5 * x[:, 1] + rng.normal(size=n), np.nan)
    return x, accepted, propensity, y


def test_the_estimates_cover_a_candidates_true_value_and_ignoring_propensities_does_not():
    """50 seeds of 5,000 logged applicants, 20% of the rule's rejections explored: each 95%
    interval should cover the truth on about 47.5 of them (49 and 49 on these fixed seeds);
    the bar is 90% (45), which a correct estimator misses with probability about 4% on fresh
    seeds. Fewer explored points make the intervals too short (the IPS terms are skewed): at
    2,000 applicants and 10% the IPS interval covered on 45 exactly, which is why the log is
    this large. The control takes every acceptance's propensity as 1 (a log that forgot
    them): it undercounts the explored region fivefold and covers on none."""
    covered = {"ips": 0, "dr": 0, "forgot": 0}
    for seed in range(50):
        x, accepted, propensity, y = _log(seed)
        candidate = x[:, 0] + x[:, 1] >= 0.0
        est = estimate(candidate, accepted, propensity, y, r0=0.0, features=x)
        covered["ips"] += abs(est.ips - TRUTH) <= est.ips_half
        covered["dr"] += abs(est.dr - TRUTH) <= est.dr_half
        forgot = estimate(candidate, accepted, np.where(accepted, 1.0, propensity), y,
                          r0=0.0, features=x)
        covered["forgot"] += abs(forgot.ips - TRUTH) <= forgot.ips_half
    assert covered["ips"] >= 45 and covered["dr"] >= 45, covered
    assert covered["forgot"] < 45, covered


def test_a_candidate_beyond_what_the_log_explored_is_refused_not_estimated():
    x, accepted, propensity, y = _log(0, explore=0.0)
    with pytest.raises(Unsupported, match=r"^the candidate accepts [\d,]+ of the 5,000 logged "
                       r"applicants \(\d+\.\d%\) whom the log's rules rejected with no "
                       "exploration"):
        estimate(x[:, 0] + x[:, 1] >= 0.0, accepted, propensity, y, r0=0.0)
    # Inside the region the log accepted, the estimate is the logged outcomes' sum.
    inside = x[:, 0] >= 1.0
    est = estimate(inside, accepted, propensity, y, r0=0.0)
    assert est.ips == pytest.approx(1000.0 * np.nansum(np.where(inside, y, 0.0)) / 5000)
    assert est.explored == 0 and est.carried == int(inside.sum())


def test_the_coin_is_the_ids_own_and_uniform():
    """The same id draws the same; 20,000 ids draw a uniform sample (Kolmogorov–Smirnov,
    p > 0.001 on these fixed ids; a coin that drew from one end would fail)."""
    from scipy.stats import kstest

    draws = np.array([coin(3, f"id-{k}") for k in range(20_000)])
    assert coin(3, "id-5") == draws[5] and coin(4, "id-5") != draws[5]
    assert kstest(draws, "uniform").pvalue > 1e-3
    assert kstest(draws ** 2, "uniform").pvalue < 1e-3  # the control: a skewed draw fails


def test_a_service_explores_logs_propensities_replays_and_evaluates(serve, tmp_path, capsys):
    """--explore 0.2: after a learned rule, about a fifth of the rule's rejections are
    accepted at random, marked explored, each with propensity 0.2 (the others 0.8, the rule's
    acceptances 1); their outcomes are taken; the learner did not learn them (its counts are
    the rule's), the log replays exactly (check), and evaluate estimates a candidate."""
    server = serve("--publish", "manual", "--explore", "0.2")
    rng = np.random.default_rng(1)
    with server.client() as c:
        warm = [{"id": f"w-{k}", "x": [0.2 * k - 0.5, 0.1, -0.1]} for k in range(8)]
        c.post("/decisions", json={"applicants": warm}).raise_for_status()
        c.post("/outcomes", json={"outcomes": [
            {"id": f"w-{k}", "outcome": 0.8 * k - 1.0} for k in range(8)]}).raise_for_status()
        wait_learned(c, 8)
        c.post("/publish").raise_for_status()
        xs = rng.uniform(-1, 1, size=(400, 3)).round(6)
        done = c.post("/decisions", json={"applicants": [
            {"id": f"a-{k}", "x": x.tolist()} for k, x in enumerate(xs)]}).json()["decisions"]
        explored = [d for d in done if d.get("explored")]
        rejected = [d for d in done if not d["accepted"]]
        # Binomial(n, 0.2) over the rule's rejections: the bounds hold for these fixed ids.
        share = len(explored) / (len(explored) + len(rejected))
        assert 0.12 < share < 0.28, share
        assert all(d["accepted"] for d in explored)
        assert [coin(0, d["id"]) < 0.2 for d in explored] == [True] * len(explored)
        again = c.post("/decisions", json={"applicants": [
            {"id": explored[0]["id"], "x": xs[int(explored[0]["id"][2:])].tolist()}]}).json()
        assert again["decisions"][0].get("explored") is True  # a retry: the same decision
        shown = c.get(f"/decisions/{explored[0]['id']}").json()
        assert shown["explored"] and shown["propensity"] == 0.2
        assert "accepted at random" in shown["reasons"][0]["text"]
        assert c.get(f"/decisions/{rejected[0]['id']}").json()["propensity"] == 0.8
        accepted = [d for d in done if d["accepted"]]
        c.post("/outcomes", json={"outcomes": [
            {"id": d["id"], "outcome": float(xs[int(d["id"][2:])][0])} for d in accepted]}
               ).raise_for_status()
        learned = 8 + len(accepted) - len(explored)  # explored outcomes are not learned
        wait_learned(c, learned)
        time.sleep(0.3)
        assert c.get("/metrics").json()["outcomes_learned"] == learned
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0
    rule = tmp_path / "candidate.json"
    rule.write_text(json.dumps({"beta": [1.0, 0.0, 0.0], "threshold": -0.2}))
    capsys.readouterr()
    assert main(["serve", "evaluate", "--database", server.database, "--rule", str(rule)]) == 0
    out = capsys.readouterr().out
    assert "inverse propensity" in out and "doubly robust" in out, out
    reached = sum(xs[int(d["id"][2:])][0] >= -0.2 for d in explored)  # by the candidate
    assert f"({reached:,} accepted at random)" in out, out
    # SA-OLS believes δ = 0.3: a second estimate, with every applicant within the candidate's
    # reach (0.3·‖β‖ = 0.3) accepted, i.e. the threshold lowered to -0.5.
    assert "if applicants game it within the learner's δ (everyone within 0.3 of its" in out
    lowered = sum(x[0] >= -0.5 for x in xs) + 8
    assert f"accepts {lowered / (len(xs) + 8):.1%} of the {len(xs) + 8:,}" in out, out
    # A candidate of another dimension: one line, exit status 2.
    rule.write_text(json.dumps({"beta": [1.0, 0.0], "threshold": -0.2}))
    assert main(["serve", "evaluate", "--database", server.database, "--rule", str(rule)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"sat: error: --rule {str(rule)!r}: beta must be a list of 3 finite "
                   "numbers (one a feature: x1, x2, x3), got [1.0, 0.0]"], err
