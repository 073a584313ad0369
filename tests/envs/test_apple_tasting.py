"""The game as a Gymnasium environment: Gymnasium's own checker, the engine's rounds bit for bit,
observations inside their declared spaces, and bad input refused in one line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from strategic_apple_tasting import Game, LazyBestResponse, make_learner  # noqa: E402
from strategic_apple_tasting.engine.reference import play  # noqa: E402
from strategic_apple_tasting.envs import (  # noqa: E402
    ENV_ID,
    StrategicAppleTastingEnv,
    rule_to_action,
)
from strategic_apple_tasting.game import (  # noqa: E402
    DataContexts,
    EllipsoidalCost,
    LinearThreshold,
    SubsetGaming,
)


def _data_game() -> Game:
    rng = np.random.default_rng(0)
    rows = np.column_stack([np.ones(40), rng.normal(size=(40, 2))])
    repaid = (rng.random(40) < 0.6).astype(float)
    reward = np.where(repaid > 0, 0.2, -1.0)
    data = DataContexts(rows=rows, repaid=repaid, if_repaid=reward, if_defaulted=reward.copy())
    return Game(dimension=3, contexts=data, delta=0.5,
                agents=SubsetGaming(gameable=np.array([False, True, True])))


GAMES = {
    "paper": lambda: Game(dimension=3, delta=0.1),
    "bandit": lambda: Game(dimension=2, delta=0.3, feedback="bandit"),
    "ellipsoid": lambda: Game(dimension=2, agents=EllipsoidalCost.from_cost(
        np.diag([4.0, 0.25]), delta=0.4)),
    "data": _data_game,
}


@pytest.mark.parametrize("which", sorted(GAMES))
def test_gymnasium_check_env_passes(which):
    """Gymnasium's checker passes; its only warnings are about what is true of the game: an
    outcome with Gaussian noise is unbounded (the data game's is not, and warns of nothing but
    the render modes an unregistered environment cannot show)."""
    env = StrategicAppleTastingEnv(GAMES[which](), horizon=20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    messages = [str(w.message) for w in caught]
    allowed = ["infinity", "render modes"] if which != "data" else ["render modes"]
    assert all(any(a in m for a in allowed) for m in messages), messages


def test_made_by_gymnasium_with_the_game_settings():
    env = gymnasium.make(f"strategic_apple_tasting.envs:{ENV_ID}", dimension=4, delta=0.2,
                         horizon=3)
    assert env.unwrapped.game == Game(dimension=4, delta=0.2)
    env.reset(seed=5)
    steps = [env.step(env.action_space.sample()) for _ in range(3)]
    assert [s[3] for s in steps] == [False, False, True]  # truncated at the horizon
    with pytest.raises(Exception, match="reset"):
        env.step(env.action_space.sample())


@pytest.mark.parametrize("which", sorted(GAMES))
def test_observations_stay_in_their_spaces(which):
    """Agents that land exactly on a boundary, or move their whole budget, stay inside the
    declared feature bounds (which are tight: a random rule's observations reach past half of
    them, so a bound too small by the budget would be crossed)."""
    env = StrategicAppleTastingEnv(GAMES[which](), horizon=3000)
    env.reset(seed=1)
    space = env.observation_space
    rng = np.random.default_rng(2)
    largest = 0.0
    for _ in range(3000):
        action = rng.uniform(-1, 1, env.action_space.shape)
        obs, *_ = env.step(action)
        assert space.contains(obs), obs
        largest = max(largest, float(np.max(np.abs(obs["features"])
                                            / space["features"].high)))
    assert largest > 0.5


def _grouped_game() -> Game:
    """German-credit-like rows in two groups with their own budgets (one of them 0)."""
    rng = np.random.default_rng(4)
    rows = np.column_stack([np.ones(60), rng.normal(size=(60, 2))])
    repaid = (rng.random(60) < 1 / (1 + np.exp(-3 * rows[:, 1] - 1))).astype(float)
    reward = np.where(repaid > 0, 1.0, -1.0)
    data = DataContexts(rows=rows, repaid=repaid, if_repaid=reward, if_defaulted=reward.copy(),
                        groups=rng.integers(0, 2, 60), group_names=("a", "b"))
    return Game(dimension=3, contexts=data, delta={"a": 0.0, "b": 0.6},
                agents=SubsetGaming(gameable=np.array([False, True, True])))


@pytest.mark.parametrize("feedback", ["apple", "bandit", "budget by group"])
def test_a_learner_through_the_environment_meets_the_engines_rounds(feedback):
    """SA-OLS played through the environment (its rules scaled into the action box) has the
    regret, rewards and moves of the engine's per-round loop on the same seed, bit for bit.
    Control: the next seed's episode, which the same comparison tells apart."""
    game = (_grouped_game() if feedback == "budget by group"
            else Game(dimension=3, delta=0.2, feedback=feedback))
    horizon, seed = 400, 7

    def engine():
        inst = game.instance(seed)
        learner = make_learner("sa-ols").bind(inst, horizon).reset(3, inst.rngs["learner"])
        return [(r.regret, r.reward, r.moved) for r in play(inst, learner, horizon)]

    def environment(seed):
        env = StrategicAppleTastingEnv(game, horizon=horizon)
        obs, _ = env.reset(seed=seed)
        inst = env.instance
        learner = make_learner("sa-ols").bind(inst, horizon).reset(3, inst.rngs["learner"])
        out = []
        for _ in range(horizon):
            rule = learner.policy()
            obs, reward, _, _, info = env.step(rule_to_action(rule))
            a = learner.act(obs["features"])
            assert a == bool(obs["accepted"])  # the rule's decision is the learner's
            learner.update(obs["features"], a,
                           float(obs["outcome"][0]) if obs["outcome_observed"] else None)
            out.append((info["regret"], reward, info["moved"]))
        return out

    want = engine()
    assert environment(seed) == want
    assert sum(m for *_, m in want) > 10 and sum(r > 0 for r, *_ in want) > 5
    assert environment(seed + 1) != want


def test_seeds_give_the_engines_instances_and_unseeded_resets_are_reproducible():
    env = StrategicAppleTastingEnv(dimension=2, horizon=5)
    env.reset(seed=11)
    assert np.array_equal(env.instance.theta1, Game(dimension=2).instance(11).theta1)

    def two_more(seed):
        env.reset(seed=seed)
        return [(env.reset(), env.instance.theta1.copy())[1] for _ in range(2)]

    first = two_more(3)
    assert all(np.array_equal(a, b) for a, b in zip(first, two_more(3), strict=True))
    assert not np.array_equal(first[0], first[1])  # each episode its own instance


def test_rule_to_action_is_exact_and_lossless():
    rule = LinearThreshold(beta=np.array([5.0, -0.5]), threshold=2.5)
    action = rule_to_action(rule)
    assert np.abs(action).max() <= 1
    assert np.array_equal(action * 8, [5.0, -0.5, 2.5])  # a power of two: no bit lost
    small = LinearThreshold(beta=np.array([0.5, 0.25]), threshold=-0.1)
    assert rule_to_action(small).tolist() == [0.5, 0.25, -0.1]
    with pytest.raises(ValueError, match="finite"):
        rule_to_action(LinearThreshold(beta=np.array([np.nan]), threshold=0.0))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({}, "dimension must be given"),
    ({"dimension": 2, "horizon": 0}, "horizon must be an integer from 1"),
    ({"dimension": 2, "horizon": 2.5}, "horizon must be an integer"),
    ({"dimension": 2, "delay": 3}, r"paper's game \(delay 0, period 1\)"),
    ({"dimension": 2, "period": 2}, "period=2"),
    ({"dimension": 2, "delta": -1.0}, "delta must be a finite number >= 0"),
    ({"game": "paper"}, "game must be a Game"),
    ({"game": Game(dimension=2), "delta": 0.1}, "not both"),
])
def test_bad_settings_are_refused_in_one_line(kwargs, match):
    with pytest.raises(ValueError, match=match) as err:
        StrategicAppleTastingEnv(**kwargs)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("action", "match"), [
    (np.zeros(2), r"action must have shape \(3,\)"),
    (np.array([0.1, np.nan, 0.0]), "action must be finite"),
    ([[0.1, 0.2, 0.3]], r"shape \(3,\)"),
])
def test_bad_actions_are_refused_before_the_round_is_played(action, match):
    env = StrategicAppleTastingEnv(dimension=2, horizon=5)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(action)
    env.step(np.array([0.0, 0.0, -1.0]))
    assert env.step(np.array([0.0, 0.0, -1.0]))[4]["round"] == 2  # no round was lost
    with pytest.raises(ValueError, match="no options"):
        env.reset(options={"x": 1})


def test_lazy_agents_are_the_default_agents():
    assert StrategicAppleTastingEnv(dimension=2).game.agents == LazyBestResponse()
