"""Sweeps: resumable after a kill, bit-identical whatever ran them, protective of their results."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.spec import SpecError, check_spec
from strategic_apple_tasting.experiments.sweep import _Inline, load, pending_cells, run_sweep

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


def _start_sweep(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    """`sat sweep` in a subprocess (own session), once its first cell has finished."""
    spec_file = tmp_path / "spec.toml"
    # Six cells of ~0.3 s each after the worker starts: slow enough to kill mid-sweep.
    spec_file.write_text('horizon = 1500000\nseeds = 6\nseeds_per_cell = 1\n'
                         '[game]\ndimension = 3\n[[learners]]\nname = "sa-ols"\n')
    out = tmp_path / "out"
    cmd = [sys.executable, "-c", "from strategic_apple_tasting.cli.main import main; "
           "raise SystemExit(main())", "sweep", str(spec_file), "--out", str(out),
           "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    cells = out / "cells"
    deadline = time.monotonic() + 300
    while not (cells.is_dir() and any(cells.glob("*.parquet"))):
        assert proc.poll() is None, "the sweep ended before the kill"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc, spec_file, out


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
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert err.strip().splitlines()[-1].startswith("sat: error: a worker died")
    assert "Traceback" not in err
    _resume_and_compare(tmp_path, spec_file, out)


def test_ctrl_c_stops_cleanly_and_keeps_finished_cells(tmp_path):
    proc, spec_file, out = _start_sweep(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert "interrupted; finished cells are kept" in err
    _resume_and_compare(tmp_path, spec_file, out)


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
    code = main(["sweep", "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path / "o"),
                 str(_toml(tmp_path))])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sat: error: --scheduler: cannot reach a Dask scheduler at")
    assert "\n" not in err


def _toml(tmp_path: Path) -> Path:
    """SMALL as a TOML file."""
    path = tmp_path / "small.toml"
    path.write_text('horizon = 300\nseeds = 3\nseeds_per_cell = 2\n'
                    '[game]\ndimension = [2, 3]\ndelta = 0.2\n'
                    '[[learners]]\nname = "sa-ols"\n[[learners]]\nname = "oracle"\n')
    return path
