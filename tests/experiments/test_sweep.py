"""Sweeps: resumable after a kill, bit-identical whatever ran them, protective of their results."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.spec import SpecError, check_spec
from strategic_apple_tasting.experiments.sweep import (
    _Inline,
    holds_other,
    load,
    pending_cells,
    run_sweep,
    run_sweeps,
)

from ..helpers import closed_port, with_default_sigint

SMALL = {"horizon": 300, "seeds": 3, "seeds_per_cell": 2,
         "game": {"dimension": [2, 3], "delta": 0.2},
         "learners": [{"name": "sa-ols"}, {"name": "oracle"}]}


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([("learner", "ascending"), ("dimension", "ascending"),
                          ("seed", "ascending"), ("t", "ascending")])


def test_same_results_inline_and_on_a_process_pool(tmp_path):
    spec = check_spec(SMALL)
    run_sweep(spec, tmp_path / "inline", executor=_Inline())
    run_sweep(spec, tmp_path / "pool", workers=2)
    a, b = _sorted(load(tmp_path / "inline")), _sorted(load(tmp_path / "pool"))
    assert set(a.column("learner").to_pylist()) == {"sa-ols", "oracle"}
    assert a.equals(b)


def test_rerun_skips_finished_cells_and_a_changed_spec_is_refused(tmp_path, capsys):
    spec = check_spec(SMALL)
    first = run_sweep(spec, tmp_path, executor=_Inline())
    assert first.done == len(spec.cells) == 8 and first.skipped == 0
    again = run_sweep(spec, tmp_path, executor=_Inline())
    assert again.done == 0 and again.skipped == 8
    changed = check_spec({**SMALL, "horizon": 400})
    with pytest.raises(SpecError, match="holds results of a different spec; pass --extend"):
        run_sweep(changed, tmp_path, executor=_Inline())
    extended = run_sweep(changed, tmp_path, executor=_Inline(), extend=True)
    assert extended.done == 8  # new horizon, new cells; the old ones are kept
    assert len(list((tmp_path / "cells").glob("*.parquet"))) == 16


class _Recording(_Inline):
    """Runs each task at submission and keeps the cells in the order they were submitted."""

    def __init__(self) -> None:
        self.order: list[str] = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        self.order.append(args[0].key)
        return super().submit(fn, *args, **kwargs)


def test_several_sweeps_at_once_give_each_its_own_cells(tmp_path):
    """Two sweeps run together (as ``sat reproduce`` runs its parts) write each directory
    the very cells it gets run alone, and one progress counts them all."""
    a, b = check_spec(SMALL), check_spec({**SMALL, "horizon": 200, "seeds": 2})
    seen = []
    state = run_sweeps([(a, tmp_path / "a"), (b, tmp_path / "b")], executor=_Inline(),
                       progress=seen.append)
    assert state.done == state.total == len(a.cells) + len(b.cells) == seen[-1].done
    run_sweep(a, tmp_path / "a-alone", executor=_Inline())
    run_sweep(b, tmp_path / "b-alone", executor=_Inline())
    assert _sorted(load(tmp_path / "a")).equals(_sorted(load(tmp_path / "a-alone")))
    assert _sorted(load(tmp_path / "b")).equals(_sorted(load(tmp_path / "b-alone")))
    # The control: the two sweeps' cells differ, so a mix-up of directories would show.
    assert not _sorted(load(tmp_path / "a")).equals(_sorted(load(tmp_path / "b")))


def test_several_sweeps_with_costs_start_with_the_costliest_cells(tmp_path):
    """With each sweep's cost an agent-round, the cells are submitted costliest first (the
    schedule the projection assumes), and the time left is weighed by it; without costs, in
    the sweeps' order."""
    cheap, dear = check_spec({**SMALL, "horizon": 400}), check_spec({**SMALL, "horizon": 100})
    costly = _Recording()
    state = run_sweeps([(cheap, tmp_path / "cheap"), (dear, tmp_path / "dear")],
                       executor=costly, costs=[1.0, 100.0])
    first = {c.key for c in dear.cells}
    assert set(costly.order[:len(first)]) == first  # 100 × 100 rounds a seed before 400
    assert state.work_total == pytest.approx(sum(len(c.seeds) * c.horizon for c in cheap.cells)
                                             + 100 * sum(len(c.seeds) * c.horizon
                                                         for c in dear.cells))
    assert state.work_done == pytest.approx(state.work_total) and state.fraction == 1.0
    plain = _Recording()
    run_sweeps([(cheap, tmp_path / "cheap2"), (dear, tmp_path / "dear2")], executor=plain)
    assert set(plain.order[:len(cheap.cells)]) == {c.key for c in cheap.cells}


def test_several_sweeps_refuse_a_directory_of_another_spec_before_running_any(tmp_path):
    spec, other = check_spec(SMALL), check_spec({**SMALL, "horizon": 400})
    run_sweep(other, tmp_path / "taken", executor=_Inline())
    assert holds_other(spec, tmp_path / "taken") and not holds_other(other, tmp_path / "taken")
    assert not holds_other(spec, tmp_path / "new")  # (nothing there yet)
    with pytest.raises(SpecError, match="holds results of a different spec"):
        run_sweeps([(spec, tmp_path / "first"), (spec, tmp_path / "taken")],
                   executor=_Inline())
    assert not list((tmp_path / "first" / "cells").glob("*.parquet"))


# faulthandler (passed on to spawned workers too): a process that does not exit gets SIGABRT
# and prints every thread's stack, so a hang names where it waits.
_PYTHON = [sys.executable, "-X", "faulthandler"]


def _stderr_at_exit(proc: subprocess.Popen, limit: float = 120) -> str:
    """The sweep's stderr once it has exited; if it has not within ``limit`` seconds, fail
    with what is still running and the Python stacks of each."""
    try:
        return proc.communicate(timeout=limit)[1]
    except subprocess.TimeoutExpired:
        pass
    stuck = {p: (_stat(p), _cmdline(p)[:200]) for p in _descendants(proc.pid) | {proc.pid}}
    for pid in stuck:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGABRT)
            time.sleep(0.2)  # one at a time: their stacks do not interleave
    try:
        err = proc.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        err = proc.communicate()[1]
    pytest.fail(f"the sweep did not exit within {limit} s; still running (pid: state, parent, "
                f"session, command): {stuck}; "
                f"its stderr, with their stacks:\n{err}")


def _launch_sweep(tmp_path: Path, seeds: int = 6, workers: int = 1
                  ) -> tuple[subprocess.Popen, Path, Path]:
    """`sat sweep` started in a subprocess (own session, SIGINT at its default)."""
    spec_file = tmp_path / "spec.toml"
    # Cells of ~0.3 s each after the worker starts: slow enough to kill mid-sweep.
    spec_file.write_text(f'horizon = 1500000\nseeds = {seeds}\nseeds_per_cell = 1\n'
                         '[game]\ndimension = 3\n[[learners]]\nname = "sa-ols"\n')
    out = tmp_path / "out"
    cmd = [*_PYTHON, "-c", "from strategic_apple_tasting.cli.main import main; "
           "raise SystemExit(main())", "sweep", str(spec_file), "--out", str(out),
           "--workers", str(workers)]
    proc = subprocess.Popen(with_default_sigint(cmd), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, spec_file, out


def _start_sweep(tmp_path: Path, seeds: int = 6, workers: int = 1
                 ) -> tuple[subprocess.Popen, Path, Path]:
    """`sat sweep` in a subprocess, once its first cell has finished."""
    proc, spec_file, out = _launch_sweep(tmp_path, seeds, workers)
    cells = out / "cells"
    _until(lambda: cells.is_dir() and any(cells.glob("*.parquet")), proc)
    return proc, spec_file, out


def _until(condition, proc: subprocess.Popen, limit: float = 300) -> None:
    """Poll ``condition`` until it holds; fail if the sweep ends first or at the deadline."""
    deadline = time.monotonic() + limit
    while not condition():
        assert proc.poll() is None, "the sweep ended too early"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, session) of a live process, None once it is gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid, _, session = text.rsplit(")", 1)[1].split()[:4]
    return None if state in "ZX" else (state, int(ppid), int(session))


def _descendants(root: int) -> set[int]:
    """Every live process below ``root``, by following parent pids."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = st[1]
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int], session: int) -> set[int]:
    return {p for p in pids if (st := _stat(p)) is not None and st[2] == session}


def _wait_gone(pids: set[int], session: int, limit: float = 10) -> None:
    deadline = time.monotonic() + limit
    while alive := _alive(pids, session):
        assert time.monotonic() < deadline, f"still running after {limit} s: {alive}"
        time.sleep(0.05)


def _freeze(proc: subprocess.Popen) -> set[int]:
    """Stop the sweep and everything it started; returns once all of them are stopped."""
    os.killpg(proc.pid, signal.SIGSTOP)
    group = {proc.pid} | _descendants(proc.pid)
    deadline = time.monotonic() + 30
    while running := {p for p in group if (st := _stat(p)) is not None and st[0] != "T"}:
        assert time.monotonic() < deadline, f"not stopped: {running}"
        time.sleep(0.01)
    return group


def _catches_sigint(pid: int) -> bool:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False


def _cmdline(pid: int) -> bytes:
    """A process's command line, its arguments joined by spaces (empty once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return b""


def _workers(proc: subprocess.Popen) -> set[int]:
    """The sweep's pool workers (not the multiprocessing resource tracker)."""
    return {pid for pid in _descendants(proc.pid) if b"spawn_main" in _cmdline(pid)}


def _resume_and_compare(tmp_path: Path, spec_file: Path, out: Path) -> None:
    cells = out / "cells"
    done = len(list(cells.glob("*.parquet")))
    assert 1 <= done < 6, done
    assert main(["sweep", str(spec_file), "--out", str(out), "--workers", "1"]) == 0
    names = sorted(p.name for p in cells.iterdir())
    assert len(names) == 6 and all(n.endswith(".parquet") for n in names)  # no temp files left
    resumed = _sorted(load(out))
    fresh = tmp_path / "fresh"
    assert main(["sweep", str(spec_file), "--out", str(fresh), "--workers", "1"]) == 0
    assert resumed.equals(_sorted(load(fresh)))


def test_a_sweep_whose_worker_is_killed_says_so_and_resumes(tmp_path):
    psutil = pytest.importorskip("psutil")
    proc, spec_file, out = _start_sweep(tmp_path)
    workers = psutil.Process(proc.pid).children(recursive=True)
    busy = [w for w in workers if "spawn_main" in " ".join(w.cmdline())]
    assert busy, [w.cmdline() for w in workers]
    for w in busy:
        w.kill()  # a worker process dies mid-cell (out of memory, a node lost...)
    err = _stderr_at_exit(proc)
    assert proc.returncode == 1
    assert err.strip().splitlines()[-1].startswith("sat: error: a worker died")
    assert "Traceback" not in err
    _resume_and_compare(tmp_path, spec_file, out)


def _interrupt(proc: subprocess.Popen, out: Path, sig: int = signal.SIGINT) -> None:
    """Ctrl-C (or ``sig``: SIGTERM, to the sweep alone, as ``kill`` sends it) on a frozen
    sweep that cannot have finished; check it stops in one line."""
    assert len(list((out / "cells").glob("*.parquet"))) < 6  # so it cannot exit 0
    group = _descendants(proc.pid) | {proc.pid}
    # Pending until the group continues: the sweep handles it before running another step.
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # Ctrl-C reaches the whole foreground group
    else:
        proc.send_signal(sig)
    os.killpg(proc.pid, signal.SIGCONT)
    err = _stderr_at_exit(proc)
    assert proc.returncode == 130, err
    assert err == (f"sat: interrupted; finished cells are kept in {out}: rerun the same "
                   "command to resume\n")
    _wait_gone(group, proc.pid)


def test_ctrl_c_stops_cleanly_and_keeps_finished_cells(tmp_path):
    proc, spec_file, out = _start_sweep(tmp_path)
    # What a worker stopped mid-write leaves (planted after the run's start-up sweep of such
    # files): it stayed until the next run. The control is the finished cells, kept.
    planted = out / "cells" / ".planted.parquet.x1.tmp"
    planted.write_bytes(b"half a cell")
    _freeze(proc)
    _interrupt(proc, out)
    assert not planted.exists() and list((out / "cells").glob("*.parquet"))
    _resume_and_compare(tmp_path, spec_file, out)


def test_sigterm_stops_a_sweep_as_ctrl_c_does(tmp_path):
    """``kill`` (SIGTERM) ended the sweep where it stood, and Python's resource tracker warned
    of "leaked semaphore objects"; now it stops as Ctrl-C does, in one line."""
    proc, spec_file, out = _start_sweep(tmp_path)
    _freeze(proc)
    _interrupt(proc, out, signal.SIGTERM)
    _resume_and_compare(tmp_path, spec_file, out)


def test_ctrl_c_while_workers_start_is_one_line(tmp_path):
    proc, _, out = _launch_sweep(tmp_path, workers=2)
    # A worker's Python has set up its SIGINT handler: it is importing, or waiting for work.
    _until(lambda: any(_catches_sigint(p) for p in _workers(proc)), proc)
    _freeze(proc)
    _interrupt(proc, out)


def test_a_killed_sweep_resumes_with_nothing_lost_or_duplicated(tmp_path):
    proc, spec_file, out = _start_sweep(tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker, mid-run
    proc.wait()
    _resume_and_compare(tmp_path, spec_file, out)


def test_results_command_and_load(tmp_path, capsys):
    spec = check_spec(SMALL)
    run_sweep(spec, tmp_path, executor=_Inline())
    assert pending_cells(spec, tmp_path) == []
    assert main(["results", str(tmp_path), "--out", str(tmp_path / "all.csv")]) == 0
    text = capsys.readouterr().out
    assert "dimension = 2" in text and "dimension = 3" in text and "sa-ols" in text
    assert Path(tmp_path / "all.csv").stat().st_size > 0
    assert main(["results", str(tmp_path / "nothing")]) == 2
    assert "is not a sweep directory" in capsys.readouterr().err


def test_results_and_report_say_when_a_sweep_is_incomplete(tmp_path, capsys):
    spec = check_spec(SMALL)
    run_sweep(spec, tmp_path, executor=_Inline())
    planned = len(spec.cells)
    # Control: the finished sweep says it is complete, in both.
    assert main(["results", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith(
        f"sweep {tmp_path}: complete, {planned} of {planned} cells\n")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "whole")]) == 0
    page = (tmp_path / "whole" / "index.html").read_text()
    assert "INCOMPLETE" not in page and f"complete, {planned} of {planned} cells" in page
    capsys.readouterr()
    # A sweep stopped half-way: one cell's file is missing.
    next(iter(sorted((tmp_path / "cells").glob("*.parquet")))).unlink()
    assert main(["results", str(tmp_path)]) == 0
    heading = capsys.readouterr().out.splitlines()[0]
    assert heading == (f"sweep {tmp_path}: INCOMPLETE, {planned - 1} of {planned} cells "
                       "finished; rerun its `sat sweep` command to finish it")
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "part")]) == 0
    page = (tmp_path / "part" / "index.html").read_text()
    assert f"(INCOMPLETE: {planned - 1} of {planned} cells)</h1>" in page
    assert f'<p class="status" id="status">{heading}</p>' in page


def test_same_results_on_a_local_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = check_spec(SMALL)
    run_sweep(spec, tmp_path / "inline", executor=_Inline())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert main(["sweep", "--scheduler", cluster.scheduler_address, "--out",
                     str(tmp_path / "dask"), str(_toml(tmp_path))]) == 0
    assert _sorted(load(tmp_path / "inline")).equals(_sorted(load(tmp_path / "dask")))


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys):
    pytest.importorskip("distributed")
    code = main(["sweep", "--scheduler", f"tcp://127.0.0.1:{closed_port()}", "--out",
                 str(tmp_path / "o"), str(_toml(tmp_path))])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sat: error: --scheduler: cannot reach a Dask scheduler at")
    assert "\n" not in err


@pytest.mark.parametrize("greeting, said", [
    (b"SSH-2.0-OpenSSH_9.2p1\r\n", "began with b'SSH-2.0-'"),  # Dask read it as 3 EiB
    ((1 << 40).to_bytes(8, "little"), "began with b'\\x00\\x00\\x00\\x00\\x00\\x01\\x00\\x00'"),
    (b"", "said nothing"),
])
def test_a_scheduler_address_where_something_else_listens_is_one_line(tmp_path, capsys,
                                                                       greeting, said):
    """A plain TCP server on the loopback that greets with junk (an SSH banner, a length of
    1 TiB) or hangs up: refused in one line naming the address, before Dask reads a length."""
    pytest.importorskip("distributed")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"

        def answer() -> None:
            with contextlib.suppress(OSError):
                conn, _ = server.accept()
                with conn:
                    conn.sendall(greeting)

        threading.Thread(target=answer, daemon=True).start()
        code = main(["sweep", "--scheduler", address, "--out", str(tmp_path / "o"),
                     str(_toml(tmp_path))])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err == (f"sat: error: --scheduler: something listens at {address!r}, but it is not "
                   f"a Dask scheduler (it {said}, not Dask's greeting)")


def _toml(tmp_path: Path) -> Path:
    """SMALL as a TOML file."""
    path = tmp_path / "small.toml"
    path.write_text('horizon = 300\nseeds = 3\nseeds_per_cell = 2\n'
                    '[game]\ndimension = [2, 3]\ndelta = 0.2\n'
                    '[[learners]]\nname = "sa-ols"\n[[learners]]\nname = "oracle"\n')
    return path


def test_workers_die_with_a_sweep_killed_by_sigkill(tmp_path):
    proc, _, _ = _start_sweep(tmp_path, seeds=200)  # a minute of cells: still running
    started = _descendants(proc.pid)
    assert _workers(proc) <= started and _workers(proc), started
    os.kill(proc.pid, signal.SIGKILL)  # the sweep alone: its workers are orphaned
    proc.wait()
    _wait_gone(started, proc.pid)  # the workers, and so the resource tracker, end too


def test_a_second_sweep_on_a_directory_fails_at_once_naming_the_first(tmp_path, capsys):
    proc, spec_file, out = _start_sweep(tmp_path, seeds=200)
    try:
        _freeze(proc)  # holds its lock whatever the machine's load
        before = sorted((out / "cells").iterdir())
        assert main(["sweep", str(spec_file), "--out", str(out), "--workers", "1"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"sat: error: {out} is in use by another sweep (pid {proc.pid}, "
                              "started ")
        assert err.count("\n") == 1
        assert sorted((out / "cells").iterdir()) == before  # it ran nothing
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # The lock dies with its holder.
    assert run_sweep(check_spec({**SMALL, "seeds": 1}), tmp_path / "other",
                     executor=_Inline()).done == 4
    with open(out / ".lock") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_held_lock_refuses_a_sweep_before_anything_is_written(tmp_path):
    spec = check_spec(SMALL)
    tmp_path.mkdir(exist_ok=True)
    with open(tmp_path / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fh.write("pid 4242, started 2020-01-01 00:00:00\n")
        fh.flush()
        with pytest.raises(ValueError) as info:
            run_sweep(spec, tmp_path, executor=_Inline())
    assert str(info.value) == (f"{tmp_path} is in use by another sweep (pid 4242, started "
                               "2020-01-01 00:00:00): wait for it to finish or stop it, or use "
                               "another output directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock"]
    assert run_sweep(spec, tmp_path, executor=_Inline()).done == 8  # released: it runs


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_terminate_workers_reaches_the_pools_processes():
    """Guards the one use of concurrent.futures internals (``ProcessPoolExecutor._processes``):
    if a Python release renames it, Ctrl-C would silently wait for running cells."""
    from strategic_apple_tasting.experiments.sweep import default_executor, terminate_workers

    pool = default_executor(1)
    try:
        future = pool.submit(_sleep, 60)
        processes = pool._processes  # the internal that terminate_workers relies on
        deadline = time.monotonic() + 60
        while not processes and time.monotonic() < deadline:
            time.sleep(0.01)
        workers = list(processes.values())
        assert len(workers) == 1 and workers[0].is_alive()
        terminate_workers(pool)
        # The pool's own thread reaps the worker too; whichever does, is_alive turns False.
        deadline = time.monotonic() + 30
        while workers[0].is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not workers[0].is_alive()
        assert future.exception(timeout=30) is not None  # the task did not run to its end
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def test_a_ctrl_c_while_workers_spawn_waits_for_the_spawning_to_end():
    """The kernel may deliver Ctrl-C to any thread that does not block it (a pool's manager
    thread): it must still not interrupt the spawning in the main thread, only be recorded."""
    import threading

    from strategic_apple_tasting.experiments.sweep import sigint_blocked, sigint_recorded

    other = threading.Thread(target=time.sleep, args=(5,), daemon=True)
    other.start()
    reached_the_end = False
    with sigint_recorded() as caught, sigint_blocked():
        signal.pthread_kill(other.ident, signal.SIGINT)  # not blocked in that thread
        for _ in range(100):  # bytecodes enough for a pending handler to run
            time.sleep(0.001)
        reached_the_end = True
    assert reached_the_end and caught == [signal.SIGINT]


def test_a_ctrl_c_another_thread_takes_is_raised_by_the_sweep_itself(tmp_path, monkeypatch):
    """Ctrl-C while the sweep waits for cells is raised by the sweep's own loop, soon, even when
    another thread took the signal: never from inside ``concurrent.futures``, where it could
    leave a future's lock held and the pool's shutdown waiting forever."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from strategic_apple_tasting.experiments import sweep

    release = threading.Event()
    started = threading.Event()

    def stuck_cell(cell, path):  # a cell that runs until the test lets it go
        started.set()
        release.wait(10)
        return 0

    monkeypatch.setattr(sweep, "run_cell", stuck_cell)
    pool = ThreadPoolExecutor(1)

    def ctrl_c_to_the_pool_thread():
        started.wait(10)
        time.sleep(0.2)  # the main thread is waiting for the cell by now
        # This thread takes it (the pool's was started with SIGINT blocked, as workers are).
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        # Without the sweep's own poll, nothing would wake the main thread until the cell
        # ends: let it end after 5 s, so that such a sweep fails the timing below, not hangs
        # (a sweep that raises in time has the test release it at once).
        release.wait(5)
        release.set()

    sender = threading.Thread(target=ctrl_c_to_the_pool_thread, daemon=True)
    sender.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt) as raised:
            run_sweep(check_spec(SMALL), tmp_path, executor=pool)
        took = time.monotonic() - start
    finally:
        release.set()
        pool.shutdown(wait=True)
        sender.join()
    innermost = raised.traceback[-1]
    assert (Path(innermost.path).name, innermost.name) == ("sweep.py", "_run")
    # The signal arrives ~0.2 s after the cell starts and is seen within SIGINT_POLL (0.1 s);
    # 2.5 s is margin for a loaded machine, half of the 5 s an unpolled wait would take.
    assert took < 2.5, took
