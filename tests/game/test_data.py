"""A data set's rows as the game: rows drawn uniformly, by weight or in a given
order; each row's own outcome as the reward; agents that game a subset of the features, the
same to the bit as the ellipsoidal cost they specialize, against linear and general rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from strategic_apple_tasting.game import (
    DataContexts,
    EllipsoidalCost,
    Game,
    LazyBestResponse,
    SubsetGaming,
)
from strategic_apple_tasting.game.agents import REACH, RESPOND
from strategic_apple_tasting.game.best_response import respond_to_rule
from strategic_apple_tasting.game.policies import score
from strategic_apple_tasting.learners import LinUCB


def _data(n=5, d=3, seed=0, **kw):
    rng = np.random.default_rng(seed)
    rows = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    fields = dict(rows=rows, repaid=(rng.random(n) < 0.6).astype(float),
                  if_repaid=np.full(n, 0.2), if_defaulted=np.full(n, -1.0))
    return DataContexts(**{**fields, **kw})


finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
cases = st.integers(1, 7).flatmap(lambda d: st.tuples(
    arrays(np.float64, d, elements=finite), arrays(np.float64, d, elements=finite),
    arrays(np.bool_, d)))


@settings(max_examples=400, deadline=None)
@given(cases, finite, st.floats(0, 5, allow_nan=False))
def test_subset_gaming_is_the_masked_ellipsoid_to_the_bit(case, threshold, delta):
    """The O(d) subset model answers every linear rule exactly as the ellipsoidal cost with
    A⁻¹ = diag(1_G) (the lending scenario's model before the data game): the same move, the same
    reach, bit for bit."""
    beta, x, mask = case
    subset = SubsetGaming(delta=delta, gameable=mask).compiled()
    ellipsoid = EllipsoidalCost(delta=delta, cost_inv=np.diag(mask.astype(float))).compiled()
    rng = np.random.default_rng(0)
    out_s, out_e = np.empty_like(x), np.empty_like(x)
    moved_s = RESPOND[type(subset)](subset, rng, beta, threshold, x, out_s)
    moved_e = RESPOND[type(ellipsoid)](ellipsoid, rng, beta, threshold, x, out_e)
    assert moved_s == moved_e
    assert np.array_equal(out_s, out_e, equal_nan=True)
    assert REACH[type(subset)](subset, beta) == REACH[type(ellipsoid)](ellipsoid, beta)
    if moved_s:  # a mover is accepted and moved only its gameable features
        assert score(beta, out_s) >= threshold
        assert np.array_equal(out_s[~mask], x[~mask])


def test_subset_gaming_differs_from_lazy_agents_where_a_feature_is_not_gameable():
    """The control of the test above: gaming all features (the lazy ℓ2 move) is another
    move, so equality there is not vacuous."""
    beta, x = np.array([1.0, 1.0, 1.0]), np.zeros(3)
    subset = SubsetGaming(delta=1.0, gameable=np.array([False, True, True]))
    x_s, _ = subset.respond_once(beta, 0.5, x)
    x_l, _ = LazyBestResponse(delta=1.0).respond_once(beta, 0.5, x)
    assert x_s[0] == 0.0 and x_l[0] > 0.0


def _linucb_rule(d=3):
    learner = LinUCB(alpha=1.0, r0=0.3, feedback="apple").reset(d, 0)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.normal(size=d) * 0.3
        learner.update(x, True, float(x.sum()))
    return learner.policy()


def test_a_subset_gamer_answers_a_general_rule_within_its_features():
    rule = _linucb_rule()
    rng = np.random.default_rng(2)
    everything = SubsetGaming(delta=0.8, gameable=np.ones(3, dtype=bool))
    some = SubsetGaming(delta=0.8, gameable=np.array([False, True, True]))
    movers = 0
    for _ in range(40):
        x = rng.normal(size=3) * 0.4
        # With every feature gameable the subset metric is the identity: the lazy agents'
        # numerical best response, bit for bit.
        a = respond_to_rule(everything, rule, x, np.random.default_rng(0))
        b = respond_to_rule(LazyBestResponse(delta=0.8), rule, x, np.random.default_rng(0))
        assert a[1] == b[1] and np.array_equal(a[0], b[0])
        x_obs, moved = respond_to_rule(some, rule, x, np.random.default_rng(0))
        if moved:
            movers += 1
            assert rule.accepts(x_obs)
            assert x_obs[0] == x[0]  # the first feature cannot be bought
            assert np.linalg.norm(x_obs - x) <= 0.8 * (1 + 1e-6)
        else:
            assert np.array_equal(x_obs, x)
    assert movers > 0


def test_rows_are_drawn_uniformly_by_weight_or_in_order():
    data = _data(n=4)
    game = Game(dimension=3, contexts=data, agents=SubsetGaming(
        gameable=np.array([False, True, False])))
    inst = game.instance(0)
    draws = 20_000
    counts = np.bincount([_row(inst) for _ in range(draws)], minlength=4)
    # Each count is binomial(20,000, 1/4): sd 61; 5 sd is a 6e-7 chance per row of a false
    # alarm on this fixed seed.
    assert np.all(np.abs(counts - draws / 4) < 5 * np.sqrt(draws * 0.25 * 0.75)), counts
    weighted = game.contexts._replace(weights=np.array([0.1, 0.2, 0.7, 0.0]))
    inst = Game(dimension=3, contexts=weighted, agents=game.agents).instance(0)
    counts = np.bincount([_row(inst) for _ in range(draws)], minlength=4)
    expected = draws * np.array([0.1, 0.2, 0.7, 0.0])
    sd = np.sqrt(draws * np.array([0.1, 0.2, 0.7, 0.0]) * (1 - np.array([0.1, 0.2, 0.7, 0.0])))
    assert np.all(np.abs(counts - expected) <= 5 * sd), counts  # the row of weight 0: never
    ordered = game.contexts._replace(order=np.array([2, 0, 3]))
    inst = Game(dimension=3, contexts=ordered, agents=game.agents).instance(0)
    assert [_row(inst) for _ in range(7)] == [2, 0, 3, 2, 0, 3, 2]


def _row(inst):
    x = inst.next_context()
    assert np.array_equal(x, inst.game.contexts.rows[inst._row])
    return inst._row


def test_the_reward_is_the_drawn_rows_outcome():
    data = _data(n=3, repaid=np.array([1.0, 0.0, 0.25]))
    game = Game(dimension=3, contexts=data, agents=SubsetGaming(gameable=np.zeros(3, bool)))
    assert game.rewards == "recorded"
    inst = game.instance(4)
    seen: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for _ in range(4000):
        x = inst.next_context()
        r1, r0 = inst.next_rewards(x)
        seen[inst._row].append(r1)
        assert r0 == 0.0
        assert inst.mean_reward(x) == [0.2, -1.0, 0.25 * 0.2 - 0.75][inst._row]
    assert set(seen[0]) == {0.2} and set(seen[1]) == {-1.0}
    share = np.mean(np.array(seen[2]) == 0.2)  # about 1,333 draws: sd 0.012
    assert abs(share - 0.25) < 0.06


def test_a_data_game_fits_its_linear_rule_and_names_its_gameable_features():
    data = _data(n=50, d=3, feature_names=("intercept", "income", "cash"), title="toy")
    agents = SubsetGaming(gameable=np.array([False, False, True]))
    game = Game(dimension=3, contexts=data, agents=agents, delta=0.3)
    theta, sigma = data.fitted()
    np.testing.assert_array_equal(game.theta1, theta)
    assert game.sigma == sigma > 0
    expected = {"gameable": "cash", "contexts": "data", "data": "toy", "rows": 50,
                "reward_scale": 1.0, "rewards": "recorded", "agents": "subset"}
    shown = game.settings()
    assert {k: shown[k] for k in expected} == expected
    linear = Game(dimension=3, contexts=data, agents=agents, rewards="linear", sigma=0.0)
    inst = linear.instance(0)
    x = inst.next_context()
    assert inst.next_rewards(x)[0] == score(theta, x)  # the fit's prediction, no noise
    # The paper's game keeps its columns: no rewards, no data columns.
    assert not {"rewards", "data", "gameable"} & set(Game(dimension=3).settings())


@pytest.mark.parametrize("kw, message", [
    (dict(rewards="recorded", contexts=None), "rewards 'recorded' needs a data set's rows"),
    (dict(rewards="both"), "rewards must be one of linear, recorded, got 'both'"),
    (dict(feedback="bandit"), "feedback must be apple with data contexts"),
    (dict(agents=SubsetGaming(gameable=np.ones(2, bool))),
     "gameable must have one entry per feature (3), got 2"),
])
def test_a_data_game_refuses_what_it_cannot_be(kw, message):
    settings = {"dimension": 3, "contexts": _data(),
                "agents": SubsetGaming(gameable=np.ones(3, bool)), **kw}
    if settings["contexts"] is None:
        del settings["contexts"]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Game(**settings)
