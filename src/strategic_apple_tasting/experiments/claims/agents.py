"""Claims beyond lazy agents in the uniform ball: trembling hands (`app:trembling`), ellipsoidal
costs (footnote 2), bounded-density-ratio contexts (`ass:bdr`), an over-estimated budget (the
footnote to `thm:stochastic-main`), and Stackelberg regret (`prop:stronger`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ... import theory
from ...metrics import log_slopes
from .measures import at, exact, mean, paired, rates, setting, values
from .rows import PAPER, Check, Claim, Consistency, Control, Row
from .stochastic import count_check, saols_rate


def _never_gamed(table: pa.Table, what: str, source: str) -> Consistency:
    gamed = at(table, "sa-ols", column="gamed_as_clean")
    return Consistency(f"SA-OLS never learns from a gamed point ({what})", source,
                       f"largest count over seeds {int(gamed.max())}", not gamed.any())


def trembling(table: pa.Table) -> list[Row]:
    """γ-trembling agents: every δ becomes δ + γ (`app:trembling`, `cond:clean-app`)."""
    d, delta, gamma = (setting(table, k) for k in ("dimension", "delta", "tremble"))
    horizon = int(setting(table, "horizon"))
    clean = at(table, "sa-ols", column="clean")
    # A point above c + γ‖β‖ cannot have moved, so it is clean with probability exactly
    # c1(d, δ + γ) (r0 = 0). 99.7% intervals: the prediction is exact.
    want = theory.expected_clean_points(d, delta + gamma, horizon)
    lazy = theory.expected_clean_points(d, delta, horizon)
    return [
        Claim("trembling hand: clean points ≈ d + c1(d, δ + γ)·(T − d)", "app:trembling",
              "SA-OLS's clean points − d − c1(d, δ + γ)·(T − d)",
              mean(clean - want, level=0.997), count_check(want),
              Control("the same count against lazy agents' c1(d, δ)",
                      mean(clean - lazy, level=0.997)),
              detail=f"γ = {gamma:g}, δ = {delta:g}", label=PAPER),
        saols_rate(table, "app:trembling",
                   "trembling hand: SA-OLS regret grows at most like √T (δ → δ + γ)",
                   delta=delta + gamma),
        _never_gamed(table, "trembling hand", "cond:clean-app"),
    ]


def ellipsoid(table: pa.Table) -> list[Row]:
    """Agents with budget ‖A^½(x' − x)‖ ≤ δ, A known to the learner (footnote 2)."""
    return [saols_rate(table, "footnote 2 (ellipsoidal costs)",
                       f"ellipsoidal cost A = {setting(table, 'cost')}: SA-OLS regret grows at "
                       f"most like √T"),
            _never_gamed(table, "ellipsoidal cost", "footnote 2")]


def mixture(table: pa.Table) -> list[Row]:
    """Contexts f = c0·U + (1 − c0)·g: density ratio c0 to the uniform ball (`ass:bdr`)."""
    d, delta, sigma, c0 = (setting(table, k) for k in ("dimension", "delta", "sigma", "c0"))
    horizon = int(setting(table, "horizon"))
    n = len(at(table, "sa-ols"))
    bound = theory.saols_regret_bound(d, delta, horizon, sigma=sigma, c0=c0)
    return [
        saols_rate(table, "ass:bdr", f"mixture contexts (c0 = {c0:g}): SA-OLS regret grows at "
                   f"most like √T"),
        Claim(f"mixture contexts (c0 = {c0:g}): SA-OLS regret under the explicit bound",
              "thm:stochastic-main-app", f"largest regret over seeds at T = {horizon:,}",
              exact(at(table, "sa-ols").max(), n),
              Check(f"≤ {bound:,.0f} = {bound / horizon:.3f}·T (with c0)", high=bound),
              Control("accept-all, its smallest over seeds",
                      exact(at(table, "accept-all").min(), n)), label=PAPER),
    ]


def told(label: str) -> float:
    """The δ' in a learner's label ``sa-ols(delta=δ')``: the budget it was told.

    Examples
    --------
    >>> told("sa-ols(delta=0.15)")
    0.15
    """
    return float(label.split("=")[1].rstrip(")"))


def overestimate(table: pa.Table) -> list[Row]:
    """SA-OLS told a budget δ + Δ against agents of budget δ."""
    d, delta = setting(table, "dimension"), setting(table, "delta")
    labels = sorted(values(table, "learner"), key=told)
    excess = np.array([told(lb) for lb in labels[1:]]) - delta
    base_regret, base_accepted = rates(table, labels[0])[1], rates(table, labels[0], "accepted")[1]
    # Per seed, what each Δ adds a round over the second half of the run (common random
    # numbers: the same agents and noise for every Δ), then the log–log slope against Δ.
    regret = [rates(table, lb)[1] - base_regret for lb in labels[1:]]
    deficit = [base_accepted - rates(table, lb, "accepted")[1] for lb in labels[1:]]

    def slope(*means: np.ndarray) -> np.ndarray:
        return log_slopes(excess, np.column_stack(means))
    exact_cost = [theory.band_regret(d, 0.0, e) for e in excess]
    measured = paired(slope, *regret)
    return [Claim(
        "over-estimating δ by Δ costs regret in proportion to Δ", "thm:stochastic-main (footnote)",
        f"slope of log(extra regret a round) on log Δ, Δ = {', '.join(f'{e:g}' for e in excess)}",
        measured, Check("1 ± 0.25 (proportional)", low=0.75, high=1.25),
        Control("the agents it wrongly rejects a round (a band of width Δ)",
                paired(slope, *deficit), must="pass"),
        detail="extra regret a round " + ", ".join(
            f"{mean(r).shown(2)}" for r in regret) + "; exact with θ̂ = θ: " + ", ".join(
            f"{c:.2g}" for c in exact_cost),
        why="the wrongly rejected band has width Δ and an agent in it costs up to Δ, so the "
            "cost is ∝ Δ² (exactly ∫₀^Δ s·f(s) ds), and it is paid every round: linear in T, "
            "not a constant", label=PAPER)]


def stackelberg(table: pa.Table) -> list[Row]:
    """Stackelberg regret never exceeds strategic regret (`prop:stronger`); here a search lower
    bound of it, so the check is of the simulator."""
    regret = table.column("regret").to_numpy()
    stack = table.column("stackelberg_regret").to_numpy()
    exact_rows = bool(table.column("stackelberg_exact").to_numpy().all())
    return [Consistency(
        "Stackelberg regret ≤ strategic regret (truthful fraction ½)", "prop:stronger",
        f"every row; largest gap {float((regret - stack).max()):.4g}"
        + ("" if exact_rows else " (Stackelberg regret is a search lower bound)"),
        bool(np.all(stack <= regret)))]
