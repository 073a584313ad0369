"""Slow, obviously-correct references the compiled code is checked against (the per-round
replay and table comparison are public: :mod:`strategic_apple_tasting.checks`)."""

from __future__ import annotations

import numpy as np

from strategic_apple_tasting.checks import replay, tables_identical, totals_at_grid

__all__ = ["naive_linucb", "replay", "tables_identical", "totals_at_grid"]


def naive_linucb(d: int, data: dict, alpha: float, ridge: float, r0: float, bandit: bool):
    """LinUCB's rule g(z) = UCB1(z) − r0 (bandit: UCB1(z) − UCB0(z) − r0), from the data with
    numpy: V_a = λI + XᵀX, θ̂_a = V_a⁻¹Xᵀy, UCB_a(z) = ⟨θ̂_a, z⟩ + α·sqrt(zᵀV_a⁻¹z).

    ``data`` maps True (arm 1) and False (arm 0) to lists of (x, reward). Returns g, vectorized
    over the rows of its argument.
    """
    def arm(points):
        X = np.array([x for x, _ in points]).reshape(-1, d)
        y = np.array([r for _, r in points])
        inv = np.linalg.inv(ridge * np.eye(d) + X.T @ X)
        return inv @ X.T @ y, inv

    t1, m1 = arm(data[True])
    t0, m0 = arm(data[False])

    def g(z):
        z = np.atleast_2d(z)
        out = z @ t1 + alpha * np.sqrt(np.einsum("ij,jk,ik->i", z, m1, z)) - r0
        if bandit:
            out -= z @ t0 + alpha * np.sqrt(np.einsum("ij,jk,ik->i", z, m0, z))
        return out
    return g
