"""``sat serve`` forked from one process that has already imported it, as the tests' servers.

A server started as ``python -m strategic_apple_tasting serve`` spends about 2 s of CPU before
it listens: the interpreter, the imports (numba, FastAPI, SQLAlchemy, the package) and numba's
first load from the cache. The service's tests start about 80 servers. Here a fork server
(the standard library's ``multiprocessing`` "forkserver", single-threaded) pays that once per
test worker, and each server is a fork of it that runs the same ``main(["serve", ...])`` the
command runs, with its own environment, its output in its own log and SIGINT at Python's
default (Ctrl-C stops it as it stops the command). What the command adds before ``main`` (the
interpreter starting, the imports) is run by the tests that start the real command: the
README's service blocks and the command-line tests.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

_CONTEXT: multiprocessing.context.ForkServerContext | None = None


def _context() -> multiprocessing.context.ForkServerContext:
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        # The fork server imports these once: this module (the servers' entry point) and
        # what the command imports before it listens.
        _CONTEXT.set_forkserver_preload([__name__, "tests.service.forked_warm"])
    return _CONTEXT


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
