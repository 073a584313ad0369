"""API keys: who may write (decide, report outcomes, publish).

A key is ``sat_<id>_<secret>``, shown once when created (``sat serve keys create``). The
database keeps its id, a name, and the SHA-256 of the whole key: the secret is 256 random bits,
so a fast hash is enough (a slow password hash guards guessable secrets), and a copy of the
database gives no usable key. A revoked key stops working within :data:`CACHE_SECONDS`.

A worker remembers what it read about at most :data:`MAX_CACHED` key ids (the most recently
used): a client sending fresh ids on every request cannot grow its memory. An id that no key
can have (key ids are hexadecimal, at most 32 digits) is refused without a look-up.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
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


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(engine: Engine, name: str) -> str:
    """A new key named ``name``; returns it (the only time it is seen)."""
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise ValueError(f"--name must be 1 to 200 characters, got {name!r}")
    store.check_text(name, "--name")
    id_ = secrets.token_hex(6)
    key = f"sat_{id_}_{secrets.token_urlsafe(32)}"
    with store.transaction(engine) as conn:
        conn.execute(sa.insert(store.api_keys).values(
            id=id_, hash=_digest(key), name=name, created_at=store.now(), revoked_at=None))
    return key


def revoke_key(engine: Engine, id_: str) -> None:
    """Revoke key ``id_`` (its id, or the whole key)."""
    if id_.startswith("sat_"):
        id_ = id_.split("_")[1]
    if not KEY_ID.fullmatch(id_):
        raise ValueError(f"key {id_!r:.60} is not a key's id (hexadecimal digits; see `sat serve "
                         "keys list`)")
    k = store.api_keys
    with store.transaction(engine) as conn:
        done = conn.execute(sa.update(k).where(k.c.id == id_, k.c.revoked_at.is_(None))
                            .values(revoked_at=store.now())).rowcount
    if not done:
        raise ValueError(f"key {id_!r} is not an active key (see `sat serve keys list`)")


def list_keys(engine: Engine) -> list[dict[str, Any]]:
    """Every key's id, name, creation and revocation times (never a secret or a hash)."""
    k = store.api_keys
    with engine.connect() as conn:
        return [{"id": r.id, "name": r.name, "created_at": r.created_at,
                 "revoked_at": r.revoked_at}
                for r in conn.execute(sa.select(k.c.id, k.c.name, k.c.created_at,
                                                k.c.revoked_at).order_by(k.c.created_at))]


class KeyCheck:
    """Checks a request's ``Authorization: Bearer <key>`` against the database, trusting what
    it read about a key id for :data:`CACHE_SECONDS`, for at most :data:`MAX_CACHED` ids."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # id → (read at, hash if active), least recently used first
        self._cache: OrderedDict[str, tuple[float, str | None]] = OrderedDict()
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
        id_, why = self.parse(header)
        if why is not None:
            return None, why
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(id_)
        if cached is None or now - cached[0] > CACHE_SECONDS:
            k = store.api_keys
            with self.engine.connect() as conn:
                row = conn.execute(sa.select(k.c.hash, k.c.revoked_at)
                                   .where(k.c.id == id_)).first()
            cached = (now, None if row is None or row.revoked_at is not None else row.hash)
            with self._lock:
                self._cache[id_] = cached
                self._cache.move_to_end(id_)
                while len(self._cache) > MAX_CACHED:
                    self._cache.popitem(last=False)
        else:
            with self._lock:
                if id_ in self._cache:
                    self._cache.move_to_end(id_)
        key = (header or "").partition(" ")[2].strip()
        if cached[1] is None or not hmac.compare_digest(cached[1], _digest(key)):
            return None, "the API key is not valid (unknown, revoked or mistyped)"
        return id_, None
