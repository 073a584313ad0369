r"""EXP3-SAE (``alg:UPD-ONE``, ``thm:upd-one-app``).

Its grid and learning parameters, and the expected-regret bound as the theorem states it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._checks import _check_int, _check_real, _exp_or_inf, _show

__all__ = ["Exp3SAEParameters", "exp3_sae_parameters", "exp3_sae_regret_bound"]


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
