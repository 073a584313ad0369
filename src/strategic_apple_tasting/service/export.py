"""``sat serve export``: the service's decisions, outcomes and rules, by time range, and the
history they make, to CSV or Parquet files (one per table) in a folder.

A decision's row: its id, log position, time, the rule version, accepted, capped, the API
key's id, its group and band, its propensity and whether it was explored (and a canary's
shadow, rule version and what the live rule would have decided), and a column per feature (by
the names the database keeps, as
the applicant gave them); an outcome's: the decision's id, position, time, value, key id; a
rule's: every column of the rules table (its weights as a column per feature, ``beta_NAME``;
``source``: ``given`` for a warm start's rule). ``history`` is the decisions as ``--start-log``
reads them (:func:`history`): a new service started from it learns what this one learned of
them. Times select by when the row was written (``--since`` inclusive, ``--until``
exclusive), and are written in ISO 8601, UTC (Parquet: timestamps, UTC).

A CSV cell of text that a spreadsheet would read as a formula (an id or a group label that
begins with ``=``, ``+``, ``-`` or ``@``) is written after a quote, ``'=...``, as spreadsheets
expect: a label is the client's, and opening an export must not run it.

Nothing in the database is changed, and files an earlier export left are replaced only when
asked (``--force``). The files hold applicants' features and outcomes, so they are made private
(0600), and each is written beside its final name and renamed into place: a killed export
leaves no partial file under a final name.
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

TABLES = ("decisions", "outcomes", "rules", "history")
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


def frames(engine: Engine, names: list[str], since: float | None, until: float | None,
           bandit: bool = False) -> dict[str, Any]:
    """The tables in the time range, as pandas frames (times as UTC timestamps), and the
    history (:func:`history`)."""
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
        # Each decision's outcome as known now, whenever it came (the history's).
        known = dict(conn.execute(
            sa.select(o.c.decision_id, o.c.outcome)
            .where(o.c.decision_id.in_(sa.select(d.c.id).where(*within(d.c.created_at))))
        ).all())
    out = {}
    rows = []
    for row in decisions:
        doc = {"id": row.id, "seq": row.seq, "time": row.created_at, "version": row.version,
               "accepted": bool(row.accepted), "capped": bool(row.capped),
               "key_id": row.key_id, "group": row.group,
               "band": None if row.band is None else bool(row.band),
               # the probability of the action taken (1 before exploration was logged)
               "propensity": 1.0 if row.propensity is None else row.propensity,
               "explored": bool(row.explored), "decided_by": row.decided_by,
               "by_version": row.by_version,
               "rule_accepted": None if row.rule_accepted is None else bool(row.rule_accepted)}
        doc.update(zip(names, json.loads(row.features), strict=True))
        rows.append(doc)
    out["decisions"] = _timed(pd.DataFrame(
        rows, columns=["id", "seq", "time", "version", "accepted", "capped", "key_id", "group",
                       "band", "propensity", "explored", "decided_by", "by_version",
                       "rule_accepted", *names]))
    out["outcomes"] = _timed(pd.DataFrame(
        [{"id": row.decision_id, "seq": row.seq, "time": row.created_at,
          "outcome": row.outcome, "key_id": row.key_id} for row in outcomes],
        columns=["id", "seq", "time", "outcome", "key_id"]))
    rows = []
    for row in rules:
        doc = {"version": row.version, "time": row.published_at, "kind": row.kind,
               "threshold": row.threshold, "probability": row.probability,
               "shift": row.shift, "after_seq": row.after_seq, "log_at": row.log_at,
               "learned": row.learned, "source": row.source or "learned",
               "key_id": row.key_id, "explored": row.explored, "restores": row.restores,
               "promotes": row.promotes}
        doc.update({f"beta_{n}": b for n, b in zip(names, json.loads(row.beta), strict=True)})
        rows.append(doc)
    out["rules"] = _timed(pd.DataFrame(rows, columns=[
        "version", "time", "kind", "threshold", "probability", "shift", "after_seq", "log_at",
        "learned", "source", "key_id", "explored", "restores", "promotes",
        *[f"beta_{n}" for n in names]]))
    out["history"] = history(out["decisions"], known, names, bandit)
    return out


def history(decisions: Any, known: dict[str, float], names: list[str], bandit: bool = False
            ) -> Any:
    """The decisions as ``--start-log`` reads them: a column per feature (as the applicants
    gave them), ``accepted`` and ``outcome``, in log order. Left out: an accepted decision
    still awaiting its outcome (a loan still running; under bandit feedback, ``bandit``, any
    decision awaiting one) and a rejection by the acceptance cap (the learner never learns
    it)."""
    keep = [not capped and (id_ in known or not (accepted or bandit))
            for id_, accepted, capped in zip(decisions["id"], decisions["accepted"],
                                              decisions["capped"], strict=True)]
    frame = decisions.loc[keep, [*names, "accepted"]].copy()
    # NaN for none: empty in a CSV, and what a Parquet reader gives back as a float
    frame["outcome"] = [known.get(i, math.nan) for i in decisions.loc[keep, "id"]]
    return frame.reset_index(drop=True)


def _timed(frame: Any) -> Any:
    """``frame`` with its ``time`` (unix seconds) as UTC timestamps, to the microsecond."""
    import pandas as pd

    frame["time"] = pd.Series([datetime.fromtimestamp(t, UTC) for t in frame["time"]],
                              index=frame.index, dtype="datetime64[us, UTC]")
    return frame


#: How a spreadsheet takes a cell that begins so: as a formula (=, +, -, @) or a cell's start
#: (tab, carriage return); such a text cell is written after a quote, as spreadsheets expect.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_text(value: Any) -> Any:
    """A text cell a spreadsheet would read as a formula, written as text (``'=1+1``)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def for_csv(frame: Any) -> Any:
    """``frame`` as its CSV shows it: times in ISO 8601, text cells that a spreadsheet would
    read as formulas quoted (:func:`as_text`); numbers as they are."""
    import pandas as pd

    frame = frame.copy()
    for column in frame.columns:
        series = frame[column]
        if pd.api.types.is_datetime64_any_dtype(series):
            frame[column] = series.map(lambda t: t.isoformat())
        elif not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
            frame[column] = series.map(as_text, na_action="ignore")
    return frame


def existing(folder: Path, format_: str) -> list[Path]:
    """The files an export to ``folder`` would replace."""
    return [p for p in (folder / f"{name}.{format_}" for name in TABLES) if p.exists()]


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
            for_csv(frame).to_csv(partial, index=False)
        else:
            frame.to_parquet(partial, index=False)
        os.replace(partial, final)
        written.append(final)
    return written
