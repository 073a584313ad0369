"""The paper's claims reproduced: bundled sweeps (and a backtest), and a table "claim,
measured, control, theory, verdict" with the consistency checks below it.

:data:`PARTS` are the sweeps (:mod:`.parts`, in a full and a quick size), :data:`RUNS` the parts
that are not sweeps (:mod:`.backtest`: a lender's backtest on three books); :data:`CHECKS` measure
each claim from the parts' results (:mod:`.stochastic`, :mod:`.horizons`, :mod:`.agents`,
:mod:`.constants`, ...), and
:mod:`.rows` says how a row earns its verdict. ``sat reproduce`` runs both (resumably: each part
is an ordinary sweep directory) and writes the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa

from ..sweep import load
from . import (
    adaptive,
    agents,
    backtest,
    budget,
    c1bound,
    cleanpoints,
    constants,
    delays,
    efficient,
    horizons,
    lemmas,
    lending,
    overconsistency,
    peers,
    scaling,
    stochastic,
    trembling,
    unclean,
    unknown_bandit,
)
from .parts import NON_STRATEGIC, PARTS, SIZES, Size, part_cost, parts
from .rows import (
    ARGUED,
    BEYOND,
    INCONCLUSIVE,
    LABELS,
    MEASURED,
    NO,
    NOT_DISCRIMINATING,
    PAPER,
    VERDICTS,
    YES,
    Check,
    Claim,
    Consistency,
    Control,
    Row,
    claims_markdown,
    claims_text,
    tally,
)

#: (the parts a check reads, the check): each returns its claims and consistency rows.
CHECKS: list[tuple[tuple[str, ...], Callable[..., list[Row]]]] = [
    (("stochastic",), stochastic.stochastic),
    (("bounds",), stochastic.bounds),
    (("stochastic",), constants.constants),
    (("bandit",), stochastic.bandit),
    (("etc",), horizons.etc),
    (("adversarial-d1",), horizons.adversarial),
    (("adversarial-d2",), horizons.adversarial),
    (("adversarial-d2", "adversarial-d2-bandit"), horizons.adversarial_bandit),
    (("adversarial-orthogonal",), efficient.orthogonal),
    (("adversarial-orthogonal",), efficient.sampled),
    (("sampled-stochastic",), efficient.stochastic),
    (("trembling",), agents.trembling),
    (("ellipsoid",), agents.ellipsoid),
    (("mixture",), agents.mixture),
    (("overestimate",), agents.overestimate),
    (("lock-in",), stochastic.lock_in),
    (("stackelberg",), agents.stackelberg),
    (("peers",), peers.peers),
    (("delays", "warm-ups"), delays.delays),
    (("periods", "warm-ups"), delays.periods),
    (("unclean",), unclean.unclean),
    (("unclean", "unclean-mixture"), unclean.mixture),
    (("lending",), lending.lending),
    (("lending", "lending-linear"), lending.misspecified),
    *(((part.name,), part.rows) for part in backtest.PARTS),
    # The budget estimated from the applicants
    (("budget-0.1",), budget.stochastic),
    (("budget-0.3",), budget.stochastic),
    (("budget-0.5",), budget.stochastic),
    (("budget-heterogeneous",), budget.partial),
    (("budget-truthful",), budget.partial),
    (("budget-german",), budget.german),
    (("budget-fico",), budget.fico),
    # Regret's dependence on the bounds' constants (SA-OLS: σ, d, c1·c2, c0; ETC: d)
    (("scaling-sigma",), scaling.sigma),
    (("scaling-dimension",), scaling.dimension),
    (("scaling-delta",), scaling.delta),
    (("scaling-c0",), scaling.c0),
    (("etc-dimension",), scaling.etc_dimension),
    # The unknown-horizon learner under bandit feedback against apple tasting
    (("unknown-horizon-bandit",), unknown_bandit.epochs),
    (("unknown-horizon-bandit-sharp",), unknown_bandit.sharp),
    # The paper's lemmas checked directly: lem:lb's bounds on c1, lem:leq0 and lem:l2-bandit-1
    # per round, cond:clean under any policy, consistency under an over-estimated δ
    (("stochastic",), c1bound.c1_bounds),
    (("stochastic",), lemmas.lemmas),
    (("stochastic",), cleanpoints.clean),
    (("overestimate-consistency",), overconsistency.consistency),
    (("estimation-bound",), lemmas.sharp),
    # EXP3-SAE with γ-trembling agents on the greedy trap
    (("adversarial-trembling-d1", "adversarial-d1"), trembling.trembling),
    # EXP3.P-SAE and EXP3-SAE against an adaptive adversary (not a sweep: RUNS)
    *(((part.name,), part.rows) for part in adaptive.PARTS),
]

#: The parts that are not sweeps: name → part with ``files(size)`` (its independent tasks,
#: :mod:`..tasks`), ``run(out, size, say, threads, executor)``, ``load(out)``, ``cost(size)``
#: and ``data`` (a backtest's book) or ``write_report(out, title)`` (the adaptive adversary's
#: runs); run after the sweeps, their tasks on the sweeps' executor, into ``out/<name>``, each
#: resumable task by task.
RUNS = {part.name: part for part in (*backtest.PARTS, *adaptive.PARTS)}


def part_names(size: str) -> list[str]:
    """Every part of a reproduction at ``size``, in the order they run: the sweeps, then
    :data:`RUNS` (those that run at that size: the backtests of the larger books run at full
    size only)."""
    return [*PARTS[size], *(name for name, part in RUNS.items() if size in part.seeds)]


def check_claims(out: str | Path, parts: Iterable[str] | None = None
                 ) -> tuple[list[Claim], list[Consistency]]:
    """Measure every claim from the part directories under ``out``: the claims, then the
    consistency checks. With ``parts``, only the checks that read nothing else."""
    chosen = None if parts is None else set(parts)
    tables: dict[str, pa.Table] = {}

    def table(part: str) -> pa.Table:
        if part not in tables:
            where = Path(out) / part
            tables[part] = RUNS[part].load(where) if part in RUNS else load(where)
        return tables[part]

    claims: list[Claim] = []
    consistency: list[Consistency] = []
    for names, check in CHECKS:
        if chosen is not None and not set(names) <= chosen:
            continue
        for row in check(*(table(n) for n in names)):
            (claims if isinstance(row, Claim) else consistency).append(row)
    return claims, consistency


__all__ = [
    "ARGUED",
    "BEYOND",
    "CHECKS",
    "INCONCLUSIVE",
    "LABELS",
    "MEASURED",
    "NO",
    "NON_STRATEGIC",
    "NOT_DISCRIMINATING",
    "PAPER",
    "PARTS",
    "RUNS",
    "SIZES",
    "VERDICTS",
    "YES",
    "Check",
    "Claim",
    "Consistency",
    "Control",
    "Size",
    "check_claims",
    "claims_markdown",
    "claims_text",
    "part_cost",
    "part_names",
    "parts",
    "tally",
]
