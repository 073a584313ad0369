"""Start-up: `sat --help`, `sat --version` and `import strategic_apple_tasting` load none of the
heavy libraries, the package's names load on first use, and a Ctrl-C while `sat` imports its
layers is one line and exit status 130. (How long start-up takes is measured by
benchmarks/startup.py, not asserted here.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import strategic_apple_tasting as sat_package

from ..helpers import with_default_sigint

#: Libraries that only simulating, storing or plotting needs (numpy and scipy come with them).
HEAVY = ("numba", "pyarrow", "matplotlib", "pandas", "numpy", "scipy")


def _imported(*args: str) -> set[str]:
    """Every module a fresh Python imports to run ``args``, read from ``-X importtime``."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


@pytest.mark.parametrize("args", [
    ("-m", "strategic_apple_tasting", "--help"),
    ("-m", "strategic_apple_tasting", "--version"),
    ("-c", "import strategic_apple_tasting"),
    ("-c", "from strategic_apple_tasting.cli.main import build_parser, main; build_parser()"),
], ids=["sat --help", "sat --version", "import package", "import cli"])
def test_start_up_imports_no_heavy_library(args):
    modules = _imported(*args)
    assert "strategic_apple_tasting" in modules  # the listing was read
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"{' '.join(args)} imported {heavy[:10]}"


def test_a_subcommand_imports_what_it_needs():
    # The flags of `sat run` name the learners, so its help loads the registry (and numba).
    assert "numba" in _imported("-m", "strategic_apple_tasting", "run", "--help")


def test_the_package_names_load_on_first_use():
    names = set(sat_package.__all__)
    assert set(sat_package._SOURCES) == names
    assert names <= set(dir(sat_package)) and "__version__" in dir(sat_package)
    for name in sorted(names):
        value = getattr(sat_package, name)
        module = sys.modules[f"strategic_apple_tasting{sat_package._SOURCES[name]}"]
        assert value is getattr(module, name), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = sat_package.no_such_name


def test_sat_run_imports_no_plotting(tmp_path):
    """`sat run` simulates and writes a table and its summary: it needs neither matplotlib nor
    scipy.stats (a second of CPU of its start-up together; the start-up target is 3 s). pandas
    it gets anyway: pyarrow imports it to ask whether an array is a pandas one."""
    modules = _imported("-m", "strategic_apple_tasting", "run", "--learner", "accept-all", "-d",
                        "2", "-T", "10", "--seeds", "1", "--out", str(tmp_path / "out"))
    assert (tmp_path / "out" / "summary.txt").exists()
    heavy = sorted(m for m in modules
                   if m.split(".")[0] == "matplotlib" or m.startswith("scipy.stats"))
    assert heavy == [], f"sat run imported {heavy[:10]}"



def test_the_decision_service_imports_no_plotting_and_no_scipy():
    """The service's modules need neither matplotlib, pandas nor scipy (0.7 s of its 2 s
    start-up before; the tests start it some 70 times). The control: the reports' figures,
    which do import them, are seen to."""
    pytest.importorskip("fastapi", reason="the 'serve' extra is not installed")
    # numba imports scipy's bare package itself (3 ms): its subpackages are what costs.
    unwanted = ("matplotlib", "pandas", "scipy.special", "scipy.optimize", "scipy.integrate",
                "scipy.stats")

    def heavy(modules: set[str]) -> list[str]:
        return sorted(m for m in modules if m.startswith(unwanted))

    modules = _imported("-c", "import strategic_apple_tasting.service.server")
    assert "strategic_apple_tasting.service.app" in modules
    assert heavy(modules) == [], f"the service imported {heavy(modules)[:10]}"
    control = _imported("-c", "import strategic_apple_tasting.reports.figures")
    assert {"pandas", "scipy.special"} <= set(heavy(control))

def test_the_scenarios_names_load_on_first_use():
    """The CLI reads the data sets' names from ``scenarios.datasets``: its package's other
    names (which bring pandas) load on first use, each the module's own object."""
    import strategic_apple_tasting.scenarios as scenarios

    assert set(scenarios._SOURCES) == set(scenarios.__all__)
    for name in sorted(scenarios.__all__):
        value = getattr(scenarios, name)
        module = sys.modules[f"strategic_apple_tasting.scenarios{scenarios._SOURCES[name]}"]
        assert value is getattr(module, name), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = scenarios.no_such_name


# Installed as the child's sitecustomize: the first import of numba (the heaviest of `sat`'s
# imports) says it has started and then waits, so the signal comes mid-import every time.
_BLOCK_NUMBA = '''
import os, sys, time

class _BlockNumba:
    def find_spec(self, name, path=None, target=None):
        if name == "numba":
            with open(os.environ["SAT_TEST_IMPORTING"], "w"):
                pass
            time.sleep(300)
        return None

sys.meta_path.insert(0, _BlockNumba())
'''


def _sat_script() -> Path:
    return Path(sys.executable).parent / "sat"


@pytest.mark.parametrize("how", ["sat", "python -m"])
def test_ctrl_c_while_importing_is_one_line(how, tmp_path):
    if how == "sat" and not _sat_script().exists():
        pytest.skip("no sat script beside this Python")
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_BLOCK_NUMBA)
    importing = tmp_path / "importing"
    # PYTHONFAULTHANDLER: a child that outlives the signal is made to print every thread's
    # stack (SIGABRT) before it is killed, so a failure says where it hung (seen once, on a
    # CI run under heavy load; not reproduced in nine runs, three of them under load).
    env = {**os.environ, "SAT_TEST_IMPORTING": str(importing), "PYTHONFAULTHANDLER": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(hook),
                                                       os.environ.get("PYTHONPATH")]))}
    start = [str(_sat_script())] if how == "sat" else [sys.executable, "-m",
                                                       "strategic_apple_tasting"]
    out = tmp_path / "out"
    proc = subprocess.Popen(with_default_sigint([*start, "run", "--learner", "sa-ols", "-d",
                                                 "2", "-T", "10", "--out", str(out)]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while not importing.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "numba's import never started"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            stdout, stderr = proc.communicate(timeout=30)
            pytest.fail(f"still running 60 s after Ctrl-C; its stacks:\n{stderr}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, stdout, stderr) == (130, "", "sat: interrupted\n")
    assert not out.exists()


def test_children_the_tests_signal_handle_ctrl_c_however_the_suite_was_launched():
    """A suite started in the background ignores SIGINT, and its children inherit that; those
    the tests send Ctrl-C get the default back (control: without the helper, the child would
    ignore the very signal the test sends)."""
    probe = ("import signal; "
             "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    launcher = ("import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                "raise SystemExit(subprocess.run(sys.argv[1:]).returncode)")

    def handles_ctrl_c(argv: list[str]) -> str:
        return subprocess.run([sys.executable, "-c", launcher, *argv], capture_output=True,
                              text=True, check=True).stdout.strip()

    argv = [sys.executable, "-c", probe]
    assert handles_ctrl_c(with_default_sigint(argv)) == "True"
    assert handles_ctrl_c(argv) == "False"
