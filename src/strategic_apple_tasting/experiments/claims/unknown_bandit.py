"""The unknown-horizon learner (`alg:unknown_T`, `thm:best-both`) under bandit feedback against
apple tasting, on the same seeds (§3's extension: "exploring for twice as long", with "strategic
regret rates within a constant factor" of apple tasting's).

Two games: one where τ* is far past T (d = 2, δ = 0.7, σ = 0.01: τ* = 1.2·10⁹) and the learner
runs its explore-then-commit epochs throughout, those from τ = 2¹⁵ on exploring at most 13% of
their rounds (twice that under bandit feedback), and the sharp one (d = 2, δ = 0.1, σ = 0.01),
where it switches to SA-OLS at τ* = 312 and the rate is SA-OLS's. (On the stochastic game,
d = 3, δ = 0.3, σ = 0.1, its epochs explore nearly all their rounds at these T: its regret is
accept-all's, linear, and a comparison of rates there cannot discriminate.)
"""

from __future__ import annotations

import pyarrow as pa

from ... import theory
from .measures import along, at, mean, rows, setting
from .rows import Claim, Row
from .stochastic import best_both, feedback_gap


def _tau(table: pa.Table) -> float:
    return theory.switching_time(int(setting(table, "dimension")), float(setting(table, "delta")),
                                 sigma=float(setting(table, "sigma")))


def _gap(table: pa.Table, where: str) -> Claim:
    apple, band = rows(table, feedback="apple"), rows(table, feedback="bandit")
    return feedback_gap(
        f"unknown-horizon ({where})", "slope of mean regret, t ≥ T/10", along(apple,
                                                                               "unknown-horizon"),
        along(band, "unknown-horizon"), "accept-all", along(band, "accept-all"),
        detail=f"regret at T: apple {mean(at(apple, 'unknown-horizon')).shown()}, bandit "
               f"{mean(at(band, 'unknown-horizon')).shown()}; τ* = {_tau(table):,.0f}, "
               f"T = {int(setting(table, 'horizon')):,}")


def epochs(table: pa.Table) -> list[Row]:
    """In the explore-then-commit epochs: the rate under bandit feedback against apple
    tasting's, and thm:best-both's factor 4 under bandit feedback."""
    out: list[Row] = [_gap(table, "explore-then-commit epochs, τ* past T")]
    band = rows(table, feedback="bandit")
    out.append(best_both(
        band, "under bandit feedback, unknown-horizon is within 4× of the better of SA-OLS and "
        "ETC", "thm:best-both with §3 bandit extension", detail=" (bandit feedback)",
        why=f"as under apple tasting: τ* = {_tau(band):,.0f} is where the explicit bounds "
            f"cross, far past T, so the ETC epochs run long after SA-OLS is the better learner"))
    return out


def sharp(table: pa.Table) -> list[Row]:
    """On the sharp game, past τ*: the rate under bandit feedback against apple tasting's."""
    return [_gap(table, "sharp game: SA-OLS after τ*")]
