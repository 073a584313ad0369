"""Tests for ``theory.etc``: explore-then-commit's T0, regret bound and commit term."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting.theory import (
    etc_commit_regret_bound,
    etc_exploration_rounds,
    etc_regret_bound,
)

# T0 = K_ETC · σ^(2/3) d T^(2/3) log^(1/3)(4d/γ); the ETC bound is 2·K_ETC/c0 · (the same).
K_ETC = 4 * 63 ** (1 / 3)


def _t0_raw(d, horizon, sigma, gamma=0.05):
    return K_ETC * sigma ** (2 / 3) * d * horizon ** (2 / 3) * math.log(4 * d / gamma) ** (1 / 3)


def test_etc_exploration_rounds_values():
    # Hand check: 4·63^(1/3) = 15.9165..., log(4·2/0.05) = log 160, so
    # T0 = 15.9165 · 2 · 10^6 · 1.7185 = 54 704 175.x -> rounded up.
    assert 54_704_175 < _t0_raw(2, 10**9, 1.0) < 54_704_176
    assert etc_exploration_rounds(2, 10**9, sigma=1.0) == 54_704_176
    assert etc_exploration_rounds(3, 10**8, sigma=0.5, gamma=0.01) == math.ceil(
        _t0_raw(3, 10**8, 0.5, 0.01)
    )
    # The formula exceeds T for short horizons: capped.
    assert _t0_raw(2, 10**5, 1.0) > 10**5
    assert etc_exploration_rounds(2, 10**5, sigma=1.0) == 10**5
    # At least d rounds (the OLS fit), unless the horizon is shorter.
    assert etc_exploration_rounds(4, 10**6, sigma=0.0) == 4
    assert etc_exploration_rounds(4, 10**6, sigma=1e-12) == 4
    assert etc_exploration_rounds(5, 3, sigma=0.0) == 3
    assert etc_exploration_rounds(5, 3, sigma=1.0) == 3


def test_etc_exploration_rounds_scaling():
    # T^(2/3): with a fixed γ the log factor does not depend on T, so the ratio is 4 up to
    # the rounding up; likewise σ^(2/3) (σ × 8 -> × 4) and linear in d.
    for horizon in (10**9, 10**11, 10**13):
        ratio = etc_exploration_rounds(3, 8 * horizon, sigma=1.0) / etc_exploration_rounds(
            3, horizon, sigma=1.0
        )
        assert ratio == pytest.approx(4.0, rel=1e-6)
    t0 = etc_exploration_rounds(3, 10**12, sigma=1.0)
    assert etc_exploration_rounds(3, 10**12, sigma=8.0) / t0 == pytest.approx(4.0, rel=1e-6)
    assert etc_exploration_rounds(3, 10**12, sigma=1.0, gamma=1e-4) > t0
    # Non-decreasing in T, always within [min(d, T), T].
    horizons = np.unique(np.logspace(0, 15, 200).astype(np.int64))
    values = [etc_exploration_rounds(3, int(t), sigma=1.0) for t in horizons]
    assert np.all(np.diff(values) >= 0)
    assert all(min(3, t) <= v <= t for v, t in zip(values, horizons, strict=True))


def test_etc_regret_bound_matches_statement_and_proof():
    d, horizon, sigma, gamma, c0 = 3, 10**7, 0.7, 0.1, 0.6
    log_term = math.log(4 * d / gamma)
    stated = 8 * 63 ** (1 / 3) / c0 * d * (sigma * horizon) ** (2 / 3) * log_term ** (1 / 3)
    got = etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma, c0=c0)
    assert got == pytest.approx(stated, rel=1e-13)
    # = 2 T0 / c0 with the unrounded, uncapped T0 ...
    assert got == pytest.approx(2 * _t0_raw(d, horizon, sigma, gamma) / c0, rel=1e-13)
    # ... and bounds the proof's T0 + T·(24d/c0)·sqrt(7dσ² log(4d/γ)/T0), with equality at c0 = 1.
    t0 = _t0_raw(d, horizon, sigma, gamma)
    for c in (1.0, c0):
        proof = t0 + horizon * 24 * d / c * math.sqrt(7 * d * sigma**2 * log_term / t0)
        bound = etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma, c0=c)
        assert proof <= bound * (1 + 1e-13)
    assert proof < etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma, c0=c0)
    assert t0 + horizon * 24 * d * math.sqrt(7 * d * sigma**2 * log_term / t0) == pytest.approx(
        etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma), rel=1e-12
    )


def test_etc_regret_bound_monotone_and_edge_cases():
    horizons = np.unique(np.logspace(0, 12, 80).astype(np.int64))
    values = np.array([etc_regret_bound(4, int(t), sigma=1.0) for t in horizons])
    assert np.all(np.diff(values) > 0.0)
    assert etc_regret_bound(4, 10**6, sigma=0.0) == 0.0
    assert etc_regret_bound(4, 10**6, sigma=1.0, c0=0.5) == pytest.approx(
        2 * etc_regret_bound(4, 10**6, sigma=1.0), rel=1e-14
    )
    assert etc_regret_bound(4, 10**600, sigma=1.0) == math.inf  # beyond the float range


def test_etc_commit_term_is_t0_at_the_theorems_t0():
    """The proof's commit term T·24d·sqrt(7dσ² log(4d/γ)/T0) equals T0 when T0 is the theorem's
    (that is how T0 is chosen), up to T0's rounding."""
    for d, t, sigma in ((2, 10**6, 0.1), (5, 10**7, 0.01)):
        t0 = etc_exploration_rounds(d, t, sigma=sigma)
        assert etc_commit_regret_bound(d, t, sigma=sigma) == pytest.approx(t0, rel=1e-4)
