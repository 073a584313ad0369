"""One learner per database: the lock, a standby that waits for it, and a lock that is lost.

The learner holds a lock that the system drops when its holder dies: ``flock`` on a file beside
a SQLite database, a session-level advisory lock on PostgreSQL. A second ``sat serve`` with
role ``all`` waits for it (a *standby*: it decides meanwhile) and takes over when it gets it.

PostgreSQL ends the lock with the session that holds it, also when the server restarts or the
session is terminated, while the learner's other connections carry on. So every write
transaction of the learner first locks the progress row and checks that its lock session still
holds the lock (:meth:`SingleLearner.verify`): a learner that lost it writes nothing more and
stands by. A new holder takes the same row lock before it rebuilds the learner, so it reads
after any transaction of the old one that passed its check: two learners never write at once.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from . import store
from .redact import shown
from .sqlite_file import open_private


class LockLost(RuntimeError):
    """The learner's lock ended (its PostgreSQL session ended): it must stop learning."""


class SingleLearner:
    """The lock that makes one learner per database (see the module's description).

    ``url`` is the database as the user typed it (shown, password masked, in messages)."""

    KEY = 0x5A7_1EA2  # the advisory lock's key (< 2^31: pg_locks shows it as objid)

    def __init__(self, engine: Engine, url: str | None = None) -> None:
        self.engine = engine
        self.url = url if url is not None else engine.url.render_as_string(False)
        self._file: Any = None
        self._conn: Connection | None = None
        self._session: tuple[int, Any] | None = None  # (pid, backend start) of the lock's

    @property
    def sqlite(self) -> bool:
        return self.engine.url.get_backend_name() == "sqlite"

    def busy(self) -> str:
        return (f"database {shown(self.url)!r} already has a learner running (another `sat "
                "serve`)")

    def try_acquire(self) -> bool:
        """Take the lock if it is free; whether it was taken. (A PostgreSQL server that
        cannot be reached is an error, as for any start.)"""
        if self.held:
            return True
        if self.sqlite:
            path = Path(self.engine.url.database).resolve()
            self._file = open_private(path.with_name(path.name + ".learner-lock"))
            try:
                fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._file.close()
                self._file = None
                return False
            return True
        conn = self.engine.connect()
        try:
            got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"),
                               {"k": self.KEY}).scalar()
            session = conn.execute(sa.text(
                "SELECT pid, backend_start FROM pg_stat_activity "
                "WHERE pid = pg_backend_pid()")).one()
            conn.commit()
        except BaseException:
            conn.invalidate()  # a session that may hold the lock is not given back to the pool
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn, self._session = conn, (session.pid, session.backend_start)
        return True

    def acquire(self) -> None:
        """Take the lock, or a ``ValueError`` in one line if another learner holds it."""
        if not self.try_acquire():
            raise ValueError(f"{self.busy()}: start this one with --role decide")

    @property
    def held(self) -> bool:
        return self._file is not None or self._conn is not None

    def verify(self, conn: Connection) -> None:
        """Inside a write transaction of the learner (``conn``): lock the progress row (a new
        holder takes it before rebuilding), then check that the lock's session still holds
        the lock; :class:`LockLost` if not. SQLite's ``flock`` ends only with the process."""
        if self.sqlite:
            return
        if self._session is None:
            raise LockLost("the learner does not hold the lock")
        conn.execute(sa.select(store.learner_progress.c.id).with_for_update())
        pid, started = self._session
        held = conn.execute(sa.text(
            "SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = :k "
            "AND l.objsubid = 1 AND l.granted AND l.pid = :pid AND a.backend_start = :t"),
            {"k": self.KEY, "pid": pid, "t": started}).first()
        if held is None:
            raise LockLost(f"the learner's lock on database {shown(self.url)!r} ended with its "
                           "session (a PostgreSQL restart, or the session was terminated)")

    def alive(self) -> None:
        """:class:`LockLost` if the lock's session is gone (checked when idle)."""
        if self.sqlite or self._conn is None:
            return
        try:
            self._conn.execute(sa.text("SELECT 1")).scalar()
            self._conn.commit()
        except sa.exc.SQLAlchemyError:
            raise LockLost(f"the learner's lock on database {shown(self.url)!r} ended with its "
                           "session (a PostgreSQL restart, or the session was "
                           "terminated)") from None

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
        if self._conn is not None:
            try:
                self._conn.invalidate()  # the session ends: the lock goes with it
                self._conn.close()
            except sa.exc.SQLAlchemyError:
                pass
            self._conn = None
            self._session = None
