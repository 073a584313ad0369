"""Learners by name from outside the package: import paths and entry points, through
``sat run``, ``sat sweep`` (spawned workers import the learner by name) and ``sat report``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pyarrow.parquet as pq
import pytest

from strategic_apple_tasting.checks import check_learner
from strategic_apple_tasting.experiments.spec import check_spec
from strategic_apple_tasting.learners import SAOLS, learner_class, make_learner
from tests.engine.test_cache import LEARNER

OUTSIDE = "mine.learner:FixedThreshold"


@pytest.fixture
def outside(tmp_path, monkeypatch):
    """A compiled learner in a user's own package, importable from this process and from
    subprocesses (PYTHONPATH)."""
    package = tmp_path / "src" / "mine"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "learner.py").write_text("THRESHOLD = -1.0\n" + LEARNER)
    (package / "plain.py").write_text(textwrap.dedent("""
        from strategic_apple_tasting.learners import Learner

        class PlainGreedy(Learner):
            name = "plain"
        """))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    path = os.pathsep.join([str(tmp_path / "src"), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    return tmp_path


def test_an_import_path_resolves_to_the_class(outside):
    cls = learner_class(OUTSIDE)
    assert cls.__name__ == "FixedThreshold" and cls.__module__ == "mine.learner"
    assert learner_class("strategic_apple_tasting.learners:SAOLS") is SAOLS
    assert type(make_learner(OUTSIDE, feedback="apple")) is cls


@pytest.mark.parametrize("name, message", [
    ("nope", "learner must be one of sa-ols"),
    ("no_such_module:Thing", "cannot import 'no_such_module'"),
    ("mine.learner:Missing", "'mine.learner' has no 'Missing'"),
    ("mine.learner:np", "is <module 'numpy'"),
    ("mine.plain:PlainGreedy", "has no compiled kernels (LearnerKernels)"),
])
def test_a_bad_learner_name_is_one_line(outside, name, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        learner_class(name)


def test_an_outside_learner_passes_the_public_checks(outside):
    check_learner(make_learner(OUTSIDE), checks=["check_params_round_trip", "check_bad_input",
                                                 "check_engine_matches_per_round_api"])


def _sat(*argv: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "strategic_apple_tasting", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_sat_run_sweep_and_report_take_an_outside_learner(outside):
    run = _sat("run", "-l", OUTSIDE, "-l", "oracle", "-d", "2", "-T", "300", "--seeds", "2",
               "-o", "run", cwd=outside)
    assert run.returncode == 0, run.stderr
    table = pq.read_table(outside / "run" / "results.parquet")
    assert set(table.column("learner").to_pylist()) == {"fixed-threshold", "oracle"}
    (outside / "spec.toml").write_text(
        'horizon = 300\nseeds = 2\nseeds_per_cell = 1\n[game]\ndimension = 2\n'
        f'[[learners]]\nname = "{OUTSIDE}"\n[[learners]]\nname = "oracle"\n')
    sweep = _sat("sweep", "spec.toml", "-o", "sweep", "--workers", "2", cwd=outside)
    assert sweep.returncode == 0, sweep.stderr  # spawned workers imported it by name
    report = _sat("report", "sweep", cwd=outside)
    assert report.returncode == 0, report.stderr
    assert OUTSIDE in (outside / "sweep" / "report" / "index.html").read_text()


def test_a_spec_names_an_outside_learner_and_its_parameters(outside):
    spec = check_spec({"horizon": 50, "game": {"dimension": 2},
                       "learners": [{"name": OUTSIDE, "feedback": "apple"}]})
    assert spec.cells[0].learner == OUTSIDE
    with pytest.raises(ValueError, match=r"learners\[0\]\.name: learner 'mine.plain:Plain"):
        check_spec({"horizon": 50, "game": {"dimension": 2},
                    "learners": [{"name": "mine.plain:PlainGreedy"}]})
