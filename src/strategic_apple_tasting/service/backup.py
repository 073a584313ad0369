"""A copy of a live SQLite service database, by SQLite's online backup API.

``sqlite3.Connection.backup`` copies the database page by page inside one read transaction:
under write-ahead logging a reader never blocks the service's writers nor waits for them, and
what it copies is the database as of one commit (every acknowledged decision up to it, none
half-written). Copying the file with ``cp`` instead may catch it between a commit to the
``-wal`` file and SQLite's copy of it into the database: the copy then lacks acknowledged
decisions, or is corrupt. PostgreSQL is backed up with its own ``pg_dump``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa

from .redact import shown


def sqlite_path(url: str) -> Path:
    """The file of a SQLite database URL; a ``ValueError`` in one line for another database."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        raise ValueError(f"database {shown(url)!r}: sat serve backup copies a SQLite "
                         "database; back up PostgreSQL with pg_dump (pg_dump --format=custom "
                         "--file FILE URL; docs/service.md, \"In production\")")
    return Path(parsed.database)


def backup(url: str, into: Path) -> dict[str, int]:
    """Copy the SQLite database ``url`` (which exists) into the empty file ``into``, as of one
    commit, and check the copy (``PRAGMA quick_check``); returns its decisions and outcomes
    counted. A copy that fails its check is a ``ValueError`` in one line."""
    source = sqlite3.connect(sqlite_path(url), timeout=5.0)
    try:
        target = sqlite3.connect(into)
        try:
            source.backup(target)  # all pages in one step: one read transaction, one snapshot
            verdict = target.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise ValueError(f"the copy of {shown(url)!r} fails SQLite's check: {verdict}")
            counts = {table: int(target.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                      for table in ("decisions", "outcomes")}
        finally:
            target.close()
    finally:
        source.close()
    return counts
