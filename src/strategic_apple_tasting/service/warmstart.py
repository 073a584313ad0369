"""Starting a new service from what a lender knows: a published rule, a saved learner, or a
historical log of decisions and outcomes.

* ``start_rule``: a JSON document ``{"beta": [...], "threshold": c}`` (``GET /policy`` of
  another service is one), in the features as the rule sees them (standardized when the
  settings declare means and scales). It is the service's first rule (``source = "given"``);
  the learner learns the outcomes of its decisions against it and publishes its own next.
* ``start_learner``: a saved learner (``persistence``), loaded as a file nobody
  vouches for: it may name only the configured learner (nothing else is imported), with the
  service's parameters and dimension, and no decision awaiting an outcome. The service's first
  rule is that learner's next, so it decides the first request as the learner would.
* ``start_log``: a CSV or Parquet file, one row a past applicant: a column per feature (by
  the settings' names, in their units), ``accepted`` (true/false or 1/0) and ``outcome``
  (empty for a rejection under apple tasting; an accepted loan still running is left out).
  Every row is checked before anything is written (bad rows: one line naming the row and the
  column). The rows are replayed into a fresh learner (and the shadow) in order, as decisions
  under two adopted rules, accept-all for the accepted and reject-all for the rejected: the
  rule the applicants met is not known, so they are taken as not having gamed it.

What the start gave is kept in the database (``start_state``: the kind, the file's name and
SHA-256, the learner's saved bytes), and the log is replayed from it: a restart with the same
flag is the same start; another file, or a start given to a database that already has a log, is
refused in one line.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..game.policies import LinearThreshold
from ..learners.history import HistoryError, replay_history
from .config import ServiceConfig

#: The kinds of start, by setting.
KINDS = {"start_rule": "rule", "start_learner": "learner", "start_log": "log"}
#: Bytes of a start file read at most (a rule or a saved learner; a log is read by pandas).
MAX_FILE = 1 << 30
#: Rows of a historical log at most.
MAX_ROWS = 10_000_000


@dataclass
class Start:
    """What a warm start gives: its kind, the file's name and digest, the learner (and
    shadow) to start from, a given rule (kind ``rule``), the rows replayed (kind ``log``)."""

    kind: str
    source: str
    digest: str
    learner: Any
    shadow: Any
    rule: LinearThreshold | None = None
    rows: int = 0


def requested(config: ServiceConfig) -> tuple[str, str] | None:
    """(setting, path) of the warm start the settings ask for, or None."""
    for setting in KINDS:
        path = getattr(config, setting)
        if path is not None:
            return setting, str(path)
    return None


def digest_of(setting: str, path: str) -> str:
    """The SHA-256 of a start file; a ``ValueError`` in one line if it cannot be read."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--{setting.replace('_', '-')} {path!r} is not a file")
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def prepare(config: ServiceConfig) -> Start | None:
    """The warm start the settings ask for, checked whole (nothing written), or None."""
    asked = requested(config)
    if asked is None:
        return None
    setting, path = asked
    digest = digest_of(setting, path)
    flag = f"--{setting.replace('_', '-')} {path!r}"
    if setting == "start_rule":
        learner, shadow = config.make_learner(), config.make_shadow()
        rule = read_rule(flag, path, config)
        try:
            learner.desk.adopt(rule, time=0.0)
        except ValueError as exc:
            raise ValueError(f"{flag}: {exc}") from None
        learner = config.make_learner()  # the service adopts it as its first publication
        return Start("rule", path, digest, learner, shadow, rule=rule)
    if setting == "start_learner":
        learner = read_learner(flag, path, config)
        return Start("learner", path, digest, learner, config.make_shadow())
    rows = read_log(flag, path, config)
    # A logistic learner keeps the whole history for an exact refit, as in the backtest.
    learner = replay(flag, rows, config.make_learner(history=len(rows)), config)
    shadow = config.make_shadow(history=len(rows))
    if shadow is not None:
        shadow = replay(flag, rows, shadow, config, "the shadow learner")
    return Start("log", path, digest, learner, shadow, rows=len(rows))


def read_rule(flag: str, path: str, config: ServiceConfig) -> LinearThreshold:
    """A rule document: ``beta`` (one weight a feature) and ``threshold``, finite; a
    ``features`` list, if given, must be the service's names in order."""
    if Path(path).stat().st_size > MAX_FILE:
        raise ValueError(f"{flag} is over {MAX_FILE:,} bytes: not a rule")
    shape = '{"beta": [a weight per feature], "threshold": c}'
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{flag} is not JSON ({exc})") from None
    except RecursionError:  # Python's parser recurses per level: 34 lines of traceback
        raise ValueError(f"{flag} is not a rule: its JSON nests deeper than Python reads (a "
                         f"rule is {shape})") from None
    except ValueError:  # Python's cap on an integer's digits, in its own words
        raise ValueError(f"{flag} is not a rule: it holds a number of more than "
                         f"{sys.get_int_max_str_digits():,} digits (a rule is {shape}, each "
                         "finite)") from None
    if not isinstance(doc, dict) or "beta" not in doc or "threshold" not in doc:
        raise ValueError(f"{flag} must be a JSON object with beta (a weight per feature) and "
                         "threshold")
    beta, threshold = doc["beta"], doc["threshold"]
    d = config.dimension
    if not isinstance(beta, list) or len(beta) != d or not all(
            _finite(b) for b in beta):
        raise ValueError(f"{flag}: beta must be a list of {d} finite numbers (one a feature: "
                         f"{', '.join(config.names())}), got {beta!r:.80}")
    if not _finite(threshold):
        raise ValueError(f"{flag}: threshold must be a finite number, got {threshold!r:.80}")
    names = doc.get("features")
    if names is not None and names != config.names():
        raise ValueError(f"{flag}: its features {names!r:.80} are not the service's "
                         f"({', '.join(config.names())})")
    return LinearThreshold(np.array(beta, dtype=float), float(threshold))


def _finite(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, int | float)
            and math.isfinite(value) and abs(value) <= 1e100)


def read_learner(flag: str, path: str, config: ServiceConfig) -> Any:
    """The saved learner: the configured learner only (nothing else is imported), with the
    service's parameters and dimension, and no decision awaiting an outcome."""
    from ..learners import learner_class
    from ..persistence import loads

    if Path(path).stat().st_size > MAX_FILE:
        raise ValueError(f"{flag} is over {MAX_FILE:,} bytes")
    configured = learner_class(config.learner)
    learner = loads(Path(path).read_bytes(), flag, allow=[configured])
    if type(learner) is not configured:
        raise ValueError(f"{flag} is learner {type(learner).__name__}, but the service runs "
                         f"{config.learner!r}")
    mine = config.make_learner()
    key = differing_param(learner, mine)
    if key is not None:
        raise ValueError(f"{flag} has {key} = {learner.get_params().get(key)!r}, the service's "
                         f"params give {mine.get_params().get(key)!r}: start with the "
                         "learner's parameters")
    if learner.dimension != config.dimension:
        raise ValueError(f"{flag} has dimension {learner.dimension}, the service "
                         f"{config.dimension}")
    waiting = learner.desk.pending()
    if waiting:
        raise ValueError(f"{flag} has {len(waiting)} decisions awaiting outcomes (first "
                         f"{waiting[0]!r}): report them before starting a service from it (the "
                         "service's log does not hold them)")
    return learner


def differing_param(learner: Any, mine: Any) -> str | None:
    """The first parameter (by name) on which a loaded learner differs from the one the
    service makes (compared as saved), or None."""
    from ..learners.encoding import jsonable

    theirs, ours = learner.get_params(), mine.get_params()
    return next((k for k in sorted(set(theirs) | set(ours))
                 if jsonable(theirs.get(k)) != jsonable(ours.get(k))), None)


def record(conn: Any, config: ServiceConfig, start: Start | None) -> bool:
    """Keep ``start`` in the database (a new one's: True), or check that it is the start the
    database was made with (a restart: False); a ``ValueError`` in one line otherwise."""
    import sqlalchemy as sa

    from ..persistence import dumps
    from . import store
    from .redact import shown

    row = conn.execute(sa.select(store.start_state)).first()
    if start is None:
        return False  # a restart need not repeat its start: the database keeps it
    flag = f"--{next(k for k, v in KINDS.items() if v == start.kind).replace('_', '-')}"
    where = f"database {shown(config.database)!r}"
    if row is not None:
        if row.kind != start.kind or row.digest != start.digest:
            raise ValueError(f"{where} was started from {row.kind} {row.source!r} (SHA-256 "
                             f"{row.digest[:12]}…); {flag} {start.source!r} is another start: "
                             "leave the flag out, or use another database")
        return False
    if conn.execute(sa.select(store.rules.c.version).limit(1)).first() is not None:
        raise ValueError(f"{where} already has a log: {flag} starts a new database only")
    rule = None if start.rule is None else json.dumps(
        {"beta": [float(b) for b in start.rule.beta], "threshold": float(start.rule.threshold)})
    conn.execute(sa.insert(store.start_state).values(
        id=1, kind=start.kind, source=start.source, digest=start.digest,
        state=dumps(start.learner),
        shadow=None if start.shadow is None else dumps(start.shadow), rule=rule,
        rows=start.rows, created_at=store.now()))
    return True


#: The rules a log is replayed under (:func:`..learners.history.replay_history`), versions 1
#: and 2 of the learner: the service's first rule of its own is the next.
LOG_RULES = ("accept all", "reject all")


def log_note(start: Start) -> str:
    """What a start from a log says of its first rule's version (one line)."""
    held = " and ".join(f"{k + 1} ({what})" for k, what in enumerate(LOG_RULES))
    return (f"started from log {start.source!r}: its {start.rows:,} rows were replayed as "
            f"decisions under the learner's rules {held}, so the first rule it publishes is "
            f"version {len(LOG_RULES) + 1}")


@dataclass(frozen=True)
class Row:
    """One past applicant: its features as the learner sees them, the decision, the
    outcome (None: not observed)."""

    z: np.ndarray
    accepted: bool
    outcome: float | None


def read_log(flag: str, path: str, config: ServiceConfig) -> list[Row]:
    """Every row of a historical log, checked (see the module's description)."""
    import pandas as pd

    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ValueError(f"{flag} must end in .csv or .parquet")
    # The header first: a reader renames a repeated column (pandas' CSV: "x1.1") or refuses
    # it in many lines (pyarrow), and neither names it.
    twice = _twice(header(path, suffix) or [])
    if twice is not None:
        raise ValueError(f"{flag} names column {twice!r} twice; give every column its own "
                         "name")
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:  # pandas: "No columns to parse from file", no flag
        raise ValueError(f"{flag} is empty: it needs a header row naming a column per feature "
                         f"({', '.join(config.names())}), accepted and outcome") from None
    except Exception as exc:  # a file pandas cannot read: one line, whatever the reader said
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(f"{flag} cannot be read ({type(exc).__name__}: {first})") from None
    names = config.names()
    columns = [str(c) for c in frame.columns]
    missing = [c for c in [*names, "accepted"] if c not in columns]
    if missing:
        raise ValueError(f"{flag} has no column {missing[0]!r} (it needs one per feature: "
                         f"{', '.join(names)}; accepted; and outcome)")
    if len(frame) == 0:
        raise ValueError(f"{flag} has no rows")
    if len(frame) > MAX_ROWS:
        raise ValueError(f"{flag} has {len(frame):,} rows; at most {MAX_ROWS:,}")
    bandit = config.bandit()
    scale = config.scaling()
    bound = config.make_learner().tags().input_bound
    raw = np.empty((len(frame), len(names)))
    for j, name in enumerate(names):
        raw[:, j] = [_number(flag, k, name, v) for k, v in enumerate(frame[name].tolist())]
    accepted = [_flag(flag, k, v) for k, v in enumerate(frame["accepted"].tolist())]
    outcomes = (frame["outcome"].tolist() if "outcome" in columns else [None] * len(frame))
    rows = []
    for k in range(len(frame)):
        where = f"{flag}: row {k + 1}"
        z = scale(raw[k])
        big = np.flatnonzero(~(np.abs(z) <= bound))
        if big.size:
            raise ValueError(f"{where}: column {names[big[0]]!r} is {raw[k, big[0]]!r}, beyond "
                             f"the learner's input bound {bound:g} once standardized")
        outcome = outcomes[k]
        if outcome is None or (isinstance(outcome, str) and not outcome.strip()) or (
                not isinstance(outcome, str) and pd.isna(outcome)):  # NaN, pandas' NA
            outcome = None
        else:
            outcome = _number(flag, k, "outcome", outcome)
            if abs(outcome) > bound:
                raise ValueError(f"{where}: outcome {outcome!r} is beyond the learner's input "
                                 f"bound {bound:g}")
        if accepted[k] or bandit:
            if outcome is None:
                raise ValueError(f"{where}: an {'accepted ' if accepted[k] else ''}decision "
                                 "needs its outcome (leave out loans still running)")
        elif outcome is not None:
            raise ValueError(f"{where}: a rejection has no outcome under apple tasting (it "
                             f"is never observed), got {outcome!r}")
        rows.append(Row(z, accepted[k], outcome))
    return rows


def header(path: str, suffix: str) -> list[str] | None:
    """The columns a log's file names, as written; None if the header cannot be read apart
    (the full read then says what is wrong)."""
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            return [str(c) for c in pq.read_schema(path).names]
        except Exception:  # not Parquet: the full read says so, in one line
            return None
    import csv

    try:
        with open(path, encoding="utf-8", newline="") as f:
            return next(csv.reader(f), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None


def _twice(columns: list[str]) -> str | None:
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            return column
        seen.add(column)
    return None


def _number(flag: str, k: int, column: str, value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = math.nan
    if not math.isfinite(out) or isinstance(value, bool):
        raise ValueError(f"{flag}: row {k + 1}: column {column!r} must be a finite number, "
                         f"got {value!r:.40}")
    return out


def _flag(flag: str, k: int, value: Any) -> bool:
    text = str(value).strip().lower()
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if text in ("true", "1", "1.0", "yes"):
        return True
    if text in ("false", "0", "0.0", "no"):
        return False
    raise ValueError(f"{flag}: row {k + 1}: column 'accepted' must be true or false (or 1, "
                     f"0), got {value!r:.40}")


def replay(flag: str, rows: list[Row], learner: Any, config: ServiceConfig,
           who: str = "the learner") -> Any:
    """``rows`` learned by ``learner``, in order (:func:`..learners.history.replay_history`,
    the one warm start from a history: see the module's description)."""
    d = config.dimension
    try:
        return replay_history(learner, np.array([row.z for row in rows]).reshape(-1, d),
                              [row.accepted for row in rows],
                              [row.outcome for row in rows])
    except HistoryError as exc:
        if exc.row is None:
            raise ValueError(f"{flag}: {who} cannot replay a log: {exc.reason}") from None
        raise ValueError(f"{flag}: row {exc.row + 1} cannot be learned by {who}: "
                         f"{exc.reason}") from None
