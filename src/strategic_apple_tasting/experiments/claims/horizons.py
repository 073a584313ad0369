"""Claims about learners tuned to the horizon, measured across horizons: explore-then-commit
(`thm:etc-reg`) and EXP3-SAE on an oblivious adversarial sequence (`thm:upd-one-app`)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from ... import theory
from ...metrics import bootstrap
from .measures import across, at, bound_slope, exact, mean, rows, setting, slope_of
from .rows import PAPER, Check, Claim, Consistency, Control, Row
from .stochastic import feedback_gap

#: A rate is fitted over the largest decade of horizons (the two largest): the local slope
#: nearest the asymptotic regime the theorem is about.
TOP = 2
#: The local slope (one decade to the next) must have stopped falling by more than this for the
#: asymptotic regime of a rate to count as reached.
STILL_FALLING = 0.02


#: ETC's commit-phase rate: a slope at most ⅔, on an interval narrower than ⅔. ETC's commit
#: regret is often near zero (it commits to a near-perfect rule), and the slope of a near-zero
#: quantity is noise whose interval covers a constant (0) and T^⅔ alike: such an interval says
#: nothing about the rate.
COMMIT_RATE = Check("≤ 0.667 (the commit term's exponent; interval narrower than 0.667)",
                    high=2 / 3, width=2 / 3,
                    width_why="else it could hold a constant's slope 0 and T^⅔'s alike")


def _t0(d: int, horizon: int, sigma: float) -> int:
    """ETC's exploration rounds at this horizon (apple tasting, its default γ)."""
    return theory.etc_exploration_rounds(d, int(horizon), sigma=sigma)


def _commit(table: pa.Table, learner: str, d: int, sigma: float) -> tuple[np.ndarray, ...]:
    """Horizons and, per seed and horizon, ``learner``'s regret from ETC's T0 to T: ETC's
    commit phase. (Accept-all's regret up to T0 equals ETC's, which accepts everyone until T0,
    on every seed: common random numbers. So the same subtraction gives accept-all's regret
    over the commit window.)"""
    horizons = np.unique(rows(table, learner="etc").column("horizon").to_numpy())
    out = [at(table, learner, horizon=int(h)) - at(table, "etc", t=_t0(d, h, sigma),
                                                     horizon=int(h)) for h in horizons]
    return horizons, np.column_stack(out)


def etc(table: pa.Table) -> list[Row]:
    """ETC's commit phase against the proof's commit term, and bandit against apple."""
    apple = rows(table, feedback="apple")
    d, sigma = setting(apple, "dimension"), setting(apple, "sigma")
    horizons, commit = _commit(apple, "etc", d, sigma)
    _, window = _commit(apple, "accept-all", d, sigma)
    t0 = np.array([_t0(d, h, sigma) for h in horizons])
    bounds = np.array([theory.etc_commit_regret_bound(d, int(h), sigma=sigma) for h in horizons])
    n = commit.shape[0]
    out: list[Row] = []
    # A high-probability bound: every seed at every horizon must be under it; the control (the
    # commit window of a rule that never learns) fails only if even its best seed is above it.
    out.append(Claim(
        "ETC's commit phase: regret under the proof's commit term", "thm:etc-reg",
        "largest (regret from T0 to T)/term over seeds and horizons",
        exact((commit / bounds).max(), n),
        Check("≤ 1 (term: T·24d·sqrt(7dσ² log(4d/γ)/T0), = T0 at these T0)", high=1.0),
        Control("accept-all over the same rounds, its smallest at the largest T",
                exact((window[:, -1] / bounds[-1]).min(), n)),
        detail=f"T = {horizons[0]:,}…{horizons[-1]:,}, T0/T = {t0[-1] / horizons[-1]:.3f} at "
               f"the largest", label=PAPER))
    out.append(Claim(
        "ETC's commit-phase regret grows at most like T^⅔", "thm:etc-reg",
        "slope of mean regret from T0 to T, across horizons", slope_of(horizons, commit),
        COMMIT_RATE,
        Control("accept-all over the same rounds", slope_of(horizons, window)),
        detail=f"mean at the largest T {mean(commit[:, -1]).shown()} against the term "
               f"{bounds[-1]:,.0f}", label=PAPER))
    band = rows(table, feedback="bandit")
    out.append(feedback_gap("ETC", "slope of mean regret across horizons", across(apple, "etc"),
                            across(band, "etc"), "accept-all", across(band, "accept-all")))
    # Exploration accepts everyone, so its cost is accept-all's: E[max(0, −⟨θ, x⟩)] a round.
    # (The largest horizon's exploration only: runs of one seed share their first rounds.)
    explore = at(apple, "etc", t=int(t0[-1]), horizon=int(horizons[-1])) / t0[-1]
    want = theory.band_regret(d, 0.0, 1.0)
    se = explore.std(ddof=1) / math.sqrt(explore.size)
    out.append(Consistency(
        "ETC's exploration costs accept-all's regret a round", "thm:etc-reg",
        f"{explore.mean():.4f} ± {se:.4f} (s.e.) against E[max(0, −⟨θ, x⟩)] = {want:.4f}",
        bool(abs(explore.mean() - want) <= 4 * se)))
    return out


def local_slopes(horizons: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Slopes of the mean between consecutive horizons."""
    m = np.log(np.nanmean(matrix, axis=0))
    return np.diff(m) / np.diff(np.log(horizons))


def _regime(name: str, horizons: np.ndarray, matrix: np.ndarray) -> tuple[str, str]:
    """("", shown) when the local slope has stopped falling over the last decades, else the
    reason the asymptotic regime is not reached; ``shown`` lists the local slopes."""
    slopes = local_slopes(horizons, matrix)
    shown = ", ".join(f"{s:.2f}" for s in slopes)
    if slopes.size >= 2 and slopes[-1] >= slopes[-2] - STILL_FALLING:
        return "", shown
    if slopes.size < 2:
        return (f"{name}'s local slope ({shown}) is known over one decade only: whether it has "
                f"stopped falling cannot be seen", shown)
    return (f"{name}'s local slope is still falling ({shown} from one horizon to the next): "
            f"its asymptotic regime is not reached", shown)


def adversarial(table: pa.Table, where: str = "", rate_only: bool = False) -> list[Row]:
    """EXP3-SAE on an oblivious adversarial sequence (the greedy trap; ``where`` names another,
    as "orthogonal traps, "): its rate and bound, where SA-OLS's regret is linear. With
    ``rate_only``, the rate and the sequence's consistency check only."""
    d, sigma = setting(table, "dimension"), setting(table, "sigma")
    rate = (d + 1) / (d + 2)
    horizons, exp3 = across(table, "exp3-sae", top=TOP)
    _, saols = across(table, "sa-ols", top=TOP)
    limit = bound_slope(lambda t: theory.exp3_sae_regret_bound(d, int(t), sigma=sigma),
                        horizons[0], horizons[-1])
    all_h, all_exp3 = across(table, "exp3-sae")
    regime, slopes = _regime("EXP3-SAE", all_h, all_exp3)
    top_bound = theory.exp3_sae_regret_bound(d, int(all_h[-1]), sigma=sigma)
    if top_bound >= at(table, "accept-all").mean():
        # A bound above what never learning costs says nothing yet: a linear regret there does
        # not contradict the rate, which is about T beyond it.
        regime = (f"EXP3-SAE's explicit bound ({top_bound:,.0f}) is above accept-all's regret "
                  f"at the largest T: its asymptotic regime is not reached")
    gamma = theory.exp3_sae_parameters(d, int(horizons[-1]), sigma=sigma).gamma
    out: list[Row] = [Claim(
        f"EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence "
        f"({where}d = {d})",
        "thm:upd-one-app", f"slope of mean regret over T = {horizons[0]:,}…{horizons[-1]:,}",
        slope_of(horizons, exp3),
        Check(f"≤ {limit:.3f} (the bound's slope: {rate:.3f} and its log factor)", high=limit),
        Control("SA-OLS (greedy, no exploration)", slope_of(horizons, saols)),
        detail=f"local slopes {slopes}; γ = {gamma:.3g} at the largest T", regime=regime,
        label=PAPER)]
    if not rate_only:
        out += _linear_and_bound(table, d, sigma, where, horizons, exp3, saols, all_h,
                                 all_exp3)
    out.append(_adversarial_sequence(table, d, where, horizons[-1]))
    return out


def _linear_and_bound(table: pa.Table, d: int, sigma: float, where: str, horizons: np.ndarray,
                      exp3: np.ndarray, saols: np.ndarray, all_h: np.ndarray,
                      all_exp3: np.ndarray) -> list[Row]:
    """§4's claim that SA-OLS is linear on the sequence, and EXP3-SAE's explicit bound."""
    out: list[Row] = []
    # §4: "the regression-based algorithms of §3 suffer linear strategic regret" here.
    out.append(Claim(
        f"…where SA-OLS's regret is linear ({where}d = {d})", "§4",
        f"slope of mean regret over T = {horizons[0]:,}…{horizons[-1]:,}",
        slope_of(horizons, saols), Check("≥ 0.9 (linear)", low=0.9),
        Control("EXP3-SAE", slope_of(horizons, exp3)), label=PAPER))
    # The explicit bound at every horizon: the largest ratio of mean regret to the bound.
    all_b = np.array([theory.exp3_sae_regret_bound(d, int(h), sigma=sigma) for h in all_h])
    _, all_aa = across(table, "accept-all")

    def worst(m: np.ndarray) -> np.ndarray:
        return (np.nanmean(m, axis=1) / all_b).max(axis=-1)
    out.append(Claim(
        f"EXP3-SAE regret under the explicit bound ({where}d = {d})", "thm:upd-one-app",
        "largest mean regret / bound over the horizons", bootstrap(all_exp3, worst),
        Check("≤ 1 (bound 6·T^((d+1)/(d+2))·(dσ log T)^(1/(d+2)))", high=1.0),
        Control("accept-all", bootstrap(all_aa, worst)),
        detail=f"bound/T = {all_b[-1] / all_h[-1]:.3g} at T = {all_h[-1]:,}", label=PAPER))
    return out


def _adversarial_sequence(table: pa.Table, d: int, where: str, horizon: int) -> Consistency:
    """By construction: accept-all and reject-all lose a constant a round, agents game."""
    moved = at(table, "exp3-sae", column="moved")
    fixed = {n: at(table, n) / horizon for n in ("accept-all", "reject-all")}
    return Consistency(
        f"the sequence is adversarial ({where}d = {d}): accept-all and reject-all lose a "
        f"constant a round, and agents game EXP3-SAE's rules", "§4",
        ", ".join(f"{n} {v.mean():.4f}" for n, v in fixed.items())
        + f" a round; {moved.mean():,.0f} agents moved",
        bool(min(v.min() for v in fixed.values()) > 0 and moved.min() > 0))


def adversarial_bandit(apple: pa.Table, bandit: pa.Table) -> list[Row]:
    """EXP3-SAE under bandit feedback against apple tasting, on the same sequence and seeds."""
    regime, _ = _regime("EXP3-SAE", *across(apple, "exp3-sae"))
    return [feedback_gap("EXP3-SAE", "slope of mean regret over the largest decade",
                         across(apple, "exp3-sae", top=TOP), across(bandit, "exp3-sae", top=TOP),
                         "accept-all", across(bandit, "accept-all", top=TOP), regime=regime)]
