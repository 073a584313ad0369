"""Property tests of the agent model (DESIGN §6): budget, movers accepted, laziness."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from strategic_apple_tasting.game import (
    EllipsoidalCost,
    HeterogeneousBudgets,
    LazyBestResponse,
    TremblingHand,
)
from strategic_apple_tasting.game.agents import BUDGET, REACH, RESPOND, lazy_move
from strategic_apple_tasting.game.policies import norm, score

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vectors = st.integers(1, 8).flatmap(lambda d: st.tuples(
    arrays(np.float64, d, elements=finite), arrays(np.float64, d, elements=finite)))


def _distance(a, b):
    v = a - b
    m = np.abs(v).max(initial=0.0)
    return 0.0 if m == 0 else float(m * np.linalg.norm(v / m))  # no underflow at 1e-189


@settings(max_examples=400, deadline=None)
@given(vectors, finite, st.floats(0, 5, allow_nan=False))
def test_lazy_response_properties(beta_x, threshold, budget):
    beta, x = beta_x
    out = np.empty_like(x)
    moved = lazy_move(beta, threshold, budget, x, out)
    s = score(beta, x)
    dist = _distance(out, x)
    if moved:
        # A mover is accepted, whatever the rounding of its landing point.
        assert score(beta, out) >= threshold
        # Budget kept and the move is the minimal one: (c − s)/‖β‖ along β, to 1e-12.
        need = (threshold - s) / norm(beta)
        assert dist <= budget * (1 + 1e-12) + 1e-300
        assert abs(dist - need) <= 1e-12 * need + 1e-15 * np.linalg.norm(x) + 1e-320
        assert s < threshold
    else:
        assert np.array_equal(out, x)
        if s < threshold:
            # A rejected non-mover could not have reached the boundary within budget.
            nb = norm(beta)
            assert nb == 0 or (threshold - s) / nb > budget


@settings(max_examples=200, deadline=None)
@given(vectors, st.floats(0.01, 1))
def test_movers_land_on_the_boundary_and_are_never_clean(beta_x, budget):
    from strategic_apple_tasting.game.policies import clean_above

    beta, x = beta_x
    assume(norm(beta) > 1e-6)
    threshold = score(beta, x) + 0.5 * budget * norm(beta)  # reachable: needs half the budget
    out = np.empty_like(x)
    assert lazy_move(beta, threshold, budget, x, out)
    assert not clean_above(beta, threshold, out, 0.0)


def test_truthful_fraction_is_respected():
    agents = LazyBestResponse(delta=1.0, truthful=0.3)
    rng = np.random.default_rng(7)
    beta, x = np.array([1.0, 0.0]), np.array([0.0, 0.0])
    moved = [agents.respond_once(beta, 0.5, x, rng)[1] for _ in range(20_000)]
    # Moves happen with probability 0.7; 5 standard errors of a binomial mean is 0.016.
    assert abs(np.mean(moved) - 0.7) < 5 * np.sqrt(0.21 / 20_000)


def test_zero_beta_cannot_be_gamed():
    out = np.empty(2)
    assert not lazy_move(np.zeros(2), 1.0, 10.0, np.ones(2), out)
    assert np.array_equal(out, np.ones(2))


def test_agent_model_validation():
    import pytest

    with pytest.raises(ValueError, match="delta must be a finite number >= 0, got -1"):
        LazyBestResponse(delta=-1).check()
    with pytest.raises(ValueError, match="truthful must be a probability"):
        LazyBestResponse(truthful=1.5).check()


@settings(max_examples=200, deadline=None)
@given(vectors, st.floats(-3, 3), st.floats(0.01, 2), st.floats(0, 0.5), st.booleans())
def test_trembling_overshoot_within_gamma(beta_x, threshold, budget, tremble, adversarial):
    from strategic_apple_tasting.game import TremblingHand

    beta, x = beta_x
    assume(norm(beta) > 1e-3)
    model = TremblingHand(delta=budget, tremble=tremble, adversarial=adversarial)
    out, moved = model.respond_once(beta, threshold, x, np.random.default_rng(0))
    lazy = np.empty_like(x)
    assert moved == lazy_move(beta, threshold, budget, x, lazy)
    if moved:
        need = (threshold - score(beta, x)) / norm(beta)
        overshoot = _distance(out, x) - need
        tol = 1e-9 * (1 + np.linalg.norm(x))
        assert score(beta, out) >= threshold
        assert -tol <= overshoot <= min(budget - need, tremble) + tol
        assert _distance(out, x) <= budget + tol
        if adversarial:
            assert abs(overshoot - min(budget - need, tremble)) <= tol


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda d: st.tuples(
    arrays(np.float64, d, elements=st.floats(-2, 2)),
    arrays(np.float64, d, elements=st.floats(-2, 2)),
    arrays(np.float64, (d, d), elements=st.floats(-1, 1)))), st.floats(-2, 2), st.floats(0.01, 2))
def test_ellipsoidal_move_is_cheapest_and_within_budget(data, threshold, budget):
    from strategic_apple_tasting.game import EllipsoidalCost

    beta, x, m = data
    assume(norm(beta) > 1e-3)
    cost = m @ m.T + 0.5 * np.eye(len(x))  # positive definite
    model = EllipsoidalCost.from_cost(cost, delta=budget)
    out, moved = model.respond_once(beta, threshold, x)
    s = score(beta, x)
    q = float(beta @ np.linalg.solve(cost, beta))
    needed = (threshold - s) / np.sqrt(q)  # the cheapest cost of reaching the boundary
    if moved:
        step = out - x
        spent = float(np.sqrt(step @ cost @ step))
        assert score(beta, out) >= threshold
        assert spent <= budget * (1 + 1e-9) + 1e-12
        assert abs(spent - needed) <= 1e-9 * (1 + needed)
    else:
        assert np.array_equal(out, x)
        assert s >= threshold or needed > budget


def test_heterogeneous_budgets_span_the_range():
    from strategic_apple_tasting.game import HeterogeneousBudgets

    model = HeterogeneousBudgets(delta=0.4, low=0.1)
    rng = np.random.default_rng(3)
    beta, x = np.array([1.0, 0.0]), np.array([0.0, 0.0])
    # An agent at distance 0.25 moves iff its budget ≥ 0.25: probability (0.4 − 0.25)/0.3 = 0.5.
    moved = [model.respond_once(beta, 0.25, x, rng)[1] for _ in range(20_000)]
    assert abs(np.mean(moved) - 0.5) < 5 * np.sqrt(0.25 / 20_000)


@pytest.mark.parametrize("model", [
    LazyBestResponse(delta=0.3, truthful=0.4),
    TremblingHand(delta=0.3, truthful=0.4, tremble=0.1),
    TremblingHand(delta=0.3, truthful=0.4, tremble=0.1, adversarial=True),
    HeterogeneousBudgets(delta=0.5, low=0.1, truthful=0.2),
    EllipsoidalCost.from_cost(np.diag([2.0, 1.0, 0.5]), delta=0.3, truthful=0.4),
], ids=lambda m: f"{m.name}-{getattr(m, 'adversarial', '')}")
def test_agent_budget_replays_the_responses(model):
    """``BUDGET`` draws what ``respond`` draws: replayed budgets predict exactly who moves."""
    core, unit = model.compiled(), model._replace(delta=1.0).compiled()
    respond, budget = RESPOND[type(core)], BUDGET[type(core)]
    reach_unit = REACH[type(core)]
    rng_respond, rng_budget = np.random.default_rng(11), np.random.default_rng(11)
    draw = np.random.default_rng(12)
    out = np.empty(3)
    movers = 0
    for _ in range(2000):
        beta, x = draw.standard_normal(3), draw.uniform(-1, 1, 3)
        c = score(beta, x) + draw.uniform(-0.2, 0.6) * norm(beta)
        moved = respond(core, rng_respond, beta, c, x, out)
        b = budget(core, rng_budget)
        need = c - score(beta, x)
        can = need > 0 and need <= b * reach_unit(unit, beta)
        assert bool(moved) == can
        movers += bool(moved)
    assert rng_respond.random() == rng_budget.random()  # the streams stayed in step
    assert 200 < movers < 1800


def test_a_move_of_exactly_the_budget_is_made():
    """`def:br` allows ‖x′ − x‖ ≤ δ: an agent at x = 0.82 − 0.01 needs exactly δ = 0.01 to reach
    the threshold 0.82, which rounding makes 0.010000000000000009: a tie, and the agent moves.
    A move genuinely past the budget is still refused."""
    beta, out = np.array([1.0]), np.empty(1)
    x = np.array([0.82 - 0.01])
    assert 0.82 - x[0] > 0.01  # rounding has made the tie longer than the budget
    assert lazy_move(beta, 0.82, 0.01, x, out) and score(beta, out) >= 0.82
    rng = np.random.default_rng(0)
    ellipse = EllipsoidalCost.from_cost(np.eye(1), delta=0.01)
    assert RESPOND[type(ellipse.compiled())](ellipse.compiled(), rng, beta, 0.82, x, out)
    assert not lazy_move(beta, 0.82, 0.01, np.array([0.82 - 0.0100001]), out)
