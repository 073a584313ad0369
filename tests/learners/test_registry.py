"""Learners by name from outside the package: import paths and entry points, through
``sat run``, ``sat sweep`` (spawned workers import the learner by name) and ``sat report``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from strategic_apple_tasting.checks import check_learner
from strategic_apple_tasting.experiments.spec import check_spec
from strategic_apple_tasting.learners import SAOLS, learner_class, make_learner
from tests.engine.test_cache import LEARNER

OUTSIDE = "mine.learner:FixedThreshold"
PLAIN_NAME = "mine.plain:PlainGreedy"
#: A plain-Python learner as a user writes it: greedy least squares on every accepted point,
#: with a little random exploration (so the learner's stream is used).
PLAIN = textwrap.dedent("""
    import numpy as np

    from strategic_apple_tasting.game import LinearThreshold
    from strategic_apple_tasting.learners import Learner, LearnerTags


    class PlainGreedy(Learner):
        name = "plain-greedy"
        tags = LearnerTags(strategy_aware=False)

        def __init__(self, ridge=1.0, explore=0.05, r0=None, feedback=None):
            self.ridge, self.explore, self.r0, self.feedback = ridge, explore, r0, feedback

        def _init_state(self, d):
            self._gram, self._xy = self.ridge * np.eye(d), np.zeros(d)

        def _publish(self):
            if self.generator.random() < self.explore:
                # accept all
                return LinearThreshold(beta=np.zeros(self.dimension), threshold=-1.0)
            return LinearThreshold(beta=self._estimate(), threshold=self.r0)

        def _learn(self, rule, x_obs, accepted, reward):
            if not accepted or reward is None:
                return False
            self._gram += np.outer(x_obs, x_obs)
            self._xy += reward * x_obs
            return True

        def _estimate(self):
            try:
                return np.linalg.solve(self._gram, self._xy)
            except np.linalg.LinAlgError:  # features near the input bound swamp the ridge
                return np.linalg.lstsq(self._gram, self._xy, rcond=None)[0]
    """)


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """A compiled learner in a user's own package, importable from this process and from
    subprocesses (PYTHONPATH). One package for the module: its compiled entries are keyed on
    its files' paths and source, so the tests and the ``sat`` processes they start share them
    instead of each compiling the engine's loop for it anew."""
    tmp_path = tmp_path_factory.mktemp("outside")
    package = tmp_path / "src" / "mine"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "learner.py").write_text("THRESHOLD = -1.0\n" + LEARNER)
    (package / "plain.py").write_text(PLAIN)
    (package / "broken.py").write_text(textwrap.dedent("""
        from strategic_apple_tasting.learners import Learner

        class NoHooks(Learner):
            name = "no-hooks"
        """))
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.syspath_prepend(str(tmp_path / "src"))
        path = os.pathsep.join([str(tmp_path / "src"), os.environ.get("PYTHONPATH", "")])
        monkeypatch.setenv("PYTHONPATH", path)
        yield tmp_path


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
    ("mine.broken:NoHooks", "cannot import 'mine.broken' (TypeError: learner NoHooks must set "
                            "kernels (a compiled learner) or define _publish and _learn"),
    ("strategic_apple_tasting.learners:Learner", "(Learner) has no name"),
])
def test_a_bad_learner_name_is_one_line(outside, name, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        learner_class(name)


def test_an_outside_learner_passes_the_public_checks(outside):
    check_learner(make_learner(OUTSIDE), checks=["check_params_round_trip", "check_bad_input",
                                                 "check_engine_matches_per_round_api",
                                                 "check_compiled_matches_reference"])


def test_a_plain_python_learner_passes_every_public_check(outside):
    check_learner(make_learner(PLAIN_NAME))


def _sat(*argv: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "strategic_apple_tasting", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_sat_run_sweep_and_report_take_an_outside_learner(outside):
    run = _sat("run", "-l", OUTSIDE, "-l", PLAIN_NAME, "-l", "oracle", "-d", "2", "-T", "300",
               "--seeds", "2", "-o", "run", cwd=outside)
    assert run.returncode == 0, run.stderr
    table = pq.read_table(outside / "run" / "results.parquet")
    assert set(table.column("learner").to_pylist()) == {"fixed-threshold", "plain-greedy",
                                                        "oracle"}
    plain = table.filter(pc.equal(table.column("learner"), "plain-greedy"))
    assert plain.num_rows == table.num_rows // 3  # the same rows and columns as the others
    assert np.all(np.isfinite(plain.column("theta_error").to_numpy()[5:]))
    (outside / "spec.toml").write_text(
        'horizon = 300\nseeds = 2\nseeds_per_cell = 1\n[game]\ndimension = 2\n'
        f'[[learners]]\nname = "{OUTSIDE}"\n[[learners]]\nname = "{PLAIN_NAME}"\n'
        '[[learners]]\nname = "oracle"\n')
    sweep = _sat("sweep", "spec.toml", "-o", "sweep", "--workers", "2", cwd=outside)
    assert sweep.returncode == 0, sweep.stderr  # spawned workers imported it by name
    report = _sat("report", "sweep", cwd=outside)
    assert report.returncode == 0, report.stderr
    page = (outside / "sweep" / "report" / "index.html").read_text()
    assert OUTSIDE in page and PLAIN_NAME in page


def test_a_spec_names_an_outside_learner_and_its_parameters(outside):
    spec = check_spec({"horizon": 50, "game": {"dimension": 2},
                       "learners": [{"name": OUTSIDE, "feedback": "apple"}]})
    assert spec.cells[0].learner == OUTSIDE
    with pytest.raises(ValueError, match=r"learners\[0\]\.name: learner 'mine.broken:NoHooks"):
        check_spec({"horizon": 50, "game": {"dimension": 2},
                    "learners": [{"name": "mine.broken:NoHooks"}]})
