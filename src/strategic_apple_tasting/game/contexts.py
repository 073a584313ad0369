"""Context models: how agents' true contexts x_t are drawn (DESIGN §2, "Contexts").

A context model is a small immutable ``NamedTuple`` of its parameters. Compiled code receives
every built-in model as one type, :class:`ContextsCore` (the model's ``compiled()``), and calls
:func:`draw_context` (with the round t, for sequences), which dispatches on that class through
:data:`DRAW_CONTEXT`; ``kind`` chooses the model's draw at run time, so the engine's loop is
compiled once for every context model, not once for each. A model whose contexts depend on the
game's θ (the built-in adversarial sequence) has ``for_instance(instance)``, which returns the
model to draw from.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import NO_NRT, dispatch_on_class, njit


@njit(inline="always")
def _on_sphere(radius, hidden, rng, out):
    """The first d coordinates of a uniform point on the sphere of R^(d + hidden)."""
    d = out.shape[0]
    s = 0.0
    for i in range(d + hidden):
        z = rng.standard_normal()
        if i < d:
            out[i] = z
        s += z * z
    scale = radius / math.sqrt(s)
    for i in range(d):
        out[i] *= scale


@njit(inline="always")
def _uniform_ball(radius, rng, out):
    # The first d coordinates of a uniform point on the sphere in R^(d+2) are uniform in the
    # d-ball (Voelker, Gosmann & Stewart 2017): d + 2 normals, no u^(1/d), whose pow cost more
    # than the two extra draws.
    _on_sphere(radius, 2, rng, out)


@njit(inline="always")
def _uniform_sphere(radius, rng, out):
    _on_sphere(radius, 0, rng, out)


def _settings(model) -> dict:
    return {k: float(v) for k, v in model._asdict().items()
            if isinstance(v, int | float) and not isinstance(v, bool)}


def _check_radius(radius: float) -> None:
    if not (isinstance(radius, int | float) and math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")

#: ``ContextsCore.kind`` of each model drawn by compiled code.
BALL, SPHERE, MIXTURE, EMPIRICAL, SEQUENCE, DATA = 0, 1, 2, 3, 4, 5


class ContextsCore(NamedTuple):
    """A context model as compiled code receives it (``model.compiled()``): one type for every
    built-in model and a data set's rows (:mod:`.data`), ``kind`` choosing the draw. Fields a
    model does not have are 0 (``points`` an empty matrix, ``cumulative`` and ``order`` empty).

    Examples
    --------
    >>> core = UniformSphere(radius=2).compiled()
    >>> core.kind == SPHERE, core.radius, core.points.shape
    (True, 2.0, (0, 0))
    """

    kind: int
    radius: float
    c0: float
    center: float
    scale: float
    points: np.ndarray  # the rows of a data set or a sequence, (n, d); (0, 0) otherwise
    cycle_start: int
    cumulative: np.ndarray  # a data set's cumulative draw probabilities (empty: uniform)
    order: np.ndarray  # int64: a data set's rows to play in turn (empty: draw)


def _core(kind: int, radius: float = 0.0, c0: float = 0.0, center: float = 0.0,
          scale: float = 0.0, points=None, cycle_start: int = 0, cumulative=None,
          order=None) -> ContextsCore:
    matrix = np.zeros((0, 0)) if points is None else np.array(points, dtype=float, order="C")
    weights = np.zeros(0) if cumulative is None else np.array(cumulative, dtype=float)
    turns = (np.zeros(0, dtype=np.int64) if order is None
             else np.array(order, dtype=np.int64))
    return ContextsCore(kind, float(radius), float(c0), float(center), float(scale), matrix,
                        int(cycle_start), weights, turns)


class UniformBall(NamedTuple):
    """Contexts uniform in the d-dimensional ball of radius ``radius`` (the paper's setting).

    Examples
    --------
    >>> UniformBall(radius=1.0).name
    'uniform-ball'
    """

    radius: float = 1.0

    name = "uniform-ball"
    settings = _settings

    def check(self) -> None:
        _check_radius(self.radius)

    def compiled(self) -> ContextsCore:
        """This model as compiled code receives it."""
        return _core(BALL, radius=self.radius)


class UniformSphere(NamedTuple):
    """Contexts uniform on the sphere surface of radius ``radius``.

    Examples
    --------
    >>> UniformSphere().radius
    1.0
    """

    radius: float = 1.0

    name = "uniform-sphere"
    settings = _settings

    def check(self) -> None:
        _check_radius(self.radius)

    def compiled(self) -> ContextsCore:
        """This model as compiled code receives it."""
        return _core(SPHERE, radius=self.radius)


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
    settings = _settings

    def check(self) -> None:
        _check_radius(self.radius)
        if not (math.isfinite(self.c0) and 0 < self.c0 <= 1):
            raise ValueError(f"c0 must be in (0, 1], got {self.c0!r}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be a finite number > 0, got {self.scale!r}")
        if not math.isfinite(self.center):
            raise ValueError(f"center must be a finite number, got {self.center!r}")

    def compiled(self) -> ContextsCore:
        """This model as compiled code receives it."""
        return _core(MIXTURE, radius=self.radius, c0=self.c0, center=self.center,
                     scale=self.scale)


class EmpiricalContexts(NamedTuple):
    """Rows of a data set, standardized and scaled into the ball, drawn with replacement.

    Build it with :meth:`from_data`: each column is centred and scaled to unit variance
    (constant columns become 0), then all rows are scaled by one factor so the longest has
    norm ``radius``.

    Examples
    --------
    >>> import numpy as np
    >>> model = EmpiricalContexts.from_data(np.random.default_rng(0).normal(size=(50, 3)))
    >>> model.rows.shape, bool(np.linalg.norm(model.rows, axis=1).max() <= 1.0 + 1e-12)
    ((50, 3), True)
    """

    rows: np.ndarray
    radius: float = 1.0

    name = "empirical"
    settings = _settings

    @classmethod
    def from_data(cls, data, radius: float = 1.0) -> EmpiricalContexts:
        _check_radius(radius)
        x = np.asarray(data, dtype=float)
        if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
            raise ValueError(f"data must be a 2-D array with at least one row and column, "
                             f"got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("data must be finite (no NaN or infinity)")
        sd = x.std(axis=0)
        z = np.where(sd > 0, (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)
        longest = np.linalg.norm(z, axis=1).max()
        rows = z * (radius / longest) if longest > 0 else z
        return cls(rows=np.ascontiguousarray(rows), radius=float(radius))

    @property
    def dimension(self) -> int:
        return int(self.rows.shape[1])

    def check(self) -> None:
        _check_radius(self.radius)
        _check_points("rows", self.rows)

    def compiled(self) -> ContextsCore:
        """This model as compiled code receives it."""
        return _core(EMPIRICAL, radius=self.radius, points=self.rows)


class ContextSequence(NamedTuple):
    """An oblivious adversary's sequence: x_t = points[t − 1], then cycling from ``cycle_start``.

    Examples
    --------
    >>> import numpy as np
    >>> seq = ContextSequence(points=np.eye(3)[:, :2], cycle_start=1)
    >>> draw_contexts(seq, 2, 5, np.random.default_rng(0)).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """

    points: np.ndarray
    cycle_start: int = 0

    name = "sequence"
    settings = _settings

    @property
    def dimension(self) -> int:
        return int(self.points.shape[1])

    def check(self) -> None:
        _check_points("points", self.points)
        n = self.points.shape[0]
        if not (isinstance(self.cycle_start, int | np.integer) and 0 <= self.cycle_start < n):
            raise ValueError(f"cycle_start must be an integer in [0, {n - 1}], "
                             f"got {self.cycle_start!r}")

    def compiled(self) -> ContextsCore:
        """This model as compiled code receives it."""
        return _core(SEQUENCE, points=self.points, cycle_start=self.cycle_start)


class GreedyTrap(NamedTuple):
    """A built-in oblivious sequence on which greedy learners (SA-OLS) have linear regret.

    Knowing θ = θ1 − θ0 (an oblivious adversary may), it shows, in the d warm-up rounds, the
    points ``warmup_scale``·e_i, whose rewards are mostly noise, so the warm-up estimate points
    nearly anywhere. From then on it alternates a good point g and a bad point b, so that
    accepting everyone and rejecting everyone both have linear regret:

    * d ≥ 2 (r0 = 0): g = m(u + w)/√2 and b = m(−u + w)/√2, where u = θ/‖θ‖, w ⟂ u and
      m = ``margin``: ⟨θ, g⟩ > 0 > ⟨θ, b⟩ and g ⟂ b. A greedy learner whose warm-up estimate
      has ⟨θ̂, g⟩ < 0 rejects g for ever (g cannot game its way over a shifted threshold) and
      never learns about g: learning from b only moves θ̂ along b.
    * d = 1 (needs r0 > 0, apple tasting: with r0 = 0 only the sign of θ̂ matters, and a bad
      point of the other sign would teach a wrong-signed learner its mistake): g and b lie on
      u, with gaps ⟨θ, g⟩ − r0 = m and ⟨θ, b⟩ − r0 = −r0/2 (b is between 0 and r0, so no
      learner of either sign learns from it). A warm-up estimate θ̂ below r0/(⟨u, g⟩ − δ), or
      negative, publishes a threshold g cannot reach, and the learner rejects both for ever.

    The trap springs with probability about ½ at small σ, so SA-OLS's expected regret is
    linear (§4's point). Agents do move: g games its way over the rules of many experts of
    EXP3-SAE.

    Examples
    --------
    >>> GreedyTrap().name
    'greedy-trap'
    """

    warmup_scale: float = 0.01
    margin: float = 0.3

    name = "greedy-trap"
    settings = _settings

    def check(self) -> None:
        if not (math.isfinite(self.warmup_scale) and self.warmup_scale > 0):
            raise ValueError(f"warmup_scale must be a finite number > 0, "
                             f"got {self.warmup_scale!r}")
        if not (math.isfinite(self.margin) and 0 < self.margin <= 1):
            raise ValueError(f"margin must be in (0, 1], got {self.margin!r}")

    def check_game(self, game) -> None:
        """Refuse the games the trap is not built for (called by the game)."""
        if game.dimension == 1 and not (game.feedback == "apple" and game.r0 > 0):
            raise ValueError(f"greedy-trap at dimension 1 needs apple feedback and r0 > 0 (with "
                             f"r0 = 0 only the sign of the estimate matters), got "
                             f"feedback={game.feedback!r}, r0={game.r0!r}")

    def for_instance(self, instance) -> ContextSequence:
        theta = instance.theta1 - instance.theta0
        d = theta.shape[0]
        size = np.linalg.norm(theta)
        u = theta / size
        if d == 1:
            r0 = instance.game.r0
            cycle = np.array([(r0 + self.margin) * u, 0.5 * r0 * u]) / size
        else:
            axis = int(np.argmin(np.abs(u)))  # the axis least aligned with u
            w = np.eye(d)[axis] - u[axis] * u
            w /= np.linalg.norm(w)
            cycle = np.array([self.margin * (u + w), self.margin * (-u + w)]) / np.sqrt(2)
        points = np.vstack([self.warmup_scale * np.eye(d), cycle])
        return ContextSequence(points=points, cycle_start=d)


class OrthogonalTraps(NamedTuple):
    """The greedy trap in each of ⌊d/2⌋ orthogonal coordinate planes: a sequence whose good
    rules are rare in high dimension.

    On :class:`GreedyTrap` both points lie in one plane at every d, so a quarter of all
    directions accept g and reject b: a few random rules include a perfect one. Here every
    coordinate carries a trap. After the same warm-up (``warmup_scale``·e_i, mostly noise), it
    cycles through a good and a bad point in each plane of coordinates (2i, 2i + 1): with
    θ_i = θ's part in that plane, u_i = θ_i/‖θ_i‖ and w_i = u_i turned a quarter turn in the
    plane, g_i = m(u_i + w_i)/√2 and b_i = m(−u_i + w_i)/√2 (m = ``margin``), so
    ⟨θ, g_i⟩ = m‖θ_i‖/√2 = −⟨θ, b_i⟩. At odd d the last axis carries g = m·s·e_d and b = −g,
    s the sign of θ's last coordinate.

    A direction β is right on every point (accepts each g, rejects each b) exactly when its part
    in each plane lies in that plane's right quarter and, at odd d, its last coordinate has θ's
    sign. The parts of a uniform direction are independent in angle, so the right share is
    exactly 2^−d (a quarter at d = 2, where this is the greedy trap but for the side w_1 points
    to; 1/1024 at d = 10). The
    planes are orthogonal and so are the warm-up's axes, so a least-squares learner fits each
    plane on its own: SA-OLS is trapped in each plane as on the greedy trap, about half the
    time. Built for r0 = 0 (the points' gains are measured from 0, as the greedy trap's at
    d ≥ 2) and d ≥ 2.

    Examples
    --------
    >>> OrthogonalTraps().name
    'orthogonal-traps'
    """

    warmup_scale: float = 0.01
    margin: float = 0.3

    name = "orthogonal-traps"
    settings = _settings
    check = GreedyTrap.check

    def check_game(self, game) -> None:
        """Refuse the games the traps are not built for (called by the game)."""
        if game.dimension < 2:
            raise ValueError(f"orthogonal-traps needs dimension >= 2 (one plane at least; at "
                             f"dimension 1 use greedy-trap), got dimension={game.dimension!r}")
        if game.feedback == "apple" and game.r0 != 0:
            raise ValueError(f"orthogonal-traps needs r0 = 0 under apple feedback (its points' "
                             f"gains are measured from 0), got r0={game.r0!r}")

    def for_instance(self, instance) -> ContextSequence:
        theta = instance.theta1 - instance.theta0
        d = theta.shape[0]
        cycle = []
        for i in range(0, d - 1, 2):
            part = theta[i:i + 2]
            size = np.linalg.norm(part)
            u2 = part / size if size > 0 else np.array([1.0, 0.0])  # size 0: probability 0
            w2 = np.array([-u2[1], u2[0]])
            for sign in (1.0, -1.0):  # g_i, then b_i
                point = np.zeros(d)
                point[i:i + 2] = self.margin * (sign * u2 + w2) / np.sqrt(2)
                cycle.append(point)
        if d % 2:
            good = np.zeros(d)
            good[-1] = self.margin * (1.0 if theta[-1] >= 0 else -1.0)
            cycle += [good, -good]
        points = np.vstack([self.warmup_scale * np.eye(d), *cycle])
        return ContextSequence(points=points, cycle_start=d)


def _check_points(name: str, points) -> None:
    if not (isinstance(points, np.ndarray) and points.ndim == 2 and points.shape[0] >= 1
            and points.dtype == np.float64):
        shape = getattr(points, "shape", None)
        raise ValueError(f"{name} must be a 2-D float64 array with at least one row, "
                         f"got {type(points).__name__} of shape {shape}")
    if not np.all(np.isfinite(points)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")


_OUTLINED = {"inline": "never", **NO_NRT}


@njit(**_OUTLINED)
def _draw_mixture(model, rng, t, out):
    if rng.random() < model.c0:
        _uniform_ball(model.radius, rng, out)
        return 0
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
    return 0


@njit(**_OUTLINED)
def _draw_empirical(model, rng, t, out):
    n = model.points.shape[0]
    i = min(int(rng.random() * n), n - 1)  # one uniform a round; bias ≤ n/2^53
    for j in range(out.shape[0]):
        out[j] = model.points[i, j]
    return i


@njit(**_OUTLINED)
def _draw_sequence(model, rng, t, out):
    n = model.points.shape[0]
    i = t - 1
    if i >= n:
        i = model.cycle_start + (i - model.cycle_start) % (n - model.cycle_start)
    for j in range(out.shape[0]):
        out[j] = model.points[i, j]
    return i


@njit(inline="always")
def _draw_ball(model, rng, t, out):
    _uniform_ball(model.radius, rng, out)
    return 0


@njit(**_OUTLINED)
def _draw_sphere(model, rng, t, out):
    _uniform_sphere(model.radius, rng, out)
    return 0


@njit(**_OUTLINED)
def _draw_data(model, rng, t, out):
    # A data set's rows (:mod:`.data`): the rows of ``order`` in turn, or a row drawn
    # uniformly or by the cumulative probabilities in ``cumulative``.
    n = model.points.shape[0]
    m = model.order.shape[0]
    if m > 0:
        i = model.order[(t - 1) % m]
    elif model.cumulative.shape[0] == 0:
        i = min(int(rng.random() * n), n - 1)  # one uniform a round, as EmpiricalContexts
    else:
        # The first row whose cumulative probability exceeds u: a binary search.
        u = rng.random()
        lo, hi = 0, n - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if model.cumulative[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        i = lo
    for j in range(out.shape[0]):
        out[j] = model.points[i, j]
    return i


@njit(inline="always")
def _draw(model, rng, t, out):
    # The uniform ball's draw (the paper's) is inlined; each other model's is its own compiled
    # function, called from this switch (all inlined made the engine's loop ten times as slow
    # to compile: agents.py).
    kind = model.kind
    if kind == BALL:
        return _draw_ball(model, rng, t, out)
    if kind == SPHERE:
        return _draw_sphere(model, rng, t, out)
    if kind == MIXTURE:
        return _draw_mixture(model, rng, t, out)
    if kind == EMPIRICAL:
        return _draw_empirical(model, rng, t, out)
    if kind == SEQUENCE:
        return _draw_sequence(model, rng, t, out)
    return _draw_data(model, rng, t, out)


#: The context models drawn by compiled code; GreedyTrap and OrthogonalTraps are drawn through
#: the ContextSequence they bind to, a data set (:mod:`.data`) through the ``DataRows`` it
#: binds to.
MODELS = (UniformBall, UniformSphere, BoundedRatioMixture, EmpiricalContexts, ContextSequence)
#: Compiled context-model class → compiled draw(model, rng, t, out) -> row: writes round t's
#: context into ``out`` and returns the row of a data set or sequence it came from (0 for a
#: model without rows; a data game's reward reads it). Compiled code reaches it via
#: draw_context; every built-in model reaches compiled code as a :class:`ContextsCore`.
DRAW_CONTEXT = {ContextsCore: _draw}

#: Name (as on the command line) → context model class.
CONTEXTS = {cls.name: cls for cls in (*MODELS, GreedyTrap, OrthogonalTraps)}


def compiled_contexts(model):
    """``model`` as compiled code receives it: a built-in model's :class:`ContextsCore`, or the
    model itself (one registered in :data:`DRAW_CONTEXT` under its own class)."""
    compiled = getattr(model, "compiled", None)
    return model if compiled is None else compiled()


draw_context = dispatch_on_class(
    "draw_context", ("model", "rng", "t", "out"), DRAW_CONTEXT,
    "Draw round t's true context into ``out``; return its row (compiled-only; use "
    "draw_contexts from Python).")


@njit
def _draw_rows(model, rng, first_round, out):
    for i in range(out.shape[0]):
        draw_context(model, rng, first_round + i, out[i])


def draw_contexts(model, d: int, n: int, rng: np.random.Generator, first_round: int = 1
                  ) -> np.ndarray:
    """Draw the contexts of rounds ``first_round``.. as an (n, d) array, with the compiled
    sampler (the same stream as the engine).

    Examples
    --------
    >>> draw_contexts(UniformBall(), 3, 2, np.random.default_rng(0)).shape
    (2, 3)
    """
    if getattr(model, "compiled", None) is None and type(model) not in DRAW_CONTEXT:
        raise ValueError(f"{model.name} contexts depend on the game: draw them from a "
                         f"GameInstance")
    out = np.empty((n, d))
    _draw_rows(compiled_contexts(model), rng, int(first_round), out)
    return out
