"""Tests for ``theory.unknown_horizon``: the switching time and the unknown-horizon bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting.theory import (
    etc_regret_bound,
    saols_regret_bound,
    switching_time,
    unknown_horizon_regret_bound,
)

# --------------------------------------------------------------------------- switching time


def _bounds(d, delta, horizon, sigma, gamma=None, c0=1.0):
    """(SA-OLS bound, ETC bound) through the public functions; gamma=None means 1/T^2."""
    g = horizon**-2.0 if gamma is None else gamma
    ols = saols_regret_bound(d, delta, horizon, sigma=sigma, gamma=g, c0=c0)
    return ols, etc_regret_bound(d, horizon, sigma=sigma, gamma=g, c0=c0)


@pytest.mark.parametrize(
    ("d", "delta", "sigma", "gamma"),
    [(2, 0.0, 1.0, None), (3, 0.3, 1.0, None), (5, 0.5, 0.2, None), (3, 0.3, 2.0, 0.05)],
)
def test_switching_time_is_the_crossing(d, delta, sigma, gamma):
    tau = switching_time(d, delta, sigma=sigma, gamma=gamma)
    assert 10 < tau < 1e15
    ols, etc = _bounds(d, delta, math.ceil(tau * (1 + 1e-6)), sigma, gamma)
    assert ols < etc
    ols, etc = _bounds(d, delta, math.floor(tau * (1 - 1e-6)), sigma, gamma)
    assert ols > etc
    # Single crossing here: ETC's bound is the smaller one everywhere below τ*, SA-OLS's above.
    for factor in (1e-6, 1e-3, 0.1, 0.5):
        ols, etc = _bounds(d, delta, max(2, int(tau * factor)), sigma, gamma)
        assert ols > etc
    for factor in (2.0, 10.0, 1e3):
        ols, etc = _bounds(d, delta, int(tau * factor), sigma, gamma)
        assert ols < etc


def test_switching_time_c0_nearly_cancels():
    # c0 survives only in SA-OLS's 4d·c0 warm-up term: negligible for moderate σ ...
    tau = switching_time(3, 0.3, sigma=1.0)
    tau_half = switching_time(3, 0.3, sigma=1.0, c0=0.5)
    assert tau_half != tau
    assert tau_half == pytest.approx(tau, rel=1e-5)
    # ... but not when σ is tiny (the warm-up term then dominates SA-OLS's bound).
    assert switching_time(3, 0.3, sigma=1e-6) > 2 * switching_time(3, 0.3, sigma=1e-6, c0=0.5)


def test_switching_time_monotone_and_infinite_cases():
    taus = [switching_time(3, delta, sigma=1.0) for delta in (0.0, 0.2, 0.4, 0.6, 0.8)]
    assert np.all(np.diff(taus) > 0.0)
    assert switching_time(3, 0.3, sigma=1.0, gamma=0.05) > switching_time(3, 0.3, sigma=1.0)
    assert switching_time(2, 1.0, sigma=1.0) == math.inf  # no clean points
    assert switching_time(2, 0.3, sigma=0.0) == math.inf  # ETC's bound is 0
    assert switching_time(200, 0.9, sigma=1.0) == math.inf  # crossing beyond ~1e304
    assert math.isfinite(switching_time(3, 0.999, sigma=1.0))  # huge but representable
    # SA-OLS's bound can be the smaller one from the start (tiny σ and c0): τ* = 1.
    assert switching_time(2, 0.0, sigma=1e-9, c0=1e-6) == 1.0


# --------------------------------------------------------------------------- unknown horizon


@pytest.mark.parametrize(("d", "delta", "sigma"), [(2, 0.0, 1.0), (3, 0.3, 0.5)])
def test_unknown_horizon_bound_is_four_times_the_smaller_expected_bound(d, delta, sigma):
    tau = switching_time(d, delta, sigma=sigma)
    for t in (2, 100, int(tau / 3), int(tau * 3), int(tau * 1e4)):
        ols, etc = _bounds(d, delta, t, sigma)
        got = unknown_horizon_regret_bound(d, delta, t, sigma=sigma)
        assert got == pytest.approx(4 * (min(ols, etc) + 2 / t), rel=1e-12)
        assert (ols < etc) == (t > tau)
    # A fixed γ: expected bound B(γ) + 2γT for both.
    t, g = 10**5, 0.01
    ols, etc = _bounds(d, delta, t, sigma, gamma=g, c0=0.5)
    got = unknown_horizon_regret_bound(d, delta, t, sigma=sigma, gamma=g, c0=0.5)
    assert got == pytest.approx(4 * (min(ols, etc) + 2 * g * t), rel=1e-12)


def test_unknown_horizon_bound_edge_cases_and_monotone():
    horizons = np.unique(np.logspace(0, 14, 60).astype(np.int64))
    values = [unknown_horizon_regret_bound(3, 0.3, int(t), sigma=1.0) for t in horizons]
    assert np.all(np.diff(values[3:]) > 0.0)  # the 8/T term only matters for T ~ 1
    assert unknown_horizon_regret_bound(2, 0.3, 1, sigma=1.0) > 0.0  # γ = 1 at T = 1
    assert unknown_horizon_regret_bound(2, 0.3, 10, sigma=0.0) == pytest.approx(0.8)
    # δ >= 1: SA-OLS's bound is infinite, ETC's is used.
    t = 10**6
    etc = etc_regret_bound(2, t, sigma=1.0, gamma=t**-2.0)
    assert unknown_horizon_regret_bound(2, 1.0, t, sigma=1.0) == pytest.approx(4 * (etc + 2 / t))
