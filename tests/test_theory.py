"""Tests for ``strategic_apple_tasting.theory`` (exact c1/c2, clean points, regret bounds)."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest
from scipy import integrate, special

from strategic_apple_tasting.theory import (
    Exp3SAEParameters,
    band_regret,
    c1,
    c2,
    etc_commit_regret_bound,
    etc_exploration_rounds,
    etc_regret_bound,
    exp3_sae_parameters,
    exp3_sae_regret_bound,
    expected_clean_points,
    saols_no_clean_probability,
    saols_regret_bound,
    switching_time,
    unknown_horizon_regret_bound,
)

# Monte Carlo tolerance.  Every Monte Carlo comparison below asserts
# |estimate - exact| <= Z_MARGIN * SE, where SE is the standard error *computed from the
# same sample* (binomial sqrt(p(1-p)/n) for probabilities, sample std / sqrt(n) for means).
# For a correct formula the estimate is ~ N(exact, SE^2), so a single check fails with
# probability 2 * Phi(-5) ~= 5.7e-7; by a union bound over the ~70 checks in this file a
# correct implementation fails for a random seed with probability < 1e-4, so the fixed
# seeds below are not cherry-picked (observed |z| <= 2.8).  Conversely the margins are
# tight: N_SAMPLES and MIN_CONDITIONAL keep 5 SE at a few percent of the value or less;
# swapping ball and surface formulas gives |z| >= 15 for every delta > 0.
Z_MARGIN = 5.0
N_SAMPLES = 400_000
MIN_CONDITIONAL = 1_000

DIMS_BALL = (1, 2, 3, 5, 10)
DIMS_SURFACE = (2, 3, 5, 10)
DELTAS = (0.0, 0.1, 0.3, 0.7)


@functools.cache
def _samples(d: int, surface: bool) -> np.ndarray:
    """N_SAMPLES points uniform in the unit ball (or on the unit sphere) of R^d, fixed seed."""
    rng = np.random.default_rng([20231, d, int(surface)])
    g = rng.standard_normal((N_SAMPLES, d))
    x = g / np.linalg.norm(g, axis=1, keepdims=True)
    if not surface:
        x *= rng.random(N_SAMPLES)[:, None] ** (1.0 / d)
    return x


def _ball_and_surface(dims_ball=DIMS_BALL, dims_surface=DIMS_SURFACE):
    return [(d, False) for d in dims_ball] + [(d, True) for d in dims_surface]


# --------------------------------------------------------------------------- c1


@pytest.mark.parametrize(("d", "surface"), _ball_and_surface())
def test_c1_matches_monte_carlo(d, surface):
    x1 = _samples(d, surface)[:, 0]
    for delta in DELTAS:
        exact = c1(d, delta, surface=surface)
        p_hat = float(np.mean(x1 >= delta))
        se = math.sqrt(p_hat * (1.0 - p_hat) / N_SAMPLES)
        assert se > 0.0
        assert abs(p_hat - exact) <= Z_MARGIN * se, (d, surface, delta, p_hat, exact, se)


@pytest.mark.parametrize(("d", "surface"), _ball_and_surface(range(1, 30), range(2, 30)))
def test_c1_at_zero_is_one_half_exactly(d, surface):
    assert c1(d, 0.0, surface=surface) == 0.5
    assert c1(d, 0, surface=surface) == 0.5


@pytest.mark.parametrize(("d", "surface"), _ball_and_surface((1, 2, 3, 10, 100, 1000)))
def test_c1_decreasing_in_delta(d, surface):
    deltas = np.linspace(0.0, 0.99, 100)
    values = np.array([c1(d, float(t), surface=surface) for t in deltas])
    steps = np.diff(values)
    assert np.all(steps <= 0.0)
    # Strictly decreasing until the value underflows (c1(1000, δ) < 1e-308 for δ >~ 0.7).
    assert np.all(steps[values[1:] > 0.0] < 0.0)
    if d <= 100:
        assert np.all(values > 0.0)


@pytest.mark.parametrize("surface", [False, True])
@pytest.mark.parametrize("delta", [1.0, 1.5, 1e6])
def test_c1_zero_beyond_one(delta, surface):
    assert c1(4, delta, surface=surface) == 0.0


@pytest.mark.parametrize("delta", [0.0, 1e-12, 1e-6, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999, 1 - 1e-9])
def test_c1_closed_forms(delta):
    # d = 1: the "ball" is [-1, 1]; d = 3: (1 - δ)^2 (2 + δ) / 4.
    assert c1(1, delta) == pytest.approx((1.0 - delta) / 2.0, rel=1e-13, abs=0.0)
    assert c1(3, delta) == pytest.approx((1.0 - delta) ** 2 * (2.0 + delta) / 4.0, rel=1e-12)
    # Surface: the circle gives the arcsine law, S^2 gives x_1 ~ U[-1, 1] (Archimedes).
    assert c1(2, delta, surface=True) == pytest.approx(math.acos(delta) / math.pi, rel=1e-12)
    assert c1(3, delta, surface=True) == pytest.approx((1.0 - delta) / 2.0, rel=1e-12)


@pytest.mark.parametrize("d", [3, 4, 7, 20])
@pytest.mark.parametrize("delta", [0.05, 0.4, 0.8])
def test_c1_surface_equals_ball_two_dimensions_lower(d, delta):
    # Projection of the uniform measure on S^{d-1} to two fewer coordinates is uniform
    # on the (d-2)-ball, so both marginals of x_1 agree.
    assert c1(d, delta, surface=True) == pytest.approx(c1(d - 2, delta), rel=1e-12)


def test_c1_satisfies_corrected_lem_lb_lower_bound():
    # lem:lb's argument with the correct normaliser vol(ball) = 2 vol(H):
    # c1 >= (1 - δ)^{(d+1)/2} Γ(d/2 + 1) / (2 sqrt(pi) (d + 1) Γ(d/2 + 1/2)).
    for d in range(1, 60):
        for delta in np.linspace(0.0, 0.99, 34):
            log_ratio = special.gammaln(d / 2 + 1) - special.gammaln(d / 2 + 0.5)
            bound = (1 - delta) ** ((d + 1) / 2) * math.exp(log_ratio)
            bound /= 2 * math.sqrt(math.pi) * (d + 1)
            assert c1(d, float(delta)) >= bound


def test_c1_large_dimension_is_finite_and_tiny():
    value = c1(10_000, 0.5)
    assert 0.0 <= value < 1e-300
    assert 0.0 < c1(10_000, 0.01) < 0.5


# --------------------------------------------------------------------------- c2


@pytest.mark.parametrize(("d", "surface"), _ball_and_surface((2, 3, 5, 10)))
def test_c2_matches_monte_carlo(d, surface):
    x = _samples(d, surface)
    # E[x_j^2 | x_1 >= δ] is the same for every j >= 2 (exchangeability), so average them
    # to reduce variance; SE is computed from the per-sample averages.
    rest = (np.einsum("ij,ij->i", x, x) - x[:, 0] ** 2) / (d - 1)
    for delta in DELTAS:
        y = rest[x[:, 0] >= delta]
        assert y.size >= MIN_CONDITIONAL
        se = float(np.std(y, ddof=1)) / math.sqrt(y.size)
        exact = c2(d, delta, surface=surface)
        assert abs(float(np.mean(y)) - exact) <= Z_MARGIN * se, (d, surface, delta, se)


@pytest.mark.parametrize("d", range(2, 40))
def test_c2_at_zero_is_unconditional_moment(d):
    # E[x_2^2] = 1/(d+2) in the ball and 1/d on the sphere; conditioning on x_1 >= 0 does
    # not change it (x_2^2 is even in x_1).
    assert c2(d, 0.0) == pytest.approx(1.0 / (d + 2), rel=1e-14)
    assert c2(d, 0.0, surface=True) == pytest.approx(1.0 / d, rel=1e-14)


@pytest.mark.parametrize("delta", [0.0, 1e-12, 1e-8, 1e-3, 0.3, 0.5, 0.9, 0.999, 1 - 1e-9])
def test_c2_closed_forms(delta):
    # d = 3 surface: x_1 ~ U[-1, 1], E[1 - x_1^2 | x_1 >= δ] = (1 - δ)(2 + δ)/3, / (d - 1).
    assert c2(3, delta, surface=True) == pytest.approx((1 - delta) * (2 + delta) / 6, rel=1e-12)
    # d = 3 ball: density ∝ 1 - u^2, so E[1 - x_1^2 | x_1 >= δ] = ∫(1-u^2)^2 / ∫(1-u^2),
    # both integrals written in powers of (1 - δ) to avoid cancellation near δ = 1.
    e = 1.0 - delta
    num = e**3 * (20 - 15 * e + 3 * e**2) / 15  # ∫_δ^1 (1 - u^2)^2 du
    den = e**2 * (3 - e) / 3  # ∫_δ^1 (1 - u^2) du
    assert c2(3, delta) == pytest.approx(num / den / 4, rel=1e-12)
    # d = 2 surface (circle): θ uniform on [-θ0, θ0], θ0 = arccos δ, E[sin^2 θ] =
    # 1/2 - sin(2θ0)/(4θ0); the reference cancels as θ0 -> 0, so only for δ <= 0.999.
    if delta <= 0.999:
        theta0 = math.acos(delta)
        circle = 0.5 - math.sin(2 * theta0) / (4 * theta0)
        assert c2(2, delta, surface=True) == pytest.approx(circle, rel=1e-10)


@pytest.mark.parametrize("d", [4, 5, 9, 30])
@pytest.mark.parametrize("delta", [0.0, 0.2, 0.6, 0.95])
def test_c2_surface_equals_ball_two_dimensions_lower(d, delta):
    assert c2(d, delta, surface=True) == pytest.approx(c2(d - 2, delta), rel=1e-12)


def _c2_by_quadrature(d: int, delta: float, surface: bool) -> float:
    """Independent reference: 1-D quadrature of the marginal density of x_1."""
    power = (d - 3) / 2 if surface else (d - 1) / 2
    scale = (1 - delta) * (1 + delta)

    def weight(u: float, p: float) -> float:  # ((1 - u^2) / (1 - δ^2))^p, overflow-safe
        return math.exp(p * math.log1p(-(u - delta) * (u + delta) / scale))

    kw = {"epsabs": 0.0, "epsrel": 1e-13, "limit": 200}
    num = integrate.quad(weight, delta, 1.0, args=(power + 1,), **kw)[0]
    den = integrate.quad(weight, delta, 1.0, args=(power,), **kw)[0]
    return scale * num / den / ((d - 1) if surface else (d + 1))


@pytest.mark.parametrize("surface", [False, True])
@pytest.mark.parametrize("d", [3, 4, 7, 50, 400, 3000])
def test_c2_matches_quadrature(d, surface):
    for delta in (0.01, 0.2, 0.5, 0.8, 0.95):
        ref = _c2_by_quadrature(d, delta, surface)
        assert c2(d, delta, surface=surface) == pytest.approx(ref, rel=1e-9)


def test_c2_huge_dimension_uses_stable_path():
    # I_{1-δ^2}((d+1)/2, 1/2) underflows here; c2 must stay finite and ≈ (1 - δ^2)/(d + 2)
    # (x_1 concentrates at δ as d grows).
    for d in (10_000, 10**6, 10**9):
        for delta in (0.1, 0.5, 0.9):
            value = c2(d, delta)
            assert math.isfinite(value)
            assert value == pytest.approx((1 - delta**2) / (d + 2), rel=20.0 / (d * delta**2))


@pytest.mark.parametrize(("d", "surface"), _ball_and_surface((2, 3, 10, 100), (2, 3, 10)))
def test_c2_strictly_decreasing_and_positive(d, surface):
    values = np.array([c2(d, float(t), surface=surface) for t in np.linspace(0, 0.999, 120)])
    assert np.all(np.diff(values) < 0.0)
    assert np.all(values > 0.0)


def test_c2_satisfies_appendix_lem_spheres_bound_but_not_informal_one():
    for d in range(2, 40):
        for delta in np.linspace(0.0, 0.99, 34):
            weak = (0.75 - delta / 2 - delta**2 / 4) ** 3
            assert c2(d, float(delta)) >= weak / (3 * d)  # appendix statement holds
    # The informal thm:stochastic-main drops the 1/(3d) factor: false, e.g. d = 10, δ = 0.
    assert c2(10, 0.0) < 0.75**3


# --------------------------------------------------------------------------- clean points


def test_expected_clean_points_values():
    assert expected_clean_points(2, 0.0, 102) == 52.0
    d, delta, horizon = 3, 0.3, 1000
    assert expected_clean_points(d, delta, horizon) == pytest.approx(
        d + (1 - delta) ** 2 * (2 + delta) / 4 * (horizon - d), rel=1e-12
    )
    assert expected_clean_points(5, 0.3, 1000) == pytest.approx(5 + c1(5, 0.3) * 995, rel=1e-14)
    assert expected_clean_points(5, 0.3, 1000, surface=True) == pytest.approx(
        5 + c1(5, 0.3, surface=True) * 995, rel=1e-14
    )


@pytest.mark.parametrize("horizon", [0, 1, 4, 5])
def test_expected_clean_points_short_horizon_all_warmup(horizon):
    assert expected_clean_points(5, 0.3, horizon) == float(horizon)


def test_expected_clean_points_radius_and_offset():
    d, horizon = 4, 2004
    assert expected_clean_points(d, 0.5, horizon, radius=2.0) == pytest.approx(
        d + c1(d, 0.25) * (horizon - d), rel=1e-14
    )
    # r0 > 0: threshold (δ + r0/||β||)/R.
    got = expected_clean_points(d, 0.2, horizon, r0=0.3, beta_norm=2.0, radius=1.5)
    assert got == pytest.approx(d + c1(d, (0.2 + 0.15) / 1.5) * (horizon - d), rel=1e-14)
    # r0 < 0 can make the threshold negative: P(x_1 > -t) = 1 - c1(d, t).
    got = expected_clean_points(d, 0.1, horizon, r0=-0.5, beta_norm=1.0)
    assert got == pytest.approx(d + (1 - c1(d, 0.4)) * (horizon - d), rel=1e-14)
    # Thresholds beyond the support: nothing / everything is clean after warm-up.
    assert expected_clean_points(d, 1.0, horizon) == d
    assert expected_clean_points(d, 3.0, horizon, radius=2.0) == d
    assert expected_clean_points(d, 0.0, horizon, r0=-5.0, beta_norm=1.0) == horizon
    # beta_norm is irrelevant when r0 = 0.
    assert expected_clean_points(d, 0.2, horizon, beta_norm=7.0) == expected_clean_points(
        d, 0.2, horizon
    )


@pytest.mark.parametrize(("r0", "beta_norm", "radius"), [(0.0, None, 1.0), (0.2, 0.8, 2.0)])
def test_clean_fraction_matches_simulation_with_arbitrary_policies(r0, beta_norm, radius):
    # cor:c1: any policy sequence {β_t} gives the same expected count (rotation invariance).
    d, delta, n = 5, 0.3, 200_000
    rng = np.random.default_rng(7)
    g = rng.standard_normal((n, d))
    x = radius * g / np.linalg.norm(g, axis=1, keepdims=True)
    x *= rng.random(n)[:, None] ** (1.0 / d)
    beta = rng.standard_normal((n, d)) * rng.exponential(size=(n, 1))  # arbitrary directions
    norm = float(beta_norm) if beta_norm is not None else np.linalg.norm(beta, axis=1)
    if beta_norm is not None:
        beta *= beta_norm / np.linalg.norm(beta, axis=1, keepdims=True)
    clean = np.einsum("ij,ij->i", beta, x) > delta * norm + r0
    p_hat = float(np.mean(clean))
    se = math.sqrt(p_hat * (1 - p_hat) / n)
    horizon = 10_000
    expected = expected_clean_points(d, delta, horizon, r0=r0, beta_norm=beta_norm, radius=radius)
    p_exact = (expected - d) / (horizon - d)
    assert abs(p_hat - p_exact) <= Z_MARGIN * se


# --------------------------------------------------------------------------- regret bound


def test_saols_bound_explicit_value():
    d, delta, horizon, sigma, gamma, c0 = 3, 0.2, 10_000, 0.5, 0.1, 0.8
    expected = 4 * d + 8 / (c0 * c1(d, delta) * c2(d, delta)) * math.sqrt(
        14 * d * sigma**2 * horizon * math.log(4 * d * horizon / gamma)
    )
    got = saols_regret_bound(d, delta, horizon, sigma=sigma, gamma=gamma, c0=c0)
    assert got == pytest.approx(expected, rel=1e-14)
    surface = saols_regret_bound(d, delta, horizon, sigma=sigma, gamma=gamma, c0=c0, surface=True)
    assert surface != got


def test_saols_bound_finite_positive_increasing_in_horizon():
    horizons = np.unique(np.logspace(0, 9, 60).astype(int))
    for d, delta in [(2, 0.0), (3, 0.3), (10, 0.7)]:
        values = np.array([saols_regret_bound(d, delta, int(t), sigma=1.0) for t in horizons])
        assert np.all(np.isfinite(values))
        assert np.all(values > 4 * d)
        assert np.all(np.diff(values) > 0.0)


def test_saols_bound_grows_like_sqrt_t_log_t():
    d, delta, gamma = 4, 0.3, 0.05

    def excess(t: int) -> float:
        return saols_regret_bound(d, delta, t, sigma=1.0, gamma=gamma) - 4 * d

    # Exactly proportional to sqrt(T log(4dT/γ)) ...
    ks = [excess(t) / math.sqrt(t * math.log(4 * d * t / gamma)) for t in (10, 10**4, 10**8)]
    assert ks == pytest.approx([ks[0]] * 3, rel=1e-12)
    # ... hence ~ sqrt(T log T): the ratio settles (log(4dT/γ)/log T -> 1) ...
    ratios = [excess(10**k) / math.sqrt(10**k * math.log(10**k)) for k in (6, 12, 24, 48)]
    assert np.all(np.diff(ratios) < 0.0)
    assert ratios[-1] / ratios[-2] > 0.97
    # ... and is faster than sqrt(T) but far slower than linear.
    assert 1000 < excess(10**12) / excess(10**6) < 2000


def test_saols_bound_parameter_dependence():
    base = saols_regret_bound(3, 0.3, 5000, sigma=1.0)
    assert saols_regret_bound(3, 0.3, 5000, sigma=2.0) - 12 == pytest.approx(2 * (base - 12))
    assert saols_regret_bound(3, 0.3, 5000, sigma=1.0, c0=0.5) - 12 == pytest.approx(
        2 * (base - 12)
    )
    assert saols_regret_bound(3, 0.5, 5000, sigma=1.0) > base
    assert saols_regret_bound(3, 0.3, 5000, sigma=1.0, gamma=0.01) > base
    assert saols_regret_bound(3, 0.3, 5000, sigma=0.0) == 12.0


@pytest.mark.parametrize("delta", [1.0, 2.5])
def test_saols_bound_vacuous_when_no_clean_points(delta):
    assert saols_regret_bound(3, delta, 100, sigma=1.0) == math.inf


# --------------------------------------------------------------------------- validation

NAN, INF = float("nan"), float("inf")

BAD_CALLS = [
    (c1, (0, 0.1), {}, "d must be an integer >= 1, got 0"),
    (c1, (2.5, 0.1), {}, "d must be an integer >= 1, got 2.5"),
    (c1, (3.0, 0.1), {}, "d must be an integer >= 1, got 3.0"),
    (c1, (True, 0.1), {}, "d must be an integer >= 1, got True"),
    (c1, ("3", 0.1), {}, "d must be an integer >= 1, got '3'"),
    (c1, (1, 0.1), {"surface": True}, "d must be an integer >= 2, got 1"),
    (c1, (3, -0.1), {}, "delta must be a finite number >= 0, got -0.1"),
    (c1, (3, NAN), {}, "delta must be a finite number >= 0, got nan"),
    (c1, (3, INF), {}, "delta must be a finite number >= 0, got inf"),
    (c1, (3, None), {}, "delta must be a finite number >= 0, got None"),
    (c2, (1, 0.1), {}, "d must be an integer >= 2, got 1"),
    (c2, (3, 1.0), {}, "delta must be a finite number in [0, 1) for c2"),
    (c2, (3, -1e-9), {}, "delta must be a finite number in [0, 1) for c2"),
    (c2, (3, NAN), {}, "got nan"),
    (expected_clean_points, (3, 0.1, -1), {}, "horizon must be an integer >= 0, got -1"),
    (expected_clean_points, (3, 0.1, 10.5), {}, "horizon must be an integer >= 0, got 10.5"),
    (expected_clean_points, (0, 0.1, 10), {}, "d must be an integer >= 1, got 0"),
    (expected_clean_points, (3, -1.0, 10), {}, "delta must be a finite number >= 0, got -1.0"),
    (expected_clean_points, (3, 0.1, 10), {"radius": 0.0}, "radius must be a finite number > 0"),
    (expected_clean_points, (3, 0.1, 10), {"radius": -2.0}, "got -2.0"),
    (expected_clean_points, (3, 0.1, 10), {"r0": NAN}, "r0 must be a finite number, got nan"),
    (expected_clean_points, (3, 0.1, 10), {"r0": 0.5}, "beta_norm must be a finite number > 0"),
    (
        expected_clean_points,
        (3, 0.1, 10),
        {"r0": 0.5, "beta_norm": 0.0},
        "beta_norm must be a finite number > 0 (or None), got 0.0",
    ),
    (saols_regret_bound, (0, 0.1, 10), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (saols_regret_bound, (1, 0.1, 10), {"sigma": 1.0, "surface": True},
     "d must be an integer >= 2, got 1"),
    (saols_regret_bound, (3, 0.1, 0), {"sigma": 1.0}, "horizon must be an integer >= 1, got 0"),
    (saols_regret_bound, (3, NAN, 10), {"sigma": 1.0}, "delta must be a finite number >= 0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": -1.0}, "sigma must be a finite number >= 0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": INF}, "sigma must be a finite number >= 0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "gamma": 0.0}, "gamma must be a finite"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "gamma": 1.0}, "in (0, 1), got 1.0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "c0": 0.0}, "c0 must be a finite number"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "c0": 1.5}, "in (0, 1], got 1.5"),
    (etc_exploration_rounds, (0, 10), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (etc_exploration_rounds, (2, 0), {"sigma": 1.0}, "horizon must be an integer >= 1, got 0"),
    (etc_exploration_rounds, (2, 1e6), {"sigma": 1.0}, "horizon must be an integer >= 1"),
    (etc_exploration_rounds, (2, 10), {"sigma": -1.0}, "sigma must be a finite number >= 0"),
    (etc_exploration_rounds, (2, 10), {"sigma": 1.0, "gamma": 1.0}, "gamma must be a finite"),
    (etc_regret_bound, (2, 10), {"sigma": NAN}, "sigma must be a finite number >= 0, got nan"),
    (etc_regret_bound, (2, 10), {"sigma": 1.0, "gamma": -0.1}, "in (0, 1), got -0.1"),
    (etc_regret_bound, (2, 10), {"sigma": 1.0, "c0": 0.0}, "c0 must be a finite number in (0, 1]"),
    (switching_time, (0, 0.1), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (switching_time, (3, -0.1), {"sigma": 1.0}, "delta must be a finite number >= 0"),
    (switching_time, (3, 0.1), {"sigma": INF}, "sigma must be a finite number >= 0, got inf"),
    (switching_time, (3, 0.1), {"sigma": 1.0, "gamma": 0.0}, "(or None for 1/T^2), got 0.0"),
    (switching_time, (3, 0.1), {"sigma": 1.0, "c0": 2.0}, "c0 must be a finite number in (0, 1]"),
    (unknown_horizon_regret_bound, (3, 0.1, 0), {"sigma": 1.0}, "horizon must be an integer >= 1"),
    (unknown_horizon_regret_bound, (3, 0.1, 9), {"sigma": 1.0, "gamma": 1.5}, "gamma must be"),
    (exp3_sae_parameters, (0, 100), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (exp3_sae_parameters, (2, 1), {"sigma": 1.0}, "horizon must be an integer >= 2, got 1"),
    (exp3_sae_parameters, (2, 100), {"sigma": 0.0}, "sigma must be a finite number > 0, got 0.0"),
    (exp3_sae_parameters, (2, 100), {"sigma": 1.0, "bound": 0.0}, "bound must be a finite number"),
    (exp3_sae_parameters, (2, 100), {"sigma": 1.0, "epsilon": -1.0}, "epsilon must be a finite"),
    (exp3_sae_parameters, (2, 100), {"sigma": 1.0, "epsilon": 1e-320}, "got 1e-320"),
    (
        exp3_sae_parameters,
        (2, 100),
        {"sigma": 1.0, "points_per_axis": 1},
        "points_per_axis must be an integer >= 2, got 1",
    ),
    (exp3_sae_regret_bound, (2, 1), {"sigma": 1.0}, "horizon must be an integer >= 2, got 1"),
    (exp3_sae_regret_bound, (2, 10), {"sigma": -2.0}, "sigma must be a finite number > 0"),
]


@pytest.mark.parametrize(("func", "args", "kwargs", "message"), BAD_CALLS)
def test_bad_inputs_raise_value_error_naming_argument(func, args, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        func(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_numpy_scalars_accepted():
    assert c1(np.int64(3), np.float64(0.5)) == c1(3, 0.5)
    assert c2(np.int32(3), np.float32(0.5)) == c2(3, float(np.float32(0.5)))
    assert expected_clean_points(np.int64(2), 0.0, np.int64(102)) == 52.0
    assert etc_exploration_rounds(np.int64(2), np.int64(10**9), sigma=np.float64(1.0)) == (
        etc_exploration_rounds(2, 10**9, sigma=1.0)
    )
    assert exp3_sae_parameters(np.int32(2), np.int64(1000), sigma=np.float32(1.0)).grid_size == 49


# --------------------------------------------------------------------------- explore-then-commit

# T0 = K_ETC · σ^(2/3) d T^(2/3) log^(1/3)(4d/γ); the ETC bound is 2·K_ETC/c0 · (the same).
K_ETC = 4 * 63 ** (1 / 3)


def _t0_raw(d, horizon, sigma, gamma=0.05):
    return K_ETC * sigma ** (2 / 3) * d * horizon ** (2 / 3) * math.log(4 * d / gamma) ** (1 / 3)


def test_etc_exploration_rounds_values():
    # Hand check: 4·63^(1/3) = 15.9165..., log(4·2/0.05) = log 160, so
    # T0 = 15.9165 · 2 · 10^6 · 1.7185 = 54 704 175.x -> rounded up.
    assert 54_704_175 < _t0_raw(2, 10**9, 1.0) < 54_704_176
    assert etc_exploration_rounds(2, 10**9, sigma=1.0) == 54_704_176
    assert etc_exploration_rounds(3, 10**8, sigma=0.5, gamma=0.01) == math.ceil(
        _t0_raw(3, 10**8, 0.5, 0.01)
    )
    # The formula exceeds T for short horizons: capped.
    assert _t0_raw(2, 10**5, 1.0) > 10**5
    assert etc_exploration_rounds(2, 10**5, sigma=1.0) == 10**5
    # At least d rounds (the OLS fit), unless the horizon is shorter.
    assert etc_exploration_rounds(4, 10**6, sigma=0.0) == 4
    assert etc_exploration_rounds(4, 10**6, sigma=1e-12) == 4
    assert etc_exploration_rounds(5, 3, sigma=0.0) == 3
    assert etc_exploration_rounds(5, 3, sigma=1.0) == 3


def test_etc_exploration_rounds_scaling():
    # T^(2/3): with a fixed γ the log factor does not depend on T, so the ratio is 4 up to
    # the rounding up; likewise σ^(2/3) (σ × 8 -> × 4) and linear in d.
    for horizon in (10**9, 10**11, 10**13):
        ratio = etc_exploration_rounds(3, 8 * horizon, sigma=1.0) / etc_exploration_rounds(
            3, horizon, sigma=1.0
        )
        assert ratio == pytest.approx(4.0, rel=1e-6)
    t0 = etc_exploration_rounds(3, 10**12, sigma=1.0)
    assert etc_exploration_rounds(3, 10**12, sigma=8.0) / t0 == pytest.approx(4.0, rel=1e-6)
    assert etc_exploration_rounds(3, 10**12, sigma=1.0, gamma=1e-4) > t0
    # Non-decreasing in T, always within [min(d, T), T].
    horizons = np.unique(np.logspace(0, 15, 200).astype(np.int64))
    values = [etc_exploration_rounds(3, int(t), sigma=1.0) for t in horizons]
    assert np.all(np.diff(values) >= 0)
    assert all(min(3, t) <= v <= t for v, t in zip(values, horizons, strict=True))


def test_etc_regret_bound_matches_statement_and_proof():
    d, horizon, sigma, gamma, c0 = 3, 10**7, 0.7, 0.1, 0.6
    log_term = math.log(4 * d / gamma)
    stated = 8 * 63 ** (1 / 3) / c0 * d * (sigma * horizon) ** (2 / 3) * log_term ** (1 / 3)
    got = etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma, c0=c0)
    assert got == pytest.approx(stated, rel=1e-13)
    # = 2 T0 / c0 with the unrounded, uncapped T0 ...
    assert got == pytest.approx(2 * _t0_raw(d, horizon, sigma, gamma) / c0, rel=1e-13)
    # ... and bounds the proof's T0 + T·(24d/c0)·sqrt(7dσ² log(4d/γ)/T0), with equality at c0 = 1.
    t0 = _t0_raw(d, horizon, sigma, gamma)
    for c in (1.0, c0):
        proof = t0 + horizon * 24 * d / c * math.sqrt(7 * d * sigma**2 * log_term / t0)
        bound = etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma, c0=c)
        assert proof <= bound * (1 + 1e-13)
    assert proof < etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma, c0=c0)
    assert t0 + horizon * 24 * d * math.sqrt(7 * d * sigma**2 * log_term / t0) == pytest.approx(
        etc_regret_bound(d, horizon, sigma=sigma, gamma=gamma), rel=1e-12
    )


def test_etc_regret_bound_monotone_and_edge_cases():
    horizons = np.unique(np.logspace(0, 12, 80).astype(np.int64))
    values = np.array([etc_regret_bound(4, int(t), sigma=1.0) for t in horizons])
    assert np.all(np.diff(values) > 0.0)
    assert etc_regret_bound(4, 10**6, sigma=0.0) == 0.0
    assert etc_regret_bound(4, 10**6, sigma=1.0, c0=0.5) == pytest.approx(
        2 * etc_regret_bound(4, 10**6, sigma=1.0), rel=1e-14
    )
    assert etc_regret_bound(4, 10**600, sigma=1.0) == math.inf  # beyond the float range


# --------------------------------------------------------------------------- switching time


def _bounds(d, delta, horizon, sigma, gamma=None, c0=1.0):
    """(SA-OLS bound, ETC bound) through the public functions; gamma=None means 1/T^2."""
    g = horizon**-2.0 if gamma is None else gamma
    ols = saols_regret_bound(d, delta, horizon, sigma=sigma, gamma=g, c0=c0)
    return ols, etc_regret_bound(d, horizon, sigma=sigma, gamma=g, c0=c0)


@pytest.mark.parametrize(
    ("d", "delta", "sigma", "gamma"),
    [(2, 0.0, 1.0, None), (3, 0.3, 1.0, None), (5, 0.5, 0.2, None), (3, 0.3, 2.0, 0.05)],
)
def test_switching_time_is_the_crossing(d, delta, sigma, gamma):
    tau = switching_time(d, delta, sigma=sigma, gamma=gamma)
    assert 10 < tau < 1e15
    ols, etc = _bounds(d, delta, math.ceil(tau * (1 + 1e-6)), sigma, gamma)
    assert ols < etc
    ols, etc = _bounds(d, delta, math.floor(tau * (1 - 1e-6)), sigma, gamma)
    assert ols > etc
    # Single crossing here: ETC's bound is the smaller one everywhere below τ*, SA-OLS's above.
    for factor in (1e-6, 1e-3, 0.1, 0.5):
        ols, etc = _bounds(d, delta, max(2, int(tau * factor)), sigma, gamma)
        assert ols > etc
    for factor in (2.0, 10.0, 1e3):
        ols, etc = _bounds(d, delta, int(tau * factor), sigma, gamma)
        assert ols < etc


def test_switching_time_c0_nearly_cancels():
    # c0 survives only in SA-OLS's 4d·c0 warm-up term: negligible for moderate σ ...
    tau = switching_time(3, 0.3, sigma=1.0)
    tau_half = switching_time(3, 0.3, sigma=1.0, c0=0.5)
    assert tau_half != tau
    assert tau_half == pytest.approx(tau, rel=1e-5)
    # ... but not when σ is tiny (the warm-up term then dominates SA-OLS's bound).
    assert switching_time(3, 0.3, sigma=1e-6) > 2 * switching_time(3, 0.3, sigma=1e-6, c0=0.5)


def test_switching_time_monotone_and_infinite_cases():
    taus = [switching_time(3, delta, sigma=1.0) for delta in (0.0, 0.2, 0.4, 0.6, 0.8)]
    assert np.all(np.diff(taus) > 0.0)
    assert switching_time(3, 0.3, sigma=1.0, gamma=0.05) > switching_time(3, 0.3, sigma=1.0)
    assert switching_time(2, 1.0, sigma=1.0) == math.inf  # no clean points
    assert switching_time(2, 0.3, sigma=0.0) == math.inf  # ETC's bound is 0
    assert switching_time(200, 0.9, sigma=1.0) == math.inf  # crossing beyond ~1e304
    assert math.isfinite(switching_time(3, 0.999, sigma=1.0))  # huge but representable
    # SA-OLS's bound can be the smaller one from the start (tiny σ and c0): τ* = 1.
    assert switching_time(2, 0.0, sigma=1e-9, c0=1e-6) == 1.0


# --------------------------------------------------------------------------- unknown horizon


@pytest.mark.parametrize(("d", "delta", "sigma"), [(2, 0.0, 1.0), (3, 0.3, 0.5)])
def test_unknown_horizon_bound_is_four_times_the_smaller_expected_bound(d, delta, sigma):
    tau = switching_time(d, delta, sigma=sigma)
    for t in (2, 100, int(tau / 3), int(tau * 3), int(tau * 1e4)):
        ols, etc = _bounds(d, delta, t, sigma)
        got = unknown_horizon_regret_bound(d, delta, t, sigma=sigma)
        assert got == pytest.approx(4 * (min(ols, etc) + 2 / t), rel=1e-12)
        assert (ols < etc) == (t > tau)
    # A fixed γ: expected bound B(γ) + 2γT for both.
    t, g = 10**5, 0.01
    ols, etc = _bounds(d, delta, t, sigma, gamma=g, c0=0.5)
    got = unknown_horizon_regret_bound(d, delta, t, sigma=sigma, gamma=g, c0=0.5)
    assert got == pytest.approx(4 * (min(ols, etc) + 2 * g * t), rel=1e-12)


def test_unknown_horizon_bound_edge_cases_and_monotone():
    horizons = np.unique(np.logspace(0, 14, 60).astype(np.int64))
    values = [unknown_horizon_regret_bound(3, 0.3, int(t), sigma=1.0) for t in horizons]
    assert np.all(np.diff(values[3:]) > 0.0)  # the 8/T term only matters for T ~ 1
    assert unknown_horizon_regret_bound(2, 0.3, 1, sigma=1.0) > 0.0  # γ = 1 at T = 1
    assert unknown_horizon_regret_bound(2, 0.3, 10, sigma=0.0) == pytest.approx(0.8)
    # δ >= 1: SA-OLS's bound is infinite, ETC's is used.
    t = 10**6
    etc = etc_regret_bound(2, t, sigma=1.0, gamma=t**-2.0)
    assert unknown_horizon_regret_bound(2, 1.0, t, sigma=1.0) == pytest.approx(4 * (etc + 2 / t))


# --------------------------------------------------------------------------- EXP3-SAE


def test_exp3_sae_parameters_small_grid_exact():
    d, t, sigma = 2, 1000, 1.0
    p = exp3_sae_parameters(d, t, sigma=sigma)
    assert isinstance(p, Exp3SAEParameters)
    # ε = (2 log 1000 / 1000)^(1/4) = 0.3428..., 2/ε = 5.83 -> ceil 6 -> 7 points per axis.
    eps = (d * sigma * math.log(t) / t) ** (1 / (d + 2))
    assert p.epsilon == pytest.approx(eps, rel=1e-14)
    assert 0.3428 < p.epsilon < 0.3429
    assert p.points_per_axis == 7
    assert p.grid_size == 49
    lam = math.sqrt(2 * math.log(1000))
    assert p.lam == pytest.approx(lam, rel=1e-14)
    eta = math.sqrt(math.log(49) / (1000 * lam**2 * 49))
    assert p.eta == pytest.approx(eta, rel=1e-13)
    assert p.gamma == pytest.approx(2 * eta * lam * 49, rel=1e-12)
    assert 0.8733 < p.gamma < 0.8734  # 2 sqrt(49 log 49 / 1000), below the cap
    with pytest.raises(AttributeError):
        p.eta = 0.0  # type: ignore[misc]


def test_exp3_sae_gamma_cap_and_formula():
    # γ = min(1, 2ηλ|E|) = min(1, 2 sqrt(|E| log|E| / T)).
    p = exp3_sae_parameters(1, 10**8, sigma=1.0)
    n = p.grid_size
    assert n == p.points_per_axis == math.ceil(2 / p.epsilon) + 1
    assert p.gamma == pytest.approx(2 * math.sqrt(n * math.log(n) / 10**8), rel=1e-12)
    assert p.gamma == pytest.approx(2 * p.eta * p.lam * n, rel=1e-12)
    assert p.gamma < 1.0
    q = exp3_sae_parameters(3, 1000, sigma=1.0)
    assert 2 * q.eta * q.lam * q.grid_size > 1.0  # capped
    assert q.gamma == 1.0


def test_exp3_sae_parameters_huge_grid_no_overflow():
    p = exp3_sae_parameters(20, 10**6, sigma=1.0, points_per_axis=32)
    assert p.grid_size == 32**20 == 2**100
    assert type(p.grid_size) is int
    assert p.epsilon == pytest.approx(2 / 31)
    log_e = 100 * math.log(2)
    assert p.eta == pytest.approx(
        math.sqrt(log_e / (10**6 * p.lam**2 * float(p.grid_size))), rel=1e-12
    )
    assert p.gamma == 1.0
    # |E| = 32^300 ≈ 1e451 is far beyond the float range: still exact and finite parameters.
    q = exp3_sae_parameters(300, 10**6, sigma=1.0, points_per_axis=32)
    assert q.grid_size == 2**1500
    assert 0.0 < q.eta < 1e-200
    assert q.gamma == 1.0


@pytest.mark.parametrize(
    ("epsilon", "expected"),
    [(2 / 3, 4), (0.5, 5), (0.7, 4), (0.1, 21), (2.0, 2), (5.0, 2), (2 / 7, 8), (1e-3, 2001)],
)
def test_exp3_sae_points_per_axis_rounding(epsilon, expected):
    p = exp3_sae_parameters(2, 1000, sigma=1.0, epsilon=epsilon)
    assert p.points_per_axis == expected
    assert p.epsilon == epsilon
    assert 2 / (p.points_per_axis - 1) <= epsilon * (1 + 1e-9)  # actual spacing <= ε
    assert p.grid_size == expected**2


def test_exp3_sae_parameter_overrides_and_bound():
    p = exp3_sae_parameters(3, 10**4, sigma=0.5, points_per_axis=11)
    assert p.epsilon == pytest.approx(0.2)  # spacing of the given grid
    assert p.grid_size == 11**3
    q = exp3_sae_parameters(3, 10**4, sigma=0.5, points_per_axis=11, epsilon=0.3)
    assert (q.epsilon, q.points_per_axis) == (0.3, 11)
    # A wider box needs more points per axis at the same ε.
    base = exp3_sae_parameters(3, 10**4, sigma=0.5)
    wide = exp3_sae_parameters(3, 10**4, sigma=0.5, bound=2.0)
    assert wide.epsilon == base.epsilon
    assert wide.points_per_axis == math.ceil(4 / base.epsilon) + 1 > base.points_per_axis


def test_exp3_sae_epsilon_shrinks_with_horizon():
    eps = [exp3_sae_parameters(3, t, sigma=1.0).epsilon for t in (10, 10**3, 10**6, 10**9)]
    sizes = [exp3_sae_parameters(3, t, sigma=1.0).grid_size for t in (10, 10**3, 10**6, 10**9)]
    assert np.all(np.diff(eps) < 0.0)
    assert np.all(np.diff(sizes) >= 0)


def test_exp3_sae_regret_bound_as_stated():
    d, t, sigma = 3, 10**6, 0.5
    stated = 6 * t ** ((d + 1) / (d + 2)) * (d * sigma * math.log(t)) ** (1 / (d + 2))
    got = exp3_sae_regret_bound(d, t, sigma=sigma)
    assert got == pytest.approx(stated, rel=1e-12)
    assert got == pytest.approx(6 * exp3_sae_parameters(d, t, sigma=sigma).epsilon * t, rel=1e-12)
    values = [exp3_sae_regret_bound(d, 10**k, sigma=sigma) for k in range(1, 16)]
    assert np.all(np.diff(values) > 0.0)
    # Sublinear: T^((d+1)/(d+2)) up to logs.
    assert values[-1] / 10**15 < values[5] / 10**6
    # The proof's penultimate line, (3 sqrt(log 1/ε) + 4) ε T, exceeds the stated 6 ε T here.
    eps = exp3_sae_parameters(d, t, sigma=sigma).epsilon
    assert eps < math.exp(-4 / 9)
    assert (3 * math.sqrt(math.log(1 / eps)) + 4) * eps * t > got


def test_bounds_at_dimension_one_use_the_second_moment_of_x1():
    """At d = 1 there is no x₂: the proof's smallest eigenvalue (eq:almost) is
    E[x₁² | x₁ ≥ δ] = (1 + δ + δ²)/3 for x uniform on [−1, 1], and c1 = (1 − δ)/2."""
    d, delta, t, sigma = 1, 0.2, 1000, 0.5
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 400_000)
    tail = x[x >= delta]
    assert abs((tail ** 2).mean() - (1 + delta + delta**2) / 3) < 4 * (tail ** 2).std() / np.sqrt(
        tail.size)
    c = (1 - delta) / 2 * (1 + delta + delta**2) / 3
    want = 4 + 8 / c * math.sqrt(14 * sigma**2 * t * math.log(4 * t / 0.05))
    assert math.isclose(saols_regret_bound(d, delta, t, sigma=sigma), want, rel_tol=1e-12)
    assert 1 < switching_time(d, delta, sigma=sigma) < math.inf
    assert unknown_horizon_regret_bound(d, delta, t, sigma=sigma) > 0


@pytest.mark.parametrize("d", [1, 2, 3, 7])
def test_band_regret_matches_monte_carlo(d):
    """E[⟨u, x⟩·1{l ≤ ⟨u, x⟩ < h}] for x uniform in the ball: within 4 standard errors of a
    Monte Carlo mean (a false alarm has probability 6e-5)."""
    rng = np.random.default_rng(d)
    z = rng.standard_normal((400_000, d + 2))
    x1 = z[:, 0] / np.linalg.norm(z, axis=1)  # first coordinate of a uniform point in the ball
    for low, high in ((0.0, 1.0), (0.0, 0.1), (0.2, 0.5)):
        v = x1 * ((x1 >= low) & (x1 < high))
        assert abs(v.mean() - band_regret(d, low, high)) < 4 * v.std() / np.sqrt(v.size), (low,
                                                                                         high)
    assert band_regret(2, 0.0, 1.0) == pytest.approx(2 / (3 * math.pi), rel=1e-12)
    with pytest.raises(ValueError, match="high must be a finite number in"):
        band_regret(2, 0.5, 0.2)


def test_no_clean_probability_is_the_lock_in_and_grows_with_r0():
    locked, se = saols_no_clean_probability(2, 0.3, 0.2, sigma=0.3, samples=50_000)
    assert 0.01 < locked < 0.025 and 0 < se < 0.002
    later, _ = saols_no_clean_probability(2, 0.3, 0.2, sigma=0.3, horizon=100, samples=50_000)
    assert later >= locked  # no clean point by T includes no clean point ever
    more, _ = saols_no_clean_probability(2, 0.3, 0.4, sigma=0.3, samples=50_000)
    assert more > locked
    assert saols_no_clean_probability(2, 0.3, 0.0, sigma=0.3) == (0.0, 0.0)


def test_etc_commit_term_is_t0_at_the_theorems_t0():
    """The proof's commit term T·24d·sqrt(7dσ² log(4d/γ)/T0) equals T0 when T0 is the theorem's
    (that is how T0 is chosen), up to T0's rounding."""
    for d, t, sigma in ((2, 10**6, 0.1), (5, 10**7, 0.01)):
        t0 = etc_exploration_rounds(d, t, sigma=sigma)
        assert etc_commit_regret_bound(d, t, sigma=sigma) == pytest.approx(t0, rel=1e-4)
