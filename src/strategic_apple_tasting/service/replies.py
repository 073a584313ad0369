"""How the service answers over HTTP: a JSON document, or a refusal in one line
(``{"error": "<why>"}``), whether a route, an exception handler or the gate answers."""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import Response


def json_response(doc: Any, status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    """``doc`` as JSON, with ``status`` and ``headers``."""
    return Response(json.dumps(doc), status_code=status, media_type="application/json",
                    headers=headers)


def error_response(status: int, message: str, close: bool = False,
                   headers: dict[str, str] | None = None) -> Response:
    """``{"error": message}`` with ``headers``; ``close``: and the connection is closed after
    it (the rest of a body not read would otherwise be read as the next request)."""
    headers = {**(headers or {}), **({"connection": "close"} if close else {})}
    return json_response({"error": message}, status, headers or None)
