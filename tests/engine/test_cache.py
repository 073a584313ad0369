"""Compiled code is cached on disk: a second process does not compile the kernel again."""

import json
import os
import subprocess
import sys

SCRIPT = """
import json
from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.engine.kernel import run_rounds
simulate(Game(dimension=2), ["accept-all"], 10, seeds=1)
print(json.dumps({"hits": sum(run_rounds.stats.cache_hits.values()),
                  "misses": sum(run_rounds.stats.cache_misses.values())}))
"""


def _run(cache_dir):
    env = {**os.environ, "SAT_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_second_process_loads_the_kernel_from_the_cache(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["misses"] == 1 and first["hits"] == 0
    assert second["misses"] == 0 and second["hits"] == 1
    assert any(tmp_path.rglob("*.nbi"))


LEARNER = '''
from typing import NamedTuple

import numpy as np

from strategic_apple_tasting._jit import njit
from strategic_apple_tasting.learners import Learner, LearnerKernels


class FixedThresholdState(NamedTuple):
    beta: np.ndarray


@njit
def _policy(state, rng, beta):
    for i in range(beta.shape[0]):
        beta[i] = 0.0
    return THRESHOLD


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    return False


@njit
def _estimate(state, out):
    return False


class FixedThreshold(Learner):
    name = "fixed-threshold"
    kernels = LearnerKernels(FixedThresholdState, _policy, _update, _estimate)

    def __init__(self, feedback=None):
        self.feedback = feedback

    def _init_state(self, d):
        return FixedThresholdState(beta=np.zeros(d))
'''

OUTSIDE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from mine.learner import FixedThreshold
from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.engine.kernel import run_rounds
table = simulate(Game(dimension=2), [FixedThreshold()], 200, seeds=1)
print(json.dumps({"accepted": table.column("accepted")[-1].as_py(),
                  "misses": sum(run_rounds.stats.cache_misses.values())}))
"""


def test_an_edited_learner_outside_the_package_never_runs_a_stale_kernel(tmp_path):
    """A compiled learner in a user's own package: edited (here, in a helper module it imports,
    which its own file's timestamp does not cover), the next process runs the new code.
    Before, the engine's cached kernel kept the old code: `accepted` stayed at 200."""
    package = tmp_path / "src" / "mine"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "constants.py").write_text("THRESHOLD = -1.0  # accept everyone\n")
    (package / "learner.py").write_text("from .constants import THRESHOLD\n" + LEARNER)
    env = {**os.environ, "SAT_CACHE_DIR": str(tmp_path / "cache")}

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", OUTSIDE, str(tmp_path / "src")], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    first = run()
    assert first == {"accepted": 200, "misses": 1}
    assert run() == {"accepted": 200, "misses": 0}  # unchanged: the cache serves it
    (package / "constants.py").write_text("THRESHOLD = 1.0  # reject everyone\n")
    assert run() == {"accepted": 0, "misses": 1}  # edited: compiled anew, new behaviour
    # The same cache, from a process that cannot import `mine` (another project): the
    # package's own index must not name its classes, or it could not be read at all.
    other = _run(tmp_path / "cache")  # check=True: it exits 0
    assert other == {"hits": 0, "misses": 1}


def test_numba_still_keys_its_cache_through_index_key():
    """The stamped keys rest on numba calling ``Cache._index_key(sig, codegen)`` for every
    load and save (numba.core.caching); this fails loudly if an upgrade changes that."""
    import inspect

    from numba.core import caching

    from strategic_apple_tasting._jit_cache import StampedCache

    assert issubclass(StampedCache, caching.FunctionCache)
    assert list(inspect.signature(caching.Cache._index_key).parameters) == ["self", "sig",
                                                                             "codegen"]
    for method in (caching.Cache._load_overload, caching.Cache._save_overload):
        assert "self._index_key(sig, " in inspect.getsource(method), method.__name__
        assert "self._cache_file." in inspect.getsource(method), method.__name__
    assert list(inspect.signature(caching.IndexDataCacheFile).parameters) == [
        "cache_path", "filename_base", "source_stamp"]
    assert "self._cache_file = " in inspect.getsource(caching.Cache.__init__)


def test_a_learner_defined_without_a_file_never_runs_a_stale_kernel(tmp_path):
    """As in a notebook (here `python -c`, whose module has no file): the kernels' own code
    stands for the source, so a changed definition compiles anew."""
    env = {**os.environ, "SAT_CACHE_DIR": str(tmp_path / "cache")}

    def run(threshold: float) -> dict:
        code = (f"THRESHOLD = {threshold}\n" + LEARNER + OUTSIDE.replace(
            "from mine.learner import FixedThreshold\n", ""))
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    # Classes of `__main__` are pickled by value in numba's index, so such a learner is
    # compiled in each process: never a hit, but never stale either.
    assert run(-1.0) == {"accepted": 200, "misses": 1}
    assert run(1.0) == {"accepted": 0, "misses": 1}


INCREMENTAL = """
import json, sys
import strategic_apple_tasting
from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.engine.kernel import run_rounds
assert strategic_apple_tasting.__file__.startswith(sys.argv[1]), strategic_apple_tasting.__file__
simulate(Game(dimension=2), ["accept-all", "sa-ols"], 10, seeds=1)
print(json.dumps({"hits": sum(run_rounds.stats.cache_hits.values()),
                  "misses": sum(run_rounds.stats.cache_misses.values())}))
"""


def test_editing_one_learner_recompiles_only_what_depends_on_it(tmp_path):
    """A copy of the package, edited file by file: the engine's loop is compiled anew for the
    learner whose kernels changed, and served from the cache for the other one."""
    import shutil
    from pathlib import Path

    import strategic_apple_tasting

    copy = tmp_path / "src" / "strategic_apple_tasting"
    shutil.copytree(Path(strategic_apple_tasting.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "SAT_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(tmp_path / "src")}

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", INCREMENTAL, str(copy)], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    def touch(name: str) -> None:
        path = copy / name
        path.write_text(path.read_text() + "\n# edited\n")

    assert run() == {"hits": 0, "misses": 2}
    touch("learners/phased_ols.py")  # SA-OLS's kernels (accept-all's are in baselines.py)
    assert run() == {"hits": 1, "misses": 1}
    touch("learners/greedy_ols.py")  # SA-OLS's Python class only: no compiled code
    assert run() == {"hits": 2, "misses": 0}
    touch("learners/baselines.py")  # accept-all's kernels: the other way round
    assert run() == {"hits": 1, "misses": 1}
