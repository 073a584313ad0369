"""The paper's claims reproduced: bundled sweeps, and a table "claim, measured, theory, holds?".

:data:`PARTS` are the sweeps (spec dictionaries, in a full and a quick size); :func:`check_claims`
reads their results and measures each claim. ``sat reproduce`` runs both (resumably: each part is
an ordinary sweep directory) and writes the table.

What "holds" means is stated per claim, with its margin. Exponents are log–log slopes: along the
run (t ≥ T/10, on the mean over seeds) for anytime learners, across the swept horizons (final
regret at each T) for learners tuned to the horizon.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats

from .. import theory
from ..learners import LEARNERS
from ..metrics import growth_exponent, mean_ci, regret_curves
from .sweep import load

#: Non-strategic contextual-bandit baselines whose regret should be linear under gaming.
NON_STRATEGIC = ("naive-greedy", "linucb", "lin-ts", "epsilon-greedy")


def parts(t_main: int, horizons: list[int], seeds: int) -> dict[str, dict]:
    """The bundled sweeps at a given size: the main horizon, the horizons of the learners
    tuned to T, and the seeds."""
    baselines = [{"name": n} for n in NON_STRATEGIC if n in LEARNERS]
    return {
        # SA-OLS and the baselines on the paper's setting.
        "stochastic": {"horizon": t_main, "seeds": seeds, "game": {"dimension": 3,
                       "delta": 0.3, "sigma": 0.1},
                       "learners": [{"name": "sa-ols"}, {"name": "shifted-ols"},
                                    {"name": "unknown-horizon"}, {"name": "oracle"},
                                    *baselines]},
        # Explore-then-commit across horizons (σ small, so T0 < T at these T).
        "etc": {"horizon": horizons, "seeds": seeds, "game": {"dimension": 2, "delta": 0.1,
                "sigma": 0.01}, "learners": [{"name": "etc"}]},
        # EXP3-SAE across horizons on an oblivious sequence that traps SA-OLS.
        "adversarial": {"horizon": horizons, "seeds": seeds,
                        "game": {"dimension": 1, "delta": 0.1, "sigma": 0.1,
                                 "contexts": "greedy-trap"},
                        "learners": [{"name": "exp3-sae"}, {"name": "sa-ols"}]},
        # Stackelberg regret where it differs from strategic regret.
        "stackelberg": {"horizon": t_main // 10, "seeds": seeds,
                        "game": {"dimension": 3, "delta": 0.2, "truthful": 0.5},
                        "learners": [{"name": "sa-ols"}, {"name": "oracle"},
                                     {"name": "naive-greedy"}]},
    }


#: Part name → spec dictionary, full size (the README's run) and quick (a few minutes).
PARTS = {"full": parts(1_000_000, [10_000, 30_000, 100_000, 300_000], 16),
         "quick": parts(20_000, [3_000, 10_000, 30_000], 4)}


@dataclass(frozen=True)
class Claim:
    """One row of the claims table."""

    claim: str
    source: str
    measured: str
    theory: str
    holds: bool


def _final(table: pa.Table, learner: str, column: str = "regret",
           horizon: int | None = None) -> np.ndarray:
    sub = table.filter(pc.equal(table.column("learner"), learner))
    if horizon is not None:
        sub = sub.filter(pc.equal(sub.column("horizon"), horizon))
    t_last = pc.max(sub.column("t")).as_py() if horizon is None else horizon
    last = sub.filter(pc.equal(sub.column("t"), t_last))
    return last.column(column).to_numpy().astype(float)


def _slope_along(table: pa.Table, learner: str) -> tuple[float, float]:
    t, mean, _ = regret_curves(table, learner)
    return growth_exponent(t, mean)


def _slope_across(table: pa.Table, learner: str) -> tuple[float, float, list[int], list[float]]:
    horizons = sorted(set(table.column("horizon").to_pylist()))
    means = [float(_final(table, learner, horizon=h).mean()) for h in horizons]
    fit = stats.linregress(np.log(horizons), np.log(means))
    return float(fit.slope), float(fit.stderr), horizons, means


def _pm(value: float, se: float) -> str:
    return f"{value:.3f} ± {1.96 * se:.3f}"


def _setting(table: pa.Table, name: str):
    return table.column(name)[0].as_py()


def _stochastic(table: pa.Table) -> list[Claim]:
    d, delta, sigma = (_setting(table, k) for k in ("dimension", "delta", "sigma"))
    horizon = int(pc.max(table.column("t")).as_py())
    out = []
    slope, se = _slope_along(table, "sa-ols")
    out.append(Claim("SA-OLS regret grows at most like √T", "thm:stochastic-main-app",
                     f"slope {_pm(slope, se)} (t ≥ T/10)", "≤ 0.5",
                     slope + 1.96 * se <= 0.5))
    regret = _final(table, "sa-ols")
    bound = theory.saols_regret_bound(d, delta, horizon, sigma=sigma)
    out.append(Claim("SA-OLS regret under the explicit bound", "thm:stochastic-main-app",
                     f"max over seeds {regret.max():.4g} at T = {horizon:,}", f"{bound:.4g}",
                     bool(regret.max() < bound)))
    clean = _final(table, "sa-ols", "clean")
    want = theory.expected_clean_points(d, delta, horizon)
    mean, half = mean_ci(clean)
    se = float(clean.std(ddof=1) / math.sqrt(len(clean)))
    out.append(Claim("clean points ≈ d + c1·(T − d)", "cor:c1",
                     f"{mean:,.0f} ± {half:,.0f}", f"{want:,.0f}",
                     abs(mean - want) <= 3 * se))  # E[clean] is exactly this: 3 s.e. margin
    # A consistent estimator's error shrinks by about √10 from T/10 to T (SA-OLS's is shown);
    # the inconsistent one's must not shrink by even 1.5.
    ratios = {}
    for name in ("shifted-ols", "sa-ols"):
        t, err, _ = regret_curves(table, name, "theta_error")
        ratios[name] = float(err[t <= horizon / 10][-1] / err[-1])
    out.append(Claim("OLS on every accepted point is inconsistent", "app: OLS inconsistency",
                     f"error shrinks {ratios['shifted-ols']:.2f}× from T/10 to T "
                     f"(SA-OLS: {ratios['sa-ols']:.2f}×)", "does not shrink (< 1.5×)",
                     ratios["shifted-ols"] < 1.5))
    for name in NON_STRATEGIC:
        if name not in set(table.column("learner").to_pylist()):
            continue
        # Linear: the regret per round does not fade. Per-round regret over the second half of
        # the run against the first half's: 1 for linear regret, 0.41 for √T, far less for
        # log T; "holds" above ½. The slope is shown too.
        slope, se = _slope_along(table, name)
        t, mean, _ = regret_curves(table, name)
        half = mean[t <= horizon / 2][-1]
        ratio = (mean[-1] - half) / half if half > 0 else math.nan
        out.append(Claim(f"{name} (ignores gaming) has linear regret", "§3 baselines",
                         f"per-round regret, 2nd half / 1st half {ratio:.2f}; "
                         f"slope {_pm(slope, se)}", "ratio 1 (√T: 0.41)", ratio > 0.5))
    uh = _final(table, "unknown-horizon")
    bound = theory.unknown_horizon_regret_bound(d, delta, horizon, sigma=sigma)
    out.append(Claim("unknown-horizon regret under the explicit bound", "thm:best-both",
                     f"mean {uh.mean():.4g}", f"{bound:.4g}", bool(uh.mean() < bound)))
    oracle = _final(table, "oracle")
    out.append(Claim("the shifted oracle has zero strategic regret", "§2",
                     f"max {oracle.max():.3g}", "0", bool(oracle.max() == 0)))
    return out


def _under_bound(who: str, source: str, horizons: list[int], means: list[float],
                 bound: Callable[[int], float]) -> Claim:
    """Mean final regret under the theorem's explicit bound at every swept horizon."""
    worst = max(m / bound(h) for h, m in zip(horizons, means, strict=True))
    return Claim(f"{who} regret under the explicit bound", source,
                 f"largest mean/bound {worst:.3g}", "< 1", worst < 1)


def _etc(table: pa.Table) -> list[Claim]:
    d, sigma = _setting(table, "dimension"), _setting(table, "sigma")
    slope, se, horizons, means = _slope_across(table, "etc")
    out = [Claim("ETC regret grows like T^⅔ (across horizons)", "thm:etc-reg",
                 f"slope {_pm(slope, se)} over T = {horizons[0]:,}…{horizons[-1]:,}", "0.667",
                 abs(slope - 2 / 3) <= 0.05)]
    out.append(_under_bound("ETC", "thm:etc-reg", horizons, means,
                            lambda h: theory.etc_regret_bound(d, h, sigma=sigma)))
    return out


def _adversarial(table: pa.Table) -> list[Claim]:
    d, sigma = _setting(table, "dimension"), _setting(table, "sigma")
    rate = (d + 1) / (d + 2)
    slope, se, horizons, means = _slope_across(table, "exp3-sae")
    out = [Claim("EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence",
                 "thm:upd-one-app", f"slope {_pm(slope, se)} (d = {d})",
                 f"≤ {rate:.3f} (+0.05 for the log factor)", slope <= rate + 0.05)]
    sa, sa_se, _, _ = _slope_across(table, "sa-ols")
    out.append(Claim("…where SA-OLS's regret is linear", "§4", f"slope {_pm(sa, sa_se)}", "1",
                     sa >= 0.9))
    out.append(_under_bound("EXP3-SAE", "thm:upd-one-app", horizons, means,
                            lambda h: theory.exp3_sae_regret_bound(d, h, sigma=sigma)))
    return out


def _stackelberg(table: pa.Table) -> list[Claim]:
    regret = table.column("regret").to_numpy()
    stack = table.column("stackelberg_regret").to_numpy()
    gap = float((regret - stack).max())
    return [Claim("Stackelberg regret ≤ strategic regret (truthful fraction ½)",
                  "prop:stronger", f"every row; largest gap {gap:.4g} (search lower bound)",
                  "≤", bool(np.all(stack <= regret)))]


CHECKS: dict[str, Callable[[pa.Table], list[Claim]]] = {
    "stochastic": _stochastic, "etc": _etc, "adversarial": _adversarial,
    "stackelberg": _stackelberg}


def check_claims(out: str | Path) -> list[Claim]:
    """Measure every claim from the part directories under ``out``."""
    rows: list[Claim] = []
    for part, check in CHECKS.items():
        rows.extend(check(load(Path(out) / part)))
    return rows


def claims_markdown(rows: list[Claim]) -> str:
    """The claims table in Markdown."""
    lines = ["| claim | source | measured | theory | holds? |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.claim} | `{r.source}` | {r.measured} | {r.theory} | "
                     f"{'yes' if r.holds else '**no**'} |")
    return "\n".join(lines)


def claims_text(rows: list[Claim]) -> str:
    """The claims table as aligned plain text, for a terminal."""
    head = ("claim", "measured", "theory", "holds?")
    body = [(r.claim, r.measured, r.theory, "yes" if r.holds else "NO") for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(4)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths)),
                      *(fmt.format(*b) for b in body)]).rstrip()


__all__ = ["CHECKS", "PARTS", "Claim", "check_claims", "claims_markdown", "claims_text"]
