"""Compiled code is cached on disk: a second process does not compile the kernel again.

The tests whose point is what a run compiles start from a copy of the cache as ``sat compile``
left it (the ``compiled_cache`` fixture), so each compiles only what it is about."""

import json
import os
import subprocess
import sys

#: A kernel of the package on its own (the engine's loop is checked by the tests below and by
#: tests/experiments/test_precompile.py): compiled by the first process, loaded by the second.
KERNEL = """
import json
import numpy as np
from strategic_apple_tasting.learners.least_squares import new_factor, solve
out = np.zeros(2)
solve(new_factor(2), out)
print(json.dumps({"hits": sum(solve.stats.cache_hits.values()),
                  "misses": sum(solve.stats.cache_misses.values())}))
"""

#: The engine's loop for a learner of the package.
SCRIPT = """
import json
from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.engine.kernel import _rounds
simulate(Game(dimension=2), ["accept-all"], 10, seeds=1)
print(json.dumps({"hits": sum(_rounds.stats.cache_hits.values()),
                  "misses": sum(_rounds.stats.cache_misses.values())}))
"""


def _run(cache_dir, script=SCRIPT):
    env = {**os.environ, "SAT_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_second_process_loads_the_kernel_from_the_cache(tmp_path):
    first = _run(tmp_path, KERNEL)
    second = _run(tmp_path, KERNEL)
    assert first == {"hits": 0, "misses": 1}
    assert second == {"hits": 1, "misses": 0}
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
from strategic_apple_tasting.engine.kernel import _rounds
table = simulate(Game(dimension=2), [FixedThreshold()], 200, seeds=1)
print(json.dumps({"accepted": table.column("accepted")[-1].as_py(),
                  "misses": sum(_rounds.stats.cache_misses.values())}))
"""


def test_an_edited_learner_outside_the_package_never_runs_a_stale_kernel(tmp_path,
                                                                          compiled_cache):
    """A compiled learner in a user's own package: edited (here, in a helper module it imports,
    which its own file's timestamp does not cover), the next process runs the new code.
    Before, the engine's cached kernel kept the old code: `accepted` stayed at 200."""
    package = tmp_path / "src" / "mine"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "constants.py").write_text("THRESHOLD = -1.0  # accept everyone\n")
    (package / "learner.py").write_text("from .constants import THRESHOLD\n" + LEARNER)
    env = {**os.environ, "SAT_CACHE_DIR": str(compiled_cache)}

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
    # package's own index must not name its classes, or it could not be read at all (an index
    # that cannot be read is a miss).
    other = _run(compiled_cache)  # check=True: it exits 0
    assert other == {"hits": 1, "misses": 0}


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


def test_a_learner_defined_without_a_file_never_runs_a_stale_kernel(tmp_path, compiled_cache):
    """As in a notebook (here `python -c`, whose module has no file): the kernels' own code
    stands for the source, so a changed definition compiles anew."""
    env = {**os.environ, "SAT_CACHE_DIR": str(compiled_cache)}

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
from strategic_apple_tasting.engine.kernel import _rounds
assert strategic_apple_tasting.__file__.startswith(sys.argv[1]), strategic_apple_tasting.__file__
simulate(Game(dimension=2), ["accept-all", "sa-ols"], 10, seeds=1)
print(json.dumps({"hits": sum(_rounds.stats.cache_hits.values()),
                  "misses": sum(_rounds.stats.cache_misses.values())}))
"""


def _relocate(cache, package, copy):
    """Rename the cache's folders of ``package``'s modules to those of its ``copy`` (numba
    names a module's folder by a hash of its path; the entries are keyed on source alone)."""
    from strategic_apple_tasting._jit_cache import module_cache_name

    root = cache / "numba" / "by-module"
    folders = [package, *(p for p in package.rglob("*") if p.is_dir())]
    for folder in folders:
        old = root / module_cache_name(folder / "module.py")
        if old.is_dir():
            old.rename(root / module_cache_name(copy / folder.relative_to(package) / "module.py"))


def test_editing_one_learner_recompiles_only_what_depends_on_it(tmp_path, compiled_cache):
    """A copy of the package, edited file by file: the engine's loop is compiled anew for the
    learner whose kernels changed, and served from the cache for the other one. The copy starts
    from the cache ``sat compile`` filled, moved to the copy's paths: its first run loads
    every entry."""
    import shutil
    from pathlib import Path

    import strategic_apple_tasting

    package = Path(strategic_apple_tasting.__file__).resolve().parent
    copy = (tmp_path / "src").resolve() / "strategic_apple_tasting"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    _relocate(compiled_cache, package, copy)
    env = {**os.environ, "SAT_CACHE_DIR": str(compiled_cache),
           "PYTHONPATH": str(tmp_path / "src")}

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", INCREMENTAL, str(copy)], env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    def touch(name: str) -> None:
        path = copy / name
        path.write_text(path.read_text() + "\n# edited\n")

    assert run() == {"hits": 2, "misses": 0}
    touch("learners/phased_ols.py")  # SA-OLS's kernels (accept-all's are in baselines.py)
    assert run() == {"hits": 1, "misses": 1}
    touch("learners/greedy_ols.py")  # SA-OLS's Python class only: no compiled code
    assert run() == {"hits": 2, "misses": 0}
    touch("learners/baselines.py")  # accept-all's kernels: the other way round
    assert run() == {"hits": 1, "misses": 1}


def test_the_stamps_need_no_numba():
    """The stamps are pure Python: with numba unimportable, a module's stamp is computed, the
    same as in this process (with numba). The control: importing the cache's own module then
    fails on numba."""
    import subprocess
    import sys

    from strategic_apple_tasting import _stamps

    script = ("import sys; sys.modules['numba'] = None\n"
              "from strategic_apple_tasting import _stamps\n"
              "print(_stamps.source_stamp(_stamps.PACKAGE_DIR / 'engine' / 'kernel.py'))\n"
              "try:\n    import strategic_apple_tasting._jit_cache\n"
              "except ImportError:\n    print('no numba')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    stamp, control = done.stdout.splitlines()
    assert stamp == _stamps.source_stamp(_stamps.PACKAGE_DIR / "engine" / "kernel.py")
    assert control == "no numba"
