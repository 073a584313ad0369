"""``sat serve`` forked from one process that has already imported it, as the tests' servers.

A server started as ``python -m strategic_apple_tasting serve`` first answers after about 1.8 s,
most of it the interpreter, the imports (numba, FastAPI, SQLAlchemy, the package) and numba's
first load from the cache; the service's tests start about 80 servers. Here a fork server (the
standard library's ``multiprocessing`` "forkserver", single-threaded) does those once per test
worker, and each server is a fork of it, answering after about 0.5 s, that runs the same
``main(["serve", ...])`` the command runs, with its own environment, its output in its own log
and SIGINT at Python's default (Ctrl-C stops it as it stops the command). What the command does
before ``main`` is run by the tests that start the command itself: the HTTP tests' shared
server, :mod:`.test_forked`, the README's service blocks and the command-line tests.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import signal
import subprocess
import sys
from pathlib import Path

_CONTEXT: multiprocessing.context.ForkServerContext | None = None


#: What the fork server imports once: this module (the servers' entry point) and what the
#: command imports and loads before it listens.
PRELOAD = [__name__, f"{__package__}.forked_warm"]


def _context() -> multiprocessing.context.ForkServerContext:
    global _CONTEXT
    if _CONTEXT is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        # The fork server is a new interpreter that skips a preload it cannot import, without a
        # word: it finds the tests' package on PYTHONPATH, from whatever directory.
        root = str(Path(__file__).resolve().parents[2])
        before = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, before]))
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if before is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = before
        _CONTEXT = context
    return _CONTEXT


def _imported() -> list[str]:
    """Which of :data:`PRELOAD` a forked process finds imported (for the tests)."""
    return [name for name in PRELOAD if name in sys.modules]


def preloaded() -> list[str]:
    """Which of :data:`PRELOAD` the fork server has imported, as a forked process sees it."""
    with _context().Pool(1) as pool:
        return pool.apply(_imported)


def _serve(argv: list[str], log: str, environ: dict[str, str], cwd: str) -> None:
    """The forked server: as ``sat serve ARGV`` in ``cwd`` with ``environ``, writing to
    ``log``."""
    os.chdir(cwd)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)
    os.environ.clear()
    os.environ.update(environ)
    # What the command would find on PYTHONPATH (a learner in a test's folder).
    for entry in reversed(environ.get("PYTHONPATH", "").split(os.pathsep)):
        if entry and entry not in sys.path:
            sys.path.insert(0, entry)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = ["sat", "serve", *argv]
    from strategic_apple_tasting.cli.main import main

    code = main(["serve", *argv])
    sys.stdout.flush()
    sys.stderr.flush()
    raise SystemExit(code)


class ForkedServer:
    """A forked server with the part of :class:`subprocess.Popen`'s interface the tests use."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self._process = _context().Process(target=_serve,
                                           args=(list(argv), str(log), dict(os.environ),
                                                 os.getcwd()))
        self._process.start()
        self.pid = self._process.pid
        self.args = ["sat", "serve", *argv]

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)
