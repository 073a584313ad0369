"""Test-wide settings: property tests are derandomized so every run checks the same cases; the
package compiled before the test workers start; a headless browser for the pages' tests."""

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.load_profile("deterministic")

#: Where the controller keeps a copy of the cache as ``sat compile`` left it (for
#: tests/experiments/test_precompile.py), in the environment the test workers inherit.
SNAPSHOT = "SAT_COMPILED_SNAPSHOT"


def _compiled_entries(root: Path) -> set[str]:
    """The package's compiled entries in a cache (data files; a user's classes keep theirs in
    files of their own, ``-x<hash>``, left out)."""
    return {str(p.relative_to(root)) for p in root.rglob("*.nbc") if "-x" not in p.name}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Before the test workers start (pytest-xdist's controller), compile the package into the
    cache with ``sat compile``'s parallel workers, so that no two test workers compile the same
    loop; keep a copy of the cache as it left it. ``SAT_NO_PRECOMPILE=1`` skips it."""
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None) \
            or os.environ.get("SAT_NO_PRECOMPILE") == "1":
        return
    from strategic_apple_tasting._jit_cache import cache_root
    from strategic_apple_tasting.experiments.precompile import compile_all

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    compile_all(say=lambda line: reporter.write_line(line) if reporter else print(line))
    snapshot = Path(tempfile.mkdtemp(prefix="sat-compiled-"))
    if (cache_root() / "numba").is_dir():
        shutil.copytree(cache_root() / "numba", snapshot / "numba")
    os.environ[SNAPSHOT] = str(snapshot)
    config._sat_compiled = (cache_root() / "numba", _compiled_entries(snapshot / "numba"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test worker hands the controller what it compiled (``module.function(types)``); the
    controller fails the run when the tests compiled any package entry that ``sat compile``
    did not (a user's classes, defined in tests, excepted: they keep their entries in files of
    their own): each was compiled by a test worker, possibly by both, and by a user's first
    run too."""
    config = session.config
    if hasattr(config, "workerinput"):
        from strategic_apple_tasting import _jit

        config.workeroutput["sat_saved"] = list(_jit.SAVED)
        return
    compiled = getattr(config, "_sat_compiled", None)
    if compiled is None:
        return
    root, before = compiled
    extra = sorted(_compiled_entries(root) - before) if root.is_dir() else []
    config._sat_extra = extra
    if extra and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook
def pytest_testnodedown(node: Any, error: Any) -> None:
    """Gather what each test worker compiled (for the summary's list)."""
    saved = getattr(node, "workeroutput", {}).get("sat_saved", [])
    node.config._sat_saved = [*getattr(node.config, "_sat_saved", []), *saved]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Name every package entry the tests compiled beyond ``sat compile``'s (the run fails
    with any: :func:`pytest_sessionfinish`), and what the test workers compiled."""
    extra = getattr(config, "_sat_extra", None)
    if extra is None:
        return
    if extra:
        terminalreporter.write_line(
            f"FAILED sat compile: the tests compiled {len(extra)} package entries beyond it "
            "(call kernels with the package's own argument types, or make `sat compile` "
            "reach them):", red=True)
        for entry in extra:
            terminalreporter.write_line(f"    {entry}")
        for entry in sorted(set(getattr(config, "_sat_saved", []))):
            terminalreporter.write_line(f"    compiled by a test worker: {entry}")
    else:
        terminalreporter.write_line("sat compile: the tests compiled no package entry beyond it")
    shutil.rmtree(os.environ.get(SNAPSHOT, ""), ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A module that says ``RUN_FIRST`` (the quick reproduction's) first, then by size.
    ``make test`` schedules whole modules (``--dist loadscope --no-loadscope-reorder``): one
    worker starts with the reproduction while the other runs the rest, instead of the second
    worker waiting on the reproduction's lock. (xdist's ``loadgroup`` would be finer, but with
    pytest 9.2 and xdist 3.8 it splits a group across workers: its name no longer reaches the
    node ids.)"""
    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    # Then the modules with the most tests, as xdist's own reordering would: the small ones are
    # left for the end, where they fill the workers' last minutes evenly.
    size = Counter(module(item) for item in items)
    items.sort(key=lambda item: (
        not getattr(getattr(item, "module", None), "RUN_FIRST", False), -size[module(item)]))


@pytest.fixture
def compiled_cache(tmp_path: Path) -> Path:
    """A compiled-code cache of the test's own (for ``SAT_CACHE_DIR``) holding what ``sat
    compile`` compiled: a test of what a run compiles then pays only for that, not for the
    package's kernels too. The controller's copy of the cache, or (without xdist) the cache
    after ``sat compile``."""
    cache = tmp_path / "cache"
    snapshot = os.environ.get(SNAPSHOT)
    if snapshot is None:
        from strategic_apple_tasting._jit_cache import cache_root
        from strategic_apple_tasting.experiments.precompile import compile_all

        compile_all(say=lambda line: None)
        source = cache_root() / "numba"
    else:
        source = Path(snapshot) / "numba"
    shutil.copytree(source, cache / "numba")
    return cache


class Visit(NamedTuple):
    """What a page visit saw: ``inspect(page)``'s result, the page's errors (console errors,
    uncaught exceptions, failed requests) and every URL it requested."""

    seen: Any
    errors: list[str]
    requested: list[str]


@pytest.fixture
def browser():
    """``browser(url, inspect, screenshot, headers)``: load ``url`` in Debian's headless Chromium
    (driven by playwright), run ``inspect(page)``, save a full-page screenshot; or a skip
    saying what is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not found: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright not installed: pip install playwright")

    def visit(url: str, inspect: Callable[[Any], Any], screenshot: Path,
              headers: dict[str, str] | None = None) -> Visit:
        errors: list[str] = []
        requested: list[str] = []
        with sync_playwright() as p:
            chrome = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                page = chrome.new_page(viewport={"width": 1280, "height": 900})
                if headers:
                    page.set_extra_http_headers(headers)
                page.on("console",
                        lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
                page.on("request", lambda r: requested.append(r.url))
                response = page.goto(url, wait_until="load")
                assert response is not None and response.ok
                seen = inspect(page)
                page.screenshot(path=str(screenshot), full_page=True)
            finally:
                chrome.close()
        return Visit(seen, errors, requested)

    return visit

