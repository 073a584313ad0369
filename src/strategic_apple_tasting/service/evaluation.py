"""What a candidate rule would have earned, estimated from the service's log (off-policy
evaluation, ``sat serve evaluate``).

The log holds each applicant's features as shown, the decision, its propensity (the
probability with which the service took that action: :mod:`.deciding`) and, for an acceptance,
the outcome. A candidate rule decides every logged applicant; a rejection earns r0, which the
lender knows, so only the candidate's acceptances need estimating:

* **inverse propensity** (IPS): an acceptance of the candidate's that the log also accepted
  counts its outcome divided by π, the log's probability of accepting that applicant (1 under
  a rule that accepted it, ``explore`` for one accepted at random); one the log rejected
  counts 0. Unbiased wherever π > 0.
* **doubly robust** (DR): a model's prediction m(x) of the outcome (ridge regression on the
  log's acceptances, cross-fitted in two folds so no row predicts itself), corrected by the
  IPS term of its residual: unbiased if either the propensities or the model are right, and
  of lower variance when the model is good.

Each is a mean over the logged decisions of one term per decision, so its 95% interval is
Student's over those terms. Where the candidate accepts applicants the log could not have
accepted (π = 0: its rule rejected them and nothing was explored), no estimate is given: the
log says nothing about how they turn out, and the refusal says how many there are.

Assumptions, stated with every estimate: the applicants' features are as they showed them to
the rules in force; a candidate that shifts its threshold less than the live rule would meet
applicants that game differently (more of them reach it), which no log of the live rule shows.
``sat serve evaluate`` therefore gives a second estimate under the learner's δ: an applicant
within the candidate's reach (δ at the candidate's β, as the learner believes it) moves up to
its threshold and is accepted, so the candidate is evaluated with its threshold lowered by its
reach, on the applicants' logged features (an applicant who moved for the live rule is counted
where it moved to). Decisions still awaiting their outcome are left out (counted).

Prior art: Vowpal Wabbit's counterfactual evaluation of logged contextual-bandit data, and the
Open Bandit Pipeline's IPS and DR estimators.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..game.policies import LinearThreshold
from ..metrics import mean_ci
from . import store
from .config import ServiceConfig

#: The ridge penalty of the doubly robust estimate's outcome model.
RIDGE = 1.0


class Unsupported(ValueError):
    """A candidate that accepts applicants the log could not have accepted: not estimated."""


@dataclass(frozen=True)
class OffPolicyEstimate:
    """A candidate's value per 1,000 logged applicants: inverse-propensity and doubly robust
    estimates with 95% half-widths, the live rules' realized value, and what carries them."""

    ips: float
    ips_half: float
    dr: float
    dr_half: float
    live: float
    live_half: float
    acceptance: float  # the candidate's acceptance rate on the logged applicants
    decisions: int  # logged decisions the estimate averages over
    carried: int  # of which the candidate accepts and the log accepted (outcomes known)
    explored: int  # of those, accepted at random (propensity < 1)
    waiting: int  # accepted decisions left out: outcome not yet reported


def estimate(accepts: np.ndarray, accepted: np.ndarray, propensity: np.ndarray,
             outcome: np.ndarray, r0: float, features: np.ndarray | None = None,
             ridge: float = RIDGE) -> OffPolicyEstimate:
    """Off-policy estimates (module docstring) of the candidate that ``accepts`` (bool, one per
    logged decision) from decisions ``accepted`` with ``propensity`` (of the action taken) and
    ``outcome`` (NaN where not observed); ``features`` (rows) for the doubly robust model
    (without: the model is the mean outcome). ``Unsupported`` where the candidate accepts an
    applicant the log accepts with probability 0.

    Examples
    --------
    >>> est = estimate(np.array([True, True, False]), np.array([True, False, False]),
    ...                np.array([1.0, 0.8, 0.8]), np.array([2.0, np.nan, np.nan]), r0=0.0)
    >>> est.ips, est.carried
    (666.6666666666666, 1)
    """
    c = np.asarray(accepts, dtype=bool)
    a = np.asarray(accepted, dtype=bool)
    p = np.asarray(propensity, dtype=float)
    y = np.asarray(outcome, dtype=float)
    n = len(c)
    if not (len(a) == len(p) == len(y) == n) or n == 0:
        raise ValueError(f"the log's arrays must have one entry per decision and at least "
                         f"one, got {n}, {len(a)}, {len(p)}, {len(y)}")
    if np.any(~np.isfinite(p)) or np.any((p <= 0) | (p > 1)):
        raise ValueError("each propensity must be in (0, 1] (the probability of the action "
                         "the log took)")
    if np.any(a & ~np.isfinite(y)):
        raise ValueError("every accepted decision must carry its outcome (leave out those "
                         "still awaiting one)")
    pi = np.where(a, p, 1.0 - p)  # the log's probability of accepting each applicant
    blind = c & (pi <= 0.0)
    if blind.any():
        raise Unsupported(
            f"the candidate accepts {int(blind.sum()):,} of the {n:,} logged applicants "
            f"({blind.mean():.1%}) whom the log's rules rejected with no exploration: the "
            "log says nothing of how they turn out, so no estimate is given (run the service "
            "with --explore to gather them)")
    gain = np.where(a, np.nan_to_num(y), 0.0)
    safe = np.where(pi > 0.0, pi, 1.0)
    ips = np.where(c, gain / safe, r0)
    model = _cross_fitted(features, a, np.nan_to_num(y), ridge, n)
    dr = np.where(c, model + np.where(a, (gain - model) / safe, 0.0), r0)
    live = np.where(a, gain, r0)
    (m_ips, h_ips), (m_dr, h_dr), (m_live, h_live) = (mean_ci(v) for v in (ips, dr, live))
    return OffPolicyEstimate(
        ips=1000.0 * m_ips, ips_half=1000.0 * h_ips, dr=1000.0 * m_dr, dr_half=1000.0 * h_dr,
        live=1000.0 * m_live, live_half=1000.0 * h_live, acceptance=float(c.mean()),
        decisions=n, carried=int((c & a).sum()), explored=int((c & a & (p < 1.0)).sum()),
        waiting=0)


def _cross_fitted(features: np.ndarray | None, accepted: np.ndarray, y: np.ndarray,
                  ridge: float, n: int) -> np.ndarray:
    """m(x) for each row, fitted on the other fold's acceptances (folds by position parity):
    ridge regression with an intercept, or the fold's mean outcome without features."""
    fold = np.arange(n) % 2
    out = np.zeros(n)
    x = None if features is None else np.column_stack(
        [np.ones(n), np.asarray(features, dtype=float).reshape(n, -1)])
    for k in (0, 1):
        train = (fold != k) & accepted
        if not train.any():
            continue
        if x is None or train.sum() <= x.shape[1]:
            out[fold == k] = y[train].mean()
            continue
        xt = x[train]
        penalty = ridge * np.eye(x.shape[1])
        penalty[0, 0] = 0.0
        w = np.linalg.solve(xt.T @ xt + penalty, xt.T @ y[train])
        out[fold == k] = x[fold == k] @ w
    return out


@dataclass(frozen=True)
class Logged:
    """The logged decisions an estimate averages over (read once, for any number of
    candidates): standardized features, decisions, propensities, outcomes (NaN where not
    observed), r0, and how many accepted decisions still await their outcome (left out)."""

    z: np.ndarray
    accepted: np.ndarray
    propensity: np.ndarray
    outcome: np.ndarray
    r0: float
    waiting: int


def read_logged(engine: Engine, config: ServiceConfig, limit: int | None = None) -> Logged:
    """Every decision the database holds (retention's removals are gone from it), or the
    newest ``limit``, as :class:`Logged` (r0 and the feedback from the service's learner)."""
    if config.bandit():
        raise ValueError("evaluate is for apple tasting: under bandit feedback every outcome "
                         "is observed, so a candidate's value is read off the log directly")
    d, o = store.decisions, store.outcomes
    query = (sa.select(d.c.features, d.c.accepted, d.c.propensity, d.c.capped, o.c.outcome)
             .select_from(d.outerjoin(o, o.c.decision_id == d.c.id))
             .order_by(d.c.seq.desc()).limit(limit))
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    kept = [r for r in rows if not (r.accepted and r.outcome is None)]
    waiting = len(rows) - len(kept)
    if not kept:
        raise ValueError(f"the log holds no decision with its outcome known ({waiting:,} "
                         "still await theirs): nothing to evaluate on")
    scale = config.scaling()
    return Logged(
        z=np.array([scale(json.loads(r.features)) for r in kept], dtype=float),
        accepted=np.array([bool(r.accepted) for r in kept]),
        propensity=np.array([1.0 if r.propensity is None else r.propensity for r in kept]),
        outcome=np.array([math.nan if r.outcome is None else r.outcome for r in kept]),
        r0=float(config.params.get("r0") or 0.0), waiting=waiting)


def evaluate(logged: Logged, candidate: LinearThreshold) -> OffPolicyEstimate:
    """:func:`estimate` of ``candidate`` (on standardized features, as the service's rules)
    over ``logged``."""
    accepts = np.array([bool(candidate.accepts(row)) for row in logged.z])
    est = estimate(accepts, logged.accepted, logged.propensity, logged.outcome, logged.r0,
                   logged.z)
    return replace(est, waiting=logged.waiting)


def format_estimate(est: OffPolicyEstimate, label: str) -> str:
    """The estimate in a few lines, with its assumptions."""
    return "\n".join([
        f"{label}: accepts {est.acceptance:.1%} of the {est.decisions:,} logged applicants",
        f"  profit per 1,000, inverse propensity: {est.ips:.4g} ± {est.ips_half:.2g}",
        f"  profit per 1,000, doubly robust:      {est.dr:.4g} ± {est.dr_half:.2g}",
        f"  the rules in force earned:           {est.live:.4g} ± {est.live_half:.2g}",
        f"  carried by {est.carried:,} outcomes of applicants both accept ({est.explored:,} "
        f"accepted at random); {est.waiting:,} accepted decisions still await outcomes and "
        "are left out",
        "  assumes applicants show the candidate the features they showed the rules in force "
        "(one that shifts less would meet more gaming)"])
