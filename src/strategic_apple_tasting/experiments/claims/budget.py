"""The gaming budget estimated from the applicants: what a learner loses by not being
told δ.

SA-OLS with ``delta="estimate"`` (:mod:`...learners.budget`) against SA-OLS told the agents'
true δ, on the same seeds (common random numbers): the ratio of their mean regrets at T. The
check asks for regret within 1.5×. Its control is SA-OLS told a fixed δ off by 2×, both ways:
the smaller of the two ratios (over every cell) must fail the same check, or the check says
nothing. With heterogeneous budgets and with a truthful fraction the rows say how close it
gets; on German credit every learner's regret (against accepting exactly the rows that gain)
is linear, which the control shows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...scenarios.fico import GROUPS as FICO_GROUPS
from .measures import at, mean, paired, rows, setting, values
from .rows import BEYOND, Check, Claim, Control, Row

SOURCE = "the gaming budget estimated from the applicants (the paper assumes δ known)"
#: How close the estimated δ must come: regret within this factor of SA-OLS told the true δ.
FACTOR = 1.5
#: The learners of each part: SA-OLS told the game's δ, estimating it, and told 2δ and δ/2
#: (labels, each with the δ it is told as a multiple of the game's; None: estimated).
TOLD = {"sa-ols": 1.0, "sa-ols (δ estimated)": None, "sa-ols (δ × 2)": 2.0,
        "sa-ols (δ / 2)": 0.5}


#: "A larger burden": strictly, so groups that move equally far fail.
LARGER = Check("> 0", low=0.0, strict=True)


def learners(delta: float) -> list[dict]:
    """The part's learners at the game's budget ``delta``."""
    out = []
    for label, times in TOLD.items():
        if label == "sa-ols":
            out.append({"name": "sa-ols"})
        elif times is None:
            out.append({"name": "sa-ols", "delta": "estimate", "label": label})
        else:
            out.append({"name": "sa-ols", "delta": delta * times, "label": label})
    return out


def _columns(table: pa.Table, column: str) -> list[tuple[str, dict[str, np.ndarray]]]:
    """Per dimension (the part's cells): each learner's ``column`` at T, one value per seed."""
    out = []
    for d in values(table, "dimension"):
        cell = rows(table, dimension=d)
        out.append((f"d = {d}", {label: at(cell, label, column=column) for label in TOLD}))
    return out


def _ratios(cells, label: str) -> list[np.ndarray]:
    return [c[label] for _, c in cells]


def _row(table: pa.Table, claim: str, column: str = "regret", why: str = "") -> Claim:
    cells = _columns(table, column)
    base = _ratios(cells, "sa-ols")
    est = _ratios(cells, "sa-ols (δ estimated)")
    wrong = _ratios(cells, "sa-ols (δ × 2)") + _ratios(cells, "sa-ols (δ / 2)")
    k = len(cells)

    def worst(*means: np.ndarray) -> np.ndarray:
        return np.max([means[k + i] / means[i] for i in range(k)], axis=0)

    def best_wrong(*means: np.ndarray) -> np.ndarray:
        return np.min([means[k + i] / means[i % k] for i in range(2 * k)], axis=0)

    shown = {"sa-ols": "told δ", "sa-ols (δ estimated)": "estimated", "sa-ols (δ × 2)": "2δ",
             "sa-ols (δ / 2)": "δ/2"}
    detail = "; ".join(f"{name}: " + ", ".join(f"{word} {mean(c[label]).shown(3)}"
                                               for label, word in shown.items())
                       for name, c in cells)
    horizon = int(setting(table, "horizon"))
    return Claim(
        claim, SOURCE,
        f"regret at T = {horizon:,} of SA-OLS estimating δ over SA-OLS told δ (ratio of means, "
        f"paired by seed; the largest over {', '.join(n for n, _ in cells)})",
        paired(worst, *base, *est),
        Check(f"≤ {FACTOR:g}", high=FACTOR),
        Control("SA-OLS told a fixed δ off by 2× (2δ and δ/2): the smaller ratio of the two, "
                "over every cell", paired(best_wrong, *base, *wrong)),
        detail=f"regret ({column}) {detail}", why=why, label=BEYOND)


def stochastic(table: pa.Table) -> list[Row]:
    """The paper's stochastic game at one δ, d = 2, 5, 10."""
    delta = setting(table, "delta")
    return [_row(table, f"SA-OLS estimating δ from the applicants has regret within "
                        f"{FACTOR:g}× of SA-OLS told δ (stochastic game, δ = {delta:g})",
                 why="the estimate costs a constant early on (estimates from the first few "
                     "movers; starting below the cap instead barely changes it); SA-OLS told "
                     "δ has so little regret (it grows like log T) that the constant is more "
                     "than half of it")]


def partial(table: pa.Table) -> list[Row]:
    """Heterogeneous budgets or a truthful fraction: how close the estimate gets."""
    agents = setting(table, "agents")
    what = ("heterogeneous budgets (uniform in [0.1, δ])" if agents == "heterogeneous"
            else f"a truthful fraction {setting(table, 'truthful'):g}")
    return [_row(table, f"with {what}, SA-OLS estimating δ has regret within {FACTOR:g}× of "
                        f"SA-OLS told the largest budget δ = {setting(table, 'delta'):g}",
                 why="with heterogeneous budgets the hole has no edge (it fades from δ down "
                     "to the smallest budget): the estimate lands inside, below the largest "
                     "budget, and gamed applicants are accepted every round"
                 if agents == "heterogeneous" else
                 "the truthful applicants in the band blur the hole's edge")]


def german(table: pa.Table) -> list[Row]:
    """German credit: the data game (regret against accepting exactly the rows that gain)."""
    return [_row(table, f"on German credit, SA-OLS estimating δ has regret within {FACTOR:g}× of "
                        f"SA-OLS told δ = {setting(table, 'delta'):g}",
                 why="")]


def fico(table: pa.Table) -> list[Row]:
    """The FICO finding on the engine: SA-OLS (a strategy-robust rule) makes the group with
    lower scores move further per applicant than the group with higher ones; without gaming
    nobody moves (the control)."""
    def gap(delta: float) -> np.ndarray:
        frame = rows(table, delta=delta, learner="sa-ols").to_pandas()
        last = frame[frame["t"] == frame["t"].max()].sort_values("seed")
        per = [np.asarray(d) / np.asarray(a) for d, a in
               zip(last["group_distance"], last["group_applicants"], strict=True)]
        names = list(FICO_GROUPS)
        return np.array([v[names.index("black")] - v[names.index("white")] for v in per])

    gaming = max(set(table.column("delta").to_pylist()))
    return [Claim(
        "a strategy-robust rule puts a larger social burden on the group with lower scores "
        "(FICO tables)", "the social cost of strategic classification (Milli et al. 2019; "
        "Hu et al. 2019)",
        f"SA-OLS at δ = {gaming:g}: distance moved per applicant, black minus white, at T",
        mean(gap(gaming)), LARGER,
        Control("the same game without gaming (δ = 0)", mean(gap(0.0))),
        detail="the burden here is the distance applicants move to be accepted (all of them "
               "can: one budget); scenarios/burden.py draws it against the lender's profit",
        why="", label=BEYOND)]
