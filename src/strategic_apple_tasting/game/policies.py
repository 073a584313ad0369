"""Policies: the rule a principal publishes, and how it is evaluated.

Most rules are **linear thresholds**: accept iff ⟨β, x'⟩ ≥ c. Every such decision in the package,
by a learner or inside the simulation, goes through :func:`score` so that an agent's landing point
and the learner's test see the same arithmetic.

A learner may instead publish a **general rule**: accept iff g(x') ≥ 0 for a compiled function g
of its state (LinUCB's optimistic rule is one). Such a learner registers, for its state class,
``rule(state, z, grad, need_grad) -> g(z)`` in :data:`RULES` (writing ∇g(z) into ``grad`` when
``need_grad``); compiled code evaluates it through :func:`rule_value`, dispatched on the state's
class, so the game evaluates a learner's rule without importing any learner. In Python the rule
is a :class:`GeneralRule`, holding a copy of the state it was published from.

A plain-Python learner publishes a general rule from a Python function g
(:meth:`GeneralRule.from_function`): its state is a :class:`FunctionRuleState`, a handle into a
table of Python functions, and its registered ``rule`` calls back into Python (numba's object
mode) from the same compiled numerical best response that answers compiled rules. One search
algorithm answers both.
"""

from __future__ import annotations

import copy
import ctypes
import itertools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numba
import numpy as np

from .._jit import NO_NRT, dispatch_on_class, njit

#: Relative width of the band above a threshold in which a learner refuses to call a point clean.
#: A lazy mover lands within a few ulps of the boundary (DESIGN §2, "Floating point"); 1e-9 of the
#: scale of the score is far above that rounding error and far below any statistical effect.
CLEAN_RTOL = 1e-9


@njit(inline="always")
def score(beta, x):
    """⟨β, x⟩, summed in index order (the one dot product of the package)."""
    s = 0.0
    for i in range(beta.shape[0]):
        s += beta[i] * x[i]
    return s


@njit(inline="always")
def norm(beta):
    """‖β‖₂."""
    s = 0.0
    for i in range(beta.shape[0]):
        s += beta[i] * beta[i]
    return math.sqrt(s)


@njit(inline="always")
def accepts(beta, threshold, x):
    """The decision of policy (β, c) on an observed context: ⟨β, x⟩ ≥ c."""
    return score(beta, x) >= threshold


@njit(inline="always")
def clean_above(beta, threshold, x, margin):
    """Whether an accepted x can be certified unmoved: strictly above c + margin, with room.

    ``margin`` is the model's own band (0 for lazy agents, γ‖β‖ for trembling hands); the extra
    ``CLEAN_RTOL`` band guarantees that no rounding of a landing point passes the test.
    """
    s = score(beta, x)
    scale = abs(threshold) + norm(beta) * norm(x) + 1e-300
    return s > threshold + margin + CLEAN_RTOL * scale


@dataclass(frozen=True, eq=False)
class LinearThreshold:
    """A published policy: accept iff ⟨β, x'⟩ ≥ threshold.

    Accept-all and reject-all are β = 0 with threshold −1 and +1.

    Examples
    --------
    >>> import numpy as np
    >>> rule = LinearThreshold(beta=np.array([1.0, 0.0]), threshold=0.2)
    >>> rule.accepts(np.array([0.3, 5.0]))
    True
    """

    beta: np.ndarray
    threshold: float
    probability: float = 1.0  # chance the learner drew this policy (randomized learners)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinearThreshold):
            return NotImplemented
        return (np.array_equal(self.beta, other.beta) and self.threshold == other.threshold
                and self.probability == other.probability)

    __hash__ = None  # type: ignore[assignment]  (holds an array)

    def accepts(self, x: np.ndarray) -> bool:
        return bool(accepts(np.asarray(self.beta, float), float(self.threshold),
                            np.asarray(x, float)))


#: Rule-state class → compiled ``rule(state, z, grad, need_grad) -> g(z)``; accept iff g ≥ 0.
RULES: dict[type, Callable] = {}


rule_value = dispatch_on_class(
    "rule_value", ("rule", "z", "grad", "need_grad"), RULES,
    "g(z) of a general rule (its state), ∇g(z) into ``grad`` if ``need_grad`` (compiled-only; "
    "call GeneralRule.value() from Python).")


class FunctionRuleState(NamedTuple):
    """The compiled side of a rule given by a Python function: a key of :data:`_FUNCTIONS`."""

    handle: int


#: Handle → (g, ∇g or None) of every live rule made by GeneralRule.from_function.
_FUNCTIONS: dict[int, tuple[Callable, Callable | None]] = {}
_HANDLES = itertools.count(1)
#: Relative step of the central differences that stand in for a missing gradient.
GRADIENT_STEP = 1e-6


def central_differences(values: Callable[[np.ndarray], np.ndarray], z: np.ndarray,
                        step: float = GRADIENT_STEP) -> np.ndarray:
    """∇g(z) by central differences (steps ``step``·max(1, |z_i|)), all 2d points given to
    ``values`` at once (rows), so a rule that evaluates in batches makes one call.

    Examples
    --------
    >>> central_differences(lambda zs: (zs ** 2).sum(axis=1), np.array([1.0, -2.0])).round(6)
    array([ 2., -4.])
    """
    d = z.shape[0]
    h = step * np.maximum(1.0, np.abs(z))
    points = np.repeat(z[None, :], 2 * d, axis=0)
    points[np.arange(d), np.arange(d)] += h
    points[d + np.arange(d), np.arange(d)] -= h
    got = np.asarray(values(points), dtype=float)
    return (got[:d] - got[d:]) / (2.0 * h)


def _call_function(handle: int, z: np.ndarray, grad: np.ndarray, need_grad: bool) -> float:
    """g(z) of a Python rule (and ∇g(z) into ``grad``), called from compiled code."""
    g, dg = _FUNCTIONS[handle]
    value = _checked_value(g, z)
    if need_grad:
        if dg is not None:
            got = np.asarray(dg(z.copy()), dtype=float)
            if got.shape != z.shape or not np.all(np.isfinite(got)):
                raise ValueError(f"the rule's gradient must return {z.shape[0]} finite "
                                 f"numbers, got {got!r}")
            grad[:] = got
        else:
            grad[:] = central_differences(
                lambda points: [_checked_value(g, p) for p in points], z)
    return value


def _checked_value(g: Callable, z: np.ndarray) -> float:
    value = g(z.copy())  # a copy: the search reuses its buffers, a rule may keep what it gets
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"the rule's function must return a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"the rule's function must return a finite number, got {value!r} "
                         f"at {z.tolist()!r}")
    return value


@njit(nogil=False, inline="never", **NO_NRT)  # object mode cannot be inlined
def _function_rule(rule, z, grad, need_grad):
    # Object mode for the call only: the search around it stays compiled. (Only arrays and
    # plain scalars cross into object mode.)
    handle = rule.handle
    need = bool(need_grad)
    # Arrays made inside code compiled without the NRT cannot be boxed: pass their addresses.
    n, z_at, z_step, grad_at, grad_step = (z.shape[0], z.ctypes.data, z.strides[0],
                                           grad.ctypes.data, grad.strides[0])
    with numba.objmode(value="float64"):
        value = _call_function(handle, _view(z_at, z_step, n), _view(grad_at, grad_step, n),
                               need)
    return value


def _view(address: int, step: int, n: int) -> np.ndarray:
    """The float64 vector of ``n`` elements ``step`` bytes apart at ``address`` (no copy)."""
    span = (ctypes.c_char * ((n - 1) * step + 8)).from_address(address)
    return np.ndarray((n,), dtype=np.float64, buffer=span, strides=(step,))


RULES[FunctionRuleState] = _function_rule


def _same(a: Any, b: Any) -> bool:
    """Equality of (nested tuples of) arrays and scalars, arrays compared element-wise."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.dtype == b.dtype and np.array_equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b, strict=True)))
    return type(a) is type(b) and a == b


@dataclass(frozen=True, eq=False)
class GeneralRule:
    """A published rule that is not a linear threshold: accept iff g(x') ≥ 0.

    ``state`` is a copy of the learner's state when it published the rule (so the rule stays
    what was published whatever the learner learns later); g is the compiled function that
    the state's class registered in :data:`RULES`. ``beta`` and ``threshold`` are the rule's
    linear part (for LinUCB, the rule without its exploration bonus): agents' numerical best
    response starts from it, and the learner's update receives it; they do not decide.

    Build it with :meth:`publish` (a learner's ``policy()`` does).

    Examples
    --------
    LinUCB before any data, with r0 = 0.5, accepts iff ‖x‖ ≥ 0.5:

    >>> from strategic_apple_tasting.learners import LinUCB
    >>> rule = LinUCB(r0=0.5, feedback="apple").reset(2).policy()
    >>> rule.accepts([0.3, 0.3]), rule.accepts([0.3, 0.4]), rule.value([0.3, 0.4])
    (False, True, 0.0)
    """

    state: Any
    beta: np.ndarray
    threshold: float
    probability: float = 1.0
    #: g and ∇g of a rule made by :meth:`from_function` (None for a compiled learner's rule).
    function: Callable | None = field(default=None, repr=False)
    derivative: Callable | None = field(default=None, repr=False)
    #: A compiled rule state whose accepted set lies inside the function's, by a margin wider
    #: than their rounding apart (:meth:`from_function`'s ``twin``): agents search with it.
    twin: Any = field(default=None, repr=False)

    @classmethod
    def from_function(cls, g: Callable[[np.ndarray], float], beta: Any, threshold: float,
                      gradient: Callable[[np.ndarray], np.ndarray] | None = None,
                      probability: float = 1.0, twin: Any = None) -> GeneralRule:
        """The rule "accept iff g(x') ≥ 0" for a Python function ``g`` (a plain-Python
        learner's non-linear rule).

        ``beta`` and ``threshold`` are a linear approximation of the rule: agents' numerical
        best response starts its search from β. ``gradient(z)`` gives ∇g(z); without it, central
        differences stand in (2d more evaluations of g per gradient). g must be a function of
        z only, fixed for as long as the rule is in force: a randomized learner draws its
        sample before making the rule, not inside g.

        ``twin``, a compiled rule state (its class in :data:`RULES`), is g computed in compiled
        code from the parameters g reads, less a margin wider than the two computations'
        rounding apart, so that it never accepts where g rejects: agents answer the twin
        (compiled, in closed form where it has one), and a mover whose landing point g
        rejects all the same is answered with g itself (:func:`~.best_response.respond_to_rule`).
        The decisions are g's.

        Examples
        --------
        >>> import numpy as np
        >>> rule = GeneralRule.from_function(lambda z: float(z @ z) - 0.25, [1.0, 0.0], 0.5)
        >>> rule.accepts(np.array([0.3, 0.3])), rule.accepts(np.array([0.3, 0.4]))
        (False, True)
        """
        if not callable(g):
            raise ValueError(f"g must be a callable, got {g!r}")
        if gradient is not None and not callable(gradient):
            raise ValueError(f"gradient must be a callable or None, got {gradient!r}")
        beta = np.array(beta, dtype=float)
        if beta.ndim != 1 or not np.all(np.isfinite(beta)):
            raise ValueError(f"beta must be a finite vector, got {beta!r}")
        threshold = float(threshold)
        if not math.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number, got {threshold!r}")
        if twin is not None and type(twin) not in RULES:
            raise ValueError(f"twin must be a compiled rule state (its class in RULES), got "
                             f"{type(twin).__name__}")
        handle = next(_HANDLES)
        _FUNCTIONS[handle] = (g, gradient)
        rule = cls(state=FunctionRuleState(handle), beta=beta, threshold=threshold,
                   probability=float(probability), function=g, derivative=gradient, twin=twin)
        weakref.finalize(rule, _FUNCTIONS.pop, handle, None)  # the table holds live rules only
        return rule

    def __reduce__(self) -> tuple:
        if self.function is not None:  # a fresh handle in the process that loads it
            return (type(self).from_function,
                    (self.function, self.beta, self.threshold, self.derivative,
                     self.probability, self.twin))
        return (type(self), (self.state, self.beta, self.threshold, self.probability))

    @classmethod
    def publish(cls, state: Any, beta: np.ndarray, threshold: float) -> GeneralRule:
        """The rule of ``state`` as it stands now (the state is copied)."""
        if type(state) not in RULES:
            raise ValueError(f"{type(state).__name__} has no registered rule")
        return cls(state=copy.deepcopy(state), beta=np.array(beta, dtype=float),
                   threshold=float(threshold))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GeneralRule):
            return NotImplemented
        if self.function is not None or other.function is not None:
            same_rule = (self.function == other.function
                         and self.derivative == other.derivative)
        else:
            same_rule = _same(self.state, other.state)
        return (same_rule and np.array_equal(self.beta, other.beta)
                and self.threshold == other.threshold and self.probability == other.probability)

    __hash__ = None  # type: ignore[assignment]  (holds arrays)

    def value(self, x: np.ndarray) -> float:
        """g(x): the rule accepts iff it is ≥ 0."""
        x = np.asarray(x, dtype=float)
        if self.function is not None:
            return _checked_value(self.function, x)
        return float(RULES[type(self.state)](self.state, x, np.empty(len(x)), False))

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """∇g(x)."""
        x = np.asarray(x, dtype=float)
        grad = np.empty(len(x))
        if self.function is not None:
            _call_function(self.state.handle, x, grad, True)
        else:
            RULES[type(self.state)](self.state, x, grad, True)
        return grad

    def accepts(self, x: np.ndarray) -> bool:
        return self.value(x) >= 0.0
