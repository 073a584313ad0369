"""Every use of numba's internals is in ``_jit`` (the NRT flag, the integer kernels behind
``Generator.integers``) and ``_jit_cache`` (the cache hooks); these tests fail loudly when a
numba upgrade moves one.
(The cache hooks are guarded in ``tests/engine/test_cache.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
from numba.core.errors import NumbaError

from strategic_apple_tasting import _jit
from strategic_apple_tasting._jit import NO_NRT, njit


def test_the_nrt_flag_still_compiles_without_reference_counting():
    """``_nrt=False`` is honoured: a function without allocation runs, one that allocates is
    refused (if numba ignored the flag, the second would compile)."""
    @njit(cache=False, **NO_NRT)
    def total(x):
        s = 0.0
        for v in x:
            s += v
        return s

    @njit(cache=False, **NO_NRT)
    def fresh(n):
        return np.zeros(n)

    assert total(np.arange(4.0)) == 6.0
    with pytest.raises(NumbaError):
        fresh(3)


def test_the_integer_kernels_are_where_the_experts_expect_them():
    assert _jit.next_uint32 is not None, "numba moved next_uint32: lazy_experts falls back"
    assert _jit.bounded_lemire_uint64 is not None
    assert _jit.buffered_bounded_lemire_uint32 is not None


def test_no_other_module_imports_numba_internals():
    from pathlib import Path

    root = Path(_jit.__file__).parent
    for path in root.rglob("*.py"):
        if path.relative_to(root).as_posix() in ("_jit.py", "_jit_cache.py"):
            continue
        text = path.read_text()
        for internal in ("numba.core.caching", "numba.np.random", "_nrt"):
            assert internal not in text, f"{path.relative_to(root)} uses {internal}"


def test_dispatch_inlines_an_always_inlined_implementation_without_a_one_line_caller():
    """``dispatch_on_class`` hands numba an ``inline="always"`` implementation's own function
    when its parameters are the stub's (the same code, typed once less), and calls any other
    through a one-line function; both compute what the implementation computes, and the
    control (another parameter name) takes the other path."""
    from typing import NamedTuple

    class Twice(NamedTuple):
        scale: float

    class Thrice(NamedTuple):
        scale: float

    class Called(NamedTuple):
        scale: float

    table: dict = {}
    scaled = _jit.dispatch_on_class("scaled", ("model", "x"), table, "x scaled.")
    table[Twice] = njit(inline="always", cache=False)(lambda model, x: model.scale * x)
    table[Thrice] = njit(inline="always", cache=False)(lambda m, x: m.scale * x + 0.0)
    table[Called] = njit(cache=False)(lambda model, x: model.scale * x)
    def body(impl):
        return _jit._inlined_body(impl, ("model", "x"))

    assert body(table[Twice]) is table[Twice].py_func
    assert body(table[Thrice]) is None and body(table[Called]) is None  # the controls
    run = njit(cache=False)(lambda m, x: scaled(m, x))
    assert (run(Twice(2.0), 3.0), run(Thrice(3.0), 3.0), run(Called(0.5), 3.0)) == (6.0, 9.0, 1.5)


def test_every_inlined_implementation_of_the_package_is_handed_to_numba_directly():
    """A package implementation compiled ``inline="always"`` has its stub's parameter names, so
    no one-line caller is typed for it (a renamed parameter would silently cost compile time:
    SA-OLS's policy and update did, a sixth of its part of ``sat compile``)."""
    from strategic_apple_tasting.learners import LEARNERS, learner_class

    for name in LEARNERS:  # every kernel module registers its implementations
        learner_class(name)
    inlined = 0
    for name, params, table in _jit.DISPATCHED:
        for cls, impl in table.items():
            if getattr(impl, "targetoptions", {}).get("inline") != "always":
                continue
            if not impl.py_func.__module__.startswith("strategic_apple_tasting."):
                continue
            assert _jit._inlined_body(impl, params) is impl.py_func, (name, cls, impl)
            inlined += 1
    assert inlined >= 8  # the agents', contexts', rewards' and SA-OLS's at least
