"""What a run of sweeps cost, and what it would take on more workers.

Each cell's file keeps the CPU and wall seconds its worker spent on it
(:data:`.sweep.CELL_CPU`, :data:`.sweep.CELL_WALL`). :func:`cell_seconds` reads them back;
:func:`projected_wall` schedules the cells longest first on ``w`` workers (each takes the
next cell when it is free, as a pool does), which is within 4/3 of the best schedule
(Graham's bound for longest-processing-time-first).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from pathlib import Path

import pyarrow.parquet as pq

from .sweep import CELL_CPU, CELL_WALL, CELLS


def cell_seconds(out: str | Path) -> list[tuple[float, float]]:
    """(CPU, wall) seconds of each finished cell of sweep directory ``out`` that recorded
    them (cells written before they were recorded are left out)."""
    times = []
    for path in sorted((Path(out) / CELLS).glob("*.parquet")):
        try:
            meta = pq.read_metadata(path).metadata or {}
        except (OSError, ValueError):  # damaged: the sweep's own check says so
            continue
        cpu, wall = meta.get(CELL_CPU.encode()), meta.get(CELL_WALL.encode())
        if cpu is not None and wall is not None:
            times.append((float(cpu), float(wall)))
    return times


def projected_wall(seconds: Iterable[float], workers: int) -> float:
    """The wall time of cells of these ``seconds`` each on ``workers`` workers, longest
    first, each worker taking the next cell when it is free.

    >>> projected_wall([4, 3, 3, 2, 2], 2)  # (the best schedule takes 7: 4 + 3, 3 + 2 + 2)
    8.0
    >>> projected_wall([4, 3, 3, 2, 2], 64)  # never below the longest cell
    4.0
    """
    if workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    free = [0.0] * workers
    for s in sorted(seconds, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + float(s))
    return max(free)


#: The cluster sizes a run's wall time is projected for.
PROJECTED = (2, 16, 64)


def timing_markdown(out: str | Path, walls: dict[str, tuple[float, float | None]],
                    wall: float, where: str) -> str:
    """What ``sat reproduce`` into ``out`` cost: the date, the machine, where the cells ran,
    the invocation's wall time; per part its cells, their CPU seconds (every finished cell,
    those of an earlier, resumed invocation too) and this invocation's wall seconds; the
    runs made in this process (``walls[name][1]`` their CPU seconds); and the wall time the
    cells would take on :data:`PROJECTED` workers, from their measured CPU seconds, plus
    what runs on this machine whatever the cluster, as measured: the in-process runs, the
    claims' checks and the reports (``wall`` less the parts' and runs' own)."""
    import datetime
    import os
    import platform

    out = Path(out)
    rows, every = [], []
    runs_wall = runs_cpu = 0.0
    for name, (seconds, cpu) in walls.items():
        if cpu is None:
            cells = cell_seconds(out / name)
            every += [c for c, _ in cells]
            spent = sum(c for c, _ in cells)
            rows.append(f"| {name} | {len(cells):,} | {spent:,.1f} | {seconds:,.1f} |")
        else:
            runs_wall += seconds
            runs_cpu += cpu
            rows.append(f"| {name} (in process) | – | {cpu:,.1f} | {seconds:,.1f} |")
    total = sum(every) + runs_cpu
    longest = max(every, default=0.0)
    # The claims' checks and the reports run here, whatever the cluster: added as measured.
    rest = max(0.0, wall - sum(seconds for seconds, _ in walls.values()))
    projected = ", ".join(f"{w} workers {projected_wall(every, w) + runs_wall + rest:,.0f} s"
                          for w in PROJECTED)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        f"# What this run cost ({now})",
        "",
        f"- machine: {' '.join(filter(None, (platform.machine(), platform.processor())))}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}",
        f"- cells ran on: {where}",
        f"- wall time of this invocation: {wall:,.0f} s; CPU time of every cell and run: "
        f"{total:,.0f} s (the longest cell: {longest:,.1f} s)",
        f"- projected wall time (the cells scheduled longest first, plus what runs here "
        f"whatever the cluster: the in-process runs' {runs_wall:,.0f} s and the checks' and "
        f"reports' {rest:,.0f} s): {projected}",
        "",
        "| part | cells | CPU s | wall s (this invocation) |",
        "|---|---:|---:|---:|",
        *rows,
        ""])
