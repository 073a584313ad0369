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
acceptance cap says so instead: the rule accepted the applicant.
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
    doc: dict[str, Any] = {
        "id": decision.id, "accepted": bool(decision.accepted), "capped": capped,
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
    elif not decision.accepted:
        doc["reasons"] = reasons(rows, doc["margin"])
    return doc


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
