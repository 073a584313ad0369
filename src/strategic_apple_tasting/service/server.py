"""Running a service: uvicorn on a host and port, one process."""

from __future__ import annotations

import gc
import sys

from . import settings
from .app import Service, create_app
from .config import ServiceConfig
from .redact import shown


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
