"""The plain JSON fields of a saved learner's document, each checked: a field that cannot be
accepted is a :class:`Refused` error naming it (``desk.pending.versions[3]``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


class Refused(ValueError):
    """A field of a saved learner that cannot be loaded; the message names it."""


# -- plain JSON fields -----------------------------------------------------------------------
def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def doc_object(node: Any, field: str, keys: Iterable[str]) -> dict[str, Any]:
    """``node`` as a JSON object with exactly ``keys``."""
    keys = tuple(keys)
    if not isinstance(node, dict):
        raise Refused(f"{field} must be an object with keys {', '.join(keys)}, got "
                      f"{show(node)}")
    for key in keys:
        if key not in node:
            raise Refused(f"{field} is missing {key!r}")
    extra = sorted(set(node) - set(keys))
    if extra:
        raise Refused(f"{field} has an unknown key {extra[0]!r}")
    return node


def doc_list(node: Any, field: str) -> list[Any]:
    if not isinstance(node, list):
        raise Refused(f"{field} must be a list, got {show(node)}")
    return node


def doc_int(value: Any, field: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise Refused(f"{field} must be an integer >= {low}, got {show(value)}")
    return value


def doc_bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise Refused(f"{field} must be true or false, got {show(value)}")
    return value


def doc_real(value: Any, field: str, low: float = -math.inf, high: float = math.inf,
          open_low: bool = False) -> float:
    """A finite number in [low, high] (or (low, high]) as a float."""
    try:
        number = float(value) if not isinstance(value, bool | str) else math.nan
    except (TypeError, OverflowError):
        number = math.nan
    if not (math.isfinite(number) and low <= number <= high and not (open_low and number == low)):
        bounds = "" if low == -math.inf and high == math.inf else \
            f" in {'(' if open_low else '['}{low:g}, {high:g}]"
        raise Refused(f"{field} must be a finite number{bounds}, got {show(value)}")
    return number


def doc_id(value: Any, field: str) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise Refused(f"{field} must be an integer or a string (a decision id), got "
                      f"{show(value)}")
    return value
