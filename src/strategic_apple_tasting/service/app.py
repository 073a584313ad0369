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

Here: the gate (:class:`Gate`), the handlers that word every refusal, and :func:`create_app`.
The routes are :mod:`.routes`, what a request may say :mod:`.bodies`, the service's parts
:mod:`.running`.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from .._version import __version__
from . import routes
from .bodies import WHOLE, InputCheck
from .deciding import ServiceError
from .http_metrics import ProcessFigures, RequestMetrics
from .keys import DOES
from .ratelimit import RateLimits
from .redact import reason
from .replies import error_response
from .running import Service
from .sqlite_file import DatabaseLost

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
                return await error_response(*why)(scope, receive, send)
        if post and scope["path"] in self.JSON:
            why = self._unparsable(headers)
            if why is not None:
                return await error_response(415, why)(scope, receive, send)
        def too_big() -> Any:  # (made only when refused: a response costs a JSON dump)
            return error_response(413, f"the request body is over {self.limit:,} bytes "
                                  "(max_body); send a smaller batch", close=True)
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit * DRAINED:
            return await too_big()(scope, receive, send)
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
                return await error_response(408, f"the request body did not arrive within "
                                    f"{self.deadline:g} s (body_timeout): send it whole, at "
                                    "once", close=True)(scope, receive, send)
            seen += len(event.get("body", b""))
            last = event["type"] != "http.request" or not event.get("more_body")
            if seen > self.limit:
                events = []  # (kept no more)
                if last or seen > self.limit * DRAINED:
                    return await too_big()(scope, receive, send)
                continue
            events.append(event)
            if last:
                break
        if post and scope["path"] in self.JSON:
            body = b"".join(e.get("body", b"") for e in events)
            why = _not_utf8(body)
            if why is not None:
                return await error_response(400, why)(scope, receive, send)
            why = _ambiguous(body)
            if why is not None:
                return await error_response(*why)(scope, receive, send)

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


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    hint = f": {EXPECTED}" if exc.status_code == 400 else ""
    return error_response(exc.status_code, f"{request.method} {request.url.path}: "
                          f"{exc.detail}{hint}")


async def _service_error(request: Request, exc: ServiceError) -> Response:
    return error_response(exc.status, exc.message)


async def _database_error(request: Request, exc: sa.exc.SQLAlchemyError) -> Response:
    database = request.app.state.service.config.database
    return error_response(503, f"the database cannot be read ({reason(exc, database)}): "
                          "retry")


async def _database_lost(request: Request, exc: DatabaseLost) -> Response:
    return error_response(503, str(exc))


async def _invalid(request: Request, exc: RequestValidationError) -> Response:
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        why = first.get("ctx", {}).get("error", "invalid")
        return error_response(422, f"the body is not valid JSON ({why} at character "
                              f"{first['loc'][-1]})")
    if first.get("type") == WHOLE:  # the body refused as a whole: no field to name
        return error_response(422, first["msg"])
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    value = first.get("input")
    shown = "" if isinstance(value, dict | list) or value is None else f" (got {value!r:.60})"
    return error_response(422, f"{where}: {first.get('msg', 'invalid')}{shown}")


def install_handlers(app: FastAPI) -> None:
    """Every refusal in one line (``{"error": ...}``): FastAPI's own (no such route, a body
    that does not validate), a route's :class:`.ServiceError`, a database that fails."""
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(sa.exc.SQLAlchemyError, _database_error)
    app.add_exception_handler(DatabaseLost, _database_lost)
    app.add_exception_handler(RequestValidationError, _invalid)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await asyncio.to_thread(app.state.service.close)


def create_app(service: Service) -> FastAPI:
    """The ASGI app of an opened :class:`Service` (closed when the app shuts down)."""
    config = service.config
    app = FastAPI(title="strategic-apple-tasting decision service", version=__version__,
                  lifespan=_lifespan,
                  description="Decisions under a published rule that strategic applicants "
                  "read, outcomes learned when they arrive (apple tasting).")
    # What the routes reach (routes.opened and its like), each made once.
    app.state.service = service
    app.state.inputs = InputCheck(config)
    app.state.process = ProcessFigures()
    install_handlers(app)
    app.include_router(routes.router)
    app.add_middleware(Gate, limit=config.max_body, keys=lambda: service.keys,
                       deadline=config.body_timeout,
                       limits=RateLimits(config.rate_limit) if config.rate_limit else None)
    # Added last, so outermost: requests the gate refuses are counted and timed too, each
    # under its route's path (the router's routes by their own: the router, included, has
    # none, and would match them all).
    labelled = [*(r for r in app.routes if isinstance(r, Route)), *routes.router.routes]
    app.add_middleware(RequestMetrics, figures=app.state.process, routes=lambda: labelled)
    return app
