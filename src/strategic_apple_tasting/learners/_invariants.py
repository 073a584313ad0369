"""Checks of a learner's state read from a saved file, before any compiled kernel sees it.

A saved file's arrays arrive with the template's shapes and dtypes (the loader checks those);
what the kernels rely on besides is in the values: counters in range, indices inside arrays,
factors finite. Each compiled learner's ``LearnerKernels.check`` uses these helpers, and each
raises ``ValueError`` naming the field (``state.counts[1]``) and what it must be.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..game.policies import _same
from .budget import BudgetBelief

#: The most rounds a saved counter may hold: no run comes near it, and a count kept below it
#: cannot overflow an int64 as the learner runs on.
MOST_ROUNDS = 2**62


def _at(field: str, index: tuple[int, ...]) -> str:
    return f"{field}[{', '.join(str(int(i)) for i in index)}]" if index else field


def _first(bad: np.ndarray) -> tuple[int, ...]:
    return tuple(np.argwhere(bad)[0]) if bad.ndim else ()


def _value(arr: np.ndarray, index: tuple[int, ...]) -> Any:
    """The element as a Python number (its repr is what a reader expects: 2.0, not
    np.float64(2.0))."""
    return np.asarray(arr)[index].item()


def finite(arr: np.ndarray, field: str) -> None:
    """Every element finite (no NaN, no ±inf)."""
    bad = ~np.isfinite(arr)
    if bad.any():
        index = _first(bad)
        raise ValueError(f"{_at(field, index)} must be finite, got {_value(arr, index)!r}")


def within(arr: Any, field: str, low: float, high: float) -> None:
    """Every element in [low, high] (so not NaN)."""
    arr = np.asarray(arr)
    bad = ~((arr >= low) & (arr <= high))
    if bad.any():
        index = _first(bad)
        raise ValueError(f"{_at(field, index)} must be in [{low:g}, {high:g}], "
                         f"got {_value(arr, index)!r}")


def count(value: Any, field: str, low: int = 0, high: int | None = None) -> int:
    """A counter of an int64 array: an integer in [low, high]."""
    value = int(value)
    if value < low or (high is not None and value > high):
        allowed = (f">= {low}" if high is None else str(low) if low == high
                   else f"in [{low}, {high}]")
        raise ValueError(f"{field} must be {allowed}, got {value}")
    return value


def flag(value: Any, field: str) -> None:
    """A 0/1 flag kept in an int64 array."""
    if int(value) not in (0, 1):
        raise ValueError(f"{field} must be 0 or 1, got {int(value)}")


def upper_triangular(factors: np.ndarray, field: str) -> None:
    """QR factors (the last two axes): finite, and zero below the diagonal, which the Givens
    updates never write."""
    finite(factors, field)
    n = factors.shape[-1]
    below = np.tril(np.ones((n, n), dtype=bool), -1)
    bad = (factors != 0.0) & below
    if bad.any():
        index = _first(bad)
        raise ValueError(f"{_at(field, index)} must be 0 (below the diagonal of a triangular "
                         f"factor), got {_value(factors, index)!r}")


def fixed(value: Any, template: Any, field: str) -> None:
    """A field the learner's parameters fix (the kernels only read it): equal to the
    template's. A belief that estimates the budget (``delta="estimate"``) is fixed but for what
    it has learned: its histogram and estimate, checked for what the estimator relies on."""
    if (isinstance(template, BudgetBelief) and template.estimating
            and isinstance(value, BudgetBelief)):
        _learned_budget(value, template, field)
        return
    if not _same(value, template):
        raise ValueError(f"{field} must be what the learner's parameters make it "
                         f"({_short(template)}), got {_short(value)}")


def _learned_budget(value: BudgetBelief, template: BudgetBelief, field: str) -> None:
    for name in ("delta", "truthful", "base", "level"):
        fixed(getattr(value, name), getattr(template, name), f"{field}.{name}")
    for name in ("current", "below", "above", "counts", "work", "aux"):
        a, t = getattr(value, name), getattr(template, name)
        if not (isinstance(a, np.ndarray) and a.shape == t.shape and a.dtype == t.dtype):
            raise ValueError(f"{field}.{name} must be an array like {_short(t)}, got "
                             f"{_short(a)}")
    if not all(np.all(np.isfinite(getattr(value, n))) for n in ("current", "below", "above")):
        raise ValueError(f"{field} must hold finite estimates and counts")
    if (value.below < 0).any() or (value.above < 0).any() or (value.counts < 0).any() \
            or value.counts[2] < 1 or not 0.0 <= value.current[0] <= value.delta:
        raise ValueError(f"{field} must hold counts >= 0, a next refresh >= 1 and a δ in "
                         f"force in [0, {value.delta:g}]")


def cached(value: np.ndarray, recomputed: np.ndarray, field: str, source: str) -> None:
    """A cache of a computation the kernels would redo: equal to it, bit for bit."""
    if not np.array_equal(value, recomputed):
        raise ValueError(f"{field} must be what {source} gives (the state says it is "
                         "current), but it differs")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
