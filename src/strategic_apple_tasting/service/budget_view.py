"""The learner's estimate of the applicants' gaming budget, for ``/metrics`` and the policy
page: present only when the service's learner estimates it (``delta="estimate"``)."""

from __future__ import annotations

from typing import Any

from ..learners.budget import BudgetBelief, estimating_belief


def _belief(service: Any) -> BudgetBelief | None:
    loop = getattr(service, "learner", None)
    learner = getattr(getattr(loop, "current", None), "learner", None)
    return None if learner is None else estimating_belief(learner.state)


def budget_metrics(service: Any) -> dict[str, Any]:
    """``delta_estimate``, ``delta_low``, ``delta_high`` (the interval), ``delta_in_force``
    (the budget the rule is shifted for) and ``delta_applicants`` (applicants observed), or
    nothing if the learner is told δ. Read without the learner's lock: each value is one float
    the learner writes whole, and a refresh between two reads can mix two estimates."""
    belief = _belief(service)
    if belief is None:
        return {}
    cur = belief.current
    return {"delta_estimate": float(cur[1]), "delta_low": float(cur[2]),
            "delta_high": float(cur[3]), "delta_in_force": float(cur[0]),
            "delta_applicants": int(belief.counts[0])}


def budget_html(service: Any) -> str:
    """The policy page's section on the estimated budget ('' if the learner is told δ)."""
    m = budget_metrics(service)
    if not m:
        return ""
    return ("<h2>How far applicants game</h2><p id=budget>Estimated from where "
            f"{m['delta_applicants']:,} applicants' reported features landed around the "
            f"published rules: δ = {m['delta_estimate']:.4g}, {belief_level(service):.0%} "
            f"interval [{m['delta_low']:.4g}, {m['delta_high']:.4g}]; the rule is shifted "
            f"for δ = {m['delta_in_force']:.4g}.</p>")


def belief_level(service: Any) -> float:
    belief = _belief(service)
    return 0.0 if belief is None else float(belief.level)
