"""``GET /metrics``'s JSON figures of an opened service: running counts and a few single rows,
and each shadow's off-policy estimate, made again at most every :data:`ESTIMATE_EVERY`
seconds."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from . import candidates, counts, store
from .budget_view import budget_metrics
from .groups import group_metrics
from .running import Service

#: Seconds between two off-policy estimates of a shadow on ``GET /metrics`` (each reads the
#: whole log).
ESTIMATE_EVERY = 60.0


def metrics(service: Service) -> dict[str, Any]:
    """The JSON figures: running counts and a few single rows (no scan of the log, so a
    scrape costs the same whatever the log's length)."""
    p, r, sr = store.learner_progress, store.rules, store.shadow_rules
    with service.engine.connect() as conn:
        counted = counts.read(conn)
        progress = conn.execute(sa.select(p)).one()
        last = conn.execute(sa.select(store.log_counter.c.seq)
                            .where(store.log_counter.c.id == 1)).scalar_one()
        rule = store.newest_rule(conn, r.c.version, r.c.published_at)
        groups = group_metrics(conn)
        shadow_version = (conn.execute(sa.select(sa.func.max(sr.c.version))
                                       .where(sr.c.name == candidates.CONFIGURED)).scalar()
                          if service.config.shadow is not None else None)
        shadows = candidates.figures(conn, service.config)
        skipped = conn.execute(sa.select(sa.func.count()).select_from(
            store.skipped_entries)).scalar_one()
    for name, figures in shadows.items():
        figures["estimate"] = estimate(service, name, figures["rule_version"])
    # Under bandit feedback every decision but the cap's rejections awaits its outcome.
    awaited = (counted["decisions"] - counted["capped"] if service.bandit
               else counted["accepted"])
    out = {
        "decisions": counted["decisions"], "accepted": counted["accepted"],
        "capped": counted["capped"], "outcomes": counted["outcomes"],
        "repaid": counted["repaid"], "outcomes_pending": awaited - counted["outcomes"],
        "outcomes_learned": progress.learned, "clean_points": progress.clean,
        "skipped_entries": skipped,
        "learner_lag": int(last) - progress.seq,
        "rule_version": None if rule is None else rule.version,
        "rule_age_seconds": None if rule is None else max(0.0, store.now() - rule.published_at),
        "learner_error": (service.learner.error if service.learner is not None
                          and service.learner.error else progress.error),
        "database_error": service.database_error(),
        "learner_standby": service.learner is not None and service.learner.standby,
        **budget_metrics(service),  # only when the learner estimates δ
        "groups": groups,  # per group label decisions carried ({} if none)
        "shadows": shadows,  # per shadow attached ({} if none)
    }
    if service.config.shadow is not None:
        out["shadow"] = {"learner": service.config.shadow,
                         "decisions": counted["shadow_decisions"],
                         "accepted": counted["shadow_accepted"],
                         "live_accepted": counted["shadow_live_accepted"],
                         "agreed": counted["shadow_agreed"], "rule_version": shadow_version}
    return out


def estimate(service: Service, name: str, version: int | None) -> dict[str, Any] | None:
    """What ``sat serve evaluate --shadow NAME`` estimates of the shadow's newest rule
    (profit per 1,000 applicants, inverse propensity and doubly robust, with 95% half-widths),
    or why it is refused; made again at most every :data:`ESTIMATE_EVERY` seconds."""
    if version is None:
        return None
    kept = service.estimates.get(name)
    if kept is not None and kept[0] == version and time.monotonic() < kept[1] + ESTIMATE_EVERY:
        return kept[2]
    try:
        est = candidates.estimate(service.engine, service.config, name)
        doc = {"version": version, "ips": est.ips, "ips_half": est.ips_half, "dr": est.dr,
               "dr_half": est.dr_half, "acceptance_rate": est.acceptance,
               "decisions": est.decisions, "carried": est.carried}
    except ValueError as exc:  # refused: unexplored applicants, no outcomes yet, bandit
        doc = {"version": version, "refused": str(exc)}
    service.estimates[name] = (version, time.monotonic(), doc)
    return doc

