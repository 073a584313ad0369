"""Agent models: how an agent with true context x answers a published policy (`def:br`).

Like context models, an agent model is an immutable ``NamedTuple`` that compiled code receives;
:func:`respond` dispatches on its class through :data:`RESPOND`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from .._jit import njit, state_class
from .policies import norm, score

_EPS = 2.220446049250313e-16


@njit
def lazy_move(beta, threshold, budget, x, out):
    """Lazy best response to (β, c) within an ℓ2 budget; returns whether the agent moved.

    A rejected agent that can reach the boundary moves straight along β/‖β‖ onto it. The landing
    point is then pushed out by whole ulps until :func:`score` accepts it, so a mover is always
    accepted whatever the rounding (DESIGN §2, "Floating point"); the push is a few ulps of the
    step, so the budget holds to relative precision 1e-12.
    """
    d = x.shape[0]
    for i in range(d):
        out[i] = x[i]
    s = score(beta, x)
    if s >= threshold:
        return False
    nb = norm(beta)
    if nb == 0.0:
        return False
    step = (threshold - s) / nb
    if not step <= budget:  # also false for NaN
        return False
    bump = 4.0 * _EPS
    for _ in range(200):
        for i in range(d):
            out[i] = x[i] + step * (beta[i] / nb)
        if score(beta, out) >= threshold:
            return True
        step = step * (1.0 + bump) + 1e-300
        bump *= 2.0
    for i in range(d):  # unreachable in floating point; stay put rather than lie
        out[i] = x[i]
    return False


class LazyBestResponse(NamedTuple):
    """Agents that move the least distance needed to be accepted, if within budget ``delta``.

    With probability ``truthful`` an agent reports its context unchanged. Moved contexts are
    not projected back into the ball.

    Examples
    --------
    >>> import numpy as np
    >>> agents = LazyBestResponse(delta=0.5)
    >>> x_obs, moved = agents.respond_once(np.array([1.0, 0.0]), 0.5, np.array([0.2, 0.1]))
    >>> bool(moved), float(x_obs[0]) >= 0.5
    (True, True)
    """

    delta: float = 0.1
    truthful: float = 0.0

    name = "lazy"

    def check(self) -> None:
        if not (isinstance(self.delta, int | float) and math.isfinite(self.delta)
                and self.delta >= 0):
            raise ValueError(f"delta must be a finite number >= 0, got {self.delta!r}")
        if not (isinstance(self.truthful, int | float) and 0 <= self.truthful <= 1):
            raise ValueError(f"truthful must be a probability in [0, 1], got {self.truthful!r}")

    def respond_once(self, beta, threshold, x, rng=None):
        """Python helper: the response of one agent; returns (x_observed, moved)."""
        rng = np.random.default_rng() if rng is None else rng
        out = np.empty(len(x))
        moved = RESPOND[type(self)](self, rng, np.asarray(beta, float), float(threshold),
                                    np.asarray(x, float), out)
        return out, moved


@njit
def _respond_lazy(model, rng, beta, threshold, x, out):
    # The coin is drawn every round whatever the policy, so every learner meets the same agents.
    if 0.0 < model.truthful < 1.0:
        honest = rng.random() < model.truthful
    else:
        honest = model.truthful >= 1.0
    if honest:
        for i in range(x.shape[0]):
            out[i] = x[i]
        return False
    return lazy_move(beta, threshold, model.delta, x, out)


#: Agent model class → compiled respond(model, rng, beta, threshold, x, out) -> moved.
RESPOND = {LazyBestResponse: _respond_lazy}

#: Name (as on the command line) → agent model class.
AGENTS = {cls.name: cls for cls in RESPOND}


def respond(model, rng, beta, threshold, x, out):
    """Write agent's reported context into ``out``; return whether it moved (compiled-only)."""
    raise NotImplementedError("respond is compiled-only")


@overload(respond, inline="always")
def _respond_overload(model, rng, beta, threshold, x, out):
    impl = RESPOND.get(state_class(model))
    if impl is not None:
        return lambda model, rng, beta, threshold, x, out: impl(model, rng, beta, threshold, x, out)
    return None
