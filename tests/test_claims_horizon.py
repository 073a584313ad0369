"""Claims about learners tuned to the horizon: growth exponents fitted across runs at several
horizons (each run its own T), never along one run."""

import numpy as np
import pyarrow.compute as pc
from scipy import stats

from strategic_apple_tasting import Game, simulate, theory


def _final_mean(table, horizon):
    last = table.filter(pc.equal(table.column("t"), horizon))
    return float(np.mean(last.column("regret").to_numpy()))


def test_etc_regret_grows_like_t_to_the_two_thirds():
    """`thm:etc-reg`: T0 ∝ T^{2/3} exploration rounds, each costing a constant, then a commit
    whose error shrinks like T0^{-1/2}, so regret ∝ T^{2/3}. σ = 0.01 keeps T0 < T from
    T = 10⁴ (at σ = 0.1 and d = 5 the theorem's constant makes T0 = T up to T ≈ 10⁶).
    Fitted over T ∈ {10⁴, 3·10⁴, 10⁵, 3·10⁵} with 8 seeds: measured 0.670 ± 0.002 (standard
    error of the fit); we ask for ⅔ within 0.03, ten standard errors, which leaves room for
    the log factor in T0 (log^{1/3}(4d/γ) is constant, the commit term is not exactly a power)."""
    game = Game(dimension=2, delta=0.1, sigma=0.01)
    horizons = [10_000, 30_000, 100_000, 300_000]
    means = [_final_mean(simulate(game, ["etc"], T, seeds=8), T) for T in horizons]
    fit = stats.linregress(np.log(horizons), np.log(means))
    assert abs(fit.slope - 2 / 3) < 0.03, (fit.slope, means)
    for horizon, mean in zip(horizons, means, strict=True):
        assert mean < theory.etc_regret_bound(2, horizon, sigma=0.01)


def _final_means(game, learners, horizon, seeds):
    table = simulate(game, learners, horizon, seeds=seeds)
    last = table.filter(pc.equal(table.column("t"), horizon)).to_pydict()
    regret, names = np.array(last["regret"]), np.array(last["learner"])
    return {name: float(regret[names == name].mean()) for name in learners}


def test_unknown_horizon_against_saols_and_etc():
    """`thm:best-both`: E[Reg] ≤ 4·min(E[Reg_OLS], E[Reg_ETC]), which its proof (and our τ*)
    reads with the explicit bounds in place of the expectations. At d = 2, σ = 0.1, τ* ≈ 5·10⁴:
    the horizons 10⁴ and 10⁵, 3·10⁵ fall on either side of the switch.

    Measured (4 seeds): unknown-horizon 2145, 5988, 5988 against ETC 1174, 5423, 11242 and
    SA-OLS 0.77, 0.80, 0.81. So it is within 4× of ETC (at most 1.83× at these T; 2.46× at
    3·10⁴), under the theorem's bound, and after the switch its regret grows like SA-OLS's
    (by 0.008 from 10⁵ to 3·10⁵, SA-OLS by 0.013), a constant above it. But the constant is
    ~7,500× SA-OLS's regret, not 4×: τ* comes from the bounds, and SA-OLS's regret is far below
    its bound, so the ETC epochs run long after SA-OLS would have been the better choice."""
    game = Game(dimension=2, delta=0.1, sigma=0.1)
    means = {T: _final_means(game, ["unknown-horizon", "etc", "sa-ols"], T, 4)
             for T in (10_000, 100_000, 300_000)}
    for horizon, m in means.items():
        assert m["unknown-horizon"] < theory.unknown_horizon_regret_bound(2, 0.1, horizon,
                                                                          sigma=0.1)
        assert m["unknown-horizon"] <= 4 * m["etc"], (horizon, m)
    # After τ* the increment is SA-OLS-like: 1.0 is ~75× SA-OLS's own increment over the same
    # rounds, and ~5,800× below what ETC adds.
    assert means[300_000]["unknown-horizon"] - means[100_000]["unknown-horizon"] < 1.0
    assert means[300_000]["unknown-horizon"] > 100 * means[300_000]["sa-ols"]  # the finding


def test_exp3_sae_regret_grows_like_t_to_the_d_plus_1_over_d_plus_2():
    """`thm:upd-one-app` on an oblivious sequence where SA-OLS's regret is linear.

    d = 1, θ1 = 1, r0 = 0.1, δ = 0.1: a warm-up point 0.01 (its reward is mostly noise, so
    θ̂ < 0.5 with probability ≈ ½), then x = 0.3 for ever, worth 0.2 to accept. SA-OLS with
    θ̂ < 0.5 publishes a threshold 0.3 cannot reach, rejects it for ever and learns nothing:
    linear regret. EXP3-SAE, tuned to each T, fitted across T ∈ {10⁴, 3·10⁴, 10⁵, 3·10⁵} with
    8 seeds: measured slope 0.668 against (d+1)/(d+2) = ⅔; SA-OLS 1.000. The margin 0.05
    covers the log factor of the rate ((σ log T)^{1/3} adds 1/(3 log T) ≈ 0.03 to the local
    slope) plus seed noise: on seeds 0–7, 8–15, 16–23, 24–31, 32–39 the slope was 0.668, 0.660,
    0.669, 0.656, 0.699.

    At d = 2 the asymptotic regime is out of reach: with the paper's η = sqrt(log|E| /
    (Tλ²|E|)) the weights barely move before T ≈ 10⁷ and regret stays near that of a uniformly
    drawn expert (slope 0.96 over the same T on `GreedyTrap` with σ = 1); there only the bound
    is checked."""
    from strategic_apple_tasting.game import ContextSequence, GreedyTrap

    d, sigma = 1, 0.1
    seq = ContextSequence(points=np.array([[0.01], [0.3]]), cycle_start=1)
    game = Game(dimension=d, delta=0.1, sigma=sigma, r0=0.1, contexts=seq,
                theta1=np.array([1.0]))
    horizons = [10_000, 30_000, 100_000, 300_000]
    means = [_final_means(game, ["exp3-sae", "sa-ols"], T, 8) for T in horizons]
    exp3 = [m["exp3-sae"] for m in means]
    fit = stats.linregress(np.log(horizons), np.log(exp3))
    assert fit.slope < (d + 1) / (d + 2) + 0.05, (fit.slope, exp3)
    saols = stats.linregress(np.log(horizons), np.log([m["sa-ols"] for m in means]))
    assert saols.slope > 0.95
    for horizon, mean in zip(horizons, exp3, strict=True):
        assert mean < theory.exp3_sae_regret_bound(d, horizon, sigma=sigma)

    trap = Game(dimension=2, delta=0.1, sigma=1.0, contexts=GreedyTrap())
    for horizon in (10_000, 100_000):
        mean = _final_means(trap, ["exp3-sae"], horizon, 4)["exp3-sae"]
        assert mean < theory.exp3_sae_regret_bound(2, horizon, sigma=1.0)
