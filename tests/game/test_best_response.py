"""The numerical best response to a general rule (LinUCB's), against brute force (DESIGN §6):
budget respected, a mover accepted, the move minimal, a non-mover unable to reach; the same
random numbers as the closed-form responses; the closed form on linear rules."""

from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from strategic_apple_tasting.game import (
    EllipsoidalCost,
    Game,
    HeterogeneousBudgets,
    LazyBestResponse,
    TremblingHand,
)
from strategic_apple_tasting.game.agents import RESPOND, lazy_move
from strategic_apple_tasting.game.best_response import (
    minimal_move,
    respond_to_rule,
    scratch_rows,
)
from strategic_apple_tasting.game.policies import GeneralRule, norm, score
from strategic_apple_tasting.learners import LinUCB
from strategic_apple_tasting.learners.two_arm_ridge import LINUCB, new_state
from tests.helpers import naive_linucb


def linucb_case(seed: int, d: int, feedback: str):
    """A LinUCB rule after a few anisotropic points (a strongly curved rule), its naive g, a
    rejected true context and a budget (the next seed's rule if this one accepts them all)."""
    for attempt in range(100):
        case = _linucb_case(seed + 1000 * attempt, d, feedback)
        if case is not None:
            return case
    raise AssertionError("no rule that rejects anyone")


def _linucb_case(seed: int, d: int, feedback: str):
    rng = np.random.default_rng(seed)
    alpha = float(rng.uniform(0.2, 3.0))
    r0 = float(rng.uniform(-0.3, 1.0)) if feedback == "apple" else 0.0
    learner = LinUCB(alpha=alpha, r0=r0, feedback=feedback).reset(d, rng)
    theta = rng.standard_normal(d) * rng.uniform(0, 1)
    scales = np.exp(rng.uniform(-3, 0, d))
    data = {True: [], False: []}
    for _ in range(int(rng.integers(0, 30))):
        x = rng.standard_normal(d) * scales
        a = bool(rng.random() < 0.5) if feedback == "bandit" else True
        r = float(theta @ x + 0.3 * rng.standard_normal())
        learner.update(x, a, r)
        data[a].append((x, r))
    g = naive_linucb(d, data, alpha, 1.0, r0, feedback == "bandit")
    for _ in range(200):
        x = rng.standard_normal(d)
        x *= rng.uniform(0, 1) / np.linalg.norm(x)
        if g(x)[0] < 0:
            return learner.policy(), g, x, float(rng.uniform(0.05, 1.0)), rng
    return None


def brute_min_cost(g, x, budget, cost):
    """Cheapest move v (cost sqrt(vᵀAv)) with g(x + v) ≥ 0: dense directions × a fine (partly
    log-spaced) grid of distances up to 3·budget, the 12 cheapest rays refined by bisection
    and then SLSQP; and the origin, the apex of a bandit LinUCB rule."""
    d = len(x)
    if d == 2:
        phi = np.linspace(0, 2 * np.pi, 2000, endpoint=False)
        U = np.stack([np.cos(phi), np.sin(phi)], 1)
    else:
        U = np.random.default_rng(0).standard_normal((2000, d))
    U = U / np.sqrt(np.einsum("ij,jk,ik->i", U, cost, U))[:, None]  # unit cost
    ts = np.unique(np.concatenate([np.geomspace(1e-4, 3, 100), np.linspace(0, 3, 201)[1:]]))
    ts = ts * budget
    hit = g((x + ts[None, :, None] * U[:, None, :]).reshape(-1, d)).reshape(len(U), -1) >= 0
    first = np.where(hit.any(1), hit.argmax(1), len(ts))
    best = float(np.sqrt(x @ cost @ x)) if g(np.zeros(d))[0] >= 0 else np.inf
    for k in np.argsort(first)[:12]:
        if first[k] == len(ts):
            break
        lo, hi = (ts[first[k] - 1] if first[k] else 0.0), ts[first[k]]
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if g(x + mid * U[k])[0] >= 0 else (mid, hi)
        best = min(best, hi)
        res = minimize(lambda v: v @ cost @ v, hi * U[k], jac=lambda v: 2 * cost @ v,
                       method="SLSQP", options={"ftol": 1e-15, "maxiter": 200},
                       constraints=[{"type": "ineq", "fun": lambda v: g(x + v)[0]}])
        if g(x + res.x)[0] >= 0:
            best = min(best, float(np.sqrt(res.x @ cost @ res.x)))
    return best


CASES = [(seed, d, feedback, ellipsoid) for seed in range(2) for d in (2, 3)
         for feedback in ("apple", "bandit") for ellipsoid in (False, True)]


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_minimal_move_against_brute_force(feedback):
    """Apple tasting: the rejected set {g < 0} is convex, and the move is the cheapest to a
    relative 1e-6. Bandit feedback: g = UCB1 − UCB0 is a difference of norms, {g ≥ 0} a
    non-convex cone with several local minima, and the search finds a local one. In 226 random
    cases of longer runs it found the brute-force minimum to 1e-6 in all but 2, which were
    0.7% and 3.4% dearer (see game/best_response.py); so here: within 5% always, and to 1e-6
    in at least 80% of the cases (all 8 of them, when this was written)."""
    tol = 1e-6 if feedback == "apple" else 0.05
    exact = 0
    cases = [c for c in CASES if c[2] == feedback]
    for seed, d, _, ellipsoid in cases:
        rule, g, x, budget, rng = linucb_case(100 * seed + 10 * d + ellipsoid, d, feedback)
        # The agents' model is the metric (its kind chooses the cost), as agents call it.
        cost, metric = np.eye(d), LazyBestResponse().compiled()
        if ellipsoid:
            m = rng.uniform(-1, 1, (d, d))
            cost = m @ m.T + 0.3 * np.eye(d)
            metric = EllipsoidalCost.from_cost(cost).compiled()
        out, work = np.empty(d), np.empty((scratch_rows(d), d))
        ours = minimal_move(rule.state, metric, budget, rule.beta, x, out, work)
        brute = brute_min_cost(g, x, budget, cost)
        if ours < np.inf:  # a mover: accepted, within budget, at the cost reported
            spent = float(np.sqrt((out - x) @ cost @ (out - x)))
            assert rule.accepts(out) and g(out)[0] >= -1e-12
            assert spent <= budget * (1 + 1e-12)
            assert abs(spent - ours) <= 1e-9 * ours
            assert brute <= ours * (1 + 1e-6)  # it cannot beat the true minimum
            assert ours <= brute * (1 + tol), (seed, d, ellipsoid, ours, brute)
            exact += ours <= brute * (1 + 1e-6)
        else:  # a non-mover could not have reached {g ≥ 0} within its budget
            assert np.array_equal(out, x)
            assert brute > budget / (1 + tol), (seed, d, ellipsoid, brute, budget)
            exact += brute > budget
    assert exact >= (len(cases) if feedback == "apple" else 0.8 * len(cases))


finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def _linear_rule(beta, threshold):
    """A LinUCB state whose rule is exactly g(z) = ⟨β, z⟩ − c (α = 0, θ̂1 = β)."""
    state = new_state(len(beta), LINUCB, bandit=False, r0=threshold, ridge=1.0, alpha=0.0)
    state.theta[0] = beta
    return state


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5).flatmap(lambda d: st.tuples(arrays(np.float64, d, elements=finite),
                                                     arrays(np.float64, d, elements=finite))),
       finite, st.floats(0.01, 2))
def test_numerical_response_to_a_linear_rule_is_the_closed_form(beta_x, threshold, budget):
    beta, x = beta_x
    assume(norm(beta) > 1e-3)
    need = (threshold - score(beta, x)) / norm(beta)
    assume(abs(need - budget) > 1e-9 * budget)  # not on the edge of the budget
    lazy = np.empty_like(x)
    moved = lazy_move(beta, threshold, budget, x, lazy)
    out, work = np.empty_like(x), np.empty((scratch_rows(len(x)), len(x)))
    cost = minimal_move(_linear_rule(beta, threshold), LazyBestResponse().compiled(), budget,
                        beta, x, out, work)
    assert (cost < np.inf) == moved
    if moved:
        assert abs(cost - need) <= 1e-9 * (need + 1e-3)
        assert np.allclose(out, lazy, rtol=0, atol=1e-9 * (1 + np.abs(x).max()))
        assert score(beta, out) >= threshold
    else:
        assert np.array_equal(out, x)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda d: st.tuples(
    arrays(np.float64, d, elements=st.floats(-2, 2)),
    arrays(np.float64, d, elements=st.floats(-2, 2)),
    arrays(np.float64, (d, d), elements=st.floats(-1, 1)))), st.floats(-2, 2), st.floats(0.01, 2))
def test_numerical_ellipsoidal_response_to_a_linear_rule_is_the_closed_form(data, threshold,
                                                                            budget):
    beta, x, m = data
    assume(norm(beta) > 1e-3)
    model = EllipsoidalCost.from_cost(m @ m.T + 0.5 * np.eye(len(x)), delta=budget)
    need = (threshold - score(beta, x)) / np.sqrt(beta @ model.cost_inv @ beta)
    assume(abs(need - budget) > 1e-9 * budget)
    closed, moved = model.respond_once(beta, threshold, x)
    out, work = np.empty_like(x), np.empty((scratch_rows(len(x)), len(x)))
    cost = minimal_move(_linear_rule(beta, threshold), model.compiled(), budget, beta, x, out,
                        work)
    assert (cost < np.inf) == moved
    if moved:
        assert abs(cost - need) <= 1e-9 * (need + 1e-3)
        assert np.allclose(out, closed, rtol=0, atol=1e-9 * (1 + np.abs(x).max()))


def _models():
    cost = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
    return [LazyBestResponse(delta=0.3), LazyBestResponse(delta=0.3, truthful=0.4),
            TremblingHand(delta=0.3, tremble=0.1, truthful=0.4),
            TremblingHand(delta=0.3, tremble=0.1, adversarial=True),
            HeterogeneousBudgets(delta=0.4, low=0.1, truthful=0.4),
            EllipsoidalCost.from_cost(cost, delta=0.3, truthful=0.4)]


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_same_random_numbers_as_the_closed_form(feedback):
    """Common random numbers: against LinUCB's rule every agent model draws exactly what it
    draws against a linear threshold, mover or not, so every learner meets the same agents."""
    rule, _, _, _, rng = linucb_case(7, 3, feedback)
    for model in _models():
        for _ in range(30):
            x = rng.uniform(-1, 1, 3)
            a, b = np.random.default_rng(11), np.random.default_rng(11)
            respond_to_rule(model, rule, x, a)
            model.respond_once(rule.beta, rule.threshold, x, b)
            assert a.bit_generator.state == b.bit_generator.state, model


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_trembling_and_heterogeneous_responses(feedback):
    """Trembling movers overshoot their minimal move by at most min(δ − m, γ) and stay
    accepted; heterogeneous agents keep to their own drawn budget."""
    rule, _, _, _, rng = linucb_case(8, 3, feedback)
    lazy = LazyBestResponse(delta=0.3)
    n_moved = 0
    for _ in range(200):
        x = rng.uniform(-1, 1, 3)
        base, moved = respond_to_rule(lazy, rule, x)
        for model in (TremblingHand(delta=0.3, tremble=0.1),
                      TremblingHand(delta=0.3, tremble=0.1, adversarial=True)):
            out, trembled = respond_to_rule(model, rule, x, np.random.default_rng(1))
            assert trembled == moved
            if moved:
                m = np.linalg.norm(base - x)
                extra = np.linalg.norm(out - x) - m
                assert rule.accepts(out)
                assert -1e-9 <= extra <= min(0.3 - m, 0.1) + 1e-9
        model = HeterogeneousBudgets(delta=0.4, low=0.1)
        draws = np.random.default_rng(2)
        budget = 0.1 + 0.3 * draws.random()  # the budget this agent draws
        out, moved_h = respond_to_rule(model, rule, x, np.random.default_rng(2))
        if moved_h:
            assert rule.accepts(out) and np.linalg.norm(out - x) <= budget * (1 + 1e-12)
        n_moved += moved
    assert n_moved > 10  # the checks above were exercised


class _Stubborn(NamedTuple):
    """A user's agent model with a response to linear thresholds only (registered in RESPOND
    under its own class, not in RESPOND_RULE)."""

    delta: float = 0.1
    truthful: float = 1.0

    name = "stubborn"

    def check(self) -> None:
        pass


def test_an_agent_model_without_a_numerical_response_is_refused(monkeypatch):
    monkeypatch.setitem(RESPOND, _Stubborn, None)
    game = Game(dimension=2, agents=_Stubborn())
    with pytest.raises(ValueError, match="agents 'stubborn' have no numerical best response to "
                       "the non-linear rules of linucb; allowed agents: lazy, trembling, "
                       "heterogeneous, ellipsoid"):
        LinUCB().bind(game.instance(0))
    rule = LinUCB(r0=0.5, feedback="apple").reset(2).policy()
    assert isinstance(rule, GeneralRule)
    with pytest.raises(ValueError, match="no numerical best response"):
        respond_to_rule(_Stubborn(), rule, np.zeros(2))


# -- LinUCB's rule under apple tasting answered in closed form ---------------------

def _numerical(rule):
    """The same rule given as a Python function: agents answer it by the numerical search
    alone (a function rule has no closed form)."""
    return GeneralRule.from_function(rule.value, rule.beta, rule.threshold,
                                     gradient=rule.gradient)


def _move(rule, x, budget):
    d = len(x)
    out, work = np.empty(d), np.empty((scratch_rows(d), d))
    cost = minimal_move(rule.state, LazyBestResponse().compiled(), budget,
                        np.asarray(rule.beta, float), x, out, work)
    return cost, out


def test_the_closed_form_is_the_numerical_search_s_move_or_cheaper():
    """On 400 random LinUCB rules under apple tasting (d = 2..6, after 0..40 points), agents
    it rejects, some within reach: the closed form (the secular equation of game/optimistic.py)
    moves exactly when the numerical search does, lands where the rule accepts, within budget,
    and costs no more than the search's move, and less by at most the search's tolerance (1e-6
    relative: the search stops there)."""
    from strategic_apple_tasting.game.optimistic import nearest_point

    rng = np.random.default_rng(23)
    movers = 0
    for case in range(400):
        d = int(rng.integers(2, 7))
        learner = LinUCB(alpha=float(rng.uniform(0.1, 3.0)), r0=float(rng.uniform(-0.3, 0.8)),
                         feedback="apple").reset(d, rng)
        for _ in range(int(rng.integers(0, 40))):
            x = rng.uniform(-1, 1, d) / np.sqrt(d)
            learner.update(x, True, float(x.sum() / d + 0.1 * rng.standard_normal()))
        rule = learner.policy()
        if not isinstance(rule, GeneralRule):
            continue
        x = rng.uniform(-1, 1, d) / np.sqrt(d)
        if rule.accepts(x):
            continue
        state = rule.state
        z, work = np.empty(d), np.empty((3 * d + 2, d))
        dist = nearest_point(state.theta[0] - state.theta[1], state.r0, state.alpha,
                             state.fits[0], x, z, work)
        assert np.isfinite(dist), "the closed form applies to every such rule at d >= 2"
        assert abs(rule.value(z)) <= 1e-12 * (1 + abs(state.r0)), "z is on the boundary"
        budget = float(rng.uniform(0.5, 1.5)) * dist  # some reach it, some do not
        cost, out = _move(rule, x, budget)
        search, _ = _move(_numerical(rule), x, budget)
        assert (cost < np.inf) == (search < np.inf), (case, cost, search)
        if cost < np.inf:
            movers += 1
            assert rule.accepts(out) and np.linalg.norm(out - x) <= budget * (1 + 1e-12)
            assert cost <= search * (1 + 1e-12) and cost >= search * (1 - 1e-6), (cost, search)
            assert abs(cost - dist) <= 1e-12 * dist
    assert movers > 30


def test_the_closed_form_is_the_brute_force_minimum():
    """The move of the closed form is the cheapest a dense search of directions refined by
    SLSQP finds, to a relative 1e-9 (the numerical search's own tolerance is 1e-6)."""
    for seed in range(6):
        d = 2 + seed % 3
        rule, g, x, _, _ = linucb_case(500 + seed, d, "apple")
        cost, _ = _move(rule, x, 10.0)  # a budget that reaches the boundary
        assert cost < np.inf
        brute = brute_min_cost(g, x, 10.0 / 3, np.eye(d))  # its grid reaches 3·budget
        assert cost <= brute * (1 + 1e-9), (cost, brute)
        assert cost >= brute * (1 - 1e-6), (cost, brute)
