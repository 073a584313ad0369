r"""Exact c1, c2 and expected clean points (``lem:lb``, ``lem:spheres``, ``cor:c1``).

The stochastic analysis of SA-OLS (``thm:stochastic-main-app``) depends on two
geometric constants of the uniform distribution on the unit ball of
:math:`\mathbb{R}^d`:

* ``c1(d, delta)`` :math:`= P(x_1 \ge \delta)`, the probability that a context is
  *clean* (an agent who cannot reach the decision boundary, so ``x' = x``), and
* ``c2(d, delta)`` :math:`= E[x_2^2 \mid x_1 \ge \delta]`, which lower-bounds the
  smallest eigenvalue of the clean-context second-moment matrix.

Both are computed exactly here (regularized incomplete beta functions), not via
the paper's lower bounds.  The paper's lemmas contain slips, so do not use them
as reference values:

* ``lem:lb`` writes :math:`c_1 = \mathrm{vol}(A)/\mathrm{vol}(H)` with ``H`` the
  upper half-ball; the correct normaliser is the whole ball, so the ratio is
  :math:`2 c_1` (the cap ``A`` is also defined with a threshold
  :math:`\sqrt{c}/(d-1)` instead of :math:`\delta`).
* ``lem:spheres`` states :math:`E[x_2^2 \mid x_1 = \delta'] = (1-\delta'^2)^3/(3d)`;
  the correct value is :math:`(1-\delta'^2)/(d+1)` (ball) or
  :math:`(1-\delta'^2)/(d-1)` (sphere surface).  The informal
  ``thm:stochastic-main`` additionally drops the :math:`1/(3d)` factor, which makes
  its stated bound :math:`c_2 \ge (3/4 - \delta/2 - \delta^2/4)^3` false
  (e.g. ``d = 10, delta = 0``: the exact value is ``1/12`` < ``27/64``).

The paper writes the arguments as ``c1(delta, d)``; the functions here take
``(d, delta)``.  The paper says "sphere" but its proofs integrate over the ball;
``surface=True`` selects the uniform distribution on the sphere surface instead.
"""

from __future__ import annotations

import math

from ._checks import _check_delta, _check_dim, _check_int, _check_real

__all__ = ["c1", "c2", "expected_clean_points"]


# Below this, I_s(a, 1/2) is too close to the subnormal range to take its log.
_TINY = 1e-280
# Cancellation threshold for the complementary form 1 - I_{delta^2}(1/2, a).
_COMPLEMENT_MIN = 1e-4


def _beta_a(d: int, surface: bool) -> float:
    """First beta parameter ``a``: the marginal density of x_1 is ∝ (1 - u^2)^(a - 1)."""
    return (d - 1) / 2 if surface else (d + 1) / 2


# --------------------------------------------------------------------------- kernels


def _two_sided_tail(a: float, delta: float) -> float:
    """``P(|x_1| >= delta) = I_{1 - delta^2}(a, 1/2)`` computed without cancellation.

    Near ``delta = 0`` the argument ``1 - delta^2`` rounds to 1 and the direct form
    loses ~``eps / delta`` absolute accuracy, so the complementary form
    ``1 - I_{delta^2}(1/2, a)`` is used whenever it is not itself a cancellation.
    """
    from scipy import special  # here: scipy.special is a tenth of the service's start-up

    if delta >= 1.0:
        return 0.0
    if delta == 0.0:
        return 1.0
    delta_sq = delta * delta
    if delta_sq < 0.5:
        p = 1.0 - float(special.betainc(0.5, a, delta_sq))
        if p >= _COMPLEMENT_MIN:
            return p
    s = (1.0 - delta) * (1.0 + delta)
    return float(special.betainc(a, 0.5, s))


def _hyp_integral(a: float, delta: float) -> float:
    """``2F1(1/2, a; a + 1; 1 - delta^2)`` by quadrature (Euler integral, tau = e^(-v/a)).

    ``2F1(1/2, a; a+1; s) = ∫_0^∞ e^(-v) (delta^2 - s·expm1(-v/a))^(-1/2) dv``; the
    integrand is smooth whenever ``a·delta^2`` is not small, which is the only
    regime where it is used (when ``I_s(a, 1/2)`` underflows).
    """
    from scipy import integrate

    s = (1.0 - delta) * (1.0 + delta)
    delta_sq = delta * delta

    def integrand(v: float) -> float:
        return math.exp(-v) / math.sqrt(delta_sq - s * math.expm1(-v / a))

    value, _ = integrate.quad(integrand, 0.0, math.inf, epsabs=0.0, epsrel=1e-13, limit=200)
    return value


def _moment_ratio(a: float, delta: float) -> float:
    """``R = I_s(a + 1, 1/2) / I_s(a, 1/2)`` with ``s = 1 - delta^2``, for ``0 <= delta < 1``.

    Uses ``I_s(a, b) - I_s(a + 1, b) = s^a (1 - s)^b / (a B(a, b))``, i.e.
    ``R = 1 - t`` with ``t = s^a delta / (a B(a, 1/2) I_s(a, 1/2))``, which is exact to
    rounding for small ``delta``; the direct ratio when ``t`` is large (cancellation);
    and the hypergeometric form ``R = s (a + 1/2)/(a + 1) F_{a+1} / F_a`` (``F_a =
    2F1(1/2, a; a+1; s)``) when ``I_s`` underflows (huge ``d``).
    """
    from scipy import special

    if delta == 0.0:
        return 1.0
    p = _two_sided_tail(a, delta)
    if p > _TINY:
        log_t = (
            a * math.log1p(-delta * delta)
            + math.log(delta)
            - math.log(a)
            - float(special.betaln(a, 0.5))
            - math.log(p)
        )
        t = math.exp(log_t)
        if t <= 0.5:
            return 1.0 - t
        return _two_sided_tail(a + 1.0, delta) / p
    s = (1.0 - delta) * (1.0 + delta)
    return s * (a + 0.5) / (a + 1.0) * _hyp_integral(a + 1.0, delta) / _hyp_integral(a, delta)


# --------------------------------------------------------------------------- public API


def c1(d: int, delta: float, *, surface: bool = False) -> float:
    r"""Exact probability that a uniform context is clean, ``P(x_1 >= delta)``.

    For ``x`` uniform in the unit ball of :math:`\mathbb{R}^d` the marginal density
    of :math:`x_1` is proportional to :math:`(1-u^2)^{(d-1)/2}` on ``[-1, 1]``;
    substituting :math:`w = 1 - u^2` gives

    .. math:: c_1(d, \delta) = \tfrac12 I_{1-\delta^2}\big(\tfrac{d+1}{2}, \tfrac12\big),

    with :math:`I` the regularized incomplete beta function.  On the sphere
    surface (``surface=True``) the marginal is :math:`\propto (1-u^2)^{(d-3)/2}` and
    the first parameter becomes :math:`(d-1)/2`.  Special cases: ``d = 1`` (ball
    ``[-1, 1]``) gives :math:`(1-\delta)/2`; ``d = 3`` gives
    :math:`(1-\delta)^2(2+\delta)/4` (ball) and :math:`(1-\delta)/2` (surface,
    Archimedes).  By rotational invariance this is also
    :math:`P(\langle \beta, x\rangle \ge \delta \|\beta\|)` for any
    :math:`\beta \ne 0` (``cor:c1``).

    Parameters
    ----------
    d : int
        Dimension, ``>= 1`` (``>= 2`` when ``surface=True``).
    delta : float
        Threshold, finite and ``>= 0``; values ``>= 1`` give ``0.0``.
    surface : bool, optional
        Uniform on the sphere surface instead of the solid ball.

    Returns
    -------
    float
        The probability, in ``[0, 1/2]`` (``0.0`` if it underflows).

    Raises
    ------
    ValueError
        If ``d`` is not an integer ``>= 1`` (``>= 2`` for the surface) or ``delta``
        is negative, NaN or infinite.

    Examples
    --------
    >>> c1(5, 0.0)
    0.5
    >>> round(c1(3, 0.5), 12)  # (1 - 0.5)**2 * (2 + 0.5) / 4
    0.15625
    >>> round(c1(3, 0.5, surface=True), 12)
    0.25
    >>> c1(2, 1.5)
    0.0
    """
    d = _check_dim(d, surface)
    delta = _check_delta(delta)
    return 0.5 * _two_sided_tail(_beta_a(d, surface), delta)


def c2(d: int, delta: float, *, surface: bool = False) -> float:
    r"""Exact conditional second moment ``E[x_2^2 | x_1 >= delta]``.

    Derivation (ball): given :math:`x_1 = u`, the remaining coordinates are
    uniform in the :math:`(d-1)`-ball of radius :math:`\sqrt{1-u^2}`, and a uniform
    point in a ``k``-ball of radius :math:`\rho` has
    :math:`E[x_j^2] = \rho^2/(k+2)`, so :math:`E[x_2^2 \mid x_1] = (1-x_1^2)/(d+1)`.
    With the marginal :math:`\propto (1-u^2)^{a-1}`, :math:`a = (d+1)/2`,

    .. math::

        E[1 - x_1^2 \mid x_1 \ge \delta]
        = \frac{\int_\delta^1 (1-u^2)^{a} du}{\int_\delta^1 (1-u^2)^{a-1} du}
        = \frac{a}{a + 1/2}\,\frac{I_s(a+1, 1/2)}{I_s(a, 1/2)},
        \quad s = 1 - \delta^2,

    hence

    .. math:: c_2 = \frac{1}{d+2}\,\frac{I_s(\frac{d+3}{2}, \frac12)}{I_s(\frac{d+1}{2}, \frac12)}.

    On the sphere surface the rest is uniform on a sphere of radius
    :math:`\sqrt{1-u^2}` in :math:`\mathbb{R}^{d-1}`, so
    :math:`E[x_2^2 \mid x_1] = (1-x_1^2)/(d-1)`, :math:`a = (d-1)/2` and
    :math:`c_2 = I_s(\frac{d+1}{2}, \frac12) / (d\, I_s(\frac{d-1}{2}, \frac12))`.
    At ``delta = 0`` this is the unconditional :math:`E[x_2^2]`: ``1/(d+2)``
    (ball) and ``1/d`` (surface).  The paper's ``lem:spheres`` value
    :math:`(1-\delta'^2)^3/(3d)` for :math:`E[x_2^2 \mid x_1 = \delta']` is a slip
    (see DESIGN §4 and the module docstring).

    Numerically the ratio is evaluated as ``1 - t`` via the recurrence
    :math:`I_s(a,b) - I_s(a+1,b) = s^a(1-s)^b/(aB(a,b))` (accurate for small
    ``delta``), as a direct ratio otherwise, and through a hypergeometric
    quadrature when :math:`I_s` underflows (very large ``d``).

    Parameters
    ----------
    d : int
        Dimension, ``>= 2`` (``x_2`` must exist).
    delta : float
        Threshold, finite and in ``[0, 1)`` (the conditioning event is null for
        ``delta >= 1``).
    surface : bool, optional
        Uniform on the sphere surface instead of the solid ball.

    Returns
    -------
    float
        The conditional moment, in ``(0, 1/(d+2)]`` (ball) or ``(0, 1/d]`` (surface).

    Raises
    ------
    ValueError
        If ``d`` is not an integer ``>= 2`` or ``delta`` is not in ``[0, 1)``.

    Examples
    --------
    >>> round(c2(3, 0.0), 12)  # 1 / (d + 2)
    0.2
    >>> round(c2(3, 0.0, surface=True), 12)  # 1 / d
    0.333333333333
    >>> round(c2(3, 0.5, surface=True), 12)  # x_1 ~ U[-1, 1]: (1 - 7/12) / 2
    0.208333333333
    """
    d = _check_int(d, "d", 2)
    delta = _check_real(
        delta,
        "delta",
        "in [0, 1) for c2 (x_1 >= delta is a null event for delta >= 1)",
        lambda v: 0.0 <= v < 1.0,
    )
    a = _beta_a(d, surface)
    return _moment_ratio(a, delta) / (2.0 * a + 1.0)


def _gram_constant(d: int, delta: float, surface: bool) -> float:
    r"""The constant ``c2`` of the bounds, extended to ``d = 1``.

    The proof of ``thm:stochastic-main-app`` needs
    :math:`\min_{\|\omega\| = 1} E[\langle\omega, x\rangle^2 \mid x_1 \ge \delta]`
    (``eq:almost``), which is ``c2`` for ``d >= 2``. At ``d = 1`` there is no ``x_2``; the
    minimum is over :math:`\omega = \pm 1`, i.e. :math:`E[x_1^2 \mid x_1 \ge \delta]
    = (1 + \delta + \delta^2)/3` for ``x`` uniform on ``[-1, 1]`` (the paper states its
    bounds for ``d >= 2`` only; this is their reading at ``d = 1``).
    """
    if d == 1:
        return (1.0 + delta + delta * delta) / 3.0
    return c2(d, delta, surface=surface)


def expected_clean_points(
    d: int,
    delta: float,
    horizon: int,
    *,
    r0: float = 0.0,
    radius: float = 1.0,
    beta_norm: float | None = None,
    surface: bool = False,
) -> float:
    r"""Expected number of clean points of SA-OLS over ``horizon`` rounds (``cor:c1``).

    The first ``d`` (warm-up) rounds are clean by construction; afterwards a
    context uniform in the ball of radius ``R = radius`` is clean under a shifted
    policy when :math:`\langle \beta, x\rangle > \delta\|\beta\| + r_0`.  By
    rotational invariance :math:`\langle \beta, x\rangle/\|\beta\| \sim R x_1`, so the
    per-round probability is :math:`P(x_1 > (\delta + r_0/\|\beta\|)/R)`, which for
    ``r0 = 0`` is ``c1(d, delta / R)`` whatever the policy.  The result is

    .. math:: d + P(\text{clean}) \cdot (T - d), \qquad T \ge d,

    and ``T`` itself when ``T < d``.  With ``r0 != 0`` the probability depends on
    :math:`\|\beta\|`, so ``beta_norm`` must be given (one fixed norm for all
    rounds); the threshold may then be negative, in which case the probability is
    ``1 - c1(d, -threshold / R)`` (thresholds ``<= -1`` give ``1``).

    Parameters
    ----------
    d : int
        Dimension, ``>= 1`` (``>= 2`` when ``surface=True``).
    delta : float
        Manipulation budget, finite and ``>= 0`` (in the units of ``radius``).
    horizon : int
        Number of rounds ``T >= 0``.
    r0 : float, optional
        Offset of the shifted policy; ``0`` (default) is the paper's setting.
    radius : float, optional
        Radius ``R > 0`` of the context ball.
    beta_norm : float or None, optional
        :math:`\|\beta\| > 0`; required iff ``r0 != 0``.
    surface : bool, optional
        Contexts uniform on the sphere of radius ``R`` instead of the ball.

    Returns
    -------
    float
        The expected count, in ``[min(d, T), T]``.

    Raises
    ------
    ValueError
        On invalid arguments, or ``r0 != 0`` without ``beta_norm``.

    Examples
    --------
    >>> expected_clean_points(2, 0.0, 102)  # 2 + 100 / 2
    52.0
    >>> expected_clean_points(5, 0.3, 3)  # horizon < d: all warm-up points
    3.0
    >>> round(expected_clean_points(3, 1.0, 403, radius=2.0), 9)  # 3 + 400 * c1(3, 0.5)
    65.5
    """
    d = _check_dim(d, surface)
    delta = _check_delta(delta)
    horizon = _check_int(horizon, "horizon", 0)
    r0 = _check_real(r0, "r0")
    radius = _check_real(radius, "radius", "> 0", lambda v: v > 0.0)
    if beta_norm is not None:
        beta_norm = _check_real(beta_norm, "beta_norm", "> 0 (or None)", lambda v: v > 0.0)
    if r0 != 0.0 and beta_norm is None:
        raise ValueError(
            f"beta_norm must be a finite number > 0 when r0 != 0 (r0={r0!r}), got None"
        )
    if horizon <= d:
        return float(horizon)
    shift = delta if beta_norm is None else delta + r0 / beta_norm
    threshold = shift / radius
    a = _beta_a(d, surface)
    if threshold >= 0.0:
        prob = 0.5 * _two_sided_tail(a, threshold)
    else:
        prob = 1.0 - 0.5 * _two_sided_tail(a, -threshold)
    return d + prob * (horizon - d)
