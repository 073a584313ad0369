"""Beyond the paper: a lender's backtest on German credit, as claims rows.

Not a sweep but :func:`strategic_apple_tasting.scenarios.backtest.backtest` (protocol
``backtest``): per seed the rows split into a history (70%) and new applicants (30%),
stratified by outcome; an incumbent logistic scorecard, fitted on a fifth of the history with
every outcome, decides the rest of it, so outcomes are known for its loans only; every learner
starts from that history and meets each new applicant once, each gaming the rule in force
within δ. The rows ask what a lender asks: does deploying the recommended learner
(offset-logistic) earn at least what it does today on the same new applicants,

* its scorecard with the cutoff raised by the gaming allowance δ·‖w_gameable‖, and
* that raised scorecard refitted on the outcomes it knows after every 25 loans?

The control is the incumbent kept as it is (its cutoff not raised, never refitted): gamed
applicants pass it, so the same check, applied to it against the same reference, must fail.
naive-logistic is run beside, for the detail. Paired by seed: every arm meets the same split,
history, applicants and agents. The part runs one budget at a time, each saved as it ends
(rerunning resumes).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .measures import mean
from .parts import LENDING_DELTAS
from .rows import Check, Claim, Control, Row

SOURCE = "beyond the paper (German credit, a lender's backtest; measured, no theorem)"
NAME = "backtest"
#: The book it runs on (a name of :data:`~...scenarios.datasets.DATASETS`).
DATA = "german-credit"
#: The learner the README recommends on lending data, and a naive one shown beside it.
RECOMMENDED = "offset-logistic"
LEARNERS = (RECOMMENDED, "naive-logistic")
#: Seeds of the part at each size (the backtest meets each new applicant once: many seeds).
SEEDS = {"full": 30, "quick": 10}
AT_LEAST = Check("≥ 0 (at least the other's profit)", low=0.0)
#: What each row compares the learner with, and what the row calls it.
ARMS = (("incumbent, cutoff raised", "its scorecard with the cutoff raised by δ·‖w_gameable‖"),
        ("incumbent, refitted", "that scorecard refitted on its known outcomes every 25 loans"))
KEPT = "incumbent"


def _file(out: Path, delta: float) -> Path:
    return out / f"delta-{delta:g}.parquet"


def run(out: str | Path, size: str, say: Callable[[str], None] = print, threads: int = 1
        ) -> None:
    """Run the part at ``size`` ("full" or "quick") into the directory ``out``, one budget a
    file (``threads`` learners at once); a budget already saved is kept (resumable)."""
    from ...experiments.storage import write_table
    from ...scenarios.backtest import backtest
    from ...scenarios.datasets import load_dataset

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = load_dataset(DATA)
    seeds = SEEDS[size]
    for delta in LENDING_DELTAS:
        path = _file(out, delta)
        if path.exists():
            say(f"backtest δ = {delta:g}: kept from an earlier run")
            continue
        say(f"backtest δ = {delta:g}: {len(LEARNERS)} learners and 3 baselines, {seeds} seeds")
        frame = backtest(data, LEARNERS, delta=delta, seeds=seeds, threads=threads)
        write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


def load(out: str | Path) -> pa.Table:
    """The part's rows (every budget's), as :func:`run` saved them; ``ValueError`` naming the
    missing budget if one is not there."""
    out = Path(out)
    missing = [f"{d:g}" for d in LENDING_DELTAS if not _file(out, d).exists()]
    if missing:
        raise ValueError(f"{out} holds no backtest at δ = {', '.join(missing)}: run "
                         f"`sat reproduce --parts {NAME}` to finish it")
    return pa.concat_tables(pq.read_table(_file(out, d)) for d in LENDING_DELTAS)


def cost(size: str) -> float:
    """Its estimated time in seconds (for the time left): about 1.5 s a seed and budget with
    two learners (the quick run's 30 took 47 s of CPU on a loaded machine)."""
    return 1.5 * SEEDS[size] * len(LENDING_DELTAS)


def backtest(table: pa.Table) -> list[Row]:
    """Per budget and incumbent arm: the recommended learner's profit on new applicants less the
    arm's (the claim), and the incumbent kept as it is less the arm's (the control)."""
    out: list[Row] = []
    # Per budget, seed by seed (in seed order): each arm's profit per 1,000 new applicants.
    by_arm = (table.to_pandas().sort_values("seed").groupby(["delta", "arm"])["profit"]
              .apply(lambda p: p.to_numpy(dtype=float)))
    seeds = len(set(table.column("seed").to_pylist()))
    for delta in sorted(set(table.column("delta").to_pylist())):
        profit = by_arm.loc[delta]
        mine, kept = profit[RECOMMENDED], profit[KEPT]
        shown = ", ".join(f"{arm} {profit[arm].mean():.1f}"
                          for arm in (*LEARNERS, KEPT, *(a for a, _ in ARMS)))
        for arm, words in ARMS:
            theirs = profit[arm]
            out.append(Claim(
                f"deploying {RECOMMENDED} earns at least what a lender earns today with {words} "
                f"(German credit backtest, δ = {delta:g})", SOURCE,
                f"profit per 1,000 new applicants (protocol backtest: each met once, after the "
                f"incumbent's history) of {RECOMMENDED} less '{arm}', paired by seed, "
                f"{seeds} seeds", mean(mine - theirs), AT_LEAST,
                Control(f"the incumbent kept as it is (cutoff not raised, never refitted) less "
                        f"'{arm}'", mean(kept - theirs)),
                detail=f"profit per 1,000 new applicants: {shown}",
                why=f"{RECOMMENDED} earns less than '{arm}' on new applicants at δ = {delta:g}"))
    return out


__all__ = ["DATA", "LEARNERS", "NAME", "RECOMMENDED", "SEEDS", "backtest", "cost", "load",
           "run"]
