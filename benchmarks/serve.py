"""Throughput and latency of the decision service (`sat serve`) against its HTTP floor.

Every configuration (backend × mode × clients × client kind) is its own ``sat serve`` process
on a loopback port, on a fresh database (a new SQLite file in a temporary directory, or a new
database in one throwaway PostgreSQL cluster, see ``service/throwaway.py``), with an API key.
All of them are started and warmed up (3 untimed decisions and 3 floor requests) before
anything is timed. Then, in each of ``--rounds`` rounds, in a fresh random order, every
configuration runs two bounded loops back to back, driven from this process by ``--clients``
concurrent clients, each with its own keep-alive connection:

- **floor**: ``GET /whoami``, ``--requests`` a client: an authenticated route (any valid key)
  answered from the key cache without touching the database: what the same server stack
  (uvicorn, FastAPI, the key check) costs a request on this machine, at this moment.
- **single**: ``POST /decisions`` with one applicant, ``--requests`` a client; or
- **batched**: ``POST /decisions`` with ``--batch`` applicants, ``--batch-requests`` a client.

A configuration's figure is its median over rounds; its ratio to the floor is the median of
the per-round ratios (requests/s ÷ the floor's requests/s; latency ÷ the floor's latency). The
rounds alternate between servers that are already running, so load from elsewhere on the
machine falls on the floor and the decisions alike, and configurations can be compared.

No outcomes are sent, so under apple tasting every accepted decision stays pending in the
learner (with the initial accept-all rule: every decision).

Reported per configuration: decisions/s (wall clock over the bounded loop, from the moment
every client is connected to the last answer), requests/s, request latency p50 and p99 (ms,
timed in the client, so it includes the client's own scheduling), the floor's requests/s, p50
and p99, the ratios (with the smallest and largest per-round rate ratio), errors (non-200
answers and failed requests of either loop, plus one a round where ``/metrics`` does not count
exactly the decisions answered; must be 0, the first ones are printed), the CPU of the server
process and of this process (the clients) as a share of one core (PostgreSQL's own processes
are not in "server CPU"), the share of all cores busy (any process, from /proc/stat: other work
on the machine shows here), the learner's lag after the last round (log entries not yet
learned, from ``/metrics``), and how long the server took to stop (Ctrl-C: the learner learns
the rest and saves).

Clients (``--client``, several allowed, one configuration each):

- ``threads`` (default): a thread per client, each an ``httpx.Client``.
- ``async``: ``httpx.AsyncClient``s on one asyncio loop.
- ``aiohttp``: ``aiohttp.ClientSession``s on one asyncio loop (the ``bench`` extra), much
  cheaper a request. At 8 and 32 clients in single mode httpx takes most of a core and is the
  bottleneck on 2 cores; ``aiohttp`` shows more of what the server does on its own.

The machine has 2 cores shared by the server, the clients and anything else running: the load
average is printed before and after.

The targets (2 cores, SQLite) are printed beside the numbers: ≥ 500 single decisions/s with
p99 ≤ 50 ms at 32 clients, ≥ 0.5 of the floor there, and ≥ 20,000 decisions/s batched.

A before/after of a change on a busy machine: ``--checkouts OLD/src src`` runs every
configuration once per checkout (a ``git worktree add`` of the old commit), each server
importing the package from its checkout, the rounds alternating between all of them.

Usage::

    .venv/bin/python benchmarks/serve.py --rounds 2 --clients 1 8   # smoke (~1 min)
    .venv/bin/python benchmarks/serve.py --rounds 5 --requests 40 --client aiohttp
    .venv/bin/python benchmarks/serve.py --backends sqlite --modes single --clients 32 \\
        --requests 500 [--batch 1000] [--dimension 5] [--ids] [--pg-fsync] [--keep]

PostgreSQL runs when a throwaway cluster can start here (``throwaway.missing()`` is None; else
the reason is printed and it is skipped). It runs with ``fsync`` and ``synchronous_commit`` off
unless ``--pg-fsync`` is given, while SQLite syncs every commit (``synchronous=FULL``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import itertools
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from strategic_apple_tasting.service import keys, store, throwaway

#: The issue's targets on 2 cores with SQLite.
TARGET_SINGLE_RATE = 500.0  # single decisions/s at 32 clients
TARGET_SINGLE_P99_MS = 50.0  # ... with this p99
TARGET_SINGLE_CLIENTS = 32
TARGET_BATCH_RATE = 20_000.0  # decisions/s, batched
#: Single decisions at 32 clients on SQLite, as a share of the floor's requests/s.
TARGET_FLOOR_RATIO = 0.5
#: The floor: an authenticated route answered from the key cache, no database.
FLOOR = "/whoami"
#: Distinct feature vectors the clients cycle through.
POOL = 4096
#: Non-200 answers printed per phase (all are counted).
SHOWN_ERRORS = 5

Body = Callable[[int, int], bytes | None]  # (client, request) → body (None: a GET)


@dataclass
class Phase:
    """One bounded loop of requests by every client."""

    requests: int
    decisions: int  # applicants decided (0 for health)
    seconds: float  # wall clock, the first request sent to the last answer
    latencies_ms: np.ndarray
    errors: int
    shown: list[str]
    client_cpu: float  # seconds of this process's CPU during the loop
    server_cpu: float  # seconds of the server's CPU during the loop
    machine_busy: float = float("nan")  # share of all cores busy (any process) during the loop

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def percentile(self, q: float) -> float:
        return float(np.percentile(self.latencies_ms, q)) if self.latencies_ms.size else np.nan


# -- the server ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One ``sat serve`` process on a loopback port (stopped by :meth:`stop`, always)."""

    def __init__(self, database: str, dimension: int, log: Path,
                 extra: list[str] | None = None, src: str | None = None) -> None:
        self.extra = extra or []
        self.src = src  # (a checkout's src directory the server imports the package from)
        self.database = database
        self.dimension = dimension
        self.log = log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.key = ""
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 300.0) -> Server:
        command = [sys.executable, "-m", "strategic_apple_tasting", "serve",
                   "--learner", "sa-ols", "--param", "delta=0.3", "--param", "r0=0",
                   "--dimension", str(self.dimension), "--publish", "outcomes:1000",
                   "--database", self.database, "--port", str(self.port), *self.extra]
        env = None
        if self.src is not None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                filter(None, [os.path.abspath(self.src), os.environ.get("PYTHONPATH")]))}
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"sat serve exited {self.process.returncode}: "
                                   f"{self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"sat serve did not answer /health in {timeout} s")
            time.sleep(0.05)
        engine = store.connect(self.database)
        try:
            # every scope: the interleaved benchmark publishes and attaches shadows too
            self.key = keys.create_key(engine, "benchmark", keys.SCOPES)
        finally:
            engine.dispose()
        return self

    def cpu_seconds(self) -> float:
        """The server's user + system CPU so far (from /proc; NaN where there is none)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, AttributeError):
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, timeout: float = 120.0) -> float:
        """Ctrl-C, as an operator would; killed if it has not exited in ``timeout`` s.
        Returns the seconds it took."""
        start = time.perf_counter()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                print(f"  (server on port {self.port} did not stop in {timeout:.0f} s: killed)")
        return time.perf_counter() - start


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine so far, from /proc/stat (0, 0 without)."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:9]]
    except OSError:
        return 0, 0
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


def timed(run: Callable[..., Phase], *args: Any) -> Phase:
    """``run(*args)``, with the machine's busy share over it filled in."""
    busy0, total0 = machine_jiffies()
    phase = run(*args)
    busy1, total1 = machine_jiffies()
    if total1 > total0:
        phase.machine_busy = (busy1 - busy0) / (total1 - total0)
    return phase


# -- the load -----------------------------------------------------------------------------------
def make_body(mode: str, batch: int, dimension: int, ids: bool, tag: str, seed: int = 0) -> Body:
    """The request bodies: JSON bytes built from a pool of feature vectors (cheap to build,
    so the clients spend little on them); ``ids``: every applicant gets a unique client id."""
    rng = np.random.default_rng(seed)
    pool = ["[" + ",".join(f"{v:.4f}" for v in row) + "]"
            for row in rng.standard_normal((POOL, dimension))]

    def applicant(n: int, c: int, k: int, i: int) -> str:
        if ids:
            return f'{{"x":{pool[n % POOL]},"id":"{tag}-{c}-{k}-{i}"}}'
        return f'{{"x":{pool[n % POOL]}}}'

    def body(c: int, k: int) -> bytes:
        n = (c * 7919 + k) * batch
        if mode == "single":
            return applicant(n, c, k, 0).encode()
        return ('{"applicants":[' + ",".join(applicant(n + i, c, k, i) for i in range(batch))
                + "]}").encode()

    return body


def _record(status: int, text: str, shown: list[str]) -> None:
    if len(shown) < SHOWN_ERRORS:
        shown.append(f"{status}: {text[:300]}")


def _run_on_loop(sessions: Callable[[], list[Any]],
                 send: Callable[[Any, str, bytes | None], Awaitable[tuple[int, str]]],
                 close: Callable[[Any], Awaitable[None]], path: str, body: Body,
                 clients: int, requests: int, per_request: int, server: Server) -> Phase:
    """Clients as tasks on one asyncio loop, each with its own session (one keep-alive
    connection): ``send(session, path, content)`` gives (status, error text); the clock starts
    once every client has connected."""

    async def main() -> Phase:
        made = sessions()
        latencies = np.zeros((clients, requests))
        errors: list[int] = [0]
        shown: list[str] = []
        go = asyncio.Event()
        ready: list[int] = []

        async def client(c: int, session: Any) -> None:
            await send(session, "/health", None)  # connect before the clock starts
            ready.append(c)
            if len(ready) == clients:
                go.set()
            await go.wait()
            for k in range(requests):
                content = body(c, k)
                t0 = time.perf_counter()
                status, text = await send(session, path, content)
                latencies[c, k] = time.perf_counter() - t0
                if status != 200:
                    errors[0] += 1
                    _record(status, text, shown)

        tasks = [asyncio.create_task(client(c, s)) for c, s in enumerate(made)]
        await go.wait()
        cpu0, server0, t0 = time.process_time(), server.cpu_seconds(), time.perf_counter()
        await asyncio.gather(*tasks)
        seconds = time.perf_counter() - t0
        cpu, server_cpu = time.process_time() - cpu0, server.cpu_seconds() - server0
        for session in made:
            await close(session)
        return Phase(clients * requests, clients * requests * per_request, seconds,
                     latencies.ravel() * 1e3, errors[0], shown, cpu, server_cpu)

    return asyncio.run(main())


def run_async(url: str, key: str, path: str, body: Body, clients: int, requests: int,
              per_request: int, server: Server) -> Phase:
    """Every client an ``httpx.AsyncClient`` with one keep-alive connection, on one loop."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)

    def sessions() -> list[Any]:
        return [httpx.AsyncClient(base_url=url, headers=headers, timeout=120.0, limits=limits)
                for _ in range(clients)]

    async def send(session: Any, where: str, content: bytes | None) -> tuple[int, str]:
        try:
            r = await (session.get(where) if content is None
                       else session.post(where, content=content))
        except httpx.HTTPError as exc:
            return -1, f"{type(exc).__name__}: {exc}"
        return r.status_code, r.text if r.status_code != 200 else ""

    async def close(session: Any) -> None:
        await session.aclose()

    return _run_on_loop(sessions, send, close, path, body, clients, requests, per_request,
                        server)


def run_threads(url: str, key: str, path: str, body: Body, clients: int, requests: int,
                per_request: int, server: Server) -> Phase:
    """A thread per client, each an ``httpx.Client`` with one keep-alive connection."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    latencies = np.zeros((clients, requests))
    errors: list[int] = [0]
    shown: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def client(c: int) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=120.0) as session:
            session.get("/health")
            barrier.wait()
            for k in range(requests):
                content = body(c, k)
                t0 = time.perf_counter()
                try:
                    r = session.get(path) if content is None else session.post(path,
                                                                                 content=content)
                    status, text = r.status_code, r.text if r.status_code != 200 else ""
                except httpx.HTTPError as exc:
                    status, text = -1, f"{type(exc).__name__}: {exc}"
                latencies[c, k] = time.perf_counter() - t0
                if status != 200:
                    with lock:
                        errors[0] += 1
                        _record(status, text, shown)

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    cpu0, server0, t0 = time.process_time(), server.cpu_seconds(), time.perf_counter()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    return Phase(clients * requests, clients * requests * per_request, seconds,
                 latencies.ravel() * 1e3, errors[0], shown, time.process_time() - cpu0,
                 server.cpu_seconds() - server0)


def run_aiohttp(url: str, key: str, path: str, body: Body, clients: int, requests: int,
                per_request: int, server: Server) -> Phase:
    """Every client an ``aiohttp.ClientSession`` with one keep-alive connection, on one loop
    (the ``bench`` extra): a client with a fraction of httpx's cost a request, to tell how much
    of a measurement is the client's."""
    import aiohttp

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def sessions() -> list[Any]:
        return [aiohttp.ClientSession(url, headers=headers,
                                      connector=aiohttp.TCPConnector(limit=1),
                                      timeout=aiohttp.ClientTimeout(total=120))
                for _ in range(clients)]

    async def send(session: Any, where: str, content: bytes | None) -> tuple[int, str]:
        try:
            async with (session.get(where) if content is None
                        else session.post(where, data=content)) as r:
                text = await r.text()
                return r.status, text if r.status != 200 else ""
        except (TimeoutError, aiohttp.ClientError) as exc:
            return -1, f"{type(exc).__name__}: {exc}"

    async def close(session: Any) -> None:
        await session.close()

    return _run_on_loop(sessions, send, close, path, body, clients, requests, per_request,
                        server)


RUNNERS = {"async": run_async, "threads": run_threads, "aiohttp": run_aiohttp}


def metrics(url: str) -> dict[str, Any]:
    return httpx.get(f"{url}/metrics", timeout=60.0).json()


@dataclass
class Config:
    """One configuration (backend × mode × clients × client kind): its own server, started
    before anything is timed, and what each round measured on it."""

    backend: str
    mode: str
    clients: int
    client: str
    batch: int
    server: Server
    checkout: str = ""  # (--checkouts: the src directory its server imports)
    floors: list[Phase] = field(default_factory=list)
    decides: list[Phase] = field(default_factory=list)
    miscounted: int = 0  # rounds where /metrics did not count exactly the decisions answered
    learner_lag: int | None = None
    stop_seconds: float = float("nan")
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return (f"{self.checkout + ' ' if self.checkout else ''}{self.backend} {self.mode} "
                f"{self.clients} clients {self.client}")

    @property
    def requests(self) -> int:
        return self.decides[0].requests // self.clients if self.decides else 0

    @property
    def errors(self) -> int:
        return (sum(p.errors for p in self.floors) + sum(p.errors for p in self.decides)
                + self.miscounted)


def warm_up(config: Config, dimension: int, ids: bool) -> None:
    """Untimed: 3 decisions and 3 floor requests, so the first timed ones do not import and
    touch what later ones use."""
    server = config.server
    warm = make_body(config.mode, config.batch, dimension, ids, "warm")
    with httpx.Client(base_url=server.url, timeout=120.0,
                      headers={"Authorization": f"Bearer {server.key}",
                               "Content-Type": "application/json"}) as session:
        for k in range(3):
            r = session.post("/decisions", content=warm(0, k))
            if r.status_code != 200:
                raise RuntimeError(f"warm-up decision refused: {r.status_code} {r.text}")
            r = session.get(FLOOR)
            if r.status_code != 200:
                raise RuntimeError(f"warm-up {FLOOR} refused: {r.status_code} {r.text}")


def measure_round(config: Config, args: argparse.Namespace, k: int) -> None:
    """One round of one configuration: the floor loop, then at once the decisions' loop, on
    the same server with the same clients and client kind."""
    run, server = RUNNERS[config.client], config.server
    requests = args.requests if config.mode == "single" else args.batch_requests
    before = metrics(server.url)["decisions"]
    floor = timed(run, server.url, server.key, FLOOR, lambda c, i: None, config.clients,
                  args.requests, 0, server)
    body = make_body(config.mode, config.batch, args.dimension, args.ids,
                     f"r{k}-{config.mode}{config.clients}{config.client}", seed=k)
    decide = timed(run, server.url, server.key, "/decisions", body, config.clients, requests,
                   config.batch, server)
    recorded = metrics(server.url)["decisions"] - before
    expected = decide.decisions - decide.errors * config.batch
    if recorded != expected:
        config.miscounted += 1
        config.notes.append(f"round {k + 1}: /metrics counts {recorded:,} new decisions, the "
                            f"clients got {expected:,} answered")
    config.floors.append(floor)
    config.decides.append(decide)


# -- the databases ------------------------------------------------------------------------------
@contextmanager
def databases(backend: str, args: argparse.Namespace, workdir: Path) -> Iterator[Callable[[str],
                                                                                         str]]:
    """``fresh(name)`` gives the URL of a new, empty database of ``backend``."""
    if backend == "sqlite":
        yield lambda name: f"sqlite:///{workdir}/{name}.db"
        return
    with throwaway.throwaway_postgres(fsync=args.pg_fsync) as url:
        import psycopg

        base = url.rsplit("/", 1)[0]

        def fresh(name: str) -> str:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            return f"{base}/{name}"

        yield fresh


# -- the report ---------------------------------------------------------------------------------
def _ms(v: float) -> str:
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def _median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def summary(c: Config) -> dict[str, Any]:
    """The configuration's figures: each the median over rounds; a ratio to the floor is the
    median of the per-round ratios (a round's decisions and its floor ran back to back, so
    load from elsewhere falls on both alike)."""
    pairs = list(zip(c.decides, c.floors, strict=True))
    return {
        "decisions/s": _median(d.decisions / d.seconds for d in c.decides),
        "req/s": _median(d.rate for d in c.decides),
        "p50": _median(d.percentile(50) for d in c.decides),
        "p99": _median(d.percentile(99) for d in c.decides),
        "floor req/s": _median(f.rate for f in c.floors),
        "floor p50": _median(f.percentile(50) for f in c.floors),
        "floor p99": _median(f.percentile(99) for f in c.floors),
        "rate ratio": _median(d.rate / f.rate for d, f in pairs),
        "p50 ratio": _median(d.percentile(50) / f.percentile(50) for d, f in pairs),
        "p99 ratio": _median(d.percentile(99) / f.percentile(99) for d, f in pairs),
        "spread": (min(d.rate / f.rate for d, f in pairs), max(d.rate / f.rate for d, f in pairs)),
        "server CPU": _median(d.server_cpu / d.seconds for d in c.decides),
        "client CPU": _median(d.client_cpu / d.seconds for d in c.decides),
        "machine busy": _median(d.machine_busy for d in c.decides),
    }


def target(c: Config, s: dict[str, Any]) -> str:
    if c.backend != "sqlite":
        return "-"
    if c.mode == "single" and c.clients == TARGET_SINGLE_CLIENTS:
        met = s["decisions/s"] >= TARGET_SINGLE_RATE and s["p99"] <= TARGET_SINGLE_P99_MS
        floor = "yes" if s["rate ratio"] >= TARGET_FLOOR_RATIO else "**no**"
        return (f"≥ {TARGET_SINGLE_RATE:.0f}/s, p99 ≤ {TARGET_SINGLE_P99_MS:.0f} ms: "
                + ("yes" if met else "**no**") + f"; ≥ {TARGET_FLOOR_RATIO} of floor: {floor}")
    if c.mode == "batched":
        return f"≥ {TARGET_BATCH_RATE:,.0f}/s: " + ("yes" if s["decisions/s"] >= TARGET_BATCH_RATE
                                                     else "**no**")
    return "-"


HEADER = ("backend", "mode", "clients", "client", "decisions/s", "req/s", "p50 ms", "p99 ms",
          "floor req/s", "floor p50 ms", "floor p99 ms", "req/s ÷ floor (min–max)",
          "p50 ÷ floor", "p99 ÷ floor", "errors", "server CPU", "client CPU", "machine busy",
          "learner lag", "stop s", "target")


def row(c: Config, checkouts: bool = False) -> str:
    """The configuration's line of the table (``checkouts``: its checkout first)."""
    s = summary(c)
    lo, hi = s["spread"]
    mode = "single" if c.mode == "single" else f"batched ×{c.batch:,}"
    cells = (c.backend, mode, str(c.clients), c.client, f"{s['decisions/s']:,.0f}",
             f"{s['req/s']:,.0f}", _ms(s["p50"]), _ms(s["p99"]), f"{s['floor req/s']:,.0f}",
             _ms(s["floor p50"]), _ms(s["floor p99"]),
             f"{s['rate ratio']:.2f} ({lo:.2f}–{hi:.2f})", f"{s['p50 ratio']:.2f}",
             f"{s['p99 ratio']:.2f}", str(c.errors) if c.errors == 0 else f"**{c.errors}**",
             f"{s['server CPU']:.0%}", f"{s['client CPU']:.0%}", f"{s['machine busy']:.0%}",
             "-" if c.learner_lag is None else f"{c.learner_lag:,}", f"{c.stop_seconds:.1f}",
             target(c, s))
    return "| " + " | ".join(((c.checkout,) if checkouts else ()) + cells) + " |"


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", choices=("sqlite", "postgresql"),
                        default=["sqlite", "postgresql"])
    parser.add_argument("--modes", nargs="+", choices=("single", "batched"),
                        default=["single", "batched"])
    parser.add_argument("--clients", type=_positive, nargs="+", default=[1, 8, 32],
                        help="concurrent clients, one configuration each (default 1 8 32)")
    parser.add_argument("--rounds", type=_positive, default=5,
                        help="rounds; in each every configuration runs once, floor then "
                        "decisions, in a fresh random order (default 5)")
    parser.add_argument("--requests", type=_positive, default=20,
                        help="requests per client and round, single mode and the floor "
                        "(default 20)")
    parser.add_argument("--batch-requests", type=_positive, default=2,
                        help="requests per client and round, batched mode (default 2)")
    parser.add_argument("--batch", type=_positive, default=1000,
                        help="applicants per batched request (default 1000; at most the "
                        "service's max_batch, 10,000)")
    parser.add_argument("--dimension", type=_positive, default=5,
                        help="features per applicant (default 5)")
    parser.add_argument("--ids", action="store_true",
                        help="send a unique client id with every applicant")
    parser.add_argument("--client", nargs="+", choices=tuple(RUNNERS), default=["threads"],
                        help="how the clients send, one configuration each: threads: a thread "
                        "per client with httpx.Client (default); async: httpx.AsyncClient on "
                        "one asyncio loop; aiohttp: aiohttp sessions on one loop (the bench "
                        "extra: far cheaper a request, to tell httpx's own cost)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the rounds' orders (default 0)")
    parser.add_argument("--pg-fsync", action="store_true",
                        help="run the throwaway PostgreSQL with fsync on (default off)")
    parser.add_argument("--serve-args", default="", metavar="FLAGS",
                        help="more flags for every server, as one string (e.g. \"--shadow "
                        "sa-ols --shadow-param delta=0.1 --shadow-param r0=0\")")
    parser.add_argument("--checkouts", nargs="+", metavar="SRC", default=[],
                        help="every configuration once per checkout, its server importing "
                        "the package from that src directory (a before/after on a busy "
                        "machine: the rounds alternate between them)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory (databases, server logs)")
    args = parser.parse_args()
    if args.batch > 10_000:
        parser.error(f"--batch must be at most 10,000 (the service's max_batch), got "
                     f"{args.batch}")
    for src in args.checkouts:
        if not (Path(src) / "strategic_apple_tasting").is_dir():
            parser.error(f"--checkouts: {src!r} holds no strategic_apple_tasting package: give "
                         "a checkout's src directory")
    if "aiohttp" in args.client:
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            parser.error("--client aiohttp needs aiohttp (pip install -e '.[bench]')")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks

    backends = list(args.backends)
    if "postgresql" in backends:
        why = throwaway.missing()
        if why is not None:
            print(f"PostgreSQL skipped: {why}")
            backends.remove("postgresql")
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, Python "
          f"{platform.python_version()}, httpx {httpx.__version__}, {os.cpu_count()} cores, "
          f"load average {load_average()}; SA-OLS, d = {args.dimension}, publish "
          f"outcomes:1000 (no outcomes sent); clients: {' '.join(args.client)}; "
          f"{args.rounds} rounds; single: {args.requests} requests a client and round; "
          f"batched: {args.batch_requests} requests of {args.batch:,} a client and round; "
          f"floor ({FLOOR}): {args.requests} a client and round"
          + ("; unique ids" if args.ids else "; no ids"), flush=True)
    configs: list[Config] = []
    workdir = Path(tempfile.mkdtemp(prefix="sat-bench-serve-"))
    started = time.perf_counter()
    try:
        with ExitStack() as stack:
            # every server first: no configuration is timed while another starts
            for backend in backends:
                fresh = stack.enter_context(databases(backend, args, workdir))
                for mode, clients, kind, src in itertools.product(
                        args.modes, args.clients, args.client, args.checkouts or [None]):
                    name = f"bench_{mode}_{clients}_{kind}_{random.randrange(10**6)}"
                    server = Server(fresh(name), args.dimension,
                                    workdir / f"server-{backend}-{name}.log",
                                    args.serve_args.split(), src)
                    config = Config(backend, mode, clients, kind,
                                    1 if mode == "single" else args.batch, server, src or "")
                    configs.append(config)
                    stack.callback(server.stop)
                    server.start()
                    warm_up(config, args.dimension, args.ids)
            print(f"{len(configs)} servers started and warmed up in "
                  f"{time.perf_counter() - started:.0f} s; load average {load_average()}",
                  flush=True)
            order = list(configs)
            shuffle = random.Random(args.seed)
            for k in range(args.rounds):
                shuffle.shuffle(order)
                t0 = time.perf_counter()
                for config in order:
                    measure_round(config, args, k)
                singles = [c for c in configs if c.mode == "single"]
                print(f"round {k + 1}/{args.rounds} ({time.perf_counter() - t0:.0f} s): "
                      + ", ".join(f"{c.checkout + ' ' if c.checkout else ''}"
                                  f"{c.backend[:2]} {c.clients}×{c.client[:2]} "
                                  f"{c.decides[-1].rate / c.floors[-1].rate:.2f}"
                                  for c in singles) + " of the floor (singles)", flush=True)
            for config in configs:
                config.learner_lag = metrics(config.server.url).get("learner_lag")
                config.stop_seconds = config.server.stop()
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    print(f"\n{time.perf_counter() - started:.0f} s in all; load average now {load_average()}\n")
    header = (("checkout",) if args.checkouts else ()) + HEADER
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if h in ("checkout", "backend", "mode", "client", "target")
                         else "---:" for h in header) + "|")
    for config in configs:
        print(row(config, bool(args.checkouts)))
    for c in configs:
        for phases, what in ((c.floors, "floor"), (c.decides, "decisions")):
            for phase in phases:
                for line in phase.shown:
                    print(f"{c.name}, {what}: {line}")
        for note in c.notes:
            print(f"{c.name}: {note}")
    return 1 if any(c.errors for c in configs) else 0



def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


if __name__ == "__main__":
    sys.exit(main())
