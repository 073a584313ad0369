"""Offset OLS against a naive per-round version written straight from its definition, and the
gain it is for: where c1 is tiny it learns from the gamed points SA-OLS throws away."""

import numpy as np
import pytest

from strategic_apple_tasting import SAOLS, Game
from strategic_apple_tasting.engine.kernel import FLOAT_COLUMNS
from strategic_apple_tasting.engine.simulate import run_one
from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.learners import OffsetOLS, ShiftedOLS
from tests.helpers import replay


def naive_offset_ols(game: Game, seed: int, horizon: int, offset: bool = True):
    """Refit with lstsq every round on every accepted point, as [x', g] with g = 1 for a point
    not strictly above the boundary (bandit: θ̂0 on the rejected points)."""
    inst = game.instance(seed)
    d, bandit = game.dimension, game.feedback == "bandit"
    X1, y1, X0, y0 = [], [], [], []
    decisions = []

    def fit(X, y, k):
        return np.linalg.lstsq(np.array(X), np.array(y), rcond=None)[0][:k] if X else np.zeros(k)
    for t in range(horizon):
        if t < d:
            beta, c = np.zeros(d), -1.0
        elif bandit and t < 2 * d:
            beta, c = np.zeros(d), 1.0
        else:
            beta = fit(X1, y1, d) - (fit(X0, y0, d) if bandit else 0.0)
            c = game.delta * np.linalg.norm(beta) + game.r0
        x = inst.next_context()
        x_obs, moved = inst.next_response(LinearThreshold(beta, c), x)
        a = moved or float(beta @ x_obs) >= c
        r1, rew0 = inst.next_rewards(x)
        decisions.append(a)
        margin = 1e-9 * (abs(c) + np.linalg.norm(beta) * np.linalg.norm(x_obs))
        if a:
            gamed = not (t < d or float(beta @ x_obs) > c + margin)
            X1.append([*x_obs, float(gamed and offset)])
            y1.append(r1)
        elif bandit:
            X0.append(x_obs)
            y0.append(rew0)
    return np.array(decisions), fit(X1, y1, d) - (fit(X0, y0, d) if bandit else 0.0)


@pytest.mark.parametrize("feedback, r0", [("apple", 0.0), ("apple", 0.2), ("bandit", 0.0)])
def test_offset_ols_decides_like_the_naive_version(feedback, r0):
    game = Game(dimension=4, delta=0.4, feedback=feedback, r0=r0, sigma=0.3)
    want, est = naive_offset_ols(game, 0, 1200)
    rep = replay(game, OffsetOLS(), 0, 1200)  # the per-round API, as a user calls it
    assert np.array_equal(rep["accepted"], want)
    assert np.allclose(rep["learner"].estimate(), est, rtol=1e-8, atol=1e-10)
    # Control: without the offset column (every point learned as if clean) the fit differs.
    _, plain = naive_offset_ols(game, 0, 1200, offset=False)
    assert not np.allclose(plain, est, rtol=1e-3)


def test_offset_ols_learns_from_gamed_points_where_c1_is_tiny():
    """d = 20, δ = 0.5: c1 = 0.0076, so SA-OLS keeps about 1 accepted point in 130. Mean
    regret over seeds 0–3 at T = 20,000, measured: r0 = 0, SA-OLS 89.0 (seeds 60–114) against
    offset-ols 8.4 (7.8–10.1); r0 = 0.1, SA-OLS 277 (214–327) against offset-ols 25.2 (one
    seed 70.7, the others 9–11). The test asks for 3×, well inside both gaps even if every
    seed were offset-ols's worst. The control: shifted-ols learns from the same gamed points
    without the offset, and at r0 = 0.1 (where the rule's scale matters) it measured 197:
    the same 3× test rejects it."""
    regret = FLOAT_COLUMNS.index("regret")

    def mean_regret(learner, r0):
        game = Game(dimension=20, delta=0.5, r0=r0)
        return np.mean([run_one(game, learner.clone(), seed, np.array([20_000]))[1][-1, regret]
                        for seed in range(4)])
    assert mean_regret(SAOLS(), 0.0) > 3 * mean_regret(OffsetOLS(), 0.0)
    assert mean_regret(SAOLS(), 0.1) > 3 * mean_regret(OffsetOLS(), 0.1)
    assert not mean_regret(SAOLS(), 0.1) > 3 * mean_regret(ShiftedOLS(), 0.1)
