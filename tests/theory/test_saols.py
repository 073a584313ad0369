"""Tests for ``theory.saols``: the explicit regret bound of SA-OLS, and all bounds at d = 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting.theory import (
    c1,
    c2,
    saols_regret_bound,
    switching_time,
    unknown_horizon_regret_bound,
)


def test_saols_bound_explicit_value():
    d, delta, horizon, sigma, gamma, c0 = 3, 0.2, 10_000, 0.5, 0.1, 0.8
    expected = 4 * d + 8 / (c0 * c1(d, delta) * c2(d, delta)) * math.sqrt(
        14 * d * sigma**2 * horizon * math.log(4 * d * horizon / gamma)
    )
    got = saols_regret_bound(d, delta, horizon, sigma=sigma, gamma=gamma, c0=c0)
    assert got == pytest.approx(expected, rel=1e-14)
    surface = saols_regret_bound(d, delta, horizon, sigma=sigma, gamma=gamma, c0=c0, surface=True)
    assert surface != got


def test_saols_bound_finite_positive_increasing_in_horizon():
    horizons = np.unique(np.logspace(0, 9, 60).astype(int))
    for d, delta in [(2, 0.0), (3, 0.3), (10, 0.7)]:
        values = np.array([saols_regret_bound(d, delta, int(t), sigma=1.0) for t in horizons])
        assert np.all(np.isfinite(values))
        assert np.all(values > 4 * d)
        assert np.all(np.diff(values) > 0.0)


def test_saols_bound_grows_like_sqrt_t_log_t():
    d, delta, gamma = 4, 0.3, 0.05

    def excess(t: int) -> float:
        return saols_regret_bound(d, delta, t, sigma=1.0, gamma=gamma) - 4 * d

    # Exactly proportional to sqrt(T log(4dT/γ)) ...
    ks = [excess(t) / math.sqrt(t * math.log(4 * d * t / gamma)) for t in (10, 10**4, 10**8)]
    assert ks == pytest.approx([ks[0]] * 3, rel=1e-12)
    # ... hence ~ sqrt(T log T): the ratio settles (log(4dT/γ)/log T -> 1) ...
    ratios = [excess(10**k) / math.sqrt(10**k * math.log(10**k)) for k in (6, 12, 24, 48)]
    assert np.all(np.diff(ratios) < 0.0)
    assert ratios[-1] / ratios[-2] > 0.97
    # ... and is faster than sqrt(T) but far slower than linear.
    assert 1000 < excess(10**12) / excess(10**6) < 2000


def test_saols_bound_parameter_dependence():
    base = saols_regret_bound(3, 0.3, 5000, sigma=1.0)
    assert saols_regret_bound(3, 0.3, 5000, sigma=2.0) - 12 == pytest.approx(2 * (base - 12))
    assert saols_regret_bound(3, 0.3, 5000, sigma=1.0, c0=0.5) - 12 == pytest.approx(
        2 * (base - 12)
    )
    assert saols_regret_bound(3, 0.5, 5000, sigma=1.0) > base
    assert saols_regret_bound(3, 0.3, 5000, sigma=1.0, gamma=0.01) > base
    assert saols_regret_bound(3, 0.3, 5000, sigma=0.0) == 12.0


@pytest.mark.parametrize("delta", [1.0, 2.5])
def test_saols_bound_vacuous_when_no_clean_points(delta):
    assert saols_regret_bound(3, delta, 100, sigma=1.0) == math.inf


def test_bounds_at_dimension_one_use_the_second_moment_of_x1():
    """At d = 1 there is no x₂: the proof's smallest eigenvalue (eq:almost) is
    E[x₁² | x₁ ≥ δ] = (1 + δ + δ²)/3 for x uniform on [−1, 1], and c1 = (1 − δ)/2."""
    d, delta, t, sigma = 1, 0.2, 1000, 0.5
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 400_000)
    tail = x[x >= delta]
    assert abs((tail ** 2).mean() - (1 + delta + delta**2) / 3) < 4 * (tail ** 2).std() / np.sqrt(
        tail.size)
    c = (1 - delta) / 2 * (1 + delta + delta**2) / 3
    want = 4 + 8 / c * math.sqrt(14 * sigma**2 * t * math.log(4 * t / 0.05))
    assert math.isclose(saols_regret_bound(d, delta, t, sigma=sigma), want, rel_tol=1e-12)
    assert 1 < switching_time(d, delta, sigma=sigma) < math.inf
    assert unknown_horizon_regret_bound(d, delta, t, sigma=sigma) > 0
