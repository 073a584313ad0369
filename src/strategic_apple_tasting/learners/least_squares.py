"""Recursive least squares by Givens rotations: O(d²) per added point, stable over 10⁷ points.

We keep the upper-triangular factor R of the QR decomposition of the augmented data [X | y],
a (d+1)×(d+1) array. Appending a row rotates it into R (Golub & Van Loan §6.5); the OLS
estimate solves R[:d, :d] θ = R[:d, d] by back substitution. Unlike an inverse Gram matrix
updated by Sherman–Morrison, nothing here squares the condition number or loses symmetry
(DESIGN §7).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit

#: A pivot below this fraction of the largest one is treated as zero (rank-deficient data).
PIVOT_RTOL = 1e-10


def new_factor(d: int) -> np.ndarray:
    """An empty factor for d features (no data)."""
    return np.zeros((d + 1, d + 1))


@njit
def add_point(factor, x, y, work):
    """Rotate the row [x, y] into ``factor``; ``work`` is scratch of length d + 1."""
    d = x.shape[0]
    for j in range(d):
        work[j] = x[j]
    work[d] = y
    for k in range(d):
        b = work[k]
        if b == 0.0:
            continue
        a = factor[k, k]
        r = math.sqrt(a * a + b * b)
        c = a / r
        s = b / r
        factor[k, k] = r
        for j in range(k + 1, d + 1):
            fkj = factor[k, j]
            wj = work[j]
            factor[k, j] = c * fkj + s * wj
            work[j] = c * wj - s * fkj


@njit
def solve(factor, theta):
    """OLS estimate from ``factor`` into ``theta``; components on null directions are set to 0.

    Returns the number of pivots kept (the numerical rank).
    """
    d = theta.shape[0]
    largest = 0.0
    for k in range(d):
        largest = max(largest, abs(factor[k, k]))
    cutoff = PIVOT_RTOL * largest
    rank = 0
    for k in range(d - 1, -1, -1):
        pivot = factor[k, k]
        if largest == 0.0 or abs(pivot) <= cutoff:
            theta[k] = 0.0
            continue
        rank += 1
        acc = factor[k, d]
        for j in range(k + 1, d):
            acc -= factor[k, j] * theta[j]
        theta[k] = acc / pivot
    return rank
