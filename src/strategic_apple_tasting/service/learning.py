"""The service's one learner: it reads the log in order, learns, publishes, and saves itself.

Deciding needs only the published rule, so any number of workers decide; learning happens here
only, in one thread of one process (a lock on the database makes sure of it), so the learner's
state has a single writer. The learner reads decisions and outcomes in log order
(:mod:`.store`): a decision is filed with :meth:`~..learners.decisions.DecisionDesk.record`
under the rule version it was made with, an outcome is learned with
:meth:`~..learners.decisions.DecisionDesk.report`, and a publication is written to the rules
table with the log position it follows. Every so often the learner's saved state goes into the
database with the position it includes.

The learner is a function of the log: :func:`restore` rebuilds it from the last saved state
(or from nothing) by replaying the log after it, and a start, a restart after ``kill -9`` and
``sat serve check`` all go through it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..learners.decisions import PublishedRule
from ..learners.persistence import dumps, loads
from . import store
from .config import ServiceConfig
from .redact import reason, redact, shown
from .sqlite_file import DatabaseLost, open_private

log = logging.getLogger("strategic_apple_tasting.service")

#: Seconds a step waits for more of the log (one learner step, not one per decision).
GATHER = 0.02
#: Seconds between writes of the learner's progress when nothing else is written.
PROGRESS_EVERY = 0.25
#: Log entries read per transaction.
CHUNK = 5_000
#: Saved states kept in the database (the newest ones).
KEEP_STATES = 2
#: Seconds between two tries of a learner whose database refused its transaction.
RETRY_SECONDS = 1.0


@dataclass(frozen=True)
class Entry:
    """One log entry: a decision or an outcome."""

    seq: int
    id: str
    x: list[float] | None = None  # a decision's features, as seen
    accepted: bool | None = None
    version: int | None = None  # the rule a decision was made under
    outcome: float | None = None  # an outcome's value


def read_log(conn: Connection, after: int, limit: int = CHUNK, upto: int | None = None
             ) -> list[Entry]:
    """The log's entries after position ``after`` (and up to ``upto``), in order, at most
    ``limit``. One statement, so one snapshot: two queries could see a transaction that
    commits between them in one table and not the other (PostgreSQL's read committed)."""
    d, o = store.decisions, store.outcomes
    decisions = sa.select(d.c.seq, d.c.id.label("id"), d.c.features, d.c.accepted,
                          d.c.version, sa.cast(sa.null(), sa.Double).label("outcome")
                          ).where(d.c.seq > after)
    outcomes = sa.select(o.c.seq, o.c.decision_id.label("id"),
                         sa.cast(sa.null(), sa.Text).label("features"),
                         sa.cast(sa.null(), sa.Boolean).label("accepted"),
                         sa.cast(sa.null(), sa.Integer).label("version"), o.c.outcome
                         ).where(o.c.seq > after)
    if upto is not None:
        decisions, outcomes = decisions.where(d.c.seq <= upto), outcomes.where(o.c.seq <= upto)
    log = sa.union_all(decisions, outcomes).subquery()
    rows = conn.execute(sa.select(log).order_by(log.c.seq).limit(limit)).all()
    return [Entry(r.seq, r.id, json.loads(r.features), bool(r.accepted), r.version)
            if r.features is not None else Entry(r.seq, r.id, outcome=r.outcome)
            for r in rows]


def _beta(rule: PublishedRule) -> str:
    """β as the rules table keeps it: JSON, each float written exactly."""
    return json.dumps([float(b) for b in np.asarray(rule.rule.beta, dtype=float)])


def rule_row(rule: PublishedRule, after_seq: int, log_at: int, published_at: float
             ) -> dict[str, Any]:
    return {"version": rule.version, "kind": "linear", "beta": _beta(rule),
            "threshold": float(rule.rule.threshold),
            "probability": float(rule.rule.probability),
            "after_seq": after_seq, "log_at": log_at, "published_at": published_at}


class LogLearner:
    """The learner and where it is in the log (position, rule in force, counts)."""

    def __init__(self, config: ServiceConfig, learner: Any = None, seq: int = 0,
                 learned: int = 0, clean: int = 0, since: int = 0) -> None:
        self.config = config
        self.learner = config.make_learner() if learner is None else learner
        self.seq = seq
        self.learned = learned
        self.clean = clean
        self.since = since  # outcomes learned since the last publication
        # (version, position): a superseded rule is kept until the learner has read the log
        # as far as it reached when the next rule was published (store.lock_log).
        self.releases: list[tuple[int, int]] = []

    @property
    def version(self) -> int:
        rule = self.learner.rule_in_force()
        return 0 if rule is None else rule.version

    def apply(self, entry: Entry) -> None:
        """Learn one log entry; ``ValueError`` naming it if the learner refuses it (an entry
        written past the service's checks, or by a release that checked less)."""
        try:
            if entry.outcome is None:
                self.learner.record(np.asarray(entry.x, dtype=float), entry.id, entry.accepted,
                                    entry.version, time=float(entry.seq))
            else:
                used = self.learner.report(entry.id, entry.outcome)
                self.learned += 1
                self.clean += bool(used)
                self.since += 1
        except ValueError as exc:
            what = "decision" if entry.outcome is None else "outcome of decision"
            raise ValueError(f"log entry {entry.seq} ({what} {entry.id!r}) cannot be learned: "
                             f"{exc}") from None
        self.seq = entry.seq
        self._release_due()

    def publish(self, log_at: int) -> PublishedRule:
        """Publish the next rule at the current log position, the log then reaching
        ``log_at``: the rule before it is kept until the learner has read that far (decisions
        under it may lie up to there)."""
        rule = self.learner.publish(time=float(self.seq))
        self.learner.hold(rule.version)
        if rule.version > 1:
            self.releases.append((rule.version - 1, log_at))
        self.since = 0
        self._release_due()
        return rule

    def _release_due(self) -> None:
        while self.releases and self.seq >= self.releases[0][1]:
            self.learner.release(self.releases.pop(0)[0])

    def saved_row(self) -> dict[str, Any]:
        return {"seq": self.seq, "version": self.version, "state": dumps(self.learner),
                "learned": self.learned, "clean": self.clean, "since": self.since,
                "created_at": store.now()}


def _rules_after(conn: Connection, version: int) -> Iterator[Any]:
    r = store.rules
    yield from conn.execute(sa.select(r).where(r.c.version > version).order_by(r.c.version))


def restore(engine: Engine, config: ServiceConfig, *, upto: int | None = None,
            saved: bool = True) -> LogLearner:
    """The service's learner, rebuilt: from the newest saved state (``saved``; else from
    nothing), then the log after it replayed in order, each publication in its place and
    checked against the rules table, up to the learner's recorded progress (or ``upto``)."""
    with engine.connect() as conn:
        if upto is None:
            upto = conn.execute(sa.select(store.learner_progress.c.seq)).scalar_one()
        row = None
        if saved:
            s = store.learner_state
            row = conn.execute(sa.select(s).where(s.c.seq <= upto)
                               .order_by(s.c.seq.desc()).limit(1)).first()
        if row is None:
            current = LogLearner(config)
        else:
            learner = _saved_learner(row, config)
            current = LogLearner(config, learner, row.seq, row.learned, row.clean, row.since)
            r = store.rules
            current.releases = [
                (v.version - 1, v.log_at) for v in conn.execute(
                    sa.select(r.c.version, r.c.log_at).where(
                        r.c.version <= current.version, r.c.version > 1,
                        r.c.log_at > current.seq).order_by(r.c.version))]
        rules = [r for r in _rules_after(conn, current.version) if r.after_seq <= upto]
        entries: list[Entry] = []
        while True:
            if not entries:
                entries = read_log(conn, current.seq, upto=upto)
            while rules and (not entries or rules[0].after_seq < entries[0].seq):
                _republish(current, rules.pop(0))
            if not entries:
                break
            for entry in entries:
                while rules and rules[0].after_seq < entry.seq:
                    _republish(current, rules.pop(0))
                current.apply(entry)
            entries = []
    return current


class SavedStateError(ValueError):
    """A saved learner state in the database that cannot be loaded: bad input (the start and
    ``sat serve check`` refuse it in one line, exit status 2), not a log that fails its check."""


def _saved_learner(row: Any, config: ServiceConfig) -> Any:
    """The learner saved in a state row: only the service's configured learner may be loaded
    from the database (nothing else is imported), and it must be that learner."""
    from ..learners import learner_class

    source = f"the saved learner state at log position {row.seq}"
    configured = learner_class(config.learner)
    try:
        learner = loads(row.state, source, allow=[configured])
    except ValueError as exc:
        raise SavedStateError(str(exc)) from None
    if type(learner) is not configured:
        raise SavedStateError(f"{source} is learner {type(learner).__name__}, but the service "
                              f"runs {config.learner!r}")
    return learner


def _republish(current: LogLearner, row: Any) -> None:
    if row.after_seq != current.seq:
        raise ValueError(f"replay diverged: rule version {row.version} follows log position "
                         f"{row.after_seq}, the replay is at {current.seq}")
    rule = current.publish(row.log_at)
    beta = _beta(rule)
    if rule.version != row.version or beta != row.beta or \
            float(rule.rule.threshold) != row.threshold:
        raise ValueError(f"replay diverged: rule version {row.version} was β={row.beta}, "
                         f"threshold {row.threshold}; the replay published version "
                         f"{rule.version}, β={beta}, threshold {rule.rule.threshold}")


def state_differences(a: Any, b: Any) -> list[str]:
    """Where two learners' saved states differ (empty if they are the same, bit for bit)."""
    import io
    import zipfile

    def parts(learner: Any) -> tuple[dict[str, Any], dict[str, bytes]]:
        with zipfile.ZipFile(io.BytesIO(dumps(learner))) as zf:
            meta = json.loads(zf.read("meta.json"))
            arrays = {n: zf.read(n) for n in zf.namelist() if n.endswith(".npy")}
        return meta, arrays

    (ma, aa), (mb, ab) = parts(a), parts(b)
    out = [f"meta.{k}" for k in sorted(set(ma) | set(mb)) if ma.get(k) != mb.get(k)]
    out += [f"array {n}" for n in sorted(set(aa) | set(ab)) if aa.get(n) != ab.get(n)]
    return out


class SingleLearner:
    """The lock that makes one learner per database: a lock on a file beside a SQLite database,
    a session-level advisory lock on PostgreSQL. Both are released by the system when the
    process holding them dies, so a restart after ``kill -9`` takes them at once."""

    KEY = 0x5A7_1EA2  # the advisory lock's key

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._file: Any = None
        self._conn: Connection | None = None

    def acquire(self) -> None:
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            path = Path(url.database).resolve()
            self._file = open_private(path.with_name(path.name + ".learner-lock"))
            try:
                fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._file.close()
                self._file = None
                raise ValueError(f"database {shown(str(url))!r} already has a learner "
                                 "running (another `sat serve`): start this one with "
                                 "--role decide") from None
            return
        self._conn = self.engine.connect()
        got = self._conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"),
                                 {"k": self.KEY}).scalar()
        self._conn.commit()
        if not got:
            self._conn.close()
            self._conn = None
            raise ValueError(f"database {shown(url.render_as_string(False))!r} already "
                             "has a learner running (another `sat serve`): start this one "
                             "with --role decide")

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class LearnerLoop:
    """The learning thread of a service (see the module's description). Workers read new
    rules from the database; a publication on request is answered with its rules row."""

    def __init__(self, engine: Engine, config: ServiceConfig) -> None:
        self.engine = engine
        self.config = config
        self.error: str | None = None
        #: Why the database refused the learner's last transaction (None once one succeeds).
        self.db_error: str | None = None
        self._lock = SingleLearner(engine)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._commands: list[Future] = []
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self.current: LogLearner | None = None
        self._saved_at = 0
        self._published_at = 0.0
        self._progress_at = -1  # the position the progress row was last written at
        self._progress_by = 0.0  # not written again before (monotonic clock)

    # -- life -------------------------------------------------------------------------------
    def start(self) -> None:
        """Take the single-learner lock, rebuild the learner, publish the first rule if the
        database has none, then learn in a thread."""
        self._lock.acquire()
        try:
            self.current = restore(self.engine, self.config)
            with store.transaction(self.engine) as conn:
                last = conn.execute(sa.select(sa.func.max(store.learner_state.c.seq))).scalar()
                self._saved_at = -1 if last is None else int(last)
                if self.current.version == 0:
                    self._publish(conn)
                else:
                    self._published_at = conn.execute(
                        sa.select(store.rules.c.published_at)
                        .where(store.rules.c.version == self.current.version)).scalar_one()
                if self._saved_at < 0:
                    self._save(conn)
        except BaseException:
            self._lock.release()
            raise
        self._thread = threading.Thread(target=self._run, name="sat-learner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Learn what the log holds, save the learner, and stop."""
        if self._thread is None:
            return
        self._stop.set()
        self._wake.set()
        self._thread.join()
        self._thread = None
        if self.error is None and self.current is not None:
            try:
                self._step(save=True)
            except Exception as exc:  # the log is safe; the next start replays it
                log.warning("learner not saved at stop: %s", redact(
                    str(exc), self.engine.url.render_as_string(hide_password=False)))
        with self._guard:
            commands, self._commands = self._commands, []
        for future in commands:
            future.set_exception(RuntimeError("the service is stopping: publish again after "
                                              "it restarts"))
        self._lock.release()

    def wake(self) -> None:
        """New log entries: learn them soon."""
        self._wake.set()

    def publish(self) -> Future:
        """Learn everything logged so far, then publish; the future gives the rules row."""
        future: Future = Future()
        # Running from the start: a client that stops waiting cannot cancel it (the
        # publication may still happen; GET /policy tells).
        future.set_running_or_notify_cancel()
        with self._guard:
            self._commands.append(future)
        self._wake.set()
        return future

    # -- the loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            self._wake.wait(0.05)
            self._wake.clear()
            with self._guard:
                commands, self._commands = self._commands, []
            if not commands:  # gather what arrives in a short while into one step
                time.sleep(max(0.0, last + GATHER - time.monotonic()))
            last = time.monotonic()
            try:
                if self.current is None:  # a transaction failed: rebuild from the database
                    self.current = restore(self.engine, self.config)
                done = self._step(commands)
            except DatabaseLost as exc:
                with self._guard:
                    self._commands[:0] = commands
                self._fail(str(exc))
                continue
            except sa.exc.OperationalError as exc:
                self._refused(exc, commands)
                continue
            except Exception as exc:
                with self._guard:
                    self._commands[:0] = commands
                self._fail(f"{type(exc).__name__}: {exc}")
                continue
            for future, row in done:
                future.set_result(row)

    def _refused(self, exc: sa.exc.OperationalError, commands: list[Future]) -> None:
        """The database refused a transaction (a full disk, a read-only file, a lock held too
        long, a lost connection): what was learned in memory is not in it, so the learner is
        rebuilt from the database before its next try, in :data:`RETRY_SECONDS`. The
        publications asked for are answered now, with the reason (one log line a reason, not
        one a try); ``db_error`` says it until a transaction succeeds."""
        why = reason(exc, self.engine.url.render_as_string(hide_password=False))
        if why != self.db_error:
            log.warning("the database refused the learner's transaction (%s): retrying every "
                        "%g s", why, RETRY_SECONDS)
        self.db_error = why
        self.current = None
        for future in commands:
            future.set_exception(RuntimeError(f"the database refused the learner's write "
                                              f"({why}): nothing was published; retry once "
                                              "GET /health is ok"))
        self._stop.wait(RETRY_SECONDS)

    def _fail(self, message: str) -> None:
        """Stop learning: the error goes into the database first (``/metrics`` shows it),
        then every publication waiting is answered with it."""
        message = redact(message, self.engine.url.render_as_string(hide_password=False))
        self.error = message
        log.error("learner stopped: %s", message)
        try:
            with store.transaction(self.engine) as conn:
                conn.execute(sa.update(store.learner_progress).values(error=message))
        except Exception:  # the error is in memory and in /health either way
            pass
        with self._guard:
            commands, self._commands = self._commands, []
        for future in commands:
            future.set_exception(RuntimeError(f"the learner has stopped: {message}"))
        self._stop.set()

    def _step(self, commands: list[Future] = (), save: bool = False
              ) -> list[tuple[Future, Any]]:
        """Read the log and learn (outside any write transaction: deciders never wait for the
        learner's arithmetic), then, if there is anything to write, one short write
        transaction: a publication by the cadence or as ``commands`` ask, a saved state now
        and then, the progress. Returns each command with its publication's rules row."""
        current = self.current
        kind, amount = self.config.cadence()
        due = False
        with self.engine.connect() as conn:
            while True:
                entries = read_log(conn, current.seq)
                for entry in entries:
                    current.apply(entry)
                    if kind == "outcomes" and current.since >= amount:
                        due = True  # publish here, at this position: the rest waits
                        break
                if due or not commands or not entries:
                    break  # a publication on request first learns all that is logged
        if due and commands:  # the cadence's publication first; the requests' next step
            with self._guard:
                self._commands[:0] = commands
            commands = []
        due = due or (kind == "period" and store.now() >= self._published_at + amount)
        saved = (current.saved_row() if save
                 or current.seq - self._saved_at >= self.config.snapshot_every else None)
        behind = current.seq != self._progress_at and time.monotonic() >= self._progress_by
        behind = behind or self.db_error is not None  # a write tells whether it works again
        if not (due or commands or saved or behind):
            return []
        done: list[tuple[Future, Any]] = []
        with store.transaction(self.engine) as conn:
            if due:
                self._publish(conn)
            done += [(future, self._publish(conn)) for future in commands]
            if saved is not None:
                self._save(conn, saved)
            conn.execute(sa.update(store.learner_progress).values(
                seq=current.seq, version=current.version, learned=current.learned,
                clean=current.clean, error=None, updated_at=store.now()))
        if self.db_error is not None:
            log.warning("the learner's transactions succeed again")
            self.db_error = None
        self._progress_at, self._progress_by = current.seq, time.monotonic() + PROGRESS_EVERY
        return done

    def _publish(self, conn: Connection) -> dict[str, Any]:
        log_at = store.lock_log(conn)
        rule = self.current.publish(log_at)
        self._published_at = store.now()
        row = rule_row(rule, self.current.seq, log_at, self._published_at)
        conn.execute(sa.insert(store.rules).values(**row))
        return row

    def _save(self, conn: Connection, row: dict[str, Any] | None = None) -> None:
        """Write a saved state (``row``, made outside the transaction, else now)."""
        s = store.learner_state
        row = self.current.saved_row() if row is None else row
        conn.execute(sa.delete(s).where(s.c.seq == row["seq"]))
        conn.execute(sa.insert(s).values(**row))
        keep = conn.execute(sa.select(s.c.seq).order_by(s.c.seq.desc())
                            .limit(KEEP_STATES)).scalars().all()
        conn.execute(sa.delete(s).where(s.c.seq < min(keep)))
        self._saved_at = row["seq"]

