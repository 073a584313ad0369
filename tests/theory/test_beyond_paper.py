"""Tests for ``theory.beyond_paper``: band regret and SA-OLS's no-clean-point probability."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting.theory import band_regret, saols_no_clean_probability


@pytest.mark.parametrize("d", [1, 2, 3, 7])
def test_band_regret_matches_monte_carlo(d):
    """E[⟨u, x⟩·1{l ≤ ⟨u, x⟩ < h}] for x uniform in the ball: within 4 standard errors of a
    Monte Carlo mean (a false alarm has probability 6e-5)."""
    rng = np.random.default_rng(d)
    z = rng.standard_normal((400_000, d + 2))
    x1 = z[:, 0] / np.linalg.norm(z, axis=1)  # first coordinate of a uniform point in the ball
    for low, high in ((0.0, 1.0), (0.0, 0.1), (0.2, 0.5)):
        v = x1 * ((x1 >= low) & (x1 < high))
        assert abs(v.mean() - band_regret(d, low, high)) < 4 * v.std() / np.sqrt(v.size), (low,
                                                                                         high)
    assert band_regret(2, 0.0, 1.0) == pytest.approx(2 / (3 * math.pi), rel=1e-12)
    with pytest.raises(ValueError, match="high must be a finite number in"):
        band_regret(2, 0.5, 0.2)


def test_no_clean_probability_is_the_lock_in_and_grows_with_r0():
    locked, se = saols_no_clean_probability(2, 0.3, 0.2, sigma=0.3, samples=50_000)
    assert 0.01 < locked < 0.025 and 0 < se < 0.002
    later, _ = saols_no_clean_probability(2, 0.3, 0.2, sigma=0.3, horizon=100, samples=50_000)
    assert later >= locked  # no clean point by T includes no clean point ever
    more, _ = saols_no_clean_probability(2, 0.3, 0.4, sigma=0.3, samples=50_000)
    assert more > locked
    assert saols_no_clean_probability(2, 0.3, 0.0, sigma=0.3) == (0.0, 0.0)
