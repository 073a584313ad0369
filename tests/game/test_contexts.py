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


@pytest.mark.parametrize("d", [2, 3, 5, 10])
def test_orthogonal_traps_leave_a_two_to_the_minus_d_share_of_rules_right(d):
    """A rule is right on the whole cycle (accepts every g, rejects every b) exactly when it is
    right in every plane (and on the last axis at odd d): a 2^−d share of directions, where the
    greedy trap leaves a quarter at every d. Each g's gain is its b's loss, from θ's part in
    its own plane, and points of different planes are orthogonal."""
    from strategic_apple_tasting.game import GreedyTrap, OrthogonalTraps

    inst = Game(dimension=d, contexts=OrthogonalTraps(margin=0.3)).instance(d)
    points = inst.contexts.points[d:]
    assert points.shape == (2 * ((d + 1) // 2), d) and inst.contexts.cycle_start == d
    gains = points @ inst.target
    assert np.all(gains[0::2] > 0) and np.allclose(gains[1::2], -gains[0::2])
    for i in range(d // 2):
        assert np.isclose(gains[2 * i], 0.3 * np.linalg.norm(inst.target[2 * i:2 * i + 2])
                          / np.sqrt(2))
    gram = points[0::2] @ points[0::2].T
    assert np.allclose(gram, np.diag(np.diag(gram)))  # the good points: one per plane
    rules = np.random.default_rng(0).standard_normal((200_000, d))
    right = np.all((rules @ points.T >= 0) == (gains >= 0), axis=1).mean()
    n = rules.shape[0]
    assert abs(right - 2.0 ** -d) < 5 * np.sqrt(2.0 ** -d / n), right  # 5 standard errors
    trap = Game(dimension=d, contexts=GreedyTrap()).instance(d).contexts.points[d:]
    share = np.all((rules @ trap.T >= 0) == (trap @ inst.target >= 0), axis=1).mean()
    assert abs(share - 0.25) < 0.01  # the greedy trap's cycle: a quarter at every d
    if d == 2:  # one plane: the greedy trap, but for the side w points to
        assert np.allclose(gains, trap @ inst.target)
        assert np.allclose(np.abs(points @ inst.target), np.abs(trap @ inst.target))
        assert np.allclose(np.abs(points @ np.array([-inst.target[1], inst.target[0]])),
                           np.abs(trap @ np.array([-inst.target[1], inst.target[0]])))


def test_orthogonal_traps_are_adversarial_and_trap_sa_ols_plane_by_plane():
    """d = 4, two planes: accept-all and reject-all lose the same constant a round (the mean
    of the b's losses, and of the g's gains); SA-OLS, fitting each plane on its own, escapes
    only if both planes' warm-up estimates are right, about a quarter of the seeds."""
    import pyarrow.compute as pc

    from strategic_apple_tasting import simulate
    from strategic_apple_tasting.game import OrthogonalTraps

    game = Game(dimension=4, delta=0.1, sigma=0.1, contexts=OrthogonalTraps())
    horizon = 4004
    table = simulate(game, ["accept-all", "reject-all", "sa-ols"], horizon, seeds=range(16))
    last = table.filter(pc.equal(table.column("t"), horizon)).to_pydict()
    final = {}
    for name, regret in zip(last["learner"], last["regret"], strict=True):
        final.setdefault(name, []).append(regret)
    for seed in range(16):
        inst = game.instance(seed)
        gains = inst.contexts.points[4:] @ inst.target
        per_round = np.maximum(0.0, -gains).mean()
        assert abs(final["accept-all"][seed] - per_round * (horizon - 4)) < 0.05
        assert abs(final["reject-all"][seed] - per_round * (horizon - 4)) < 0.05
    trapped = sum(r > 50 for r in final["sa-ols"])
    assert trapped >= 9, final["sa-ols"]  # 12 expected (three quarters of 16)


@pytest.mark.parametrize(("settings", "message"), [
    ({"dimension": 1}, "orthogonal-traps needs dimension >= 2"),
    ({"dimension": 3, "r0": 0.1}, "orthogonal-traps needs r0 = 0 under apple feedback"),
])
def test_orthogonal_traps_refuse_the_games_they_are_not_built_for(settings, message):
    from strategic_apple_tasting.game import OrthogonalTraps

    with pytest.raises(ValueError, match=message):
        Game(contexts=OrthogonalTraps(), **settings)
