"""What a learner takes through its API: features and outcomes no larger than its input bound.

Every entry of the per-round and decision API (``act``, ``update``, ``decide``, ``record``,
``report``) checks its features and outcome here before any kernel sees them, and refuses in one
line naming the field, the value and the bound (DESIGN §5, docs/reliability.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: The largest magnitude of a feature or an outcome a learner takes through its API
#: (:attr:`.LearnerTags.input_bound`; ``r0`` and ``delta`` are held to it too). Every sum the
#: learners keep stays finite with room to spare: a sum of squares over the engine's longest run
#: (10¹² rounds) and the CLI's largest dimension (10⁵) is at most 10¹⁷·(10⁹)² = 10³⁵, and a
#: product of a coefficient (at most ``least_squares.MAX_COEF`` = 10¹⁰⁰) with 10⁵ features is at
#: most 10¹¹⁴. Features and outcomes this large are in the wrong unit anyway (10⁹ cents is ten
#: million dollars): scale them first. Subnormal and tiny values are legal and learned.
INPUT_BOUND = 1e9


def check_bound(name: str, value: float, bound: float) -> float:
    """``value`` (already a finite float), or ``ValueError`` in one line if its magnitude passes
    the learner's input ``bound``."""
    if abs(value) > bound:
        raise ValueError(f"{name} must be at most {bound:g} in magnitude (the learner's input "
                         f"bound), got {value!r}")
    return value


def all_finite(arr: np.ndarray) -> bool:
    """Whether every entry of a float vector is finite: one pass in Python for a short one (a
    finite sum says so; NaN and ±inf make it NaN or infinite), numpy's test otherwise."""
    if arr.shape[0] <= 64 and math.isfinite(sum(arr.tolist())):
        return True
    return bool(np.isfinite(arr).all())


#: What numpy calls the kinds of array it would turn into floats silently or in its own words.
NOT_NUMBERS = {"b": "booleans", "c": "complex numbers", "U": "text", "S": "bytes",
               "O": "Python objects", "M": "dates", "m": "time spans", "V": "raw records"}


def real_array(name: str, x: Any) -> np.ndarray:
    """``x`` as a C-contiguous float array, or ``ValueError`` in one line unless it holds
    integers or floats: numpy would accept booleans as 0 and 1, drop a complex number's
    imaginary part with a warning, and refuse text in its own words, naming no field."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.dtype.kind not in "iuf":
        what = NOT_NUMBERS.get(arr.dtype.kind, f"dtype {arr.dtype}")
        shown = repr(arr.tolist())
        raise ValueError(f"{name} must be numbers (integers or floats), got {what}: "
                         f"{shown if len(shown) <= 60 else shown[:57] + '...'}")
    return np.ascontiguousarray(arr, dtype=float)


def check_vector(name: str, x: Any, d: int, bound: float = INPUT_BOUND) -> np.ndarray:
    """``x`` as a float array of shape (d,), or ``ValueError`` in one line: entries that are not
    numbers, the wrong shape, an entry that is not finite, or one whose magnitude passes
    ``bound``."""
    arr = real_array(name, x)  # compiled kernels take C-contiguous vectors
    if arr.shape != (d,):
        raise ValueError(f"{name} must have shape ({d},), got shape {arr.shape}")
    # One pass in Python is the cheapest test of a short vector (a plain-Python learner's round
    # makes two), and NaN and ±inf fail it too; the entries are looked at only if it fails.
    if not (d <= 64 and sum(map(abs, arr.tolist())) <= bound):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {arr.tolist()!r}")
        big = np.flatnonzero(np.abs(arr) > bound)
        if big.size:
            check_bound(f"{name}[{big[0]}]", float(arr[big[0]]), bound)
    return arr
