"""The service's routes (:data:`router`, which :func:`.app.create_app` includes): each a
function of its request's validated body (:mod:`.bodies`) and of the opened service, which
the app keeps (``app.state``) and each route reaches through a dependency (:func:`opened`).

The gate (:class:`.app.Gate`) has checked the key, its scope and the body's form before a
route runs; a route refuses with :class:`.deciding.ServiceError` (its status, one line)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.security import HTTPBearer

from . import candidates, store
from .bodies import AttachIn, DecisionsIn, InputCheck, OutcomesIn, RollbackIn, ShadowIn
from .config import ServiceConfig
from .deciding import ServiceError
from .http_metrics import ProcessFigures
from .keys import record_read
from .learning import ShadowAsked
from .metrics_view import metrics as metrics_figures
from .redact import reason
from .replies import json_response
from .running import Service
from .sqlite_file import DatabaseLost

#: Seconds ``POST /publish`` waits for its publication before answering 503.
PUBLISH_SECONDS = 30.0

router = APIRouter()


async def opened(request: Request) -> Service:
    """The opened service the app serves (``create_app`` keeps it in ``app.state``)."""
    # (a coroutine: FastAPI would run a plain function's dependency on a thread)
    return request.app.state.service


async def input_check(request: Request) -> InputCheck:
    """What the service's settings bound in a request (made once, by ``create_app``)."""
    return request.app.state.inputs


async def process_figures(request: Request) -> ProcessFigures:
    """This process's own HTTP figures (counted by ``create_app``'s middleware)."""
    return request.app.state.process


Opened = Annotated[Service, Depends(opened)]
Inputs = Annotated[InputCheck, Depends(input_check)]
Process = Annotated[ProcessFigures, Depends(process_figures)]

# The gate checks keys; this documents them in the OpenAPI document.
KEY = [Depends(HTTPBearer(auto_error=False, description="an API key (sat serve keys create)"))]


def _key(request: Request) -> str | None:
    """The id of the API key that sent ``request`` (the gate put it there)."""
    return getattr(request.state, "key_id", None)


def _read(service: Service, query: Any) -> Any:
    """``query(conn)`` on a connection of the service's database (call it on a thread)."""
    with service.engine.connect() as conn:
        return query(conn)


async def _rule_answer(service: Service, version: int) -> dict[str, Any]:
    """Rule ``version``'s document, as ``GET /policy`` gives the rule in force."""
    r = store.rules
    return _rule_doc(await asyncio.to_thread(_read, service, lambda conn: conn.execute(
        sa.select(r).where(r.c.version == version)).one()), service.config)


def _rule_doc(row: Any, config: ServiceConfig) -> dict[str, Any]:
    """A published rule's document (``row``: of ``store.rules``) under ``config``."""
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


# -- decisions and outcomes ----------------------------------------------------------------

@router.post("/decisions", summary="Decide one applicant or a batch (API key)",
             dependencies=KEY)
async def decide(body: DecisionsIn, request: Request, service: Opened,
                 inputs: Inputs) -> Response:
    # (one applicant or a batch, nothing beside a batch: DecisionsIn checked that)
    if body.applicants is not None:
        inputs.batch(len(body.applicants), "applicants")
        items = [(a.id, inputs.features(a.x, f"applicants.{k}.x"))
                 for k, a in enumerate(body.applicants)]
        # Checked here, after the count and the features, not by the model: a body with
        # several faults is refused for the first in that order.
        ids = [i for i, _ in items if i is not None]
        if len(set(ids)) != len(ids):
            raise ServiceError(422, "applicants repeats an id: each decision needs its own")
        groups = [a.group for a in body.applicants]
        return json_response({"decisions": await service.writer.submit(
            "decisions", items, _key(request), groups)})
    items = [(body.id, inputs.features(body.x, "x"))]
    return json_response((await service.writer.submit("decisions", items, _key(request),
                                                      [body.group]))[0])


@router.post("/outcomes", summary="Report outcomes of accepted applicants (API key)",
             dependencies=KEY)
async def outcomes(body: OutcomesIn, request: Request, service: Opened,
                   inputs: Inputs) -> Response:
    # (one outcome, id and outcome both, or a batch: OutcomesIn checked that)
    single = body.single
    if single:
        items = [(body.id, body.outcome)]
    else:
        inputs.batch(len(body.outcomes), "outcomes")
        items = [(o.id, o.outcome) for o in body.outcomes]
        if len({i for i, _ in items}) != len(items):
            raise ServiceError(422, "outcomes repeats an id: one outcome per decision")
    for k, (_, value) in enumerate(items):
        inputs.bounded(value, "outcome" if single else f"outcomes.{k}.outcome")
    done = await service.writer.submit("outcomes", items, _key(request))
    return json_response(done[0] if single else {"outcomes": done})


# -- the rule: publication, rollback ---------------------------------------------------------

@router.post("/publish", summary="Learn what is logged, then publish the next rule (API key)",
             dependencies=KEY)
async def publish(request: Request, service: Opened, force: bool = False) -> Response:
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
            service.learner.publish(_key(request), force=force)), PUBLISH_SECONDS)
    except RuntimeError as exc:  # the learner stopped, or its database refused the write
        raise ServiceError(503, str(exc)) from None
    except TimeoutError:
        raise ServiceError(503, f"no publication within {PUBLISH_SECONDS:g} s (the learner "
                           "is busy or the database slow); it may still come: GET /policy "
                           "tells") from None
    doc = await _rule_answer(service, row["version"])
    # Nothing read since the last publication: the rule in force stands, nothing stored,
    # and the answer says so (a new publication's answer is GET /policy's document).
    return json_response({"published": "unchanged", **doc} if row.get("unchanged") else doc)


@router.post("/rollback", summary="Put an earlier rule back in force, as a new version that "
             "names it; the learner keeps learning (API key)", dependencies=KEY)
async def rollback(body: RollbackIn, request: Request, service: Opened) -> Response:
    if service.learner is None or service.learner.standby:
        raise ServiceError(409, "this worker does not learn: send /rollback to the worker "
                           "that learns")
    if service.learner.error is not None:
        raise ServiceError(503, f"the learner has stopped: {service.learner.error}")
    r = store.rules
    newest = await asyncio.to_thread(_read, service, lambda conn: conn.execute(
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
    return json_response(await _rule_answer(service, row["version"]))


# -- shadows ---------------------------------------------------------------------------------

async def _shadow_command(service: Service, request: Request, asked: ShadowAsked) -> Any:
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


@router.post("/shadows", summary="Attach a shadow learner, fed the log from now on (API "
             "key)", dependencies=KEY)
async def attach(body: AttachIn, request: Request, service: Opened) -> Response:
    # (base, if given, is base64: AttachIn decoded it)
    return json_response(await _shadow_command(service, request, ShadowAsked(
        "attach", body.name, body.learner, json.dumps(body.params), body.saved,
        body.canary or None)))


@router.post("/shadows/detach", summary="Detach a shadow learner (API key)",
             dependencies=KEY)
async def detach(body: ShadowIn, request: Request, service: Opened) -> Response:
    return json_response(await _shadow_command(service, request,
                                               ShadowAsked("detach", body.name)))


@router.get("/shadows", summary="The shadows attached now (public)")
async def shadows(service: Opened) -> Response:
    return json_response({"shadows": await asyncio.to_thread(
        _read, service, lambda conn: candidates.listing(conn, service.config))})


@router.post("/promote", summary="Put a shadow's rule in force, as a new version; the live "
             "learner adopts it and keeps learning (API key)", dependencies=KEY)
async def promote(body: ShadowIn, request: Request, service: Opened) -> Response:
    row = await _shadow_command(service, request, ShadowAsked("promote", body.name))
    return json_response(await _rule_answer(service, row["version"]))


# -- the rules published, a decision explained -----------------------------------------------

@router.api_route("/policy", methods=["GET", "HEAD"], summary="The rule in force (public)")
async def policy(service: Opened) -> Response:
    row = await asyncio.to_thread(_read, service, store.newest_rule)
    if row is None:
        raise ServiceError(503, "no rule is published yet")
    return json_response(_rule_doc(row, service.config))


@router.get("/policy/history", summary="Every published rule, oldest first (public)")
async def history(service: Opened) -> Response:
    r = store.rules
    rows = await asyncio.to_thread(
        _read, service, lambda conn: conn.execute(sa.select(r).order_by(r.c.version)).all())
    return json_response({"rules": [_rule_doc(row, service.config) for row in rows]})


@router.get("/decisions/{decision_id}", summary="One decision, explained (API key)",
            dependencies=KEY)
async def explained(decision_id: str, request: Request, service: Opened) -> Response:
    from .explain import explain

    # Checked here, not by the path's own limits, whose refusal would be worded otherwise
    # (and would change the OpenAPI document).
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
    found = await asyncio.to_thread(_read, service, look)
    if found is None:
        raise ServiceError(404, f"decision {decision_id!r:.140} is unknown: no decision "
                           "has that id (or retention has removed it)")
    try:  # no record of the read, no read: the access log is complete
        await asyncio.to_thread(record_read, service.engine, _key(request), decision_id)
    except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
        raise ServiceError(503, "the read cannot be recorded in the access log "
                           f"({reason(exc, service.config.database)}): retry") from None
    return json_response(explain(*found, service.config))


# -- the service's state ---------------------------------------------------------------------

@router.get("/metrics", summary="Counts and the rule's age, as JSON or Prometheus text "
            "(public)")
async def metrics(request: Request, service: Opened, process: Process,
                  format: str | None = None) -> Response:
    from . import prom

    # Checked here, not as a Literal, whose refusal would be worded otherwise (and would
    # change the OpenAPI document).
    if format not in (None, "json", "prometheus"):
        raise ServiceError(422, f"format must be json or prometheus, got {format!r:.60}")
    figures = await asyncio.to_thread(metrics_figures, service)
    if not prom.wants_text(request.headers.get("accept", ""), format):
        return json_response(figures)
    st = store.rule_stats
    versions = await asyncio.to_thread(_read, service, lambda conn: conn.execute(
        sa.select(st).order_by(st.c.version)).all())
    return Response(prom.text(figures, versions) + process.text(),
                    media_type=prom.CONTENT_TYPE)


@router.get("/whoami", summary="The API key's id and scopes (any valid key; nothing is "
            "read from the database once the key is known)", dependencies=KEY)
async def whoami(request: Request) -> Response:
    return json_response({"key": _key(request), "scopes": list(request.state.scopes)})


@router.get("/health", summary="Whether the service decides and learns (public)")
async def health(service: Opened) -> Response:
    await asyncio.to_thread(service.probe)
    unread = None
    try:
        await asyncio.to_thread(_read, service, lambda conn: conn.execute(sa.select(1)))
    except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
        unread = f"the database cannot be read ({reason(exc, service.config.database)})"
    error = None if service.learner is None else service.learner.error
    database = service.database_error() or unread
    status = ("ok" if error is None and database is None else
              "database lost" if store.lost(service.engine) else
              "learner stopped" if error is not None else "database failing")
    standby = service.learner is not None and service.learner.standby
    return json_response({"status": status, "role": service.role, "standby": standby,
                          "learner_error": error, "database_error": database},
                         200 if status == "ok" else 503)


@router.get("/ready", summary="Whether to send this process traffic: the database "
            "reachable and migrated, the learner running (public)")
async def ready(service: Opened) -> Response:
    doc = await asyncio.to_thread(service.readiness)
    return json_response(doc, 200 if doc["ready"] else 503)


# -- pages -----------------------------------------------------------------------------------

@router.get("/", response_class=HTMLResponse, summary="The applicants' page (public)")
async def page(service: Opened) -> HTMLResponse:
    from .page import applicant_page

    return HTMLResponse(await asyncio.to_thread(applicant_page, service))


@router.get("/operator", response_class=HTMLResponse,
            summary="The operator's page: rules, groups, shadow, exploration (API key)",
            dependencies=KEY)
async def operator(service: Opened) -> HTMLResponse:
    from .page import operator_page

    return HTMLResponse(await asyncio.to_thread(operator_page, service))
