"""``sat serve export``: the service's decisions, outcomes and rules, by time range, to CSV or
Parquet files (one per table) in a folder.

A decision's row: its id, log position, time (unix seconds), the rule version, accepted, capped,
the API key's id, and a column per feature (by the settings' names, as the applicant gave them);
an outcome's: the decision's id, position, time, value, key id; a rule's: its version, time,
threshold, a weight column per feature, and where it came from (``source``: ``given`` for a
warm start's rule), the key that asked for it. Times select by when the row was written
(``--since`` inclusive, ``--until`` exclusive).

Nothing in the database is changed. The files hold applicants' features and outcomes, so they
are made private (0600), and each is written beside its final name and renamed into place: a
killed export leaves no partial file under a final name.
"""

from __future__ import annotations

import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from . import store

TABLES = ("decisions", "outcomes", "rules")
FORMATS = ("csv", "parquet")


def parse_time(flag: str, text: str) -> float:
    """Unix seconds from ``text``: a number of seconds, or an ISO 8601 time (UTC unless it
    says otherwise); a ``ValueError`` in one line."""
    try:
        value = float(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{flag} must be an ISO 8601 time (2026-01-31 or "
                             f"2026-01-31T12:00:00+00:00) or unix seconds, got {text!r}"
                             ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    if not math.isfinite(value):
        raise ValueError(f"{flag} must be a finite number of unix seconds, got {text!r}")
    return value


def frames(engine: Engine, names: list[str], since: float | None, until: float | None
           ) -> dict[str, Any]:
    """The three tables in the time range, as pandas frames."""
    import pandas as pd

    d, o, r = store.decisions, store.outcomes, store.rules

    def within(column: Any) -> list[Any]:
        out = []
        if since is not None:
            out.append(column >= since)
        if until is not None:
            out.append(column < until)
        return out
    with engine.connect() as conn:
        decisions = conn.execute(sa.select(d).where(*within(d.c.created_at))
                                 .order_by(d.c.seq)).all()
        outcomes = conn.execute(sa.select(o).where(*within(o.c.created_at))
                                .order_by(o.c.seq)).all()
        rules = conn.execute(sa.select(r).where(*within(r.c.published_at))
                             .order_by(r.c.version)).all()
    out = {}
    rows = []
    for row in decisions:
        doc = {"id": row.id, "seq": row.seq, "time": row.created_at, "version": row.version,
               "accepted": bool(row.accepted), "capped": bool(row.capped),
               "key_id": row.key_id, "group": row.group,
               "band": None if row.band is None else bool(row.band)}
        doc.update(zip(names, json.loads(row.features), strict=True))
        rows.append(doc)
    out["decisions"] = pd.DataFrame(rows, columns=["id", "seq", "time", "version", "accepted",
                                                   "capped", "key_id", "group", "band",
                                                   *names])
    out["outcomes"] = pd.DataFrame(
        [{"id": row.decision_id, "seq": row.seq, "time": row.created_at,
          "outcome": row.outcome, "key_id": row.key_id} for row in outcomes],
        columns=["id", "seq", "time", "outcome", "key_id"])
    rows = []
    for row in rules:
        doc = {"version": row.version, "time": row.published_at, "threshold": row.threshold,
               "probability": row.probability, "source": row.source or "learned",
               "key_id": row.key_id}
        doc.update({f"beta_{n}": b for n, b in zip(names, json.loads(row.beta), strict=True)})
        rows.append(doc)
    out["rules"] = pd.DataFrame(rows, columns=["version", "time", "threshold", "probability",
                                               "source", "key_id",
                                               *[f"beta_{n}" for n in names]])
    return out


def write(tables: dict[str, Any], folder: Path, format_: str) -> list[Path]:
    """Each frame to ``folder/<table>.<format>`` (private, renamed into place)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.items():
        final = folder / f"{name}.{format_}"
        partial = folder / f".{name}.{format_}.partial"
        partial.unlink(missing_ok=True)
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        if format_ == "csv":
            frame.to_csv(partial, index=False)
        else:
            frame.to_parquet(partial, index=False)
        os.replace(partial, final)
        written.append(final)
    return written
