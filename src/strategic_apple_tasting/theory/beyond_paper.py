r"""Predictions beyond the paper that the claims table needs (no theorem of the paper).

``band_regret``: the exact regret of wrongly rejecting a band of agents (e.g. for an
over-estimated ``delta``).  ``saols_no_clean_probability``: the probability that SA-OLS
with ``r0 > 0`` learns from no point after its warm-up (its lock-in), which the analysis
through ``c1`` (``cor:c1``) does not see.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import _check_delta, _check_int, _check_real, _check_sigma
from .clean_points import _beta_a

__all__ = ["band_regret", "saols_no_clean_probability"]


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
    from scipy import special  # here: importing scipy.special is a tenth of the service's start-up

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
    from scipy import special

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
