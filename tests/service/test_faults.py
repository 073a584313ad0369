"""A database that goes away, cannot be written or fills up: nothing is acknowledged that is not
durable in the database that is really there, every request is answered within a bounded time,
and ``/health`` says what is wrong."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import store

from .conftest import SA_OLS, Server, free_port, httpx

X = [0.1, 0.2, 0.3]


def _path(server: Server) -> Path:
    return Path(server.database.removeprefix("sqlite:///"))


def _ids(database: str) -> set[str]:
    engine = store.connect(database)
    try:
        with engine.connect() as conn:
            return set(conn.execute(sa.select(store.decisions.c.id)).scalars())
    finally:
        engine.dispose()


def _answers_503(r, *words: str) -> str:
    assert r.status_code == 503, r.text
    line = r.json()["error"]
    assert "\n" not in line and all(w in line for w in words), line
    return line


# -- the files deleted or replaced under the service -----------------------------------------
@pytest.mark.parametrize("deleted", [("",), ("-wal",), ("", "-wal", "-shm")],
                         ids=["database", "write-ahead log", "all three"])
def test_a_deleted_database_file_stops_every_acknowledgement(serve, deleted):
    server = serve("--publish", "manual")
    with server.client() as c:
        assert c.post("/decisions", json={"id": "before", "x": X}).status_code == 200
        for suffix in deleted:
            os.unlink(f"{_path(server)}{suffix}")
        line = _answers_503(c.post("/decisions", json={"id": "after", "x": X}), "deleted")
        _answers_503(c.post("/decisions", json={"id": "after-2", "x": X}), "deleted")
        _answers_503(c.post("/outcomes", json={"id": "before", "outcome": 1.0}), "deleted")
        _answers_503(c.post("/publish", timeout=10), "deleted")
        health = c.get("/health")
        assert health.status_code == 503, health.text
        assert health.json()["status"] == "database lost"
        assert health.json()["database_error"] == line
        metrics = c.get("/metrics")
        assert metrics.status_code == 503 or metrics.json()["database_error"] == line


def test_a_replaced_database_file_loses_no_acknowledged_write(serve, tmp_path):
    server = serve("--publish", "manual")
    path = _path(server)
    acknowledged = set()
    with server.client() as c:
        for k in range(5):
            assert c.post("/decisions", json={"id": f"kept-{k}", "x": X}).status_code == 200
            acknowledged.add(f"kept-{k}")
        # A copy of the database moved onto its path (a restore from a backup taken now).
        copy = tmp_path / "copy.db"
        source, target = sqlite3.connect(path), sqlite3.connect(copy)
        source.backup(target)
        source.close()
        target.close()
        os.replace(copy, path)
        for k in range(5):
            r = c.post("/decisions", json={"id": f"late-{k}", "x": X})
            if r.status_code == 200:
                acknowledged.add(f"late-{k}")
            else:
                _answers_503(r, "replaced")
        assert c.get("/health").json()["status"] == "database lost"
    server.kill()
    for suffix in ("-wal", "-shm"):  # the replaced file's: a restored database starts without
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert acknowledged - _ids(server.database) == set()  # every acknowledged decision is there
    server.start()  # and the service starts on the database at the path
    with server.client() as c:
        assert c.post("/decisions", json={"id": "late-0", "x": X}).status_code == 200


# -- a read-only database, a full disk ----------------------------------------------------------
@pytest.fixture
def mounted(tmp_path):
    """``mount(*args)``: run mount (root, with CAP_SYS_ADMIN: else the test is skipped, saying
    so); everything mounted is unmounted after the test."""
    done: list[Path] = []

    def mount(*args: str) -> None:
        result = subprocess.run(["mount", *args], capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip(f"cannot mount here ({result.stderr.strip()}): the test needs root")
        if args[-1] not in map(str, done):
            done.append(Path(args[-1]))

    yield mount
    for point in reversed(done):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


@pytest.fixture
def no_serving(monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("sat serve served"))


@pytest.mark.parametrize("what", ["directory", "file"])
def test_a_read_only_database_refuses_to_start_in_one_line(what, serve, tmp_path, mounted,
                                                           capsys, no_serving):
    folder = tmp_path / "ro"
    folder.mkdir()
    mounted("-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder))
    server = serve("--publish", "manual", database=f"sqlite:///{folder}/service.db")
    server.stop()
    target = folder if what == "directory" else folder / "service.db"
    if what == "file":
        mounted("--bind", str(target), str(target))
    mounted("-o", "remount,ro,bind" if what == "file" else "remount,ro", str(target))
    status = main(["serve", *SA_OLS, "--dimension", "3", "--port", str(free_port()),
                   "--database", server.database])
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (out, err)
    assert err.startswith("sat: error: ") and err.count("\n") == 1, err
    # A read-only file system is not writable even by root: the directory's check sees it.
    words = ("is not writable",) if what == "directory" else ("cannot be used", "readonly")
    assert all(w in err for w in words), err


def test_a_full_disk_is_a_prompt_503_and_health_says_so(serve, tmp_path, mounted):
    folder = tmp_path / "small"
    folder.mkdir()
    mounted("-t", "tmpfs", "-o", "size=3m", "tmpfs", str(folder))
    server = serve("--publish", "manual", database=f"sqlite:///{folder}/service.db")
    filler = folder / "filler"
    with open(filler, "wb") as f:  # leave about 300 KB free
        f.write(b"\0" * (os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize - 300_000))
    batch = [{"x": [0.123456789 * k, -0.2, 0.3]} for k in range(400)]
    with server.client() as c:
        for _ in range(100):
            started = time.monotonic()
            r = c.post("/decisions", json={"applicants": batch})
            assert time.monotonic() - started < 10, "a write took over 10 s on a full disk"
            if r.status_code != 200:
                break
        else:
            pytest.fail("the disk never filled")
        _answers_503(r, "full")
        rest = folder / "rest"  # and the last bytes too: a small write finds no room either
        with open(rest, "wb", buffering=0) as f, pytest.raises(OSError):
            while True:
                f.write(b"\0" * 4096)
        # The failed transaction left room in the write-ahead log, which small writes use
        # (durably) until it is gone.
        for _ in range(5_000):
            r = c.post("/decisions", json={"x": X})
            if r.status_code != 200:
                break
        _answers_503(r, "full")
        # A rule small enough for the room still left is written durably (200); each takes
        # some, so publications meet the full disk within a few tries, each answered promptly.
        for _ in range(50):
            started = time.monotonic()
            try:
                published = c.post("/publish", timeout=40)
            except httpx.ReadTimeout:
                pytest.fail("POST /publish did not answer in 40 s on a full disk")
            assert time.monotonic() - started < 35
            if published.status_code != 200:
                break
        _answers_503(published, "full")
        health = c.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "database failing"
        assert "full" in health.json()["database_error"], health.text
        # Space again: the service takes writes and says it is well, without a restart.
        filler.unlink()
        rest.unlink()
        deadline = time.monotonic() + 15
        while (r := c.post("/decisions", json={"applicants": batch[:5]})).status_code != 200:
            assert time.monotonic() < deadline, r.text
            time.sleep(0.2)
        assert c.post("/publish", timeout=40).status_code == 200
        while (health := c.get("/health")).status_code != 200:
            assert time.monotonic() < deadline, health.text
            time.sleep(0.2)


def _damage(path: Path) -> None:
    """Random bytes over three pages past the schema's: index and table pages of the log."""
    with open(path, "r+b") as f:
        for page in (5, 6, 7):
            f.seek(page * 4096 + 100)
            f.write(bytes(range(200)))


def test_a_damaged_sqlite_file_is_refused_at_start_and_by_check(serve, tmp_path, capsys):
    """Three damaged pages: `sat serve check` says the database is damaged (exit 1) and a
    start refuses it in one line (exit 2), where both passed before. The control: the same
    database before the damage passes check."""
    server = serve("--publish", "manual")
    with server.client() as c:
        c.post("/decisions", json={"applicants": [
            {"id": f"d-{k}", "x": [0.01 * k, 0.1, 0.2]} for k in range(3000)]}
               ).raise_for_status()
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0
    capsys.readouterr()
    _damage(Path(server.database.removeprefix("sqlite:///")))
    assert main(["serve", "check", "--database", server.database]) == 1
    assert capsys.readouterr().out.startswith("the database is damaged (PRAGMA quick_check: ")
    status = main(["serve", "--database", server.database, "--port", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err[-1].startswith(
        f"sat: error: database {server.database!r} is damaged (PRAGMA quick_check: "), err


def test_warm_cap_0_without_a_start_is_refused_before_anything_is_made(tmp_path, capsys):
    """No outcome could ever arrive: refused in one line, no database made (a cap of 1 or
    more starts: the acceptance cap's tests in test_lender.py)."""
    database = f"sqlite:///{tmp_path}/locked.db"
    status = main(["serve", "--database", database, "--dimension", "3", "--param", "delta=0.3",
                   "--param", "r0=0", "--warm-cap", "0", "--port", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err[-1] == (
        f"sat: error: database {database!r}: warm_cap 0 with no warm start rejects every "
        "applicant for ever (no outcome can arrive to learn a first rule from): give "
        "--warm-cap 1 or more, or a warm start (--start-rule, --start-learner or --start-log)")
    assert not (tmp_path / "locked.db").exists()


def test_a_port_another_process_holds_is_one_line_not_a_banner_and_a_traceback(tmp_path,
                                                                               capsys):
    """`--role decide` (or any start) on a port something listens on: one line naming the
    port, and no banner printed first."""
    holder = __import__("socket").socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        status = main(["serve", "--database", f"sqlite:///{tmp_path}/held.db", "--dimension",
                       "3", "--param", "delta=0.3", "--param", "r0=0", "--port", str(port)])
    finally:
        holder.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and err[-1] == (
        f"sat: error: --port {port}: cannot listen on 127.0.0.1:{port} (Address already in "
        "use): another process holds it; stop it or give another --port"), err
    assert not any(line.startswith("sat serve: sa-ols") for line in err)  # no banner


def test_warm_cap_0_with_a_warm_start_starts(tmp_path, monkeypatch):
    """A start gives a first rule to learn from, so a cap of 0 on first guesses locks
    nothing: the new database starts (the control of the refusal above)."""
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    rule = tmp_path / "rule.json"
    rule.write_text('{"beta": [1.0, 0.0, 0.0], "threshold": 0.2}')
    assert main(["serve", "--database", f"sqlite:///{tmp_path}/started.db", "--dimension", "3",
                 "--param", "delta=0.3", "--param", "r0=0", "--warm-cap", "0",
                 "--start-rule", str(rule), "--port", str(free_port())]) == 0
