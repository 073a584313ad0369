"""The service's parts in one process: the database, the writer, the learner and the key check
(:class:`Service`), opened and checked before anything listens; :mod:`.app` serves them."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import sqlalchemy as sa

from . import store
from .config import ServiceConfig
from .deciding import Writer
from .keys import KeyCheck
from .learning import LearnerLoop
from .redact import reason, shown
from .sqlite_file import DatabaseLost

#: What a process of the service does: decide and learn (one per database), or only decide.
ROLES = ("all", "decide")

#: Why a service that could never learn does not start: under rules published before any
#: outcome was learned a cap of 0 rejects everyone, so no outcome can ever arrive.
_LOCKED = ("{where}: warm_cap 0 with no warm start rejects every applicant for ever (no "
           "outcome can arrive to learn a first rule from): give --warm-cap 1 or more, or a "
           "warm start (--start-rule, --start-learner or --start-log)")


class Service:
    """A service's parts in one process: the database, the writer, the learner (role
    ``all``), the key check. :meth:`open` checks everything before any request is served."""

    def __init__(self, config: ServiceConfig, role: str = "all") -> None:
        if role not in ROLES:
            raise ValueError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
        self.config = config.check()
        self.role = role
        self.engine: Any = None
        self.writer: Writer | None = None
        self.learner: LearnerLoop | None = None
        self.keys: KeyCheck | None = None
        self.bandit = config.params.get("feedback") == "bandit"  # unset is apple tasting
        self._probing = threading.Lock()
        self._probed_at = -math.inf
        #: name → (rule version, when, the estimate) of each shadow's last estimate
        self.estimates: dict[str, tuple[int, float, dict[str, Any]]] = {}
        #: What this start changed of the kept settings, one line each (:mod:`.settings`).
        self.changes: list[str] = []
        #: What else a start says: how a warm start numbered the first rule.
        self.notes: list[str] = []

    def open(self) -> Service:
        """Connect, migrate, check the database's settings and that it can be written, start
        the learner and the writer; a database that cannot be used is a ``ValueError`` in one
        line (its URL's password masked)."""
        url = self.config.database
        try:
            return self._open()
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            self.close()
            raise ValueError(f"database {shown(url)!r} cannot be used: "
                             f"{reason(exc, url)}") from None

    def _open(self) -> Service:
        from . import settings, warmstart

        # A warm start's file is read and checked whole before the database is touched: a bad
        # row is one line, and nothing is written.
        start = warmstart.prepare(self.config)
        where = f"database {shown(self.config.database)!r}"
        # (checked here for a new database, so that none is made; an existing one's history
        # is read in the transaction below)
        if self.config.warm_cap == 0 and start is None \
                and settings.read_at(self.config.database) is None:
            raise ValueError(_LOCKED.format(where=where))
        self.engine = store.connect(self.config.database)
        why = store.damaged(self.engine)
        if why is not None:
            raise ValueError(f"{where} is damaged (PRAGMA quick_check: {why}): restore it from "
                             "a backup (sat serve backup) before serving from it")
        store.migrate(self.engine)
        with store.transaction(self.engine) as conn:
            made = warmstart.record(conn, self.config, start)
            if self.config.warm_cap == 0 and not store.learned_or_started(conn):
                raise ValueError(_LOCKED.format(where=where))
            # Compared again inside the transaction that writes them: another start may have
            # made the database since the settings were read (settings.resolve).
            stored = settings.read(conn, where)
            self.changes = [] if stored is None else settings.compare(stored, self.config,
                                                                      where)
            if store.read_setting(conn, "fixed") is None:
                store.write_setting(conn, "fixed", self.config.fixed())
            store.write_setting(conn, "settings", settings.kept(self.config))
            # A start writes, so a read-only file or directory is refused here, before
            # anything listens (else every write would fail once it did).
            store.touch(conn)
        if made and start.kind == "log":
            self.notes.append(warmstart.log_note(start))
        self.keys = KeyCheck(self.engine)
        if self.role == "all":
            self.learner = LearnerLoop(self.engine, self.config)
            self.learner.start()
        self.writer = Writer(self.engine, self.bandit,
                             on_commit=self.learner.wake if self.learner else lambda: None,
                             scale=self.config.scaling(), cap=self.config.warm_cap,
                             explore=self.config.explore, seed=self.config.seed,
                             max_groups=self.config.max_groups)
        self.writer.start()
        return self

    def database_error(self) -> str | None:
        """Why writes cannot be acknowledged now (None if nothing says so): the database's
        file is not the one opened, or the last write of the writer or the learner failed."""
        lost = store.lost(self.engine)
        if lost is not None:
            return lost
        if self.writer is not None and self.writer.failure is not None:
            return self.writer.failure
        if self.learner is not None and self.learner.db_error is not None:
            return self.learner.db_error
        return None

    def readiness(self) -> dict[str, Any]:
        """Whether this process should be sent traffic: the database reachable and at the
        newest schema, nothing saying writes fail, and (role ``all``) the learner's loop
        running without error (a standby's runs: it decides, and takes over when it can)."""
        why: list[str] = []
        try:
            revision = store.schema_revision(self.engine)
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            revision = None
            why.append(f"the database cannot be read ({reason(exc, self.config.database)})")
        else:
            if revision != store.HEAD:
                why.append(f"the database is at schema {revision}, this release needs "
                           f"{store.HEAD}")
        failing = self.database_error()
        if failing is not None:
            why.append(f"the database fails writes ({failing})")
        if self.learner is None:
            learner = "none here (role decide)"
        elif self.learner.error is not None:
            learner = "stopped"
            why.append(f"the learner has stopped: {self.learner.error}")
        elif not self.learner.running:
            learner = "not running"
            why.append("the learner's loop is not running")
        else:
            learner = "standby" if self.learner.standby else "running"
        return {"ready": not why, "role": self.role, "schema": revision, "learner": learner,
                "reasons": why}

    def probe(self) -> None:
        """Try a write that changes nothing: a writer's failure is forgotten once the
        database takes writes again (a worker nobody writes to would say it for ever). At most
        one try at a time and one a second, however often ``/health`` is asked."""
        if self.writer is None or self.writer.failure is None:
            return
        if time.monotonic() < self._probed_at + 1.0 or not self._probing.acquire(False):
            return
        try:
            self._probed_at = time.monotonic()
            with store.transaction(self.engine) as conn:
                store.touch(conn)
        except Exception:  # still failing: the failure stands
            return
        finally:
            self._probing.release()
        self.writer.failure = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.learner is not None:
            self.learner.stop()
        if self.engine is not None:
            self.engine.dispose()

