"""Context samplers: support and distribution."""

import numpy as np
import pytest
from scipy import stats

from strategic_apple_tasting.game import (
    BoundedRatioMixture,
    Game,
    UniformBall,
    UniformSphere,
    draw_contexts,
)


@pytest.mark.parametrize("d", [1, 2, 5, 20])
def test_uniform_ball_radius_law(d):
    x = draw_contexts(UniformBall(radius=2.0), d, 20_000, np.random.default_rng(d))
    r = np.linalg.norm(x, axis=1) / 2.0
    assert r.max() <= 1.0
    # Uniform in the ball ⇔ r^d ~ U(0, 1) and direction uniform; KS at the 1e-3 level.
    assert stats.kstest(r**d, "uniform").pvalue > 1e-3
    assert np.all(np.abs(x.mean(axis=0)) < 5 * 2.0 / np.sqrt(20_000))


def test_uniform_sphere_on_surface():
    x = draw_contexts(UniformSphere(radius=3.0), 4, 1000, np.random.default_rng(0))
    assert np.allclose(np.linalg.norm(x, axis=1), 3.0)


def test_mixture_stays_in_ball_and_mixes():
    model = BoundedRatioMixture(c0=0.25, center=0.8, scale=0.05)
    x = draw_contexts(model, 3, 20_000, np.random.default_rng(1))
    assert np.linalg.norm(x, axis=1).max() <= 1.0 + 1e-12
    # 75% of mass in the cluster near 0.8·e1 pulls the mean of x1 to about 0.6.
    assert 0.55 < x[:, 0].mean() < 0.65


@pytest.mark.parametrize("bad, message", [
    (UniformBall(radius=0.0), "radius must be a finite number > 0"),
    (UniformBall(radius=float("nan")), "radius must be a finite number > 0"),
    (BoundedRatioMixture(c0=0.0), "c0 must be in"),
    (BoundedRatioMixture(scale=-1.0), "scale must be"),
])
def test_context_validation(bad, message):
    with pytest.raises(ValueError, match=message):
        Game(dimension=2, contexts=bad)


def test_greedy_trap_in_one_dimension_needs_r0_and_is_adversarial():
    """d = 1: a good point g (gap m) and a bad point b (gap −r0/2) alternate after the warm-up,
    so accept-all and reject-all lose a constant a round; SA-OLS is trapped on about half the
    seeds (its regret keeps growing)."""
    import pyarrow.compute as pc

    from strategic_apple_tasting import Game, simulate
    from strategic_apple_tasting.game import GreedyTrap

    with pytest.raises(ValueError, match="greedy-trap at dimension 1 needs apple feedback and "
                                         "r0 > 0"):
        Game(dimension=1, contexts=GreedyTrap())
    game = Game(dimension=1, delta=0.1, sigma=0.1, r0=0.2, contexts=GreedyTrap(margin=0.3))
    inst = game.instance(0)
    gaps = [round(inst.gap(inst.next_context()), 12) for _ in range(5)]
    assert gaps[1:] == [0.3, -0.1, 0.3, -0.1]
    table = simulate(game, ["accept-all", "reject-all", "sa-ols"], 2001, seeds=range(16))
    last = table.filter(pc.equal(table.column("t"), 2001)).to_pydict()
    final = {}
    for name, regret in zip(last["learner"], last["regret"], strict=True):
        final.setdefault(name, []).append(regret)
    # Round 1 is the warm-up point 0.01·e1 (gap ±0.01 − 0.2); then 1000 g and 1000 b rounds.
    assert np.allclose(final["accept-all"], 0.1 * 1000 + 0.2, atol=0.0101)
    assert np.allclose(final["reject-all"], 0.3 * 1000)
    trapped = sum(r > 100 for r in final["sa-ols"])
    assert 3 <= trapped <= 13, final["sa-ols"]  # about half of 16 (binomial: 99.6% range)
