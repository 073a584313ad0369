"""The learner's estimate of the gaming budget in /metrics and on the policy page."""

from __future__ import annotations

from types import SimpleNamespace

from strategic_apple_tasting.learners import SAOLS
from strategic_apple_tasting.service.budget_view import budget_html, budget_metrics


def _service(learner):
    return SimpleNamespace(learner=SimpleNamespace(current=SimpleNamespace(learner=learner)))


def test_a_learner_told_delta_adds_nothing():
    learner = SAOLS(delta=0.3, r0=0.0, feedback="apple").reset(2, rng=0)
    assert budget_metrics(_service(learner)) == {} and budget_html(_service(learner)) == ""
    assert budget_metrics(SimpleNamespace(learner=None)) == {}


def test_an_estimating_learner_shows_its_estimate_and_interval():
    learner = SAOLS(delta="estimate:0.8", r0=0.0, feedback="apple").reset(2, rng=0)
    belief = learner.state.agents
    belief.current[:4] = [0.3005, 0.3, 0.2995, 0.3005]  # in force, estimate, low, high
    belief.counts[0] = 1234
    m = budget_metrics(_service(learner))
    assert m == {"delta_estimate": 0.3, "delta_low": 0.2995, "delta_high": 0.3005,
                 "delta_in_force": 0.3005, "delta_applicants": 1234}
    html = budget_html(_service(learner))
    assert "1,234 applicants" in html and "δ = 0.3, 95% interval [0.2995, 0.3005]" in html


def test_the_prometheus_text_has_the_estimate_only_when_there_is_one():
    """The Prometheus text format carries the budget's figures: the same values as the JSON."""
    from prometheus_client.parser import text_string_to_metric_families

    from strategic_apple_tasting.service import prom

    base = {"decisions": 0, "accepted": 0, "capped": 0, "outcomes": 0, "repaid": 0,
            "outcomes_learned": 0,
            "clean_points": 0, "skipped_entries": 0, "outcomes_pending": 0, "learner_lag": 0,
            "rule_version": None,
            "rule_age_seconds": None, "learner_error": None, "learner_standby": False,
            "database_error": None}

    def gauges(figures):
        text = prom.text(figures, []).decode()
        return {s.name: s.value for f in text_string_to_metric_families(text)
                for s in f.samples}

    assert not any(name.startswith("sat_delta") for name in gauges(base))
    learner = SAOLS(delta="estimate:0.8", r0=0.0, feedback="apple").reset(2, rng=0)
    learner.state.agents.current[:4] = [0.3005, 0.3, 0.2995, 0.3005]
    found = gauges({**base, **budget_metrics(_service(learner))})
    assert found["sat_delta_estimate"] == 0.3 and found["sat_delta_low"] == 0.2995
    assert found["sat_delta_high"] == 0.3005 and found["sat_delta_in_force"] == 0.3005
    assert found["sat_delta_applicants"] == 0
