"""A learner's parameters (and a published rule's document) as plain JSON, and back.

What a saved learner's ``meta.json``, a published rule's document and a decision service's
configuration write of a learner's hyperparameters: numbers, strings and lists as themselves,
arrays and agent models tagged so that :func:`from_jsonable` rebuilds them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The tag of an agent model's document.
AGENTS_TAG = "__agents__"
#: The tag of an array's document.
ARRAY_TAG = "__array__"
#: dtypes a parameter's array may have (numbers and booleans: nothing numpy would treat as
#: Python objects).
PARAM_DTYPES = "biuf"


def jsonable(value: Any) -> Any:
    """``value`` (a learner's parameters) as plain JSON: agent models and arrays are tagged so
    that :func:`from_jsonable` rebuilds them."""
    from ..game.agents import AGENTS

    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return {ARRAY_TAG: value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, tuple) and type(value) in AGENTS.values():
        return {AGENTS_TAG: type(value).name,
                "fields": {k: jsonable(v) for k, v in value._asdict().items()}}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    raise ValueError(f"parameter value {value!r} ({type(value).__name__}) cannot be written "
                     "as JSON")


def from_jsonable(value: Any) -> Any:
    """The inverse of :func:`jsonable`; ``ValueError`` in one line for a tagged array or agent
    model it cannot rebuild (arrays of numbers and booleans only)."""
    from ..game.agents import AGENTS

    if isinstance(value, dict):
        if ARRAY_TAG in value:
            dtype = value.get("dtype")
            try:
                kind = np.dtype(dtype).kind if isinstance(dtype, str) else None
            except TypeError:
                kind = None
            if set(value) != {ARRAY_TAG, "dtype"} or kind is None or kind not in PARAM_DTYPES:
                raise ValueError(f"an array must be {{{ARRAY_TAG!r}: [...], 'dtype': a numeric "
                                 f"dtype}}, got {_short(value)}")
            try:
                return np.asarray(value[ARRAY_TAG], dtype=dtype)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f"an array of dtype {dtype} cannot hold {_short(value[ARRAY_TAG])}"
                                 f" ({exc})") from None
        if AGENTS_TAG in value:
            name, fields = value[AGENTS_TAG], value.get("fields")
            if not isinstance(name, str) or name not in AGENTS:
                raise ValueError(f"agent model {name!r} is unknown; allowed: "
                                 f"{', '.join(AGENTS)}")
            model = AGENTS[name]
            if set(value) != {AGENTS_TAG, "fields"} or not isinstance(fields, dict) \
                    or not set(fields) <= set(model._fields):
                raise ValueError(f"agent model {name!r} has fields {', '.join(model._fields)}, "
                                 f"got {_short(fields)}")
            return model(**{k: from_jsonable(v) for k, v in fields.items()})
        return {k: from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    return value


def _short(value: Any) -> str:
    """``repr(value)`` on one line, at most 100 characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 100 else text[:97] + "..."
