"""Tests for ``theory.exp3_sae``: EXP3-SAE's parameters and stated regret bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting.theory import (
    Exp3SAEParameters,
    exp3_sae_parameters,
    exp3_sae_regret_bound,
)


def test_exp3_sae_parameters_small_grid_exact():
    d, t, sigma = 2, 1000, 1.0
    p = exp3_sae_parameters(d, t, sigma=sigma)
    assert isinstance(p, Exp3SAEParameters)
    # ε = (2 log 1000 / 1000)^(1/4) = 0.3428..., 2/ε = 5.83 -> ceil 6 -> 7 points per axis.
    eps = (d * sigma * math.log(t) / t) ** (1 / (d + 2))
    assert p.epsilon == pytest.approx(eps, rel=1e-14)
    assert 0.3428 < p.epsilon < 0.3429
    assert p.points_per_axis == 7
    assert p.grid_size == 49
    lam = math.sqrt(2 * math.log(1000))
    assert p.lam == pytest.approx(lam, rel=1e-14)
    eta = math.sqrt(math.log(49) / (1000 * lam**2 * 49))
    assert p.eta == pytest.approx(eta, rel=1e-13)
    assert p.gamma == pytest.approx(2 * eta * lam * 49, rel=1e-12)
    assert 0.8733 < p.gamma < 0.8734  # 2 sqrt(49 log 49 / 1000), below the cap
    with pytest.raises(AttributeError):
        p.eta = 0.0  # type: ignore[misc]


def test_exp3_sae_gamma_cap_and_formula():
    # γ = min(1, 2ηλ|E|) = min(1, 2 sqrt(|E| log|E| / T)).
    p = exp3_sae_parameters(1, 10**8, sigma=1.0)
    n = p.grid_size
    assert n == p.points_per_axis == math.ceil(2 / p.epsilon) + 1
    assert p.gamma == pytest.approx(2 * math.sqrt(n * math.log(n) / 10**8), rel=1e-12)
    assert p.gamma == pytest.approx(2 * p.eta * p.lam * n, rel=1e-12)
    assert p.gamma < 1.0
    q = exp3_sae_parameters(3, 1000, sigma=1.0)
    assert 2 * q.eta * q.lam * q.grid_size > 1.0  # capped
    assert q.gamma == 1.0


def test_exp3_sae_parameters_huge_grid_no_overflow():
    p = exp3_sae_parameters(20, 10**6, sigma=1.0, points_per_axis=32)
    assert p.grid_size == 32**20 == 2**100
    assert type(p.grid_size) is int
    assert p.epsilon == pytest.approx(2 / 31)
    log_e = 100 * math.log(2)
    assert p.eta == pytest.approx(
        math.sqrt(log_e / (10**6 * p.lam**2 * float(p.grid_size))), rel=1e-12
    )
    assert p.gamma == 1.0
    # |E| = 32^300 ≈ 1e451 is far beyond the float range: still exact and finite parameters.
    q = exp3_sae_parameters(300, 10**6, sigma=1.0, points_per_axis=32)
    assert q.grid_size == 2**1500
    assert 0.0 < q.eta < 1e-200
    assert q.gamma == 1.0


@pytest.mark.parametrize(
    ("epsilon", "expected"),
    [(2 / 3, 4), (0.5, 5), (0.7, 4), (0.1, 21), (2.0, 2), (5.0, 2), (2 / 7, 8), (1e-3, 2001)],
)
def test_exp3_sae_points_per_axis_rounding(epsilon, expected):
    p = exp3_sae_parameters(2, 1000, sigma=1.0, epsilon=epsilon)
    assert p.points_per_axis == expected
    assert p.epsilon == epsilon
    assert 2 / (p.points_per_axis - 1) <= epsilon * (1 + 1e-9)  # actual spacing <= ε
    assert p.grid_size == expected**2


def test_exp3_sae_parameter_overrides_and_bound():
    p = exp3_sae_parameters(3, 10**4, sigma=0.5, points_per_axis=11)
    assert p.epsilon == pytest.approx(0.2)  # spacing of the given grid
    assert p.grid_size == 11**3
    q = exp3_sae_parameters(3, 10**4, sigma=0.5, points_per_axis=11, epsilon=0.3)
    assert (q.epsilon, q.points_per_axis) == (0.3, 11)
    # A wider box needs more points per axis at the same ε.
    base = exp3_sae_parameters(3, 10**4, sigma=0.5)
    wide = exp3_sae_parameters(3, 10**4, sigma=0.5, bound=2.0)
    assert wide.epsilon == base.epsilon
    assert wide.points_per_axis == math.ceil(4 / base.epsilon) + 1 > base.points_per_axis


def test_exp3_sae_epsilon_shrinks_with_horizon():
    eps = [exp3_sae_parameters(3, t, sigma=1.0).epsilon for t in (10, 10**3, 10**6, 10**9)]
    sizes = [exp3_sae_parameters(3, t, sigma=1.0).grid_size for t in (10, 10**3, 10**6, 10**9)]
    assert np.all(np.diff(eps) < 0.0)
    assert np.all(np.diff(sizes) >= 0)


def test_exp3_sae_regret_bound_as_stated():
    d, t, sigma = 3, 10**6, 0.5
    stated = 6 * t ** ((d + 1) / (d + 2)) * (d * sigma * math.log(t)) ** (1 / (d + 2))
    got = exp3_sae_regret_bound(d, t, sigma=sigma)
    assert got == pytest.approx(stated, rel=1e-12)
    assert got == pytest.approx(6 * exp3_sae_parameters(d, t, sigma=sigma).epsilon * t, rel=1e-12)
    values = [exp3_sae_regret_bound(d, 10**k, sigma=sigma) for k in range(1, 16)]
    assert np.all(np.diff(values) > 0.0)
    # Sublinear: T^((d+1)/(d+2)) up to logs.
    assert values[-1] / 10**15 < values[5] / 10**6
    # The proof's penultimate line, (3 sqrt(log 1/ε) + 4) ε T, exceeds the stated 6 ε T here.
    eps = exp3_sae_parameters(d, t, sigma=sigma).epsilon
    assert eps < math.exp(-4 / 9)
    assert (3 * math.sqrt(math.log(1 / eps)) + 4) * eps * t > got
