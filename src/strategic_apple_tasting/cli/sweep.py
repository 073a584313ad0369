"""``sat sweep``, ``sat results``, ``sat report`` and ``sat reproduce``: sweeps of a spec, what
they hold, their reports, and the paper's claims from the bundled sweeps."""

from __future__ import annotations

import argparse
import contextlib
import functools
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .common import (
    UsageError,
    positive_int,
    prepare_out,
    progress_display,
    say,
)


def fill_sweep(sweep: argparse.ArgumentParser) -> None:
    from ..engine.simulate import default_threads
    from ..experiments.spec import MAX_CELLS

    sweep.add_argument("spec", type=Path, help="the TOML spec")
    sweep.add_argument("--out", "-o", type=Path, required=True, help="sweep directory")
    sweep.add_argument("--workers", type=positive_int("--workers"), default=default_threads(),
                       help="local worker processes (default: the CPUs available)")
    sweep.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on a Dask cluster (e.g. tcp://host:8786) instead of local "
                       "processes; needs the 'distributed' extra")
    sweep.add_argument("--extend", action="store_true",
                       help="add this spec's cells to a directory holding another spec")
    sweep.add_argument("--max-cells", type=positive_int("--max-cells"), default=MAX_CELLS,
                       help=f"refuse a spec of more cells (or seeds) than this (default "
                       f"{MAX_CELLS:,}); checked before anything runs")


def fill_reproduce(repro: argparse.ArgumentParser) -> None:
    from ..engine.simulate import default_threads

    repro.add_argument("--quick", action="store_true",
                       help=f"small horizons and few seeds: {QUICK_TIME}")
    repro.add_argument("--out", "-o", type=Path, default=None,
                       help="directory (default reproduce-quick/ or reproduce/)")
    repro.add_argument("--parts", type=_part_names, default=None, metavar="NAME[,NAME...]",
                       help="run only these bundled parts (comma-separated: sweeps, and the "
                       "lender's backtest) and the claims that read only them (default: all; "
                       "`sat reproduce --list` names them)")
    repro.add_argument("--list", action="store_true",
                       help="list the bundled parts and the claims that read each, then exit")
    repro.add_argument("--workers", type=positive_int("--workers"), default=default_threads(),
                       help="local worker processes (default: the CPUs available): the "
                       "sweeps' cells and the other parts' tasks (the backtests' seeds, the "
                       "adaptive runs) run on them")
    repro.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the sweeps' cells and the other parts' tasks on a Dask "
                       "cluster (e.g. tcp://host:8786), whose workers see --out at the same "
                       "path (the cells' files; the tasks' rows come back to this process); "
                       "needs the 'distributed' extra")


#: The quick reproduction's wall time as measured, cold (compiling everything first) on 2 cores
#: (`--help` and docs/reproducing.md say it).
QUICK_TIME = "28 min cold, 6-10 min warm, on 2 cores other work was also using"


def _part_names(text: str) -> list[str]:
    """``--parts``: known part names, comma-separated, in the bundled order."""
    from ..experiments.claims import part_names

    names = [n.strip() for n in text.split(",") if n.strip()]
    known = part_names("full")
    for name in names:
        if name not in known:
            raise argparse.ArgumentTypeError(
                f"--parts must name bundled parts ({', '.join(known)}), got {name!r}")
    if not names:
        raise argparse.ArgumentTypeError(f"--parts must name at least one bundled part, "
                                         f"got {text!r}")
    return [n for n in known if n in names]


def fill_results(results: argparse.ArgumentParser) -> None:
    results.add_argument("dir", type=Path, help="sweep directory")
    results.add_argument("--out", "-o", type=Path, help="write all rows here (.parquet or .csv)")


def fill_report(report: argparse.ArgumentParser) -> None:
    report.add_argument("dir", type=Path, help="sweep directory")
    report.add_argument("--out", "-o", type=Path,
                        help="directory for the report (default: DIR/report)")
    report.add_argument("--title", help="page title (default: names the sweep directory)")


#: Seconds to wait for a scheduler to connect and greet.
CONNECT_TIMEOUT = 5.0
#: Bytes a Dask scheduler's greeting (its handshake, a small msgpack map) takes at most, with
#: room: what Dask would allocate for a stranger's first eight bytes read as a length.
MAX_GREETING = 1 << 20


def _executor(address: str | None):
    if address is None:
        return contextlib.nullcontext(None)
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs Dask: pip install "
                         "'strategic-apple-tasting[distributed]'") from None
    _greeted(address)
    try:
        client = Client(address, timeout=f"{CONNECT_TIMEOUT:g}s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--scheduler: cannot reach a Dask scheduler at {address!r} "
                         f"({type(exc).__name__})") from None
    except Exception as exc:  # Dask's reading of a reply it cannot parse: not a scheduler
        raise ValueError(f"--scheduler: what answers at {address!r} is not a Dask scheduler "
                         f"({type(exc).__name__})") from None
    return contextlib.closing(_ClientExecutor(client))


def _greeted(address: str) -> None:
    """Refuse a TCP ``address`` where something other than a Dask scheduler listens, before
    Dask reads it: a Dask listener greets first with its handshake, eight bytes of length and
    a small message; Dask would allocate whatever length a stranger's first bytes spell (an
    SSH banner reads as 3 EiB, a memory error). Other transports are left to Dask."""
    import socket
    import struct

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--scheduler must be a Dask scheduler's address (tcp://HOST:PORT), "
                         f"got {address!r} ({exc})") from None
    if scheme != "tcp":
        return
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as conn:
            head = b""
            while len(head) < 8:
                chunk = conn.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
    except TimeoutError:
        head = None
    except OSError as exc:
        raise ValueError(f"--scheduler: cannot reach a Dask scheduler at {address!r} "
                         f"({type(exc).__name__})") from None
    if head is None or len(head) < 8 or not 0 < struct.unpack("<Q", head)[0] <= MAX_GREETING:
        said = ("said nothing" if head is None or not head else
                f"began with {head[:8]!r}")
        raise ValueError(f"--scheduler: something listens at {address!r}, but it is not a "
                         f"Dask scheduler (it {said}, not Dask's greeting)")


class _ClientExecutor:
    """A Dask client's ``concurrent.futures`` executor that closes the client at the end."""

    def __init__(self, client) -> None:
        self.client = client
        self.executor = client.get_executor()

    def close(self) -> None:
        self.client.close()


def _term_as_ctrl_c(command: Any) -> Any:
    """Run ``command`` with SIGTERM (``kill``, a batch system's stop) taken as Ctrl-C: the
    workers stopped, finished cells kept, one line. By default SIGTERM ended the process
    where it stood, and Python's resource tracker then warned of the pool's "leaked
    semaphore objects"."""
    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        if threading.current_thread() is not threading.main_thread():
            return command(args)  # (signal handlers are the main thread's)
        old = signal.signal(signal.SIGTERM,
                            lambda signum, frame: signal.raise_signal(signal.SIGINT))
        try:
            return command(args)
        finally:
            signal.signal(signal.SIGTERM, old)
    return run


@_term_as_ctrl_c
def cmd_sweep(args: argparse.Namespace) -> int:
    from concurrent.futures import BrokenExecutor

    from ..experiments.spec import load_spec
    from ..experiments.sweep import run_sweep

    spec = load_spec(args.spec, max_cells=args.max_cells)
    prepare_out(args.out, force=True)  # a sweep resumes: its own results are no obstacle
    where = (f"Dask scheduler {args.scheduler}" if args.scheduler
             else f"{args.workers} local worker(s)")
    print(f"sweep: {len(spec.cells)} cells, {spec.rounds:,} agent-rounds on {where} "
          f"-> {args.out}", flush=True)
    with _executor(args.scheduler) as dask, progress_display(len(spec.cells)) as progress:
        try:
            state = run_sweep(spec, args.out, workers=args.workers, extend=args.extend,
                              executor=None if dask is None else dask.executor,
                              progress=progress, warn=say)
        except KeyboardInterrupt:
            print(f"sat: interrupted; finished cells are kept in {args.out}: rerun the same "
                  "command to resume", file=sys.stderr)
            return 130
        except BrokenExecutor as exc:
            print(f"sat: error: a worker died ({type(exc).__name__}); finished cells are kept "
                  f"in {args.out}: rerun the same command to resume", file=sys.stderr)
            return 1
    print(f"done: {state.done} cells run, {state.skipped} already finished; "
          f"results: {args.out}")
    return 0


def duration(seconds: float) -> str:
    """A duration for people: "42 s", "3 min 05 s", "1 h 02 min".

    Examples
    --------
    >>> duration(42.4), duration(185), duration(3725)
    ('42 s', '3 min 05 s', '1 h 02 min')
    """
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def overall_line(k: int, n: int, name: str, cells: int | None, elapsed: float, done: float,
                 total: float, together: int = 1) -> str:
    """The line `sat reproduce` prints as part k of n starts (or, ``together`` > 1, parts k
    to k + together − 1 at once, ``name`` what they are): which, the time so far and, once a
    tenth of the work (weighed by each part's measured cost) and a whole part are done, an
    estimate of the time left at the pace so far (``cells``: None for a part that is not a
    sweep).

    Examples
    --------
    >>> overall_line(1, 21, "stochastic", 20, 0.0, 0.0, 10.0)
    '== part 1 of 21: stochastic (20 cells); 0 s elapsed, estimating the time left'
    >>> overall_line(1, 21, "the sweeps", 200, 0.0, 0.0, 10.0, together=19)
    '== parts 1–19 of 21: the sweeps (200 cells at once); 0 s elapsed, estimating the time left'
    >>> overall_line(21, 21, "backtest", None, 120.0, 4.0, 10.0)
    '== part 21 of 21: backtest; 2 min 00 s elapsed, about 3 min 00 s left'
    """
    from ..experiments.sweep import ESTIMATE_AFTER

    what = name if cells is None else \
        f"{name} ({cells} cells{' at once' if together > 1 else ''})"
    which = f"part {k}" if together == 1 else f"parts {k}–{k + together - 1}"
    line = f"== {which} of {n}: {what}; {duration(elapsed)} elapsed"
    if k > 1 and done >= ESTIMATE_AFTER * total and done > 0:
        return f"{line}, about {duration(elapsed * (total - done) / done)} left"
    return f"{line}, estimating the time left"


def write_part_report(out: Path, name: str, size: str) -> str:
    """Write the report of part ``name`` of a reproduction in ``out``; its path, relative to
    ``out`` (run in a pool worker: the function is importable)."""
    from ..experiments.sweep import load
    from ..reports.html import write_report

    page = write_report(load(out / name, warn=say), out / name / "report",
                        title=f"reproduce ({size}): {name}", learners=spec_learners(out / name))
    return str(page.relative_to(out))


def write_run_report(out: Path, name: str, size: str) -> str:
    """Write the report of a part of a reproduction that is not a sweep (a backtest, or a part
    with its own ``write_report``); its path, relative to ``out``."""
    from ..experiments.claims import RUNS
    from ..reports.backtest import write_backtest_report
    from ..scenarios.datasets import load_dataset

    part = RUNS[name]
    own = getattr(part, "write_report", None)
    if own is not None:  # a part that writes its own page (the adaptive adversary's runs)
        return str(own(out / name, f"reproduce ({size}): {name}").relative_to(out))
    page = write_backtest_report(RUNS[name].load(out / name).to_pandas(),
                                 load_dataset(RUNS[name].data), out / name / "report",
                                 title=f"reproduce ({size}): {name}")
    return str(page.relative_to(out))


@_term_as_ctrl_c
def cmd_reproduce(args: argparse.Namespace) -> int:
    from ..experiments.claims import (
        CHECKS,
        PARTS,
        RUNS,
        check_claims,
        claims_markdown,
        claims_text,
        part_cost,
        part_names,
        tally,
    )
    from ..experiments.spec import check_spec
    from ..experiments.sweep import default_executor
    from ..experiments.timing import timing_markdown
    from ..reports.html import write_claims_page

    size = "quick" if args.quick else "full"
    if args.list:
        for name in part_names(size):
            reads = [check.__module__.rsplit(".", 1)[-1] + "." + check.__name__
                     for names, check in CHECKS if name in names]
            print(f"{name}: {', '.join(reads)}")
        return 0
    out = args.out or Path("reproduce-quick" if args.quick else "reproduce")
    prepare_out(out, force=True)  # resumable: rerunning continues
    chosen = args.parts or part_names(size)
    full_only = [name for name in chosen if name not in part_names(size)]
    if full_only:
        raise UsageError(f"--parts {','.join(full_only)}: run(s) at full size only (a backtest "
                         "on a larger book): drop --quick")
    parts = {name: check_spec(PARTS[size][name]) for name in chosen if name in PARTS[size]}
    runs = [name for name in chosen if name in RUNS]
    total = sum(p.rounds for p in parts.values())
    where = (f"Dask scheduler {args.scheduler}" if args.scheduler
             else f"{args.workers} worker(s)")
    print(f"reproduce ({size}): {len(parts)} sweeps, {total:,} agent-rounds"
          + (f", then {', '.join(runs)}" if runs else "")
          + f", {where} -> {out}", flush=True)
    work = {name: part_cost(name, spec.rounds) for name, spec in parts.items()}
    work.update({name: RUNS[name].cost(size) for name in runs})
    start = time.perf_counter()
    # One pool for every part: its workers keep the compiled kernels they have loaded. On a
    # cluster the cells and the runs' tasks run there, and the pool here writes the reports.
    with default_executor(args.workers) as pool, _executor(args.scheduler) as dask:
        phases = _run_parts(parts, runs, out, size, pool, dask, work, start)
        if phases is None:
            return 130
        # The parts' reports are independent and mostly drawing: the pool writes them while
        # this process measures the claims (they took 40% of the quick run one at a time).
        pages = {name: pool.submit(write_part_report, out, name, size) for name in parts}
        pages.update({name: pool.submit(write_run_report, out, name, size) for name in runs})
        claims, consistency = check_claims(out, parts=chosen)
        (out / "claims.md").write_text(claims_markdown(claims, consistency) + "\n")
        print()
        print(claims_text(claims, consistency))
        print()
        print("writing the reports ...", flush=True)
        links = {name: page.result() for name, page in pages.items()}
    index = write_claims_page(claims, consistency, links, out / "index.html")
    (out / "timing.md").write_text(timing_markdown(
        out, phases, time.perf_counter() - start,
        f"Dask scheduler {args.scheduler}" if args.scheduler else
        f"{args.workers} local worker(s)"))
    broken = sum(not k.holds for k in consistency)
    print(f"claims: {tally(claims)}; consistency checks: "
          f"{len(consistency) - broken} of {len(consistency)} hold; "
          f"{time.perf_counter() - start:,.0f} s")
    print(f"table: {out / 'claims.md'}; what it cost: {out / 'timing.md'}")
    print(f"report: {index}")
    return 0


def _run_parts(parts: dict[str, Any], runs: list[str], out: Path, size: str, pool: Any,
               dask: Any, work: dict[str, float], start: float
               ) -> list[tuple[tuple[str, ...], float]] | None:
    """Run the reproduction's sweeps, every sweep's cells on ``pool`` or on the Dask cluster
    at once (the costliest first: a worker free at the end of one sweep takes another's
    cells), then its other runs one after another, their tasks there too; an overall
    progress line as each phase starts. Each phase's parts and wall time, or None when
    interrupted (finished cells and tasks kept)."""
    from ..experiments.claims import RUNS
    from ..experiments.sweep import drop_unfinished, holds_other, run_sweeps, terminate_workers

    for name, spec in parts.items():  # (every part checked before any runs)
        if holds_other(spec, out / name):
            raise ValueError(f"{out / name} holds results of other sweeps than this "
                             f"version's bundled {name!r} part: use another --out, or "
                             f"delete {out}")
    cells = pool if dask is None else dask.executor
    count, total = len(parts) + len(runs), sum(work.values())
    phases: list[tuple[tuple[str, ...], float]] = []

    def interrupted(what: str) -> None:
        # The workers ignore Ctrl-C; leaving the block would wait for their cells.
        terminate_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        if dask is None:  # (a cluster's cells may still be writing)
            for name in parts:
                drop_unfinished(out / name)
        print(f"sat: interrupted; finished {what} are kept in {out}: rerun the same command "
              "to resume", file=sys.stderr)

    if parts:
        n_cells = sum(len(spec.cells) for spec in parts.values())
        name = next(iter(parts)) if len(parts) == 1 else "the sweeps"
        print(overall_line(1, count, name, n_cells, time.perf_counter() - start, 0.0, total,
                           len(parts)), flush=True)
        began = time.perf_counter()
        with progress_display(n_cells) as progress:
            try:
                run_sweeps([(spec, out / name) for name, spec in parts.items()],
                           executor=cells, progress=progress, warn=say,
                           costs=[work[name] / max(1, spec.rounds)
                                  for name, spec in parts.items()])
            except KeyboardInterrupt:
                interrupted("cells")
                return None
        phases.append((tuple(parts), time.perf_counter() - began))
    done = sum(work[name] for name in parts)
    for k, name in enumerate(runs, len(parts) + 1):
        print(overall_line(k, count, name, None, time.perf_counter() - start, done, total),
              flush=True)
        began = time.perf_counter()
        try:
            # Its tasks' rows come back to this process, which saves them: a cluster's
            # workers need not see --out.
            RUNS[name].run(out / name, size, say=functools.partial(print, flush=True),
                           executor=cells)
        except KeyboardInterrupt:
            interrupted("cells and tasks")
            return None
        phases.append(((name,), time.perf_counter() - began))
        done += work[name]
    return phases


def cmd_results(args: argparse.Namespace) -> int:
    from ..experiments.storage import write_table
    from ..reports.figures import swept_settings
    from ..reports.load import load_results
    from ..reports.summary import summary_text

    if args.out is not None:  # checked before the work, as every --out
        if args.out.suffix not in (".csv", ".parquet"):
            raise ValueError(f"--out must end in .parquet or .csv, got {str(args.out)!r}")
        prepare_out(args.out.parent, force=True)
        if args.out.is_dir():
            raise ValueError(f"--out {str(args.out)!r} is a directory: give a file name")
    table = load_results(args.dir, warn=say)  # a sweep directory or a `sat run` output
    status = _sweep_status(args.dir)
    if status is not None:
        print(status.heading(args.dir))
        print()
    swept = swept_settings(table)
    frame = table.select(swept).to_pandas()
    if not swept:
        print(summary_text(table))
    for values, group in frame.groupby(swept, dropna=False, sort=True) if swept else ():
        print(", ".join(f"{k} = {v}" for k, v in zip(swept, values, strict=True)))
        print(summary_text(table.take(group.index.to_numpy())))
        print()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.out.suffix == ".csv":
            tmp = args.out.with_name(f".{args.out.name}.tmp")
            table.to_pandas().to_csv(tmp, index=False)
            tmp.replace(args.out)
        else:
            write_table(table, args.out)
        print(f"table: {args.out}")
    return 0


def _sweep_status(path: Path) -> Any:
    """A sweep directory's :class:`~..experiments.sweep.Completeness` (None for a run's
    output, whose results are whole by construction)."""
    from ..experiments.sweep import MANIFEST, completeness

    return completeness(path) if (path / MANIFEST).exists() else None


def spec_learners(out: Path) -> dict[str, str]:
    """Label → registry name of each learner of every spec a sweep directory has run (empty if
    unreadable): tells the report which learner a custom label is."""
    import json

    from ..experiments.spec import check_spec
    from ..experiments.sweep import MANIFEST, served_learners

    try:
        return served_learners(out)
    except (OSError, ValueError):
        pass
    try:  # a damaged record under specs/: the first spec's labels are better than none
        spec = check_spec(json.loads((out / MANIFEST).read_text()), max_cells=None)
    except (OSError, ValueError):
        return {}
    return {cell.label: cell.learner for cell in spec.cells}


def cmd_report(args: argparse.Namespace) -> int:
    from ..experiments.sweep import MANIFEST
    from ..reports.html import write_report
    from ..reports.load import load_results

    table = load_results(args.dir, warn=say)  # a sweep directory or a `sat run` output
    out = args.out if args.out is not None else args.dir / "report"
    sweep = (args.dir / MANIFEST).exists()
    status = _sweep_status(args.dir)
    title = args.title or f"{'Sweep' if sweep else 'Results'} report: {args.dir}"
    if status is not None and not status.complete:
        title += (f" (INCOMPLETE: {status.done} of {status.planned} cells)"
                  if status.planned is not None else f" ({status.done} cells, planned unknown)")
    page = write_report(table, out, title=title, learners=spec_learners(args.dir),
                        status=None if status is None else status.heading(args.dir))
    print(page)
    return 0
