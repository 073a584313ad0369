"""API keys: who may do what (decide, report outcomes, read explanations, administer).

A key is ``sat_<id>_<secret>``, shown once when created (``sat serve keys create``). The
database keeps its id, a name, and the SHA-256 of the whole key: the secret is 256 random bits,
so a fast hash is enough (a slow password hash guards guessable secrets), and a copy of the
database gives no usable key. A revoked key stops working within :data:`CACHE_SECONDS`.

A key carries scopes (:data:`SCOPES`): ``decide`` (``POST /decisions``), ``report``
(``POST /outcomes``), ``explain`` (``GET /decisions/{id}``: an applicant's features and
outcome) and ``admin`` (``POST /publish``, ``POST /rollback`` and every other route that
changes the rule). A new key gets :data:`DEFAULT_SCOPES` unless told; a key made before scopes
existed keeps all four (it could do everything). A key may expire (``expires_at``); when a
request last carried it is written at most once a :data:`USE_SECONDS` per key and worker, so
a busy key costs one write a minute, not one a request. Each explanation read is recorded
(:func:`record_read`: key, decision, time) before it is answered.

A worker remembers what it read about at most :data:`MAX_CACHED` key ids (the most recently
used): a client sending fresh ids on every request cannot grow its memory. An id that no key
can have (key ids are hexadecimal, at most 32 digits) is refused without a look-up.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from . import store

#: How long a worker trusts what it read about a key.
CACHE_SECONDS = 1.0
#: Key ids a worker remembers at most (the least recently used is forgotten first).
MAX_CACHED = 1024
#: What a key's id can be (``create_key`` makes 12 hexadecimal digits; the column holds 32).
KEY_ID = re.compile(r"[0-9a-f]{1,32}")
#: What a key may be allowed to do, in the order they are shown.
SCOPES = ("decide", "report", "explain", "admin")
#: What each scope lets a key do (said in the refusal of a key that lacks it).
DOES = {"decide": "decide", "report": "report outcomes", "explain": "read explanations",
        "admin": "publish, roll back or change the rule"}
#: A new key's scopes unless told: what a lender's deciding client needs (decide, report its
#: outcomes), and nothing that reads an applicant's data or changes the rule.
DEFAULT_SCOPES = ("decide", "report")
#: Seconds between two writes of a key's last use by one worker.
USE_SECONDS = 60.0
#: The longest expiry in days (beyond it a date is a typo, not a policy).
MAX_DAYS = 36_600


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_scopes(text: str | Iterable[str]) -> tuple[str, ...]:
    """Scopes joined by commas (``"decide,report"``) as a tuple in :data:`SCOPES` order; a
    ``ValueError`` in one line for an unknown, repeated or missing one."""
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else list(text)
    unknown = [n for n in names if n not in SCOPES]
    if not names or unknown or len(set(names)) != len(names):
        why = (f"{unknown[0]!r} is not one" if unknown else
               "one is repeated" if names else "none given")
        raise ValueError(f"--scope must name scopes from {', '.join(SCOPES)} joined by commas "
                         f"({why}), got {text if isinstance(text, str) else ','.join(names)!r}")
    return tuple(s for s in SCOPES if s in names)


def parse_expiry(text: str, now: float | None = None) -> float:
    """When a key given ``--expires text`` expires, in unix seconds: ``text`` days from
    ``now`` (a number > 0), or an ISO 8601 date or time (UTC unless it says) in the future; a
    ``ValueError`` in one line."""
    now = time.time() if now is None else now
    try:
        days = float(text)
    except ValueError:
        days = None
    if days is None:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"--expires must be a number of days or an ISO 8601 date "
                             f"(2027-01-31, UTC unless it says), got {text!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        if moment.timestamp() <= now:
            raise ValueError(f"--expires {text!r} is in the past: give a later date")
        return moment.timestamp()
    if not (math.isfinite(days) and 0 < days <= MAX_DAYS):
        raise ValueError(f"--expires must be a number of days from 0 to {MAX_DAYS:,} "
                         f"(exclusive of 0), got {text!r}")
    return now + days * 86_400.0


def when(seconds: float | None, never: str = "never") -> str:
    """Unix seconds as an ISO 8601 time in UTC to the second (``never`` for None)."""
    if seconds is None:
        return never
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def create_key(engine: Engine, name: str, scopes: Iterable[str] = DEFAULT_SCOPES,
               expires_at: float | None = None) -> str:
    """A new key named ``name`` allowed ``scopes`` until ``expires_at`` (unix seconds; None:
    never); returns it (the only time it is seen)."""
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ValueError(f"--name must be 1 to 200 characters, got {name!r}")
    store.check_text(name, "--name")
    scopes = parse_scopes(scopes)
    id_ = secrets.token_hex(6)
    key = f"sat_{id_}_{secrets.token_urlsafe(32)}"
    with store.transaction(engine) as conn:
        conn.execute(sa.insert(store.api_keys).values(
            id=id_, hash=_digest(key), name=name, created_at=store.now(), revoked_at=None,
            scopes=",".join(scopes), expires_at=expires_at))
    return key


def key_id(text: str) -> str:
    """A key's id from its id or the whole key; a ``ValueError`` in one line otherwise."""
    id_ = text.split("_")[1] if text.startswith("sat_") and text.count("_") >= 2 else text
    if not KEY_ID.fullmatch(id_):
        raise ValueError(f"key {id_!r:.60} is not a key's id (hexadecimal digits; see `sat serve "
                         "keys list`)")
    return id_


def revoke_key(engine: Engine, id_: str) -> None:
    """Revoke key ``id_`` (its id, or the whole key)."""
    id_ = key_id(id_)
    k = store.api_keys
    with store.transaction(engine) as conn:
        done = conn.execute(sa.update(k).where(k.c.id == id_, k.c.revoked_at.is_(None))
                            .values(revoked_at=store.now())).rowcount
    if not done:
        raise ValueError(f"key {id_!r} is not an active key (see `sat serve keys list`)")


def _scopes(stored: str | None) -> tuple[str, ...]:
    # NULL: a key written by a release before scopes, after the migration gave every key its
    # own; it could do everything, as the migration's keys can.
    return SCOPES if stored is None else tuple(s for s in stored.split(",") if s)


def list_keys(engine: Engine) -> list[dict[str, Any]]:
    """Every key's id, name, scopes, creation, revocation, expiry and last-use times (never a
    secret or a hash)."""
    k = store.api_keys
    with engine.connect() as conn:
        return [{"id": r.id, "name": r.name, "created_at": r.created_at,
                 "revoked_at": r.revoked_at, "scopes": _scopes(r.scopes),
                 "expires_at": r.expires_at, "last_used_at": r.last_used_at}
                for r in conn.execute(sa.select(
                    k.c.id, k.c.name, k.c.created_at, k.c.revoked_at, k.c.scopes,
                    k.c.expires_at, k.c.last_used_at).order_by(k.c.created_at))]


def record_read(engine: Engine, key: str, decision_id: str) -> None:
    """Record that key ``key`` read decision ``decision_id``'s explanation, now."""
    with store.transaction(engine) as conn:
        conn.execute(sa.insert(store.access_log).values(
            key_id=key, decision_id=decision_id, read_at=store.now()))


def access_log(engine: Engine, decision: str | None = None, key: str | None = None,
               since: float | None = None) -> list[dict[str, Any]]:
    """The explanations read, oldest first: each read's time, key id, the key's name (None if
    the key is gone) and decision id; only ``decision``'s, ``key``'s or those at or after
    ``since`` where given."""
    a, k = store.access_log, store.api_keys
    query = (sa.select(a.c.read_at, a.c.key_id, k.c.name, a.c.decision_id)
             .select_from(a.outerjoin(k, k.c.id == a.c.key_id)).order_by(a.c.id))
    if decision is not None:
        query = query.where(a.c.decision_id == decision)
    if key is not None:
        query = query.where(a.c.key_id == key_id(key))
    if since is not None:
        query = query.where(a.c.read_at >= since)
    with engine.connect() as conn:
        return [r._asdict() for r in conn.execute(query)]


@dataclass(frozen=True)
class Known:
    """What a worker read about a key id: its hash if it is active (else None), its scopes
    and its expiry."""

    hash: str | None
    scopes: tuple[str, ...] = ()
    expires_at: float | None = None


class KeyCheck:
    """Checks a request's ``Authorization: Bearer <key>`` against the database, trusting what
    it read about a key id for :data:`CACHE_SECONDS`, for at most :data:`MAX_CACHED` ids.

    ``clock`` gives wall-clock seconds (expiry and last use; a test passes its own)."""

    def __init__(self, engine: Engine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        # id → (read at, what was read), least recently used first
        self._cache: OrderedDict[str, tuple[float, Known]] = OrderedDict()
        # id → when this worker last wrote its use (clock seconds), least recent first
        self._used: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Key ids remembered."""
        return len(self._cache)

    def parse(self, header: str | None) -> tuple[str | None, str | None]:
        """(the key's id, None) if ``header`` carries a well-formed key, else (None, why not)."""
        scheme, _, key = (header or "").partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            return None, "this endpoint needs an API key: send 'Authorization: Bearer <key>'"
        parts = key.strip().split("_")
        if len(parts) < 3 or parts[0] != "sat" or not KEY_ID.fullmatch(parts[1]):
            return None, "the API key is malformed (it looks like sat_<id>_<secret>)"
        return parts[1], None

    def fresh(self, header: str | None) -> bool:
        """Whether :meth:`check` answers ``header`` without reading the database."""
        id_, why = self.parse(header)
        if why is not None:
            return True
        with self._lock:
            cached = self._cache.get(id_)
        return cached is not None and time.monotonic() - cached[0] <= CACHE_SECONDS

    def check(self, header: str | None) -> tuple[str | None, str | None]:
        """(the key's id, None) if ``header`` carries an active key, else (None, why not)."""
        id_, why, _ = self.verify(header)
        return id_, why

    def verify(self, header: str | None) -> tuple[str | None, str | None, tuple[str, ...]]:
        """As :meth:`check`, with the key's scopes (empty when it is refused)."""
        id_, why = self.parse(header)
        if why is not None:
            return None, why, ()
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(id_)
        if cached is None or now - cached[0] > CACHE_SECONDS:
            k = store.api_keys
            with self.engine.connect() as conn:
                row = conn.execute(sa.select(k.c.hash, k.c.revoked_at, k.c.scopes,
                                             k.c.expires_at).where(k.c.id == id_)).first()
            known = (Known(None) if row is None or row.revoked_at is not None else
                     Known(row.hash, _scopes(row.scopes), row.expires_at))
            cached = (now, known)
            with self._lock:
                self._cache[id_] = cached
                self._cache.move_to_end(id_)
                while len(self._cache) > MAX_CACHED:
                    self._cache.popitem(last=False)
        else:
            with self._lock:
                if id_ in self._cache:
                    self._cache.move_to_end(id_)
        known = cached[1]
        key = (header or "").partition(" ")[2].strip()
        if known.hash is None or not hmac.compare_digest(known.hash, _digest(key)):
            return None, "the API key is not valid (unknown, revoked or mistyped)", ()
        if known.expires_at is not None and self.clock() >= known.expires_at:
            return None, (f"the API key expired at {when(known.expires_at)} (sat serve keys "
                          "create makes a new one)"), ()
        return id_, None, known.scopes

    def use_due(self, id_: str) -> bool:
        """Whether this worker should write key ``id_``'s last use now (it has not for
        :data:`USE_SECONDS`); answering yes marks it written, so one request writes it."""
        now = self.clock()
        with self._lock:
            last = self._used.get(id_)
            if last is not None and now - last < USE_SECONDS:
                return False
            self._used[id_] = now
            self._used.move_to_end(id_)
            while len(self._used) > MAX_CACHED:
                self._used.popitem(last=False)
        return True

    def write_use(self, id_: str) -> None:
        """Write key ``id_``'s last use (now); call it when :meth:`use_due` says so. A database
        that refuses the write costs the record, never the request (the next minute tries
        again)."""
        k = store.api_keys
        try:
            with store.transaction(self.engine) as conn:
                conn.execute(sa.update(k).where(k.c.id == id_)
                             .values(last_used_at=self.clock()))
        except Exception:  # (a failing database is reported by the writes that matter)
            return
