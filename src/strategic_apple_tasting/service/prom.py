"""``GET /metrics`` in the Prometheus text format (what monitoring systems scrape).

The same figures as the JSON document (``sat_decisions_total``, ``sat_learner_lag_entries``,
``sat_rule_age_seconds``, ..., ``sat_delta_estimate`` with its interval when the learner
estimates the applicants' budget, per group label ``sat_group_*``: :mod:`.groups`, with a
shadow learner ``sat_shadow_*``), and
per rule version the decisions, acceptances, outcomes,
their sum and the repaid ones (outcome > 0), counted by the learner as it reads the log
(``rule_stats``: they outlive retention). Alert signals are these series: learner lag and rule
age directly, drift in acceptance or repayment as the rate of the rule in force against the
one before (``sat_rule_acceptance_ratio``, ``sat_rule_repayment_ratio`` by ``version``).

Every ``_total`` here is a running count (:mod:`.counts`) or the learner's own count: none
goes down, across retention and restarts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

#: The media type of the text format (version 0.0.4).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Figures:
    """A collector of figures read once (one scrape)."""

    def __init__(self, figures: dict[str, Any], versions: list[Any]) -> None:
        self.figures = figures
        self.versions = versions

    def collect(self) -> Iterator[Metric]:
        yield from _service_figures(self.figures)
        yield from _group_figures(self.figures.get("groups") or {})
        shadow = self.figures.get("shadow")
        if shadow is not None:  # only with a shadow learner
            yield from _shadow_figures(shadow)
        yield from _rule_figures(self.versions)


def _service_figures(f: dict[str, Any]) -> Iterator[Metric]:
    """The service's counts and gauges (the JSON document's top level)."""
    for name, key, what in (
            ("sat_decisions", "decisions", "Decisions logged"),
            ("sat_accepted", "accepted", "Acceptances logged"),
            ("sat_capped", "capped", "Rejections by the acceptance cap (warm_cap)"),
            ("sat_outcomes", "outcomes", "Outcomes reported"),
            ("sat_repaid", "repaid", "Outcomes reported > 0 (repaid)"),
            ("sat_outcomes_learned", "outcomes_learned", "Outcomes the learner learned"),
            ("sat_clean_points", "clean_points", "Outcomes the learner used"),
            ("sat_skipped_entries", "skipped_entries", "Log entries a learner (or "
             "shadow) could not learn and skipped")):
        yield CounterMetricFamily(name, what, value=f[key])
    yield GaugeMetricFamily("sat_outcomes_pending", "Decisions awaiting their outcome",
                            value=f["outcomes_pending"])
    yield GaugeMetricFamily("sat_learner_lag_entries",
                            "Log entries the learner has not read yet",
                            value=f["learner_lag"])
    for name, key, what in (("sat_rule_version", "rule_version", "The rule in force"),
                            ("sat_rule_age_seconds", "rule_age_seconds",
                             "Seconds since the rule in force was published")):
        if f[key] is not None:
            yield GaugeMetricFamily(name, what, value=f[key])
    yield GaugeMetricFamily("sat_learner_up", "1 if the learner runs without error",
                            value=0 if f["learner_error"] else 1)
    yield GaugeMetricFamily("sat_learner_standby", "1 if this process stands by for "
                            "the learner's lock", value=1 if f["learner_standby"] else 0)
    yield GaugeMetricFamily("sat_database_up", "1 if the database takes writes",
                            value=0 if f["database_error"] else 1)
    # only when the learner estimates the applicants' budget (delta="estimate").
    for name, key, what in (
            ("sat_delta_estimate", "delta_estimate", "The learner's estimate of the "
             "applicants' gaming budget"),
            ("sat_delta_low", "delta_low", "Lower end of the estimate's interval"),
            ("sat_delta_high", "delta_high", "Upper end of the estimate's interval"),
            ("sat_delta_in_force", "delta_in_force", "The budget the rule is shifted for"),
            ("sat_delta_applicants", "delta_applicants", "Applicants the estimate has "
             "seen")):
        if key in f:
            yield GaugeMetricFamily(name, what, value=f[key])


def _group_figures(groups: dict[str, dict[str, Any]]) -> Iterator[Metric]:
    """Per group label the decisions carried (none: no samples)."""
    for name, key, what, kind in (
            ("sat_group_decisions", "decisions", "Decisions logged with the group label",
             CounterMetricFamily),
            ("sat_group_accepted", "accepted", "Acceptances of the group",
             CounterMetricFamily),
            ("sat_group_outcomes", "outcomes", "Accepted of the group with an outcome",
             CounterMetricFamily),
            ("sat_group_repaid", "repaid", "Of those, outcome > 0", CounterMetricFamily),
            ("sat_group_band_rejected", "band_rejected", "Rejected with a reported score "
             "in the band the rule's shift for gaming created", CounterMetricFamily),
            ("sat_group_acceptance_rate", "acceptance_rate", "Acceptances / decisions of "
             "the group", GaugeMetricFamily),
            ("sat_group_repaid_share", "repaid_share", "Repaid / outcomes of the group",
             GaugeMetricFamily)):
        family = kind(name, what, labels=["group"])
        for group, figures in groups.items():
            if figures[key] is not None:
                family.add_metric([group], float(figures[key]))
        yield family


def _shadow_figures(shadow: dict[str, Any]) -> Iterator[Metric]:
    """The shadow learner's counts (with a shadow of the settings)."""
    for name, key, what in (
            ("sat_shadow_decisions", "decisions", "Decisions the shadow learner's "
             "rule decided too (never answered)"),
            ("sat_shadow_accepted", "accepted", "Of those, the shadow's acceptances"),
            ("sat_shadow_live_accepted", "live_accepted", "Of those, the live rule's "
             "acceptances"),
            ("sat_shadow_agreed", "agreed", "Of those, where the shadow and the live "
             "rule agreed")):
        yield CounterMetricFamily(name, what, value=shadow[key])
    if shadow["rule_version"] is not None:
        yield GaugeMetricFamily("sat_shadow_rule_version", "The shadow learner's "
                                "newest rule", value=shadow["rule_version"])


def _rule_figures(versions: list[Any]) -> Iterator[Metric]:
    """Per rule version the counts the learner keeps, and the ratios alerts watch."""
    per = {
        "sat_rule_decisions": ("Decisions under the rule version", "decisions"),
        "sat_rule_accepted": ("Acceptances under the rule version", "accepted"),
        "sat_rule_outcomes": ("Outcomes of decisions under the rule version", "outcomes"),
        "sat_rule_outcome_sum": ("Sum of those outcomes", "outcome_sum"),
        "sat_rule_repaid": ("Those outcomes > 0 (repaid)", "repaid")}
    for name, (what, column) in per.items():
        family = GaugeMetricFamily(name, what + " (learned so far)", labels=["version"])
        for row in versions:
            family.add_metric([str(row.version)], float(getattr(row, column)))
        yield family
    ratios = {"sat_rule_acceptance_ratio": ("Acceptances / decisions under the rule "
                                            "version", "accepted", "decisions"),
              "sat_rule_repayment_ratio": ("Repaid / outcomes under the rule version",
                                           "repaid", "outcomes")}
    for name, (what, top, bottom) in ratios.items():
        family = GaugeMetricFamily(name, what, labels=["version"])
        for row in versions:
            if getattr(row, bottom):
                family.add_metric([str(row.version)],
                                  getattr(row, top) / getattr(row, bottom))
        yield family


def text(figures: dict[str, Any], versions: list[Any]) -> bytes:
    """The text format of ``figures`` (the JSON metrics) and ``versions`` (rule_stats rows)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Figures(figures, versions))
    return generate_latest(registry)


def wants_text(accept: str, format_: str | None) -> bool:
    """Whether a scrape asks for the text format: ``?format=prometheus``, or an Accept header
    naming ``text/plain`` or OpenMetrics (as Prometheus sends); anything else gets JSON."""
    if format_ is not None:
        return format_ == "prometheus"
    accept = accept.lower()
    return "text/plain" in accept or "openmetrics" in accept
