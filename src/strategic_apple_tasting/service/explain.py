"""One decision explained (``GET /decisions/{id}``): the rule it was made under, the score, the
threshold, the margin, each feature's contribution, the outcome if reported, and for a
rejection the reasons an adverse-action notice gives.

The numbers are the decider's own: the features as the applicant gave them (stored with the
decision), standardized by the settings' means and scales (:class:`~.config.Scaling`, the
function the deciders apply), and the rule version's β and threshold as stored. The score is
the package's one dot product (:func:`~strategic_apple_tasting.game.policies.score`, summed in
index order), so ``score >= threshold`` is the decision, bit for bit; the contributions
``β[i] * z[i]`` summed in index order give the same score.

Reasons: a rejection's reasons are the features that lowered the score most (the most negative
contributions ``β[i] * z[i]``, at most :data:`REASONS`); with standardized features a
contribution is measured from the average applicant (``z = 0``), so a reason says "this
feature, at this value, put you below where an average applicant would be". A rejection by the
acceptance cap says so instead: the rule accepted the applicant. A rejection whose score lay
within the rule's allowance for gaming (the band its shift created: it would have cleared the
unshifted threshold) says so first, the one reason a strategic lender most owes an applicant;
an acceptance at random (exploration) says that the rule alone would have rejected it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..game.policies import score
from .config import ServiceConfig

#: Reasons given for a rejection, at most (adverse-action notices give up to four).
REASONS = 4


def explain(decision: Any, rule: Any, outcome: Any, config: ServiceConfig) -> dict[str, Any]:
    """The explanation of ``decision`` (a decisions row) under ``rule`` (its rules row), with
    ``outcome`` (its outcomes row, or None)."""
    features = config.feature_list()
    x = np.asarray(json.loads(decision.features), dtype=float)
    z = config.scaling()(x)
    beta = np.asarray(json.loads(rule.beta), dtype=float)
    total = float(score(beta, z))
    contributions = [float(beta[i] * z[i]) for i in range(len(beta))]
    rows = [{"name": f.name, "unit": f.unit, "definition": f.definition, "value": float(x[i]),
             "mean": f.mean, "scale": f.scale, "standardized": float(z[i]),
             "weight": float(beta[i]), "contribution": contributions[i]}
            for i, f in enumerate(features)]
    capped = bool(decision.capped)
    explored = bool(getattr(decision, "explored", None))
    doc: dict[str, Any] = {
        "id": decision.id, "accepted": bool(decision.accepted), "capped": capped,
        "explored": explored, "propensity": _propensity(decision),
        "version": decision.version, "decided_at": decision.created_at,
        "key_id": decision.key_id, "score": total, "threshold": float(rule.threshold),
        "margin": total - float(rule.threshold), "features": rows,
        "rule": "accept when sum(weight[i] * standardized[i]) >= threshold, where "
                "standardized[i] = (value[i] - mean[i]) / scale[i]",
        "outcome": None if outcome is None else float(outcome.outcome),
        "outcome_reported_at": None if outcome is None else outcome.created_at,
        "reasons": []}
    if capped:
        doc["reasons"] = [{"text": "the rule accepted this application, but the service was "
                           "still within its first rule, before it had learned any outcome, "
                           "and the number of acceptances allowed then (warm_cap) had been "
                           "reached"}]
    elif explored:
        doc["reasons"] = [{"text": f"the rule alone would have rejected this application (the "
                           f"score was {-doc['margin']:.4g} short of the threshold); it was "
                           f"accepted at random, as a share of {doc['propensity']:g} of such "
                           "applications are, so that the lender learns how they turn out"}]
    elif not decision.accepted:
        doc["reasons"] = reasons(rows, doc["margin"])
        shift = getattr(rule, "shift", None)
        if getattr(decision, "band", None) and shift:
            doc["reasons"].insert(0, {
                "text": f"the score would have cleared the threshold without the allowance "
                        f"for gaming ({shift:.4g}): the lender raises its threshold by that "
                        "much because applicants can raise their scores by up to that much, "
                        "and this score lay within that allowance"})
    return doc


def _propensity(decision: Any) -> float:
    """The probability of the action the service took (1 for a row from before exploration
    was logged: the rule decided alone then)."""
    value = getattr(decision, "propensity", None)
    return 1.0 if value is None else float(value)


def reasons(rows: list[dict[str, Any]], margin: float) -> list[dict[str, Any]]:
    """The features that lowered the score most, in plain words (see the module)."""
    lowered = sorted((r for r in rows if r["contribution"] < 0), key=lambda r: r["contribution"])
    out = []
    for r in lowered[:REASONS]:
        unit = f" {r['unit']}" if r["unit"] else ""
        out.append({"feature": r["name"], "unit": r["unit"], "value": r["value"],
                    "contribution": r["contribution"],
                    "text": f"{r['name']} of {r['value']:g}{unit} lowered the score by "
                            f"{-r['contribution']:.4g} (the score was {-margin:.4g} short of "
                            "the threshold)"})
    if not out:
        out.append({"text": f"no single feature lowered the score; together they left it "
                            f"{-margin:.4g} short of the threshold"})
    return out
