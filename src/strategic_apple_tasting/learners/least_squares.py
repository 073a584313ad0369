"""Recursive least squares by Givens rotations: O(d²) per added point, stable over 10⁷ points.

We keep the upper-triangular factor R of the QR decomposition of the augmented data [X | y],
a (d+1)×(d+1) array. Appending a row rotates it into R (Golub & Van Loan §6.5); the OLS
estimate solves R[:d, :d] θ = R[:d, d] by back substitution. Unlike an inverse Gram matrix
updated by Sherman–Morrison, nothing here squares the condition number or loses symmetry
(DESIGN §7).

Every finite input is safe. A rotation whose a² + b² would underflow (a point of subnormal
features: 0/0 made the factor NaN) or overflow is computed on a and b scaled by a power of two,
which is exact, as ``hypot`` does; the ordinary range takes the unscaled formula, so the results
there are bit for bit those of the plain rotation. A fit whose coefficient would pass
:data:`MAX_COEF` (features far smaller than the outcomes they carry: 10⁻³⁰⁰ against 1) treats
that direction as unidentified, as it treats a null one, so an estimate is always finite.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit

#: A pivot below this fraction of the largest one is treated as zero (rank-deficient data).
PIVOT_RTOL = 1e-10
#: The largest coefficient a fit gives. Learners accept features and outcomes up to 10⁹ in
#: magnitude (``Learner.input_bound``), so a coefficient this large needs a feature below 10⁻⁹¹
#: carrying an outcome, and d·MAX_COEF² (‖θ̂‖²) stays finite for any d below 10¹⁰⁸, as do the
#: rule's score ⟨θ̂, x⟩ and shift δ‖θ̂‖ at the input bound.
MAX_COEF = 1e100
#: a² + b² between these is computed as it is; outside, on a and b scaled by _UP or _DOWN (powers
#: of two: exact), so that the larger square neither underflows nor overflows. Below _LOW,
#: m = max(|a|, |b|) is under 10⁻¹⁴⁵ (and at least 5·10⁻³²⁴: b ≠ 0), so 2⁶⁰⁰·m lies in
#: [2·10⁻¹⁴³, 5·10³⁵]; above _HIGH, m is over 7·10¹⁴⁴, so 2⁻⁶⁰⁰·m lies in [10⁻³⁶, 5·10¹²⁷].
_LOW, _HIGH = 1e-290, 1e290
_UP, _DOWN = 2.0 ** 600, 2.0 ** -600


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
        square = a * a + b * b
        if _LOW < square < _HIGH:
            r = math.sqrt(square)
            c = a / r
            s = b / r
        else:  # hypot's scaling: exact, so c and s are as accurate as in the ordinary range
            scale = _UP if square <= _LOW else _DOWN
            a_scaled = a * scale
            b_scaled = b * scale
            r_scaled = math.sqrt(a_scaled * a_scaled + b_scaled * b_scaled)
            c = a_scaled / r_scaled
            s = b_scaled / r_scaled
            r = r_scaled / scale
        factor[k, k] = r
        for j in range(k + 1, d + 1):
            fkj = factor[k, j]
            wj = work[j]
            factor[k, j] = c * fkj + s * wj
            work[j] = c * wj - s * fkj


@njit
def solve(factor, theta):
    """OLS estimate from ``factor`` into ``theta``; components on null directions are set to 0,
    and so are components that would pass :data:`MAX_COEF` in magnitude (unidentified too).

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
        acc = factor[k, d]
        for j in range(k + 1, d):
            acc -= factor[k, j] * theta[j]
        if abs(acc) > MAX_COEF * abs(pivot):
            theta[k] = 0.0
            continue
        rank += 1
        theta[k] = acc / pivot
    return rank
