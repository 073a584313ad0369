"""Real servers for the service's tests: ``sat serve`` as a process on a loopback port, on a
SQLite file (or a throwaway PostgreSQL cluster), with an API key made through the API. A server
is forked from a process that has imported the command (:mod:`.forked`: it answers after about
0.5 s instead of 1.8 s), or, with ``forked=False``, is the command itself, a new process."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="the 'serve' extra is not installed")
pytest.importorskip("fastapi", reason="the 'serve' extra is not installed")

from strategic_apple_tasting.service import keys, store, throwaway  # noqa: E402

from ..helpers import with_default_sigint  # noqa: E402
from .forked import ForkedServer  # noqa: E402

SA_OLS = ["--learner", "sa-ols", "--param", "delta=0.3", "--param", "r0=0",
          "--param", "feedback=\"apple\""]


@pytest.fixture
def engine(tmp_path):
    """A migrated SQLite database of the service's schema, its engine."""
    from strategic_apple_tasting.service import store

    engine = store.connect(f"sqlite:///{tmp_path}/keys.db")
    store.migrate(engine)
    yield engine
    engine.dispose()


def wait_learned(client, count: int, seconds: float = 60.0) -> None:
    """Until the service behind ``client`` has learned ``count`` outcomes (it learns in its
    own thread); fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while client.get("/metrics").json()["outcomes_learned"] < count:
        assert time.monotonic() < deadline, f"{count} outcomes not learned in {seconds:g} s"
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """One ``sat serve`` process; restartable on the same database and port."""

    database: str
    args: list[str]
    log: Path
    port: int = field(default_factory=free_port)
    key: str = ""
    process: subprocess.Popen | ForkedServer | None = None
    #: Forked from the tests' fork server (:mod:`.forked`); False: the command as a new process.
    forked: bool = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Server:
        argv = [*self.args, "--database", self.database, "--port", str(self.port)]
        if self.forked:
            self.process = ForkedServer(argv, self.log)
        else:
            with open(self.log, "ab") as out:
                self.process = subprocess.Popen(
                    with_default_sigint([sys.executable, "-m", "strategic_apple_tasting",
                                         "serve", *argv]),
                    stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"sat serve exited {self.process.returncode}: "
                                     f"{self.log.read_text()[-2000:]}")
            try:
                health = httpx.get(f"{self.url}/health", timeout=1.0)
            except httpx.TransportError:
                time.sleep(0.05)
                continue
            if health.status_code == 200:
                break
            raise AssertionError(f"sat serve is unhealthy: {health.text}")
        else:
            raise AssertionError(f"sat serve did not answer in {timeout} s")
        if not self.key:
            engine = store.connect(self.database)
            self.key = keys.create_key(engine, "tests", keys.SCOPES)  # every route
            engine.dispose()
        return self

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30.0,
                            headers={"Authorization": f"Bearer {self.key}"}, **kwargs)

    def kill(self) -> None:
        """``kill -9``: no shutdown of any kind."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        """Ctrl-C: the learner learns what is logged and saves itself."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                raise


@pytest.fixture
def serve(tmp_path):
    """``serve(*flags, database=None)`` starts a server (SA-OLS, d = 3 by default); every
    server is stopped after the test."""
    started: list[Server] = []

    def start(*args: str, database: str | None = None, dimension: int = 3) -> Server:
        database = database or f"sqlite:///{tmp_path}/service-{len(started)}.db"
        flags = list(args) if any(a == "--learner" for a in args) else [*SA_OLS, *args]
        server = Server(database, [*flags, "--dimension", str(dimension)],
                        tmp_path / f"server-{len(started)}.log")
        started.append(server)
        return server.start()

    yield start
    for server in started:
        if server.process is not None and server.process.poll() is None:
            server.process.kill()
            server.process.wait()


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL cluster's URL, or a skip that says what is missing."""
    why = throwaway.missing()
    if why is not None:
        pytest.skip(f"{why}: the PostgreSQL tests did not run")
    with throwaway.throwaway_postgres() as url:
        yield url


@pytest.fixture
def postgres_db(postgres):
    """A database of the test's own on the throwaway cluster (its settings and its log are
    nobody else's); its URL."""
    import uuid

    import sqlalchemy as sa

    name = f"t_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(postgres.replace("postgresql://", "postgresql+psycopg://", 1),
                              isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return f"{postgres.rsplit('/', 1)[0]}/{name}"
