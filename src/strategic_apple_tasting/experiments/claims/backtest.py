"""Beyond the paper: a lender's backtest on three books, as claims rows.

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
history, applicants and agents. Each book is a part of its own (:data:`PARTS`): German credit
(``backtest``, at the lending budgets), 10,000 applicants drawn from the FICO tables
(``backtest-fico``) and the Taiwan card holders (``backtest-taiwan``), the two at δ ≥ 0.5,
where gaming costs a lender money. A part is a task per budget and seed (:mod:`..tasks`), on
the executor of the sweeps' cells, each saved as it ends (rerunning resumes), and a file per
budget once its seeds are all saved.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..tasks import Task, run_tasks
from .measures import mean, values
from .parts import LENDING_DELTAS
from .rows import MEASURED, Check, Claim, Control, Row

#: The learner docs/lending.md recommends on lending data, and a naive one shown beside it.
RECOMMENDED = "offset-logistic"
LEARNERS = (RECOMMENDED, "naive-logistic")
#: "At least what it earns today", as a lender asks before deploying: not worse, and a tie
#: passes (the words claim no gain).
AT_LEAST = Check("≥ 0 (at least the other's profit)", low=0.0)
#: What each row compares the learner with, and what the row calls it.
ARMS = (("incumbent, cutoff raised", "its scorecard with the cutoff raised by δ·‖w_gameable‖"),
        ("incumbent, refitted", "that scorecard refitted on its known outcomes every 25 loans"))
KEPT = "incumbent"


def _why(arm: str, delta: float, gap: float, kept: float) -> str:
    """The measured reason a row reads "no": the gap, and whether gaming costs the incumbent
    kept as it is anything on this book (where it does not, no strategic answer can pay)."""
    text = f"{RECOMMENDED} earns {-gap:.1f} per 1,000 less than '{arm}' at δ = {delta:g}"
    if kept >= 0:
        return (f"{text}, and gaming does not cost this book's scorecard: kept as it is, "
                f"cutoff not raised, it earns {kept:+.1f} against '{arm}'")
    return (f"{text}, though gaming costs the scorecard kept as it is {-kept:.1f} against "
            f"'{arm}'")


def backtest_seed(data: str, delta: float, seed: int, seeds: int, threads: int = 1
                  ) -> pa.Table:
    """A task of a backtest part: seed ``seed`` of ``seeds`` at budget ``delta`` on the book
    named ``data``, its rows as the run of every seed in one call gives them (on a
    time-ordered book, the same window: ``folds``), ``threads`` learners at once."""
    from ...scenarios.backtest import backtest
    from ...scenarios.datasets import load_dataset

    frame = backtest(load_dataset(data), LEARNERS, delta=delta, seeds=[seed], folds=seeds,
                     threads=threads)
    return pa.Table.from_pandas(frame, preserve_index=False)


@dataclass(frozen=True)
class BacktestPart:
    """One book's backtest as a part of a reproduction: its tasks ``files(size)`` (a budget
    and a seed each), ``run(out, size, say, threads, executor)``, ``load(out)``,
    ``cost(size)`` and its claims rows ``rows(table)``.

    Attributes
    ----------
    name : str
        The part's name (its directory under a reproduction).
    data : str
        The book (a name of :data:`~...scenarios.datasets.DATASETS`).
    label : str
        The book as the rows name it.
    deltas : tuple of float
        The budgets, one file each.
    seeds : dict
        Seeds at each size it runs at (the backtest meets each new applicant once: many
        seeds); a size it lacks does not run it.
    per_seed : float
        Estimated seconds a seed and budget (for the time left).
    """

    name: str
    data: str
    label: str
    deltas: tuple[float, ...]
    seeds: dict[str, int]
    per_seed: float

    @property
    def source(self) -> str:
        return f"a lender's backtest ({self.label}; no theorem)"

    def _file(self, out: Path, delta: float) -> Path:
        return out / f"delta-{delta:g}.parquet"

    def files(self, size: str, threads: int = 1) -> dict[str, list[Task]]:
        """Each budget's file → its tasks at ``size``, a seed each in seed order
        (:func:`backtest_seed`, ``threads`` learners at once). A task per budget and seed: the
        longest, a seed of the Taiwan book at one budget, bounds the part on any cluster. (The
        best-rule search on a seed's new applicants does not depend on the budget, and a
        process keeps it: a worker given another budget of a seed it has run skips it, one
        that has not runs it again, most of a German credit task's time, a small share of a
        Taiwan one's, whose refitted incumbent is most of it.)"""
        seeds = self.seeds[size]
        return {self._file(Path(), delta).name: [
            Task(f"delta-{delta:g}-seed-{seed}", f"δ = {delta:g}, seed {seed}", backtest_seed,
                 (self.data, delta, seed, seeds, threads)) for seed in range(seeds)]
            for delta in self.deltas}

    def run(self, out: str | Path, size: str, say: Callable[[str], None] = print,
            threads: int = 1, executor: Executor | None = None) -> None:
        """Run the part at ``size`` ("full" or "quick") into the directory ``out``, one budget
        a file, its tasks on ``executor`` (by default here, one at a time, ``threads``
        learners at once); a task or a budget already saved is kept (resumable)."""
        run_tasks(out, self.files(size, threads), executor, say, self.name)

    def load(self, out: str | Path) -> pa.Table:
        """The part's rows (every budget's), as :meth:`run` saved them; ``ValueError`` naming
        the missing budget if one is not there."""
        out = Path(out)
        missing = [f"{d:g}" for d in self.deltas if not self._file(out, d).exists()]
        if missing:
            raise ValueError(f"{out} holds no backtest at δ = {', '.join(missing)}: run "
                             f"`sat reproduce --parts {self.name}` to finish it")
        return pa.concat_tables(pq.read_table(self._file(out, d)) for d in self.deltas)

    def cost(self, size: str) -> float:
        """Its estimated time in seconds (for the time left)."""
        return self.per_seed * self.seeds[size] * len(self.deltas)

    def rows(self, table: pa.Table) -> list[Row]:
        """Per budget and incumbent arm: the recommended learner's profit on new applicants
        less the arm's (the claim), and the incumbent kept as it is less the arm's (the
        control)."""
        out: list[Row] = []
        # Per budget, seed by seed (in seed order): each arm's profit per 1,000 new applicants.
        by_arm = (table.to_pandas().sort_values("seed").groupby(["delta", "arm"])["profit"]
                  .apply(lambda p: p.to_numpy(dtype=float)))
        seeds = len(set(table.column("seed").to_pylist()))
        for delta in values(table, "delta"):
            profit = by_arm.loc[delta]
            mine, kept = profit[RECOMMENDED], profit[KEPT]
            shown = ", ".join(f"{arm} {profit[arm].mean():.1f}"
                              for arm in (*LEARNERS, KEPT, *(a for a, _ in ARMS)))
            for arm, words in ARMS:
                theirs = profit[arm]
                out.append(Claim(
                    f"deploying {RECOMMENDED} earns at least what a lender earns today with "
                    f"{words} ({self.label} backtest, δ = {delta:g})", self.source,
                    f"profit per 1,000 new applicants (protocol backtest: each met once, after "
                    f"the incumbent's history) of {RECOMMENDED} less '{arm}', paired by seed, "
                    f"{seeds} seeds", mean(mine - theirs), AT_LEAST,
                    Control(f"the incumbent kept as it is (cutoff not raised, never refitted) "
                            f"less '{arm}'", mean(kept - theirs)),
                    detail=f"profit per 1,000 new applicants: {shown}",
                    why=_why(arm, delta, float((mine - theirs).mean()),
                             float((kept - theirs).mean())), label=MEASURED))
        return out


#: The books, each a part; the larger two at full size only (the quick reproduction runs in
#: the test suite). Seconds a seed and budget with two learners, measured: German credit's
#: quick run of 30 took 47 s of CPU on a loaded machine, 4 seeds of FICO's 50 s, a seed of
#: Taiwan's 36 s (its 9,000 new applicants: 20 seeds pin a difference as well as German
#: credit's 30 of 300).
PARTS = (
    # per_seed: the full run of 2026-11-30's wall seconds a seed and budget (2 threads, a
    # shared machine): 15 s, 33 s and 830 s in all.
    BacktestPart("backtest", "german-credit", "German credit", LENDING_DELTAS,
                 {"full": 30, "quick": 10}, 0.2),
    BacktestPart("backtest-fico", "fico-applicants", "FICO applicants", (0.5, 1.0),
                 {"full": 30}, 0.6),
    BacktestPart("backtest-taiwan", "taiwan-credit", "Taiwan card holders", (0.5, 1.0),
                 {"full": 20}, 21.0),
)
GERMAN = PARTS[0]


__all__ = ["GERMAN", "LEARNERS", "PARTS", "RECOMMENDED", "BacktestPart", "backtest_seed"]
