"""What a reproduction cost (experiments/timing.py): the phases run one after another (the
sweeps' cells at once, then each run's tasks), so the projection adds up each phase's own, the
runs' tasks counted as cells are."""

from __future__ import annotations

import re

import pyarrow as pa

from strategic_apple_tasting.experiments.storage import write_table
from strategic_apple_tasting.experiments.sweep import CELL_CPU, CELL_WALL, CELLS
from strategic_apple_tasting.experiments.tasks import TASKS
from strategic_apple_tasting.experiments.timing import (
    projected_parts,
    projected_wall,
    timing_markdown,
)


def test_parts_one_after_another_take_the_sum_of_their_projections():
    parts = [[4.0, 3.0, 3.0, 2.0, 2.0], [4.0]]
    assert projected_parts(parts, 2) == 8.0 + 4.0
    # The control: the cells of both parts on the pool at once would take less, which the
    # parts run one after another never do.
    assert projected_wall([c for p in parts for c in p], 2) == 9.0
    assert projected_parts(parts, 64) == 4.0 + 4.0 and projected_parts([], 2) == 0.0


def _saved(folder, seconds):
    for i, cpu in enumerate(seconds):
        write_table(pa.table({"x": [i]}), folder / f"c{i}.parquet",
                    metadata={CELL_CPU: f"{cpu:g}", CELL_WALL: f"{cpu + 1:g}"})


def test_the_timing_table_counts_a_runs_tasks_as_a_sweeps_cells(tmp_path):
    """A sweep of five cells and a run of two tasks (a backtest's): a row each with the count
    and CPU seconds of its cells or tasks, and the projection per part plus what ran here
    (the invocation's wall time less the parts')."""
    _saved(tmp_path / "sweep" / CELLS, [4, 3, 3, 2, 2])
    _saved(tmp_path / "backtest" / TASKS, [10, 1])
    text = timing_markdown(tmp_path, [(("sweep",), 9.5), (("backtest",), 11.5)], 30.0,
                           "2 local worker(s)")
    assert "| sweep | 5 | 14.0 |" in text and "| backtest | 2 | 11.0 |" in text
    assert "| sweep | 5 | 9.5 |" in text and "| backtest | 2 | 11.5 |" in text
    assert "in process" not in text
    assert "CPU time of every cell and task: 25 s (the longest: 10.0 s)" in text
    # 2 workers: 8 + 10, plus the 9 s spent here; 16: 4 + 10 + 9. (Both parts' cells on one
    # pool at once, the control, would be 13 + 9 on 2 workers.)
    found = re.search(r"checks' and reports' 9 s\): 2 workers (\d+) s, 16 workers (\d+) s, "
                      r"64 workers (\d+) s", text)
    assert found and found.groups() == ("27", "23", "23"), text


def test_sweeps_run_at_once_are_projected_as_one_pool(tmp_path):
    """Two sweeps whose cells ran together (one phase) are projected as one pool of their
    cells, then the run's tasks: 9 + 10 on 2 workers, where the same parts one after another
    (the control, the phases as before) take 8 + 4 + 10."""
    _saved(tmp_path / "a" / CELLS, [4, 3, 3, 2, 2])
    _saved(tmp_path / "b" / CELLS, [4])
    _saved(tmp_path / "backtest" / TASKS, [10, 1])
    together = timing_markdown(tmp_path, [(("a", "b"), 9.5), (("backtest",), 11.5)], 21.0,
                               "2 local worker(s)")
    assert "| a, b | 6 | 9.5 |" in together and "| b | 1 | 4.0 |" in together
    assert "checks' and reports' 0 s): 2 workers 19 s, 16 workers 14 s" in together
    apart = timing_markdown(tmp_path, [(("a",), 8.0), (("b",), 1.5), (("backtest",), 11.5)],
                            21.0, "2 local worker(s)")
    assert "checks' and reports' 0 s): 2 workers 22 s, 16 workers 18 s" in apart
