"""The decision service's database: its tables, its connection, its migrations.

One layer (SQLAlchemy Core) speaks to SQLite (embedded, one file, the default) and PostgreSQL
(by URL). The schema is created and upgraded by versioned migrations (Alembic, in
``migrations/``), run when the service starts; :data:`METADATA` describes the schema the newest
migration makes, and a test checks that the two agree.

The log
-------
Decisions and outcomes are the service's log. Each row takes a position ``seq`` from one
counter (``log_counter``) inside the transaction that inserts it; the counter's row is locked
until that transaction commits (SQLite runs one write transaction at a time, PostgreSQL locks
the row), so once a position is visible every smaller one is committed. The one learner reads
the log in that order. A published rule records the last position its learner had read
(``after_seq``): replaying the log in order, with each publication put right after that
position, rebuilds the learner exactly. It also records the log's end when it was published
(``log_at``, see :func:`lock_log`): decisions under the rule before it lie no further, so the
learner keeps that rule until it has read that far.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from .redact import redact, shown
from .sqlite_file import DatabaseLost, FileGuard, create_private

#: The schema the newest migration makes (migrations are the history; this is the present).
METADATA = sa.MetaData()

#: The execution option that marks a write transaction (SQLite: ``BEGIN IMMEDIATE``).
WRITE = "sat_write"

#: The longest decision id a client may give.
MAX_ID = 128
#: The longest group name a decision may carry.
MAX_GROUP = 64
#: The newest migration (what every start brings a database to).
HEAD = "0008"
#: Seconds to wait for a PostgreSQL server to answer a connection (libpq waits for ever).
CONNECT_TIMEOUT = 10

service = sa.Table(
    "service", METADATA,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False))

log_counter = sa.Table(
    "log_counter", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    # acceptances under rules published before the learner learned an outcome (the cap)
    sa.Column("warm_accepted", sa.BigInteger, nullable=True))

rules = sa.Table(
    "rules", METADATA,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("beta", sa.Text, nullable=False),  # JSON list: floats written exactly
    sa.Column("threshold", sa.Double, nullable=False),
    sa.Column("probability", sa.Double, nullable=False),
    sa.Column("after_seq", sa.BigInteger, nullable=False),  # the learner's position
    sa.Column("log_at", sa.BigInteger, nullable=False),  # the log's end when it was published
    sa.Column("published_at", sa.Double, nullable=False),
    sa.Column("key_id", sa.String(32), nullable=True),  # who asked for it (POST /publish)
    sa.Column("source", sa.String(16), nullable=True),  # "given": a warm start's rule
    sa.Column("learned", sa.BigInteger, nullable=True),  # outcomes learned when published
    sa.Column("shift", sa.Double, nullable=True),  # its shift for gaming
    # the learner's exploring share, when it published this rule as one (else NULL)
    sa.Column("explored", sa.Double, nullable=True),
    sa.Column("restores", sa.Integer, nullable=True),  # a rollback: the version it restores
    sa.Column("promotes", sa.String(64), nullable=True))  # a promotion: the shadow's name

decisions = sa.Table(
    "decisions", METADATA,
    sa.Column("id", sa.String(MAX_ID), primary_key=True),
    sa.Column("seq", sa.BigInteger, nullable=False, unique=True),
    sa.Column("features", sa.Text, nullable=False),  # JSON list, as the applicant showed them
    sa.Column("accepted", sa.Boolean, nullable=False),
    sa.Column("version", sa.Integer, sa.ForeignKey("rules.version"), nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("key_id", sa.String(32), nullable=True),  # the API key that wrote it
    sa.Column("group", sa.String(64), nullable=True),  # for figures by group; never learned
    sa.Column("capped", sa.Boolean, nullable=True),  # rejected by the cap, not by the rule
    # rejected, with a score in the band the rule's shift created
    sa.Column("band", sa.Boolean, nullable=True),
    # the probability of the action logged (1: the rule's own; NULL: from before exploration)
    sa.Column("propensity", sa.Double, nullable=True),
    sa.Column("explored", sa.Boolean, nullable=True),  # accepted at random below the cutoff
    # a canary's decision: the shadow whose rule decided (NULL: the live rule), its rule's
    # version, and what the live rule would have decided
    sa.Column("decided_by", sa.String(64), nullable=True),
    sa.Column("by_version", sa.Integer, nullable=True),
    sa.Column("rule_accepted", sa.Boolean, nullable=True))

outcomes = sa.Table(
    "outcomes", METADATA,
    sa.Column("decision_id", sa.String(MAX_ID), sa.ForeignKey("decisions.id"),
              primary_key=True),
    sa.Column("seq", sa.BigInteger, nullable=False, unique=True),
    sa.Column("outcome", sa.Double, nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("key_id", sa.String(32), nullable=True))

learner_state = sa.Table(
    "learner_state", METADATA,
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("state", sa.LargeBinary, nullable=False),  # the saved-learner format's bytes
    sa.Column("learned", sa.BigInteger, nullable=False),
    sa.Column("clean", sa.BigInteger, nullable=False),
    sa.Column("since", sa.BigInteger, nullable=False),  # outcomes since the last publication
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("shadow", sa.LargeBinary, nullable=True),  # the shadow learner, same position
    sa.Column("pinned", sa.Boolean, nullable=True),  # kept as a base of retention
    # the shadows attached on the live service, same position (:mod:`.candidates`)
    sa.Column("candidates", sa.LargeBinary, nullable=True))

learner_progress = sa.Table(
    "learner_progress", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("seq", sa.BigInteger, nullable=False),  # the last log position learned
    sa.Column("version", sa.Integer, nullable=False),  # the rule in force
    sa.Column("learned", sa.BigInteger, nullable=False),  # outcomes learned
    sa.Column("clean", sa.BigInteger, nullable=False),  # of which used for learning
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("updated_at", sa.Double, nullable=False))

api_keys = sa.Table(
    "api_keys", METADATA,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("hash", sa.String(64), nullable=False),  # SHA-256 of the secret, hex
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("revoked_at", sa.Double, nullable=True),
    # what it may do: scopes joined by commas (keys.SCOPES; NULL only before schema 0006)
    sa.Column("scopes", sa.String(64), nullable=True),
    sa.Column("expires_at", sa.Double, nullable=True),  # NULL: never
    # when a request last carried it (written at most once a minute: keys.USE_SECONDS)
    sa.Column("last_used_at", sa.Double, nullable=True))

#: Who read which applicant's explanation (``GET /decisions/{id}``), and when; kept when
#: retention removes the decision (the record of a read outlives what was read).
access_log = sa.Table(
    "access_log", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("key_id", sa.String(32), nullable=False),
    sa.Column("decision_id", sa.String(MAX_ID), nullable=False),
    sa.Column("read_at", sa.Double, nullable=False),
    sa.Index("access_log_decision", "decision_id"))

#: What a new service started from (one row at most): a given rule, a saved learner or a
#: historical log replayed into the learner; the learner (and shadow) it gave, as saved bytes.
start_state = sa.Table(
    "start_state", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(16), nullable=False),  # "rule", "learner" or "log"
    sa.Column("source", sa.Text, nullable=False),  # the file's name, as given
    sa.Column("digest", sa.String(64), nullable=False),  # SHA-256 of the file
    sa.Column("state", sa.LargeBinary, nullable=True),
    sa.Column("shadow", sa.LargeBinary, nullable=True),
    sa.Column("rule", sa.Text, nullable=True),  # a given rule: {"beta": [...], "threshold": c}
    sa.Column("rows", sa.BigInteger, nullable=False),  # a log's rows replayed
    sa.Column("created_at", sa.Double, nullable=False))

#: The shadows' rules (never in force: compared on the page), by shadow name ("shadow": the
#: one the settings give).
shadow_rules = sa.Table(
    "shadow_rules", METADATA,
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("beta", sa.Text, nullable=False),
    sa.Column("threshold", sa.Double, nullable=False),
    sa.Column("probability", sa.Double, nullable=False),
    sa.Column("after_seq", sa.BigInteger, nullable=False),
    sa.Column("published_at", sa.Double, nullable=False),
    sa.PrimaryKeyConstraint("name", "version", name="pk_shadow_rules"))

#: What each shadow's rule would have decided, one row a shadow and a decision of the log.
shadow_decisions = sa.Table(
    "shadow_decisions", METADATA,
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("decision_id", sa.String(MAX_ID), nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("accepted", sa.Boolean, nullable=False),
    sa.PrimaryKeyConstraint("name", "decision_id", name="pk_shadow_decisions"))

#: Shadows attached to and detached from the live service, in the order the learner did it:
#: each at its log position (``seq``) with the live rule version then in force, so a replay
#: puts it in the same place among the log's entries and publications. An attach names the
#: learner, its parameters, its saved base (NULL: fresh) and its canary share.
shadow_events = sa.Table(
    "shadow_events", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),  # "attach" or "detach"
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("learner", sa.String(64), nullable=True),
    sa.Column("params", sa.Text, nullable=True),  # JSON
    sa.Column("base", sa.LargeBinary, nullable=True),  # a saved learner's bytes
    sa.Column("canary", sa.Double, nullable=True),  # the share it decides (NULL: none)
    sa.Column("key_id", sa.String(32), nullable=True),
    sa.Column("created_at", sa.Double, nullable=False))

#: Log entries a learner refused and skipped (the live learner: ``shadow`` NULL), written
#: by the running learner as it meets them; a replay must skip the same (:mod:`.learning`).
skipped_entries = sa.Table(
    "skipped_entries", METADATA,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("seq", sa.BigInteger, nullable=False, index=True),
    sa.Column("shadow", sa.String(64), nullable=True),
    sa.Column("decision_id", sa.String(128), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("created_at", sa.Double, nullable=False))

#: Figures per rule version, counted by the learner as it reads the log (they outlive
#: retention): decisions, acceptances, outcomes, their sum, and outcomes > 0 (repaid).
rule_stats = sa.Table(
    "rule_stats", METADATA,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("decisions", sa.BigInteger, nullable=False),
    sa.Column("accepted", sa.BigInteger, nullable=False),
    sa.Column("outcomes", sa.BigInteger, nullable=False),
    sa.Column("outcome_sum", sa.Double, nullable=False),
    sa.Column("repaid", sa.BigInteger, nullable=False))

#: Running counts of events (name → value): decisions, acceptances, rejections by the cap,
#: outcomes and repaid ones, counted by the writers as they write them; the shadow's would-be
#: decisions, counted by the learner as it reads them. Retention never lowers them
#: (:mod:`.counts`).
counters = sa.Table(
    "counters", METADATA,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("value", sa.BigInteger, nullable=False))

#: Running counts per group label, counted by the writers (:mod:`.counts`).
group_counts = sa.Table(
    "group_counts", METADATA,
    sa.Column("label", sa.String(64), primary_key=True),
    sa.Column("decisions", sa.BigInteger, nullable=False),
    sa.Column("accepted", sa.BigInteger, nullable=False),
    sa.Column("outcomes", sa.BigInteger, nullable=False),  # of accepted ones
    sa.Column("repaid", sa.BigInteger, nullable=False),  # of those, outcome > 0
    sa.Column("band_rejected", sa.BigInteger, nullable=False))


def newest_rule(conn: Connection, *columns: Any) -> Any:
    """The newest published rule's row (``columns`` of ``rules``, all by default), or None
    before the first."""
    return conn.execute(_newest_rule(tuple(c.name for c in columns))).first()


@functools.lru_cache(maxsize=32)
def _newest_rule(names: tuple[str, ...]) -> Any:
    # Built once per set of columns: the writer runs it in every transaction, and building
    # the statement cost as much as running it.
    return (sa.select(*([rules.c[n] for n in names] or [rules]))
            .order_by(rules.c.version.desc()).limit(1))


def rule_of(row: Any) -> Any:
    """A ``rules`` (or ``shadow_rules``) row's rule: β (kept as JSON) and its threshold."""
    import numpy as np

    from ..game.policies import LinearThreshold

    return LinearThreshold(np.asarray(json.loads(row.beta), dtype=float), row.threshold)


class SavedStateError(ValueError):
    """A saved learner state in the database that cannot be loaded: bad input (the start and
    ``sat serve check`` refuse it in one line, exit status 2), not a log that fails its check."""


def learned_or_started(conn: Connection) -> bool:
    """Whether the service has a warm start or has published a rule after learning an
    outcome: a cap on first guesses (``warm_cap``) then no longer locks it."""
    if conn.execute(sa.select(start_state.c.id).limit(1)).first() is not None:
        return True
    return conn.execute(sa.select(rules.c.version).where(rules.c.learned > 0).limit(1)
                        ).first() is not None


def damaged(engine: Engine) -> str | None:
    """Why a SQLite database's file is damaged, by ``PRAGMA quick_check`` (its first finding),
    or None (sound, or PostgreSQL: its server checks its own pages). Run at every start and
    by ``sat serve check``: a damaged file otherwise passes reads and fails at a write."""
    if engine.url.get_backend_name() != "sqlite":
        return None
    try:
        with engine.connect() as conn:
            found = [str(r[0]) for r in conn.exec_driver_sql("PRAGMA quick_check").fetchall()]
    except sa.exc.DatabaseError as exc:  # so damaged it cannot be checked
        return str(exc.orig if exc.orig is not None else exc).splitlines()[0]
    if found == ["ok"]:
        return None
    lines = [line for text in found for line in text.splitlines()
             if line and not line.startswith("***")]
    return (lines or found)[0]


def check_url(url: str) -> str:
    """``url`` if it names a database this service runs on (SQLite or PostgreSQL), else a
    ``ValueError`` in one line (the URL shown with its password masked). A SQLite file's
    directory must exist and be writable."""
    where = f"database {shown(url)!r}"
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:  # ValueError: a port that is no number
        raise ValueError(f"{where} is not a database URL (sqlite:///FILE or "
                         f"postgresql://USER@HOST:PORT/NAME): {redact(str(exc), None)}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise ValueError(f"{where}: give a SQLite file (sqlite:///FILE); a "
                             "memory database would lose every decision at exit")
        folder = Path(parsed.database).resolve().parent
        if not folder.is_dir():
            raise ValueError(f"{where}: directory {str(folder)!r} does not exist")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"{where}: directory {str(folder)!r} is not writable")
    elif backend != "postgresql":
        raise ValueError(f"{where}: the service runs on sqlite or postgresql, not "
                         f"{backend!r}")
    return url


def check_text(value: str, what: str) -> str:
    """``value`` if both databases can store it as text; else a ``ValueError`` in one line
    naming ``what``: PostgreSQL refuses the NUL character, and neither database takes a lone
    surrogate (text that is not Unicode)."""
    if "\x00" in value:
        raise ValueError(f"{what} contains the NUL character (U+0000), which the database "
                         f"cannot store; got {value!r:.80}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} is not Unicode text (a lone surrogate "
                         f"U+{ord(value[exc.start]):04X}); got {value!r:.80}") from None
    return value


def connect(url: str, create: bool = True) -> Engine:
    """An engine for ``url``. SQLite: write-ahead log, every commit synced to disk
    (``synchronous=FULL``: an acknowledged decision survives a crash of the machine, not only
    of the process), write transactions taken at BEGIN (``BEGIN IMMEDIATE``) so that two
    writers wait for each other rather than fail, and a five-second wait for the lock; a read
    (``engine.connect()``) begins deferred and never waits for a writer. The file is created
    private (0600) and watched (:mod:`.sqlite_file`): :func:`transaction` checks after each
    commit that it is still the database's file.
    PostgreSQL: psycopg 3 (``postgresql://`` is read as ``postgresql+psycopg://``), a server
    that does not answer in :data:`CONNECT_TIMEOUT` seconds is an error.

    ``create=False`` (the commands that only read: ``check``, ``export``, ``keys list``): a
    SQLite file that does not exist is a ``ValueError`` in one line, and nothing is made."""
    check_url(url)
    parsed = sa.engine.make_url(url)
    if not create and parsed.get_backend_name() == "sqlite" and \
            not Path(parsed.database).is_file():
        raise ValueError(f"database {shown(url)!r}: file {parsed.database!r} does not exist "
                         "(start `sat serve` on it first)")
    if parsed.get_backend_name() == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        engine = sa.create_engine(parsed, pool_size=8, max_overflow=8,
                                  connect_args={"connect_timeout": CONNECT_TIMEOUT})
        engine.sat_guard = None
        return engine
    path = Path(parsed.database).resolve()
    create_private(path)
    guard = FileGuard(path)
    engine = sa.create_engine(parsed, connect_args={"check_same_thread": False,
                                                    "timeout": 5.0})
    engine.sat_guard = guard

    @sa.event.listens_for(engine, "do_connect")
    def _same_file(*_: Any) -> None:
        guard.connecting()  # never open (and so create) a new file in a lost one's place

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own transaction handling is turned off: BEGIN is ours (below).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=5000")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # A write transaction takes the lock at once; a read never waits for a writer (WAL).
        write = conn.get_execution_options().get(WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def lost(engine: Engine) -> str | None:
    """Why the database's file is no longer the one the service opened (SQLite), else None."""
    guard = getattr(engine, "sat_guard", None)
    return None if guard is None else guard.check()


def migrate(engine: Engine, target: str = "head") -> None:
    """Bring the database's schema to the newest migration (creating it if empty); ``target``:
    to that revision only (a test makes a database as an earlier release did)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).with_name("migrations")))
    with transaction(engine) as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, target)


def require_head(engine: Engine, url: str) -> None:
    """A ``ValueError`` in one line unless the database is at the newest migration: a command
    that only reads does not upgrade (a write) a database it was not asked to change."""
    revision = schema_revision(engine)
    if revision != HEAD:
        what = "has no service's log" if revision is None else \
            f"is at schema {revision}, this release reads {HEAD}"
        raise ValueError(f"database {shown(url)!r} {what}: start `sat serve` on it first "
                         "(a start upgrades it in place)")


def schema_revision(engine: Engine) -> str | None:
    """The migration the database is at (None if it has none)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


@contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction (committed on leaving, rolled back on an error). After the commit,
    while the connection is still held, a SQLite database's file is checked: a commit into a
    file that was deleted or replaced raises :class:`DatabaseLost` (it is not durable)."""
    with engine.connect() as conn:
        conn.execution_options(**{WRITE: True})
        with conn.begin():
            yield conn
        reason = lost(engine)
        if reason is not None:
            raise DatabaseLost(reason)


def take_positions(conn: Connection, n: int) -> int:
    """Take ``n`` log positions inside the caller's transaction; returns the first."""
    last = conn.execute(_TAKE, {"n": n}).scalar_one()
    return int(last) - n + 1


#: The statements every write transaction runs, built once (building one cost as much as
#: running it, on the writer's thread, which shares the interpreter with the event loop).
_TAKE = (sa.update(log_counter).where(log_counter.c.id == 1)
         .values(seq=log_counter.c.seq + sa.bindparam("n", type_=sa.BigInteger))
         .returning(log_counter.c.seq))
_LOCK = sa.select(log_counter.c.seq).where(log_counter.c.id == 1).with_for_update()


def lock_log(conn: Connection) -> int:
    """Lock the log's counter until the caller's transaction ends; returns the log's end.

    Deciders lock it before they read the rule in force, and a publication locks it before it
    writes a rule, so a decision made under rule v has a position at most the log's end when
    v + 1 was published: once the learner has read that far, no decision under v is to come.
    (SQLite runs one write transaction at a time, which locks as much.)"""
    return int(conn.execute(_LOCK).scalar_one())


def hold_log(conn: Connection) -> None:
    """:func:`lock_log` where the log's end is not needed: on SQLite nothing is run, as the
    transaction's ``BEGIN IMMEDIATE`` already holds every other write off (one statement less
    in every transaction of decisions)."""
    if conn.dialect.name != "sqlite":
        lock_log(conn)


def touch(conn: Connection) -> None:
    """A write that changes nothing, inside the caller's transaction: whether the database
    can be written (a read-only file or directory, a full disk) is known at its commit."""
    conn.execute(sa.update(log_counter).where(log_counter.c.id == 1)
                 .values(seq=log_counter.c.seq))


def read_setting(conn: Connection, key: str) -> Any:
    value = conn.execute(sa.select(service.c.value).where(service.c.key == key)).scalar()
    return None if value is None else json.loads(value)


def write_setting(conn: Connection, key: str, value: Any) -> None:
    conn.execute(sa.delete(service).where(service.c.key == key))
    conn.execute(sa.insert(service).values(key=key, value=json.dumps(value)))


def now() -> float:
    """Wall-clock time, seconds since the epoch (what ``created_at`` columns hold)."""
    return time.time()
