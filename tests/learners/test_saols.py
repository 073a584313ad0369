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


def _locked_learner(**kw):
    """SA-OLS at d = 1 whose warm-up point x = 1 earns 0.1: θ̂ = 0.1, and
    ‖θ̂‖(1 − δ) = 0.07 ≤ r0 = 0.2, so no context in the unit ball can be clean."""
    learner = SAOLS(delta=0.3, r0=0.2, feedback="apple", **kw).reset(
        1, np.random.default_rng(0))
    learner.policy()
    assert learner.update([1.0], True, 0.1)  # the warm-up point
    return learner


def test_a_locked_saols_never_learns_again():
    learner = _locked_learner()
    for x in (0.5, 0.9, 1.0):
        rule = learner.policy()
        assert rule.threshold == pytest.approx(0.3 * 0.1 + 0.2)
        accepted = learner.act([x])
        assert not learner.update([x], accepted, x if accepted else None)
    assert learner.estimate() == pytest.approx([0.1])


def test_accept_when_locked_publishes_accept_all_and_learns_again():
    learner = _locked_learner(accept_when_locked=True)
    rule = learner.policy()
    assert np.array_equal(rule.beta, [0.0]) and rule.threshold == -1.0
    assert learner.act([0.5]) and learner.update([0.5], True, 0.5)  # clean: nobody games it
    assert learner.estimate()[0] > 0.1
    # Unlocked (‖θ̂‖(R̂ − δ) > r0), it publishes the shifted rule again.
    for _ in range(3):
        learner.policy()
        learner.update([1.0], True, 1.0)
    rule = learner.policy()
    assert rule.beta[0] > 0 and rule.threshold > 0
    with pytest.raises(ValueError, match="accept_when_locked must be true or false"):
        SAOLS(delta=0.1, r0=0.0, feedback="apple", accept_when_locked="yes").reset(1)


@pytest.mark.parametrize(("feedback", "ends"), [("apple", [5]), ("bandit", [5, 10])])
def test_a_longer_warm_up_accepts_everyone_that_many_rounds(feedback, ends):
    learner = SAOLS(delta=0.1, r0=0.0, feedback=feedback, warmup=5)
    assert learner.milestones(2) == ends
    learner.reset(2, np.random.default_rng(0))
    for _ in range(5):
        rule = learner.policy()
        assert np.array_equal(rule.beta, [0.0, 0.0]) and rule.threshold == -1.0
        learner.update([0.5, 0.1], True, 0.4)
    assert learner.policy().threshold != -1.0  # bandit: reject-all (+1), apple: the fit
    for bad in (0, True, 2.0, "3"):
        with pytest.raises(ValueError, match="warmup must be an integer >= 1 or None"):
            SAOLS(delta=0.1, r0=0.0, feedback="apple", warmup=bad).reset(2)


def test_a_delay_is_a_longer_warm_up_then_staleness():
    """Outcomes learned D rounds late keep SA-OLS in its warm-up until round d + D: up to
    there it is SA-OLS with ``warmup=d + D`` and no delay, round for round (the comparison
    the claims table's delay rows rest on); after it, the two differ by the delay alone."""
    import pyarrow.compute as pc

    from strategic_apple_tasting import simulate

    d, delay, horizon = 3, 40, 400
    late = simulate(Game(dimension=d, delta=0.3, delay=delay), ["sa-ols"], horizon, seeds=4,
                    per_decade=200)
    early = simulate(Game(dimension=d, delta=0.3), [SAOLS(warmup=d + delay)], horizon, seeds=4,
                     per_decade=200)

    def regret(table, t):
        return table.filter(pc.equal(table.column("t"), t)).column("regret").to_pylist()
    rounds = sorted(set(late.column("t").to_pylist()) & set(early.column("t").to_pylist()))
    before = [t for t in rounds if t <= d + delay]
    after = [t for t in rounds if t > 2 * (d + delay)]
    assert before and after
    assert all(regret(late, t) == regret(early, t) for t in before)
    assert any(regret(late, t) != regret(early, t) for t in after)
