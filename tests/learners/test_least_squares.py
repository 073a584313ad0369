"""Recursive least squares by Givens rotations against numpy, and its long-run stability."""

import numba
import numpy as np
import pytest

from strategic_apple_tasting.learners.least_squares import MAX_COEF, add_point, new_factor, solve


def _fit(X, y):
    d = X.shape[1]
    factor, work, theta = new_factor(d), np.zeros(d + 1), np.zeros(d)
    for x, r in zip(X, y, strict=True):
        add_point(factor, x, r, work)
    rank = solve(factor, theta)
    return theta, rank


@pytest.mark.parametrize("d", [1, 2, 5, 20])
def test_matches_lstsq(d):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((300, d)) * np.logspace(0, 3, d)  # uneven scales
    y = X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(300)
    theta, rank = _fit(X, y)
    want = np.linalg.lstsq(X, y, rcond=None)[0]
    assert rank == d
    assert np.allclose(theta, want, rtol=1e-9, atol=1e-12)


def test_rank_deficient_falls_back_to_zero_on_null_directions():
    rng = np.random.default_rng(0)
    X = np.zeros((50, 3))
    X[:, 0] = rng.standard_normal(50)  # only the first feature varies
    y = 2.0 * X[:, 0]
    theta, rank = _fit(X, y)
    assert rank == 1
    assert np.allclose(theta, [2.0, 0.0, 0.0])
    empty, rank0 = _fit(np.zeros((0, 3)), np.zeros(0))
    assert rank0 == 0 and not empty.any()


@numba.njit
def _stream(factor, theta_true, work, n, seed_rng):
    d = theta_true.shape[0]
    x = np.empty(d)
    for _ in range(n):
        for i in range(d):
            x[i] = seed_rng.standard_normal() * 10.0 ** (3.0 * i / (d - 1))
        y = 0.0
        for i in range(d):
            y += theta_true[i] * x[i]
        add_point(factor, x, y, work)


@pytest.mark.slow
def test_stable_over_ten_million_updates():
    """10⁷ noiseless points at d = 20 with feature scales spanning 10³ (condition number of the
    Gram matrix ~10⁶): the fit must still recover θ to 1e-9. An inverse Gram matrix updated by
    Sherman–Morrison drifts by orders of magnitude more here (DESIGN §7)."""
    d = 20
    rng = np.random.default_rng(11)
    theta_true = rng.standard_normal(d)
    factor, work, theta = new_factor(d), np.zeros(d + 1), np.zeros(d)
    _stream(factor, theta_true, work, 10_000_000, rng)
    assert solve(factor, theta) == d
    assert np.max(np.abs(theta - theta_true)) < 1e-9


@pytest.mark.parametrize("scale", [2.0**-1000, 2.0**-1070, 2.0**600])
def test_a_fit_at_any_scale_is_the_fit_at_scale_one(scale):
    """Data scaled by a power of two (exact) fits the same θ: squares of 2⁻¹⁰⁰⁰ underflow and
    squares of 2⁶⁰⁰ overflow, so the plain rotation (r = sqrt(a² + b²)) made 0/0 = NaN or
    inf/inf of them. 2⁻¹⁰⁷⁰ puts the features among the subnormal numbers (a few bits each)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0.5, 1.0, (40, 3)) * rng.choice([-1.0, 1.0], (40, 3))
    y = X @ np.array([1.0, -2.0, 0.5])
    theta, rank = _fit(X, y)
    scaled, scaled_rank = _fit(X * scale, y * scale)
    assert np.all(np.isfinite(scaled)) and scaled_rank == rank == 3
    if scale > 2.0**-1060:
        assert np.allclose(scaled, theta, rtol=1e-9, atol=0)
    else:  # features with a few bits: finite, and a fit of what is left of them
        assert np.max(np.abs(scaled)) <= MAX_COEF


def test_the_probes_point_in_an_empty_factor():
    """The probe's applicant: x = [0, 0, 1e-300] as the first point (its direction empty),
    then ordinary points; and the smallest subnormal against an outcome of 10⁹."""
    factor, work, theta = new_factor(3), np.zeros(4), np.zeros(3)
    add_point(factor, np.array([0.0, 0.0, 1e-300]), 0.5, work)
    rng = np.random.default_rng(0)
    for x in rng.uniform(-1, 1, (10, 3)):
        add_point(factor, x, float(x.sum()), work)
    assert np.all(np.isfinite(factor))
    solve(factor, theta)
    assert np.allclose(theta, [1.0, 1.0, 1.0], rtol=1e-9)
    factor = new_factor(2)
    add_point(factor, np.array([5e-324, 0.0]), 1e9, np.zeros(3))
    add_point(factor, np.array([0.0, 1.0]), 2.0, np.zeros(3))
    assert np.all(np.isfinite(factor))
    # 10⁹/5e-324 is no coefficient: that direction is unidentified, the other one is learned.
    assert solve(factor, theta[:2]) == 1 and np.array_equal(theta[:2], [0.0, 2.0])


def test_a_coefficient_beyond_the_largest_is_unidentified():
    theta = np.zeros(1)
    factor = new_factor(1)
    add_point(factor, np.array([1e-95]), 1e9, np.zeros(2))  # θ would be 10¹⁰⁴
    assert solve(factor, theta) == 0 and theta[0] == 0.0
    factor = new_factor(1)
    add_point(factor, np.array([1e-85]), 1e9, np.zeros(2))  # 10⁹⁴: kept
    assert solve(factor, theta) == 1 and theta[0] == pytest.approx(1e94, rel=1e-12)
