"""The cost of deciding in the real world (issue 11): outcomes learned late, rules held for a
period. Theory for bandits with delayed feedback predicts an additive cost roughly proportional
to the delay; a rule held for P rounds makes the learner's information up to P rounds stale.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...metrics import bootstrap, log_slopes
from .measures import at, mean, rows
from .rows import Check, Claim, Consistency, Control, Row

#: What a learner that pays nothing for the delay scores: extra regret is floored at this
#: before taking logs (SA-OLS's extra regret is of order 1 to 10²), so "no cost" reads as a
#: slope of 0 rather than as no measurement.
FLOOR = 1e-9


def _extra(table: pa.Table, learner: str, axis: str) -> tuple[np.ndarray, np.ndarray]:
    """The values of ``axis`` above the paper's game and the (seeds × values) matrix of extra
    regret at T over the paper's game, paired by seed."""
    values = np.unique(table.column(axis).to_numpy())
    base = at(rows(table, **{axis: values[0]}), learner)
    extra = np.column_stack([at(rows(table, **{axis: v}), learner) - base
                             for v in values[1:]])
    return values[1:].astype(float), extra


def _slope(x: np.ndarray, extra: np.ndarray):
    return bootstrap(extra, lambda m: log_slopes(x, np.maximum(m.mean(axis=1), FLOOR)))


def _claim(table: pa.Table, axis: str, what: str, theory: str, why_control: str) -> list[Row]:
    x, extra = _extra(table, "sa-ols", axis)
    _, control = _extra(table, "accept-all", axis)
    per = ", ".join(f"{int(v)}: {mean(extra[:, i]).shown()}" for i, v in enumerate(x))
    return [
        Claim(f"SA-OLS's extra regret from {what} grows about in proportion to it ({theory})",
              "issue 11 (delays)",
              f"log–log slope of the mean extra regret at T against {axis}",
              _slope(x, extra), Check("in [0.5, 1.5] (≈ proportional)", low=0.5, high=1.5),
              Control("the same for accept-all, which learns nothing from outcomes",
                      _slope(x, control)),
              detail=f"extra regret at T by {axis} {per}"),
        Consistency(f"{what} leaves a learner that ignores outcomes untouched (accept-all's "
                    f"regret is the same at every {axis}: {why_control})",
                    "engine", f"largest change {np.abs(control).max():.3g}",
                    bool(np.all(control == 0))),
    ]


def delays(table: pa.Table) -> list[Row]:
    """Extra regret of SA-OLS against the outcome delay."""
    return _claim(table, "delay", "learning outcomes late",
                  "delayed-bandit theory: an additive cost ∝ the delay",
                  "the delays draw from their own stream")


def periods(table: pa.Table) -> list[Row]:
    """Extra regret of SA-OLS against the publication period."""
    return _claim(table, "period", "holding a rule for a period",
                  "the learner's information is up to a period stale, as under a delay",
                  "a rule held is the same rule")
