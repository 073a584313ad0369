"""What one process of the service measures of itself, for ``/metrics`` in the Prometheus text
format: requests by route, method and status, their latency, and the process (CPU, memory,
open files, start time: prometheus_client's own collectors).

These live as long as the process, as Prometheus expects of a process's own counters: a
restart starts them from zero with a new ``process_start_time_seconds``, which is how a
scraper tells a restart from a counter going down. (The service's counts of decisions and
outcomes are the database's, and never go down: :mod:`.counts`.) Labels are bounded: a
route is the template the app matched (``/decisions/{decision_id}``), else ``unmatched``; a
method outside HTTP's usual ones is ``other``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from starlette.routing import Match

#: The methods named in a label; any other is "other" (a client cannot grow the series).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: Latency buckets, seconds: a group commit takes milliseconds, a publication up to
#: ``routes.PUBLISH_SECONDS``.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
           30.0)


class ProcessFigures:
    """This process's registry: request counts and latencies, and the process collectors."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("sat_http_requests", "HTTP requests answered, by route, "
                                "method and status", ["route", "method", "status"],
                                registry=self.registry)
        self.seconds = Histogram("sat_http_request_duration_seconds", "Seconds from a "
                                 "request's arrival to the end of its answer, by route and "
                                 "method", ["route", "method"], buckets=BUCKETS,
                                 registry=self.registry)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)

    def text(self) -> bytes:
        """The registry in the text format."""
        return generate_latest(self.registry)


class RequestMetrics:
    """ASGI middleware (outermost: refusals before routing count too) that counts and times
    every HTTP request into ``figures``; ``routes()`` gives the app's routes."""

    def __init__(self, app: Any, figures: ProcessFigures, routes: Callable[[], list]) -> None:
        self.app = app
        self.figures = figures
        self.routes = routes

    def route(self, scope: Any) -> str:
        """The template of the route ``scope`` names (whatever its method), else unmatched."""
        for route in self.routes():
            match, _ = route.matches(scope)
            if match is not Match.NONE:
                return getattr(route, "path", "unmatched")
        return "unmatched"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status = [500]  # an app that raises answers 500

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, sending)
        finally:
            route = self.route(scope)
            method = scope["method"] if scope["method"] in METHODS else "other"
            self.figures.requests.labels(route, method, str(status[0])).inc()
            self.figures.seconds.labels(route, method).observe(time.perf_counter() - start)
