"""EXP3-SAE against γ-trembling agents on the greedy trap (`app:trembling`: "Our algorithms and
results in sec:adversarial do not change").

The ``adversarial-trembling-d1`` part is ``adversarial-d1`` (the greedy trap at d = 1, the same
horizons and seeds) with γ-trembling agents: a mover overshoots the boundary by a uniform
α ∈ [0, min(δ − m, γ)]. An overshoot lands further inside the accepted side of the rule it
answers, so every expert's decision, and hence EXP3-SAE's, is the lazy agents': the rows check
the rate (`thm:upd-one-app`, SA-OLS the control) and, as a consistency check, that EXP3-SAE's
regret is the lazy part's seed by seed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa

from . import horizons
from .measures import across, setting
from .rows import Claim, Consistency, Row

SOURCE = "app:trembling (thm:upd-one-app)"


def trembling(table: pa.Table, lazy: pa.Table) -> list[Row]:
    """EXP3-SAE's rate with trembling agents, where SA-OLS's is linear; and its regret equal to
    the lazy agents' part's on every seed and horizon."""
    gamma = setting(table, "tremble")
    where = f"γ = {gamma:g}, "
    out: list[Row] = []
    for row in horizons.adversarial(table, where, rate_only=True):
        if isinstance(row, Claim):
            row = replace(row, claim=row.claim.replace(
                "on an oblivious sequence", "on an oblivious sequence with γ-trembling agents"),
                source=SOURCE)
        out.append(row)
    h, ours = across(table, "exp3-sae")
    h_lazy, theirs = across(lazy, "exp3-sae")
    same = bool(np.array_equal(h, h_lazy) and np.array_equal(ours, theirs))
    gap = float(np.abs(ours - theirs).max()) if ours.shape == theirs.shape else float("nan")
    out.append(Consistency(
        f"EXP3-SAE's regret with γ-trembling agents ({where}d = 1) is the lazy agents' on "
        f"every seed and horizon (an overshoot stays on the accepted side: no decision "
        f"changes)", "app:trembling",
        f"largest difference {gap:.3g} over {ours.size} runs", same))
    return out
