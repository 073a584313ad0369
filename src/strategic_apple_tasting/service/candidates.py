"""Candidate learners on a live service: shadows attached and detached by name, canaries.

A shadow is a learner fed the service's log from the position it was attached at: its rule
decides every applicant after that (recorded in ``shadow_decisions``, under its name), it
publishes beside each live publication, and it learns only what the live service observed of
its decisions (:meth:`~.learning.LogLearner.apply`). The settings' ``shadow`` is the shadow
named :data:`CONFIGURED`, attached at position 0. Others are attached and detached on a live
service (``POST /shadows``, ``POST /shadows/detach``), fresh or from a saved learner (a base,
read as ``--start-learner`` reads one); each attach and detach is an event of
``shadow_events`` with the log position and the live rule version then, so a replay (a
restart, ``sat serve check``) puts it in the same place, and the saved learner state holds
every attached shadow (:func:`pack`).

A canary share: a shadow attached with ``canary`` decides that share of the applicants instead
of the live rule, drawn per decision from its id (:mod:`.deciding`), logged with its name.

This module holds what the writer, the learner, the routes and the commands share: the checks
of an attach, the saved form of the attached shadows, and the figures.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from . import store
from .config import ServiceConfig
from .store import SavedStateError
from .warmstart import differing_param

#: The name of the shadow the settings give (``--shadow``).
CONFIGURED = "shadow"
#: The most all canaries together may decide: the live rule keeps the rest.
MAX_CANARY = 0.5
#: A shadow's name: letters, digits, ``-``, ``_`` and ``.``, from 1 to 64 of them.
NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: The largest saved learner taken as a base (bytes).
MAX_BASE = 64 << 20


@dataclass
class Shadow:
    """One shadow beside the live learner: its learner, its clock at the log's start (an
    entry's time is its position after it), its canary share, and the decisions whose outcome
    it awaits."""

    name: str
    learner: Any
    origin: float
    canary: float = 0.0
    waiting: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.waiting = set(self.learner.desk.pending())


def check_name(name: Any) -> str:
    """``name`` if it may name a shadow, else a ``ValueError`` in one line."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"a shadow's name must be 1 to 64 letters, digits, '-', '_' or '.', "
                         f"got {name!r:.80}")
    return name


def make(config: ServiceConfig, name: str, learner: Any, params: Any, base: bytes | None
         ) -> Any:
    """The learner of a shadow named ``name`` to attach: ``learner`` (a registered name: an
    import path is refused, since a client would choose what the service imports) with
    ``params``, fresh on the shadow's stream of the seed or loaded from ``base`` (a saved
    learner of that class, parameters and dimension, nothing pending). A ``ValueError`` in
    one line if it cannot run as a shadow."""
    from ..learners import learner_class
    from ..learners.encoding import from_jsonable
    from ..persistence import loads

    if not isinstance(learner, str) or ":" in learner:
        raise ValueError(f"learner must be a registered learner's name, got {learner!r:.80}")
    if not isinstance(params, dict):
        raise ValueError(f"params must be an object of the learner's parameters, got "
                         f"{params!r:.80}")
    cls = learner_class(learner)
    settings = replace(config, shadow=learner, shadow_params=from_jsonable(params))
    fresh = settings.make_shadow()
    settings.check_learner(learner, fresh, "shadow")
    if base is None:
        return fresh
    where = f"the base of shadow {name!r}"
    if len(base) > MAX_BASE:
        raise ValueError(f"{where} is over {MAX_BASE:,} bytes")
    got = loads(bytes(base), where, allow=[cls])
    if type(got) is not cls:
        raise ValueError(f"{where} is learner {type(got).__name__}, not {learner!r}")
    key = differing_param(got, fresh)
    if key is not None:
        raise ValueError(f"{where} has {key} = {got.get_params().get(key)!r}, the params given "
                         f"{fresh.get_params().get(key)!r}")
    if got.dimension != config.dimension:
        raise ValueError(f"{where} has dimension {got.dimension}, the service "
                         f"{config.dimension}")
    waiting = got.desk.pending()
    if waiting:
        raise ValueError(f"{where} has {len(waiting)} decisions awaiting outcomes: the "
                         "service's log does not hold them")
    return got


def from_event(config: ServiceConfig, row: Any) -> Shadow:
    """The shadow an attach event made, as it was then (a replay's)."""
    learner = make(config, row.name, row.learner, json.loads(row.params), row.base)
    return Shadow(row.name, learner, float(learner.clock), float(row.canary or 0.0))


def pack(shadows: list[Shadow], event: int) -> bytes | None:
    """The attached shadows (and the last event applied) as saved bytes: a zip of each
    learner's saved form and a manifest; None when no shadow was ever attached."""
    from ..persistence import dumps

    if not shadows and event == 0:
        return None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("manifest.json", json.dumps({"event": event, "shadows": [
            {"name": s.name, "origin": s.origin, "canary": s.canary} for s in shadows]}))
        for k, s in enumerate(shadows):
            zf.writestr(f"{k}.sat", dumps(s.learner))
    return out.getvalue()


def unpack(data: bytes | None, conn: Connection, source: str) -> tuple[list[Shadow], int]:
    """The attached shadows :func:`pack` saved, and the last event they include. Each learner
    is loaded as its attach event's class only (nothing else is imported)."""
    from ..learners import learner_class
    from ..persistence import loads

    if data is None:
        return [], 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            manifest = json.loads(zf.read("manifest.json"))
            parts = [zf.read(f"{k}.sat") for k in range(len(manifest["shadows"]))]
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise SavedStateError(f"{source} (shadows) is not a saved form ({exc})") from None
    e = store.shadow_events
    kinds = dict(conn.execute(sa.select(e.c.name, e.c.learner).where(e.c.kind == "attach")
                              ).all())
    out = []
    for entry, part in zip(manifest["shadows"], parts, strict=True):
        name = entry["name"]
        if name not in kinds:
            raise SavedStateError(f"{source} holds shadow {name!r}, which was never attached")
        cls = learner_class(kinds[name])
        try:
            learner = loads(part, f"{source} (shadow {name!r})", allow=[cls])
        except ValueError as exc:
            raise SavedStateError(str(exc)) from None
        if type(learner) is not cls:
            raise SavedStateError(f"{source} (shadow {name!r}) is learner "
                                  f"{type(learner).__name__}, not {kinds[name]!r}")
        shadow = Shadow(name, learner, float(entry["origin"]), float(entry["canary"]))
        out.append(shadow)
    return out, int(manifest["event"])


def events_after(conn: Connection, event: int) -> list[Any]:
    """The attach and detach events after ``event``, in order."""
    e = store.shadow_events
    return conn.execute(sa.select(e).where(e.c.id > event).order_by(e.c.id)).all()


def attached(conn: Connection) -> list[Any]:
    """The attach events of the shadows attached now (not detached), in attach order."""
    e = store.shadow_events
    gone = sa.select(e.c.name).where(e.c.kind == "detach")
    return conn.execute(sa.select(e).where(e.c.kind == "attach", e.c.name.not_in(gone))
                        .order_by(e.c.id)).all()


def used(conn: Connection, name: str) -> bool:
    """Whether ``name`` was ever attached (a name is not used twice: its rows keep it)."""
    e = store.shadow_events
    return conn.execute(sa.select(e.c.id).where(e.c.name == name).limit(1)).first() is not None


#: The canaries attached now (name, share), in attach order: built once, as every write
#: transaction of decisions reads them.
_ATTACHED_CANARIES = (
    sa.select(store.shadow_events.c.name, store.shadow_events.c.canary)
    .where(store.shadow_events.c.kind == "attach", store.shadow_events.c.canary > 0,
           store.shadow_events.c.name.not_in(sa.select(store.shadow_events.c.name).where(
               store.shadow_events.c.kind == "detach")))
    .order_by(store.shadow_events.c.id))


def canaries(conn: Connection) -> list[tuple[str, float, int, Any]]:
    """(name, share, rule version, rule) of each canary attached now, in attach order: the
    newest rule each has published."""
    from ..game.policies import LinearThreshold

    r = store.shadow_rules
    rows = conn.execute(_ATTACHED_CANARIES).all()
    out = []
    for row in rows:
        rule = conn.execute(sa.select(r.c.version, r.c.beta, r.c.threshold, r.c.probability)
                            .where(r.c.name == row.name).order_by(r.c.version.desc())
                            .limit(1)).first()
        if rule is not None:
            out.append((row.name, float(row.canary), rule.version, LinearThreshold(
                np.asarray(json.loads(rule.beta), dtype=float), rule.threshold,
                rule.probability)))
    return out


def listing(conn: Connection, config: ServiceConfig) -> list[dict[str, Any]]:
    """Every shadow attached now: the settings' first, then by attach."""
    out = []
    if config.shadow is not None:
        from ..learners.encoding import jsonable

        out.append({"name": CONFIGURED, "learner": config.shadow,
                    "params": jsonable(config.shadow_params), "attached_at": 0,
                    "base": False, "canary": 0.0, "settings": True})
    for row in attached(conn):
        out.append({"name": row.name, "learner": row.learner,
                    "params": json.loads(row.params), "attached_at": row.seq,
                    "base": row.base is not None, "canary": float(row.canary or 0.0),
                    "settings": False})
    return out


def figures(conn: Connection, config: ServiceConfig) -> dict[str, dict[str, Any]]:
    """Per shadow attached now: the decisions it saw, how many each rule accepted, how many
    they agreed on, its newest rule's version; for a canary, its share and the decisions it
    made and accepted."""
    sd, d, sr = store.shadow_decisions, store.decisions, store.shadow_rules
    out = {}
    for shadow in listing(conn, config):
        name = shadow["name"]
        n, accepted, live, agreed = conn.execute(sa.select(
            sa.func.count(),
            sa.func.coalesce(sa.func.sum(sa.cast(sd.c.accepted, sa.Integer)), 0),
            sa.func.coalesce(sa.func.sum(sa.cast(d.c.accepted, sa.Integer)), 0),
            sa.func.coalesce(sa.func.sum(sa.case((sd.c.accepted == d.c.accepted, 1),
                                                 else_=0)), 0)
        ).select_from(sd.join(d, d.c.id == sd.c.decision_id)).where(sd.c.name == name)).one()
        version = conn.execute(sa.select(sa.func.max(sr.c.version))
                               .where(sr.c.name == name)).scalar()
        doc = {"learner": shadow["learner"], "attached_at": shadow["attached_at"],
               "rule_version": version, "decisions": int(n), "accepted": int(accepted),
               "acceptance_rate": accepted / n if n else None,
               "live_accepted": int(live), "agreed": int(agreed),
               "agreement": agreed / n if n else None, "canary": shadow["canary"]}
        if shadow["canary"]:
            made, took = conn.execute(sa.select(
                sa.func.count(), sa.func.coalesce(sa.func.sum(sa.cast(d.c.accepted,
                                                                        sa.Integer)), 0))
                .where(d.c.decided_by == name)).one()
            doc.update(canary_decisions=int(made), canary_accepted=int(took))
        out[name] = doc
    return out


def newest_rule(conn: Connection, name: str) -> Any:
    """The newest rule shadow ``name`` published (a ``shadow_rules`` row), or None."""
    r = store.shadow_rules
    return conn.execute(sa.select(r).where(r.c.name == name).order_by(r.c.version.desc())
                        .limit(1)).first()


def estimate(engine: Engine, config: ServiceConfig, name: str) -> Any:
    """What shadow ``name``'s newest rule would have earned on the log
    (:func:`~.evaluation.evaluate`); a ``ValueError`` in one line if it has no rule or the
    log cannot tell."""
    from .evaluation import evaluate, read_logged

    with engine.connect() as conn:
        row = newest_rule(conn, name)
    if row is None:
        raise ValueError(f"the service has no rule of shadow {name!r}")
    return evaluate(read_logged(engine, config), store.rule_of(row))
