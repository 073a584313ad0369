"""EXP3.P-SAE against a naive dense EXP3.P oracle, at |E| ≈ 10^30, and its parameters."""

import math
import re

import numpy as np
import pytest

from strategic_apple_tasting.engine import run_one
from strategic_apple_tasting.engine.grid import recording_grid
from strategic_apple_tasting.game import Game
from strategic_apple_tasting.learners import LEARNERS, Exp3PSAE
from strategic_apple_tasting.learners.exp3p_experts import (
    expert_log_weight,
    expert_probability,
    new_weights,
    sample,
    update,
)
from strategic_apple_tasting.learners.lazy_experts import n_touched, slot_coords


class DenseExp3P:
    """Deliberately naive EXP3.P (Auer et al. 2002): one log weight per expert of the grid.

    Every round computes p over all |E| experts and updates all |E| log weights, literally
    w_i ← w_i·exp(γ/(3K)·(x̂_i + α/(p_i·sqrt(KT)))) from w_i = exp((αγ/3)·sqrt(T/K)).
    Sampling mirrors the procedure documented in ``exp3p_experts`` draw by draw: the
    untouched (never played) experts as one block and the played ones in order of first play
    when |E| > capacity, all experts in C order otherwise.
    """

    def __init__(self, d, n, horizon, alpha, gamma, lazy):
        self.d, self.n, self.k = d, n, n**d
        self.horizon, self.alpha, self.gamma, self.lazy = horizon, alpha, gamma, lazy
        self.logw = np.full(self.k, alpha * gamma / 3 * math.sqrt(horizon / self.k))
        self.order = []  # played experts, flat index, in order of first play
        self.branches = {"uniform": 0, "untouched": 0, "touched": 0, "dense": 0, "rejected": 0}

    def flat(self, coords):
        return int(np.ravel_multi_index(tuple(int(c) for c in coords), (self.n,) * self.d))

    def coords(self, e):
        return [int(c) for c in np.unravel_index(e, (self.n,) * self.d)]

    def weights(self):
        """The weights scaled by the largest (the scale cancels everywhere)."""
        return np.exp(self.logw - self.logw.max())

    def p(self):
        w = self.weights()
        return (1 - self.gamma) * w / w.sum() + self.gamma / self.k

    def _uniform(self, rng):
        return [int(rng.integers(0, self.n)) for _ in range(self.d)]

    @staticmethod
    def _cumulative(weights, v):
        cum = np.cumsum(weights)
        return min(int(np.searchsorted(cum, v, side="right")), len(weights) - 1)

    def sample(self, rng):
        w = self.weights()
        if rng.random() < self.gamma:
            self.branches["uniform"] += 1
            coords = self._uniform(rng)
        elif self.lazy:
            untouched = np.ones(self.k, dtype=bool)
            untouched[self.order] = False
            mass = w[untouched].sum()
            v = rng.random() * w.sum()
            if v < mass:
                self.branches["untouched"] += 1
                while True:
                    coords = self._uniform(rng)
                    if self.flat(coords) not in self.order:
                        break
                    self.branches["rejected"] += 1
            else:
                self.branches["touched"] += 1
                coords = self.coords(self.order[self._cumulative(w[self.order], v - mass)])
        else:
            self.branches["dense"] += 1
            coords = self.coords(self._cumulative(w, rng.random() * w.sum()))
        return coords, self.p()[self.flat(coords)]

    def update(self, coords, x):
        e = self.flat(coords)
        p = self.p()
        x_hat = np.zeros(self.k)
        x_hat[e] = x / p[e]
        self.logw += self.gamma / (3 * self.k) * (
            x_hat + self.alpha / (p * math.sqrt(self.k * self.horizon)))
        if e not in self.order:
            self.order.append(e)


def _gain(r, lam):
    """The documented reward map: [−1 − λ, 1 + λ] onto [0, 1], clipped."""
    return min(1.0, max(0.0, (r + 1 + lam) / (2 * (1 + lam))))


def _compare_all(learner, oracle, gamma):
    w = learner.state.weights
    p_want = oracle.p()
    for e in range(oracle.k):
        c = np.array(oracle.coords(e), dtype=np.int64)
        assert expert_log_weight(w, c) == pytest.approx(oracle.logw[e], rel=1e-12)
        assert expert_probability(w, c, gamma) == pytest.approx(p_want[e], rel=1e-12)
    assert w.log_total == pytest.approx(
        oracle.logw.max() + math.log(np.exp(oracle.logw - oracle.logw.max()).sum()), rel=1e-12)


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
@pytest.mark.parametrize(("d", "n", "rounds", "overrides"), [
    (2, 5, 300, {}),                              # dense (|E| = 25 ≤ T), defaults: γ = 3/5
    (2, 5, 300, {"gamma": 0.1, "alpha": 30.0}),   # dense, weights far apart, big bonus
    (2, 40, 300, {}),                             # lazy: |E| = 1600 > T
    (3, 9, 250, {"gamma": 0.3, "alpha": 3.0}),    # lazy: |E| = 729 > T
])
def test_matches_dense_oracle(d, n, rounds, overrides, feedback):
    """Same experts drawn from the same stream, same p and log weights (1e-12) every round."""
    r0 = 0.2 if feedback == "apple" else 0.0
    learner = Exp3PSAE(horizon=rounds, sigma=0.3, points_per_axis=n, delta=0.1, r0=r0,
                       feedback=feedback, **overrides)
    par = learner.parameters(d)
    learner.reset(d, np.random.default_rng(7))
    lazy = n**d > rounds
    assert learner.state.weights.index.dense == (not lazy)
    oracle = DenseExp3P(d, n, rounds, par.alpha, par.gamma, lazy)
    rng_oracle, rng_env = np.random.default_rng(7), np.random.default_rng(99)
    x_obs = np.zeros(d)
    clipped = 0
    for t in range(rounds):
        learner.policy()
        coords = learner.state.played.tolist()
        want, p_want = oracle.sample(rng_oracle)
        assert coords == want, t
        assert learner.state.q_played[0] == pytest.approx(p_want, rel=1e-12)
        # rewards past ±(1 + λ) sometimes (clipped); experts on the low end of axis 0 do well
        r = rng_env.uniform(-1.5 - par.lam, 1.5 + par.lam) + (1.0 if want[0] == 0 else 0.0)
        accepted = bool(rng_env.random() < 0.6)
        observed = accepted or feedback == "bandit"
        learner.update(x_obs, accepted, r if observed else None)
        x = _gain(r if observed else r0, par.lam)
        clipped += x in (0.0, 1.0)
        oracle.update(want, x)
        if t % 50 == 49:
            _compare_all(learner, oracle, par.gamma)
    _compare_all(learner, oracle, par.gamma)
    assert clipped > 0
    assert np.ptp(oracle.logw) > 0.1  # the weights really moved apart (p by 15-45% here)
    used = {b for b, c in oracle.branches.items() if c > 0}
    if lazy:
        assert {"uniform", "untouched", "touched", "rejected"} <= used, oracle.branches
        w = learner.state.weights
        assert n_touched(w.index) == len(oracle.order)
        slot = np.zeros(d, dtype=np.int64)
        for s, e in enumerate(oracle.order):  # slots in order of first play
            slot_coords(w.index, s, slot)
            assert slot.tolist() == oracle.coords(e)
    else:
        assert {"uniform", "dense"} <= used


def test_huge_grid_through_the_engine():
    """d = 20, 32 points an axis (|E| = 2^100): the compiled engine runs 3000 rounds."""
    horizon = 3000
    game = Game(dimension=20, delta=0.1, sigma=0.5)
    learner = Exp3PSAE(points_per_axis=32)
    bound, out_float, _, _ = run_one(game, learner, 3, recording_grid(horizon))
    assert np.all(np.isfinite(out_float[:, :2]))  # regret; theta_error is NaN (no estimate)
    par = bound.parameters(20)
    assert par.grid_size == 2**100 and par.gamma == 0.6
    w = bound.state.weights
    assert not w.index.dense and w.log_w.shape == (horizon,)  # nothing of size |E|
    k = n_touched(w.index)
    assert 0.5 * horizon < k <= horizon  # nearly every round plays a new expert
    # p sums to 1 over the played experts plus the 2^100 − k untouched ones
    coords = np.zeros(20, dtype=np.int64)
    p_touched = []
    for s in range(k):
        slot_coords(w.index, s, coords)
        p_touched.append(expert_probability(w, coords, par.gamma))
        assert math.isfinite(expert_log_weight(w, coords))
    untouched = next(c for c in (np.full(20, i, dtype=np.int64) for i in range(32))
                     if expert_log_weight(w, c) == w.untouched_log_weight)
    p_u = expert_probability(w, untouched, par.gamma)
    assert math.fsum(p_touched) + (w.n_experts - k) * p_u == pytest.approx(1.0, rel=1e-12)
    assert w.untouched_log_weight > par.alpha * par.gamma / 3 * math.sqrt(horizon / 2.0**100)


def test_extreme_weights_stay_finite():
    """A big α moves log weights by hundreds: everything stays finite and sums to W (log)."""
    d, n, gamma, bonus = 2, 6, 0.05, 3000.0
    w = new_weights(d, n, capacity=n**d, log_w0=1.0)
    rng = np.random.default_rng(1)
    coords = np.zeros(d, dtype=np.int64)
    for _ in range(200):
        sample(w, rng, gamma, coords)
        update(w, coords, 1.0 if coords[0] == 0 else 0.0, gamma, bonus)
    assert np.all(np.isfinite(w.log_w)) and w.log_w.max() > 800  # e^800 is no double
    logs = w.log_w
    assert w.log_total == pytest.approx(logs.max() + math.log(np.exp(logs - logs.max()).sum()),
                                        rel=1e-12)
    p = [expert_probability(w, np.array(divmod(e, n)), gamma) for e in range(n**d)]
    assert math.fsum(p) == pytest.approx(1.0, rel=1e-12)


def test_capacity_exceeded_changes_nothing():
    w = new_weights(3, 10, capacity=2)
    rng = np.random.default_rng(0)
    coords = np.zeros(3, dtype=np.int64)
    played = set()
    while len(played) < 2:
        sample(w, rng, 1.0, coords)
        played.add(tuple(coords))
        update(w, coords, 0.5, 1.0, 0.1)
    before = (w.log_w.copy(), w.share.copy(), w.reals.copy())
    fresh = next(c for c in (np.array([i, 0, 0]) for i in range(10)) if tuple(c) not in played)
    with pytest.raises(ValueError, match="capacity exceeded"):
        update(w, fresh, 0.5, 1.0, 0.1)
    for a, b in zip(before, (w.log_w, w.share, w.reals), strict=True):
        assert np.array_equal(a, b)


def test_default_parameters_follow_the_theorem():
    """α = 2·sqrt(ln(KT/δ)), γ = min(3/5, 2·sqrt(3K ln K/(5T))), δ = 1/T; grid and λ as EXP3-SAE."""
    learner = Exp3PSAE(horizon=10**5, sigma=0.5)
    p = learner.parameters(1)
    sae = LEARNERS["exp3-sae"](horizon=10**5, sigma=0.5).parameters(1)
    assert (p.epsilon, p.points_per_axis, p.grid_size, p.lam) == (
        sae.epsilon, sae.points_per_axis, sae.grid_size, sae.lam)
    k, t = p.grid_size, 10**5
    assert p.confidence == 1 / t
    assert p.alpha == pytest.approx(2 * math.sqrt(math.log(k * t * t)), rel=1e-14)
    assert p.gamma == pytest.approx(2 * math.sqrt(3 * k * math.log(k) / (5 * t)), rel=1e-14)
    assert p.gamma < 0.6
    huge = Exp3PSAE(horizon=10**4, sigma=0.5, points_per_axis=32, confidence=0.01).parameters(20)
    assert huge.gamma == 0.6
    assert huge.alpha == pytest.approx(2 * math.sqrt(100 * math.log(2) + math.log(10**6)))
    over = Exp3PSAE(horizon=100, sigma=1.0, alpha=0.0, gamma=1.0, lam=0.0).parameters(2)
    assert (over.alpha, over.gamma, over.lam) == (0.0, 1.0, 0.0)


@pytest.mark.parametrize(("params", "message"), [
    ({"confidence": 0.0}, "confidence must be a number in (0, 1), got 0.0"),
    ({"confidence": 1}, "confidence must be a number in (0, 1), got 1"),
    ({"confidence": math.nan}, "confidence must be a number in (0, 1), got nan"),
    ({"confidence": "0.1"}, "confidence must be a number in (0, 1), got '0.1'"),
    ({"alpha": -1.0}, "alpha must be a finite number >= 0, got -1.0"),
    ({"alpha": math.inf}, "alpha must be a finite number >= 0, got inf"),
    ({"gamma": 0.0}, "gamma must be a number in (0, 1], got 0.0"),
    ({"gamma": 1.5}, "gamma must be a number in (0, 1], got 1.5"),
    ({"gamma": True}, "gamma must be a number in (0, 1], got True"),
    ({"lam": -0.1}, "lam must be a finite number >= 0, got -0.1"),
    ({"points_per_axis": 1}, "points_per_axis must be an integer >= 2, got 1"),
    ({"horizon": None}, "exp3p-sae needs horizon and sigma"),
])
def test_parameter_validation(params, message):
    base = {"horizon": 100, "sigma": 1.0, "delta": 0.1, "r0": 0.0, "feedback": "apple"}
    learner = Exp3PSAE(**{**base, **params})
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        learner.reset(2, np.random.default_rng(0))
