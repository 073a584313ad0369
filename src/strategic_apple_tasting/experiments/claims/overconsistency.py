"""SA-OLS told a larger δ than the agents' still estimates θ consistently (the first part of the
footnote to ``thm:stochastic-main``), at a rate that depends on the over-estimate.

Told δ' > δ, SA-OLS's rule is shifted by δ'‖θ̂‖: movers land on its boundary and are never
called clean, and a clean point is one above δ'‖θ̂‖, a share c1(d, δ') of the rounds. So it
fits on fewer points, all of them unmoved: its error should fall like 1/√t, as told the truth,
with a constant that grows with δ' (fewer and less spread points). The rows read the
``overestimate-consistency`` part (agents' δ = 0.1, SA-OLS told 0.1, 0.15, 0.2, 0.3, and
shifted-ols, which learns from gamed points) and fit the log–log slope of the mean estimation
error along the run, t ≥ T/100, as the ``lem:l2-bandit-1`` row does: one row per over-estimate,
each with shifted-ols, whose error does not vanish, as control.
"""

from __future__ import annotations

import pyarrow as pa

from ...metrics import exponent_along
from .agents import told
from .measures import at, mean, setting, values
from .rows import PAPER, Claim, Control, Row
from .stochastic import ERROR_RATE

#: The part's learners: SA-OLS told each δ' (its label names it), and the control.
SAOLS_PREFIX = "sa-ols(delta="
CONTROL = "shifted-ols"


def consistency(table: pa.Table) -> list[Row]:
    """One row per over-estimate: the slope of SA-OLS's mean error along the run."""
    d, delta, horizon = (setting(table, "dimension"), setting(table, "delta"),
                         int(setting(table, "horizon")))
    labels = sorted((s for s in values(table, "learner") if s.startswith(SAOLS_PREFIX)),
                    key=told)

    def slope(name: str):
        return exponent_along(table, name, "theta_error", t_min=horizon / 100)
    control = slope(CONTROL)
    finals = {lb: mean(at(table, lb, column="theta_error")) for lb in labels}
    truth = [lb for lb in labels if told(lb) == delta]
    base = f"; told the truth, slope {slope(truth[0]).shown(2)}" if truth else ""
    shown = ", ".join(f"δ' = {told(lb):g}: {finals[lb].shown(2)}" for lb in labels)
    out: list[Row] = []
    for label in labels:
        if told(label) <= delta:
            continue
        err = slope(label)
        out.append(Claim(
            f"SA-OLS told δ' = {told(label):g} against agents of δ = {delta:g} still "
            f"estimates θ consistently: its error falls like 1/√t",
            "thm:stochastic-main (footnote, part 1)",
            "slope of mean ‖θ̂ − θ‖, t ≥ T/100", err, ERROR_RATE,
            Control("shifted-ols (learns from gamed points)", control),
            detail=f"×{10 ** err.value:.2f} a decade at d = {d}{base}; mean error at "
                   f"T = {horizon:,} by δ' (the rate's constant): {shown}",
            why="its error does not fall like 1/√t", label=PAPER))
    return out
