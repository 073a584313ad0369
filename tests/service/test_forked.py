"""The tests' forked servers (:mod:`.forked`) against the command they stand for: both answer
on their port, write the same start line to their log, stop on Ctrl-C with status 0, start
again on the same database and port, and report SIGKILL as a process does."""

from __future__ import annotations

import signal

import pytest

from .conftest import SA_OLS, Server, httpx
from .forked import PRELOAD, preloaded


def test_the_fork_server_has_imported_the_command():
    """The fork server skips a preload it cannot import without a word (the servers would
    still start, each paying the imports): here it must have imported both."""
    assert preloaded() == PRELOAD


@pytest.mark.parametrize("forked", [False, True], ids=["command", "forked"])
def test_a_forked_server_starts_and_stops_as_the_command_does(tmp_path, forked):
    server = Server(f"sqlite:///{tmp_path}/service.db", [*SA_OLS, "--dimension", "3"],
                    tmp_path / "server.log", forked=forked).start()
    try:
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
        assert server.process.poll() is None
        server.stop()
        assert server.process.returncode == 0
        log = server.log.read_text()
        assert f"sat serve: sa-ols (all) on {server.url}" in log
        assert "Traceback" not in log
        server.start()
        server.kill()
        assert server.process.returncode == -signal.SIGKILL
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
