"""The "adding a learner" guide runs as written: its files are written, its Python runs and its
commands run in order, in a fresh directory, as a user with ``.venv`` activated would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-learner.md"
#: Fenced blocks in order: (language, text).
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(), flags=re.S)
FILE = re.compile(r"# file: (\S+)( \(continued\))?\n")


def test_the_guide_has_both_tiers_and_every_step():
    text = GUIDE.read_text()
    for needle in ("_publish", "_learn", "LearnerKernels", "check_learner", "sat sweep",
                   "sat report", "parametrize_with_checks", "entry-points"):
        assert needle in text, needle
    plain = next(code for lang, code in BLOCKS if code.startswith("# file: my_learners.py\n"))
    assert len(plain.splitlines()) <= 45  # a plain-Python learner is short


def test_the_guide_runs_as_written(tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    ran = {"files": 0, "python": 0, "sh": 0}
    for lang, code in BLOCKS:
        named = FILE.match(code)
        if named:
            path = tmp_path / named.group(1)
            path.write_text((path.read_text() if named.group(2) else "") + code[named.end():])
            ran["files"] += 1
            if named.group(1).startswith("test_"):
                done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                       "no:cacheprovider", named.group(1)], cwd=tmp_path,
                                      env=env, capture_output=True, text=True, timeout=900)
                assert done.returncode == 0, done.stdout + done.stderr
        elif lang == "python":
            done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{code}\n{done.stderr}"
            ran["python"] += 1
        elif lang == "sh":
            done = subprocess.run(["bash", "-c", code], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{code}\n{done.stdout}\n{done.stderr}"
            assert "Traceback" not in done.stderr, done.stderr
            ran["sh"] += 1
    assert ran == {"files": 5, "python": 3, "sh": 4}
    table = pq.read_table(tmp_path / "runs" / "twins" / "results.parquet").to_pydict()
    assert set(table["learner_name"]) == {"my_learners:Greedy", "my_learners:CompiledGreedy"}
    assert (tmp_path / "runs" / "twins-sweep" / "report" / "index.html").is_file()
    # What section 6 says of its table: CleanGreedy never learned a moved point, Greedy did,
    # and CleanGreedy decided as SA-OLS in every round (the same regret at every t and seed).
    aware = pq.read_table(tmp_path / "runs" / "aware" / "results.parquet").to_pandas()
    by = {name: rows.set_index(["seed", "t"]) for name, rows in aware.groupby("learner_name")}
    assert (by["my_aware:CleanGreedy"]["gamed_as_clean"] == 0).all()
    assert by["my_learners:Greedy"]["gamed_as_clean"].max() > 0
    assert by["my_aware:CleanGreedy"]["regret"].equals(by["sa-ols"]["regret"])
