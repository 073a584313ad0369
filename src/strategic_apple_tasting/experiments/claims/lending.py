"""Beyond the paper: strategy-aware learners on real loans.

German credit's data game (:func:`strategic_apple_tasting.scenarios.datasets.data_game`: each
row with its recorded outcome, +1 repaid / −5 defaulted; agents game the checking and savings
balances and the telephone) at three budgets, under the ``holdout`` protocol: per seed 30% of
the rows (stratified by outcome) are held out, the learners meet the others, and the rule each
has in force at T is scored on the held-out applicants, who game it. No theorem covers it: the
paper's analysis is for a linear reward, and a loan's outcome is not one. The rows measure, in
**held-out** profit (the lender's money on applicants no learner met, per 1,000, in the data's
units; a table of another protocol is read by its online profit, and the rows say which):

* at each δ, whether the best strategy-aware learner (sa-ols, offset-ols, sa-logistic,
  offset-logistic: the one with the highest mean profit) earns more than both naive
  learners (naive-greedy, naive-logistic), strictly (a tie is no gain), wherever gaming
  costs a naive learner money;
  the control is the same learners with gaming switched off (truthful = 1), where being
  strategy-aware must not help (its shift then only turns good applicants away);
* the misspecification experiment: with each reward replaced by the least-squares rule's own
  prediction (σ = 0: the linear model exactly right) SA-OLS earns more than naive greedy,
  and on the recorded outcomes (the control) it does not: the linear learners lose on
  real outcomes because their model is wrong there, not because strategy-awareness is.

Every comparison is paired by seed: on a seed every learner meets the same applicants in the
same order and is scored on the same held-out ones, and with gaming on or off the same ones
(agents draw from their own stream).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .measures import at, mean, rows, setting, values
from .rows import MEASURED, Check, Claim, Consistency, Control, Row

SOURCE = "strategy-aware learning on real loans (German credit; no theorem)"
#: The strategy-aware learners of the ``lending`` part, and the naive ones.
AWARE = ("sa-ols", "offset-ols", "sa-logistic", "offset-logistic")
NAIVE = ("naive-greedy", "naive-logistic")
#: The rows claim a gain (strategy-awareness pays where gaming costs; the right model pays):
#: strictly more than the other's profit, so an exact tie fails.
GAIN = Check("> 0 (more than the other's profit)", low=0.0, strict=True)


def _held_out(table: pa.Table) -> bool:
    return "protocol" in table.column_names and setting(table, "protocol") == "holdout"


def _profit(table: pa.Table, learner: str) -> np.ndarray:
    """Per seed (in seed order): the learner's profit per 1,000 applicants, in the data's units:
    under ``holdout`` its rule at T on the held-out applicants, otherwise what it earned."""
    scale = float(setting(table, "reward_scale"))
    if _held_out(table):
        return at(table, learner, column="holdout_profit") * 1000.0 * scale
    horizon = int(setting(rows(table, learner=learner), "horizon"))
    return at(table, learner, column="profit") * 1000.0 * scale / horizon


def _what(table: pa.Table) -> str:
    """What the rows' profit is, naming the protocol."""
    if _held_out(table):
        share = float(setting(table, "holdout_share"))
        return (f"held-out profit per 1,000 applicants (protocol holdout: {share:.0%} of the "
                "rows held out per seed, the rule in force at T scored on them)")
    protocol = setting(table, "protocol") if "protocol" in table.column_names else "replay"
    return f"profit per 1,000 applicants (protocol {protocol}, online)"


def _best(table: pa.Table, names: tuple[str, ...]) -> str:
    """The learner with the highest mean profit (the first on a tie)."""
    return max(names, key=lambda n: _profit(table, n).mean())


def _shown(table: pa.Table, names: tuple[str, ...]) -> str:
    return ", ".join(f"{n} {_profit(table, n).mean():.1f}" for n in names)


def lending(table: pa.Table) -> list[Row]:
    """Per budget: the best strategy-aware learner's profit less the better naive learner's,
    with gaming (the claim) and without (the control)."""
    out: list[Row] = []
    horizon = int(setting(table, "horizon"))
    for delta in values(table, "delta"):
        on = rows(table, delta=delta, truthful=0.0)
        off = rows(table, delta=delta, truthful=1.0)
        best = _best(on, AWARE)
        naive, naive_off = _best(on, NAIVE), _best(off, NAIVE)
        gain = mean(_profit(on, best) - _profit(on, naive))
        control = mean(_profit(off, best) - _profit(off, naive_off))
        # What gaming costs each naive learner: its profit without gaming less with, by seed.
        costs = {n: mean(_profit(off, n) - _profit(on, n)) for n in NAIVE}
        paying = [n for n, c in costs.items() if c.low > 0]
        regime = "" if paying else (
            "gaming costs neither naive learner money here (" + ", ".join(
                f"{n} {c.shown()}" for n, c in costs.items()) + ")")
        out.append(Claim(
            f"the best strategy-aware learner earns more than naive greedy and naive "
            f"logistic where gaming costs them money (German credit, δ = {delta:g})", SOURCE,
            f"{_what(table)} of {best} (the best strategy-aware learner) less "
            f"{naive}'s (the better naive one), paired by seed, T = {horizon:,}", gain,
            GAIN,
            Control(f"the same with gaming switched off (truthful = 1; {best} less {naive_off})",
                    control),
            detail=f"profit with gaming: {_shown(on, AWARE + NAIVE)}; without: "
                   f"{_shown(off, AWARE + NAIVE)}; what gaming costs: "
                   + ", ".join(f"{n} {c.shown()}" for n, c in costs.items()),
            why=f"{best} earns no more than {naive} with gaming at δ = {delta:g}",
            regime=regime, label=MEASURED))
    gamed = {n: int(np.max(at(table, n, column="gamed_as_clean"))) for n in AWARE}
    out.append(Consistency(
        "the strategy-aware learners learn no gamed point as unmoved on German credit", SOURCE,
        ", ".join(f"{n} {v}" for n, v in gamed.items()), all(v == 0 for v in gamed.values())))
    return out


def misspecified(table: pa.Table, linear: pa.Table) -> list[Row]:
    """Per budget: SA-OLS's profit less naive greedy's where the linear model is exactly right
    (the claim) and on the recorded outcomes (the control)."""
    out: list[Row] = []
    horizon = int(setting(linear, "horizon"))
    for delta in values(linear, "delta"):
        right = rows(linear, delta=delta)
        real = rows(table, delta=delta, truthful=0.0)
        gain = mean(_profit(right, "sa-ols") - _profit(right, "naive-greedy"))
        control = mean(_profit(real, "sa-ols") - _profit(real, "naive-greedy"))
        out.append(Claim(
            f"where the linear model is exactly right SA-OLS earns more than naive greedy, "
            f"and on real outcomes it does not (German credit, δ = {delta:g})", SOURCE,
            f"{_what(linear)} of SA-OLS less naive greedy's, each reward the "
            f"least-squares rule's own prediction (σ = 0), paired by seed, T = {horizon:,}",
            gain, GAIN,
            Control("the same on the recorded outcomes (+1 repaid, −5 defaulted)", control),
            detail=f"SA-OLS {_profit(right, 'sa-ols').mean():.1f}, naive greedy "
                   f"{_profit(right, 'naive-greedy').mean():.1f} on linear rewards; "
                   f"{_profit(real, 'sa-ols').mean():.1f} and "
                   f"{_profit(real, 'naive-greedy').mean():.1f} on the recorded outcomes",
            why=f"SA-OLS earns no more than naive greedy even with the linear model right at "
                f"δ = {delta:g}", label=MEASURED))
    return out
