"""Running a service: uvicorn on a host and port, one process."""

from __future__ import annotations

import gc
import socket
import sys

from . import settings
from .app import create_app
from .config import ServiceConfig
from .redact import shown
from .running import Service


def serve(config: ServiceConfig, host: str = "127.0.0.1", port: int = 8000,
          role: str = "all") -> None:
    """Check and open the service (a ``ValueError`` in one line before anything listens), then
    serve until interrupted (``GET /health`` answers once it listens)."""
    import uvicorn

    service = Service(config, role).open()
    # What the imports made (numba, SQLAlchemy, FastAPI, pydantic: ~180,000 objects) lives as
    # long as the process: out of the collector's sight, a full collection no longer stops
    # every request for ~100 ms (benchmarks/serve.py: p99 at 32 clients from ~120 to ~40 ms).
    gc.collect()
    gc.freeze()
    try:
        _check_port(host, port)  # one line, before the banner, not uvicorn's traceback
        say = sys.stderr
        print("sat serve: the settings in force (`sat serve settings` shows them):",
              file=say)
        for line in settings.toml_lines(settings.kept(service.config)):
            print(f"  {line}" if line else "", file=say)
        for line in [*service.changes, *service.notes]:
            print(f"sat serve: {line}", file=say)
        print(f"sat serve: {config.learner} ({role}) on http://{host}:{port}, database "
              f"{shown(config.database)}, publishing {config.publish} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        uvicorn.run(create_app(service), host=host, port=port, log_level="warning",
                    access_log=False)
    finally:
        service.close()


def _check_port(host: str, port: int) -> None:
    """A ``ValueError`` in one line if nothing may listen on ``host``:``port`` now (another
    process holds it); uvicorn binds it right after."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ValueError(f"--host {host!r} is not an address to listen on ({exc.strerror})"
                         ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise ValueError(f"--port {port}: cannot listen on {host}:{port} "
                             f"({exc.strerror}): another process holds it; stop it or give "
                             "another --port") from None
