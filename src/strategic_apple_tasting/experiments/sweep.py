"""Run a spec's cells on any ``concurrent.futures.Executor``, one Parquet file per finished cell.

Layout of a sweep directory::

    DIR/spec.json             the first spec the directory ran (canonical form), never changed
    DIR/specs/<hash>.json     every spec it has run (``--extend`` adds one): the spec, its
                              cells' keys and its labels; a rerun of any of them is accepted
    DIR/cells/<key>.parquet   one per finished cell, written atomically by the worker itself
    DIR/.lock                 locked (``flock``) by the running sweep; names its pid

A cell's file exists only once the cell has finished (temporary file, then rename), so after a
crash or ``kill -9`` the rerun skips exactly the finished cells and runs the rest: nothing lost,
nothing duplicated. Each file's footer records its cell's key and row count; a rerun checks
them and recomputes (saying so) a file that is damaged, and :func:`load` refuses one. Results
depend only on the cell (each seed has its own streams), so they are bit-identical whichever
executor or number of workers ran them.

Only the cells of the specs a directory has run are its results: any other ``*.parquet`` under
``cells/`` is named in a warning and ignored. A directory written before ``specs/`` existed
counts the cells of its ``spec.json`` (or, if that spec no longer checks, every file).

One sweep at a time per directory: a second one fails at once, naming the first one's pid.
Workers of the local pool die with the sweep (even on ``kill -9``) and ignore Ctrl-C, which
the sweep itself handles by stopping them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import multiprocessing
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..engine import simulate
from .spec import Cell, Spec, SpecError, check_spec
from .storage import read_table, write_table, write_text

try:
    import fcntl
except ImportError:  # not POSIX: sweeps run unlocked
    fcntl = None  # type: ignore[assignment]

MANIFEST = "spec.json"
SPECS = "specs"
CELLS = "cells"
LOCK = ".lock"
#: Footer metadata of a cell's file: its key and its number of rows.
CELL_KEY = "sat.cell"
CELL_ROWS = "sat.rows"
#: A cell's CPU and wall seconds in the worker that ran it (for :mod:`.timing`).
CELL_CPU = "sat.cpu_seconds"
CELL_WALL = "sat.wall_seconds"
#: How often a worker checks that the sweep that started it is still alive (seconds).
WATCH_INTERVAL = 0.2
#: How long the sweep waits for a cell before it looks for a recorded Ctrl-C (seconds).
SIGINT_POLL = 0.1


class SweepWarning(UserWarning):
    """Something in a sweep directory was skipped or redone; the message says what and why."""


#: The time left is estimated once this share of the work is done (and two cells or tasks):
#: the first ones' time is mostly a worker's start-up and compiling, which would make it hours
#: too long.
ESTIMATE_AFTER = 0.1


@dataclass
class Progress:
    """Where a sweep stands, passed to the progress callback after each finished cell."""

    done: int
    total: int
    skipped: int
    rounds_done: int
    rounds_total: int
    elapsed: float
    #: The work done and to do, where the cells' agent-rounds cost unlike amounts
    #: (:func:`run_sweeps`' ``costs``); 0: the agent-rounds are the work.
    work_done: float = 0.0
    work_total: float = 0.0

    @property
    def rate(self) -> float:
        """Agent-rounds per second over the cells run in this session."""
        return self.rounds_done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def remaining(self) -> float:
        """Seconds left at the current pace (inf before the first cell): of the work, where
        it is weighed, else of the agent-rounds."""
        done, total = self._measure
        if done <= 0 or self.elapsed <= 0:
            return float("inf")
        return (total - done) * self.elapsed / done

    @property
    def fraction(self) -> float:
        """The share of the work (or of the agent-rounds) done."""
        done, total = self._measure
        return done / total if total > 0 else 1.0

    @property
    def estimate(self) -> float | None:
        """:attr:`remaining` once it means something (two cells and :data:`ESTIMATE_AFTER`
        of the work done), else None."""
        if self.done >= 2 and self.fraction >= ESTIMATE_AFTER and self.remaining != math.inf:
            return self.remaining
        return None

    @property
    def _measure(self) -> tuple[float, float]:
        # (done, total) of the work where it is weighed, else of the agent-rounds
        if self.work_total > 0:
            return self.work_done, self.work_total
        return self.rounds_done, self.rounds_total


def _warn(message: str) -> None:
    warnings.warn(message, SweepWarning, stacklevel=3)


def run_cell(cell: Cell, path: str) -> int:
    """Simulate one cell and write its table to ``path`` (atomically); returns its rounds.
    The file's metadata keeps the cell's CPU and wall seconds (its figures do not)."""
    wall, cpu = time.perf_counter(), time.process_time()
    game, learner = cell.build()
    table = simulate(game, [learner], cell.horizon, list(cell.seeds), per_decade=cell.per_decade)
    labels = pa.array([cell.label] * table.num_rows)
    table = table.set_column(table.schema.get_field_index("learner"), "learner", labels)
    write_cell(table, path, cell.key, time.process_time() - cpu, time.perf_counter() - wall)
    return len(cell.seeds) * cell.horizon


def write_cell(table: pa.Table, path: str | Path, key: str, cpu: float, wall: float) -> None:
    """Write a finished cell's (or a part's task's) ``table`` to ``path`` atomically, its
    footer keeping what :func:`check_cell` checks (its key and row count) and the CPU and
    wall seconds it took (read by :mod:`.timing`)."""
    write_table(table, path, metadata={CELL_KEY: key, CELL_ROWS: str(table.num_rows),
                                       CELL_CPU: f"{cpu:.3f}", CELL_WALL: f"{wall:.3f}"})


def check_cell(path: str | Path, key: str) -> str | None:
    """What is wrong with the finished cell file ``path`` of cell ``key``, or None if nothing.

    Reads only the footer: it must parse and carry the cell's key and row count (files from
    before cells carried them are checked for a readable footer only).
    """
    try:
        meta = pq.read_metadata(path)
    except (pa.ArrowException, OSError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"not a readable Parquet file: {reason}"
    stored = (meta.metadata or {}).get(CELL_KEY.encode())
    if stored is None:
        return None
    if stored.decode(errors="replace") != key:
        return f"it holds cell {stored.decode(errors='replace')}"
    rows = (meta.metadata or {}).get(CELL_ROWS.encode(), b"")
    if rows.decode(errors="replace") != str(meta.num_rows):
        return f"it has {meta.num_rows} rows where {rows.decode(errors='replace')} were written"
    return None


# -- the specs a directory has run ---------------------------------------------------------------

def _spec_text(canonical: dict[str, Any]) -> str:
    return json.dumps(canonical, indent=2, sort_keys=True) + "\n"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _record(spec: Spec) -> dict[str, Any]:
    # The keys and labels are stored, not recomputed, so that a later version's stricter
    # checks or a changed key cannot disown a directory's cells.
    return {"spec": spec.canonical, "cells": [c.key for c in spec.cells],
            "learners": {c.label: c.learner for c in spec.cells}}


def _legacy_record(canonical: dict[str, Any]) -> dict[str, Any]:
    """The record of a ``spec.json`` written before ``specs/`` was (cells None: unknown)."""
    try:
        return _record(check_spec(canonical, max_cells=None))
    except SpecError:
        return {"spec": canonical, "cells": None, "learners": {}}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is unreadable ({type(exc).__name__}: {exc}); restore it, or "
                         "use another output directory") from None


def served(out: str | Path) -> dict[str, dict[str, Any]]:
    """Every spec the sweep directory ``out`` has run, by the hash of its canonical text.

    Each is a record ``{"spec": canonical, "cells": [keys] or None, "learners": {label:
    learner}}``; ``cells`` is None for an old ``spec.json`` whose cells cannot be known.
    """
    out = Path(out)
    records: dict[str, dict[str, Any]] = {}
    folder = out / SPECS
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        record = _read_json(path)
        if not (isinstance(record, dict) and isinstance(record.get("spec"), dict)):
            raise ValueError(f"{path} is not a spec record of a sweep; restore it, or use "
                             "another output directory")
        records[path.stem] = record
    manifest = out / MANIFEST
    if manifest.exists():
        canonical = _read_json(manifest)
        digest = _digest(_spec_text(canonical))
        if digest not in records:
            records[digest] = _legacy_record(canonical)
    return records


@dataclass(frozen=True)
class Completeness:
    """How much of a sweep directory's specs has finished: ``done`` of ``planned`` cells
    (``planned`` None for a directory written before cells were recorded)."""

    done: int
    planned: int | None

    @property
    def complete(self) -> bool | None:
        """Whether every planned cell has finished (None: unknown)."""
        return None if self.planned is None else self.done >= self.planned

    def heading(self, out: str | Path) -> str:
        """One line for the top of a report or a results listing."""
        if self.planned is None:
            return f"sweep {out}: {self.done} finished cell(s) (how many were planned is unknown)"
        if self.complete:
            return f"sweep {out}: complete, {self.done} of {self.planned} cells"
        return (f"sweep {out}: INCOMPLETE, {self.done} of {self.planned} cells finished; "
                "rerun its `sat sweep` command to finish it")


def completeness(out: str | Path) -> Completeness:
    """How many of the cells planned by the specs ``out`` has run have a finished file."""
    out = Path(out)
    planned: set[str] = set()
    for record in served(out).values():
        if record.get("cells") is None:
            done = len(list((out / CELLS).glob("*.parquet")))
            return Completeness(done, None)
        planned.update(record["cells"])
    done = sum((out / CELLS / f"{key}.parquet").is_file() for key in planned)
    return Completeness(done, len(planned))


def served_learners(out: str | Path) -> dict[str, str]:
    """Label → registry name of each learner of every spec the directory ``out`` has run."""
    return {label: name for record in served(out).values()
            for label, name in record.get("learners", {}).items()}


def holds_other(spec: Spec, out: str | Path) -> bool:
    """Whether directory ``out`` holds results of other specs than ``spec`` and not of it
    (running ``spec`` there needs ``extend``)."""
    records = served(out)
    return bool(records) and _digest(_spec_text(spec.canonical)) not in records


def _serve(spec: Spec, out: Path, extend: bool) -> None:
    """Record ``spec`` as one of the directory's specs, or refuse it (``SpecError``)."""
    text = _spec_text(spec.canonical)
    digest = _digest(text)
    records = served(out)
    if holds_other(spec, out) and not extend:
        raise SpecError(f"{out} holds results of a different spec; pass --extend (extend=True) "
                        "to add this spec's cells to it, or choose another output directory")
    (out / SPECS).mkdir(exist_ok=True)
    # An old directory's spec.json gets its record too, so that it stays served.
    for key, record in records.items():
        if not (out / SPECS / f"{key}.json").exists():
            write_text(out / SPECS / f"{key}.json", json.dumps(record, sort_keys=True) + "\n")
    if digest not in records:
        write_text(out / SPECS / f"{digest}.json", json.dumps(_record(spec), sort_keys=True)
                    + "\n")
    if not (out / MANIFEST).exists():
        write_text(out / MANIFEST, text)
    (out / CELLS).mkdir(exist_ok=True)


# -- one sweep at a time -------------------------------------------------------------------------

@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold ``out/.lock`` for the sweep, or fail at once naming the sweep that holds it."""
    if fcntl is None:
        yield
        return
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            raise ValueError(f"{out} is in use by another sweep ("
                             f"{holder or 'its pid is not written yet'}): wait for it to "
                             "finish or stop it, or use another output directory") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
                  .encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # while still locked: the next holder writes its own
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def _os_errors(out: Path) -> Iterator[None]:
    """An ``OSError`` while setting up ``out`` as one line naming the path and the reason."""
    try:
        yield
    except OSError as exc:
        path = exc.filename if exc.filename is not None else out
        if isinstance(exc, FileExistsError | NotADirectoryError):
            reason = "a file is in the way of a directory"
        else:
            reason = exc.strerror or type(exc).__name__
        raise ValueError(f"cannot use the sweep directory {str(out)!r}: {str(path)!r}: "
                         f"{reason}") from None


def pending_cells(spec: Spec, out: str | Path,
                  warn: Callable[[str], None] | None = None) -> list[Cell]:
    """The spec's cells with no sound finished file under ``out``.

    A damaged file (see :func:`check_cell`) counts as unfinished; ``warn`` (default: a
    :class:`SweepWarning`) gets one line for each.
    """
    warn = warn or _warn
    todo = []
    for cell in spec.cells:
        path = Path(out) / CELLS / f"{cell.key}.parquet"
        if not path.is_file():
            todo.append(cell)
        elif (problem := check_cell(path, cell.key)) is not None:
            warn(f"cell {path} is damaged ({problem}); recomputing it")
            todo.append(cell)
    return todo


# -- local workers -------------------------------------------------------------------------------

def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL)
    os._exit(1)  # the sweep is gone (kill -9...): its cells are no one's to write


def _worker_init(parent: int) -> None:
    """Make a pool worker ignore Ctrl-C (the sweep stops it) and die with the sweep."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != parent:  # died while this worker started
        os._exit(1)
    # A thread, not prctl(PR_SET_PDEATHSIG): that fires when the *thread* that spawned the
    # worker ends, which a caller's pool may outlive. The kernel releases the GIL, so the
    # thread runs during a cell too.
    threading.Thread(target=_watch_parent, args=(parent,), name="sat-watch-parent",
                     daemon=True).start()


def default_executor(workers: int) -> Executor:
    """A local process pool (spawned workers: no inherited threads or compiled state).

    Its workers ignore SIGINT and exit within :data:`WATCH_INTERVAL` of the process that
    created the pool, however it ended.
    """
    return ProcessPoolExecutor(max_workers=workers,
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init, initargs=(os.getpid(),))


def drop_unfinished(out: Path) -> None:
    """Delete the temporary files of cells whose writing was stopped (a worker terminated
    mid-write leaves one), in sweep directory ``out``; only while no worker writes there."""
    for tmp in (Path(out) / CELLS).glob(".*.tmp"):
        tmp.unlink(missing_ok=True)


def terminate_workers(pool: Executor) -> None:
    """Stop a local process pool's workers now, mid-cell (their cells stay unfinished).

    The package's one use of ``concurrent.futures`` internals: a ``ProcessPoolExecutor``
    keeps its workers in ``_processes`` (pid → Process) and has no public way to stop them
    mid-task. ``tests/experiments/test_sweep.py`` fails loudly if that attribute goes away.
    Other executors (Dask's) are left alone: their own cancellation applies.
    """
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(OSError, ValueError):
            process.terminate()


@contextlib.contextmanager
def sigint_recorded() -> Iterator[list[int]]:
    """Record Ctrl-C instead of raising it; the caller raises it where that is safe.

    Python raises KeyboardInterrupt at whatever bytecode the main thread runs next, and while
    it waits on futures that can be inside ``concurrent.futures``' own locks: a future's
    condition taken and never released, so the pool's manager thread blocks setting the next
    result and the pool's shutdown waits for it forever (a sweep that ignored Ctrl-C, seen
    once in CI). The handler only appends to the yielded list. Off the main thread there is
    no handler to swap (Python runs them on the main thread only) and nothing is recorded.
    """
    caught: list[int] = []
    swap = threading.current_thread() is threading.main_thread()
    if swap:
        old_handler = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield caught
    finally:
        if swap:
            signal.signal(signal.SIGINT, old_handler)


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread while workers are spawned, so they inherit it blocked.

    Ctrl-C reaches the whole process group, and a worker interrupted while importing prints a
    traceback. Used inside :func:`sigint_recorded`: the kernel may deliver the signal to
    another thread (the pool's manager), whose C handler would otherwise still have the main
    thread raise KeyboardInterrupt in the middle of a spawn, leaving a worker to read half its
    start-up data.
    """
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)  # a held Ctrl-C arrives here


def run_sweep(spec: Spec, out: str | Path, *, executor: Executor | None = None,
              workers: int = 1, extend: bool = False,
              progress: Callable[[Progress], None] | None = None,
              warn: Callable[[str], None] | None = None) -> Progress:
    """Run the spec's unfinished cells into ``out``; returns the final progress.

    Parameters
    ----------
    spec : Spec
        The checked spec.
    out : str or Path
        The sweep directory (created if needed). It must be new, or have run this spec
        before, unless ``extend``.
    executor : concurrent.futures.Executor, optional
        Any executor (a Dask ``Client.get_executor()`` too); by default a local process pool
        of ``workers`` processes (:func:`default_executor`), shut down at the end.
    workers : int
        Size of the default pool.
    extend : bool
        Add this spec's cells to a directory that holds another spec's.
    progress : callable, optional
        Called with the :class:`Progress` after each finished cell.
    warn : callable, optional
        Gets one line per damaged cell file that is recomputed (default: a
        :class:`SweepWarning`).

    Returns
    -------
    Progress
        The final progress.

    Raises
    ------
    SpecError
        ``out`` holds another spec's results and ``extend`` is false.
    ValueError
        Another sweep is running on ``out`` (naming its pid), or ``out`` cannot be created
        or written (naming the path and the reason): both before any cell runs. A cell's
        file cannot be written.

    Notes
    -----
    On an exception queued cells are cancelled and running ones finish; on Ctrl-C the
    default pool's workers are stopped at once. Finished cells stay on disk either way.
    """
    return run_sweeps([(spec, out)], executor=executor, workers=workers, extend=extend,
                      progress=progress, warn=warn)


def run_sweeps(sweeps: Sequence[tuple[Spec, str | Path]], *, executor: Executor | None = None,
               workers: int = 1, extend: bool = False,
               progress: Callable[[Progress], None] | None = None,
               warn: Callable[[str], None] | None = None,
               costs: Sequence[float] | None = None) -> Progress:
    """Run several sweeps' unfinished cells at once, each ``(spec, out)`` as
    :func:`run_sweep` runs one; returns the final progress over them all.

    Every directory is locked and its spec recorded first (one holding another spec's
    results refuses, before any cell runs: :func:`holds_other` tells which), then every cell
    is submitted: sweep after sweep in the order given, or, with ``costs``, the costliest
    first. A worker free at the end of one sweep takes another's cells, where sweeps run one
    after another would leave it waiting for the slowest cell of each (on a cluster, most of
    the workers most of the time).
    ``progress`` is called after each finished cell of any of them, its time left weighed by
    ``costs`` (each sweep's cost of an agent-round, in any unit: the sweeps' rounds may cost
    a thousand times one another's). The other parameters and the errors are
    :func:`run_sweep`'s; on Ctrl-C every directory keeps its finished cells."""
    jobs = [(spec, Path(out)) for spec, out in sweeps]
    with contextlib.ExitStack() as stack:
        for spec, out in jobs:
            with _os_errors(out):
                out.mkdir(parents=True, exist_ok=True)
                stack.enter_context(_locked(out))
                _serve(spec, out, extend)
                # Under the lock no one else writes here: temporary files are a dead run's.
                drop_unfinished(out)
        return _run(jobs, executor, workers, progress, warn, costs)


def _run(jobs: list[tuple[Spec, Path]], executor: Executor | None, workers: int,
         progress: Callable[[Progress], None] | None,
         warn: Callable[[str], None] | None, costs: Sequence[float] | None = None) -> Progress:
    weights = [0.0] * len(jobs) if costs is None else [float(c) for c in costs]
    if len(weights) != len(jobs):
        raise ValueError(f"costs must give one cost a sweep ({len(jobs)}), got {len(weights)}")
    todo = [(cell, out, w) for (spec, out), w in zip(jobs, weights, strict=True)
            for cell in pending_cells(spec, out, warn)]
    if costs is not None:
        # The costliest cells first (longest-processing-time first: within 4/3 of the best
        # schedule), so that no long cell starts last while the other workers wait for it.
        todo.sort(key=lambda job: -len(job[0].seeds) * job[0].horizon * job[2])
    state = Progress(done=0, total=len(todo),
                     skipped=sum(len(spec.cells) for spec, _ in jobs) - len(todo),
                     rounds_done=0,
                     rounds_total=sum(len(c.seeds) * c.horizon for c, _, _ in todo),
                     elapsed=0.0,
                     work_total=sum(len(c.seeds) * c.horizon * w for c, _, w in todo))
    if not todo:
        return state
    own = executor is None
    pool = default_executor(workers) if own else executor
    start = time.perf_counter()
    futures: dict[Future, tuple[Path, float]] = {}  # (its file, its cost an agent-round)
    interrupted = False
    try:
        with sigint_recorded() as caught:
            with sigint_blocked():
                for c, out, w in todo:
                    path = out / CELLS / f"{c.key}.parquet"
                    futures[pool.submit(run_cell, c, str(path))] = (path, w)
            running = set(futures)
            while running:
                # A timeout: a Ctrl-C that another thread took wakes no one here.
                finished, running = wait(running, timeout=SIGINT_POLL,
                                         return_when=FIRST_COMPLETED)
                for f in finished:
                    try:
                        rounds = f.result()
                    except OSError as exc:  # a full disk, a lost mount...
                        path = futures[f][0]
                        raise ValueError(f"cannot write cell {str(path)!r}: "
                                         f"{exc.strerror or exc}; finished cells are kept in "
                                         f"{path.parent.parent}") from None
                    state.rounds_done += rounds
                    state.work_done += rounds * futures[f][1]
                    state.done += 1
                if finished:
                    state.elapsed = time.perf_counter() - start
                    if progress is not None:
                        progress(state)
                if caught:  # even after the last cell: the user asked to stop, and is told so
                    raise KeyboardInterrupt
    except BaseException as exc:
        interrupted = not isinstance(exc, Exception)
        raise
    finally:
        for f in futures:
            f.cancel()
        if own:
            if interrupted:  # workers ignore SIGINT: stop them rather than wait for their cells
                terminate_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)
            if interrupted:
                for _, out in jobs:
                    drop_unfinished(out)
    return state


def load(out: str | Path, *, warn: Callable[[str], None] | None = None) -> pa.Table:
    """Every finished cell of a sweep directory as one table (``.to_pandas()``, polars…).

    Parameters
    ----------
    out : str or Path
        The sweep directory.
    warn : callable, optional
        Gets one line per file under ``cells/`` that is not a cell of the directory's specs,
        which is ignored (default: a :class:`SweepWarning`).

    Raises
    ------
    ValueError
        ``out`` is not a sweep directory, has no finished cells, or a cell file is damaged
        (naming it and the command that recomputes it).

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
    warn = warn or _warn
    out = Path(out)
    cells = out / CELLS
    if not (out / MANIFEST).exists() or not cells.is_dir():
        raise ValueError(f"{str(out)!r} is not a sweep directory (no {MANIFEST})")
    records = served(out)
    owner: dict[str, str] = {}
    known = all(r.get("cells") is not None for r in records.values())
    for digest, record in records.items():
        owner.update(dict.fromkeys(record.get("cells") or (), digest))
    tables = []
    for path in sorted(cells.glob("*.parquet")):
        key = path.stem
        if known and key not in owner:
            warn(f"{path} is not a cell of the spec(s) this sweep directory ran; ignored")
            continue
        spec_file = out / SPECS / f"{owner[key]}.json" if key in owner else "SPEC"
        fix = f"rerun `sat sweep {spec_file} --out {out}` to recompute it"
        problem = check_cell(path, key)
        if problem is None:
            try:
                tables.append(read_table(path))
                continue
            except (pa.ArrowException, OSError) as exc:
                problem = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
        raise ValueError(f"cell file {path} is damaged ({problem}): {fix}")
    if not tables:
        raise ValueError(f"{str(out)!r} has no finished cells yet")
    return pa.concat_tables(tables, promote_options="default")


class _Inline(Executor):
    """Runs each task at submission, in this process (for doctests and debugging)."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered through the future, as an executor does
            future.set_exception(exc)
        return future
