"""Game settings: validation and seeded instances."""

import numpy as np
import pytest

from strategic_apple_tasting.game import Game


@pytest.mark.parametrize("kwargs, message", [
    ({"dimension": 0}, "dimension must be an integer >= 1, got 0"),
    ({"dimension": 2.5}, "dimension must be an integer >= 1, got 2.5"),
    ({"dimension": 2, "delta": float("nan")}, "delta must be a finite number >= 0, got nan"),
    ({"dimension": 2, "delta": -0.1}, "delta must be a finite number >= 0, got -0.1"),
    ({"dimension": 2, "feedback": "full"}, "feedback must be one of apple, bandit"),
    ({"dimension": 2, "sigma": -1.0}, "sigma must be a finite number >= 0"),
    ({"dimension": 2, "truthful": 2.0}, "truthful must be a probability"),
    ({"dimension": 2, "feedback": "bandit", "r0": 0.5}, "r0 must be 0 under bandit"),
    ({"dimension": 2, "theta1": [1.0, 2.0, 3.0]}, r"theta1 must have shape \(2,\)"),
    ({"dimension": 2, "theta1": [1.0, np.nan]}, "theta1 must be finite"),
])
def test_bad_settings_raise_one_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Game(**kwargs)


def test_theta_is_drawn_from_the_seed_on_the_unit_sphere():
    game = Game(dimension=4, feedback="bandit")
    a, b, c = game.instance(3), game.instance(3), game.instance(4)
    assert np.array_equal(a.theta1, b.theta1) and np.array_equal(a.theta0, b.theta0)
    assert not np.array_equal(a.theta1, c.theta1)
    assert np.isclose(np.linalg.norm(a.theta1), 1) and np.isclose(np.linalg.norm(a.theta0), 1)
    # θ1 does not depend on the feedback mode; θ0 = 0 under apple tasting.
    apple = Game(dimension=4).instance(3)
    assert np.array_equal(apple.theta1, a.theta1) and not apple.theta0.any()


def test_given_theta_is_used():
    inst = Game(dimension=2, theta1=[0.6, 0.8]).instance(0)
    assert inst.theta1.tolist() == [0.6, 0.8]


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        Game(dimension=2).instance(seed)
