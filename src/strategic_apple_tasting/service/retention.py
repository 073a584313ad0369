"""Retention: log entries older than ``retain_days`` go once a saved state includes them.

The learner is a function of the log, so an entry can go only once a saved learner state holds
what it taught; ``sat serve check`` then replays from that state (the *base*, its position in
the setting ``retained_from``) instead of from nothing, and stays exact for what is kept.

Saved states are kept two at a time (the newest); with retention, some are also *pinned*: a
state is pinned when the newest pinned one is older than half of ``retain_days``. Once a pinned
state is older than ``retain_days``, it becomes the base: every entry at or before its position
is old enough to go (it was logged before the state was saved), and the pinned states before it
are dropped. So entries are kept from ``retain_days`` to about 1.5 × ``retain_days``.

What goes: outcomes at or before the base, the decisions they answered, and decisions at or
before it that take no outcome (rejections under apple tasting); a decision still awaiting its
outcome stays (its outcome's report needs it), and rules stay (they are small and public).
The base is set first, in its own transaction, and rows go in chunks after it: a crash between
two chunks leaves rows the replay from the base never reads, and the next chunk takes them.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import store

#: Rows deleted per transaction (a prune never holds the writers' lock long).
CHUNK = 2_000
#: The setting that names the retention base's position.
BASE = "retained_from"


def base(conn: Connection) -> int | None:
    """The position the log is complete after (None: complete from its start)."""
    value = store.read_setting(conn, BASE)
    return None if value is None else int(value)


def pin(conn: Connection, seq: int, created_at: float, days: float) -> None:
    """Pin the state just saved at ``seq`` if the newest pinned one is older than half of
    ``days`` (or there is none)."""
    s = store.learner_state
    newest = conn.execute(sa.select(sa.func.max(s.c.created_at)).where(
        s.c.pinned.is_(True))).scalar()
    if newest is None or newest <= created_at - days * 86400 / 2:
        conn.execute(sa.update(s).where(s.c.seq == seq).values(pinned=True))


def advance(conn: Connection, now: float, days: float) -> int | None:
    """Make the newest pinned state older than ``days`` the base (dropping the pinned states
    before it); its position if the base moved, else None."""
    s = store.learner_state
    row = conn.execute(sa.select(s.c.seq).where(
        s.c.pinned.is_(True), s.c.created_at <= now - days * 86400)
        .order_by(s.c.seq.desc()).limit(1)).first()
    before = base(conn)
    if row is None or (before is not None and row.seq <= before):
        return None
    store.write_setting(conn, BASE, int(row.seq))
    conn.execute(sa.delete(s).where(s.c.pinned.is_(True), s.c.seq < row.seq))
    return int(row.seq)


def kept(conn: Connection) -> set[int]:
    """Positions of saved states that must stay whatever their age: pinned ones."""
    s = store.learner_state
    return set(conn.execute(sa.select(s.c.seq).where(s.c.pinned.is_(True))).scalars())


def prune(conn: Connection, horizon: int, bandit: bool, limit: int = CHUNK) -> int:
    """Delete up to ``limit`` decisions (with their outcomes and shadow rows) that may go at
    ``horizon`` (see the module's description); returns how many decisions went."""
    d, o, sd = store.decisions, store.outcomes, store.shadow_decisions
    answered = sa.select(o.c.decision_id).where(o.c.seq <= horizon)
    ids = list(conn.execute(sa.select(d.c.id).where(d.c.id.in_(answered)).limit(limit))
               .scalars())
    if not bandit and len(ids) < limit:
        ids += list(conn.execute(sa.select(d.c.id).where(
            d.c.seq <= horizon, d.c.accepted.is_(False)).limit(limit - len(ids))).scalars())
    if not ids:
        return 0
    conn.execute(sa.delete(o).where(o.c.decision_id.in_(ids)))
    conn.execute(sa.delete(sd).where(sd.c.decision_id.in_(ids)))
    conn.execute(sa.delete(d).where(d.c.id.in_(ids)))
    return len(ids)
