"""Lazy EXP3 experts against a naive dense oracle, statistically, at scale, and under collisions."""

import math
import time

import numba
import numpy as np
import pytest
from scipy import stats

from strategic_apple_tasting.learners.lazy_experts import (
    expert_log_weight,
    expert_point,
    expert_probability,
    expert_weight,
    find_slot,
    key_hash,
    n_touched,
    new_experts,
    sample_expert,
    scale_log_weight,
    scale_weight,
    slot_coords,
)

#: Chi-square tests reject only below this p-value. The seeds are fixed, so each test is
#: deterministic; the threshold bounds the chance (1e-4) that a correct sampler fails when a seed
#: or library version changes the stream, while a real bias (a mis-weighted cell, an off-by-one
#: in the tree walk, a rejection that lets touched experts through) gives p-values far below it
#: with the 3·10^5 draws used here.
P_REJECT = 1e-4


class DenseOracle:
    """Deliberately naive EXP3 weights: one float per expert of the whole grid (small grids).

    Mirrors the sampling procedure documented in ``lazy_experts`` draw by draw: the lazy
    procedure when |E| > capacity, the dense one otherwise.
    """

    def __init__(self, d, n, capacity):
        self.d, self.n, self.n_experts = d, n, n**d
        self.w = np.ones(self.n_experts)
        self.lazy = self.n_experts > capacity
        self.order = []  # touched experts, flat index, in order of first touch
        self.branches = {"uniform": 0, "untouched": 0, "touched": 0, "dense": 0, "rejected": 0}

    def flat(self, coords):
        return int(np.ravel_multi_index(tuple(int(c) for c in coords), (self.n,) * self.d))

    def coords(self, e):
        return [int(c) for c in np.unravel_index(e, (self.n,) * self.d)]

    def q(self, e, gamma):
        return (1 - gamma) * self.w[e] / self.w.sum() + gamma / self.n_experts

    def _uniform(self, rng):
        return [int(rng.integers(0, self.n)) for _ in range(self.d)]

    @staticmethod
    def _cumulative(weights, v):
        cum = np.cumsum(weights)
        return min(int(np.searchsorted(cum, v, side="right")), len(weights) - 1)

    def sample(self, rng, gamma):
        if rng.random() < gamma:
            self.branches["uniform"] += 1
            coords = self._uniform(rng)
        elif self.lazy:
            untouched = float(self.n_experts) - len(self.order)
            touched_w = self.w[self.order]
            v = rng.random() * (untouched + touched_w.sum())
            if v < untouched:
                self.branches["untouched"] += 1
                while True:
                    coords = self._uniform(rng)
                    if self.flat(coords) not in self.order:
                        break
                    self.branches["rejected"] += 1
            else:
                self.branches["touched"] += 1
                coords = self.coords(self.order[self._cumulative(touched_w, v - untouched)])
        else:
            self.branches["dense"] += 1
            v = rng.random() * self.w.sum()
            coords = self.coords(self._cumulative(self.w, v))
        return coords, self.q(self.flat(coords), gamma)

    def scale(self, coords, factor):
        e = self.flat(coords)
        if e not in self.order:
            self.order.append(e)
        self.w[e] *= factor


def _reward(rng, coords):
    """A reward in [−1, 2), plus 3 for experts on the first axis's low end (losses < 0 there)."""
    return rng.uniform(-1.0, 2.0) + (3.0 if coords[0] == 0 else 0.0)


@pytest.mark.parametrize("n", [1, 2, 7, 2**31 + 3, 2**32 - 1, 2**32, 2**32 + 1, 3 * 2**50])
def test_uniform_draws_are_numpys_integers(n):
    """With γ = 1 a draw is rng.random() then rng.integers(0, n) per axis, bit for bit (the
    kernel calls numba's integer kernels directly; every branch of them is covered here)."""
    d = 2
    state = new_experts(d, n, capacity=4 if n > 2 else 1)
    rng_a, rng_b = np.random.default_rng(n), np.random.default_rng(n)
    coords = np.zeros(d, dtype=np.int64)
    for _ in range(50):
        q = sample_expert(state, rng_a, 1.0, coords)
        rng_b.random()
        assert coords.tolist() == [int(rng_b.integers(0, n)) for _ in range(d)]
        assert q == 1.0 / float(n) ** d
    assert rng_a.random() == rng_b.random()


@pytest.mark.parametrize(("d", "n", "capacity", "rounds"), [
    (2, 5, 25, 1500),     # dense, |E| = capacity
    (3, 4, 1000, 1500),   # dense
    (4, 6, 300, 300),     # lazy: capacity = T ≪ |E| = 1296
    (2, 40, 400, 400),    # lazy: |E| = 1600
])
def test_matches_dense_oracle(d, n, capacity, rounds):
    state = new_experts(d, n, capacity)
    oracle = DenseOracle(d, n, capacity)
    assert state.dense == (not oracle.lazy)
    n_experts = n**d
    gamma, lam = 0.2, 1.0
    eta = 1.0 / n_experts  # |η·ℓ̂| up to 3/γ = 15: weights grow and shrink by large factors
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    coords = np.zeros(d, dtype=np.int64)
    for _ in range(rounds):
        q = sample_expert(state, rng_a, gamma, coords)
        want, q_want = oracle.sample(rng_b, gamma)
        assert coords.tolist() == want
        assert q == pytest.approx(q_want, rel=1e-12)
        r_a, r_b = _reward(rng_a, coords), _reward(rng_b, want)
        assert r_a == r_b
        scale_weight(state, coords, math.exp(-eta * (1 + lam - r_a) / q))
        oracle.scale(want, math.exp(-eta * (1 + lam - r_b) / q_want))
    # every branch of the procedure was exercised
    used = [b for b, c in oracle.branches.items() if c > 0]
    if oracle.lazy:
        assert {"uniform", "untouched", "touched", "rejected"} <= set(used), oracle.branches
        assert n_touched(state) == len(oracle.order)
    else:
        assert {"uniform", "dense"} <= set(used)
    assert oracle.w.min() < 1e-3 and oracle.w.max() > 10  # weights really moved both ways
    for e in range(n_experts):
        c = np.array(oracle.coords(e), dtype=np.int64)
        assert expert_weight(state, c) == pytest.approx(oracle.w[e], rel=1e-12)
        assert expert_probability(state, c, gamma) == pytest.approx(oracle.q(e, gamma), rel=1e-12)
    if oracle.lazy:  # slots in order of first touch
        for slot, e in enumerate(oracle.order):
            slot_coords(state, slot, coords)
            assert coords.tolist() == oracle.coords(e)


_EXP3, _COUNT, _RANDOM = 0, 1, 2


@numba.njit
def _drive(state, rng, mode, rounds, gamma, eta, lam, played, values, counts):
    """Compiled loops, in one function with one call of each kernel: every call site inlines
    the kernels anew, and compiling them takes seconds.

    _EXP3: EXP3 rounds with reward r = 2u − 0.5 and w ← w·exp(−η(1 + λ − r)/q); the played
    experts go to ``played`` and the log factors to ``values``.
    _COUNT: ``rounds`` draws tallied into ``counts`` by C-order index; returns the largest
    relative gap between the q returned and ``values[index]``.
    _RANDOM: ``rounds`` updates of uniform experts by log factors uniform in [−0.4, 0.2).
    """
    d, n = state.d, state.n
    coords = np.empty(d, dtype=np.int64)
    worst = 0.0
    for t in range(rounds):
        if mode == _RANDOM:
            for i in range(d):
                coords[i] = np.int64(rng.random() * n)
            lf = 0.6 * rng.random() - 0.4
        else:
            q = sample_expert(state, rng, gamma, coords)
            if mode == _COUNT:
                idx = 0
                for i in range(d):
                    idx = idx * n + coords[i]
                counts[idx] += 1
                gap = abs(q - values[idx]) / values[idx]
                if gap > worst:
                    worst = gap
                continue
            r = 2.0 * rng.random() - 0.5
            lf = -eta * (1.0 + lam - r) / q
            for i in range(d):  # (a slice assignment and max() here doubled the compile time)
                played[t, i] = coords[i]
            values[t] = lf
        scale_log_weight(state, coords, lf)
    return worst


def _count(state, seed, gamma, draws, q):
    """Tally ``draws`` samples; returns (counts, worst relative error of the returned q)."""
    counts = np.zeros(q.shape[0], dtype=np.int64)
    worst = _drive(state, np.random.default_rng(seed), _COUNT, draws, gamma, 0.0, 0.0,
                   np.zeros((1, 1), dtype=np.int64), q, counts)
    return counts, worst


def _skewed_weights(state, seed, touched):
    """Scale ``touched`` distinct experts by log-normal factors (σ = 2): a strongly uneven p."""
    rng = np.random.default_rng(seed)
    n_experts = state.n**state.d
    for e in rng.choice(n_experts, size=touched, replace=False):
        coords = np.array(np.unravel_index(e, (state.n,) * state.d), dtype=np.int64)
        scale_log_weight(state, coords, 2.0 * rng.standard_normal())


def _all_q(state, gamma):
    n_experts = state.n**state.d
    return np.array([expert_probability(state, np.array(
        np.unravel_index(e, (state.n,) * state.d), dtype=np.int64), gamma)
        for e in range(n_experts)])


@pytest.mark.parametrize(("d", "n"), [(2, 5), (3, 8)])
def test_sample_frequencies_match_q(d, n):
    """Chi-square goodness of fit of 3·10^5 draws to q, in dense and lazy mode (same weights)."""
    n_experts, gamma = n**d, 0.3
    touched = min(n_experts - 1, 50)  # lazy mode needs an untouched expert left
    qs = {}
    for mode, capacity in (("dense", n_experts), ("lazy", n_experts - 1)):
        state = new_experts(d, n, capacity)
        assert state.dense == (mode == "dense")
        _skewed_weights(state, seed=11, touched=touched)
        q = _all_q(state, gamma)
        assert q.sum() == pytest.approx(1.0, rel=1e-12)
        qs[mode] = q
        draws = 300_000
        counts, worst = _count(state, 3, gamma, draws, q)
        assert worst < 1e-12  # the returned q(e) is the drawn expert's probability
        result = stats.chisquare(counts, draws * q)
        assert result.pvalue > P_REJECT, (mode, result)
    assert np.allclose(qs["dense"], qs["lazy"], rtol=1e-12, atol=0)


def _state_bytes(state):
    return sum(v.nbytes for v in state if isinstance(v, np.ndarray))


@pytest.mark.parametrize(("d", "n"), [(20, 32), (5, 2**13)])
def test_huge_grid(d, n):
    """|E| = 2^100 (d = 20) and 2^65 (d = 5): 10^5 EXP3 rounds in O(capacity) memory."""
    rounds = 100_000
    state = new_experts(d, n, capacity=rounds)
    assert not state.dense and state.n_experts == float(n) ** d
    assert _state_bytes(state) < 128 * rounds + 4096  # O(capacity), nothing of size |E|
    gamma, lam = 0.1, 0.5
    eta = 3.0 * gamma / state.n_experts  # |η·ℓ̂| up to ~ 3·(1 + λ + 0.5): big moves
    played = np.zeros((rounds, d), dtype=np.int64)
    log_factors = np.zeros(rounds)
    no_counts = np.zeros(1, dtype=np.int64)
    warm = new_experts(d, n, capacity=1000)  # compile first, time afterwards
    _drive(warm, np.random.default_rng(0), _EXP3, 1000, gamma, eta, lam, played, log_factors,
           no_counts)
    start = time.perf_counter()
    _drive(state, np.random.default_rng(1), _EXP3, rounds, gamma, eta, lam, played, log_factors,
           no_counts)
    elapsed = time.perf_counter() - start
    print(f"\nlazy experts d={d} n={n} |E|=2^{d * math.log2(n):.0f}: "
          f"{1e6 * elapsed / rounds:.3f} µs per sample+update round")
    expected = {}
    for coords, lf in zip(map(tuple, played), log_factors, strict=True):
        expected[coords] = expected.get(coords, 0.0) + lf
    assert n_touched(state) == len(expected)
    picks = np.random.default_rng(2).choice(len(played), size=2000, replace=False)
    for t in picks:
        coords = played[t]
        assert expert_log_weight(state, coords) == pytest.approx(expected[tuple(coords)],
                                                                 rel=1e-12, abs=1e-12)
    # a touched expert made dominant is found by the tree walk
    target = played[123].copy()
    scale_log_weight(state, target, 200.0 - expert_log_weight(state, target))
    assert expert_weight(state, target) == pytest.approx(math.exp(200.0), rel=1e-12)
    q_target = expert_probability(state, target, gamma)
    assert q_target == pytest.approx(1 - gamma, rel=1e-9)
    rng = np.random.default_rng(5)
    coords = np.zeros(d, dtype=np.int64)
    hits = 0
    for _ in range(200):
        q = sample_expert(state, rng, gamma, coords)
        if np.array_equal(coords, target):
            hits += 1
            assert q == q_target
    assert 150 < hits < 200  # ≈ (1 − γ)·200 = 180


def test_hash_collisions_against_dict():
    """Fill a lazy table to capacity (load ½) with structured and random keys; check vs a dict."""
    d, n, capacity = 20, 32, 8192
    state = new_experts(d, n, capacity)
    rng = np.random.default_rng(9)
    want = {}
    keys = []
    for i in range(64):  # experts differing in one or two axes only: weak hashes collide here
        for j in range(32):
            c = np.zeros(d, dtype=np.int64)
            c[i % d] = j
            c[(i * 7) % d] = i % 32
            keys.append(tuple(int(v) for v in c))
    keys = list(dict.fromkeys(keys))
    seen = set(keys)
    while len(keys) < capacity:
        k = tuple(int(c) for c in rng.integers(0, n, size=d))
        if k not in seen:
            seen.add(k)
            keys.append(k)
    for rep in range(2):  # every key touched twice, in a shuffled order the second time
        order = rng.permutation(len(keys)) if rep else range(len(keys))
        for idx in order:
            lf = float(rng.standard_normal())
            k = keys[idx]
            want[k] = want.get(k, 0.0) + lf
            scale_log_weight(state, np.array(k, dtype=np.int64), lf)
    assert n_touched(state) == len(want) == capacity
    for k, lw in want.items():
        assert expert_log_weight(state, np.array(k, dtype=np.int64)) == pytest.approx(lw, abs=1e-12)
    for _ in range(3000):  # untouched experts read as weight 1 and are not inserted
        c = rng.integers(0, n, size=d)
        if tuple(c) not in want:
            assert expert_log_weight(state, c) == 0.0 and find_slot(state, c) == -1
    assert n_touched(state) == capacity
    # the table really had collisions: many keys sit away from their home bucket
    displaced = sum(1 for pos, slot in enumerate(state.table)
                    if slot >= 0 and int(key_hash(state.keys, slot) & np.uint64(state.mask)) != pos)
    assert displaced > capacity // 10
    with pytest.raises(ValueError, match="capacity exceeded"):
        fresh = next(c for c in (tuple(rng.integers(0, n, size=d)) for _ in range(100))
                     if c not in want)
        scale_weight(state, np.array(fresh, dtype=np.int64), 0.5)
    scale_weight(state, np.array(keys[0], dtype=np.int64), 0.5)  # existing keys still fine


@pytest.mark.slow
def test_sum_tree_accurate_over_ten_million_updates():
    state = new_experts(2, 32, 1024)  # dense, 1024 leaves
    _drive(state, np.random.default_rng(4), _RANDOM, 10_000_000, 0.0, 0.0, 0.0,
           np.zeros((1, 1), dtype=np.int64), np.zeros(1), np.zeros(1, dtype=np.int64))
    leaves = np.exp(state.log_weights - state.shift)
    assert np.allclose(state.tree[state.size:state.size + 1024], leaves, rtol=1e-15, atol=0)
    assert state.tree[1] == pytest.approx(math.fsum(leaves), rel=1e-13)
    assert state.rebuilds > 0  # the drift of −0.1 a step forced rebuilds (new shift)


def test_tiny_weights_dense():
    """All weights decaying together (as EXP3's do) far below the smallest double."""
    state = new_experts(2, 3, 9)
    gamma = 0.25
    logs = np.zeros(9)
    for step in range(5):
        for e in range(9):
            lf = -3000.0 - e * (step + 1)
            logs[e] += lf
            scale_log_weight(state, np.array(divmod(e, 3), dtype=np.int64), lf)
    assert expert_weight(state, np.array([0, 0])) == 0.0  # e^-15000: the linear form underflows
    assert expert_log_weight(state, np.array([2, 2])) == pytest.approx(logs[8], rel=1e-15)
    p = np.exp(logs - logs.max())
    p /= p.sum()
    q_want = (1 - gamma) * p + gamma / 9
    assert np.allclose(_all_q(state, gamma), q_want, rtol=1e-12, atol=0)
    assert state.rebuilds > 0
    counts, _ = _count(state, 8, gamma, 100_000, q_want)
    assert stats.chisquare(counts, 100_000 * q_want).pvalue > P_REJECT


def test_huge_and_zero_weights_lazy():
    d, n, gamma = 20, 32, 0.1
    state = new_experts(d, n, capacity=10)
    e = np.arange(d, dtype=np.int64) % n
    for _ in range(3):
        scale_log_weight(state, e, 800.0)  # e^2400 is no double
    assert expert_log_weight(state, e) == 2400.0
    assert expert_weight(state, e) == math.inf
    assert expert_probability(state, e, gamma) == pytest.approx(1 - gamma + gamma / 2.0**100)
    other = np.zeros(d, dtype=np.int64)
    assert expert_probability(state, other, gamma) == pytest.approx(gamma / 2.0**100, rel=1e-12)
    rng, coords = np.random.default_rng(0), np.zeros(d, dtype=np.int64)
    hits = sum(sample_expert(state, rng, gamma, coords) > 0.5 and np.array_equal(coords, e)
               for _ in range(500))
    assert 400 < hits < 500
    scale_log_weight(state, e, -2400.0)  # back to weight 1: everything uniform again
    assert expert_weight(state, e) == 1.0
    assert expert_probability(state, other, gamma) == pytest.approx(2.0**-100, rel=1e-12)
    assert state.shift == 0.0
    scale_weight(state, other, 0.0)  # weight 0: only the uniform γ part remains
    assert expert_weight(state, other) == 0.0
    assert expert_probability(state, other, gamma) == pytest.approx(gamma / 2.0**100, rel=1e-12)


def test_all_zero_weights_dense_raises_only_for_p():
    state = new_experts(1, 3, 3)
    for i in range(3):
        scale_weight(state, np.array([i]), 0.0)
    coords = np.zeros(1, dtype=np.int64)
    assert sample_expert(state, np.random.default_rng(0), 1.0, coords) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="every expert weight is 0"):
        sample_expert(state, np.random.default_rng(0), 0.0, coords)


def test_dense_slots_are_c_order_and_single_point_grid():
    state = new_experts(3, 4, 64)
    coords = np.zeros(3, dtype=np.int64)
    for slot in range(64):
        slot_coords(state, slot, coords)
        assert tuple(coords) == np.unravel_index(slot, (4, 4, 4))
        assert find_slot(state, coords) == slot
    one = new_experts(5, 1, 1)
    assert one.dense and one.n_experts == 1.0
    c = np.zeros(5, dtype=np.int64)
    assert sample_expert(one, np.random.default_rng(0), 0.5, c) == 1.0
    out = np.ones(5)
    expert_point(one, c, 2.0, out)
    assert not out.any()


def test_expert_point():
    state = new_experts(2, 5, 3)
    out = np.zeros(2)
    got = []
    for i in range(5):
        expert_point(state, np.array([i, 4 - i]), 2.0, out)
        got.append(out.copy())
    assert np.array_equal(np.array(got)[:, 0], [-2.0, -1.0, 0.0, 1.0, 2.0])
    assert np.array_equal(np.array(got)[:, 1], [2.0, 1.0, 0.0, -1.0, -2.0])
    state = new_experts(1, 7, 3)
    pts = []
    for i in range(7):
        expert_point(state, np.array([i]), 0.3, out[:1])
        pts.append(out[0])
    assert pts[0] == -0.3 and pts[-1] == 0.3 and pts[3] == 0.0
    assert np.array_equal(pts, [-p for p in pts[::-1]])  # exactly symmetric
    assert np.allclose(pts, -0.3 + 0.6 * np.arange(7) / 6, rtol=0, atol=1e-15)


@pytest.mark.parametrize(("args", "match"), [
    ((0, 5, 10), "d must be"), ((2, 0, 10), "points_per_axis must be"),
    ((2, 5, 0), "capacity must be"), ((2.0, 5, 10), "d must be"),
    ((300, 32, 10), "at most"),
])
def test_constructor_errors(args, match):
    with pytest.raises(ValueError, match=match):
        new_experts(*args)


def test_bad_coordinates_and_factors():
    for state in (new_experts(2, 5, 100), new_experts(2, 50, 10)):
        with pytest.raises(ValueError, match="coordinates"):
            scale_weight(state, np.array([0, 5 if state.dense else 50]), 0.5)
        with pytest.raises(ValueError, match="coordinates"):
            expert_weight(state, np.array([-1, 0]))
        with pytest.raises(ValueError, match="factor"):
            scale_weight(state, np.array([0, 0]), -1.0)
        with pytest.raises(ValueError, match="log_factor"):
            scale_log_weight(state, np.array([0, 0]), math.nan)
        assert n_touched(state) == (25 if state.dense else 0)


def test_exp3_sae_learns_an_outcome_at_the_bound_on_a_grid_of_2_to_the_1000():
    """On a grid of 2¹⁰⁰⁰ experts an untouched expert is played with q ≈ 10⁻³⁰¹, and an outcome
    of 10⁹ (the API's bound) makes ηℓ̂ overflow: the log weight became +inf and the learner
    stopped with "log_factor must be < inf". The step is capped (a weight scaled by e^(10²⁹⁰)
    is all the mass either way): every round is learned and the weights stay finite."""
    from strategic_apple_tasting.learners import Exp3SAE

    learner = Exp3SAE(horizon=10**4, sigma=0.1, points_per_axis=2**50, delta=0.1, r0=0.0,
                      feedback="apple").reset(20, 0)
    assert learner.state.experts.n_experts == 2.0**1000
    rng = np.random.default_rng(0)
    for _ in range(30):
        x = rng.uniform(-0.2, 0.2, 20)
        accepted = learner.act(x)
        learner.update(x, accepted, 1e9 if accepted else None)
    reals = learner.state.experts.reals
    assert np.all(np.isfinite(reals)) and learner.policy() is not None
