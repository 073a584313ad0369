"""LinUCB, linear Thompson sampling and ε-greedy: their rules against naive numpy versions,
their randomness, and what ignoring gaming costs them (DESIGN §3, "Baselines")."""

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.game.policies import GeneralRule
from strategic_apple_tasting.learners import EpsilonGreedy, LinTS, LinUCB
from tests.helpers import naive_linucb


def _feed(learner, d: int, feedback: str, n: int, seed: int) -> dict:
    """Feed n observed points through the per-round API; returns them by arm."""
    rng = np.random.default_rng(seed)
    data = {True: [], False: []}
    theta = rng.standard_normal(d)
    for _ in range(n):
        x = rng.standard_normal(d) * np.array([1.0, 0.5, 0.2][:d])
        a = bool(rng.random() < 0.5) if feedback == "bandit" else True
        r = float(theta @ x + 0.3 * rng.standard_normal())
        assert learner.update(x, a, r)  # every observed point is learned from
        data[a].append((x, r))
    return data


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_linucb_rule_is_the_naive_one(feedback):
    d, alpha, ridge, r0 = 3, 0.7, 2.0, (0.2 if feedback == "apple" else 0.0)
    learner = LinUCB(alpha=alpha, ridge=ridge, r0=r0, feedback=feedback).reset(d)
    data = _feed(learner, d, feedback, 25, seed=1)
    g = naive_linucb(d, data, alpha, ridge, r0, feedback == "bandit")
    rule = learner.policy()
    assert isinstance(rule, GeneralRule)
    z = np.random.default_rng(2).uniform(-1, 1, (50, d))
    values = np.array([rule.value(p) for p in z])
    assert np.allclose(values, g(z), rtol=1e-10, atol=1e-12)
    assert [rule.accepts(p) for p in z] == list(values >= 0)
    # The gradient, by central differences of the naive g (smooth away from z = 0).
    h = 1e-6
    for p in z[:10]:
        numeric = [(g(p + h * e)[0] - g(p - h * e)[0]) / (2 * h) for e in np.eye(d)]
        assert np.allclose(rule.gradient(p), numeric, rtol=1e-6, atol=1e-7)
    # The linear part is the ridge estimate of θ1 − θ0, which is also the learner's estimate.
    assert rule.threshold == r0
    assert np.array_equal(rule.beta, learner.estimate())
    X1 = np.array([x for x, _ in data[True]])
    y1 = np.array([r for _, r in data[True]])
    want = np.linalg.solve(ridge * np.eye(d) + X1.T @ X1, X1.T @ y1)
    if feedback == "bandit":
        X0 = np.array([x for x, _ in data[False]])
        y0 = np.array([r for _, r in data[False]])
        want -= np.linalg.solve(ridge * np.eye(d) + X0.T @ X0, X0.T @ y0)
    assert np.allclose(learner.estimate(), want, rtol=1e-10, atol=1e-12)


def test_a_published_rule_does_not_change_afterwards():
    learner = LinUCB(r0=0.3, feedback="apple").reset(2)
    rule = learner.policy()
    z = np.array([0.2, -0.4])
    before = rule.value(z)
    learner.update([0.5, 0.1], True, 1.0)
    assert rule.value(z) == before  # the rule as published, whatever was learned since
    assert learner.policy().value(z) != before


def test_linear_rules_are_linear_thresholds():
    for learner in (LinUCB(alpha=0.0), LinTS(), EpsilonGreedy()):
        rule = learner.clone(r0=0.0, feedback="apple").reset(2).policy()
        assert isinstance(rule, LinearThreshold), learner


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_thompson_samples_follow_the_posterior(feedback):
    """θ̃1 − θ̃0 ~ N(θ̂1 − θ̂0, v²(V1⁻¹ + V0⁻¹)) (apple: N(θ̂1, v²V1⁻¹)). With 20,000 samples,
    each mean is within 5 standard errors sqrt(Σ_ii/n) and each covariance entry within 5
    standard errors sqrt((Σ_ii·Σ_jj + Σ_ij²)/n) of a Gaussian sample covariance."""
    d, v, ridge = 3, 0.5, 1.5
    learner = LinTS(scale=v, ridge=ridge, r0=0.0, feedback=feedback).reset(
        d, np.random.default_rng(3))
    data = _feed(learner, d, feedback, 30, seed=4)

    def posterior(points):
        X = np.array([x for x, _ in points]).reshape(-1, d)
        y = np.array([r for _, r in points])
        inv = np.linalg.inv(ridge * np.eye(d) + X.T @ X)
        return inv @ X.T @ y, v**2 * inv

    mean, cov = posterior(data[True])
    if feedback == "bandit":
        mean0, cov0 = posterior(data[False])
        mean, cov = mean - mean0, cov + cov0
    n = 20_000
    rng = np.random.default_rng(5)
    samples = np.empty((n, d))
    for k in range(n):
        assert learner.kernels.policy(learner.state, rng, samples[k]) == 0.0
    assert np.all(np.abs(samples.mean(0) - mean) <= 5 * np.sqrt(np.diag(cov) / n))
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    assert np.all(np.abs(np.cov(samples.T) - cov) <= 5 * se)


@pytest.mark.parametrize("epsilon, decay", [(0.2, 0.0), (0.5, 0.5)])
def test_epsilon_greedy_explores_at_rate_epsilon(epsilon, decay):
    """Round t explores with probability ε_t = min(1, ε·t^(−decay)), accept-all and reject-all
    equally; counts within 5 standard deviations of their binomial sums."""
    learner = EpsilonGreedy(epsilon=epsilon, decay=decay, r0=0.25, feedback="apple").reset(2)
    policy, update, state = learner.kernels.policy, learner.kernels.update, learner.state
    rng, beta, x = np.random.default_rng(6), np.empty(2), np.zeros(2)
    n = 20_000
    kinds = []
    for _ in range(n):  # the compiled core, as the per-round API calls it (faster in a loop)
        threshold = policy(state, rng, beta)
        assert not beta.any()  # nothing learned (no point is observed here): β = 0 throughout
        kinds.append({-1.0: "accept", 1.0: "reject", 0.25: "greedy"}[threshold])
        update(state, rng, beta, threshold, x, False, 0.0, False)
    p = np.minimum(1.0, epsilon * np.arange(1, n + 1, dtype=float) ** -decay)
    kinds = np.array(kinds)
    for kind in ("accept", "reject"):
        mean, var = (p / 2).sum(), (p / 2 * (1 - p / 2)).sum()
        assert abs((kinds == kind).sum() - mean) <= 5 * np.sqrt(var), kind


def test_the_baselines_learn_from_gamed_points_and_their_regret_is_linear():
    """Lazy agents within δ below an unshifted rule move and are accepted. In the unit ball of
    R³ with ‖θ‖ = 1, s = ⟨θ, x⟩ has density ¾(1 − s²), so a learner that does not shift loses
    at least c = E[|s|·1{−δ ≤ s < 0}] = ¾(δ²/2 − δ⁴/4) ≈ 0.0147 a round (δ = 0.2) once it has
    learned θ: linear regret. Over the second half of 16,000 rounds, 4 seeds, each baseline
    loses at least c/2 a round (a margin of 2 for what it has not learned yet), and SA-OLS,
    whose regret grows like √T, less than c/10."""
    delta, horizon = 0.2, 16_000
    game = Game(dimension=3, delta=delta)
    learners = [LinUCB(), LinTS(scale=0.1), EpsilonGreedy(epsilon=0.05), "sa-ols"]
    table = simulate(game, learners, horizon, seeds=4).to_pandas()
    c = 0.75 * (delta**2 / 2 - delta**4 / 4)
    half = table[table.t <= horizon // 2].t.max()
    for name, rows in table.groupby("learner"):
        last = rows[rows.t == horizon]
        mid = rows[rows.t == half]
        rate = (last.regret.mean() - mid.regret.mean()) / (horizon - half)
        if name == "sa-ols":
            assert rate < c / 10 and (last.gamed_as_clean == 0).all()
        else:
            assert rate > c / 2, (name, rate)
            # Every mover is accepted and, under apple tasting, learned from.
            assert (last.gamed_as_clean > 0).all() and (last.gamed_as_clean == last.moved).all()


@pytest.mark.parametrize("learner, message", [
    (LinUCB(alpha=-1.0), "alpha must be a finite number >= 0, got -1.0"),
    (LinUCB(ridge=0.0), "ridge must be a finite number > 0, got 0.0"),
    (LinTS(scale=float("nan")), "scale must be a finite number >= 0, got nan"),
    (EpsilonGreedy(epsilon=1.5), "epsilon must be a finite number >= 0 and <= 1, got 1.5"),
    (EpsilonGreedy(decay=-0.5), "decay must be a finite number >= 0, got -0.5"),
])
def test_bad_hyperparameters(learner, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        learner.clone(r0=0.0, feedback="apple").reset(2)
