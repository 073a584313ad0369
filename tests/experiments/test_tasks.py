"""A part that is not a sweep, as tasks on an executor (experiments/tasks.py): its files are the
rows of the one-process way, bit for bit; a rerun after a kill or a Ctrl-C submits only the
tasks not saved; each task keeps its own CPU and wall seconds."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strategic_apple_tasting.experiments.claims import adaptive, backtest
from strategic_apple_tasting.experiments.storage import write_table
from strategic_apple_tasting.experiments.sweep import CELL_CPU, CELL_WALL, default_executor
from strategic_apple_tasting.experiments.tasks import TASKS, Task, _left, run_tasks, task_path


class Counting(ThreadPoolExecutor):
    """A thread pool that counts the tasks submitted to it."""

    def __init__(self, workers: int = 1) -> None:
        super().__init__(workers)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


#: The adaptive part at two short horizons and two seeds: 16 tasks of milliseconds.
SMALL = adaptive.AdaptivePart("adaptive-small", horizons={"quick": (1_000, 3_000)},
                              seeds={"quick": 2}, per_round={"quick": 3e-6})


def _files(out):
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.parquet"))}


def test_the_runs_on_a_process_pool_write_the_files_of_the_one_process_way(tmp_path):
    """German credit's backtest a task per seed, on a pool of another process: each budget's
    file holds the bytes that the backtest of every seed in one call gives, saved as the part
    saved it before it had tasks (the reference). The adaptive part's tasks on that pool and
    on threads here: the same bytes in every file. Each task keeps its own seconds, taken in
    its worker."""
    from strategic_apple_tasting.scenarios.backtest import backtest as one_call
    from strategic_apple_tasting.scenarios.datasets import load_dataset

    part = backtest.BacktestPart("backtest-small", "german-credit", "German credit", (0.5,),
                                 {"quick": 3}, 0.2)
    with default_executor(1) as pool:
        part.run(tmp_path / "pool", "quick", say=lambda _: None, executor=pool)
        SMALL.run(tmp_path / "adaptive-pool", "quick", say=lambda _: None, executor=pool)
    frame = one_call(load_dataset("german-credit"), backtest.LEARNERS, delta=0.5, seeds=3)
    write_table(pa.Table.from_pandas(frame, preserve_index=False),
                tmp_path / "reference" / "delta-0.5.parquet")
    assert _files(tmp_path / "pool") == _files(tmp_path / "reference")
    assert part.load(tmp_path / "pool").equals(pq.read_table(tmp_path / "reference"))
    for seed in range(3):
        meta = pq.read_metadata(task_path(tmp_path / "pool", f"delta-0.5-seed-{seed}")).metadata
        assert float(meta[CELL_CPU.encode()]) > 0 and float(meta[CELL_WALL.encode()]) > 0

    SMALL.run(tmp_path / "adaptive-here", "quick", say=lambda _: None, threads=2)
    assert _files(tmp_path / "adaptive-pool") == _files(tmp_path / "adaptive-here")
    assert list(_files(tmp_path / "adaptive-here")) == ["horizon-1000.parquet",
                                                        "horizon-3000.parquet"]


def test_a_rerun_after_a_kill_submits_only_the_tasks_not_saved(tmp_path):
    """A run killed with three of a horizon's tasks unsaved (their files gone, the horizon's
    never written) and another horizon's tasks all saved but its file not written: the rerun
    submits those three alone, says it keeps nothing it must not, and writes the bytes of
    the run that was never killed. A damaged task file is recomputed, saying so."""
    with Counting() as whole:
        SMALL.run(tmp_path / "whole", "quick", say=lambda _: None, executor=whole)
    assert whole.submitted == len(SMALL.files("quick")["horizon-1000.parquet"]) * 2 == 16

    out = tmp_path / "killed"
    with Counting() as pool:
        SMALL.run(out, "quick", say=lambda _: None, executor=pool)
    (out / "horizon-1000.parquet").unlink()
    (out / "horizon-3000.parquet").unlink()
    gone = [t.key for t in SMALL.files("quick")["horizon-1000.parquet"][1:4]]
    for key in gone:
        task_path(out, key).unlink()
    said = []
    with Counting() as again:
        SMALL.run(out, "quick", say=said.append, executor=again)
    assert again.submitted == 3
    assert _files(out) == _files(tmp_path / "whole")
    assert "adaptive-small horizon-3000.parquet: 8 tasks written" in said

    # Nothing left: nothing submitted, each file kept.
    said = []
    with Counting() as kept:
        SMALL.run(out, "quick", say=said.append, executor=kept)
    assert kept.submitted == 0
    assert said == ["adaptive-small horizon-1000.parquet: kept from an earlier run",
                    "adaptive-small horizon-3000.parquet: kept from an earlier run"]

    (out / "horizon-1000.parquet").unlink()
    damaged = task_path(out, gone[0])
    damaged.write_bytes(b"not parquet")
    said = []
    with Counting() as fixed:
        SMALL.run(out, "quick", say=said.append, executor=fixed)
    assert fixed.submitted == 1
    assert said[0].startswith(f"adaptive-small: task file {damaged} is damaged (not a "
                              f"readable Parquet file: ") and said[0].endswith("; recomputing it")
    assert _files(out) == _files(tmp_path / "whole")


def _row(i: int) -> pa.Table:
    """A task of the test below: its row; the third asks to stop, as Ctrl-C does, once the
    first two are saved, and those after it take long enough that the stop comes first."""
    if i >= 2:
        time.sleep(0.3)
    if i == 2:
        os.kill(os.getpid(), signal.SIGINT)
    return pa.table({"i": [i]})


def test_ctrl_c_keeps_the_finished_tasks_and_the_rerun_runs_the_rest(tmp_path):
    files = {"all.parquet": [Task(f"t{i}", f"task {i}", _row, (i,)) for i in range(6)]}
    with Counting() as pool, pytest.raises(KeyboardInterrupt):
        run_tasks(tmp_path, files, pool, say=lambda _: None)
    saved = sorted(p.stem for p in (tmp_path / TASKS).glob("*.parquet"))
    # (the third, back with the stop, is saved too unless the stop came first)
    assert saved[:2] == ["t0", "t1"] and len(saved) <= 3
    assert not (tmp_path / "all.parquet").exists()
    with Counting() as pool:
        files["all.parquet"][2] = Task("t2", "task 2", pa.table, ({"i": [2]},))  # (no Ctrl-C)
        assert run_tasks(tmp_path, files, pool, say=lambda _: None) == 6 - len(saved)
        assert pool.submitted == 6 - len(saved)
    assert pq.read_table(tmp_path / "all.parquet").column("i").to_pylist() == list(range(6))


def _table(n: int) -> pa.Table:
    return pa.table({"n": [n]})


class Ordered(ThreadPoolExecutor):
    """One thread; keeps the tasks' keys in the order they were submitted."""

    def __init__(self) -> None:
        super().__init__(1)
        self.order: list[int] = []

    def submit(self, fn, /, *args, **kwargs):
        self.order.append(args[1])  # (timed(function, n): the task's argument)
        return super().submit(fn, *args, **kwargs)


def test_the_costliest_tasks_go_first_and_the_time_left_weighs_them(tmp_path):
    """Tasks of costs 1, 1, 1, 100 (a long run of a part's last file): the costly one is
    submitted first, and once it and one more are done the time left is the cheap ones' share
    of the cost, not half the tasks' count. The control: equal costs keep the part's order."""
    tasks = [Task(f"t{n}", f"task {n}", _table, (n,), cost=c)
             for n, c in enumerate((1.0, 1.0, 1.0, 100.0))]
    pool = Ordered()
    with pool:
        run_tasks(tmp_path / "costs", {"a.parquet": tasks[:2], "b.parquet": tasks[2:]}, pool,
                  lambda _: None, "part")
    assert pool.order == [3, 0, 1, 2]
    assert pq.read_table(tmp_path / "costs" / "a.parquet").column("n").to_pylist() == [0, 1]
    assert pq.read_table(tmp_path / "costs" / "b.parquet").column("n").to_pylist() == [2, 3]
    even, plain = [Task(t.key, t.label, t.function, t.args) for t in tasks], Ordered()
    with plain:
        run_tasks(tmp_path / "even", {"a.parquet": even}, plain, lambda _: None, "part")
    assert plain.order == [0, 1, 2, 3]
    assert _left(101.0, 2, 101 / 103) == "101 s, about 2 s left"  # (by count: 101 s left)
