"""The cost of deciding in the real world: outcomes learned late, rules held for a period.

Delayed-feedback bandit theory bounds what a delay of D rounds adds by an additive term that
grows in proportion to D: about D rounds of play without the information. For SA-OLS most of
that is a longer warm-up, and nothing about staleness: no outcome arrives before round D + 1,
so it accepts everyone until round d + D (a rule held for P rounds: until round P), paying
accept-all's regret a round. The rows separate the two. The **staleness** of a delay is SA-OLS's
regret at T minus that of the same learner with the same warm-up and no delay
(``SAOLS(warmup=d + D)``; for a period, ``warmup=P``), paired by seed: the two play round for
round alike until the warm-up ends, and differ afterwards by the late information alone.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...metrics import bootstrap
from .measures import at, mean, rows
from .rows import Check, Claim, Consistency, Control, Row

SOURCE = "delayed-feedback bandits (proved for other learners, not for SA-OLS)"
#: A cost "in proportion to D" that shows: at least this share, per round of delay, of the
#: additive term's rate, a round of play without information (accept-all's regret a round).
#: The whole extra regret, warm-up included, is at the full rate (share 1).
SHARE = 0.1


def _axis(table: pa.Table, axis: str) -> np.ndarray:
    """The values of ``axis`` above the paper's game (delay 0, period 1)."""
    return np.unique(table.column(axis).to_numpy())[1:]


def _extra(table: pa.Table, axis: str, learner: str, base: list[np.ndarray]) -> np.ndarray:
    """(seeds × values) matrix of ``learner``'s regret at T at each value of ``axis`` minus
    ``base`` (one per-seed column per value), paired by seed."""
    return np.column_stack([at(rows(table, **{axis: v}), learner) - b
                            for v, b in zip(_axis(table, axis), base, strict=True)])


def _rate(x: np.ndarray, extra: np.ndarray):
    """Extra regret per round of delay: the least-squares slope through the origin of the mean
    extra regret on x (a cost ∝ x is c·x), bootstrapped over seeds."""
    return bootstrap(extra, lambda m: (m.mean(axis=1) * x).sum(axis=-1) / (x * x).sum())


def _claim(table: pa.Table, warmups: pa.Table, axis: str, sym: str, claim: str, what: str,
           warm: int, why_control: str) -> list[Row]:
    """The staleness row and accept-all's consistency row for ``axis`` (its values written
    ``sym``); under the value v SA-OLS's warm-up lasts v + ``warm`` rounds."""
    x = _axis(table, axis)
    paper = at(rows(table, **{axis: np.unique(table.column(axis).to_numpy())[0]}), "sa-ols")
    same = [at(warmups, f"sa-ols(warmup={int(v) + warm})") for v in x]
    stale = _extra(table, axis, "sa-ols", same)
    whole = _extra(table, axis, "sa-ols", [paper] * x.size)
    horizon = int(rows(table, learner="accept-all").column("horizon")[0].as_py())
    control = np.column_stack([at(rows(table, **{axis: v}), "accept-all") for v in x])
    base = at(rows(table, **{axis: np.unique(table.column(axis).to_numpy())[0]}), "accept-all")
    blind = float(base.mean()) / horizon  # accept-all's regret a round
    floor = SHARE * blind
    per = ", ".join(f"{sym} = {int(v)}: {mean(stale[:, i]).shown()}" for i, v in enumerate(x))
    return [
        Claim(claim, SOURCE,
              f"extra regret at T = {horizon:,} over SA-OLS with the same warm-up and no "
              f"{axis}, per round of {sym} (least-squares slope through 0)",
              _rate(x.astype(float), stale),
              Check(f"≥ {floor:.3g} ({SHARE:g} × accept-all's regret a round, {blind:.3g}: "
                    f"the rate of the additive term)", low=floor),
              Control(f"the whole extra regret over SA-OLS at {axis} "
                      f"{np.unique(table.column(axis).to_numpy())[0]}, warm-up included "
                      f"(∝ {sym}: the warm-up's rounds of accept-all)",
                      _rate(x.astype(float), whole), must="pass"),
              detail=f"staleness at T: {per}; whole extra regret: " + ", ".join(
                  f"{sym} = {int(v)}: {mean(whole[:, i]).shown()}" for i, v in enumerate(x)),
              why=f"the cost ∝ {sym} is the longer warm-up ({sym} more rounds of accept-all "
                  f"before the first fit); after the same warm-up, information up to {sym} "
                  f"rounds old costs SA-OLS almost nothing (its regret grows like log T)"),
        Consistency(f"{what} leaves a learner that ignores outcomes untouched (accept-all's "
                    f"regret is the same at every {axis}: {why_control})",
                    "engine", f"largest change {np.abs(control - base[:, None]).max():.3g}",
                    bool(np.all(control == base[:, None]))),
    ]


def delays(table: pa.Table, warmups: pa.Table) -> list[Row]:
    """SA-OLS's staleness cost against the outcome delay D (its warm-up ends at d + D)."""
    d = int(table.column("dimension")[0].as_py())
    return _claim(table, warmups, "delay", "D",
                  "learning outcomes D rounds late costs SA-OLS regret in proportion to D "
                  "beyond the longer warm-up it imposes (staleness: the additive cost ∝ D of "
                  "delayed-feedback theory)", "learning outcomes late", d,
                  "the delays draw from their own stream")


def periods(table: pa.Table, warmups: pa.Table) -> list[Row]:
    """SA-OLS's staleness cost against the publication period P (its first rule, accept-all,
    is held P rounds)."""
    return _claim(table, warmups, "period", "P",
                  "holding each rule for P rounds costs SA-OLS regret in proportion to P "
                  "beyond the longer warm-up it imposes (staleness: information up to P rounds "
                  "old)", "holding a rule for a period", 0, "a rule held is the same rule")
