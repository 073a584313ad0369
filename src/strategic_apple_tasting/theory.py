r"""Exact constants and explicit regret bounds from the paper (DESIGN §4).

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

The explicit bounds of the other theorems are reproduced as the paper states them
(with the discrepancies between statement and proof noted in each docstring):
``saols_regret_bound`` (``thm:stochastic-main-app``), ``etc_exploration_rounds`` and
``etc_regret_bound`` (``T0`` and the bound of ``thm:etc-reg``),
``switching_time`` (the switching time of ``alg:unknown_T``, which the paper leaves
undefined: the crossing of the SA-OLS and explore-then-commit bounds),
``unknown_horizon_regret_bound`` (``thm:best-both``), and ``exp3_sae_parameters`` /
``exp3_sae_regret_bound`` (``alg:UPD-ONE``, ``thm:upd-one-app``).
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special

__all__ = [
    "Exp3SAEParameters",
    "band_regret",
    "c1",
    "c2",
    "etc_commit_regret_bound",
    "etc_exploration_rounds",
    "etc_regret_bound",
    "exp3_sae_parameters",
    "exp3_sae_regret_bound",
    "expected_clean_points",
    "saols_no_clean_probability",
    "saols_regret_bound",
    "switching_time",
    "unknown_horizon_regret_bound",
]

# Below this, I_s(a, 1/2) is too close to the subnormal range to take its log.
_TINY = 1e-280
# Cancellation threshold for the complementary form 1 - I_{delta^2}(1/2, a).
_COMPLEMENT_MIN = 1e-4


# --------------------------------------------------------------------------- validation


def _show(value: object) -> str:
    """Format an offending value for an error message (``nan``, ``-0.5``, ``3``, ``'x'``)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return repr(float(value))
    return repr(value)


def _check_int(value: object, name: str, minimum: int) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``, else raise."""
    if not isinstance(value, bool):
        try:
            ivalue = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
        else:
            if ivalue >= minimum:
                return ivalue
    raise ValueError(f"{name} must be an integer >= {minimum}, got {_show(value)}")


def _check_real(
    value: object, name: str, allowed: str = "", ok: Callable[[float], bool] | None = None
) -> float:
    """Return ``value`` as a finite ``float`` satisfying ``ok``, else raise.

    ``allowed`` completes the sentence "``name`` must be a finite number ...".
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        fvalue = float(value)
        if math.isfinite(fvalue) and (ok is None or ok(fvalue)):
            return fvalue
    allowed = f" {allowed}" if allowed else ""
    raise ValueError(f"{name} must be a finite number{allowed}, got {_show(value)}")


def _check_dim(d: object, surface: bool) -> int:
    if surface:
        # The "sphere" in R^1 is the two-point set {-1, 1}: no density, excluded.
        return _check_int(d, "d", 2)
    return _check_int(d, "d", 1)


def _check_delta(delta: object) -> float:
    return _check_real(delta, "delta", ">= 0", lambda v: v >= 0.0)


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


def saols_regret_bound(
    d: int,
    delta: float,
    horizon: int,
    *,
    sigma: float,
    gamma: float = 0.05,
    c0: float = 1.0,
    surface: bool = False,
) -> float:
    r"""Explicit high-probability regret bound of SA-OLS (``thm:stochastic-main-app``).

    .. math::

        \mathrm{Reg}(T) \le 4d + \frac{8}{c_0\, c_1(d,\delta)\, c_2(d,\delta)}
            \sqrt{14\, d\, \sigma^2\, T \log(4dT/\gamma)},

    holding with probability ``1 - gamma`` (the paper writes ``c1(delta, d)``;
    here the constants are the exact ``c1(d, delta)`` and ``c2(d, delta)``).

    Parameters
    ----------
    d : int
        Dimension, ``>= 1`` (``>= 2`` on the surface). At ``d = 1``, where ``c2`` has no
        second coordinate, ``E[x_1^2 | x_1 >= delta]`` takes its place (the proof's
        smallest eigenvalue, ``eq:almost``).
    delta : float
        Manipulation budget, finite and ``>= 0``.  For ``delta >= 1`` no context
        is ever clean and the bound is vacuous: ``math.inf`` is returned (also
        when ``c0·c1·c2`` underflows, i.e. the bound exceeds the float range).
    horizon : int
        Horizon ``T >= 1``.
    sigma : float
        Sub-Gaussian noise parameter, finite and ``>= 0``.
    gamma : float, optional
        Failure probability, in ``(0, 1)``.
    c0 : float, optional
        Density-ratio lower bound of ``ass:bdr``, in ``(0, 1]``.
    surface : bool, optional
        Evaluate ``c1`` and ``c2`` on the sphere surface instead of the ball.

    Returns
    -------
    float
        The bound (``>= 4d``), or ``math.inf``.

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> saols_regret_bound(2, 0.3, 1, sigma=0.0)  # no noise: only the warm-up term
    8.0
    >>> b = saols_regret_bound(2, 0.0, 1000, sigma=1.0)
    >>> expected = 8 + 8 / (0.5 * 0.25) * math.sqrt(14 * 2 * 1000 * math.log(4 * 2 * 1000 / 0.05))
    >>> math.isclose(b, expected, rel_tol=1e-12)
    True
    >>> saols_regret_bound(2, 1.0, 1000, sigma=1.0)
    inf
    """
    d = _check_dim(d, surface)
    delta = _check_delta(delta)
    horizon = _check_int(horizon, "horizon", 1)
    sigma = _check_real(sigma, "sigma", ">= 0", lambda v: v >= 0.0)
    gamma = _check_real(gamma, "gamma", "in (0, 1)", lambda v: 0.0 < v < 1.0)
    c0 = _check_real(c0, "c0", "in (0, 1]", lambda v: 0.0 < v <= 1.0)
    warmup = 4.0 * d
    if delta >= 1.0:
        return math.inf
    denom = c0 * c1(d, delta, surface=surface) * _gram_constant(d, delta, surface)
    if denom == 0.0:
        return math.inf
    root = math.sqrt(14.0 * d * sigma**2 * horizon * math.log(4.0 * d * horizon / gamma))
    return warmup + 8.0 / denom * root


# --------------------------------------------------------------------------- explore-then-commit

# 63^(1/3): the constant of thm:etc-reg (T0 = 4·63^(1/3)·..., bound = 8·63^(1/3)/c0·...).
_CBRT_63 = 63.0 ** (1.0 / 3.0)
# Largest log-value whose exp is a finite float (log(DBL_MAX) ≈ 709.78).
_LOG_MAX = 709.0


def _exp_or_inf(log_value: float) -> float:
    """``exp(log_value)``, or ``math.inf`` when that would overflow a float."""
    return math.exp(log_value) if log_value < _LOG_MAX else math.inf


def _check_sigma(sigma: object) -> float:
    return _check_real(sigma, "sigma", ">= 0", lambda v: v >= 0.0)


def _check_gamma(gamma: object) -> float:
    return _check_real(gamma, "gamma", "in (0, 1)", lambda v: 0.0 < v < 1.0)


def _check_c0(c0: object) -> float:
    return _check_real(c0, "c0", "in (0, 1]", lambda v: 0.0 < v <= 1.0)


def _check_gamma_or_schedule(gamma: object) -> float | None:
    if gamma is None:
        return None
    return _check_real(gamma, "gamma", "in (0, 1) (or None for 1/T^2)", lambda v: 0.0 < v < 1.0)


def _log_etc_core(d: int, log_t: float, sigma: float, log_term: float) -> float:
    r"""``log(d σ^(2/3) T^(2/3) L^(1/3))`` with ``L = log_term``; ``-inf`` when ``σ = 0``."""
    if sigma == 0.0:
        return -math.inf
    return math.log(d) + (2.0 * math.log(sigma) + 2.0 * log_t + math.log(log_term)) / 3.0


def etc_exploration_rounds(d: int, horizon: int, *, sigma: float, gamma: float = 0.05) -> int:
    r"""Exploration length ``T0`` of strategy-aware explore-then-commit (``thm:etc-reg``).

    ``thm:etc-reg`` (statement and last line of its proof) sets

    .. math:: T_0 = 4 \cdot 63^{1/3}\, \sigma^{2/3}\, d\, T^{2/3} \log^{1/3}(4d/\gamma),

    which is exactly DESIGN §3's formula.  It is the ``T0`` at which the two terms of
    the proof's bound :math:`T_0 + T \cdot \frac{24d}{c_0}\sqrt{7d\sigma^2\log(4d/\gamma)/T_0}`
    are equal for :math:`c_0 = 1` (:math:`T_0^3 = 4032\, d^3\sigma^2 T^2 \log(4d/\gamma)`,
    :math:`4032 = 4^3 \cdot 63`), so ``T0`` does not involve the unknown :math:`c_0`.
    The paper leaves three things open, fixed here:

    * it never caps ``T0`` at ``T`` (for :math:`T \lesssim (16 d)^3 \sigma^2 \log(4d/\gamma)`
      the formula exceeds ``T``): the result is capped at ``horizon``;
    * it never rounds ``T0``: the result is rounded *up* (rounding up keeps the
      estimation term of the proof valid and adds at most one round);
    * the OLS fit needs ``d`` points (``lem:l2-etc`` even asks for ``T >= 2d``): the
      result is at least ``d``, unless ``horizon < d``, when every round explores.

    So the value is ``min(horizon, max(d, ceil(T0)))``.  Under bandit feedback the
    learner additionally rejects all for ``T0`` rounds (the paper's "exploring for
    twice as long"); capping ``2·T0`` at the horizon is the learner's business.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    horizon : int
        Horizon ``T >= 1``.
    sigma : float
        Sub-Gaussian noise parameter, finite and ``>= 0`` (``0`` gives ``min(d, T)``).
    gamma : float, optional
        Failure probability, in ``(0, 1)``.

    Returns
    -------
    int
        The number of exploration rounds, in ``[min(d, T), T]``.

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> etc_exploration_rounds(2, 10**9, sigma=1.0)  # ceil(4·63^(1/3)·2·10^6·log^(1/3)(160))
    54704176
    >>> etc_exploration_rounds(2, 1000, sigma=1.0)  # the formula exceeds T: capped
    1000
    >>> etc_exploration_rounds(3, 10**6, sigma=0.0)  # no noise: just enough for the fit
    3
    """
    d = _check_int(d, "d", 1)
    horizon = _check_int(horizon, "horizon", 1)
    sigma = _check_sigma(sigma)
    gamma = _check_gamma(gamma)
    log_t0 = math.log(4.0 * _CBRT_63) + _log_etc_core(
        d, math.log(horizon), sigma, math.log(4.0 * d / gamma)
    )
    if log_t0 >= math.log(horizon):
        return horizon
    return min(horizon, max(d, math.ceil(math.exp(log_t0))))


def etc_regret_bound(
    d: int, horizon: int, *, sigma: float, gamma: float = 0.05, c0: float = 1.0
) -> float:
    r"""High-probability regret bound of explore-then-commit, as ``thm:etc-reg`` states it.

    .. math::

        \mathrm{Reg}_{\mathrm{ETC}}(T) \le \frac{8 \cdot 63^{1/3}}{c_0}\, d\,
            \sigma^{2/3}\, T^{2/3} \log^{1/3}(4d/\gamma)

    with probability ``1 - gamma``.  This is :math:`2 T_0 / c_0` with the *uncapped,
    unrounded* :math:`T_0` of :func:`etc_exploration_rounds`, and it does bound the
    proof's :math:`T_0 + T_0/c_0` (the two proof terms coincide at :math:`c_0 = 1`),
    so statement and proof agree.  Notes on what the paper leaves implicit:

    * The bound does not depend on ``delta``: exploration accepts everybody, so all
      exploration points are clean, and the commit phase loses only through the
      estimation error (hence no ``delta`` argument).
    * It is the paper's formula even when :math:`T_0 \ge T` (where the learner only
      explores); it is then :math:`\ge 2T/c_0`, weaker than the trivial bound ``T``
      (per-round regret at most 1 for :math:`\|\theta\|, \|x\| \le 1`).
    * ``lem:denominator-etc`` uses :math:`\lambda_{\min}(E[xx^\top]) \ge 1/(3d)`
      (true, the exact ball value is :math:`1/(d+2)`) and prints ``+ 4 sqrt(...)``
      for what must be ``- 4 sqrt(...)``; the constant ``24d = 2 · 12d`` counts both
      arms although under apple tasting only :math:`\theta^{(1)}` is estimated.  The
      bound is reproduced as stated, not re-derived.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    horizon : int
        Horizon ``T >= 1``.
    sigma : float
        Sub-Gaussian noise parameter, finite and ``>= 0``.
    gamma : float, optional
        Failure probability, in ``(0, 1)``.
    c0 : float, optional
        Density-ratio lower bound of ``ass:bdr``, in ``(0, 1]``.

    Returns
    -------
    float
        The bound (``math.inf`` if it exceeds the float range).

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> b = etc_regret_bound(2, 1000, sigma=1.0)
    >>> expected = 8 * 63 ** (1 / 3) * 2 * 1000 ** (2 / 3) * math.log(4 * 2 / 0.05) ** (1 / 3)
    >>> math.isclose(b, expected, rel_tol=1e-12)
    True
    >>> etc_regret_bound(2, 1000, sigma=0.0)
    0.0
    """
    d = _check_int(d, "d", 1)
    horizon = _check_int(horizon, "horizon", 1)
    sigma = _check_sigma(sigma)
    gamma = _check_gamma(gamma)
    c0 = _check_c0(c0)
    log_core = _log_etc_core(d, math.log(horizon), sigma, math.log(4.0 * d / gamma))
    if log_core == -math.inf:
        return 0.0
    return _exp_or_inf(math.log(8.0 * _CBRT_63 / c0) + log_core)


def etc_commit_regret_bound(
    d: int, horizon: int, *, sigma: float, gamma: float = 0.05, c0: float = 1.0,
    exploration_rounds: int | None = None,
) -> float:
    r"""The commit phase's term of the proof of ``thm:etc-reg``: its statistical part.

    The proof bounds the regret by :math:`T_0` (exploration, at most 1 a round) plus

    .. math:: T \cdot \frac{24 d}{c_0} \sqrt{\frac{7 d \sigma^2 \log(4d/\gamma)}{T_0}},

    the commit phase's regret, with probability ``1 - gamma``. With the theorem's unrounded
    :math:`T_0` and ``c0 = 1`` this term equals :math:`T_0` (that is how :math:`T_0` is chosen),
    so it grows like :math:`T^{2/3}`. The exploration's cost is deterministic given the
    contexts, so this term is the only claim of the theorem about learning.

    Parameters
    ----------
    d, horizon, sigma, gamma, c0
        As for :func:`etc_regret_bound`.
    exploration_rounds : int, optional
        :math:`T_0` (default: :func:`etc_exploration_rounds`, the learner's own).

    Examples
    --------
    >>> t0 = etc_exploration_rounds(2, 10**6, sigma=0.1)
    >>> b = etc_commit_regret_bound(2, 10**6, sigma=0.1)
    >>> math.isclose(b, 10**6 * 48 * math.sqrt(7 * 2 * 0.01 * math.log(160) / t0))
    True
    """
    d = _check_int(d, "d", 1)
    horizon = _check_int(horizon, "horizon", 1)
    sigma = _check_sigma(sigma)
    gamma = _check_gamma(gamma)
    c0 = _check_c0(c0)
    t0 = (etc_exploration_rounds(d, horizon, sigma=sigma, gamma=gamma)
          if exploration_rounds is None else _check_int(exploration_rounds,
                                                        "exploration_rounds", 1))
    return horizon * 24.0 * d / c0 * math.sqrt(7.0 * d * sigma**2 * math.log(4.0 * d / gamma)
                                               / t0)


# --------------------------------------------------------------------------- unknown horizon

# Switching-time search range in log T: T from 1 to e^700 ≈ 1e304 (below float max).
_LOG_T_MAX = 700.0
_SCAN_STEP = 0.05


def _log_bound_pair(
    d: int,
    log_t: float,
    sigma: float,
    gamma: float | None,
    c0: float,
    log_cc: float,
) -> tuple[float, float]:
    """``(log S, log E)``: logs of the SA-OLS and ETC bounds at ``T = e^log_t``.

    ``log_cc = log(c1·c2)``; ``gamma=None`` means ``gamma = 1/T^2``.  The ``1/c0`` of
    both bounds is factored out, so ``S`` here is ``c0·4d + 8/(c1 c2)·sqrt(...)``:
    ``c0`` survives only in the warm-up term (see :func:`switching_time`).
    """
    log_4d = math.log(4.0 * d)
    if gamma is None:  # log(4d/γ) with γ = 1/T^2, and log(4dT/γ)
        log_etc, log_ols = log_4d + 2.0 * log_t, log_4d + 3.0 * log_t
    else:
        log_etc = log_4d - math.log(gamma)
        log_ols = log_etc + log_t
    log_e = math.log(8.0 * _CBRT_63) + _log_etc_core(d, log_t, sigma, log_etc)
    warm = math.log(4.0 * d * c0)
    if sigma == 0.0:
        return warm, log_e
    log_root = 0.5 * (math.log(14.0 * d) + 2.0 * math.log(sigma) + log_t + math.log(log_ols))
    tail = math.log(8.0) - log_cc + log_root
    hi, lo = max(warm, tail), min(warm, tail)
    return hi + math.log1p(math.exp(lo - hi)), log_e


def switching_time(
    d: int,
    delta: float,
    *,
    sigma: float,
    gamma: float | None = None,
    c0: float = 1.0,
    surface: bool = False,
) -> float:
    r"""Switching time :math:`\tau^*` of the unknown-horizon algorithm (``alg:unknown_T``).

    The paper writes :math:`\tau^* = g(d, \delta)` but never gives ``g``.  Its proof of
    ``thm:best-both`` only uses that explore-then-commit's bound is the smaller one
    before :math:`\tau^*` and SA-OLS's after, so :math:`\tau^*` is defined here as the
    horizon ``T`` (a real number) at which the explicit bounds cross,

    .. math::

        S(T) = 4d + \frac{8}{c_0 c_1 c_2}\sqrt{14 d \sigma^2 T \log(4dT/\gamma)}
        \;=\; E(T) = \frac{8\cdot 63^{1/3}}{c_0}\, d\, \sigma^{2/3} T^{2/3}
            \log^{1/3}(4d/\gamma),

    (``thm:stochastic-main-app`` with the exact ``c1(d, delta)``, ``c2(d, delta)`` of
    DESIGN §4, and ``thm:etc-reg``), solved by ``scipy.optimize.brentq`` on
    :math:`\log S - \log E` as a function of :math:`\log T`.

    *Why* :math:`c_0` *nearly cancels.*  Multiplying both sides by :math:`c_0`,

    .. math::

        4 d\, c_0 + \frac{8}{c_1 c_2}\sqrt{14 d \sigma^2 T \log(4dT/\gamma)}
        = 8\cdot 63^{1/3}\, d\, \sigma^{2/3} T^{2/3} \log^{1/3}(4d/\gamma):

    the only :math:`c_0` left is in SA-OLS's warm-up term :math:`4dc_0`, which at the
    crossing is negligible against the other two terms (both of order
    :math:`\ge 32(d+2)\sigma\sqrt{T}`) unless :math:`\sigma` is tiny.  Dropping it gives
    :math:`\tau^*` as the root of
    :math:`T^{1/6} = \frac{\sqrt{14}}{63^{1/3} c_1 c_2\sqrt d}\,\sigma^{1/3}
    \log^{1/2}(4dT/\gamma) / \log^{1/3}(4d/\gamma)`,
    a function of :math:`d, \delta, \sigma, \gamma` only; this is the sense in which
    the paper says ``g`` does not depend on :math:`c_0`.  It does depend on ``sigma``
    (and ``gamma``), which the paper's notation ``g(d, delta)`` hides; for large ``T``,
    :math:`\tau^* \approx (\sigma^{1/3}/(c_1 c_2 \sqrt d))^6` up to logs, which is
    astronomically large when :math:`c_1` is small (``delta`` near 1 or large ``d``).

    *Failure probability.*  ``gamma=None`` (default) uses :math:`\gamma = 1/T^2` in
    both bounds, the schedule ``alg:unknown_T`` gives an epoch of length ``T``; the
    bounds then become expected-regret bounds by adding the same :math:`2\gamma T = 2/T`
    to both (per-round regret at most 2, as in the proof of ``thm:best-both``), which
    cancels in the comparison.  A number uses that fixed ``gamma`` in both bounds.

    *Which crossing.*  :math:`\log S - \log E` decreases like :math:`-\tfrac16\log T`
    for large ``T`` but may rise for ``T`` close to 1, so there can be more than one
    root.  The value returned is the last one: the ``T`` beyond which SA-OLS's bound
    stays below explore-then-commit's, found by scanning :math:`\log T \in [0, 700]`
    on a grid of step 0.05 and refining the last sign change with ``brentq``.  It is
    ``1.0`` if SA-OLS's bound is already the smaller one at ``T = 1``, and
    ``math.inf`` if no crossing exists below :math:`T = e^{700} \approx 10^{304}`
    (SA-OLS never wins at a representable horizon): always for ``delta >= 1`` (no
    clean points, ``c1 = 0``), for ``sigma = 0`` (explore-then-commit's bound is 0),
    and when :math:`c_1 c_2` is tiny.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1`` (``>= 2`` on the surface; see :func:`saols_regret_bound`
        for ``d = 1``).
    delta : float
        Manipulation budget, finite and ``>= 0``.
    sigma : float
        Sub-Gaussian noise parameter, finite and ``>= 0``.
    gamma : float or None, optional
        Failure probability in ``(0, 1)`` for both bounds, or ``None`` for
        :math:`1/T^2`.
    c0 : float, optional
        Density-ratio lower bound of ``ass:bdr``, in ``(0, 1]``; the paper's
        :math:`\tau^*` is for ``c0 = 1`` (the algorithm does not know it).
    surface : bool, optional
        Evaluate ``c1`` and ``c2`` on the sphere surface instead of the ball.

    Returns
    -------
    float
        :math:`\tau^* \ge 1`, or ``math.inf``.

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> tau = switching_time(2, 0.0, sigma=1.0)  # about 2.24e6
    >>> def ols_minus_etc(t):  # both bounds with gamma = 1/t^2
    ...     ols = saols_regret_bound(2, 0.0, t, sigma=1.0, gamma=t**-2.0)
    ...     return ols - etc_regret_bound(2, t, sigma=1.0, gamma=t**-2.0)
    >>> ols_minus_etc(math.floor(0.999 * tau)) > 0 > ols_minus_etc(math.ceil(1.001 * tau))
    True
    >>> switching_time(2, 1.0, sigma=1.0), switching_time(2, 0.3, sigma=0.0)
    (inf, inf)
    """
    d = _check_dim(d, surface)
    delta = _check_delta(delta)
    sigma = _check_sigma(sigma)
    gamma = _check_gamma_or_schedule(gamma)
    c0 = _check_c0(c0)
    if delta >= 1.0 or sigma == 0.0:
        return math.inf
    cc = c1(d, delta, surface=surface) * _gram_constant(d, delta, surface)
    if cc == 0.0:
        return math.inf
    log_cc = math.log(cc)

    def gap(log_t: float) -> float:
        log_s, log_e = _log_bound_pair(d, log_t, sigma, gamma, c0, log_cc)
        return log_s - log_e

    n = round(_LOG_T_MAX / _SCAN_STEP)
    grid = [i * _SCAN_STEP for i in range(n + 1)]
    values = [gap(x) for x in grid]
    if values[-1] > 0.0:
        return math.inf
    positive = [i for i, v in enumerate(values) if v > 0.0]
    if not positive:
        return 1.0
    i = positive[-1]
    root = optimize.brentq(gap, grid[i], grid[i + 1], xtol=1e-13, rtol=4 * 2.0**-52)
    return math.exp(root)


def unknown_horizon_regret_bound(
    d: int,
    delta: float,
    horizon: int,
    *,
    sigma: float,
    gamma: float | None = None,
    c0: float = 1.0,
    surface: bool = False,
) -> float:
    r"""Expected-regret bound of the unknown-horizon algorithm (``thm:best-both``).

    ``thm:best-both`` states :math:`E[\mathrm{Reg}(T)] \le
    4 \min\{E[\mathrm{Reg}_{\mathrm{OLS}}(T)], E[\mathrm{Reg}_{\mathrm{ETC}}(T)]\}`
    without making the two expectations explicit.
    Following its proof (case 1: "with probability :math:`1 - 1/\tau_i^2` ...
    :math:`+\, 2/\tau_i`"), each high-probability bound ``B(gamma)`` is turned into an
    expected one as :math:`B(\gamma) + 2\gamma T` (per-round regret at most 2 on the
    failure event), with :math:`\gamma = 1/T^2` by default:

    .. math::

        4 \min\Big\{ 4d + \tfrac{8}{c_0 c_1 c_2}\sqrt{14 d\sigma^2 T\log(4dT^3)},\;
        \tfrac{8\cdot 63^{1/3}}{c_0} d\,\sigma^{2/3} T^{2/3}\log^{1/3}(4dT^2) \Big\}
        + \tfrac{8}{T}.

    These are exactly the two quantities :func:`switching_time` compares, so the
    minimum is explore-then-commit's bound for ``T`` below :math:`\tau^*` and SA-OLS's
    above (case 2 of the proof gives the factor 3, absorbed in the stated 4).  The
    proof's steps are not re-checked here (e.g. its case 1 needs
    :math:`E[\mathrm{Reg}_{\mathrm{ETC}}(2T)] \le 2 E[\mathrm{Reg}_{\mathrm{ETC}}(T)]`,
    which holds for these formulas).

    Parameters
    ----------
    d : int
        Dimension, ``>= 1`` (``>= 2`` on the surface; see :func:`saols_regret_bound`
        for ``d = 1``).
    delta : float
        Manipulation budget, finite and ``>= 0`` (``>= 1``: SA-OLS's bound is
        infinite and the ETC term is used).
    horizon : int
        Horizon ``T >= 1`` (``gamma = 1/T^2 = 1`` at ``T = 1`` is allowed here).
    sigma : float
        Sub-Gaussian noise parameter, finite and ``>= 0``.
    gamma : float or None, optional
        Failure probability in ``(0, 1)`` for both bounds, or ``None`` for
        :math:`1/T^2`.
    c0 : float, optional
        Density-ratio lower bound of ``ass:bdr``, in ``(0, 1]``.
    surface : bool, optional
        Evaluate ``c1`` and ``c2`` on the sphere surface instead of the ball.

    Returns
    -------
    float
        The bound (``math.inf`` if it exceeds the float range).

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> t = 1000  # short horizon: explore-then-commit's bound is the smaller
    >>> b = unknown_horizon_regret_bound(2, 0.3, t, sigma=1.0)
    >>> math.isclose(b, 4 * (etc_regret_bound(2, t, sigma=1.0, gamma=t**-2.0) + 2 / t))
    True
    >>> unknown_horizon_regret_bound(2, 0.3, 10, sigma=0.0)  # 4 * (0 + 2/10)
    0.8
    """
    d = _check_dim(d, surface)
    delta = _check_delta(delta)
    horizon = _check_int(horizon, "horizon", 1)
    sigma = _check_sigma(sigma)
    gamma = _check_gamma_or_schedule(gamma)
    c0 = _check_c0(c0)
    failure = 1.0 / horizon**2 if gamma is None else gamma
    slack = 2.0 * failure * horizon
    cc = 0.0 if delta >= 1.0 else c1(d, delta, surface=surface) * _gram_constant(d, delta, surface)
    log_cc = math.log(cc) if cc > 0.0 else -math.inf
    log_s, log_e = _log_bound_pair(d, math.log(horizon), sigma, gamma, c0, log_cc)
    # Both logs carry a factor c0 (see _log_bound_pair): divide it back out.
    smaller = min(log_s, log_e) - math.log(c0)
    return 4.0 * (_exp_or_inf(smaller) + slack)


# --------------------------------------------------------------------------- EXP3-SAE


@dataclass(frozen=True)
class Exp3SAEParameters:
    r"""Tuning of EXP3-SAE (``alg:UPD-ONE``), as computed by :func:`exp3_sae_parameters`.

    Attributes
    ----------
    epsilon : float
        Target grid spacing :math:`\varepsilon`.
    points_per_axis : int
        Grid points per coordinate, ``>= 2``, evenly spaced on ``[-B, B]``
        including both endpoints (``numpy.linspace(-B, B, points_per_axis)``).
    grid_size : int
        Number of experts :math:`|E| = \text{points\_per\_axis}^d`, exact (may be
        far beyond the float range).
    lam : float
        Loss shift :math:`\lambda = \sigma\sqrt{2\log T}`.
    eta : float
        Learning rate :math:`\eta = \sqrt{\log|E| / (T\lambda^2|E|)}`.
    gamma : float
        Uniform-exploration weight :math:`\min(1, 2\eta\lambda|E|)`.
    """

    epsilon: float
    points_per_axis: int
    grid_size: int
    lam: float
    eta: float
    gamma: float


def _check_exp3(d: object, horizon: object, sigma: object) -> tuple[int, int, float]:
    d = _check_int(d, "d", 1)
    # log T > 0 is needed for lambda = sigma·sqrt(2 log T) > 0 (eta divides by it).
    horizon = _check_int(horizon, "horizon", 2)
    sigma = _check_real(sigma, "sigma", "> 0", lambda v: v > 0.0)
    return d, horizon, sigma


def _exp3_log_epsilon(d: int, horizon: int, sigma: float) -> float:
    """``log ε`` with ``ε = (d σ log T / T)^(1/(d+2))``."""
    log_t = math.log(horizon)
    return (math.log(d) + math.log(sigma) + math.log(log_t) - log_t) / (d + 2)


def exp3_sae_parameters(
    d: int,
    horizon: int,
    *,
    sigma: float,
    bound: float = 1.0,
    epsilon: float | None = None,
    points_per_axis: int | None = None,
) -> Exp3SAEParameters:
    r"""Grid and learning parameters of EXP3-SAE (``alg:UPD-ONE``, ``thm:upd-one-app``).

    With ``T = horizon``, ``B = bound`` (DESIGN §3):

    * :math:`\varepsilon = (d\sigma\log T/T)^{1/(d+2)}` (``thm:upd-one-app``);
    * ``points_per_axis`` :math:`n = \lceil 2B/\varepsilon\rceil + 1`: the fewest
      evenly spaced points covering ``[-B, B]``, endpoints included, with spacing
      :math:`2B/(n-1) \le \varepsilon` (the ceiling forgives a relative ``1e-9`` so
      that exact divisors such as :math:`2B/\varepsilon = 3` are not bumped up by
      rounding error);
    * :math:`|E| = n^d`, an exact ``int``;
    * :math:`\lambda = \sigma\sqrt{2\log T}`,
      :math:`\eta = \sqrt{\log|E|/(T\lambda^2|E|)}` and
      :math:`\gamma = \min(1, 2\eta\lambda|E|) = \min(1, 2\sqrt{|E|\log|E|/T})`, all
      computed through logarithms so that e.g. :math:`|E| = 32^{20} \approx 10^{30}`
      neither overflows nor loses precision.

    Differences from the paper: ``alg:UPD-ONE`` writes :math:`|E| = (1/\varepsilon)^d`
    (a unit-length grid per axis, no rounding) where the grid here covers
    :math:`[-B, B]^d`, about :math:`(2B)^d` times more points; its proof bounds the
    distance to the nearest grid point by :math:`\varepsilon` in :math:`\ell_2`, while
    a per-axis spacing :math:`\varepsilon` only guarantees
    :math:`\varepsilon\sqrt d/2`; and it sets :math:`\gamma = 2\eta\lambda|E|` without
    the cap, which exceeds 1 unless :math:`T > 4|E|\log|E|`.

    ``epsilon`` and ``points_per_axis`` override the defaults for a user who fixes the
    grid: given only ``points_per_axis``, ``epsilon`` is its actual spacing
    :math:`2B/(n-1)`; given only ``epsilon``, ``points_per_axis`` follows the rule
    above; given both, both are used as given.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    horizon : int
        Horizon ``T >= 2`` (``log T > 0``).
    sigma : float
        Sub-Gaussian noise parameter, finite and ``> 0`` (:math:`\lambda` must be
        positive).
    bound : float, optional
        Half-width ``B > 0`` of the grid ``[-B, B]^d``.
    epsilon : float or None, optional
        Grid spacing override, finite and ``> 0``.
    points_per_axis : int or None, optional
        Points-per-axis override, an integer ``>= 2``.

    Returns
    -------
    Exp3SAEParameters

    Raises
    ------
    ValueError
        On invalid arguments, or if ``epsilon`` is so small that the grid size is
        not finite.

    Examples
    --------
    >>> p = exp3_sae_parameters(2, 1000, sigma=1.0)  # ε = (2 log(1000)/1000)^(1/4)
    >>> round(p.epsilon, 6), p.points_per_axis, p.grid_size
    (0.34284, 7, 49)
    >>> q = exp3_sae_parameters(20, 10**6, sigma=1.0, points_per_axis=32)
    >>> q.grid_size == 2**100, q.gamma
    (True, 1.0)
    """
    d, horizon, sigma = _check_exp3(d, horizon, sigma)
    bound = _check_real(bound, "bound", "> 0", lambda v: v > 0.0)
    if epsilon is not None:
        epsilon = _check_real(epsilon, "epsilon", "> 0 (or None)", lambda v: v > 0.0)
    if points_per_axis is not None:
        points_per_axis = _check_int(points_per_axis, "points_per_axis", 2)

    if points_per_axis is None:
        if epsilon is None:
            epsilon = math.exp(_exp3_log_epsilon(d, horizon, sigma))
        ratio = 2.0 * bound / epsilon
        if not math.isfinite(ratio):
            raise ValueError(
                f"epsilon must be a finite number > 0 with 2*bound/epsilon finite, "
                f"got {_show(epsilon)}"
            )
        points_per_axis = max(1, math.ceil(ratio * (1.0 - 1e-9))) + 1
    elif epsilon is None:
        epsilon = 2.0 * bound / (points_per_axis - 1)

    grid_size = points_per_axis**d
    log_e = d * math.log(points_per_axis)  # log|E| > 0 since points_per_axis >= 2
    log_t = math.log(horizon)
    lam = sigma * math.sqrt(2.0 * log_t)
    log_eta = 0.5 * (math.log(log_e) - log_t - 2.0 * math.log(lam) - log_e)
    log_gamma = math.log(2.0) + log_eta + math.log(lam) + log_e
    gamma = 1.0 if log_gamma >= 0.0 else math.exp(log_gamma)
    return Exp3SAEParameters(
        epsilon=float(epsilon),
        points_per_axis=points_per_axis,
        grid_size=grid_size,
        lam=lam,
        eta=math.exp(log_eta),
        gamma=gamma,
    )


def exp3_sae_regret_bound(d: int, horizon: int, *, sigma: float) -> float:
    r"""Expected-regret bound of EXP3-SAE as ``thm:upd-one-app`` states it.

    .. math::

        E[\mathrm{Reg}(T)] \le 6\, T^{(d+1)/(d+2)} (d\sigma\log T)^{1/(d+2)}
        = 6\,\varepsilon T, \qquad \varepsilon = (d\sigma\log T/T)^{1/(d+2)}.

    The stated constant does not follow from the proof.  Its penultimate line is
    :math:`3\sqrt{T|E|\sigma\log T\log|E|} + 4\varepsilon T` with
    :math:`|E| = \varepsilon^{-d}`, which at this :math:`\varepsilon` equals
    :math:`(3\sqrt{\log(1/\varepsilon)} + 4)\,\varepsilon T`: larger than the stated
    :math:`6\varepsilon T` as soon as :math:`\varepsilon < e^{-4/9} \approx 0.64`, and
    growing like :math:`\sqrt{\log T}`.  Further slips upstream: :math:`\lambda^2 =
    2\sigma^2\log T` is replaced by :math:`\sigma\log T` in ``eq:reg-eps``, the loss
    range :math:`[0, \lambda]` ignores the shift :math:`1 + \lambda`, and ``eq:grid-regr``
    claims :math:`O(T d \varepsilon^{-2d}\log(1/\varepsilon))` for the on-grid regret,
    which is not what the proof derives (:math:`3\sqrt{T|E|\lambda^2\log|E|}`).
    The bound also assumes the paper's grid (:math:`|E| = \varepsilon^{-d}`, spacing
    measured in :math:`\ell_2`), so it does not depend on the half-width ``B`` of
    :func:`exp3_sae_parameters` (no ``bound`` argument).  This function returns the
    statement as printed.

    Parameters
    ----------
    d : int
        Dimension, ``>= 1``.
    horizon : int
        Horizon ``T >= 2``.
    sigma : float
        Sub-Gaussian noise parameter, finite and ``> 0``.

    Returns
    -------
    float
        The bound (``math.inf`` if it exceeds the float range).

    Raises
    ------
    ValueError
        On invalid arguments.

    Examples
    --------
    >>> b = exp3_sae_regret_bound(2, 1000, sigma=1.0)
    >>> math.isclose(b, 6 * 1000 ** 0.75 * (2 * math.log(1000)) ** 0.25, rel_tol=1e-12)
    True
    """
    d, horizon, sigma = _check_exp3(d, horizon, sigma)
    return _exp_or_inf(math.log(6.0) + math.log(horizon) + _exp3_log_epsilon(d, horizon, sigma))


# --------------------------------------------------------------------------- beyond the paper


def band_regret(d: int, low: float, high: float) -> float:
    r"""Expected regret a round of wrongly rejecting the agents in a band of scores.

    For ``x`` uniform in the unit ball of :math:`\mathbb{R}^d` and a unit vector ``u``,

    .. math::

        E[\langle u, x\rangle\, 1\{l \le \langle u, x\rangle < h\}]
        = C_d\, \frac{(1 - l^2)^{(d+1)/2} - (1 - h^2)^{(d+1)/2}}{d + 1},
        \qquad C_d = \frac{\Gamma(d/2 + 1)}{\sqrt\pi\, \Gamma((d+1)/2)},

    for :math:`0 \le l \le h \le 1` (the marginal of :math:`x_1` is
    :math:`C_d (1 - s^2)^{(d-1)/2}`). With ``θ`` a unit vector and ``r0 = 0``:

    * ``band_regret(d, 0, 1)``, the regret a round of accepting (or rejecting) everyone;
    * ``band_regret(d, 0, Δ)``, what the shifted rule with the true θ loses a round when it
      shifts by δ + Δ against agents of budget δ (those with ⟨θ, x⟩ in [0, Δ) are rejected;
      a quadratic ``C_d Δ²/2`` for small Δ).

    Examples
    --------
    >>> round(band_regret(2, 0.0, 1.0), 6)  # 2/(3π)
    0.212207
    >>> round(band_regret(3, 0.0, 0.1) / band_regret(3, 0.0, 0.05), 2)  # about 4: Δ²
    3.98
    """
    d = _check_int(d, "d", 1)
    low = _check_real(low, "low", "in [0, 1]", lambda v: 0.0 <= v <= 1.0)
    high = _check_real(high, "high", f"in [low, 1] = [{low:g}, 1]", lambda v: low <= v <= 1.0)
    a = (d + 1) / 2.0
    log_c = special.gammaln(d / 2.0 + 1.0) - 0.5 * math.log(math.pi) - special.gammaln(a)
    return math.exp(log_c) * ((1.0 - low * low) ** a - (1.0 - high * high) ** a) / (d + 1)


def saols_no_clean_probability(
    d: int, delta: float, r0: float, *, sigma: float, horizon: int | None = None,
    samples: int = 200_000, seed: int = 0,
) -> tuple[float, float]:
    r"""Probability that SA-OLS learns from no point after its warm-up: (estimate, std. error).

    Setting: apple tasting, contexts uniform in the unit ball, lazy agents of budget ``delta``
    that SA-OLS knows, ``θ1`` a unit vector, reward noise N(0, σ²). The warm-up fits θ̂ by OLS
    on ``d`` points. Until its first clean point θ̂ does not change, and a round is clean with
    probability :math:`q(\hat\theta) = P(x_1 > \delta + r_0/\|\hat\theta\|)` (rotational
    invariance; movers land on the boundary and are never clean), so

    .. math:: P(\text{no clean point in rounds } d+1..T) = E\big[(1 - q(\hat\theta))^{T-d}\big],

    and for ever (``horizon=None``) :math:`P(q(\hat\theta) = 0) =
    P(\|\hat\theta\|(1 - \delta) \le r_0)`: no context in the ball can be clean, and the
    learner is locked. The expectation over the warm-up is taken by Monte Carlo (``samples``
    draws of the d warm-up contexts and noises, from ``seed``); the standard error is returned
    with it. c1, which the paper's analysis runs on, does not see this: it is 0 for ``r0 = 0``.

    Examples
    --------
    >>> p, se = saols_no_clean_probability(2, 0.3, 0.2, sigma=0.3)
    >>> 0.012 < p < 0.022 and se < 0.001
    True
    >>> saols_no_clean_probability(2, 0.3, 0.0, sigma=0.3)
    (0.0, 0.0)
    """
    d = _check_int(d, "d", 1)
    delta = _check_delta(delta)
    r0 = _check_real(r0, "r0")
    sigma = _check_sigma(sigma)
    if horizon is not None:
        horizon = _check_int(horizon, "horizon", 1)
    samples = _check_int(samples, "samples", 2)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((samples, d, d + 2))  # first d coordinates of the (d+2)-sphere:
    x = z[:, :, :d] / np.linalg.norm(z, axis=2, keepdims=True)  # uniform in the d-ball
    theta = np.zeros(d)
    theta[0] = 1.0
    y = x @ theta + sigma * rng.standard_normal((samples, d))
    size = np.linalg.norm(np.linalg.solve(x, y[..., None])[..., 0], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cut = delta + np.where(r0 == 0.0, 0.0, r0 / size)  # the clean threshold on x_1
    if horizon is None:
        p = (cut >= 1.0).astype(float)
    else:
        tail = 0.5 * special.betainc(_beta_a(d, False), 0.5,
                                     np.clip(1.0 - cut * cut, 0.0, 1.0))
        q = np.where(cut >= 1.0, 0.0, np.where(cut >= 0.0, tail, 1.0 - tail))
        p = (1.0 - q) ** max(horizon - d, 0)
    return float(p.mean()), float(p.std(ddof=1) / math.sqrt(samples))
