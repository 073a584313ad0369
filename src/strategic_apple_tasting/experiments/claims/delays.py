"""The cost of deciding in the real world: outcomes learned late, rules held for a period.

Delayed-feedback bandit theory bounds what a delay of D rounds adds by an additive term that
grows in proportion to D: about D rounds of play without the information. For SA-OLS most of
that is a longer warm-up, and nothing about staleness: no outcome arrives before round D + 1,
so it accepts everyone until round d + D (a rule held for P rounds: until round P), paying
accept-all's regret a round. The rows separate the two. The **staleness** of a delay is SA-OLS's
regret at T minus that of the same learner with the same warm-up and no delay
(``SAOLS(warmup=d + D)``; for a period, ``warmup=P``), paired by seed: the two play round for
round alike until the warm-up ends, and differ afterwards by the late information alone.

The paper has no delays: the rows are beyond it, and state what the theory states, an upper
bound. After the same warm-up, a delay D must cost SA-OLS less than a stated share
(:data:`SHARE`) of the additive term, D rounds of accept-all's regret, at every D run. The
control is the whole extra regret, warm-up included, which is the full term and fails. The
staleness at each D is shown as measured beside it (not a slope: it does not grow like D).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...metrics import Estimate, bootstrap
from .measures import at, mean, rows
from .rows import BEYOND, Check, Claim, Consistency, Control, Row

SOURCE = ("delayed-feedback bandits: Reg_D ≤ Reg_0 + O(D) (proved for other learners, not for "
          "SA-OLS)")
#: The stated fraction of the additive term: after the same warm-up, a delay (or a period) of
#: D rounds must cost SA-OLS less than this share of D rounds of play without information
#: (D × accept-all's regret a round). The whole extra regret, warm-up included, is at the full
#: rate (share 1): the control that fails.
SHARE = 0.1


def _axis(table: pa.Table, axis: str) -> np.ndarray:
    """The values of ``axis`` above the paper's game (delay 0, period 1)."""
    return np.unique(table.column(axis).to_numpy())[1:]


def _extra(table: pa.Table, axis: str, learner: str, base: list[np.ndarray]) -> np.ndarray:
    """(seeds × values) matrix of ``learner``'s regret at T at each value of ``axis`` minus
    ``base`` (one per-seed column per value), paired by seed."""
    return np.column_stack([at(rows(table, **{axis: v}), learner) - b
                            for v, b in zip(_axis(table, axis), base, strict=True)])


def below(sym: str, blind: float) -> Check:
    """Less than :data:`SHARE` of the additive term ``sym`` × ``blind``, strictly as the words
    "less than" say."""
    return Check(f"< {SHARE:g} (a stated share of the additive term {sym} × {blind:.3g})",
                 high=SHARE, strict=True)


def share_of_term(x: np.ndarray, extra: np.ndarray, blind: float) -> Estimate:
    """The largest over the values ``x`` of the mean extra regret (columns of ``extra``) over
    ``x`` × ``blind``, the additive term of delayed-feedback theory at that value (``x`` rounds
    of accept-all's regret a round), bootstrapped over seeds."""
    term = x * blind
    return bootstrap(extra, lambda m: (m.mean(axis=1) / term).max(axis=-1))


def _claim(table: pa.Table, warmups: pa.Table, axis: str, sym: str, claim: str, what: str,
           warm: int, why_control: str) -> list[Row]:
    """The staleness row and accept-all's consistency row for ``axis`` (its values written
    ``sym``); under the value v SA-OLS's warm-up lasts v + ``warm`` rounds."""
    x = _axis(table, axis)
    first = np.unique(table.column(axis).to_numpy())[0]
    paper = at(rows(table, **{axis: first}), "sa-ols")
    same = [at(warmups, f"sa-ols(warmup={int(v) + warm})") for v in x]
    stale = _extra(table, axis, "sa-ols", same)
    whole = _extra(table, axis, "sa-ols", [paper] * x.size)
    horizon = int(rows(table, learner="accept-all").column("horizon")[0].as_py())
    control = np.column_stack([at(rows(table, **{axis: v}), "accept-all") for v in x])
    base = at(rows(table, **{axis: first}), "accept-all")
    blind = float(base.mean()) / horizon  # accept-all's regret a round
    per = ", ".join(f"{sym} = {int(v)}: {mean(stale[:, i]).shown()}" for i, v in enumerate(x))
    return [
        Claim(claim, SOURCE,
              f"largest over {sym} = {', '.join(str(int(v)) for v in x)} of SA-OLS's extra "
              f"regret at T = {horizon:,} over SA-OLS with the same warm-up and no {axis}, "
              f"over {sym} × accept-all's regret a round ({blind:.3g})",
              share_of_term(x.astype(float), stale, blind),
              below(sym, blind),
              Control(f"the whole extra regret over SA-OLS at {axis} {first}, warm-up "
                      f"included ({sym} more rounds of accept-all)",
                      share_of_term(x.astype(float), whole, blind)),
              detail=f"staleness at T (measured, per {sym}): {per}; whole extra regret: "
                     + ", ".join(f"{sym} = {int(v)}: {mean(whole[:, i]).shown()}"
                                 for i, v in enumerate(x)),
              why=f"after the same warm-up, information up to {sym} rounds old costs SA-OLS "
                  f"at least {SHARE:g} of the additive term",
              label=BEYOND),
        Consistency(f"{what} leaves a learner that ignores outcomes untouched (accept-all's "
                    f"regret is the same at every {axis}: {why_control})",
                    "engine", f"largest change {np.abs(control - base[:, None]).max():.3g}",
                    bool(np.all(control == base[:, None]))),
    ]


def delays(table: pa.Table, warmups: pa.Table) -> list[Row]:
    """SA-OLS's staleness cost under the outcome delay D (its warm-up ends at d + D)."""
    d = int(table.column("dimension")[0].as_py())
    return _claim(table, warmups, "delay", "D",
                  f"after the same warm-up, learning outcomes D rounds late costs SA-OLS less "
                  f"than {SHARE:g} × D × accept-all's regret a round (the additive term of "
                  f"delayed-feedback theory, an upper bound)", "learning outcomes late", d,
                  "the delays draw from their own stream")


def periods(table: pa.Table, warmups: pa.Table) -> list[Row]:
    """SA-OLS's staleness cost under the publication period P (its first rule, accept-all, is
    held P rounds)."""
    return _claim(table, warmups, "period", "P",
                  f"after the same warm-up, holding each rule for P rounds costs SA-OLS less "
                  f"than {SHARE:g} × P × accept-all's regret a round (information up to P "
                  f"rounds old)", "holding a rule for a period", 0,
                  "a rule held is the same rule")
