"""The rows that check the paper's lemmas directly (c1's bounds, lem:leq0, lem:l2-bandit-1,
cond:clean, consistency under an over-estimated δ): each reads "yes" on the real mechanism and
flips when the mechanism is sabotaged."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from strategic_apple_tasting.experiments.claims import (
    NO,
    NOT_DISCRIMINATING,
    YES,
    c1bound,
    cleanpoints,
    lemmas,
    overconsistency,
)
from strategic_apple_tasting.game import LazyBestResponse, TremblingHand


def _one(rows, start):
    (found,) = [r for r in rows if r.claim.startswith(start)]
    return found


EXPLICIT = "c1(d, δ) ≥ (1 − δ)^((d+1)/2)"
RATE = "c1(d, δ) ≥ Θ((1 − δ)^(d/2)/d²)"


def test_c1_rows_hold_and_flip_when_the_bound_claims_too_much(monkeypatch):
    """At the stochastic game the explicit bound and the Θ rate hold (with 20,000 contexts: the
    measured c1/bound is about 3, far from 1); a bound four times larger, and a rate without
    c1's loss of √d, make the rows read "no"."""
    rows = c1bound.c1_rows(3, 0.3, samples=20_000)
    assert (_one(rows, EXPLICIT).verdict, _one(rows, RATE).verdict) == (YES, YES)
    assert c1bound.failing(c1bound.lemma_bound).startswith("no setting")
    stated = c1bound.lemma_bound
    monkeypatch.setattr(c1bound, "lemma_bound", lambda d, delta: 4 * stated(d, delta))
    monkeypatch.setattr(c1bound, "main_rate", c1bound.exponential_rate)
    rows = c1bound.c1_rows(3, 0.3, samples=20_000)
    assert (_one(rows, EXPLICIT).verdict, _one(rows, RATE).verdict) == (NO, NO)
    assert "d = 3: δ = " in c1bound.failing(c1bound.lemma_bound)


@pytest.fixture
def small_grid(monkeypatch):
    """A few policies and one dimension: the rows' mechanism, in a fraction of a second."""
    monkeypatch.setattr(cleanpoints, "POLICIES", 2)
    monkeypatch.setattr(cleanpoints, "DIMENSIONS", (3,))


def test_clean_rows_hold_for_the_games_agents(small_grid):
    rows = cleanpoints.clean_rows()
    assert [r.verdict for r in rows] == [YES, YES]
    assert all(r.control.estimate.value > 0 for r in rows)


@pytest.mark.parametrize("model", [
    TremblingHand(tremble=0.05, adversarial=True),  # lazy agents' condition, overshooting agents
    TremblingHand(tremble=0.1, adversarial=True),  # a tremble twice the γ the condition allows
])
def test_clean_row_flips_when_agents_overshoot_the_condition(small_grid, model):
    gamma = 0.0 if model.tremble == 0.05 else 0.05
    row = cleanpoints.clean_row("c", "cond:clean", model, gamma, "δ/2", (0.5, 0.0))
    assert row.verdict == NO and row.measured.value > 0


def test_clean_count_sees_every_condition_on_the_same_reports(small_grid):
    (same, half), movers = cleanpoints.count(LazyBestResponse(), ((1.0, 0.0), (0.5, 0.0)))
    assert same[0] == 0 and half[0] == movers > 0


def test_leq0_holds_for_sa_ols_and_fails_told_a_smaller_budget(monkeypatch):
    monkeypatch.setattr(lemmas, "SEEDS", (0, 1))
    monkeypatch.setattr(lemmas, "ROUNDS", 400)
    row = lemmas.leq0_row(3, 0.3, 0.1)
    assert row.verdict == YES and row.control.estimate.value > 0
    sabotaged = lemmas.leq0_row(3, 0.3, 0.1, told=0.15)
    assert sabotaged.verdict == NO


def _error_table(errors: dict[str, np.ndarray], t: np.ndarray, **settings) -> pa.Table:
    """A results table of theta_error (seeds × rounds per learner) and one game's settings."""
    cols: dict[str, list] = {"learner": [], "seed": [], "t": [], "theta_error": []}
    for name, matrix in errors.items():
        for seed, row in enumerate(matrix):
            cols["learner"] += [name] * t.size
            cols["seed"] += [seed] * t.size
            cols["t"] += t.tolist()
            cols["theta_error"] += row.tolist()
    n = len(cols["t"])
    cols["horizon"] = [int(t[-1])] * n
    cols["regret"] = [0.0] * n
    for key, value in settings.items():
        cols[key] = [value] * n
    return pa.table(cols)


GAME = {"dimension": 3, "delta": 0.3, "sigma": 0.1}


def _l2_table(sa_scale: float, t: np.ndarray) -> pa.Table:
    rng = np.random.default_rng(0)
    bound = lemmas.l2_bound(t.astype(float), 3, 0.3, 0.1)
    sa = sa_scale * bound * rng.uniform(0.5, 1.0, (4, t.size))
    shifted = np.full((4, t.size), 0.5)  # a bias that does not vanish
    return _error_table({"sa-ols": sa, "shifted-ols": shifted}, t, **GAME)


def test_l2_row_reads_the_bound_per_recorded_round():
    t = np.unique(np.logspace(2, 6, 40).astype(int))
    assert lemmas.l2_row(_l2_table(0.5, t)).verdict == YES
    assert lemmas.l2_row(_l2_table(2.5, t)).verdict == NO  # errors above the bound
    early = lemmas.l2_row(_l2_table(0.5, t[t < 3000]))  # the bound is above 1 there
    assert early.verdict == NOT_DISCRIMINATING and "not below 1" in early.reason


def _consistency_table(sa_rate: float) -> pa.Table:
    rng = np.random.default_rng(1)
    t = np.unique(np.logspace(1, 5, 60).astype(int))
    errors = {f"sa-ols(delta={v})": (1 + 3 * (v - 0.1)) * t ** sa_rate
              * rng.lognormal(0, 0.05, (8, t.size)) for v in (0.1, 0.15, 0.2, 0.3)}
    errors["shifted-ols"] = 0.05 * rng.lognormal(0, 0.05, (8, t.size))
    return _error_table(errors, t, **{**GAME, "delta": 0.1})


def test_consistency_rows_read_the_rate_and_flip_with_a_plateau():
    rows = overconsistency.consistency(_consistency_table(-0.5))
    assert all(f"δ' = {v} " in r.claim for r, v in zip(rows, ("0.15", "0.2", "0.3"), strict=True))
    assert [r.verdict for r in rows] == [YES] * 3
    plateau = overconsistency.consistency(_consistency_table(0.0))
    assert [r.verdict for r in plateau] == [NO] * 3
