"""Context models: how agents' true contexts x_t are drawn (DESIGN §2, "Contexts").

A context model is a small immutable ``NamedTuple`` of its parameters. The same object is the
user-facing configuration and what compiled code receives; compiled code calls
:func:`draw_context`, which dispatches on the model's class through :data:`DRAW_CONTEXT`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from .._jit import njit, state_class


@njit
def _uniform_ball(radius, rng, out):
    # The first d coordinates of a uniform point on the sphere in R^(d+2) are uniform in the
    # d-ball (Voelker, Gosmann & Stewart 2017): d + 2 normals, no u^(1/d), whose pow cost more
    # than the two extra draws.
    d = out.shape[0]
    s = 0.0
    for i in range(d):
        z = rng.standard_normal()
        out[i] = z
        s += z * z
    for _ in range(2):
        z = rng.standard_normal()
        s += z * z
    scale = radius / math.sqrt(s)
    for i in range(d):
        out[i] *= scale


@njit
def _uniform_sphere(radius, rng, out):
    d = out.shape[0]
    s = 0.0
    for i in range(d):
        z = rng.standard_normal()
        out[i] = z
        s += z * z
    scale = radius / math.sqrt(s)
    for i in range(d):
        out[i] *= scale


def _check_radius(radius: float) -> None:
    if not (isinstance(radius, int | float) and math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")


class UniformBall(NamedTuple):
    """Contexts uniform in the d-dimensional ball of radius ``radius`` (the paper's setting).

    Examples
    --------
    >>> UniformBall(radius=1.0).name
    'uniform-ball'
    """

    radius: float = 1.0

    name = "uniform-ball"

    def check(self) -> None:
        _check_radius(self.radius)


class UniformSphere(NamedTuple):
    """Contexts uniform on the sphere surface of radius ``radius``.

    Examples
    --------
    >>> UniformSphere().radius
    1.0
    """

    radius: float = 1.0

    name = "uniform-sphere"

    def check(self) -> None:
        _check_radius(self.radius)


class BoundedRatioMixture(NamedTuple):
    """f = c0·U + (1 − c0)·g: density ratio to the uniform ball at least ``c0`` (`ass:bdr`).

    g is a Gaussian cluster N(center·e₁, scale²·I) projected into the ball of radius ``radius``.

    Examples
    --------
    >>> BoundedRatioMixture(c0=0.5).name
    'mixture'
    """

    c0: float = 0.5
    center: float = 0.5
    scale: float = 0.25
    radius: float = 1.0

    name = "mixture"

    def check(self) -> None:
        _check_radius(self.radius)
        if not (math.isfinite(self.c0) and 0 < self.c0 <= 1):
            raise ValueError(f"c0 must be in (0, 1], got {self.c0!r}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be a finite number > 0, got {self.scale!r}")
        if not math.isfinite(self.center):
            raise ValueError(f"center must be a finite number, got {self.center!r}")


@njit
def _draw_ball(model, rng, out):
    _uniform_ball(model.radius, rng, out)


@njit
def _draw_sphere(model, rng, out):
    _uniform_sphere(model.radius, rng, out)


@njit
def _draw_mixture(model, rng, out):
    if rng.random() < model.c0:
        _uniform_ball(model.radius, rng, out)
        return
    d = out.shape[0]
    s = 0.0
    for i in range(d):
        v = model.scale * rng.standard_normal()
        if i == 0:
            v += model.center
        out[i] = v
        s += v * v
    n = math.sqrt(s)
    if n > model.radius:
        for i in range(d):
            out[i] *= model.radius / n


#: Context model class → compiled draw(model, rng, out). Compiled code reaches it via draw_context.
DRAW_CONTEXT = {UniformBall: _draw_ball, UniformSphere: _draw_sphere,
                BoundedRatioMixture: _draw_mixture}

#: Name (as on the command line) → context model class.
CONTEXTS = {cls.name: cls for cls in DRAW_CONTEXT}


def draw_context(model, rng, out):
    """Draw one true context into ``out`` (callable from compiled code only)."""
    raise NotImplementedError("draw_context is compiled-only; use draw_contexts from Python")


@overload(draw_context, inline="always")
def _draw_context_overload(model, rng, out):
    impl = DRAW_CONTEXT.get(state_class(model))
    if impl is not None:
        return lambda model, rng, out: impl(model, rng, out)
    return None


def draw_contexts(model, d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` contexts as an (n, d) array with the compiled sampler (same stream as the engine).

    Examples
    --------
    >>> draw_contexts(UniformBall(), 3, 2, np.random.default_rng(0)).shape
    (2, 3)
    """
    draw = DRAW_CONTEXT[type(model)]
    out = np.empty((n, d))
    for i in range(n):
        draw(model, rng, out[i])
    return out
