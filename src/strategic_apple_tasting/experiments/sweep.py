"""Run a spec's cells on any ``concurrent.futures.Executor``, one Parquet file per finished cell.

Layout of a sweep directory::

    DIR/spec.json          the checked spec (canonical form): a rerun must match it
    DIR/cells/<key>.parquet one per finished cell, written atomically by the worker itself

A cell's file exists only once the cell has finished (temporary file, then rename), so after a
crash or ``kill -9`` the rerun skips exactly the finished cells and runs the rest: nothing lost,
nothing duplicated. Results depend only on the cell (each seed has its own streams), so they are
bit-identical whichever executor or number of workers ran them.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..engine import simulate
from .spec import Cell, Spec, SpecError
from .storage import read_table, write_table

MANIFEST = "spec.json"
CELLS = "cells"


@dataclass
class Progress:
    """Where a sweep stands, passed to the progress callback after each finished cell."""

    done: int
    total: int
    skipped: int
    rounds_done: int
    rounds_total: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Agent-rounds per second over the cells run in this session."""
        return self.rounds_done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def remaining(self) -> float:
        """Seconds left at the current rate (inf before the first cell)."""
        left = self.rounds_total - self.rounds_done
        return left / self.rate if self.rate > 0 else float("inf")


def run_cell(cell: Cell, path: str) -> int:
    """Simulate one cell and write its table to ``path`` (atomically); returns its rounds."""
    game, learner = cell.build()
    table = simulate(game, [learner], cell.horizon, list(cell.seeds), per_decade=cell.per_decade)
    labels = pa.array([cell.label] * table.num_rows)
    table = table.set_column(table.schema.get_field_index("learner"), "learner", labels)
    write_table(table, path)
    return len(cell.seeds) * cell.horizon


def _check_manifest(spec: Spec, out: Path, extend: bool) -> None:
    manifest = out / MANIFEST
    text = json.dumps(spec.canonical, indent=2, sort_keys=True)
    if manifest.exists() and manifest.read_text() != text + "\n" and not extend:
        raise SpecError(f"{out} holds results of a different spec; pass --extend (extend=True) "
                        "to add this spec's cells to it, or choose another output directory")
    out.mkdir(parents=True, exist_ok=True)
    (out / CELLS).mkdir(exist_ok=True)
    tmp = manifest.with_suffix(".tmp")
    tmp.write_text(text + "\n")
    tmp.replace(manifest)


def pending_cells(spec: Spec, out: Path) -> list[Cell]:
    """The spec's cells with no finished file under ``out``."""
    return [c for c in spec.cells if not (out / CELLS / f"{c.key}.parquet").exists()]


def default_executor(workers: int) -> Executor:
    """A local process pool (spawned workers: no inherited threads or compiled state)."""
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("spawn"))


def run_sweep(spec: Spec, out: str | Path, *, executor: Executor | None = None,
              workers: int = 1, extend: bool = False,
              progress: Callable[[Progress], None] | None = None) -> Progress:
    """Run the spec's unfinished cells into ``out``; returns the final progress.

    ``executor`` may be any ``concurrent.futures.Executor`` (a Dask ``Client.get_executor()``
    too); by default a local process pool of ``workers`` processes, shut down at the end.
    On an exception or Ctrl-C, queued cells are cancelled, finished ones stay on disk.
    """
    out = Path(out)
    _check_manifest(spec, out, extend)
    todo = pending_cells(spec, out)
    state = Progress(done=0, total=len(todo), skipped=len(spec.cells) - len(todo),
                     rounds_done=0, rounds_total=sum(len(c.seeds) * c.horizon for c in todo),
                     elapsed=0.0)
    if not todo:
        return state
    own = executor is None
    pool = default_executor(workers) if own else executor
    start = time.perf_counter()
    futures: set[Future] = set()
    try:
        futures = {pool.submit(run_cell, c, str(out / CELLS / f"{c.key}.parquet"))
                   for c in todo}
        while futures:
            finished, futures = wait(futures, return_when=FIRST_COMPLETED)
            for f in finished:
                state.rounds_done += f.result()
                state.done += 1
            state.elapsed = time.perf_counter() - start
            if progress is not None:
                progress(state)
    finally:
        for f in futures:
            f.cancel()
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    return state


def load(out: str | Path) -> pa.Table:
    """Every finished cell of a sweep directory as one table (``.to_pandas()``, polars…).

    Examples
    --------
    >>> import tempfile
    >>> from strategic_apple_tasting.experiments.spec import check_spec
    >>> spec = check_spec({"horizon": 50, "seeds": 2, "game": {"dimension": 2},
    ...                    "learners": [{"name": "oracle"}]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = run_sweep(spec, tmp, executor=_Inline())
    ...     load(tmp).num_rows > 0
    True
    """
    cells = Path(out) / CELLS
    if not (Path(out) / MANIFEST).exists() or not cells.is_dir():
        raise ValueError(f"{str(out)!r} is not a sweep directory (no {MANIFEST})")
    files = sorted(cells.glob("*.parquet"))
    if not files:
        raise ValueError(f"{str(out)!r} has no finished cells yet")
    return pa.concat_tables([read_table(f) for f in files], promote_options="default")


class _Inline(Executor):
    """Runs each task at submission, in this process (for doctests and debugging)."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered through the future, as an executor does
            future.set_exception(exc)
        return future
