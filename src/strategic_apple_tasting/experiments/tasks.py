"""A part that is not a sweep (a backtest, the adaptive adversary's runs) as independent tasks
on any ``concurrent.futures.Executor``, each task's rows saved as it comes back.

A part names its files and, for each, its tasks in the order the file holds their rows
(:class:`Task`: a module-level function and its arguments, picklable). :func:`run_tasks`
submits every task whose rows are not saved yet, and the process that submitted them writes
each one's rows as it returns: no shared filesystem is needed (a Dask cluster's workers send
them back). Layout of a part's directory::

    DIR/tasks/<key>.parquet   one per finished task: its rows, its key and row count, and the
                              CPU and wall seconds it took in its worker (the footer keys of
                              a sweep's cells, :data:`.sweep.CELL_CPU`, read by :mod:`.timing`)
    DIR/<file>                a file of the part (``delta-0.5.parquet``...), once all its
                              tasks are saved: their rows in the part's order

A rerun after a kill submits only the tasks not saved (a damaged task file is recomputed,
saying so); a file already written is kept as it is. Rows depend only on the task (each seed
has its own streams), so they are the same bits whichever executor ran them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .storage import write_table
from .sweep import (
    CELL_CPU,
    CELL_KEY,
    CELL_ROWS,
    CELL_WALL,
    SIGINT_POLL,
    Progress,
    check_cell,
    sigint_blocked,
    sigint_recorded,
    write_cell,
)

#: The folder of a part's finished tasks.
TASKS = "tasks"
#: The footer keys a task's file adds to its rows' own metadata (left out of the part's files).
TASK_KEYS = (CELL_KEY, CELL_ROWS, CELL_CPU, CELL_WALL)
#: Seconds between two progress lines at most while tasks finish (a line every task
#: otherwise: thousands of short tasks would bury the output).
QUIET = 10.0


@dataclass(frozen=True)
class Task:
    """One independent piece of a part: ``function(*args)`` returns its rows.

    Attributes
    ----------
    key : str
        Its file's name under ``DIR/tasks/`` (without ``.parquet``): unique in the part.
    label : str
        What it is, for progress lines (``δ = 0.5, seed 3``).
    function : callable
        A module-level function (a worker imports it by name) returning a ``pyarrow.Table``.
    args : tuple
        Its picklable arguments.
    cost : float
        Its cost relative to the part's other tasks (a run's horizon, say): the costliest are
        submitted first (no long task starts last while the other workers wait), and the time
        left is the cost still to run at the pace so far.
    """

    key: str
    label: str
    function: Callable[..., pa.Table]
    args: tuple[Any, ...]
    cost: float = 1.0


def timed(function: Callable[..., pa.Table], *args: Any) -> tuple[pa.Table, float, float]:
    """``function(*args)`` in a worker: its rows, and the CPU and wall seconds it took there."""
    wall, cpu = time.perf_counter(), time.process_time()
    rows = function(*args)
    return rows, time.process_time() - cpu, time.perf_counter() - wall


def task_path(out: str | Path, key: str) -> Path:
    """The file of finished task ``key`` of the part in directory ``out``."""
    return Path(out) / TASKS / f"{key}.parquet"


def _rows(path: Path) -> pa.Table:
    """A finished task's rows, without the footer keys its file adds."""
    table = pq.read_table(path)
    meta = {k: v for k, v in (table.schema.metadata or {}).items()
            if k.decode(errors="replace") not in TASK_KEYS}
    return table.replace_schema_metadata(meta or None)


def run_tasks(out: str | Path, files: Mapping[str, Sequence[Task]],
              executor: Executor | None = None, say: Callable[[str], None] = print,
              name: str = "", workers: int = 1) -> int:
    """Run the tasks of the files of a part not yet written into directory ``out``, on
    ``executor``, and write each file once its tasks are all saved; the number of tasks
    submitted.

    Parameters
    ----------
    out : str or Path
        The part's directory (created if needed).
    files : mapping
        A file's name → its tasks, in the order the file holds their rows.
    executor : concurrent.futures.Executor, optional
        Any executor (a local process pool, a Dask client's, a thread pool); by default
        ``workers`` threads of this process.
    say : callable
        Gets the progress lines: one when a file is kept or written, and one as tasks finish
        (every task, or every :data:`QUIET` seconds at most), with the time left.
    name : str
        The part's name, for those lines.
    workers : int
        Threads of the default executor.

    Notes
    -----
    On Ctrl-C (``KeyboardInterrupt``, raised where it is safe) or an exception, queued tasks
    are cancelled; the finished ones stay saved, and a rerun submits only the rest.
    """
    out = Path(out)
    (out / TASKS).mkdir(parents=True, exist_ok=True)
    for tmp in (out / TASKS).glob(".*.tmp"):  # (only this process writes here)
        tmp.unlink(missing_ok=True)
    todo: dict[str, list[Task]] = {}
    for file, tasks in files.items():
        if (out / file).exists():
            say(f"{name} {file}: kept from an earlier run")
            continue
        todo[file] = []
        for task in tasks:
            path = task_path(out, task.key)
            if not path.is_file():
                todo[file].append(task)
            elif (problem := check_cell(path, task.key)) is not None:
                say(f"{name}: task file {path} is damaged ({problem}); recomputing it")
                todo[file].append(task)
    for file in [f for f, pending in todo.items() if not pending]:
        _assemble(out, file, files[file], say, name)
        del todo[file]
    pending = [(file, task) for file, tasks in todo.items() for task in tasks]
    if pending and executor is None:
        with ThreadPoolExecutor(max(1, workers)) as here:
            _submit(out, files, pending, here, say, name)
    elif pending:
        _submit(out, files, pending, executor, say, name)
    return len(pending)


def _submit(out: Path, files: Mapping[str, Sequence[Task]], pending: list[tuple[str, Task]],
            executor: Executor, say: Callable[[str], None], name: str) -> None:
    left = {file: sum(f == file for f, _ in pending) for file, _ in pending}
    pending = sorted(pending, key=lambda job: -job[1].cost)  # (stable: equal costs in order)
    total = sum(task.cost for _, task in pending)
    start = last = time.perf_counter()
    futures: dict[Future, tuple[str, Task]] = {}
    spent = 0.0
    try:
        # Ctrl-C recorded, raised between futures: raised inside concurrent.futures' locks it
        # can leave the pool's shutdown waiting forever (:func:`.sweep.sigint_recorded`);
        # blocked while a local pool spawns its workers (:func:`.sweep.sigint_blocked`).
        with sigint_recorded() as caught:
            with sigint_blocked():
                for file, task in pending:
                    futures[executor.submit(timed, task.function, *task.args)] = (file, task)
            running, done = set(futures), 0
            while running:
                finished, running = wait(running, timeout=SIGINT_POLL,
                                         return_when=FIRST_COMPLETED)
                for future in finished:
                    file, task = futures[future]
                    wall = _save(out, task, future)
                    done += 1
                    spent += task.cost
                    left[file] -= 1
                    now = time.perf_counter()
                    if not running or now - last >= QUIET or done == 1:
                        say(f"{name}: {done} of {len(pending)} tasks ({task.label}: "
                            f"{wall:.1f} s), {_left(now - start, done, spent / total)}")
                        last = now
                    if not left[file]:
                        _assemble(out, file, files[file], say, name)
                if caught:
                    # What came back before the stop is kept: a rerun need not run it again.
                    for future in running:
                        if future.done() and not future.cancelled() and not future.exception():
                            _save(out, futures[future][1], future)
                    raise KeyboardInterrupt
    finally:
        for future in futures:
            future.cancel()


def _left(spent: float, done: int, share: float) -> str:
    """The time so far and, once it means something (:attr:`.sweep.Progress.estimate`: two
    tasks and a tenth of the work, ``share``, by the tasks' costs), the time left at that
    pace.

    >>> _left(12.0, 1, 0.5), _left(12.0, 3, 0.1)
    ('12 s, estimating the time left', '12 s, about 108 s left')
    """
    left = Progress(done=done, total=done, skipped=0, rounds_done=0, rounds_total=0,
                    elapsed=spent, work_done=share, work_total=1.0).estimate
    if left is None:
        return f"{spent:.0f} s, estimating the time left"
    return f"{spent:.0f} s, about {left:.0f} s left"


def _save(out: Path, task: Task, future: Future) -> float:
    """Save a finished task's rows with its seconds; its wall seconds."""
    rows, cpu, wall = future.result()
    write_cell(rows, task_path(out, task.key), task.key, cpu, wall)
    return wall


def _assemble(out: Path, file: str, tasks: Sequence[Task], say: Callable[[str], None],
              name: str) -> None:
    """Write ``file`` from its saved tasks' rows, in their order."""
    write_table(pa.concat_tables(_rows(task_path(out, t.key)) for t in tasks), out / file)
    say(f"{name} {file}: {len(tasks)} tasks written")


__all__ = ["QUIET", "TASKS", "Task", "run_tasks", "task_path", "timed"]
