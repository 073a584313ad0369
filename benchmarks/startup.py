"""Start-up time of `sat`: its help, its version, the package's import, and a small run with the
compiled-code cache warm and cold.

Every figure times a whole process from outside (wall clock from start to exit; CPU is the
process's user + system time as the kernel accounts it on exit), after uncounted warm-up runs.
Each start-up command runs in turn with `python -c pass` (A B A B ...) and its ratio to it is
taken pair by pair, so the ratio holds when the machine's speed drifts; quote medians.

- **warm run**: `sat run --learner sa-ols --dimension 5 --horizon 1000 --seeds 1` with the
  compiled-code cache filled (a cache directory of its own, filled by the warm-up runs). A run
  that writes to the cache all the same compiled something (the package's compiled layers were
  edited meanwhile): it is not counted, and is said.
- **cold run**: the same with `SAT_CACHE_DIR` a fresh empty directory each time, so every
  kernel is compiled: what a learner's first run costs on a new machine or after an upgrade.
- **new learner**: a user's new compiled learner (the guide's `CompiledGreedy`, in a module of
  a new name each run) on the warm cache: its kernels and the engine's loop for it compile,
  nothing else; what writing a learner costs on its first run.

Bytecode is written as in any installed package (`PYTHONDONTWRITEBYTECODE` is dropped from the
children's environment), so the warm-up leaves the `.pyc` files the counted runs read.

    .venv/bin/python benchmarks/startup.py [--runs 21] [--run-runs 5] [--cold-runs 2]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PYTHON = sys.executable
SAT = str(Path(sys.executable).parent / "sat")
RUN = ["run", "--learner", "sa-ols", "--dimension", "5", "--horizon", "1000", "--seeds", "1"]
#: A user's compiled learner (docs/adding-a-learner.md's twin), written to a new module per run.
NEW_LEARNER = """
from typing import NamedTuple

import numpy as np

from strategic_apple_tasting.learners import Learner, LearnerKernels, LearnerTags, njit
from strategic_apple_tasting.learners.least_squares import add_point, new_factor, solve


class GreedyState(NamedTuple):
    factor: np.ndarray
    work: np.ndarray
    explore: float
    r0: float


@njit
def _policy(state, rng, beta):
    if rng.random() < state.explore:
        beta[:] = 0.0
        return -1.0
    solve(state.factor, beta)
    return state.r0


@njit
def _update(state, rng, beta, threshold, x_obs, accepted, reward, observed):
    if not (accepted and observed):
        return False
    add_point(state.factor, x_obs, reward, state.work)
    return True


@njit
def _estimate(state, out):
    solve(state.factor, out)
    return True


class CompiledGreedy(Learner):
    name = "compiled-greedy"
    tags = LearnerTags(strategy_aware=False)
    kernels = LearnerKernels(GreedyState, _policy, _update, _estimate)

    def __init__(self, explore=0.05, r0=None, feedback=None):
        self.explore, self.r0, self.feedback = explore, r0, feedback

    def _init_state(self, d):
        return GreedyState(new_factor(d), np.empty(d + 1), float(self.explore), float(self.r0))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def timed(cmd: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``cmd``; its output is kept only to report a failure."""
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            sys.exit(f"{' '.join(cmd)} exited {proc.returncode}:\n"
                     f"{log.read().decode(errors='replace')[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime


class Figure:
    def __init__(self, name: str) -> None:
        self.name = name
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.ratio: list[float] = []

    def add(self, wall_cpu: tuple[float, float]) -> float:
        self.wall.append(wall_cpu[0])
        self.cpu.append(wall_cpu[1])
        return wall_cpu[0]

    def row(self) -> str:
        wall = f"{statistics.median(self.wall):.3f} ({min(self.wall):.3f}–{max(self.wall):.3f})"
        ratio = f"{statistics.median(self.ratio):.1f}×" if self.ratio else "-"
        return (f"| {self.name} | {len(self.wall)} | {wall} | {statistics.median(self.cpu):.3f} "
                f"| {ratio} |")


def _cache_files(cache: Path) -> set[tuple[str, int]]:
    return {(str(f), f.stat().st_mtime_ns) for f in cache.rglob("*") if f.is_file()}


def paired(reference: Figure, figure: Figure, run: Callable[[], tuple[float, float]],
           runs: int, warmup: int) -> None:
    """``runs`` pairs (reference, command) after ``warmup`` uncounted ones."""
    for _ in range(warmup):
        timed([PYTHON, "-c", "pass"], _env())
        run()
    for _ in range(runs):
        ref = reference.add(timed([PYTHON, "-c", "pass"], _env()))
        figure.ratio.append(figure.add(run()) / ref)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=21, help="counted runs of each start-up command")
    p.add_argument("--run-runs", type=int, default=5, help="counted warm runs of `sat run`")
    p.add_argument("--cold-runs", type=int, default=2, help="cold runs of `sat run` (~30 s each)")
    p.add_argument("--warmup", type=int, default=2, help="uncounted runs before each figure")
    args = p.parse_args()
    if not Path(SAT).exists():
        sys.exit(f"no sat script at {SAT}: run this with the environment's Python")

    print(f"{datetime.date.today()}, Python {platform.python_version()}, "
          f"{len(os.sched_getaffinity(0))} CPUs available, load average "
          f"{os.getloadavg()[0]:.2f}")
    reference = Figure("`python -c pass` (reference)")
    figures = [reference]
    startup = {
        "`sat --help`": [SAT, "--help"],
        "`sat --version`": [SAT, "--version"],
        "`python -c 'import strategic_apple_tasting'`":
            [PYTHON, "-c", "import strategic_apple_tasting"],
    }
    for name, cmd in startup.items():
        figure = Figure(name)
        paired(reference, figure, lambda cmd=cmd: timed(cmd, _env()), args.runs, args.warmup)
        figures.append(figure)

    with tempfile.TemporaryDirectory(prefix="sat-startup-") as tmp:
        outs = (Path(tmp) / f"out-{i}" for i in range(10**6))
        warm = Figure(f"warm `sat {' '.join(RUN)}`")
        cache = Path(tmp) / "cache-warm"
        for _ in range(args.warmup):
            timed([SAT, *RUN, "--out", str(next(outs))], _env(SAT_CACHE_DIR=str(cache)))
        for _ in range(3 * args.run_runs):
            before = _cache_files(cache)
            took = timed([SAT, *RUN, "--out", str(next(outs))], _env(SAT_CACHE_DIR=str(cache)))
            if _cache_files(cache) != before:
                print(f"a warm run compiled ({took[0]:.1f} s): the compiled layers changed; "
                      "not counted")
                continue
            warm.add(took)
            if len(warm.wall) == args.run_runs:
                break
        figures.append(warm)

        new = Figure("new learner (its first run, the package's cache warm)")
        for i in range(args.cold_runs):
            module = f"fresh_learner_{os.getpid()}_{i}"
            (Path(tmp) / f"{module}.py").write_text(NEW_LEARNER)
            new.add(timed([SAT, *RUN[:2], f"{module}:CompiledGreedy", *RUN[3:],
                           "--out", str(next(outs))], _env(SAT_CACHE_DIR=str(cache)), cwd=tmp))
        figures.append(new)

        cold = Figure("cold: the same, `SAT_CACHE_DIR` empty")
        for i in range(args.cold_runs):
            cache = Path(tmp) / f"cache-{i}"
            cache.mkdir()
            cold.add(timed([SAT, *RUN, "--out", str(next(outs))],
                           _env(SAT_CACHE_DIR=str(cache))))
        figures.append(cold)

    print()
    print("| command | runs | wall s, median (min–max) | CPU s, median | vs `python -c pass` |")
    print("|---|---:|---:|---:|---:|")
    for figure in figures:
        if figure.wall:
            print(figure.row())


if __name__ == "__main__":
    main()
