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

import functools
import json
import logging
import math
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..learners.decisions import PublishedRule
from ..persistence import dumps, loads
from . import candidates, counts, retention, store
from .candidates import CONFIGURED, Shadow
from .config import ServiceConfig
from .groups import rule_shift
from .locking import LockLost, SingleLearner
from .redact import reason, redact, shown
from .sqlite_file import DatabaseLost
from .store import SavedStateError  # (where the shadows' saved form is read too)

log = logging.getLogger("strategic_apple_tasting.service")

#: Seconds a step waits for more of the log (one learner step, not one per decision).
GATHER = 0.02
#: Seconds between writes of the learner's progress when nothing else is written.
PROGRESS_EVERY = 0.25
#: Log entries read per transaction.
CHUNK = 5_000
#: The live learner in ``skipped_entries.shadow`` (a shadow is there by its name).
LIVE = None
#: A skipped entry's reason is kept to this many characters.
MAX_REASON = 500
#: Saved states kept in the database (the newest ones).
KEEP_STATES = 2
#: Seconds between two tries of a learner whose database refused its transaction.
RETRY_SECONDS = 1.0
#: Seconds between two tries of a standby for the lock.
STANDBY_POLL = 0.2
#: Seconds between two checks, when idle, that the lock's session is alive (PostgreSQL).
ALIVE_EVERY = 1.0


@dataclass(frozen=True)
class Asked:
    """A publication asked for (``POST /publish``, a rollback, a promotion) or a shadow
    attached or detached: by which key, restoring which earlier version (None: the learner's
    next rule); ``shadow``: what to do with which shadow (:class:`ShadowAsked`)."""

    key_id: str | None
    restore: int | None = None
    force: bool = False  # publish even with nothing read since the last publication
    shadow: ShadowAsked | None = None


@dataclass(frozen=True)
class ShadowAsked:
    """``attach`` a shadow (its learner, params, base, canary share), ``detach`` one, or
    ``promote`` one's rule."""

    action: str
    name: str
    learner: str | None = None
    params: str | None = None  # JSON
    base: bytes | None = None
    canary: float | None = None


@dataclass(frozen=True)
class Entry:
    """One log entry: a decision or an outcome."""

    seq: int
    id: str
    x: list[float] | None = None  # a decision's features, as the applicant gave them
    accepted: bool | None = None
    version: int | None = None  # the rule a decision was made under (an outcome's: its own)
    outcome: float | None = None  # an outcome's value
    capped: bool = False  # a rejection by the acceptance cap, not by the rule
    explored: bool = False  # an acceptance at random of an applicant the rule rejected
    by: str | None = None  # a canary's decision: the shadow that made it
    live: bool | None = None  # then: what the live rule would have decided

    @property
    def observed(self) -> bool:
        """Whether the live rule's own decision is the one logged (its outcome, if any, is
        the live learner's to learn)."""
        return not self.explored and (self.by is None or self.live == self.accepted)


@functools.lru_cache(maxsize=2)
def _log_query(bounded: bool) -> Any:
    """:func:`read_log`'s statement (``bounded``: with ``upto``), built once: the learner runs
    it many times a second, and building it cost more than running it."""
    d, o = store.decisions, store.outcomes
    after = sa.bindparam("after", type_=sa.BigInteger)
    decisions = sa.select(d.c.seq, d.c.id.label("id"), d.c.features, d.c.accepted,
                          d.c.version, sa.cast(sa.null(), sa.Double).label("outcome"),
                          d.c.capped, d.c.explored, d.c.decided_by, d.c.rule_accepted
                          ).where(d.c.seq > after)
    # An outcome carries its decision's: whether the live learner observed it is read there.
    outcomes = sa.select(o.c.seq, o.c.decision_id.label("id"),
                         sa.cast(sa.null(), sa.Text).label("features"),
                         d.c.accepted, d.c.version, o.c.outcome,
                         sa.cast(sa.null(), sa.Boolean).label("capped"), d.c.explored,
                         d.c.decided_by, d.c.rule_accepted
                         ).select_from(o.join(d, d.c.id == o.c.decision_id)
                                       ).where(o.c.seq > after)
    if bounded:
        upto = sa.bindparam("upto", type_=sa.BigInteger)
        decisions, outcomes = decisions.where(d.c.seq <= upto), outcomes.where(o.c.seq <= upto)
    log = sa.union_all(decisions, outcomes).subquery()
    return sa.select(log).order_by(log.c.seq).limit(sa.bindparam("limit", type_=sa.Integer))


def read_log(conn: Connection, after: int, limit: int = CHUNK, upto: int | None = None
             ) -> list[Entry]:
    """The log's entries after position ``after`` (and up to ``upto``), in order, at most
    ``limit``. One statement, so one snapshot: two queries could see a transaction that
    commits between them in one table and not the other (PostgreSQL's read committed)."""
    params = {"after": after, "limit": limit, **({} if upto is None else {"upto": upto})}
    rows = conn.execute(_log_query(upto is not None), params).all()
    return [Entry(r.seq, r.id, json.loads(r.features), bool(r.accepted), r.version,
                  capped=bool(r.capped), explored=bool(r.explored), by=r.decided_by,
                  live=None if r.rule_accepted is None else bool(r.rule_accepted))
            if r.features is not None else Entry(
                r.seq, r.id, accepted=bool(r.accepted), version=r.version, outcome=r.outcome,
                explored=bool(r.explored), by=r.decided_by,
                live=None if r.rule_accepted is None else bool(r.rule_accepted))
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
    """The learner and where it is in the log (position, rule in force, counts), with the
    shadows beside it (see :meth:`apply`; :mod:`.candidates`).

    ``prior``: what the warm start taught it (rows of a historical log; 1 for a saved
    learner), so that the acceptance cap knows a learned rule from a first guess. With
    ``collect`` (the running learner, not a replay) it gathers what the database does not yet
    have: figures per rule version, the shadows' would-be decisions and rules.

    ``shadow``: the settings' shadow (named :data:`~.candidates.CONFIGURED`); ``attached``:
    the shadows attached on the live service, and ``event`` the last attach or detach event
    they include."""

    def __init__(self, config: ServiceConfig, learner: Any = None, seq: int = 0,
                 learned: int = 0, clean: int = 0, since: int = 0, shadow: Any = None,
                 prior: int = 0, origins: tuple[float, float] | None = None,
                 attached: list[Shadow] = (), event: int = 0) -> None:
        self.config = config
        self.learner = config.make_learner() if learner is None else learner
        self.scale = config.scaling()
        self.bandit = self.learner.get_params().get("feedback") == "bandit"
        self.seq = seq
        self.learned = learned
        self.clean = clean
        self.since = since  # outcomes learned since the last publication
        self.prior = prior
        # The learners' clocks at the log's start (a warm start's learner has its own time):
        # an entry's time is its position after them.
        self.origin, shadow_origin = origins if origins is not None else (
            self.learner.clock, 0.0 if shadow is None else shadow.clock)
        self.shadow_origin = shadow_origin
        self.shadows: dict[str, Shadow] = {}
        if shadow is not None:
            self.shadows[CONFIGURED] = Shadow(CONFIGURED, shadow, shadow_origin)
        self.shadows.update((s.name, s) for s in attached)
        self.event = event
        # (version, position): a superseded rule is kept until the learner has read the log
        # as far as it reached when the next rule was published (store.lock_log).
        self.releases: list[tuple[int, int]] = []
        self.held: int | None = None  # the version the last publication held
        self.explored_share: float | None = None  # the last publication's, if it explored
        self.collect = False
        self.tally: dict[int, list[float]] = {}  # version → decisions, accepted, outcomes, sum,
        self.shadow_rows: list[dict[str, Any]] = []  # repaid; the shadows' decisions
        self.shadow_rules: list[tuple[str, PublishedRule, int]] = []  # with the position
        self.shadow_counts = dict.fromkeys(counts.SHADOW, 0)  # the settings' shadow's
        # Entries a learner refused: kept until written (running) or compared with those
        # written (a replay).
        self.skipped: list[dict[str, Any]] = []

    @property
    def shadow(self) -> Any:
        """The settings' shadow learner (None without one)."""
        configured = self.shadows.get(CONFIGURED) if self.config.shadow is not None else None
        return None if configured is None else configured.learner

    @property
    def version(self) -> int:
        rule = self.learner.desk.rule_in_force()
        return 0 if rule is None else rule.version

    def apply(self, entry: Entry) -> None:
        """Learn one log entry. A learner (the live one or a shadow) that refuses it (an
        entry written past the service's checks, or by a release that checked less) skips
        it: the refusal is logged and kept (:attr:`skipped`, written to ``skipped_entries``
        by the running learner), and learning goes on; a learner is never stopped by one
        entry. A decision the acceptance cap rejected is not the rule's decision: the learner
        does not see it.

        The live learner learns what its own rule observed (:meth:`_file`); each shadow
        learns what it would have observed (:meth:`_shadow_decides`)."""
        if entry.outcome is None:
            if not entry.capped:
                z = self.scale(entry.x)
                self._learn(entry, LIVE, self._file, entry, z)
                for shadow in list(self.shadows.values()):
                    self._learn(entry, shadow.name, self._shadow_decides, shadow, entry, z)
        else:
            if entry.observed:
                self._learn(entry, LIVE, self._report, entry)
            for shadow in list(self.shadows.values()):
                if entry.id in shadow.waiting:
                    shadow.waiting.discard(entry.id)
                    self._learn(entry, shadow.name, shadow.learner.desk.report, entry.id,
                                entry.outcome)
        if self.collect:
            counts = self.tally.setdefault(entry.version, [0, 0, 0, 0.0, 0])
            if entry.outcome is None:
                counts[0] += 1
                counts[1] += bool(entry.accepted)
            else:
                counts[2] += 1
                counts[3] += float(entry.outcome)
                counts[4] += entry.outcome > 0
        self.seq = entry.seq
        self._release_due()

    def _report(self, entry: Entry) -> None:
        used = self.learner.desk.report(entry.id, entry.outcome)
        self.learned += 1
        self.clean += bool(used)
        self.since += 1

    def _learn(self, entry: Entry, who: str | None, step: Any, *args: Any) -> None:
        """``step(*args)``, or the entry skipped by the live learner (``who`` None) or shadow
        ``who`` if it refuses it."""
        try:
            step(*args)
        except ValueError as exc:
            what = "decision" if entry.outcome is None else "outcome of decision"
            why = str(exc)
            self.skipped.append({"seq": entry.seq, "shadow": who, "decision_id": entry.id,
                                 "reason": why[:MAX_REASON]})
            if self.collect:  # (a replay's skips were logged when they happened)
                log.warning("log entry %d (%s %r) skipped by %s: %s", entry.seq, what,
                            entry.id, "the learner" if who == LIVE else f"shadow {who!r}",
                            why)

    def _file(self, entry: Entry, z: np.ndarray) -> None:
        """File a decision with the live learner as its rule would have observed it. An
        explored acceptance, and a canary's acceptance of an applicant the rule rejects, are
        filed as the rule's rejections (the rule would have seen nothing; their outcomes are
        not learned: a learner's estimates assume the points its own rule chose). A canary's
        rejection of an applicant the rule accepts is not filed at all, like a capped one: the
        rule would have awaited an outcome that will never come. Under bandit feedback a
        canary's decision that differs is not filed either: its outcome is another action's."""
        accepted = entry.accepted
        if entry.by is None:
            accepted = accepted and not entry.explored
        elif entry.live != entry.accepted:
            if entry.live or self.bandit:
                return
            accepted = False
        self.learner.desk.record(z, entry.id, accepted, entry.version,
                                 time=self.origin + entry.seq)

    def _shadow_decides(self, shadow: Shadow, entry: Entry, z: np.ndarray) -> None:
        """A shadow's rule decides the applicant (recorded, never answered unless it is the
        canary that did). It learns only what was observed: a rejection of its own under
        apple tasting at once (nothing is observed), else only a decision equal to the one
        logged, whose outcome will come."""
        published = shadow.learner.desk.rule_in_force()
        would = published.rule.accepts(z)
        if self.collect:
            self.shadow_rows.append({"name": shadow.name, "decision_id": entry.id,
                                     "seq": entry.seq, "version": published.version,
                                     "accepted": would})
            if shadow.name == CONFIGURED:  # the running counts are the settings' shadow's
                tally = self.shadow_counts
                tally["shadow_decisions"] += 1
                tally["shadow_accepted"] += bool(would)
                tally["shadow_live_accepted"] += bool(entry.accepted)
                tally["shadow_agreed"] += bool(would) == bool(entry.accepted)
        if would != entry.accepted and (would or self.bandit):
            return  # the outcome of the shadow's decision is never observed
        shadow.learner.desk.record(z, entry.id, would, published.version,
                                   time=shadow.origin + entry.seq)
        if would or self.bandit:
            shadow.waiting.add(entry.id)

    def attach(self, shadow: Shadow, event: int) -> PublishedRule:
        """Attach ``shadow`` here (attach event ``event``): it publishes its first rule now
        and decides every applicant after this position."""
        rule = shadow.learner.desk.publish(time=shadow.origin + self.seq)
        self.shadows[shadow.name] = shadow
        self.event = event
        if self.collect:
            self.shadow_rules.append((shadow.name, rule, self.seq))
        return rule

    def detach(self, name: str, event: int) -> None:
        """Detach the shadow ``name`` here (event ``event``): it sees nothing more."""
        self.shadows.pop(name)
        self.event = event

    def publish(self, log_at: int, given: Any = None) -> PublishedRule:
        """Publish the next rule (``given``: adopt that linear rule instead) at the current
        log position, the log then reaching ``log_at``: the rule before it is kept until the
        learner has read that far (decisions under it may lie up to there). Every shadow
        publishes its next rule at the same moment."""
        time = self.origin + self.seq
        before = self._explored()
        rule = (self.learner.desk.publish(time=time) if given is None
                else self.learner.desk.adopt(given, time=time))
        # A learner that explores once locked out (the logistic learners) published its
        # accept-all rule at random: the rule records the share it was drawn with.
        self.explored_share = (float(self.learner.explore)
                               if before is not None and self._explored() > before else None)
        self.learner.desk.hold(rule.version)
        if self.held is not None:  # the service's previous rule (a warm start's are not held)
            self.releases.append((self.held, log_at))
        self.held = rule.version
        self.since = 0
        self._release_due()
        for shadow in self.shadows.values():
            shadow_rule = shadow.learner.desk.publish(time=shadow.origin + self.seq)
            if self.collect:
                self.shadow_rules.append((shadow.name, shadow_rule, self.seq))
        return rule

    def _explored(self) -> int | None:
        """Rounds the learner has explored, if it is one that explores (else None)."""
        return getattr(self.learner, "explored", None)

    def _release_due(self) -> None:
        while self.releases and self.seq >= self.releases[0][1]:
            self.learner.desk.release(self.releases.pop(0)[0])

    def saved_row(self) -> dict[str, Any]:
        attached = [s for n, s in self.shadows.items()
                    if not (n == CONFIGURED and self.config.shadow is not None)]
        return {"seq": self.seq, "version": self.version, "state": dumps(self.learner),
                "learned": self.learned, "clean": self.clean, "since": self.since,
                "created_at": store.now(),
                "shadow": None if self.shadow is None else dumps(self.shadow),
                "candidates": candidates.pack(attached, self.event)}

    def taken(self) -> tuple[dict[int, list[float]], list[dict[str, Any]],
                             list[tuple[str, PublishedRule, int]], dict[str, int]]:
        """What was gathered for the database since the last call (and forget it)."""
        out = (self.tally, self.shadow_rows, self.shadow_rules, self.shadow_counts)
        self.tally, self.shadow_rows, self.shadow_rules = {}, [], []
        self.skipped = []
        self.shadow_counts = dict.fromkeys(counts.SHADOW, 0)
        return out


def _rules_after(conn: Connection, version: int) -> Iterator[Any]:
    r = store.rules
    yield from conn.execute(sa.select(r).where(r.c.version > version).order_by(r.c.version))


def initial(conn: Connection, config: ServiceConfig) -> LogLearner:
    """The learner as the log starts: the warm start kept in the database, else fresh."""
    row = conn.execute(sa.select(store.start_state)).first()
    if row is None:
        return LogLearner(config, shadow=config.make_shadow())
    learner = _saved_learner(row.state, config, "the warm start's learner")
    shadow = (_saved_learner(row.shadow, config, "the warm start's shadow learner", True)
              if row.shadow is not None else config.make_shadow())
    return LogLearner(config, learner, shadow=shadow, prior=_prior(row))


def _prior(row: Any) -> int:
    return 0 if row is None else {"log": int(row.rows), "learner": 1}.get(row.kind, 0)


def restore(engine: Engine, config: ServiceConfig, *, upto: int | None = None,
            saved: bool = True) -> LogLearner:
    """The service's learner, rebuilt: from the newest saved state (``saved``; else from the
    log's start: the warm start, or nothing, or the retention base once entries have gone),
    then the log after it replayed in order, each publication in its place and checked
    against the rules table, up to the learner's recorded progress (or ``upto``). The entries
    the replay skips must be those the running learner skipped, up to its progress; those
    past it are left in the result's ``skipped``."""
    from .retention import base

    with engine.connect() as conn:
        done = conn.execute(sa.select(store.learner_progress.c.seq)).scalar_one()
        if upto is None:
            upto = done
        s = store.learner_state
        row = None
        if saved:
            row = conn.execute(sa.select(s).where(s.c.seq <= upto)
                               .order_by(s.c.seq.desc()).limit(1)).first()
        else:
            start = base(conn)
            if start is not None:
                row = conn.execute(sa.select(s).where(s.c.seq == start)).first()
                if row is None:
                    raise ValueError(f"the log before position {start} has gone (retention), "
                                     "and the saved state it was kept from is missing")
        if row is None:
            current = initial(conn, config)
        else:
            source = f"the saved learner state at log position {row.seq}"
            learner = _saved_learner(row.state, config, source)
            shadow = None
            if config.shadow is not None:
                shadow = (_saved_learner(row.shadow, config, f"{source} (shadow)", True)
                          if row.shadow is not None else None)
            start = initial(conn, config)
            attached, event = candidates.unpack(row.candidates, conn, source)
            current = LogLearner(config, learner, row.seq, row.learned, row.clean, row.since,
                                 shadow=shadow, prior=start.prior,
                                 origins=(start.origin, start.shadow_origin),
                                 attached=attached, event=event)
            r = store.rules
            current.held = current.version if conn.execute(sa.select(r.c.version).where(
                r.c.version == current.version)).first() is not None else None
            current.releases = [
                (v.version - 1, v.log_at) for v in conn.execute(
                    sa.select(r.c.version, r.c.log_at).where(
                        r.c.version <= current.version,
                        r.c.version > _first_version(conn),
                        r.c.log_at > current.seq).order_by(r.c.version))]
        start_seq = current.seq
        # Publications and shadows' attach and detach events, in the order the learner did
        # them: by position, then by the live rule version in force (an event came after the
        # publication of that version and before the next), publications first.
        steps = sorted(
            [((r.after_seq, r.version, 0, 0), r) for r in _rules_after(conn, current.version)
             if r.after_seq <= upto]
            + [((e.seq, e.version, 1, e.id), e) for e in candidates.events_after(
                conn, current.event) if e.seq <= upto], key=lambda step: step[0])
        entries: list[Entry] = []
        while True:
            if not entries:
                entries = read_log(conn, current.seq, upto=upto)
            while steps and (not entries or steps[0][0][0] < entries[0].seq):
                _redo(current, steps.pop(0)[1], config)
            if not entries:
                break
            for entry in entries:
                while steps and steps[0][0][0] < entry.seq:
                    _redo(current, steps.pop(0)[1], config)
                current.apply(entry)
            entries = []
        _same_skips(conn, current, start_seq, min(upto, done))
    return current


def _same_skips(conn: Connection, current: LogLearner, after: int, upto: int) -> None:
    """A replay skips what the running learner skipped (the ``skipped_entries`` rows between
    positions ``after`` and ``upto``), or it diverged; what it skipped past ``upto`` (not
    learned yet) stays in ``current.skipped``."""
    k = store.skipped_entries
    logged = [(r.seq, r.shadow) for r in conn.execute(
        sa.select(k.c.seq, k.c.shadow).where(k.c.seq > after, k.c.seq <= upto)
        .order_by(k.c.seq, k.c.id))]
    replayed = [(r["seq"], r["shadow"]) for r in current.skipped if r["seq"] <= upto]
    if replayed != logged:
        new = sorted(set(replayed) - set(logged))
        gone = sorted(set(logged) - set(replayed))
        seq, shadow = (new or gone)[0]
        who = "the learner" if shadow is LIVE else f"shadow {shadow!r}"
        if new:
            why = next(r["reason"] for r in current.skipped
                       if (r["seq"], r["shadow"]) == (seq, shadow))
            raise ValueError(f"replay diverged: {who} cannot learn log entry {seq} ({why}), "
                             "which it learned when it ran")
        raise ValueError(f"replay diverged: {who} learns log entry {seq}, which it skipped "
                         "when it ran (skipped_entries)")
    current.skipped = [r for r in current.skipped if r["seq"] > upto]


def _redo(current: LogLearner, row: Any, config: ServiceConfig) -> None:
    """A replay's step: a publication (a rules row) or a shadow's attach or detach."""
    if not hasattr(row, "kind") or row.kind not in ("attach", "detach"):
        _republish(current, row)
        return
    if row.seq != current.seq:
        raise ValueError(f"replay diverged: shadow {row.name!r} was {row.kind}ed at log "
                         f"position {row.seq}, the replay is at {current.seq}")
    if row.kind == "attach":
        current.attach(candidates.from_event(config, row), row.id)
    elif row.name in current.shadows:
        current.detach(row.name, row.id)
    else:
        raise ValueError(f"replay diverged: shadow {row.name!r} is detached (event {row.id}) "
                         "but is not attached")


def _first_version(conn: Connection) -> int:
    """The service's first rule version (1, or later after a warm start's own rules)."""
    first = conn.execute(sa.select(sa.func.min(store.rules.c.version))).scalar()
    return 1 if first is None else int(first)




def _saved_learner(state: bytes, config: ServiceConfig, source: str,
                   shadow: bool = False) -> Any:
    """A learner saved in the database: only the service's configured learner (or shadow)
    may be loaded from it (nothing else is imported), and it must be that learner."""
    from ..learners import learner_class

    name = config.shadow if shadow else config.learner
    configured = learner_class(name)
    try:
        learner = loads(state, source, allow=[configured])
    except ValueError as exc:
        raise SavedStateError(str(exc)) from None
    if type(learner) is not configured:
        raise SavedStateError(f"{source} is learner {type(learner).__name__}, but the service "
                              f"runs {name!r}")
    return learner


def _republish(current: LogLearner, row: Any) -> None:
    if row.after_seq != current.seq:
        raise ValueError(f"replay diverged: rule version {row.version} follows log position "
                         f"{row.after_seq}, the replay is at {current.seq}")
    # A rule given from outside, or an earlier one again (a rollback), is adopted again.
    given = store.rule_of(row) if row.source in ("given", "rollback", "promoted") else None
    rule = current.publish(row.log_at, given)
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


class LearnerLoop:
    """The learning thread of a service (see the module's description). Workers read new
    rules from the database; a publication on request is answered with its rules row.

    Without the single-learner lock (another learner holds it) the loop stands by: the
    process decides, and the loop takes the lock as soon as it is free and takes over. A
    learner whose lock ends (:class:`~.locking.LockLost`) stands by again."""

    def __init__(self, engine: Engine, config: ServiceConfig) -> None:
        self.engine = engine
        self.config = config
        self.error: str | None = None
        #: Why the database refused the learner's last transaction (None once one succeeds).
        self.db_error: str | None = None
        #: Whether another learner holds the lock (this one waits for it).
        self.standby = False
        self._lock = SingleLearner(engine, config.database)
        self._wake = threading.Event()
        self._stop = threading.Event()
        #: Publications asked for: (future, who asked, what: see :class:`Asked`).
        self._commands: list[tuple[Future, Asked]] = []
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self.current: LogLearner | None = None
        self._saved_at = 0
        self._saved_by = 0.0  # a state is saved by then if the log grew (monotonic clock)
        self._published_at = 0.0
        self._published_seq = -1  # the learner's position at the last publication
        self._progress_at = -1  # the position the progress row was last written at
        self._progress_by = 0.0  # not written again before (monotonic clock)
        self._alive_by = 0.0  # the lock's session checked again then (monotonic clock)
        self._horizon: int | None = None  # retention: entries up to here still to delete

    @property
    def running(self) -> bool:
        """Whether the learning thread runs (learning, or standing by for the lock)."""
        return self._thread is not None and self._thread.is_alive()

    # -- life -------------------------------------------------------------------------------
    def start(self) -> None:
        """Take the single-learner lock and take over (rebuild the learner, publish the first
        rule if the database has none), or stand by if another learner holds it; then run
        in a thread."""
        if self._lock.try_acquire():
            self._take_over()
        else:
            self.standby = True
            log.warning("%s: standing by (deciding) until it stops, then taking over",
                        self._lock.busy())
        self._thread = threading.Thread(target=self._run, name="sat-learner", daemon=True)
        self._thread.start()

    def _take_over(self) -> None:
        """With the lock: rebuild the learner from the database and publish the first rule if
        there is none (the warm start's given rule, if it has one)."""
        try:
            with store.transaction(self.engine) as conn:
                self._lock.verify(conn)  # waits for a last transaction of a learner before
            self.current = restore(self.engine, self.config)
            self.current.collect = True
            with store.transaction(self.engine) as conn:
                self._lock.verify(conn)
                last = conn.execute(sa.select(sa.func.max(store.learner_state.c.seq))).scalar()
                self._saved_at = -1 if last is None else int(last)
                newest = store.newest_rule(conn, store.rules.c.published_at,
                                           store.rules.c.after_seq)
                if newest is None:
                    start = conn.execute(sa.select(store.start_state.c.rule)).scalar()
                    self._publish(conn, given=None if start is None else _given(start))
                else:
                    self._published_at = newest.published_at
                    self._published_seq = int(newest.after_seq)
                if self._saved_at < 0:
                    self._save(conn)
                self._horizon = retention.base(conn)
            self._saved_by = time.monotonic() + 60.0 * self.config.snapshot_minutes
        except BaseException:
            self._lock.release()
            self.current = None
            raise
        self.standby = False

    def stop(self) -> None:
        """Learn what the log holds, save the learner, and stop."""
        if self._thread is None:
            return
        self._stop.set()
        self._wake.set()
        self._thread.join()
        self._thread = None
        if self.error is None and self.current is not None and not self.standby:
            try:
                self._step(save=True)
            except Exception as exc:  # the log is safe; the next start replays it
                log.warning("learner not saved at stop: %s", redact(
                    str(exc), self.engine.url.render_as_string(hide_password=False)))
        self._answer_all(RuntimeError("the service is stopping: publish again after it "
                                      "restarts"))
        self._lock.release()

    def wake(self) -> None:
        """New log entries: learn them soon."""
        self._wake.set()

    def publish(self, key_id: str | None = None, restore: int | None = None,
                force: bool = False) -> Future:
        """Learn everything logged so far, then publish (asked by API key ``key_id``); the
        future gives the rules row. If the learner has read nothing since the last publication
        it publishes nothing (it would only repeat the rule in force, as a new version), and
        the future gives ``{"version": <in force>, "unchanged": True}``; ``force`` publishes
        all the same (the game over the wire publishes every period, as the engine does).
        ``restore``: publish instead the rule of that earlier version again (a rollback), as
        a new version naming it; the learner adopts it and keeps learning (the future fails
        with ``LookupError`` if there is no such version)."""
        future: Future = Future()
        # Running from the start: a client that stops waiting cannot cancel it (the
        # publication may still happen; GET /policy tells).
        future.set_running_or_notify_cancel()
        with self._guard:
            self._commands.append((future, Asked(key_id, restore, force)))
        self._wake.set()
        return future

    def shadow_command(self, key_id: str | None, asked: ShadowAsked) -> Future:
        """Attach, detach or promote a shadow at the learner's next step (asked by API key
        ``key_id``); the future gives what was done (see :meth:`_shadow_step`)."""
        future: Future = Future()
        future.set_running_or_notify_cancel()
        with self._guard:
            self._commands.append((future, Asked(key_id, shadow=asked)))
        self._wake.set()
        return future

    def _answer_all(self, exc: Exception) -> None:
        with self._guard:
            commands, self._commands = self._commands, []
        for future, *_ in commands:
            future.set_exception(exc)

    # -- the loop ---------------------------------------------------------------------------
    def _run(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            if self.standby:
                self._stand_by()
                continue
            self._wake.wait(0.05)
            self._wake.clear()
            with self._guard:
                commands, self._commands = self._commands, []
            if not commands:  # gather what arrives in a short while into one step
                time.sleep(max(0.0, last + GATHER - time.monotonic()))
            last = time.monotonic()
            try:
                if time.monotonic() >= self._alive_by:
                    self._lock.alive()
                    self._alive_by = time.monotonic() + ALIVE_EVERY
                if self.current is None:  # a transaction failed: rebuild from the database
                    self.current = restore(self.engine, self.config)
                    self.current.collect = True
                done = self._step(commands)
            except LockLost as exc:
                self._lost(str(exc), commands)
                continue
            except DatabaseLost as exc:
                with self._guard:
                    self._commands[:0] = commands
                self._fail(str(exc))
                continue
            except sa.exc.OperationalError as exc:
                gone = store.lost(self.engine)
                if gone is not None:  # the file was lost: that is why, whatever SQLite said
                    with self._guard:
                        self._commands[:0] = commands
                    self._fail(gone)
                    continue
                self._refused(exc, commands)
                continue
            except Exception as exc:
                with self._guard:
                    self._commands[:0] = commands
                self._fail(f"{type(exc).__name__}: {exc}")
                continue
            for future, row in done:
                future.set_result(row)

    def _stand_by(self) -> None:
        """Wait for the lock (polling) and take over once it is had."""
        self._answer_all(RuntimeError("this process stands by (another learner holds the "
                                      "lock): send /publish to the learner"))
        if self._stop.wait(STANDBY_POLL):
            return
        try:
            if not self._lock.try_acquire():
                return
            self._take_over()
        except Exception as exc:  # the database is away, or the state cannot be loaded
            self._lock.release()
            why = redact(f"{type(exc).__name__}: {exc}",
                         self.engine.url.render_as_string(hide_password=False))
            if why != self.db_error:
                log.warning("the standby cannot take over yet (%s): retrying", why)
            self.db_error = why
            self._stop.wait(RETRY_SECONDS)
            return
        self.db_error = None
        log.warning("took over as the learner of database %s at log position %d",
                    shown(self.config.database), self.current.seq)

    def _lost(self, why: str, commands: list[tuple[Future, Asked]]) -> None:
        """The lock ended: what this learner holds in memory may no longer be the only
        learner's, so it writes nothing more and stands by (and takes over again if it gets
        the lock: rebuilt from the database)."""
        log.warning("%s: stopped learning, standing by", redact(
            why, self.engine.url.render_as_string(hide_password=False)))
        self._lock.release()
        self.current = None
        self.standby = True
        for future, *_ in commands:
            future.set_exception(RuntimeError(f"{why}: nothing was published; this process "
                                              "stands by"))

    def _refused(self, exc: sa.exc.OperationalError,
                 commands: list[tuple[Future, Asked]]) -> None:
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
        for future, *_ in commands:
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
                self._lock.verify(conn)
                conn.execute(sa.update(store.learner_progress).values(error=message))
        except Exception:  # the error is in memory and in /health either way
            pass
        self._answer_all(RuntimeError(f"the learner has stopped: {message}"))
        self._stop.set()

    def _due(self, current: LogLearner) -> bool:
        """Whether the cadence publishes now: K outcomes learned or the period passed, and
        at least ``min_interval`` since the last publication."""
        cadences = self.config.cadences()
        now = store.now()
        if now < self._published_at + self.config.min_interval:
            return False
        return (current.since >= cadences.get("outcomes", math.inf)
                or now >= self._published_at + cadences.get("period", math.inf))

    def _step(self, commands: list[tuple[Future, Asked]] = (), save: bool = False
              ) -> list[tuple[Future, Any]]:
        """Read the log and learn (outside any write transaction: deciders never wait for the
        learner's arithmetic), then, if there is anything to write, one short write
        transaction: a publication by the cadence or as ``commands`` ask, a saved state now
        and then (every ``snapshot_every`` entries or ``snapshot_minutes``, whichever comes
        first, if the log grew), what the learner gathered, the progress. Returns each
        command with its publication's rules row (or the version in force, unchanged)."""
        current = self.current
        outcomes = self.config.cadences().get("outcomes")
        due = False
        with self.engine.connect() as conn:
            while True:
                entries = read_log(conn, current.seq)
                for entry in entries:
                    current.apply(entry)
                    if outcomes is not None and current.since >= outcomes \
                            and self._due(current):
                        due = True  # publish here, at this position: the rest waits
                        break
                if due or not commands or not entries:
                    break  # a publication on request first learns all that is logged
        if due and commands:  # the cadence's publication first; the requests' next step
            with self._guard:
                self._commands[:0] = commands
            commands = []
        due = due or self._due(current)
        # By time as well as by count: a service logging a few entries a day still has a
        # recent base for retention and `check`.
        timely = time.monotonic() >= self._saved_by
        saved = (current.saved_row() if save
                 or current.seq - self._saved_at >= self.config.snapshot_every
                 or (timely and current.seq != self._saved_at) else None)
        # Nothing new to save, but time passes: the retention base may have come of age.
        aging = timely and saved is None and self.config.retain_days is not None
        behind = current.seq != self._progress_at and time.monotonic() >= self._progress_by
        behind = behind or self.db_error is not None  # a write tells whether it works again
        if not (due or commands or saved or behind or aging or self._horizon_due()):
            return []
        done: list[tuple[Future, Any]] = []
        with store.transaction(self.engine) as conn:
            self._lock.verify(conn)
            if due:
                self._publish(conn)
            for future, asked in commands:
                if asked.shadow is not None:
                    self._shadow_step(conn, future, asked, done)
                    continue
                if asked.restore is None:
                    done.append((future, self._publish(conn, key_id=asked.key_id)
                                 if asked.force or current.seq != self._published_seq
                                 else {"version": current.version, "unchanged": True}))
                    continue
                rule = conn.execute(sa.select(store.rules).where(
                    store.rules.c.version == asked.restore)).first()
                if rule is None:  # nothing is written for it
                    future.set_exception(LookupError(
                        f"rule version {asked.restore} was never published"))
                    continue
                try:
                    done.append((future, self._publish(conn, store.rule_of(rule), asked.key_id,
                                                       restores=rule)))
                except ValueError as exc:  # the learner cannot adopt it: refused before
                    future.set_exception(exc)  # it changed anything (DecisionDesk.adopt)
            if saved is not None:
                self._save(conn, saved)
            elif aging:
                self._age(conn)
            self._write_gathered(conn, current)
            conn.execute(sa.update(store.learner_progress).values(
                seq=current.seq, version=current.version, learned=current.learned,
                clean=current.clean, error=None, updated_at=store.now()))
            self._prune(conn)
        if self.db_error is not None:
            log.warning("the learner's transactions succeed again")
            self.db_error = None
        self._progress_at, self._progress_by = current.seq, time.monotonic() + PROGRESS_EVERY
        return done

    def _shadow_step(self, conn: Connection, future: Future, asked: Asked,
                     done: list[tuple[Future, Any]]) -> None:
        """Attach, detach or promote a shadow inside the step's transaction (an event row
        with the position and the rule in force; a promotion's rules row), or fail ``future``
        with why, writing nothing for it: ``KeyError`` (no such shadow), ``FileExistsError``
        (the name is taken, or the settings' shadow is asked to go), ``ValueError`` (what
        was given cannot run)."""
        current, what = self.current, asked.shadow
        e = store.shadow_events
        name = what.name
        settings = name == CONFIGURED and self.config.shadow is not None
        if what.action == "attach":
            if settings or candidates.used(conn, name):
                future.set_exception(FileExistsError(
                    f"shadow {name!r} " + ("is the settings' shadow (--shadow)" if settings
                                           else "was attached before (a name is used once: "
                                           "its rows keep it)") + ": give another name"))
                return
            try:
                learner = candidates.make(self.config, name, what.learner,
                                          json.loads(what.params), what.base)
                canary = float(what.canary or 0.0)
                taken = sum(s.canary for s in current.shadows.values())
                if canary and taken + canary > candidates.MAX_CANARY:
                    raise ValueError(f"canary {canary:g} with the canaries attached "
                                     f"({taken:g}) would decide over "
                                     f"{candidates.MAX_CANARY:g} of the applicants")
            except (ValueError, TypeError) as exc:
                future.set_exception(ValueError(str(exc)))
                return
            event = self._next_event(conn)
            conn.execute(sa.insert(e).values(
                id=event, name=name, kind="attach", seq=current.seq, version=current.version,
                learner=what.learner, params=what.params, base=what.base,
                canary=canary or None, key_id=asked.key_id, created_at=store.now()))
            rule = current.attach(Shadow(name, learner, float(learner.clock), canary), event)
            done.append((future, {"name": name, "attached_at": current.seq,
                                  "rule_version": rule.version}))
            return
        shadow = current.shadows.get(name)
        if shadow is None:
            future.set_exception(KeyError(f"no shadow is attached as {name!r}"))
            return
        if what.action == "detach":
            if settings:
                future.set_exception(FileExistsError(
                    f"shadow {name!r} is the settings' shadow (--shadow): it goes with the "
                    "settings, not on a live service"))
                return
            event = self._next_event(conn)
            conn.execute(sa.insert(e).values(
                id=event, name=name, kind="detach", seq=current.seq, version=current.version,
                key_id=asked.key_id, created_at=store.now()))
            current.detach(name, event)
            done.append((future, {"name": name, "detached_at": current.seq}))
            return
        rule = shadow.learner.desk.rule_in_force().rule
        try:
            done.append((future, self._publish(conn, rule, asked.key_id, promotes=(
                name, rule_shift(shadow.learner, np.asarray(rule.beta))))))
        except ValueError as exc:  # the live learner cannot adopt it: nothing changed
            future.set_exception(exc)

    @staticmethod
    def _next_event(conn: Connection) -> int:
        last = conn.execute(sa.select(sa.func.max(store.shadow_events.c.id))).scalar()
        return 1 if last is None else int(last) + 1

    def _write_gathered(self, conn: Connection, current: LogLearner) -> None:
        """Figures per rule version, the shadow's decisions and rules, the entries skipped
        (see LogLearner)."""
        if current.skipped:
            now = store.now()
            conn.execute(sa.insert(store.skipped_entries),
                         [{**row, "created_at": now} for row in current.skipped])
        tally, shadow_rows, shadow_rules, shadow_counts = current.taken()
        counts.add(conn, shadow_counts)
        st = store.rule_stats
        for version, (n, accepted, outcomes, total, repaid) in tally.items():
            done = conn.execute(sa.update(st).where(st.c.version == version).values(
                decisions=st.c.decisions + n, accepted=st.c.accepted + accepted,
                outcomes=st.c.outcomes + outcomes, outcome_sum=st.c.outcome_sum + total,
                repaid=st.c.repaid + repaid)).rowcount
            if not done:
                conn.execute(sa.insert(st).values(version=version, decisions=n,
                                                  accepted=accepted, outcomes=outcomes,
                                                  outcome_sum=total, repaid=repaid))
        if shadow_rows:
            conn.execute(sa.insert(store.shadow_decisions), shadow_rows)
        for name, rule, seq in shadow_rules:
            conn.execute(sa.insert(store.shadow_rules).values(
                name=name, version=rule.version, beta=_beta(rule),
                threshold=float(rule.rule.threshold), probability=float(rule.rule.probability),
                after_seq=seq, published_at=store.now()))

    def _horizon_due(self) -> bool:
        return self._horizon is not None and self._horizon > 0

    def _prune(self, conn: Connection) -> None:
        """Retention: a chunk of the entries the base lets go (see :mod:`.retention`)."""
        if self._horizon_due():
            if not retention.prune(conn, self._horizon, self.current.bandit):
                self._horizon = 0  # nothing more to delete until the base moves

    def _publish(self, conn: Connection, given: Any = None,
                 key_id: str | None = None, restores: Any = None,
                 promotes: tuple[str, float] | None = None) -> dict[str, Any]:
        """Publish the learner's next rule, or ``given`` (adopted), or an earlier rule again
        (``restores``: its rules row; a rollback, carrying that rule's shift), or a shadow's
        rule (``promotes``: its name and the shift its learner gives the rule)."""
        log_at = store.lock_log(conn)
        rule = self.current.publish(log_at, given)
        self._published_at = store.now()
        self._published_seq = self.current.seq
        row = rule_row(rule, self.current.seq, log_at, self._published_at)
        # A rule given from outside carries no shift the service knows (NULL: no band).
        shift = None if given is not None else rule_shift(self.current.learner,
                                                          np.asarray(rule.rule.beta))
        if restores is not None:
            shift = restores.shift
            row.update(restores=restores.version)
        if promotes is not None:
            shift = promotes[1]
            row.update(promotes=promotes[0])
        row.update(key_id=key_id, source=None if given is None else
                   "promoted" if promotes is not None else
                   "given" if restores is None else "rollback",
                   learned=self.current.learned + self.current.prior, shift=shift,
                   explored=self.current.explored_share)
        conn.execute(sa.insert(store.rules).values(**row))
        self._write_gathered(conn, self.current)  # the shadow's rule, in the same transaction
        return row

    def _save(self, conn: Connection, row: dict[str, Any] | None = None) -> None:
        """Write a saved state (``row``, made outside the transaction, else now); with
        retention, pin it now and then, and move the retention base when one is old enough."""
        s = store.learner_state
        row = self.current.saved_row() if row is None else row
        conn.execute(sa.delete(s).where(s.c.seq == row["seq"]))
        conn.execute(sa.insert(s).values(**row))
        days = self.config.retain_days
        if days is not None:
            retention.pin(conn, row["seq"], row["created_at"], days)
        self._age(conn)
        keep = conn.execute(sa.select(s.c.seq).order_by(s.c.seq.desc())
                            .limit(KEEP_STATES)).scalars().all()
        conn.execute(sa.delete(s).where(s.c.seq < min(keep), s.c.pinned.is_not(True)))
        self._saved_at = row["seq"]

    def _age(self, conn: Connection) -> None:
        """With retention, move its base once a pinned state is old enough; the next saved
        state (or look at the base) is due ``snapshot_minutes`` from now."""
        days = self.config.retain_days
        if days is not None:
            moved = retention.advance(conn, store.now(), days)
            if moved is not None:
                self._horizon = moved
        self._saved_by = time.monotonic() + 60.0 * self.config.snapshot_minutes


def _given(text: str) -> Any:
    """A warm start's given rule (kept as JSON) as a rule to adopt."""
    from ..game.policies import LinearThreshold

    doc = json.loads(text)
    return LinearThreshold(np.asarray(doc["beta"], dtype=float), float(doc["threshold"]))
