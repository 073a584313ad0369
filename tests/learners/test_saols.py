"""SA-OLS against a naive per-round implementation written straight from `alg:sa-ols`."""

import numpy as np
import pytest

from strategic_apple_tasting import SAOLS, Game
from strategic_apple_tasting.game import LinearThreshold
from tests.helpers import replay


def naive_saols(game: Game, seed: int, horizon: int):
    """`alg:sa-ols` as a researcher would write it: refit with lstsq on all clean data every
    round (bandit: θ̂0 on all rejected data after a reject-all warm-up)."""
    inst = game.instance(seed)
    d, bandit = game.dimension, game.feedback == "bandit"
    X1, y1, X0, y0 = [], [], [], []
    decisions = []
    for t in range(horizon):
        if t < d:
            beta, c = np.zeros(d), -1.0
        elif bandit and t < 2 * d:
            beta, c = np.zeros(d), 1.0
        else:
            theta1 = np.linalg.lstsq(np.array(X1), np.array(y1), rcond=None)[0]
            theta0 = (np.linalg.lstsq(np.array(X0), np.array(y0), rcond=None)[0] if bandit
                      else np.zeros(d))
            beta = theta1 - theta0
            c = game.delta * np.linalg.norm(beta) + game.r0
        x = inst.next_context()
        x_obs, moved = inst.next_response(LinearThreshold(beta, c), x)
        a = moved or float(beta @ x_obs) >= c  # a mover is accepted by the environment's rule
        r1, rew0 = inst.next_rewards(x)
        decisions.append(a)
        margin = 1e-9 * (abs(c) + np.linalg.norm(beta) * np.linalg.norm(x_obs))
        if a and (t < d or float(beta @ x_obs) > c + margin):
            X1.append(x_obs)
            y1.append(r1)
        elif not a and bandit:
            X0.append(x_obs)
            y0.append(rew0)
    final1 = np.linalg.lstsq(np.array(X1), np.array(y1), rcond=None)[0]
    final0 = np.linalg.lstsq(np.array(X0), np.array(y0), rcond=None)[0] if bandit else 0.0
    return np.array(decisions), final1 - final0, len(y1)


@pytest.mark.parametrize("feedback, r0", [("apple", 0.0), ("apple", 0.3), ("bandit", 0.0)])
@pytest.mark.parametrize("seed", [0, 1])
def test_saols_decides_like_the_naive_version(feedback, r0, seed):
    game = Game(dimension=4, delta=0.15, feedback=feedback, r0=r0, sigma=0.3)
    horizon = 1500
    want, est, n_clean = naive_saols(game, seed, horizon)
    rep = replay(game, SAOLS(), seed, horizon)  # the per-round API, as a user calls it
    assert np.array_equal(rep["accepted"], want)
    assert int((rep["used"] & rep["accepted"]).sum()) == n_clean
    assert np.allclose(rep["learner"].estimate(), est, rtol=1e-9, atol=1e-12)
