"""The decision service over HTTP (FastAPI; served by uvicorn from ``sat serve``).

Public: ``GET /policy`` (the rule in force), ``GET /policy/history``, ``GET /`` (a page with the
rule, its changes and acceptance over time), ``GET /health``, ``GET /metrics`` and the OpenAPI
document (``/openapi.json``, browsable at ``/docs``). They show rules and counts, never an
applicant's features or outcome.

With an API key (``Authorization: Bearer <key>``): ``POST /decisions`` (one applicant or a
batch), ``POST /outcomes`` (one or a batch) and ``POST /publish``.

Bad input gets a 4xx with ``{"error": "<one line>"}`` and changes nothing: a request is
written whole or not at all.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..learners import learner_class
from . import store
from .config import ServiceConfig
from .deciding import ServiceError, Writer
from .keys import KeyCheck
from .learning import LearnerLoop

#: A feature or an outcome: a finite number, at most the learner's input bound in magnitude
#: (``Learner.input_bound``, checked per request in :func:`create_app`), so that no request
#: the service takes can stop the learner.
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
DecisionId = Annotated[str, Field(min_length=1, max_length=store.MAX_ID)]

#: What a process of the service does: decide and learn (one per database), or only decide.
ROLES = ("all", "decide")


class Applicant(BaseModel):
    """One applicant: the features it shows (after any gaming) and, optionally, the client's
    id for the decision (a retry with the same id gets the same decision)."""

    model_config = ConfigDict(extra="forbid")
    x: list[Finite]
    id: DecisionId | None = None


class DecisionsIn(BaseModel):
    """One applicant (``x``, ``id``) or a batch (``applicants``)."""

    model_config = ConfigDict(extra="forbid")
    x: list[Finite] | None = None
    id: DecisionId | None = None
    applicants: list[Applicant] | None = None


class Outcome(BaseModel):
    """The outcome (the reward of the decision taken) of decision ``id``."""

    model_config = ConfigDict(extra="forbid")
    id: DecisionId
    outcome: Finite


class OutcomesIn(BaseModel):
    """One outcome (``id``, ``outcome``) or a batch (``outcomes``)."""

    model_config = ConfigDict(extra="forbid")
    id: DecisionId | None = None
    outcome: Finite | None = None
    outcomes: list[Outcome] | None = None


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

    def open(self) -> Service:
        """Connect, migrate, check the database's settings, start the learner and the writer;
        a database that cannot be used is a ``ValueError`` in one line."""
        try:
            return self._open()
        except sa.exc.SQLAlchemyError as exc:
            self.close()
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise ValueError(f"database {self.config.database!r} cannot be used: "
                             f"{type(exc).__name__}: {reason}") from None

    def _open(self) -> Service:
        self.engine = store.connect(self.config.database)
        store.migrate(self.engine)
        fixed = self.config.fixed()
        with store.transaction(self.engine) as conn:
            before = store.read_setting(conn, "fixed")
            if before is None:
                store.write_setting(conn, "fixed", fixed)
            elif before != fixed:
                diff = next(k for k in fixed if before.get(k) != fixed[k])
                raise ValueError(
                    f"database {self.config.database!r} was created with {diff} = "
                    f"{before.get(diff)!r}, this start gives {fixed[diff]!r}: start with the "
                    "same learner, params, dimension and seed, or use another database")
        self.keys = KeyCheck(self.engine)
        if self.role == "all":
            self.learner = LearnerLoop(self.engine, self.config)
            self.learner.start()
        self.writer = Writer(self.engine, self.bandit,
                             on_commit=self.learner.wake if self.learner else lambda: None)
        self.writer.start()
        return self

    def close(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.learner is not None:
            self.learner.stop()
        if self.engine is not None:
            self.engine.dispose()


def _json(doc: Any, status: int = 200) -> Response:
    return Response(json.dumps(doc), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


def _rule_doc(row: Any, config: ServiceConfig) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {"version": row.version, "kind": row.kind, "beta": json.loads(row.beta),
            "threshold": row.threshold, "features": config.features,
            "effective": datetime.fromtimestamp(row.published_at, UTC).isoformat(),
            "effective_unix": row.published_at,
            "rule": "accept an applicant x when sum(beta[i] * x[i]) >= threshold",
            "learner": config.learner, "params": config.fixed()["params"]}


class Gate:
    """Before a request's body is read: the write endpoints need a key (401), and no body may
    exceed ``limit`` bytes (413), whether it says its length or not. Refusals are made here,
    so an anonymous client's body is never parsed."""

    WRITES = frozenset({"/decisions", "/outcomes", "/publish"})

    def __init__(self, app: Any, limit: int, keys: Any) -> None:
        self.app = app
        self.limit = limit
        self.keys = keys

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if scope["method"] == "POST" and scope["path"] in self.WRITES:
            header = headers.get(b"authorization", b"").decode("latin-1")
            _, why = self.keys().check(header)
            if why is not None:
                return await _error(401, why)(scope, receive, send)
        message = (f"the request body is over {self.limit:,} bytes (max_body); send a smaller "
                   "batch")
        length = headers.get(b"content-length")
        if length is not None and length.isdigit():
            if int(length) > self.limit:
                return await _error(413, message)(scope, receive, send)
            return await self.app(scope, receive, send)
        # No length given (chunked): read it here, up to the limit, and hand it on.
        events, seen = [], 0
        while True:
            event = await receive()
            events.append(event)
            seen += len(event.get("body", b""))
            if seen > self.limit:
                return await _error(413, message)(scope, receive, send)
            if event["type"] != "http.request" or not event.get("more_body"):
                break

        async def replay() -> Any:
            return events.pop(0) if events else await receive()
        return await self.app(scope, replay, send)


def create_app(service: Service) -> FastAPI:
    """The ASGI app of an opened :class:`Service` (closed when the app shuts down)."""
    config = service.config
    d = config.dimension
    bound = learner_class(config.learner).input_bound

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
    app.add_middleware(Gate, limit=config.max_body, keys=lambda: service.keys)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> Response:
        return _error(exc.status, exc.message)

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

    def features(x: list[float], where: str) -> list[float]:
        if len(x) != d:
            names = f" ({', '.join(config.features)})" if config.features else ""
            raise ServiceError(422, f"{where} has {len(x)} features; the service decides on "
                               f"{d}{names}")
        for i, value in enumerate(x):
            bounded(value, f"{where}.{i}")
        return x

    def latest_rule(conn: Any) -> Any:
        r = store.rules
        return conn.execute(sa.select(r).order_by(r.c.version.desc()).limit(1)).first()

    # The gate checks keys; this documents them in the OpenAPI document.
    key = [Depends(HTTPBearer(auto_error=False, description="an API key (sat serve keys "
                              "create)"))]

    @app.post("/decisions", summary="Decide one applicant or a batch (API key)",
              dependencies=key)
    async def decide(body: DecisionsIn) -> Response:
        if (body.applicants is None) == (body.x is None):
            raise ServiceError(422, "give one applicant (x, and optionally id) or a batch "
                               "(applicants), not both or neither")
        if body.applicants is not None:
            if body.id is not None:
                raise ServiceError(422, "id belongs in each of applicants, not beside them")
            if not 1 <= len(body.applicants) <= config.max_batch:
                raise ServiceError(422, f"applicants has {len(body.applicants)} entries; "
                                   f"from 1 to {config.max_batch:,} allowed (max_batch)")
            items = [(a.id, features(a.x, f"applicants.{k}.x"))
                     for k, a in enumerate(body.applicants)]
            ids = [i for i, _ in items if i is not None]
            if len(set(ids)) != len(ids):
                raise ServiceError(422, "applicants repeats an id: each decision needs its own")
            return _json({"decisions": await service.writer.submit("decisions", items)})
        items = [(body.id, features(body.x, "x"))]
        return _json((await service.writer.submit("decisions", items))[0])

    @app.post("/outcomes", summary="Report outcomes of accepted applicants (API key)",
              dependencies=key)
    async def outcomes(body: OutcomesIn) -> Response:
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
        done = await service.writer.submit("outcomes", items)
        return _json(done[0] if single else {"outcomes": done})

    @app.post("/publish", summary="Learn what is logged, then publish the next rule (API key)",
              dependencies=key)
    async def publish() -> Response:
        if service.learner is None:
            raise ServiceError(409, "this worker only decides (--role decide): send /publish "
                               "to the worker that learns")
        if service.learner.error is not None:
            raise ServiceError(503, f"the learner has stopped: {service.learner.error}")
        try:
            row = await asyncio.wrap_future(service.learner.publish())
        except RuntimeError as exc:  # the learner stopped on an error while publishing
            raise ServiceError(503, str(exc)) from None
        r = store.rules
        return _json(_rule_doc(await asyncio.to_thread(read, lambda conn: conn.execute(
            sa.select(r).where(r.c.version == row["version"])).one()), config))

    def read(query: Any) -> Any:
        with service.engine.connect() as conn:
            return query(conn)

    @app.get("/policy", summary="The rule in force (public)")
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

    @app.get("/metrics", summary="Counts and the rule's age (public)")
    async def metrics() -> Response:
        return _json(await asyncio.to_thread(_metrics, service))

    @app.get("/health", summary="Whether the service decides and learns (public)")
    async def health() -> Response:
        await asyncio.to_thread(read, lambda conn: conn.execute(sa.select(1)))
        error = None if service.learner is None else service.learner.error
        return _json({"status": "ok" if error is None else "learner stopped",
                      "role": service.role, "learner_error": error},
                     200 if error is None else 503)

    @app.get("/", response_class=HTMLResponse, summary="The public policy page")
    async def page() -> HTMLResponse:
        from .page import policy_page

        return HTMLResponse(await asyncio.to_thread(policy_page, service))

    return app


def _metrics(service: Service) -> dict[str, Any]:
    d, o, p, r = store.decisions, store.outcomes, store.learner_progress, store.rules
    with service.engine.connect() as conn:
        decided, accepted = conn.execute(
            sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(
                sa.cast(d.c.accepted, sa.Integer)), 0))).one()
        reported = conn.execute(sa.select(sa.func.count()).select_from(o)).scalar_one()
        progress = conn.execute(sa.select(p)).one()
        last = conn.execute(sa.select(sa.func.max(store.log_counter.c.seq))).scalar_one()
        rule = conn.execute(sa.select(r.c.version, r.c.published_at)
                            .order_by(r.c.version.desc()).limit(1)).first()
    awaited = decided if service.bandit else accepted
    return {
        "decisions": decided, "accepted": int(accepted), "outcomes": reported,
        "outcomes_pending": int(awaited) - reported,
        "outcomes_learned": progress.learned, "clean_points": progress.clean,
        "learner_lag": int(last) - progress.seq,
        "rule_version": None if rule is None else rule.version,
        "rule_age_seconds": None if rule is None else max(0.0, store.now() - rule.published_at),
        "learner_error": (service.learner.error if service.learner is not None
                          and service.learner.error else progress.error),
    }

