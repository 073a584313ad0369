"""What a run of sweeps cost, and what it would take on more workers.

Each cell's file keeps the CPU and wall seconds its worker spent on it
(:data:`.sweep.CELL_CPU`, :data:`.sweep.CELL_WALL`), and so does each task's of a part that
is not a sweep (:mod:`.tasks`). :func:`cell_seconds` reads them back; :func:`projected_wall`
schedules the cells longest first on ``w`` workers (each takes the next cell when it is free,
as a pool does), which is within 4/3 of the best schedule (Graham's bound for
longest-processing-time-first); :func:`projected_parts` adds that up over phases run one
after another, as ``sat reproduce`` runs them: its sweeps' cells all at once, longest first by
their estimated cost, then each other part's tasks.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow.parquet as pq

from .sweep import CELL_CPU, CELL_WALL, CELLS
from .tasks import TASKS


def cell_seconds(out: str | Path, folder: str = CELLS) -> list[tuple[float, float]]:
    """(CPU, wall) seconds of each finished cell of sweep directory ``out`` that recorded
    them (cells written before they were recorded are left out); with ``folder`` =
    :data:`.tasks.TASKS`, of each finished task of a part that is not a sweep."""
    times = []
    for path in sorted((Path(out) / folder).glob("*.parquet")):
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


def projected_parts(seconds: Iterable[Iterable[float]], workers: int) -> float:
    """The wall time of parts run one after another, each waiting for all its cells (or
    tasks) before the next begins, the cells of each part of these ``seconds`` on
    ``workers`` workers: the sum of each part's :func:`projected_wall`. A worker left idle at
    a part's end waits for the next part, so it is never below the whole pool's projection.

    >>> projected_parts([[4, 3, 3, 2, 2], [4]], 2)  # 8 + 4 (the cells of both at once: 9)
    12.0
    """
    return sum((projected_wall(part, workers) for part in seconds), 0.0)


#: The cluster sizes a run's wall time is projected for.
PROJECTED = (2, 16, 64)


def timing_markdown(out: str | Path, phases: Sequence[tuple[Sequence[str], float]],
                    wall: float, where: str) -> str:
    """What ``sat reproduce`` into ``out`` cost: the date, the machine, where the cells ran,
    the invocation's wall time; per part its cells (or tasks: a part that is not a sweep,
    :mod:`.tasks`) and their CPU seconds (every finished one, those of an earlier, resumed
    invocation too); the phases as they ran, ``phases`` (the parts run at once and their wall
    seconds in this invocation: the sweeps' cells all on the pool together, then each other
    part's tasks); and the wall time the run would take on :data:`PROJECTED` workers. The
    projection is the phases one after another, each waiting for all its cells
    (:func:`projected_parts` of the phases' cells' measured CPU seconds, each phase's
    scheduled longest first), plus what runs on this machine whatever the cluster, as
    measured: the claims' checks and the reports (``wall`` less the phases')."""
    import datetime
    import os
    import platform

    out = Path(out)
    rows, by_phase, stages = [], [], []
    for names, seconds in phases:
        cells_of_phase = []
        for name in names:
            cells = cell_seconds(out / name) or cell_seconds(out / name, TASKS)
            cells_of_phase += [c for c, _ in cells]
            rows.append(f"| {name} | {len(cells):,} | {sum(c for c, _ in cells):,.1f} |")
        by_phase.append(cells_of_phase)
        stages.append(f"| {', '.join(names)} | {len(cells_of_phase):,} | {seconds:,.1f} |")
    every = [c for phase in by_phase for c in phase]
    longest = max(every, default=0.0)
    # The claims' checks and the reports run here, whatever the cluster: added as measured.
    rest = max(0.0, wall - sum(seconds for _, seconds in phases))
    projected = ", ".join(f"{w} workers {projected_parts(by_phase, w) + rest:,.0f} s"
                          for w in PROJECTED)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join([
        f"# What this run cost ({now})",
        "",
        f"- machine: {' '.join(filter(None, (platform.machine(), platform.processor())))}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}",
        f"- cells and tasks ran on: {where}",
        f"- wall time of this invocation: {wall:,.0f} s; CPU time of every cell and task: "
        f"{sum(every):,.0f} s (the longest: {longest:,.1f} s)",
        f"- projected wall time (the phases one after another, as they run, each phase's "
        f"cells or tasks scheduled longest first, plus what runs here whatever the cluster: "
        f"the checks' and reports' {rest:,.0f} s): {projected}",
        "",
        "| part | cells or tasks | CPU s |",
        "|---|---:|---:|",
        *rows,
        "",
        "| run at once (in turn) | cells or tasks | wall s (this invocation) |",
        "|---|---:|---:|",
        *stages,
        ""])
