r"""Explicit high-probability regret bound of SA-OLS (``thm:stochastic-main-app``)."""

from __future__ import annotations

import math

from ._checks import _check_delta, _check_dim, _check_int, _check_real
from .clean_points import _gram_constant, c1

__all__ = ["saols_regret_bound"]


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
