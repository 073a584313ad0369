"""Beyond the paper: learning against oblivious adversarial contexts in polynomial time (its
Conclusion's second open problem).

The ``adversarial-sampled`` part runs :class:`~strategic_apple_tasting.learners.SampledSAE`
(exponential weights over N = 1024 sampled strategy-aware experts, O(N·d) a round), EXP3-SAE,
SA-OLS and accept-all on the greedy trap at d = 2, 5, 10, across horizons (the learners tuned to
the horizon are run once per horizon). Rates are log–log slopes of mean final regret across
horizons, bootstrapped over seeds.
"""

from __future__ import annotations

import pyarrow as pa

from .measures import across, mean, rows, slope_of
from .rows import Check, Claim, Control, Row

SOURCE = "Conclusion: polynomial time"
#: The exponent to beat: EXP3-SAE's proven (d+1)/(d+2) at d = 2, the smallest of the three.
#: sampled-sae's argued rate, against the best of its sampled experts, is √T (class docstring).
EXPONENT = 0.75


def sampled(table: pa.Table) -> list[Row]:
    """sampled-sae's rate at each d, against EXP3-SAE's on the same seeds and horizons."""
    out: list[Row] = []
    for d in sorted({int(v) for v in table.column("dimension").to_pylist()}):
        sub = rows(table, dimension=d)
        horizons, ours = across(sub, "sampled-sae")
        _, exp3 = across(sub, "exp3-sae")
        _, saols = across(sub, "sa-ols")
        _, accept = across(sub, "accept-all")
        top = f"{horizons[0]:,}…{horizons[-1]:,}"
        out.append(Claim(
            f"sampled-sae (O(N·d) a round) learns on the oblivious greedy trap (d = {d})",
            SOURCE, f"slope of mean regret across T = {top}", slope_of(horizons, ours),
            Check(f"≤ {EXPONENT} (below EXP3-SAE's proven exponent at every d ≥ 2)",
                  high=EXPONENT),
            Control("EXP3-SAE with the paper's parameters", slope_of(horizons, exp3)),
            detail=f"mean regret at T = {horizons[-1]:,}: sampled-sae "
                   f"{mean(ours[:, -1]).shown()}, EXP3-SAE {mean(exp3[:, -1]).shown()}, "
                   f"SA-OLS {mean(saols[:, -1]).shown()} (slope "
                   f"{slope_of(horizons, saols).shown()}), accept-all "
                   f"{mean(accept[:, -1]).shown()}"))
    return out
