"""The decision service over HTTP (FastAPI; served by uvicorn from ``sat serve``).

Public: ``GET /policy`` (the rule in force), ``GET /policy/history``, ``GET /`` (a page with the
rule, its changes and acceptance over time), ``GET /health`` (alive), ``GET /ready`` (the
database reachable and migrated, the learner running), ``GET /metrics`` and the OpenAPI
document (``/openapi.json``, browsable at ``/docs``). They show rules and counts, never an
applicant's features or outcome.

With an API key (``Authorization: Bearer <key>``) of the route's scope (:mod:`.keys`):
``POST /decisions`` (one applicant or a batch; ``decide``), ``POST /outcomes`` (one or a batch;
``report``), ``POST /publish``, ``POST /rollback``, ``POST /shadows`` and
``POST /shadows/detach`` (a shadow attached to or detached from the live service:
:mod:`.candidates`), ``POST /promote`` (a shadow's rule put in force) (``admin``; each row
records the key's id), and ``GET /decisions/{id}`` (the decision explained: :mod:`.explain`;
``explain``, each read recorded in the access log). A key lacking the scope gets 403 naming
it; a key over its rate limit (``rate_limit``, :mod:`.ratelimit`) 429 with ``Retry-After``.
``GET /shadows`` lists the shadows (public).

``GET /metrics`` is JSON, or the Prometheus text format for a scraper (``?format=prometheus``
or an Accept header naming ``text/plain``/OpenMetrics: :mod:`.prom`, with this process's own
figures: :mod:`.http_metrics`). Its counts are running counts (:mod:`.counts`): they never go
down, and reading them costs the same whatever the log's length.

Bad input gets a 4xx with ``{"error": "<one line>"}`` and changes nothing: a request is
written whole or not at all. A write body must be JSON (``Content-Type: application/json``),
UTF-8, uncompressed, at most ``max_body`` bytes, arriving whole within ``body_timeout``
seconds. A database that cannot be written is a 503 naming why, and ``GET /health`` says so.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from contextlib import asynccontextmanager
from typing import Annotated, Any, ClassVar

import sqlalchemy as sa
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi.security import HTTPBearer
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException

from .._version import __version__
from ..learners import learner_class
from . import candidates, counts, store
from .budget_view import budget_metrics
from .config import ServiceConfig
from .deciding import ServiceError, Writer
from .groups import group_metrics
from .http_metrics import ProcessFigures, RequestMetrics
from .keys import DOES, KeyCheck, record_read
from .learning import LearnerLoop, ShadowAsked
from .ratelimit import RateLimits
from .redact import reason, shown
from .sqlite_file import DatabaseLost

#: A feature or an outcome: a finite number, at most the learner's input bound in magnitude
#: (its ``tags().input_bound``, checked per request in :func:`create_app`), so that no
#: request the service takes can stop the learner.
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
DecisionId = Annotated[str, Field(min_length=1, max_length=store.MAX_ID)]

#: What a process of the service does: decide and learn (one per database), or only decide.
ROLES = ("all", "decide")
#: Seconds ``POST /publish`` waits for its publication before answering 503.
PUBLISH_SECONDS = 30.0


def _storable(value: str) -> str:
    # PostgreSQL cannot store NUL in text; a lone surrogate never gets this far (pydantic
    # refuses a string that is not Unicode).
    if "\x00" in value:
        raise PydanticCustomError("nul", "contains the NUL character (U+0000), which the "
                                  "database cannot store")
    return value


#: A client's decision id, checked before the group commit: one the database cannot store
#: would fail the whole group's transaction.
StoredId = Annotated[DecisionId, AfterValidator(_storable)]


def _addressable(value: str) -> str:
    # GET /decisions/{id} takes the id as one path segment: one with "/" would be decided
    # and then never explainable.
    if "/" in value:
        raise PydanticCustomError("slash", "contains '/', which GET /decisions/{id} cannot "
                                  "address: give an id without it")
    return value


#: A new decision's id: stored, and addressable by its explanation's route.
NewId = Annotated[StoredId, AfterValidator(_addressable)]
#: A decision's group label: stored for figures by group, never given to the
#: learner; checked before the group commit as an id is.
GroupLabel = Annotated[str, Field(strict=True, min_length=1, max_length=store.MAX_GROUP),
                       AfterValidator(_storable)]


class Applicant(BaseModel):
    """One applicant: the features it shows (after any gaming) and, optionally, the client's
    id for the decision (a retry with the same id gets the same decision) and a group label
    (for figures by group; the learner never sees it)."""

    model_config = ConfigDict(extra="forbid")
    x: list[Finite]
    id: NewId | None = None
    group: GroupLabel | None = None


class DecisionsIn(BaseModel):
    """One applicant (``x``, ``id``, ``group``) or a batch (``applicants``)."""

    model_config = ConfigDict(extra="forbid")
    x: list[Finite] | None = None
    id: NewId | None = None
    group: GroupLabel | None = None
    applicants: list[Applicant] | None = None


class Outcome(BaseModel):
    """The outcome (the reward of the decision taken) of decision ``id``."""

    model_config = ConfigDict(extra="forbid")
    id: StoredId
    outcome: Finite


class OutcomesIn(BaseModel):
    """One outcome (``id``, ``outcome``) or a batch (``outcomes``)."""

    model_config = ConfigDict(extra="forbid")
    id: StoredId | None = None
    outcome: Finite | None = None
    outcomes: list[Outcome] | None = None


class RollbackIn(BaseModel):
    """The earlier rule version to put back in force."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)


class AttachIn(BaseModel):
    """A shadow to attach: its name, learner (a registered name) and parameters, optionally
    a saved learner to start from (``base``, base64 of its saved form) and a canary share."""

    model_config = ConfigDict(extra="forbid")
    name: str
    learner: str
    params: dict[str, Any] = Field(default_factory=dict)
    base: str | None = None
    canary: Annotated[float, Field(ge=0.0, le=candidates.MAX_CANARY, allow_inf_nan=False)] = 0.0


class ShadowIn(BaseModel):
    """A shadow, by name (to detach or promote)."""

    model_config = ConfigDict(extra="forbid")
    name: str


#: Seconds between two off-policy estimates of a shadow on ``GET /metrics`` (each reads the
#: whole log).
ESTIMATE_EVERY = 60.0


#: Why a service that could never learn does not start: under rules published before any
#: outcome was learned a cap of 0 rejects everyone, so no outcome can ever arrive.
_LOCKED = ("{where}: warm_cap 0 with no warm start rejects every applicant for ever (no "
           "outcome can arrive to learn a first rule from): give --warm-cap 1 or more, or a "
           "warm start (--start-rule, --start-learner or --start-log)")


class Service:
    """A service's parts in one process: the database, the writer, the learner (role
    ``all``), the key check. :meth:`open` checks everything before any request is served."""

    def __init__(self, config: ServiceConfig, role: str = "all") -> None:
        if role not in ROLES:
            raise ValueError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
        self.config = config.check()
        self.role = role
        self.engine: Any = None
        self.writer: Writer | None = None
        self.learner: LearnerLoop | None = None
        self.keys: KeyCheck | None = None
        self.bandit = config.params.get("feedback") == "bandit"  # unset is apple tasting
        self._probing = threading.Lock()
        self._probed_at = -math.inf
        #: name → (rule version, when, the estimate) of each shadow's last estimate
        self.estimates: dict[str, tuple[int, float, dict[str, Any]]] = {}
        #: What this start changed of the kept settings, one line each (:mod:`.settings`).
        self.changes: list[str] = []
        #: What else a start says: how a warm start numbered the first rule.
        self.notes: list[str] = []

    def open(self) -> Service:
        """Connect, migrate, check the database's settings and that it can be written, start
        the learner and the writer; a database that cannot be used is a ``ValueError`` in one
        line (its URL's password masked)."""
        url = self.config.database
        try:
            return self._open()
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            self.close()
            raise ValueError(f"database {shown(url)!r} cannot be used: "
                             f"{reason(exc, url)}") from None

    def _open(self) -> Service:
        from . import settings, warmstart

        # A warm start's file is read and checked whole before the database is touched: a bad
        # row is one line, and nothing is written.
        start = warmstart.prepare(self.config)
        where = f"database {shown(self.config.database)!r}"
        # (checked here for a new database, so that none is made; an existing one's history
        # is read in the transaction below)
        if self.config.warm_cap == 0 and start is None \
                and settings.read_at(self.config.database) is None:
            raise ValueError(_LOCKED.format(where=where))
        self.engine = store.connect(self.config.database)
        why = store.damaged(self.engine)
        if why is not None:
            raise ValueError(f"{where} is damaged (PRAGMA quick_check: {why}): restore it from "
                             "a backup (sat serve backup) before serving from it")
        store.migrate(self.engine)
        with store.transaction(self.engine) as conn:
            made = warmstart.record(conn, self.config, start)
            if self.config.warm_cap == 0 and not store.learned_or_started(conn):
                raise ValueError(_LOCKED.format(where=where))
            # Compared again inside the transaction that writes them: another start may have
            # made the database since the settings were read (settings.resolve).
            stored = settings.read(conn, where)
            self.changes = [] if stored is None else settings.compare(stored, self.config,
                                                                      where)
            if store.read_setting(conn, "fixed") is None:
                store.write_setting(conn, "fixed", self.config.fixed())
            store.write_setting(conn, "settings", settings.kept(self.config))
            # A start writes, so a read-only file or directory is refused here, before
            # anything listens (else every write would fail once it did).
            store.touch(conn)
        if made and start.kind == "log":
            self.notes.append(warmstart.log_note(start))
        self.keys = KeyCheck(self.engine)
        if self.role == "all":
            self.learner = LearnerLoop(self.engine, self.config)
            self.learner.start()
        self.writer = Writer(self.engine, self.bandit,
                             on_commit=self.learner.wake if self.learner else lambda: None,
                             scale=self.config.scaling(), cap=self.config.warm_cap,
                             explore=self.config.explore, seed=self.config.seed,
                             max_groups=self.config.max_groups)
        self.writer.start()
        return self

    def database_error(self) -> str | None:
        """Why writes cannot be acknowledged now (None if nothing says so): the database's
        file is not the one opened, or the last write of the writer or the learner failed."""
        lost = store.lost(self.engine)
        if lost is not None:
            return lost
        if self.writer is not None and self.writer.failure is not None:
            return self.writer.failure
        if self.learner is not None and self.learner.db_error is not None:
            return self.learner.db_error
        return None

    def readiness(self) -> dict[str, Any]:
        """Whether this process should be sent traffic: the database reachable and at the
        newest schema, nothing saying writes fail, and (role ``all``) the learner's loop
        running without error (a standby's runs: it decides, and takes over when it can)."""
        why: list[str] = []
        try:
            revision = store.schema_revision(self.engine)
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            revision = None
            why.append(f"the database cannot be read ({reason(exc, self.config.database)})")
        else:
            if revision != store.HEAD:
                why.append(f"the database is at schema {revision}, this release needs "
                           f"{store.HEAD}")
        failing = self.database_error()
        if failing is not None:
            why.append(f"the database fails writes ({failing})")
        if self.learner is None:
            learner = "none here (role decide)"
        elif self.learner.error is not None:
            learner = "stopped"
            why.append(f"the learner has stopped: {self.learner.error}")
        elif not self.learner.running:
            learner = "not running"
            why.append("the learner's loop is not running")
        else:
            learner = "standby" if self.learner.standby else "running"
        return {"ready": not why, "role": self.role, "schema": revision, "learner": learner,
                "reasons": why}

    def probe(self) -> None:
        """Try a write that changes nothing: a writer's failure is forgotten once the
        database takes writes again (a worker nobody writes to would say it for ever). At most
        one try at a time and one a second, however often ``/health`` is asked."""
        if self.writer is None or self.writer.failure is None:
            return
        if time.monotonic() < self._probed_at + 1.0 or not self._probing.acquire(False):
            return
        try:
            self._probed_at = time.monotonic()
            with store.transaction(self.engine) as conn:
                store.touch(conn)
        except Exception:  # still failing: the failure stands
            return
        finally:
            self._probing.release()
        self.writer.failure = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.learner is not None:
            self.learner.stop()
        if self.engine is not None:
            self.engine.dispose()


def _json(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(doc), status_code=status, media_type="application/json",
                    headers=headers)


def _error(status: int, message: str, close: bool = False,
           headers: dict[str, str] | None = None) -> Response:
    """``{"error": message}`` with ``headers``; ``close``: and the connection is closed after
    it (the rest of a body not read would otherwise be read as the next request)."""
    headers = {**(headers or {}), **({"connection": "close"} if close else {})}
    return _json({"error": message}, status, headers or None)


def _rule_doc(row: Any, config: ServiceConfig) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {"version": row.version, "kind": row.kind, "beta": json.loads(row.beta),
            "threshold": row.threshold,
            "features": config.names() if config.features is not None else None,
            "scaling": _scaling_doc(config),
            "effective": datetime.fromtimestamp(row.published_at, UTC).isoformat(),
            "effective_unix": row.published_at,
            "rule": "accept an applicant x when sum(beta[i] * x[i]) >= threshold" if
                    config.scaling().identity else "accept an applicant x when sum(beta[i] * "
                    "(x[i] - mean[i]) / scale[i]) >= threshold (scaling: mean, scale)",
            "learner": config.learner, "params": config.fixed()["params"],
            "restores": getattr(row, "restores", None),
            "promotes": getattr(row, "promotes", None)}


def _scaling_doc(config: ServiceConfig) -> dict[str, Any] | None:
    """The declared features' units, means and scales (None when none are declared)."""
    if config.features is None:
        return None
    fs = config.feature_list()
    return {"units": [f.unit for f in fs], "definitions": [f.definition for f in fs],
            "mean": [f.mean for f in fs], "scale": [f.scale for f in fs]}


#: What a write's body must be, said in every refusal of its form.
EXPECTED = "send JSON with Content-Type: application/json, as UTF-8, uncompressed"


def _media(value: bytes) -> tuple[str, dict[str, str]]:
    """A Content-Type header as (media type, parameters), lower-cased."""
    kind, *params = value.decode("latin-1").split(";")
    pairs = (p.partition("=") for p in params)
    return kind.strip().lower(), {k.strip().lower(): v.strip().strip('"').lower()
                                  for k, _, v in pairs}


#: A body over ``max_body`` up to this many times it is read to its end (and dropped) before
#: the 413, so the client reads the answer; a longer one is answered at once.
DRAINED = 2


class Gate:
    """Before a request's body is parsed: the write endpoints and explanations need a key
    (401) with the route's scope (403), within the key's rate limit (429 with
    ``Retry-After``); a body to parse must say it is JSON in UTF-8, uncompressed (415); no body
    may exceed ``limit`` bytes (413), whether it says its length or not, nor take more than
    ``deadline`` seconds to arrive (408: a client trickling bytes cannot hold a connection);
    a body must be UTF-8 (400). Refusals are made here, so an anonymous client's body is
    never parsed."""

    WRITES = frozenset({"/decisions", "/outcomes", "/publish", "/rollback", "/shadows",
                        "/shadows/detach", "/promote"})
    PRIVATE = "/decisions/"  # GET /decisions/{id}: an applicant's features need a key
    #: Reads that need a key: the operator's page (figures by group, experiments); the key's
    #: own description (any scope: a client's check of its key, and the stack's floor).
    KEYED: ClassVar[dict[str, str | None]] = {"/operator": "admin", "/whoami": None}
    # the writes that take a body
    JSON = frozenset({"/decisions", "/outcomes", "/rollback", "/shadows", "/shadows/detach",
                      "/promote"})
    #: The scope each write needs; a write not named here changes the rule: ``admin``.
    SCOPES: ClassVar[dict[str, str]] = {"/decisions": "decide", "/outcomes": "report"}

    def __init__(self, app: Any, limit: int, keys: Any, deadline: float = 10.0,
                 limits: RateLimits | None = None) -> None:
        self.app = app
        self.limit = limit
        self.keys = keys
        self.deadline = deadline
        self.limits = limits

    def scope(self, path: str) -> str | None:
        """The scope a key needs for ``path`` (a write, an explanation, a keyed read; None:
        any valid key)."""
        if path.startswith(self.PRIVATE):
            return "explain"
        if path in self.KEYED:
            return self.KEYED[path]
        return self.SCOPES.get(path, "admin")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        post = scope["method"] == "POST"
        if ((post and scope["path"] in self.WRITES) or scope["path"].startswith(self.PRIVATE)
                or scope["path"] in self.KEYED):
            header = headers.get(b"authorization", b"").decode("latin-1")
            # who asked, for the row it writes (FastAPI's request.state reads scope["state"])
            state = scope.setdefault("state", {})
            why = await self._unauthorized(header, self.scope(scope["path"]), state)
            if why is not None:
                return await _error(*why)(scope, receive, send)
        if post and scope["path"] in self.JSON:
            why = self._unparsable(headers)
            if why is not None:
                return await _error(415, why)(scope, receive, send)
        message = (f"the request body is over {self.limit:,} bytes (max_body); send a smaller "
                   "batch")
        too_big = _error(413, message, close=True)
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit * DRAINED:
            return await too_big(scope, receive, send)
        # The body is read here, whole, against the limit and the deadline, then handed on.
        # One over the limit, but not by much, is read to its end and dropped before the 413:
        # a client still sending when the connection closes gets a reset, not the answer.
        loop = asyncio.get_running_loop()
        end = loop.time() + self.deadline
        events, seen = [], 0
        while True:
            try:
                async with asyncio.timeout_at(end):  # (no task made, unlike wait_for)
                    event = await receive()
            except TimeoutError:
                return await _error(408, f"the request body did not arrive within "
                                    f"{self.deadline:g} s (body_timeout): send it whole, at "
                                    "once", close=True)(scope, receive, send)
            seen += len(event.get("body", b""))
            last = event["type"] != "http.request" or not event.get("more_body")
            if seen > self.limit:
                events = []  # (kept no more)
                if last or seen > self.limit * DRAINED:
                    return await too_big(scope, receive, send)
                continue
            events.append(event)
            if last:
                break
        if post and scope["path"] in self.JSON:
            body = b"".join(e.get("body", b"") for e in events)
            why = _not_utf8(body)
            if why is not None:
                return await _error(400, why)(scope, receive, send)
            why = _ambiguous(body)
            if why is not None:
                return await _error(*why)(scope, receive, send)

        async def replay() -> Any:
            return events.pop(0) if events else await receive()
        return await self.app(scope, replay, send)

    async def _unauthorized(self, header: str, needed: str | None, state: dict[str, Any]
                            ) -> tuple[int, str] | tuple[int, str, bool, dict[str, str]] | None:
        """The refusal (status, why[, close, headers]) if the request's key may not do what
        the route does (``needed``, a scope; None: any key) now, else None, with the key's
        id and scopes in ``state`` (``key_id``, ``scopes``); a key not read lately is looked
        up in a thread (the event loop never waits for the database), and so is the write of
        its last use (once a minute)."""
        keys = self.keys()
        try:
            if keys.fresh(header):
                id_, why, scopes = keys.verify(header)
            else:
                id_, why, scopes = await asyncio.to_thread(keys.verify, header)
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            why = reason(exc, keys.engine.url.render_as_string(hide_password=False))
            return 503, f"the API key cannot be checked: the database is unavailable ({why})"
        if why is not None:
            return 401, why
        if needed is not None and needed not in scopes:
            return 403, (f"API key {id_} may not {DOES[needed]}: that needs scope "
                         f"{needed!r}, and it has {', '.join(scopes) or 'none'} (sat serve keys "
                         f"create --scope {needed} makes a key that may)")
        if self.limits is not None:
            wait = self.limits.take(id_)
            if wait is not None:
                seconds = max(1, math.ceil(wait))  # Retry-After is whole seconds
                return (429, f"API key {id_} is over its rate limit of "
                        f"{self.limits.rate:g} requests a second (rate_limit): retry after "
                        f"{seconds} s", False, {"retry-after": str(seconds)})
        if keys.use_due(id_):
            await asyncio.to_thread(keys.write_use, id_)
        state.update(key_id=id_, scopes=scopes)
        return None

    @staticmethod
    def _unparsable(headers: dict[bytes, bytes]) -> str | None:
        """Why a write's body, by its headers, is not JSON the service reads (else None)."""
        encoding = headers.get(b"content-encoding", b"identity").decode("latin-1").strip()
        if encoding.lower() not in ("", "identity"):
            return f"Content-Encoding {encoding!r:.40} is not accepted: {EXPECTED}"
        given = headers.get(b"content-type")
        if given is None:
            return f"the request has no Content-Type: {EXPECTED}"
        kind, params = _media(given)
        if kind != "application/json":
            return f"Content-Type {kind!r:.60} is not accepted: {EXPECTED}"
        charset = params.get("charset", "utf-8")
        if charset not in ("utf-8", "utf8"):
            return f"charset {charset!r:.40} is not accepted: {EXPECTED}"
        return None


def _not_utf8(body: bytes) -> str | None:
    """Why ``body`` is not UTF-8 JSON text (None if it may be: the parser says the rest)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (f"the body is not UTF-8 (byte 0x{body[exc.start]:02x} at position "
                f"{exc.start}): {EXPECTED}")
    if b"\x00" in body:  # never in JSON text; UTF-16 and UTF-32 are full of it
        return (f"the body holds a NUL byte at position {body.index(0)} (UTF-16 or UTF-32?): "
                f"{EXPECTED}")
    return None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


class _Duplicate(Exception):
    """A key given twice in one JSON object."""


def _ambiguous(body: bytes) -> tuple[int, str] | None:
    """Why ``body`` cannot be read as one meaning (None if it can, or is no JSON at all:
    the parser says that). A key given twice in one object would silently take its last
    value (422); a body nested past the parser's depth would be refused with no reason
    (400)."""
    try:
        json.loads(body, object_pairs_hook=_unique)
    except _Duplicate as exc:
        return 422, (f"key {exc.args[0]!r} is given twice in one object of the body: give "
                     "each key once")
    except RecursionError:
        return 400, ("the body nests arrays or objects too deeply to read (a request needs "
                     "a few levels)")
    except ValueError:  # not JSON: FastAPI's validation says where
        return None
    return None


def create_app(service: Service) -> FastAPI:
    """The ASGI app of an opened :class:`Service` (closed when the app shuts down)."""
    config = service.config
    d = config.dimension
    bound = learner_class(config.learner).tags().input_bound

    def bounded(value: float, where: str) -> None:
        """Refuse (422) what the learner would refuse: a value beyond its input bound."""
        if abs(value) > bound:
            raise ServiceError(422, f"{where}: must be at most {bound:g} in magnitude, the "
                               f"learner's input bound (got {value!r})")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        await asyncio.to_thread(service.close)

    app = FastAPI(title="strategic-apple-tasting decision service", version=__version__,
                  lifespan=lifespan,
                  description="Decisions under a published rule that strategic applicants "
                  "read, outcomes learned when they arrive (apple tasting).")
    app.add_middleware(Gate, limit=config.max_body, keys=lambda: service.keys,
                       deadline=config.body_timeout,
                       limits=RateLimits(config.rate_limit) if config.rate_limit else None)
    process = ProcessFigures()
    # Added last, so outermost: requests the gate refuses are counted and timed too.
    app.add_middleware(RequestMetrics, figures=process, routes=lambda: app.routes)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        hint = f": {EXPECTED}" if exc.status_code == 400 else ""
        return _error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}"
                      f"{hint}")

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> Response:
        return _error(exc.status, exc.message)

    @app.exception_handler(sa.exc.SQLAlchemyError)
    async def _database_error(request: Request, exc: sa.exc.SQLAlchemyError) -> Response:
        return _error(503, f"the database cannot be read ({reason(exc, config.database)}): "
                      "retry")

    @app.exception_handler(DatabaseLost)
    async def _database_lost(request: Request, exc: DatabaseLost) -> Response:
        return _error(503, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0]
        if first.get("type") == "json_invalid":
            why = first.get("ctx", {}).get("error", "invalid")
            return _error(422, f"the body is not valid JSON ({why} at character "
                          f"{first['loc'][-1]})")
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        value = first.get("input")
        shown = "" if isinstance(value, dict | list) or value is None else f" (got {value!r:.60})"
        return _error(422, f"{where}: {first.get('msg', 'invalid')}{shown}")

    scaling = config.scaling()

    def features(x: list[float], where: str) -> list[float]:
        if len(x) != d:
            names = f" ({', '.join(config.names())})" if config.features else ""
            raise ServiceError(422, f"{where} has {len(x)} features; the service decides on "
                               f"{d}{names}")
        for i, value in enumerate(x):
            bounded(value, f"{where}.{i}")
            if scaling.identity:
                continue
            # The learner meets the standardized value: a declared scale below 1 can carry
            # a raw value within the bound beyond it, and the learner would then refuse the
            # log entry (and stop) instead of this request.
            mean, scale = scaling.means[i], scaling.scales[i]
            z = (value - mean) / scale
            if abs(z) > bound:
                raise ServiceError(
                    422, f"{where}.{i}: {value!r} is {z:.6g} standardized (declared mean "
                    f"{mean:g}, scale {scale:g}), beyond the learner's input bound {bound:g}: "
                    f"give a value from {mean - bound * scale:g} to {mean + bound * scale:g}")
        return x

    def latest_rule(conn: Any) -> Any:
        r = store.rules
        return conn.execute(sa.select(r).order_by(r.c.version.desc()).limit(1)).first()

    # The gate checks keys; this documents them in the OpenAPI document.
    key = [Depends(HTTPBearer(auto_error=False, description="an API key (sat serve keys "
                              "create)"))]

    @app.post("/decisions", summary="Decide one applicant or a batch (API key)",
              dependencies=key)
    async def decide(body: DecisionsIn, request: Request) -> Response:
        if (body.applicants is None) == (body.x is None):
            raise ServiceError(422, "give one applicant (x, and optionally id) or a batch "
                               "(applicants), not both or neither")
        if body.applicants is not None:
            for name in ("id", "group"):
                if getattr(body, name) is not None:
                    raise ServiceError(422, f"{name} belongs in each of applicants, not "
                                       "beside them")
            if not 1 <= len(body.applicants) <= config.max_batch:
                raise ServiceError(422, f"applicants has {len(body.applicants)} entries; "
                                   f"from 1 to {config.max_batch:,} allowed (max_batch)")
            items = [(a.id, features(a.x, f"applicants.{k}.x"))
                     for k, a in enumerate(body.applicants)]
            ids = [i for i, _ in items if i is not None]
            if len(set(ids)) != len(ids):
                raise ServiceError(422, "applicants repeats an id: each decision needs its own")
            groups = [a.group for a in body.applicants]
            return _json({"decisions": await service.writer.submit("decisions", items,
                                                                     _key(request), groups)})
        items = [(body.id, features(body.x, "x"))]
        return _json((await service.writer.submit("decisions", items, _key(request),
                                                  [body.group]))[0])

    @app.post("/outcomes", summary="Report outcomes of accepted applicants (API key)",
              dependencies=key)
    async def outcomes(body: OutcomesIn, request: Request) -> Response:
        single = body.id is not None or body.outcome is not None
        if single == (body.outcomes is not None):
            raise ServiceError(422, "give one outcome (id and outcome) or a batch (outcomes), "
                               "not both or neither")
        if single:
            if body.id is None or body.outcome is None:
                raise ServiceError(422, "a single outcome needs both id and outcome")
            items = [(body.id, body.outcome)]
        else:
            if not 1 <= len(body.outcomes) <= config.max_batch:
                raise ServiceError(422, f"outcomes has {len(body.outcomes)} entries; from 1 to "
                                   f"{config.max_batch:,} allowed (max_batch)")
            items = [(o.id, o.outcome) for o in body.outcomes]
            if len({i for i, _ in items}) != len(items):
                raise ServiceError(422, "outcomes repeats an id: one outcome per decision")
        for k, (_, value) in enumerate(items):
            bounded(value, "outcome" if single else f"outcomes.{k}.outcome")
        done = await service.writer.submit("outcomes", items, _key(request))
        return _json(done[0] if single else {"outcomes": done})

    @app.post("/publish", summary="Learn what is logged, then publish the next rule (API key)",
              dependencies=key)
    async def publish(request: Request, force: bool = False) -> Response:
        if service.learner is None:
            raise ServiceError(409, "this worker only decides (--role decide): send /publish "
                               "to the worker that learns")
        if service.learner.error is not None:
            raise ServiceError(503, f"the learner has stopped: {service.learner.error}")
        if service.learner.standby:
            raise ServiceError(409, "this worker stands by (another learner holds the lock): "
                               "send /publish to the worker that learns")
        try:
            row = await asyncio.wait_for(asyncio.wrap_future(
                service.learner.publish(_key(request), force=force)),
                                         PUBLISH_SECONDS)
        except RuntimeError as exc:  # the learner stopped, or its database refused the write
            raise ServiceError(503, str(exc)) from None
        except TimeoutError:
            raise ServiceError(503, f"no publication within {PUBLISH_SECONDS:g} s (the learner "
                               "is busy or the database slow); it may still come: GET /policy "
                               "tells") from None
        r = store.rules
        doc = _rule_doc(await asyncio.to_thread(read, lambda conn: conn.execute(
            sa.select(r).where(r.c.version == row["version"])).one()), config)
        # Nothing read since the last publication: the rule in force stands, nothing stored,
        # and the answer says so (a new publication's answer is GET /policy's document).
        return _json({"published": "unchanged", **doc} if row.get("unchanged") else doc)

    @app.post("/rollback", summary="Put an earlier rule back in force, as a new version that "
              "names it; the learner keeps learning (API key)", dependencies=key)
    async def rollback(body: RollbackIn, request: Request) -> Response:
        if service.learner is None or service.learner.standby:
            raise ServiceError(409, "this worker does not learn: send /rollback to the worker "
                               "that learns")
        if service.learner.error is not None:
            raise ServiceError(503, f"the learner has stopped: {service.learner.error}")
        r = store.rules
        newest = await asyncio.to_thread(read, lambda conn: conn.execute(
            sa.select(sa.func.max(r.c.version))).scalar())
        if newest is not None and body.version == newest:
            raise ServiceError(409, f"rule version {body.version} is the one in force: "
                               "nothing to roll back")
        try:
            row = await asyncio.wait_for(asyncio.wrap_future(
                service.learner.publish(_key(request), restore=body.version)), PUBLISH_SECONDS)
        except LookupError as exc:
            raise ServiceError(404, f"{exc}: GET /policy/history lists them") from None
        except ValueError as exc:  # the learner cannot adopt it
            raise ServiceError(422, f"the learner cannot adopt rule version {body.version}: "
                               f"{exc}") from None
        except RuntimeError as exc:
            raise ServiceError(503, str(exc)) from None
        except TimeoutError:
            raise ServiceError(503, f"no publication within {PUBLISH_SECONDS:g} s; it may "
                               "still come: GET /policy tells") from None
        return _json(_rule_doc(await asyncio.to_thread(read, lambda conn: conn.execute(
            sa.select(r).where(r.c.version == row["version"])).one()), config))

    def read(query: Any) -> Any:
        with service.engine.connect() as conn:
            return query(conn)

    async def shadow_command(request: Request, asked: ShadowAsked) -> Any:
        """Run a shadow's attach, detach or promotion by the learner; its answer, or one
        line: 404 (no such shadow), 409 (a name taken, the settings' shadow, not the learner),
        422 (what was given cannot run), 503."""
        route = request.url.path
        if service.learner is None or service.learner.standby:
            raise ServiceError(409, f"this worker does not learn: send {route} to the worker "
                               "that learns")
        if service.learner.error is not None:
            raise ServiceError(503, f"the learner has stopped: {service.learner.error}")
        try:
            candidates.check_name(asked.name)
        except ValueError as exc:
            raise ServiceError(422, f"name: {exc}") from None
        try:
            return await asyncio.wait_for(asyncio.wrap_future(
                service.learner.shadow_command(_key(request), asked)), PUBLISH_SECONDS)
        except KeyError as exc:
            raise ServiceError(404, f"{exc.args[0]}: GET /shadows lists them") from None
        except FileExistsError as exc:
            raise ServiceError(409, str(exc)) from None
        except ValueError as exc:
            raise ServiceError(422, str(exc)) from None
        except RuntimeError as exc:
            raise ServiceError(503, str(exc)) from None
        except TimeoutError:
            raise ServiceError(503, f"no answer from the learner within {PUBLISH_SECONDS:g} "
                               "s; it may still come: GET /shadows tells") from None

    @app.post("/shadows", summary="Attach a shadow learner, fed the log from now on (API "
              "key)", dependencies=key)
    async def attach(body: AttachIn, request: Request) -> Response:
        import base64
        import binascii

        base = None
        if body.base is not None:
            try:
                base = base64.b64decode(body.base, validate=True)
            except (binascii.Error, ValueError):
                raise ServiceError(422, "base must be a saved learner's bytes in base64") \
                    from None
        return _json(await shadow_command(request, ShadowAsked(
            "attach", body.name, body.learner, json.dumps(body.params), base,
            body.canary or None)))

    @app.post("/shadows/detach", summary="Detach a shadow learner (API key)",
              dependencies=key)
    async def detach(body: ShadowIn, request: Request) -> Response:
        return _json(await shadow_command(request, ShadowAsked("detach", body.name)))

    @app.get("/shadows", summary="The shadows attached now (public)")
    async def shadows() -> Response:
        return _json({"shadows": await asyncio.to_thread(
            read, lambda conn: candidates.listing(conn, config))})

    @app.post("/promote", summary="Put a shadow's rule in force, as a new version; the live "
              "learner adopts it and keeps learning (API key)", dependencies=key)
    async def promote(body: ShadowIn, request: Request) -> Response:
        row = await shadow_command(request, ShadowAsked("promote", body.name))
        r = store.rules
        return _json(_rule_doc(await asyncio.to_thread(read, lambda conn: conn.execute(
            sa.select(r).where(r.c.version == row["version"])).one()), config))

    @app.api_route("/policy", methods=["GET", "HEAD"], summary="The rule in force (public)")
    async def policy() -> Response:
        row = await asyncio.to_thread(read, latest_rule)
        if row is None:
            raise ServiceError(503, "no rule is published yet")
        return _json(_rule_doc(row, config))

    @app.get("/policy/history", summary="Every published rule, oldest first (public)")
    async def history() -> Response:
        r = store.rules
        rows = await asyncio.to_thread(
            read, lambda conn: conn.execute(sa.select(r).order_by(r.c.version)).all())
        return _json({"rules": [_rule_doc(row, config) for row in rows]})

    @app.get("/decisions/{decision_id}", summary="One decision, explained (API key)",
             dependencies=key)
    async def explained(decision_id: str, request: Request) -> Response:
        from .explain import explain

        if not 1 <= len(decision_id) <= store.MAX_ID:
            raise ServiceError(422, f"decision id must have from 1 to {store.MAX_ID} "
                               f"characters, got {len(decision_id)}")
        d, o, r = store.decisions, store.outcomes, store.rules

        def look(conn: Any) -> Any:
            row = conn.execute(sa.select(d).where(d.c.id == decision_id)).first()
            if row is None:
                return None
            rule = conn.execute(sa.select(r).where(r.c.version == row.version)).one()
            outcome = conn.execute(sa.select(o).where(o.c.decision_id == decision_id)).first()
            return row, rule, outcome
        found = await asyncio.to_thread(read, look)
        if found is None:
            raise ServiceError(404, f"decision {decision_id!r:.140} is unknown: no decision "
                               "has that id (or retention has removed it)")
        try:  # no record of the read, no read: the access log is complete
            await asyncio.to_thread(record_read, service.engine, _key(request), decision_id)
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            raise ServiceError(503, "the read cannot be recorded in the access log "
                               f"({reason(exc, config.database)}): retry") from None
        return _json(explain(*found, config))

    @app.get("/metrics", summary="Counts and the rule's age, as JSON or Prometheus text "
             "(public)")
    async def metrics(request: Request, format: str | None = None) -> Response:
        from . import prom

        if format not in (None, "json", "prometheus"):
            raise ServiceError(422, f"format must be json or prometheus, got {format!r:.60}")
        figures = await asyncio.to_thread(_metrics, service)
        if not prom.wants_text(request.headers.get("accept", ""), format):
            return _json(figures)
        st = store.rule_stats
        versions = await asyncio.to_thread(read, lambda conn: conn.execute(
            sa.select(st).order_by(st.c.version)).all())
        return Response(prom.text(figures, versions) + process.text(),
                        media_type=prom.CONTENT_TYPE)

    @app.get("/whoami", summary="The API key's id and scopes (any valid key; nothing is "
             "read from the database once the key is known)", dependencies=key)
    async def whoami(request: Request) -> Response:
        return _json({"key": _key(request), "scopes": list(request.state.scopes)})

    @app.get("/health", summary="Whether the service decides and learns (public)")
    async def health() -> Response:
        await asyncio.to_thread(service.probe)
        unread = None
        try:
            await asyncio.to_thread(read, lambda conn: conn.execute(sa.select(1)))
        except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
            unread = f"the database cannot be read ({reason(exc, config.database)})"
        error = None if service.learner is None else service.learner.error
        database = service.database_error() or unread
        status = ("ok" if error is None and database is None else
                  "database lost" if store.lost(service.engine) else
                  "learner stopped" if error is not None else "database failing")
        standby = service.learner is not None and service.learner.standby
        return _json({"status": status, "role": service.role, "standby": standby,
                      "learner_error": error, "database_error": database},
                     200 if status == "ok" else 503)

    @app.get("/ready", summary="Whether to send this process traffic: the database "
             "reachable and migrated, the learner running (public)")
    async def ready() -> Response:
        doc = await asyncio.to_thread(service.readiness)
        return _json(doc, 200 if doc["ready"] else 503)

    @app.get("/", response_class=HTMLResponse, summary="The applicants' page (public)")
    async def page() -> HTMLResponse:
        from .page import applicant_page

        return HTMLResponse(await asyncio.to_thread(applicant_page, service))

    @app.get("/operator", response_class=HTMLResponse,
             summary="The operator's page: rules, groups, shadow, exploration (API key)",
             dependencies=key)
    async def operator() -> HTMLResponse:
        from .page import operator_page

        return HTMLResponse(await asyncio.to_thread(operator_page, service))

    return app


def _key(request: Request) -> str | None:
    """The id of the API key that sent ``request`` (the gate put it there)."""
    return getattr(request.state, "key_id", None)


def _metrics(service: Service) -> dict[str, Any]:
    """The JSON figures: running counts and a few single rows (no scan of the log, so a
    scrape costs the same whatever the log's length)."""
    p, r, sr = store.learner_progress, store.rules, store.shadow_rules
    with service.engine.connect() as conn:
        counted = counts.read(conn)
        progress = conn.execute(sa.select(p)).one()
        last = conn.execute(sa.select(store.log_counter.c.seq)
                            .where(store.log_counter.c.id == 1)).scalar_one()
        rule = conn.execute(sa.select(r.c.version, r.c.published_at)
                            .order_by(r.c.version.desc()).limit(1)).first()
        groups = group_metrics(conn)
        shadow_version = (conn.execute(sa.select(sa.func.max(sr.c.version))
                                       .where(sr.c.name == candidates.CONFIGURED)).scalar()
                          if service.config.shadow is not None else None)
        shadows = candidates.figures(conn, service.config)
        skipped = conn.execute(sa.select(sa.func.count()).select_from(
            store.skipped_entries)).scalar_one()
    for name, figures in shadows.items():
        figures["estimate"] = _estimate(service, name, figures["rule_version"])
    # Under bandit feedback every decision but the cap's rejections awaits its outcome.
    awaited = (counted["decisions"] - counted["capped"] if service.bandit
               else counted["accepted"])
    out = {
        "decisions": counted["decisions"], "accepted": counted["accepted"],
        "capped": counted["capped"], "outcomes": counted["outcomes"],
        "repaid": counted["repaid"], "outcomes_pending": awaited - counted["outcomes"],
        "outcomes_learned": progress.learned, "clean_points": progress.clean,
        "skipped_entries": skipped,
        "learner_lag": int(last) - progress.seq,
        "rule_version": None if rule is None else rule.version,
        "rule_age_seconds": None if rule is None else max(0.0, store.now() - rule.published_at),
        "learner_error": (service.learner.error if service.learner is not None
                          and service.learner.error else progress.error),
        "database_error": service.database_error(),
        "learner_standby": service.learner is not None and service.learner.standby,
        **budget_metrics(service),  # only when the learner estimates δ
        "groups": groups,  # per group label decisions carried ({} if none)
        "shadows": shadows,  # per shadow attached ({} if none)
    }
    if service.config.shadow is not None:
        out["shadow"] = {"learner": service.config.shadow,
                         "decisions": counted["shadow_decisions"],
                         "accepted": counted["shadow_accepted"],
                         "live_accepted": counted["shadow_live_accepted"],
                         "agreed": counted["shadow_agreed"], "rule_version": shadow_version}
    return out


def _estimate(service: Service, name: str, version: int | None) -> dict[str, Any] | None:
    """What ``sat serve evaluate --shadow NAME`` estimates of the shadow's newest rule
    (profit per 1,000 applicants, inverse propensity and doubly robust, with 95% half-widths),
    or why it is refused; made again at most every :data:`ESTIMATE_EVERY` seconds."""
    if version is None:
        return None
    kept = service.estimates.get(name)
    if kept is not None and kept[0] == version and time.monotonic() < kept[1] + ESTIMATE_EVERY:
        return kept[2]
    try:
        est = candidates.estimate(service.engine, service.config, name)
        doc = {"version": version, "ips": est.ips, "ips_half": est.ips_half, "dr": est.dr,
               "dr_half": est.dr_half, "acceptance_rate": est.acceptance,
               "decisions": est.decisions, "carried": est.carried}
    except ValueError as exc:  # refused: unexplored applicants, no outcomes yet, bandit
        doc = {"version": version, "refused": str(exc)}
    service.estimates[name] = (version, time.monotonic(), doc)
    return doc

