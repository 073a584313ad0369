"""Beyond the paper: learning from unclean data (its Conclusion's first open problem).

The open problem asks whether gamed points can *remove* SA-OLS's 1/c1 factor. OffsetOLS's
unbiasedness is argued in its docstring (lazy agents, a density uncorrelated with where a mover
lands), not proved, and the rows measure: its dependence on c1 is reduced, not removed.

The ``unclean`` part runs SA-OLS, :class:`~strategic_apple_tasting.learners.OffsetOLS` (which
also learns from gamed points, with one fitted offset) and ShiftedOLS (which learns from them
as if they were clean) on the same seeds, over a grid of d and δ where c1(d, δ) runs from large
to tiny, at r0 = 0 and r0 = 0.1. The rows compare final regrets, as ratios of means over seeds
(paired by seed, bootstrapped).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ... import theory
from .measures import at, paired, rows, slope_of
from .rows import ARGUED, Check, Claim, Control, Row

SOURCE = "open problem 1: learning from unclean data (argued in OffsetOLS, not proved)"
#: Where c1 is "tiny" (the goal: at least 2× lower regret there) and where it is "large".
TINY, LARGE = 0.05, 0.05
#: "No worse" allows a quarter: at these horizons SA-OLS's mean regret where c1 is large is a
#: few units with a seed-to-seed spread of about half of it (the quick run's 8 seeds give
#: intervals of ±30% on a ratio of two such means), so a tighter edge would judge noise.
NO_WORSE = 1.25


def _cells(table: pa.Table, r0: float) -> list[tuple[int, float, float]]:
    """(d, δ, c1) of each cell at this r0, by decreasing c1."""
    sub = rows(table, r0=r0)
    found = {(int(d), float(delta)) for d, delta in zip(
        sub.column("dimension").to_pylist(), sub.column("delta").to_pylist(), strict=True)}
    return sorted(((d, delta, theory.c1(d, delta)) for d, delta in found),
                  key=lambda c: -c[2])


def _finals(table: pa.Table, learner: str, cells: list[tuple[int, float, float]],
            r0: float, column: str = "regret") -> list[np.ndarray]:
    return [at(rows(table, dimension=d, delta=delta, r0=r0), learner, column=column)
            for d, delta, _ in cells]


def _ratio(num: list[np.ndarray], den: list[np.ndarray], reduce=np.min):
    """The smallest (or with ``reduce=np.max`` the largest) over cells of mean(num)/mean(den),
    bootstrapped over seeds."""
    k = len(num)
    columns = [c for pair in zip(num, den, strict=True) for c in pair]

    def stat(*means: np.ndarray) -> np.ndarray:
        return reduce([means[2 * i] / means[2 * i + 1] for i in range(k)], axis=0)
    return paired(stat, *columns)


def _ratios_text(cells: list[tuple[int, float, float]], num: list[np.ndarray],
                 den: list[np.ndarray]) -> str:
    return ", ".join(f"c1 {c1:.3g} (d = {d}, δ = {delta}): {a.mean() / b.mean():.2f}×"
                     for (d, delta, c1), a, b in zip(cells, num, den, strict=True))


def _c1_slope(table: pa.Table, learner: str, d: int) -> str:
    """How ``learner``'s regret scales with c1 at dimension d (r0 = 0, δ varying): the log–log
    slope of mean final regret on c1, bootstrapped over seeds."""
    cells = [c for c in _cells(table, 0.0) if c[0] == d]
    c1 = np.array([c[2] for c in cells])
    return slope_of(c1, np.column_stack(_finals(table, learner, cells, 0.0))).shown()


def unclean(table: pa.Table) -> list[Row]:
    """OffsetOLS against SA-OLS where c1 is tiny and where it is large, and the offset's role."""
    out: list[Row] = []
    cells = _cells(table, 0.0)
    tiny = [c for c in cells if c[2] < TINY]
    large = [c for c in cells if c[2] >= LARGE]
    # Where c1 > 0.3 almost every accepted point is clean: nothing to gain, the control.
    plenty = [c for c in cells if c[2] > 0.3]
    saols, offset = (_finals(table, n, tiny, 0.0) for n in ("sa-ols", "offset-ols"))
    horizon = int(rows(table, learner="sa-ols").column("horizon")[0].as_py())
    d_top = tiny[-1][0]
    err_s, err_o = (_finals(table, n, tiny[-1:], 0.0, "theta_error")[0]
                    for n in ("sa-ols", "offset-ols"))
    out.append(Claim(
        "learning from gamed points (offset-ols) reduces the cost of a small c1: ≥ 2× lower "
        "regret than SA-OLS wherever c1 < 0.05 (r0 = 0)", SOURCE,
        f"smallest over those cells of SA-OLS's mean regret / offset-ols's at T = {horizon:,}",
        _ratio(saols, offset), Check("≥ 2 (the goal)", low=2.0),
        Control("the same ratio where c1 > 0.3 (few gamed points: nothing to gain)",
                _ratio(_finals(table, "sa-ols", plenty, 0.0),
                       _finals(table, "offset-ols", plenty, 0.0))),
        detail=f"{_ratios_text(tiny, saols, offset)}; ‖θ̂ − θ‖ at c1 = {tiny[-1][2]:.3g}: "
               f"SA-OLS {err_s.mean():.4f}, offset-ols {err_o.mean():.4f}; regret ∝ c1^s at "
               f"d = {tiny[-1][0]} (δ varying): SA-OLS s = {_c1_slope(table, 'sa-ols', d_top)}, "
               f"offset-ols s = {_c1_slope(table, 'offset-ols', d_top)} (the dependence on c1 "
               f"is reduced, not removed)", label=ARGUED))
    # At r0 = 0 shifted-ols passes this check too (its bias only shrinks θ̂, and the rule
    # ignores θ̂'s length): the row is judged at r0 = 0.1, where the offset is what keeps the
    # fit unbiased, and its control is shifted-ols in the same game and cells.
    saols_l, offset_l, shifted_l = (_finals(table, n, large, 0.1)
                                    for n in ("sa-ols", "offset-ols", "shifted-ols"))
    saols_0 = _finals(table, "sa-ols", large, 0.0)
    out.append(Claim(
        "…and no worse than SA-OLS where c1 ≥ 0.05 (r0 = 0.1)", SOURCE,
        "largest over those cells of offset-ols's mean regret / SA-OLS's",
        _ratio(offset_l, saols_l, np.max),
        Check(f"≤ {NO_WORSE} (no worse, up to a quarter)", high=NO_WORSE),
        Control("shifted-ols (the same gamed points, no offset), same game and cells",
                _ratio(shifted_l, saols_l, np.max)),
        detail="SA-OLS / offset-ols: " + _ratios_text(large, saols_l, offset_l)
               + "; at r0 = 0 the largest ratio is "
               + _ratio(_finals(table, "offset-ols", large, 0.0), saols_0, np.max).shown()
               + " for offset-ols and "
               + _ratio(_finals(table, "shifted-ols", large, 0.0), saols_0, np.max).shown()
               + " for shifted-ols: there the check cannot tell them apart", label=ARGUED))
    # With r0 > 0 the rule's scale matters, and learning gamed points as if clean biases it.
    saols_r, offset_r, shifted_r = (_finals(table, n, tiny, 0.1)
                                    for n in ("sa-ols", "offset-ols", "shifted-ols"))
    out.append(Claim(
        "the offset is what makes gamed points usable: offset-ols ≥ 2× lower regret than "
        "SA-OLS where c1 < 0.05, r0 = 0.1", SOURCE,
        "smallest over those cells of SA-OLS's mean regret / offset-ols's",
        _ratio(saols_r, offset_r), Check("≥ 2", low=2.0),
        Control("shifted-ols (the same gamed points, no offset)", _ratio(saols_r, shifted_r)),
        detail=f"SA-OLS / offset-ols: {_ratios_text(tiny, saols_r, offset_r)}; "
               f"SA-OLS / shifted-ols: {_ratios_text(tiny, saols_r, shifted_r)}",
        label=ARGUED))
    return out


def mixture(uniform: pa.Table, mixed: pa.Table) -> list[Row]:
    """OffsetOLS against SA-OLS where the context density is not symmetric about the boundary:
    there a mover's distance depends on where it lands, and one offset is a biased model."""
    dims = sorted({int(d) for d in mixed.column("dimension").to_pylist()})
    delta = float(mixed.column("delta")[0].as_py())
    cells = [(d, delta, theory.c1(d, delta)) for d in dims]
    off_m, saols_m = (_finals(mixed, n, cells, 0.0) for n in ("offset-ols", "sa-ols"))
    off_u, saols_u = (_finals(uniform, n, cells, 0.0) for n in ("offset-ols", "sa-ols"))
    return [Claim(
        f"offset-ols is no worse than SA-OLS when the context density is not symmetric "
        f"about the boundary (mixture contexts, c0 = 0.5, δ = {delta})", SOURCE,
        f"largest over d = {', '.join(map(str, dims))} of offset-ols's mean regret / SA-OLS's",
        _ratio(off_m, saols_m, np.max),
        Check(f"≤ {NO_WORSE} (no worse, up to a quarter)", high=NO_WORSE),
        Control("the same cells with contexts uniform in the ball", _ratio(off_u, saols_u,
                                                                           np.max), "pass"),
        detail="SA-OLS / offset-ols: " + ", ".join(
            f"d = {d}: {s.mean() / o.mean():.2f}×"
            for d, s, o in zip(dims, saols_m, off_m, strict=True)),
        why="the offset is one number, but where the density changes across the boundary a "
            "mover's distance depends on where it lands: the fit of θ⊥ is biased",
        label=ARGUED)]
