"""A fixed published rule and the applicants who answer it: the principal's probe of the
agents' budget.

:func:`probe_rule` publishes one linear rule (β, c) for ``horizon`` rounds of a game, lets the
game's agents answer it (the same compiled draws and responses as the engine, from the same
seeded streams), and returns each applicant's distance to the boundary in units of budget,
which :func:`~strategic_apple_tasting.learners.budget.estimate_budget` reads.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..game.agents import REACH, compiled_agents, respond, with_row_budget
from ..game.contexts import draw_context
from ..game.game import Game
from ..game.policies import score
from .simulate import check_horizon


@njit
def _probe(contexts, agents, beta, threshold, unit, context_rng, agent_rng, row_budgets, out):
    d = beta.shape[0]
    x = np.empty(d)
    x_obs = np.empty(d)
    for t in range(1, out.shape[0] + 1):
        row = draw_context(contexts, context_rng, t, x)
        respond(with_row_budget(agents, row_budgets, row), agent_rng, beta, threshold, x, x_obs)
        out[t - 1] = (score(beta, x_obs) - threshold) / unit


def reach_unit(agents, beta: np.ndarray) -> float:
    """The score one unit of budget buys against β under ``agents``' cost (‖β‖, ‖β_G‖, ...)."""
    unit = compiled_agents(agents._replace(delta=1.0))
    return float(REACH[type(unit)](unit, np.ascontiguousarray(beta, dtype=np.float64)))


def probe_rule(game: Game, beta: np.ndarray, threshold: float, horizon: int,
               seed: int = 0) -> np.ndarray:
    """Publish (β, c) for ``horizon`` rounds of ``game`` on ``seed``; return each applicant's
    distance (⟨β, x′⟩ − c) / reach₁(β) to the boundary (:func:`reach_unit`).

    Examples
    --------
    >>> v = probe_rule(Game(dimension=2, delta=0.3), np.array([1.0, 0.0]), 0.0, 2000)
    >>> bool(((v > -0.3) & (v < 0)).any()), int((v == 0).sum()) > 100
    (False, True)
    """
    horizon = check_horizon(horizon)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if beta.shape != (game.dimension,) or not np.all(np.isfinite(beta)):
        raise ValueError(f"beta must be {game.dimension} finite numbers, got shape "
                         f"{beta.shape}")
    unit = reach_unit(game.agents, beta)
    if not unit > 0:
        raise ValueError("beta must reach a gameable feature (its reach is 0: nobody can "
                         "move against it, and the probe measures nothing)")
    inst = game.instance(seed)
    out = np.empty(horizon)
    _probe(inst.compiled_contexts, inst.compiled_agents, beta, float(threshold), unit,
           inst.rngs["contexts"], inst.rngs["agents"], inst.row_budgets, out)
    return out
