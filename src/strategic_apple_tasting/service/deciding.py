"""Deciding and logging: a worker's writer of decisions and outcomes.

A decision needs only the published rule: the writer reads the newest rule inside the same
transaction that writes the decisions, applies it (the rule's own ``accepts``, the one the
learner checks against) and commits before any response is sent. Requests that arrive while a
transaction runs wait for the next one and are committed together (a group commit), so many
concurrent clients share one disk sync.

Retries change nothing: a decision is keyed by its id, so a retried decision with the same id
and features gets the recorded decision back, and a retried outcome with the same value is
acknowledged again; the same id with other features, or another value, is a conflict.

One client cannot fail another's write: should the database refuse a group's transaction for
what one request holds (a value it cannot store), each request of the group is written again
alone, and only the one the database refuses is answered with its error (422). A database that
is unavailable (disk full, connection lost) fails the group with a 503, and ``failure`` says
why until a write succeeds again. A commit into a SQLite file that was deleted or replaced
under the service is not acknowledged, nor is anything after it (``lost``).

Each row records the API key that wrote it (``key_id``). The rule sees the features as the
settings standardize them (``scale``); the row keeps them as the applicant gave them. Under a
rule published before the learner learned any outcome (``rules.learned`` = 0), at most ``cap``
acceptances are given in all (``log_counter.warm_accepted``, counted under the log's lock);
past it the rule's acceptances are rejections marked ``capped``, which the learner does not
learn and which take no outcome.

With ``explore`` > 0, each applicant a learned rule rejects is accepted at random with that
probability (:func:`coin`: drawn from the decision's id and the service's seed, so a retried
or replayed decision draws the same), marked ``explored``. Every decision logs its
``propensity``, the probability of the action taken: 1 when the rule decided alone, ``explore``
for an acceptance at random, 1 − ``explore`` for a rejection that could have been one.
``sat serve evaluate`` weighs the log by them. An explored acceptance is not the rule's
decision: the learner files it as its rule's rejection and does not learn its outcome (a
learner's estimates assume the points its own rule chose); a shadow that would have accepted
the applicant does. No exploration where the acceptance cap applies (a first guess under
``cap``: the cap, not chance, decides there).

A canary (a shadow attached with a ``canary`` share, :mod:`.candidates`) decides that share of
the applicants instead of the live rule, by its newest rule, drawn per decision from the id as
exploration is (:func:`coin` on another stream): the row names it (``decided_by``, with its
rule's version) and keeps what the live rule would have decided (``rule_accepted``), which the
learner needs to file the decision as the live rule would have observed it. A decision's
propensity is then the probability of the action taken under the whole mixture: each canary's
share of its rule's decision, and the rest the live rule's (with its exploration).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import queue
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..game.policies import LinearThreshold, score
from . import candidates, counts, store
from .groups import in_band
from .redact import reason
from .sqlite_file import DatabaseLost

#: Rows written in one transaction at most (a group of requests is cut there).
GROUP_ROWS = 20_000
#: The stream of the service's seed that exploration's coins are drawn from.
EXPLORE_STREAM = 7
#: The stream the canaries' coins are drawn from (independent of exploration's).
CANARY_STREAM = 8
#: The inserts of every transaction, built once (on the writer's thread, which shares the
#: interpreter with the event loop, building a statement cost as much as running it).
_INSERT_DECISIONS = sa.insert(store.decisions)
_INSERT_OUTCOMES = sa.insert(store.outcomes)


def coin(seed: int, id_: str, stream: int = EXPLORE_STREAM) -> float:
    """A uniform draw in [0, 1) for decision ``id_``: the id hashed under a key drawn from the
    seed's exploration stream (a counter-based draw, keyed by the id), so the same id always
    draws the same (a retry, a replay) and the draws of distinct ids are independent, at the
    cost of one hash (a Generator built per decision costs a hundred times more).

    Examples
    --------
    >>> coin(0, "a") == coin(0, "a") != coin(0, "b")
    True
    >>> 0.0 <= coin(0, "a") < 1.0
    True
    """
    digest = hashlib.blake2b(id_.encode(), digest_size=8, key=_coin_key(seed, stream)).digest()
    return float(int.from_bytes(digest, "little") >> 11) * 2.0 ** -53


@functools.lru_cache(maxsize=8)
def _coin_key(seed: int, stream: int) -> bytes:
    return np.random.SeedSequence(seed, spawn_key=(stream,)).generate_state(
        4, np.uint64).tobytes()


class ServiceError(Exception):
    """A request the service refuses: an HTTP status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class _Request:
    kind: str  # "decisions" or "outcomes"
    items: list[tuple[str | None, Any]]  # (id, features) or (id, outcome)
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    key_id: str | None = None  # the API key that sent it
    groups: list[str | None] | None = None  # each decision's group label
    result: Any = None
    rows: list[dict[str, Any]] = field(default_factory=list)


class Writer:
    """The thread that writes decisions and outcomes (see the module's description).

    ``bandit``: every decision awaits its outcome (bandit feedback); else only acceptances do
    (apple tasting: a rejected applicant's outcome is never observed).
    """

    def __init__(self, engine: Engine, bandit: bool, on_commit: Any = lambda: None,
                 scale: Any = None, cap: int | None = None, explore: float = 0.0,
                 seed: int = 0, max_groups: int = 1_000) -> None:
        self.engine = engine
        self.explore = float(explore)
        self.seed = int(seed)
        self.bandit = bandit
        self.on_commit = on_commit
        self.scale = scale if scale is not None else (lambda x: np.asarray(x, dtype=float))
        self.cap = cap
        self._labels = counts.GroupLabels(max_groups)
        # (a SimpleQueue: a put is one C call, where Queue's takes a lock and notifies a
        # condition, paid on the event loop for every request)
        self._queue: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        # (version, rule, first guess, its shift for gaming)
        self._rule: tuple[int, LinearThreshold, bool, float | None] | None = None
        # (name, share, rule version, rule) of each canary, read in each transaction
        self._canaries: list[tuple[str, float, int, LinearThreshold]] = []
        #: Why the last write failed, the database being unavailable (None once one succeeds).
        self.failure: str | None = None
        #: Why nothing is acknowledged any more: the database's file is not the one opened.
        self.lost: str | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sat-writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    async def submit(self, kind: str, items: list[tuple[str | None, Any]],
                     key_id: str | None = None, groups: list[str | None] | None = None) -> Any:
        """Write one request's items (sent with API key ``key_id``; ``groups``: each
        decision's group label, stored and never learned); returns its result once committed
        (or raises :class:`ServiceError`)."""
        if self.lost is not None:
            raise ServiceError(503, self.lost)
        loop = asyncio.get_running_loop()
        request = _Request(kind, items, loop.create_future(), loop, key_id, groups)
        self._queue.put(request)
        return await request.future

    # -- the thread -------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group, rows = [first], len(first.items)
            stop = False
            while rows < GROUP_ROWS:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                group.append(more)
                rows += len(more.items)
            self._commit(group)
            # One hand-back per event loop, not per request: each wakes the loop through its
            # self-pipe, and the loop then settles the whole group in one callback.
            loops: dict[asyncio.AbstractEventLoop, list[_Request]] = {}
            for request in group:
                loops.setdefault(request.loop, []).append(request)
            for loop, settled in loops.items():
                loop.call_soon_threadsafe(_settle_all, settled)
            if stop:
                return

    def _commit(self, group: list[_Request]) -> None:
        """Write ``group`` in one transaction; each request's ``result`` is its answer."""
        if self.lost is not None:
            for request in group:
                request.result = ServiceError(503, self.lost)
            return
        try:
            with store.transaction(self.engine) as conn:
                self._write(conn, group)
        except Exception as exc:
            lost = exc if isinstance(exc, DatabaseLost) else None
            gone = store.lost(self.engine)  # a connection refused for a lost file, too
            if lost is not None or gone is not None:
                self.lost = str(lost or gone)
                failure = ServiceError(503, self.lost)
            elif isinstance(exc, ServiceError):  # the group's own (no rule published yet)
                failure = exc
            elif len(group) > 1 and not _unavailable(exc):
                for request in group:  # one request's values must not fail the others'
                    self._commit([request])
                return
            else:
                failure = self._refusal(exc)
            for request in group:
                request.result = failure
            return
        self._labels.committed()
        self.failure = None
        self.on_commit()

    def _refusal(self, exc: Exception) -> ServiceError:
        """The answer to a request whose transaction failed with ``exc`` (written alone, or
        with a group when the database itself is unavailable)."""
        why = reason(exc, self.engine.url.render_as_string(hide_password=False))
        if _unavailable(exc):
            self.failure = why
            return ServiceError(503, f"the database refused the write ({why}); nothing was "
                                "recorded: retry once GET /health is ok")
        if isinstance(exc, sa.exc.IntegrityError):  # another worker wrote the same id first
            return ServiceError(503, f"the write met another worker's ({why}); nothing was "
                                "recorded: retry")
        # A value the database or its driver refuses is the request's (422); any other error
        # of the database (a damaged file: "database disk image is malformed") is the
        # server's, and a client told 4xx would drop the request.
        if isinstance(exc, sa.exc.DataError | ValueError) or (
                isinstance(exc, sa.exc.StatementError)
                and not isinstance(exc, sa.exc.DBAPIError)):
            return ServiceError(422, f"the database cannot store a value of this request "
                                f"({why}); nothing was recorded")
        self.failure = why
        return ServiceError(503, f"the database refused the write ({why}); nothing was "
                            "recorded: retry")

    def _latest_rule(self, conn: Connection
                     ) -> tuple[int, LinearThreshold, bool, float | None]:
        """(version, rule, whether it was published before any outcome was learned, the
        shift it carries for gaming: None if unknown)."""
        r = store.rules
        row = store.newest_rule(conn, r.c.version, r.c.beta, r.c.threshold, r.c.probability,
                                r.c.learned, r.c.shift)
        if row is None:
            raise ServiceError(503, "no rule is published yet: the learner has not started")
        if self._rule is None or self._rule[0] != row.version:
            self._rule = (row.version, LinearThreshold(
                np.asarray(json.loads(row.beta), dtype=float), row.threshold, row.probability),
                          row.learned == 0,  # (None: a rule from before the cap existed)
                          row.shift)
        return self._rule

    def _write(self, conn: Connection, group: list[_Request]) -> None:
        """Decide and check every request of the group against the database (and the group's
        earlier requests), then write the new rows with consecutive log positions."""
        d, o = store.decisions, store.outcomes
        self._labels.begin()
        decided_ids = [i for q in group for i, _ in q.items if i is not None]
        known: dict[str, dict[str, Any]] = {}  # id → decision row, recorded or in this group
        if decided_ids:
            for chunk in _chunks(decided_ids):
                for row in conn.execute(sa.select(d.c.id, d.c.features, d.c.accepted,
                                                  d.c.version, d.c.capped, d.c.group,
                                                  d.c.explored, d.c.decided_by)
                                        .where(d.c.id.in_(chunk))):
                    known[row.id] = row._asdict()
        reported: dict[str, float] = {}
        outcome_ids = [i for q in group if q.kind == "outcomes" for i, _ in q.items]
        for chunk in _chunks(outcome_ids):
            for row in conn.execute(sa.select(o.c.decision_id, o.c.outcome)
                                    .where(o.c.decision_id.in_(chunk))):
                reported[row.decision_id] = row.outcome
        version, rule, first_guess, shift = 0, None, False, None
        room = None  # acceptances the cap still allows (None: no cap applies)
        self._canaries = []
        if any(q.kind == "decisions" for q in group):
            store.hold_log(conn)  # before reading the rule: see store.lock_log
            version, rule, first_guess, shift = self._latest_rule(conn)
            self._canaries = candidates.canaries(conn)
            if self.cap is not None and first_guess:
                taken = conn.execute(sa.select(store.log_counter.c.warm_accepted).where(
                    store.log_counter.c.id == 1)).scalar_one() or 0
                room = [max(0, self.cap - int(taken))]
        start_room = None if room is None else room[0]
        now = store.now()
        new: list[tuple[_Request, dict[str, Any]]] = []
        for request in group:
            labels = set(self._labels.new)
            try:
                if request.kind == "decisions":
                    refused = self._labels.admit(conn, request.groups or ())
                    if refused is not None:
                        raise ServiceError(422, refused)
                    request.result = self._decide(request, known, version, (rule, shift), now,
                                                  room)
                else:
                    request.result = self._outcomes(request, known, reported, now)
            except ServiceError as exc:
                request.result, request.rows = exc, []
                self._labels.new = labels  # a refused request brings no label
                continue
            new.extend((request, row) for row in request.rows)
        if room is not None and room[0] != start_room:
            conn.execute(sa.update(store.log_counter).where(store.log_counter.c.id == 1).values(
                warm_accepted=sa.func.coalesce(store.log_counter.c.warm_accepted, 0)
                + (start_room - room[0])))
        if not new:
            return
        first = store.take_positions(conn, len(new))
        for k, (_, row) in enumerate(new):
            row["seq"] = first + k
        decisions_rows = [row for q, row in new if q.kind == "decisions"]
        outcome_rows = [row for q, row in new if q.kind == "outcomes"]
        if decisions_rows:
            conn.execute(_INSERT_DECISIONS, decisions_rows)
        if outcome_rows:
            conn.execute(_INSERT_OUTCOMES, outcome_rows)
        # The events are counted with the rows that record them (retention deletes rows,
        # never counts).
        totals, groups = counts.tally(decisions_rows, outcome_rows, known)
        counts.add(conn, totals)
        counts.add_groups(conn, groups, self._labels.new)

    def _decide(self, request: _Request, known: dict[str, Any], version: int,
                rule: tuple[LinearThreshold, float | None], now: float,
                room: list[int] | None) -> list[dict[str, Any]]:
        """The request's decisions; ``room``: acceptances the cap still allows (a one-item
        list, counted down; None: no cap applies). A request refused later gives back none:
        its rows are not written, and the count is taken from the rows that are."""
        before = None if room is None else room[0]
        try:
            return self._decide_all(request, known, version, rule, now, room)
        except ServiceError:
            if room is not None:
                room[0] = before  # nothing of a refused request is written
            raise

    def _decide_all(self, request: _Request, known: dict[str, Any], version: int,
                    rule_shift: tuple[LinearThreshold, float | None], now: float,
                    room: list[int] | None) -> list[dict[str, Any]]:
        rule, shift = rule_shift
        out, rows, mine = [], [], {}
        groups = request.groups or [None] * len(request.items)
        for (given, x), group in zip(request.items, groups, strict=True):
            row = None if given is None else mine.get(given) or known.get(given)
            if row is not None:
                if json.loads(row["features"]) != list(x):
                    raise ServiceError(409, f"decision id {given!r} was already decided for "
                                       "other features: give a new id")
                if row.get("group") != group:
                    raise ServiceError(409, f"decision id {given!r} was already decided for "
                                       f"group {row.get('group')!r}: give a new id")
                out.append({"id": given, "accepted": bool(row["accepted"]),
                            "version": row["version"]})
                if row.get("capped"):
                    out[-1]["capped"] = True
                if row.get("explored"):
                    out[-1]["explored"] = True
                if row.get("decided_by"):
                    out[-1]["canary"] = row["decided_by"]
                continue
            id_ = given if given is not None else uuid.uuid4().hex
            z = self.scale(x)
            accepted = bool(rule.accepts(z))
            # By the rule's own score, before the cap: the cap's rejections are not the shift's.
            band = in_band(float(score(np.asarray(rule.beta, dtype=float),
                                       np.asarray(z, dtype=float))),
                           float(rule.threshold), shift, accepted)
            capped, explored, propensity = None, None, 1.0
            canary = None
            if room is None and self._canaries:
                canary = self._canary(id_, z, accepted)
            if canary is not None:
                by, by_version, live, accepted, propensity = canary
                band = False  # the live rule's band: not what decided
            elif accepted and room is not None:
                if room[0] <= 0:
                    accepted, capped = False, True
                else:
                    room[0] -= 1
            elif (not accepted and room is None and self.explore > 0.0
                  and coin(self.seed, id_) < self.explore):
                accepted, explored, band = True, True, False
            if canary is None and room is None and (self._canaries or self.explore > 0.0):
                propensity = self._mixed(z, accepted, explored)
            row = {"id": id_, "features": json.dumps(list(x)), "accepted": accepted,
                   "version": version, "created_at": now, "key_id": request.key_id,
                   "capped": capped, "group": group, "band": band,
                   "propensity": propensity, "explored": explored,
                   # every row has every key: an insert of many rows takes the first's columns
                   "decided_by": None, "by_version": None, "rule_accepted": None}
            if canary is not None:
                row.update(decided_by=by, by_version=by_version, rule_accepted=live)
            rows.append(row)
            mine[id_] = row
            out.append({"id": id_, "accepted": accepted, "version": version})
            if capped:
                out[-1]["capped"] = True
            if explored:
                out[-1]["explored"] = True
            if canary is not None:
                out[-1]["canary"] = by
        request.rows = rows
        known.update(mine)
        return out

    def _canary(self, id_: str, z: Any, live: bool
                ) -> tuple[str, int, bool, bool, float] | None:
        """(name, its rule's version, the live rule's decision, the canary's, its propensity)
        if a canary decides applicant ``id_``: the coin falls in its share (the shares laid
        end to end in attach order); else None."""
        u = coin(self.seed, id_, CANARY_STREAM)
        for name, share, by_version, rule in self._canaries:
            if u < share:
                accepted = bool(rule.accepts(z))
                return name, by_version, live, accepted, self._mixed(z, accepted, None, live)
            u -= share
        return None

    def _mixed(self, z: Any, accepted: bool, explored: bool | None,
               live: bool | None = None) -> float:
        """The probability of the action taken (``accepted``) under the mixture: each canary
        decides its share by its rule, the live rule the rest, accepting at random
        ``explore`` of those it rejects. ``live``: the live rule's decision (else read off
        ``accepted`` and ``explored``: the live rule decided)."""
        if live is None:
            live = accepted and not explored
        rest = 1.0 - sum(share for _, share, _, _ in self._canaries)
        p = rest * (1.0 if live else self.explore)
        p += sum(share for _, share, _, rule in self._canaries if rule.accepts(z))
        p = min(1.0, max(0.0, p))
        return p if accepted else 1.0 - p

    def _outcomes(self, request: _Request, known: dict[str, Any], reported: dict[str, float],
                  now: float) -> list[dict[str, Any]]:
        out, rows, mine = [], [], {}
        for id_, value in request.items:
            row = known.get(id_)
            if row is None:
                raise ServiceError(404, f"decision {id_!r} is unknown: no decision has that id")
            if row.get("capped"):
                raise ServiceError(409, f"decision {id_!r} was rejected by the acceptance cap "
                                   "(warm_cap), not by the rule: its outcome is not learned, "
                                   "so none is taken")
            if not row["accepted"] and not self.bandit:
                raise ServiceError(409, f"decision {id_!r} was a rejection: under apple "
                                   "tasting its outcome is never observed, so none is taken")
            before = mine.get(id_, reported.get(id_))
            if before is not None:
                if before != value:
                    raise ServiceError(409, f"decision {id_!r} already has outcome {before!r}; "
                                       f"it cannot be changed to {value!r}")
                out.append({"id": id_, "recorded": "already"})
                continue
            rows.append({"decision_id": id_, "outcome": float(value), "created_at": now,
                         "key_id": request.key_id})
            mine[id_] = float(value)
            out.append({"id": id_, "recorded": "now"})
        request.rows = rows
        reported.update(mine)
        return out


def _unavailable(exc: Exception) -> bool:
    """Whether ``exc`` says the database cannot be written at all (rather than refusing one
    request's values): a full disk, a read-only file, a lost connection, a lock not had."""
    return isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError | OSError)


def _settle_all(requests: list[_Request]) -> None:
    for request in requests:
        if request.future.done():  # the client went away
            continue
        if isinstance(request.result, Exception):
            request.future.set_exception(request.result)
        else:
            request.future.set_result(request.result)


def _chunks(items: list[str], size: int = 5_000) -> list[list[str]]:
    return [items[k:k + size] for k in range(0, len(items), size)]
