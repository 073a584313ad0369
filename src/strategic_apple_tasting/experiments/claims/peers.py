"""Peer libraries' own contextual bandits in the strategic game: MABWiser's LinUCB,
river's LinUCBDisjoint and Vowpal Wabbit's SquareCB, each deciding with its library's own code
(:mod:`strategic_apple_tasting.peers`), against SA-OLS on the same agents and noise."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ...metrics import exponent_along
from .measures import at, mean, paired
from .parts import PEERS
from .rows import MEASURED, Check, Claim, Control, Row

#: No theorem: a measured comparison with libraries practitioners would otherwise run.
SOURCE = "peer libraries (measured; no theorem)"


def _game(table: pa.Table, truthful: float) -> pa.Table:
    return table.filter(pc.equal(table.column("truthful"), truthful))


def peers(table: pa.Table) -> list[Row]:
    """Each peer's regret at T over SA-OLS's, when every agent games (the claim: above 1) and,
    as the control, when no agent does, where SA-OLS's shift is paid for nothing and a peer
    that learns well must come out below SA-OLS."""
    gaming, truthful = _game(table, 0.0), _game(table, 1.0)
    out: list[Row] = []
    # Strict, as the words: a peer exactly as good as SA-OLS (a ratio of 1) has no higher regret.
    more = Check("> 1 (a higher regret than SA-OLS)", low=1.0, strict=True)
    for name in PEERS:
        ratio = paired(lambda p, s: p / s, at(gaming, name), at(gaming, "sa-ols"))
        control = paired(lambda p, s: p / s, at(truthful, name), at(truthful, "sa-ols"))
        out.append(Claim(
            f"{name}, a peer library's own algorithm, has higher regret than SA-OLS when "
            "agents game", SOURCE,
            "mean regret at T over SA-OLS's, paired by seed", ratio, more,
            Control("the same ratio when no agent games (truthful = 1)", control),
            detail=f"{name} {mean(at(gaming, name)).shown()}, SA-OLS "
                   f"{mean(at(gaming, 'sa-ols')).shown()}; slope "
                   f"{exponent_along(gaming, name).shown(2)} (SA-OLS "
                   f"{exponent_along(gaming, 'sa-ols').shown(2)})", label=MEASURED))
    return out
