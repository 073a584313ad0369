"""Stackelberg regret (`def:stackel`, `prop:stronger`): the benchmark of the best fixed policy.

Strategic regret compares each action with the pointwise optimum π*(x_t). Stackelberg regret
compares the learner with the best *fixed* linear threshold in hindsight, which the agents also
answer: policy (β, c) accepts agent t iff ⟨β, x_t⟩ ≥ c − b_t·reach₁(β), where b_t is the
agent's budget (0 if truthful) and reach₁ the gain a unit budget buys (‖β‖, or sqrt(βᵀA⁻¹β)
under an ellipsoidal cost). With gains g_t = E[r_t(1)] − E[r_t(0)],

    Stackelberg regret(t) = strategic regret(t) − shortfall(t),
    shortfall(t) = Σ_{s≤t} max(g_s, 0) − max_{(β,c)} Σ_{s≤t} g_s·1{policy accepts agent s}.

When every agent shares one budget and all or none game, each half-space of true contexts is
induced by some policy, the pointwise optimum among them, and the shortfall is exactly 0
(DESIGN §2; :func:`~strategic_apple_tasting.game.agents.induces_every_halfspace`). Otherwise it
is estimated by search: a few directions β (the true θ1 − θ0 and random perturbations of it) and,
for each, every threshold on a fine grid, valued exactly on the replayed agents. The maximum over
this finite set is a lower bound on the true benchmark, so the reported Stackelberg regret is a
lower bound on the true one (and never above strategic regret).

The replay draws contexts and agents from fresh copies of the seed's streams, exactly as the
simulation did: it depends only on the game and the seed, so it is computed once per seed and
shared by every learner.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..game.agents import REACH, agent_budget, compiled_agents, induces_every_halfspace
from ..game.contexts import draw_context
from ..game.game import Game
from ..game.policies import score

#: Directions β searched: the true θ1 − θ0 and this many − 1 perturbations of it.
SEARCH_DIRECTIONS = 16
#: Thresholds searched per direction (bin edges of the range of effective scores).
SEARCH_THRESHOLDS = 4096


@njit
def _shortfall(contexts, agents, theta1, theta0, bandit, r0, context_rng, agent_rng,
               directions, reach_unit, low, width, record_at, out):
    n_dir, d = directions.shape
    n_bins = SEARCH_THRESHOLDS
    hist = np.zeros((n_dir, n_bins))
    x = np.empty(d)
    positive = 0.0
    k = 0
    horizon = record_at[record_at.shape[0] - 1]
    for t in range(1, horizon + 1):
        draw_context(contexts, context_rng, t, x)
        budget = agent_budget(agents, agent_rng)
        gain = score(theta1, x) - (score(theta0, x) if bandit else r0)
        if gain > 0.0:
            positive += gain
        for j in range(n_dir):
            s = budget * reach_unit[j]
            for i in range(d):
                s += directions[j, i] * x[i]
            b = int(np.floor((s - low) / width))
            b = min(max(b, 0), n_bins - 1)
            hist[j, b] += gain
        if t == record_at[k]:
            # Threshold at bin edge m accepts bins m..n−1; m = 0 is accept-all (c = −∞: clipped
            # scores land in bin 0), and accepting nothing is worth 0.
            best = 0.0
            for j in range(n_dir):
                tail = 0.0
                for b in range(n_bins - 1, -1, -1):
                    tail += hist[j, b]
                    best = max(best, tail)
            # ≥ 0 in exact arithmetic (no policy beats the pointwise optimum); summed in a
            # different order it can come out −1e-13.
            out[k] = max(positive - best, 0.0)
            k += 1


def _context_bound(contexts) -> float:
    """Largest norm a context of this model can have."""
    for field in ("points", "rows"):
        pts = getattr(contexts, field, None)
        if pts is not None:
            return float(np.sqrt((np.asarray(pts) ** 2).sum(axis=1)).max())
    return float(contexts.radius)


def search_directions(target: np.ndarray, rng: np.random.Generator,
                      n: int = SEARCH_DIRECTIONS) -> np.ndarray:
    """Unit directions to search: ``target`` normalized, then perturbations of it at scales
    from 0.01 to 1 (random directions once the scale passes 1)."""
    d = target.shape[0]
    norm = np.linalg.norm(target)
    base = target / norm if norm > 0 else np.eye(d)[0]
    out = np.empty((n, d))
    out[0] = base
    for i, scale in enumerate(np.geomspace(0.01, 2.0, n - 1), start=1):
        z = rng.standard_normal(d)
        v = base + scale * z / np.linalg.norm(z)
        out[i] = v / np.linalg.norm(v)
    return out


def stackelberg_shortfall(game: Game, seed: int, record_at: np.ndarray, *,
                          search: bool = False) -> np.ndarray | None:
    """Shortfall of the best fixed policy below the pointwise optimum at each recorded round.

    None when it is exactly 0 (:func:`induces_every_halfspace`) unless ``search`` asks for the
    search anyway (to test the argument); otherwise the search estimate, an upper bound on the
    true shortfall, so that regret − shortfall is a lower bound on Stackelberg regret.

    Examples
    --------
    >>> from strategic_apple_tasting.game import Game, LazyBestResponse
    >>> grid = np.array([10, 100])
    >>> stackelberg_shortfall(Game(dimension=2), 0, grid) is None
    True
    >>> lazy_half = Game(dimension=2, agents=LazyBestResponse(delta=0.3, truthful=0.5))
    >>> bool((stackelberg_shortfall(lazy_half, 0, grid) >= 0).all())
    True
    """
    agents = game.agents
    if induces_every_halfspace(agents) and not search:
        return None
    inst = game.instance(seed)
    directions = search_directions(inst.target, inst.rngs["benchmark"])
    unit = compiled_agents(agents._replace(delta=1.0))
    reach_unit = np.array([REACH[type(unit)](unit, u) for u in directions])
    bound = _context_bound(inst.contexts)
    low = -bound
    high = bound + agents.delta * float(reach_unit.max())
    out = np.empty(len(record_at))
    _shortfall(inst.compiled_contexts, compiled_agents(agents), inst.theta1, inst.theta0,
               game.feedback == "bandit", float(game.r0), inst.rngs["contexts"],
               inst.rngs["agents"], directions, reach_unit, low,
               (high - low) / SEARCH_THRESHOLDS, np.asarray(record_at), out)
    return out
