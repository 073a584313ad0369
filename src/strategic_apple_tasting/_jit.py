"""Numba set-up shared by every compiled part of the package: how functions are compiled, and
dispatch on a state's type.

* **Compiling.** :func:`njit` compiles with the package's options (:data:`JIT`), cached in the
  package's own cache (:mod:`._jit_cache`, which keys each entry on what the function can
  reach); :data:`NO_NRT` compiles without numba's reference counting; :func:`compiled_for` is
  a dispatcher's implementation for given argument types, called without numba's dispatch.
* **Dispatch on a state's type.** Compiled code calls ``learner_policy(state, ...)`` and the
  implementation is chosen, at compile time, by the class of the namedtuple ``state``. Modules
  register their implementations in tables (dicts), so the engine never names a learner
  (:func:`dispatch_on_class`).

This module and :mod:`._jit_cache` are the only two that use numba's internals.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import numba
from numba.core import types
from numba.extending import overload

from ._jit_cache import StampedCache

#: Compile without numba's reference counting (its NRT): ``njit(**NO_NRT)``. Not public API
#: (numba's ``_nrt`` flag): the engine's loop and the best-response search use it, because the
#: NRT's increments and decrements around inlined array arguments cost more than half of a
#: round (``engine/kernel.py``), and such a function cannot allocate (the compiler refuses).
NO_NRT: dict[str, Any] = {"_nrt": False}

# numba's kernels behind Generator.integers (not public API), which the lazily weighted
# experts call directly (``learners/lazy_experts.py``, ``_axis_index``): the one place they
# are imported; a numba that moves them leaves them None, and the experts use rng.integers.
try:
    from numba.np.random.generator_core import next_uint32
    from numba.np.random.random_methods import (
        bounded_lemire_uint64,
        buffered_bounded_lemire_uint32,
    )
except ImportError:  # pragma: no cover - a numba that moved them
    next_uint32 = bounded_lemire_uint64 = buffered_bounded_lemire_uint32 = None

#: Options for every compiled function of the package. Functions are compiled once each and
#: called (``inline="never"``), except the few on every round's path, which say
#: ``@njit(inline="always")``: the game's score, agents' responses and context draws, and the
#: phase-scheduled OLS kernels of SA-OLS and ETC. Inlining everything at numba's level compiled
#: SA-OLS's loop in 18.7 s against 11.4 s now, for the same throughput (0.23 of the draw-only
#: floor at d = 5, `benchmarks/RESULTS.md`); inlining nothing compiled it in 4.1 s but ran at
#: 0.19.
JIT = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy", "inline": "never"}


def njit(func: Callable | None = None, **overrides: Any) -> Any:
    """Compile ``func`` with the package's options (cached, releases the GIL, strict IEEE
    math), some overridden (``@njit(inline="never")``); its cache keys include the source of
    classes outside the package that it is compiled for (see :class:`StampedCache`)."""
    if func is None:
        return lambda f: njit(f, **overrides)
    options = {**JIT, **overrides}
    cache = options.pop("cache")
    dispatcher = numba.njit(**options)(func)
    if cache:  # what Dispatcher.enable_caching does, with the stamped keys
        try:
            dispatcher._cache = StampedCache(dispatcher.py_func)
        except RuntimeError:  # no file to cache beside (`python -c`): compiled each process
            pass
    return dispatcher


def compiled_for(dispatcher: Any, *args: Any) -> Callable:
    """The compiled implementation of ``dispatcher`` for the types of ``args`` (compiled, or
    loaded from the cache, if it is not yet): called directly, it skips numba's dispatch, whose
    typing of a ``NamedTuple`` argument (an agent or context model) costs more than a small
    kernel's run.

    The implementation takes arguments of exactly these types: a caller keeps one per types it
    passes (arrays it makes itself, C-contiguous float64, and the same model), as the Python
    side of the game does per instance.

    Examples
    --------
    >>> import numpy as np
    >>> add = njit(lambda a, b: a + b)
    >>> fast = compiled_for(add, 1.0, 2.0)
    >>> fast(3.0, 4.0)
    7.0
    """
    from numba.core.typing.typeof import Purpose, typeof

    signature = tuple(typeof(a, Purpose.argument) for a in args)
    return dispatcher.compile(signature)


#: Every compiled-only function :func:`dispatch_on_class` made: (name, parameters, table), for
#: the tests' check that the package's inlined implementations are handed to numba directly.
DISPATCHED: list[tuple[str, tuple[str, ...], dict[type, Callable]]] = []


def dispatch_on_class(name: str, params: tuple[str, ...], table: dict[type, Callable],
                      doc: str, default: Callable | None = None) -> Callable:
    """A compiled-only function ``name(*params)`` that calls ``table[C]``, where C is the class
    of its first argument (a namedtuple: a learner's state, an agent or context model),
    chosen at compile time and inlined (``default`` for a class not in the table, if given).
    The one dispatch mechanism of the package: modules fill ``table`` and compiled code calls
    the function, never naming an implementation.

    numba matches an overload to its stub by parameter names, so both are made for ``params``.
    Called from Python, the function raises ``NotImplementedError``.

    Examples
    --------
    >>> from typing import NamedTuple
    >>> class Half(NamedTuple):
    ...     scale: float
    >>> SCALE = {}
    >>> scaled = dispatch_on_class("scaled", ("model", "x"), SCALE, "x scaled by the model.")
    >>> SCALE[Half] = njit(lambda model, x: model.scale * x)
    >>> njit(lambda m, x: scaled(m, x))(Half(0.5), 3.0)
    1.5
    """
    args = ", ".join(params)
    stub_code = (f"def {name}({args}):\n"
                 f"    raise NotImplementedError({name!r} ' is compiled-only')\n")
    scope: dict[str, Any] = {"table": table, "state_class": state_class, "default": default,
                             "inlined_body": _inlined_body, "params": params}
    exec(stub_code, scope)  # the stub's parameters must be these names
    stub = scope[name]
    stub.__doc__ = doc
    stub.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)
    exec(f"def typer({args}):\n"
         f"    impl = table.get(state_class({params[0]}), default)\n"
         f"    if impl is None:\n"
         f"        return None\n"
         f"    body = inlined_body(impl, params)\n"
         f"    if body is not None:\n"
         f"        return body\n"
         f"    return lambda {args}: impl({args})\n", scope)
    overload(stub, inline="always")(scope["typer"])
    DISPATCHED.append((name, params, table))
    return stub


def _inlined_body(impl: Any, params: tuple[str, ...]) -> Callable | None:
    """For :func:`dispatch_on_class`: ``impl``'s Python function when numba may inline it in
    place of the call (compiled ``inline="always"``, with the stub's parameter names
    ``params``), else None (it is called through a one-line function). Inlined either way, the
    code is the same, but typing the one-line function and inlining the implementation into it
    first was a fifth of SA-OLS's part of ``sat compile`` (262 such functions)."""
    if getattr(impl, "targetoptions", {}).get("inline") != "always":
        return None
    function = impl.py_func
    return function if tuple(inspect.signature(function).parameters) == params else None


def state_class(state_type: types.Type) -> type | None:
    """The Python namedtuple class behind a numba tuple type, or ``None``."""
    if isinstance(state_type, types.BaseNamedTuple):
        return state_type.instance_class
    return None
