"""A live SQLite service database backed up (SQLite's online backup API, ``sat serve
backup``) while clients write, restored to a new file: ``sat serve check`` passes on it, and
it holds every decision acknowledged before the backup began."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import threading

import pytest

from strategic_apple_tasting.cli.main import main

pytest.importorskip("httpx", reason="the 'serve' extra is not installed")


def test_a_live_database_backed_up_restores_and_checks(serve, tmp_path, capsys):
    server = serve("--publish", "outcomes:5")
    acknowledged: list[str] = []
    stop = threading.Event()

    def client(name: str) -> None:
        with server.client() as c:
            k = 0
            while not stop.is_set() and k < 400:
                decision = c.post("/decisions", json={"id": f"{name}-{k}",
                                                      "x": [0.3, 0.1 * (k % 5), -0.2]}).json()
                if decision["accepted"]:
                    c.post("/outcomes", json={"id": f"{name}-{k}", "outcome": 1.0 - k % 3}
                           ).raise_for_status()
                acknowledged.append(f"{name}-{k}")
                k += 1

    writers = [threading.Thread(target=client, args=("c0",))]
    for w in writers:
        w.start()
    try:
        while len(acknowledged) < 20:  # under way
            threading.Event().wait(0.02)
        before = list(acknowledged)
        out = tmp_path / "backup.db"
        assert main(["serve", "backup", "--out", str(out), "--database", server.database]) == 0
    finally:
        stop.set()
        for w in writers:
            w.join()
    said = capsys.readouterr().out
    assert said.startswith(f"backed up {server.database} to {out} (mode 0600): "), said
    assert oct(stat.S_IMODE(os.stat(out).st_mode)) == "0o600"
    with sqlite3.connect(out) as db:
        held = {row[0] for row in db.execute("SELECT id FROM decisions")}
    assert set(before) <= held  # every decision acknowledged before the backup began
    restored = tmp_path / "restored.db"
    shutil.copyfile(out, restored)  # a restore is the file put where a database is read
    server.stop()
    assert main(["serve", "check", "--database", f"sqlite:///{restored}"]) == 0
    assert "bit for bit" in capsys.readouterr().out
    # A second backup into the same file is refused unless told.
    assert main(["serve", "backup", "--out", str(out), "--database", server.database]) == 2
    assert capsys.readouterr().err == (f"sat: error: --out {str(out)!r} exists: give --force "
                                       "to replace it\n")
    assert main(["serve", "backup", "--out", str(out), "--force",
                 "--database", server.database]) == 0
