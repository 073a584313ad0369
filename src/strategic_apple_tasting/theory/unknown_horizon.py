r"""The unknown-horizon algorithm (``alg:unknown_T``, ``thm:best-both``).

Its switching time :math:`\tau^*` (which the paper leaves undefined: here the crossing
of the SA-OLS and explore-then-commit bounds) and its expected-regret bound.
"""

from __future__ import annotations

import math

from ._checks import (
    _check_c0,
    _check_delta,
    _check_dim,
    _check_gamma_or_schedule,
    _check_int,
    _check_sigma,
    _exp_or_inf,
)
from .clean_points import _gram_constant, c1
from .etc import (
    _CBRT_63,
    _log_etc_core,
    etc_regret_bound,  # noqa: F401  (used by the doctests)
)
from .saols import saols_regret_bound  # noqa: F401  (used by the doctests)

__all__ = ["switching_time", "unknown_horizon_regret_bound"]


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
    from scipy import optimize  # here: importing scipy.optimize is a tenth of the start-up

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
