"""Sweep directories: every spec they ran is kept, only their own sound cells are results, and
a directory that cannot be written is one line before any cell runs."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
from concurrent.futures import Executor, Future
from pathlib import Path

import pyarrow as pa
import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.cli.sweep import spec_learners
from strategic_apple_tasting.experiments.spec import SpecError, check_spec
from strategic_apple_tasting.experiments.sweep import (
    SweepWarning,
    _Inline,
    load,
    pending_cells,
    run_sweep,
)

SMALL = {"horizon": 300, "seeds": 3, "seeds_per_cell": 2,
         "game": {"dimension": [2, 3], "delta": 0.2},
         "learners": [{"name": "sa-ols"}, {"name": "oracle"}]}
TOML = ('horizon = 300\nseeds = 3\nseeds_per_cell = 2\n[game]\ndimension = [2, 3]\ndelta = 0.2\n'
        '[[learners]]\nname = "sa-ols"\n[[learners]]\nname = "oracle"\n')


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([("learner", "ascending"), ("dimension", "ascending"),
                          ("seed", "ascending"), ("t", "ascending")])


class _Refuse(Executor):
    """An executor that fails the test if any cell is submitted."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        raise AssertionError(f"a cell was submitted: {args}")


class _DiskFull(Executor):
    """Every cell fails as a worker does when the disk is full."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: Future = Future()
        future.set_exception(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), args[1]))
        return future


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """SMALL run once, untouched: the reference results."""
    out = tmp_path_factory.mktemp("clean")
    run_sweep(check_spec(SMALL), out, executor=_Inline())
    return out


def _cells(out: Path) -> list[Path]:
    return sorted((out / "cells").glob("*.parquet"))


def _damage(out: Path) -> list[Path]:
    """Truncate one cell file, overwrite one with garbage, replace one by another cell."""
    cells = _cells(out)
    truncated, garbage, swapped = cells[1], cells[4], cells[6]
    truncated.write_bytes(truncated.read_bytes()[:-20])
    garbage.write_bytes(os.urandom(3000))
    shutil.copy(cells[0], swapped)  # a sound file, of another cell
    return [truncated, garbage, swapped]


def test_a_rerun_recomputes_exactly_the_damaged_cells_saying_so(tmp_path, clean, capsys):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(TOML)
    damaged = _damage(out)
    untouched = {p: p.stat().st_mtime_ns for p in _cells(out) if p not in damaged}
    assert main(["sweep", str(spec_file), "--out", str(out), "--workers", "1"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 3, lines
    said = {line.split(" is damaged (")[0]: line for line in lines}
    assert set(said) == {f"sat: cell {p}" for p in damaged}
    assert all(line.endswith("; recomputing it") for line in lines)
    assert "(it holds cell " in said[f"sat: cell {damaged[2]}"]
    assert "done: 3 cells run, 5 already finished" in captured.out
    assert all(p.stat().st_mtime_ns == t for p, t in untouched.items())  # only those reran
    assert _sorted(load(out)).equals(_sorted(load(clean)))
    assert pending_cells(check_spec(SMALL), out) == []


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["truncated", "garbage", "another-cell"])
def test_loading_a_damaged_cell_names_it_and_the_fix(tmp_path, clean, capsys, kind):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    damaged = _damage(out)
    for i, path in enumerate(damaged):
        if i != kind:
            shutil.copy(clean / "cells" / path.name, path)
    for broken in [damaged[kind]]:
        with pytest.raises(ValueError) as info:
            load(out)
        text = str(info.value)
        assert text.startswith(f"cell file {broken} is damaged (")
        assert "\n" not in text
        assert main(["results", str(out)]) == 2
        assert capsys.readouterr().err == f"sat: error: {text}\n"
        # The command the message gives recomputes the cell.
        command = re.search(r"rerun `sat sweep (\S+) --out (\S+)` to recompute it$", text)
        assert command is not None, text
        assert main(["sweep", command.group(1), "--out", command.group(2), "--workers",
                     "1"]) == 0
        assert "done: 1 cells run, 7 already finished" in capsys.readouterr().out
    assert _sorted(load(out)).equals(_sorted(load(clean)))


def test_a_cell_with_a_wrong_row_count_is_refused_and_recomputed(tmp_path, clean):
    from strategic_apple_tasting.experiments.storage import read_table, write_table

    out = tmp_path / "out"
    shutil.copytree(clean, out)
    victim = _cells(out)[2]
    table = read_table(victim)
    write_table(table.slice(0, 10), victim, metadata={"sat.cell": victim.stem,
                                                      "sat.rows": str(table.num_rows)})
    with pytest.raises(ValueError, match=rf"it has 10 rows where {table.num_rows} were written"):
        load(out)
    said: list[str] = []
    assert run_sweep(check_spec(SMALL), out, executor=_Inline(), warn=said.append).done == 1
    assert said == [f"cell {victim} is damaged (it has 10 rows where {table.num_rows} were "
                    "written); recomputing it"]
    assert _sorted(load(out)).equals(_sorted(load(clean)))


def test_stray_files_in_cells_are_named_and_ignored(tmp_path, clean):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    other = tmp_path / "other"
    run_sweep(check_spec({**SMALL, "horizon": 200}), other, executor=_Inline())
    foreign = out / "cells" / _cells(other)[0].name  # a sound cell, of another sweep
    shutil.copy(_cells(other)[0], foreign)
    junk = out / "cells" / "notes.parquet"
    junk.write_text("not even Parquet")
    said: list[str] = []
    assert _sorted(load(out, warn=said.append)).equals(_sorted(load(clean)))
    assert said == [f"{p} is not a cell of the spec(s) this sweep directory ran; ignored"
                    for p in sorted([foreign, junk])]
    with pytest.warns(SweepWarning) as record:
        load(out)
    assert [str(w.message) for w in record] == said
    # A rerun leaves them alone and does not count them.
    assert run_sweep(check_spec(SMALL), out, executor=_Refuse()).skipped == 8
    assert foreign.exists() and junk.exists()


def test_every_spec_a_directory_ran_stays_accepted(tmp_path, capsys):
    first = check_spec(SMALL)
    second = check_spec({**SMALL, "horizon": 400,
                         "learners": [{"name": "naive-greedy", "label": "greedy"}]})
    third = check_spec({**SMALL, "horizon": 500})
    run_sweep(first, tmp_path, executor=_Inline())
    manifest = (tmp_path / "spec.json").read_text()
    assert run_sweep(second, tmp_path, executor=_Inline(), extend=True).done == 4
    assert (tmp_path / "spec.json").read_text() == manifest  # kept as it was
    assert len(list((tmp_path / "specs").glob("*.json"))) == 2
    # Both specs rerun without --extend; a third is refused as before.
    assert run_sweep(first, tmp_path, executor=_Refuse()).skipped == 8
    assert run_sweep(second, tmp_path, executor=_Refuse()).skipped == 4
    with pytest.raises(SpecError, match="holds results of a different spec; pass --extend"):
        run_sweep(third, tmp_path, executor=_Refuse())
    spec_file = tmp_path / "first.toml"
    spec_file.write_text(TOML)
    assert main(["sweep", str(spec_file), "--out", str(tmp_path)]) == 0
    assert "done: 0 cells run, 8 already finished" in capsys.readouterr().out
    assert spec_learners(tmp_path) == {"sa-ols": "sa-ols", "oracle": "oracle",
                                        "greedy": "naive-greedy"}
    assert set(load(tmp_path).column("learner").to_pylist()) == {"sa-ols", "oracle", "greedy"}


def test_a_directory_from_before_specs_were_kept_still_works(tmp_path, clean):
    shutil.copytree(clean, tmp_path / "old")
    old = tmp_path / "old"
    shutil.rmtree(old / "specs")  # as an earlier version left it: spec.json and cells/
    assert _sorted(load(old)).equals(_sorted(load(clean)))
    assert spec_learners(old) == {"sa-ols": "sa-ols", "oracle": "oracle"}
    assert run_sweep(check_spec(SMALL), old, executor=_Refuse()).skipped == 8
    assert len(list((old / "specs").glob("*.json"))) == 1  # its spec is now recorded
    with pytest.raises(SpecError, match="holds results of a different spec"):
        run_sweep(check_spec({**SMALL, "horizon": 400}), old, executor=_Refuse())


def test_an_unwritable_sweep_directory_is_one_line_before_any_cell(tmp_path):
    spec = check_spec(SMALL)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ValueError) as info:
        run_sweep(spec, a_file, executor=_Refuse())
    assert str(info.value) == (f"cannot use the sweep directory {str(a_file)!r}: "
                               f"{str(a_file)!r}: a file is in the way of a directory")
    with pytest.raises(ValueError, match="a file is in the way of a directory"):
        run_sweep(spec, a_file / "below", executor=_Refuse())
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "cells").write_text("x")
    with pytest.raises(ValueError) as info:
        run_sweep(spec, blocked, executor=_Refuse())
    assert str(info.value) == (f"cannot use the sweep directory {str(blocked)!r}: "
                               f"{str(blocked / 'cells')!r}: a file is in the way of a "
                               "directory")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(ValueError, match="Permission denied"):
            run_sweep(spec, locked, executor=_Refuse())


def test_a_cell_that_cannot_be_written_is_one_line(tmp_path):
    spec = check_spec(SMALL)
    with pytest.raises(ValueError) as info:
        run_sweep(spec, tmp_path, executor=_DiskFull())
    paths = {repr(str(tmp_path / "cells" / f"{c.key}.parquet")) for c in spec.cells}
    failed, rest = str(info.value).split(": ", 1)
    assert failed.removeprefix("cannot write cell ") in paths  # whichever came back first
    assert rest == f"No space left on device; finished cells are kept in {tmp_path}"


def test_spec_records_are_readable_json(tmp_path):
    spec = check_spec(SMALL)
    run_sweep(spec, tmp_path, executor=_Inline())
    (record,) = (tmp_path / "specs").glob("*.json")
    data = json.loads(record.read_text())
    assert data["spec"] == spec.canonical
    assert data["cells"] == [c.key for c in spec.cells]
    (tmp_path / "specs" / record.name).write_text("{")
    with pytest.raises(ValueError, match=r"is unreadable \(JSONDecodeError"):
        load(tmp_path)
