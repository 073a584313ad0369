"""The exact best response to an optimistic rule: accept iff ⟨θ, z⟩ + α‖z‖_{V⁻¹} ≥ r0.

LinUCB's rule under apple tasting (and the LinUCB models of other libraries, with V = RᵀR the
ridge matrix of the accepting arm) rejects the convex set C = {g < 0}, g(z) = ⟨θ, z⟩ +
α‖R⁻ᵀz‖ − r0. A lazy agent at x ∈ C moves to the nearest point of its boundary if that is
within its budget (`def:br`). On the boundary α‖z‖_M = r0 − ⟨θ, z⟩ ≥ 0 (M = V⁻¹), so it lies on
the quadric

    F(z) = zᵀQz + 2bᵀz + c = 0,   Q = α²M − θθᵀ,  b = r0·θ,  c = −r0²,

whose other sheet (⟨θ, z⟩ − α‖z‖_M = r0) is accepted (g = 2α‖z‖_M ≥ 0 there): a segment from x
to it crosses ∂C first, so the point of the whole quadric nearest to x is on ∂C. The nearest
point of a quadric is a generalized trust-region problem with an equality constraint (Moré,
"Generalizations of the trust region problem", 1993): z is globally nearest iff
z − x = −μ(Qz + b), F(z) = 0 and I + μQ ⪰ 0. With Q = UΛUᵀ, ξ = Uᵀx and β = Uᵀb,

    z̃_i(μ) = (ξ_i − μβ_i) / (1 + μλ_i),   φ(μ) = Σ λ_i z̃_i² + 2 Σ β_i z̃_i + c,

and the move is the root of the secular equation φ(μ) = 0 on (−1/λ_max, 0]: φ decreases there
(φ' = −2 Σ (λ_i z̃_i + β_i)² / (1 + μλ_i) ≤ 0), φ(0) = F(x) < 0 inside C, and φ → +∞ as μ →
−1/λ_max unless (ξ − μβ) has no part along the top eigenvector there (the "hard case"). The
root is found by Newton's method safeguarded by bisection, in the eigenbasis (Jacobi's method,
O(d³) once a move).

Where the closed form does not apply (the hard case, Q with no positive eigenvalue, a start
that rounding puts on the quadric's other side), :func:`nearest_point` returns NaN and the
caller falls back to the numerical search (:mod:`.best_response`).
"""

from __future__ import annotations

import math

from .._jit import NO_NRT, njit

#: Rows of scratch (each of length d) that :func:`nearest_point` needs: three d × d matrices.
MATRIX_ROWS = 3

_OUTLINED = {"inline": "never", **NO_NRT}


@njit(inline="always")
def invert_triangle(factor, d, inv):
    """inv[:d, :d] ← R⁻¹ for R = factor[:d, :d] upper triangular (back substitution)."""
    for j in range(d - 1, -1, -1):
        for i in range(d):
            inv[i, j] = 0.0
        inv[j, j] = 1.0 / factor[j, j]
        for i in range(j - 1, -1, -1):
            acc = 0.0
            for k in range(i + 1, j + 1):
                acc += factor[i, k] * inv[k, j]
            inv[i, j] = -acc / factor[i, i]


@njit(inline="always")
def frobenius(a, d):
    """‖a[:d, :d]‖_F: a bound on the operator norm, so ‖R⁻ᵀv‖ ≤ ‖R⁻¹‖_F‖v‖."""
    s = 0.0
    for i in range(d):
        for j in range(d):
            s += a[i, j] * a[i, j]
    return math.sqrt(s)


@njit(inline="always")
def _jacobi(a, u, d):
    """Eigen-decompose the symmetric a[:d, :d] in place (cyclic Jacobi): the eigenvalues end on
    its diagonal, the eigenvectors in the columns of u."""
    for i in range(d):
        for j in range(d):
            u[i, j] = 1.0 if i == j else 0.0
    for _ in range(100):
        off = 0.0
        total = 0.0
        for i in range(d):
            total += a[i, i] * a[i, i]
            for j in range(i + 1, d):
                off += a[i, j] * a[i, j]
        if not off > 1e-32 * (total + off):
            return
        for p in range(d - 1):
            for q in range(p + 1, d):
                apq = a[p, q]
                if apq == 0.0:
                    continue
                tau = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = (1.0 if tau >= 0.0 else -1.0) / (abs(tau) + math.sqrt(1.0 + tau * tau))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = t * c
                for k in range(d):  # columns p and q
                    akp = a[k, p]
                    akq = a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(d):  # rows p and q
                    apk = a[p, k]
                    aqk = a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                a[p, q] = 0.0
                a[q, p] = 0.0
                for k in range(d):
                    ukp = u[k, p]
                    ukq = u[k, q]
                    u[k, p] = c * ukp - s * ukq
                    u[k, q] = s * ukp + c * ukq


@njit(inline="always")
def _secular(a, xi, be, c, d, mu):
    """φ(μ) and φ'(μ) in the eigenbasis (eigenvalues on a's diagonal)."""
    phi = c
    dphi = 0.0
    for i in range(d):
        lam = a[i, i]
        den = 1.0 + mu * lam
        zi = (xi[i] - mu * be[i]) / den
        phi += lam * zi * zi + 2.0 * be[i] * zi
        h = lam * zi + be[i]
        dphi -= 2.0 * h * h / den
    return phi, dphi


@njit(**_OUTLINED)
def nearest_point(theta, r0, alpha, factor, x, z, work):
    """The point z of {⟨θ, z⟩ + α‖R⁻ᵀz‖ = r0} nearest to x (R = factor[:d, :d] upper
    triangular, x strictly inside the rejected set); returns ‖z − x‖, or NaN where the closed
    form does not apply. ``work`` holds :data:`MATRIX_ROWS`·d + 2 rows of length d.
    """
    d = x.shape[0]
    inv = work[0:d]
    a = work[d:2 * d]
    u = work[2 * d:3 * d]
    xi = work[3 * d]
    be = work[3 * d + 1]
    invert_triangle(factor, d, inv)
    # Q = α²·R⁻¹R⁻ᵀ − θθᵀ
    a2 = alpha * alpha
    for i in range(d):
        for j in range(i, d):
            acc = 0.0
            for k in range(j, d):  # R⁻¹ is upper triangular
                acc += inv[i, k] * inv[j, k]
            q = a2 * acc - theta[i] * theta[j]
            a[i, j] = q
            a[j, i] = q
    _jacobi(a, u, d)
    top = -math.inf
    for i in range(d):
        top = max(top, a[i, i])
        s = 0.0
        t = 0.0
        for k in range(d):
            s += u[k, i] * x[k]
            t += u[k, i] * theta[k]
        xi[i] = s
        be[i] = r0 * t
    if not top > 0.0:
        return math.nan
    c = -r0 * r0
    phi, _ = _secular(a, xi, be, c, d, 0.0)
    if not phi < 0.0:
        return math.nan  # rounding put x on the quadric or past it: let the search decide
    # Bracket [lo, hi] with φ(lo) > 0 ≥ ... > φ(hi): approach the pole −1/λ_max geometrically.
    hi = 0.0
    lo = math.nan
    for k in range(1, 64):
        mu = -(1.0 - 0.5 ** k) / top
        phi, _ = _secular(a, xi, be, c, d, mu)
        if phi > 0.0:
            lo = mu
            break
        hi = mu
    if math.isnan(lo):
        return math.nan  # the hard case: no crossing before the pole
    mu = hi
    phi, dphi = _secular(a, xi, be, c, d, mu)
    for _ in range(200):
        if phi == 0.0 or not hi - lo > 4e-16 * abs(lo):
            break
        step = mu - phi / dphi if dphi < 0.0 else math.nan
        if not lo < step < hi:
            step = 0.5 * (lo + hi)
        mu = step
        phi, dphi = _secular(a, xi, be, c, d, mu)
        if phi > 0.0:
            lo = mu
        else:
            hi = mu
    mu = hi  # the side where φ ≤ 0: the point is not past the boundary (the landing pushes)
    dist = 0.0
    for k in range(d):
        s = 0.0
        for i in range(d):
            zi = (xi[i] - mu * be[i]) / (1.0 + mu * a[i, i])
            s += u[k, i] * zi
        z[k] = s
        dist += (s - x[k]) * (s - x[k])
    return math.sqrt(dist)
