"""A throwaway PostgreSQL cluster (from the system's PostgreSQL package) on a loopback port: for
trying the service on PostgreSQL, for its tests and its benchmark. Not for production."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def find_initdb() -> Path | None:
    """PostgreSQL's ``initdb`` (on the path, or Debian's ``/usr/lib/postgresql/*/bin``)."""
    found = shutil.which("initdb") or next(
        (str(p) for p in sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))), None)
    return None if found is None else Path(found).resolve()  # beside its pg_ctl, createdb


def missing() -> str | None:
    """Why a throwaway cluster cannot start here (None if it can)."""
    if find_initdb() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: PostgreSQL refuses to run as root"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'strategic-apple-tasting[postgres]')"
    return None


@contextmanager
def throwaway_postgres(fsync: bool = False) -> Iterator[str]:
    """Start a cluster in a temporary directory; yields its URL; stops and deletes it after.
    ``fsync`` off by default (a throwaway cluster need not survive a power cut)."""
    why = missing()
    if why is not None:
        raise RuntimeError(why)
    bindir = find_initdb().parent
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="sat-postgres-") as tmp:
        root = Path(tmp)
        run_as: list[str] = []
        if os.geteuid() == 0:
            run_as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(root, "postgres")
        data = root / "data"
        ctl = [*run_as, str(bindir / "pg_ctl"), "-D", str(data)]
        subprocess.run([*run_as, str(bindir / "initdb"), "-D", str(data), "-U", "sat",
                        "-A", "trust", "--no-sync"], check=True, capture_output=True)
        options = (f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=100"
                   + ("" if fsync else " -c fsync=off -c synchronous_commit=off"))
        subprocess.run([*ctl, "-l", str(root / "log"), "-o", options, "-w", "start"],
                       check=True, capture_output=True)
        try:
            subprocess.run([*run_as, str(bindir / "createdb"), "-h", "127.0.0.1", "-p",
                            str(port), "-U", "sat", "service"], check=True, capture_output=True)
            yield f"postgresql://sat@127.0.0.1:{port}/service"
        finally:
            subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True)
