r"""Strategy-aware explore-then-commit (``thm:etc-reg``).

The exploration length ``T0``, the regret bound as the theorem states it, and the
commit-phase term of its proof.
"""

from __future__ import annotations

import math

from ._checks import _check_c0, _check_gamma, _check_int, _check_sigma, _exp_or_inf

__all__ = ["etc_commit_regret_bound", "etc_exploration_rounds", "etc_regret_bound"]


# 63^(1/3): the constant of thm:etc-reg (T0 = 4·63^(1/3)·..., bound = 8·63^(1/3)/c0·...).
_CBRT_63 = 63.0 ** (1.0 / 3.0)


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
