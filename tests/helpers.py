"""Slow, obviously-correct references the compiled code is checked against."""

from __future__ import annotations

import numpy as np

from strategic_apple_tasting.engine.grid import recording_grid
from strategic_apple_tasting.game import Game


def replay(game: Game, learner, seed: int, horizon: int) -> dict[str, np.ndarray]:
    """Play the game round by round through the per-round API, as a user would.

    Returns per-round arrays (accepted, moved, used, regret increments, ...) and the learner.
    The engine must produce the same totals at every recorded round.
    """
    inst = game.instance(seed)
    lr = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    out = {k: [] for k in ("accepted", "moved", "used", "regret", "realized", "threshold")}
    for _ in range(horizon):
        rule = lr.policy()
        x = inst.next_context()
        x_obs, moved = inst.next_response(rule, x)
        a = lr.act(x_obs)
        r1, rew0 = inst.next_rewards(x)
        gap = inst.gap(x)
        best = gap >= 0
        out["regret"].append(abs(gap) if a != best else 0.0)
        out["realized"].append((r1 if best else rew0) - (r1 if a else rew0))
        observed = a or game.feedback == "bandit"
        used = lr.update(x_obs, a, (r1 if a else rew0) if observed else None)
        out["accepted"].append(a)
        out["moved"].append(moved)
        out["used"].append(used)
        out["threshold"].append(rule.threshold)
    res = {k: np.array(v) for k, v in out.items()}
    res["learner"] = lr
    return res


def totals_at_grid(per_round: dict[str, np.ndarray], horizon: int, per_decade: int = 20,
                   grid: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Cumulative totals of a replay at the engine's recorded rounds (summed in order): the
    log-spaced grid, or ``grid`` (the rounds of an engine table, with a learner's milestones)."""
    grid = recording_grid(horizon, per_decade) if grid is None else np.asarray(grid)
    out = {}
    for key in ("regret", "realized"):
        acc, cum = 0.0, []
        for v in per_round[key]:
            acc += v  # same left-to-right order as the engine
            cum.append(acc)
        out[key] = np.array(cum)[grid - 1]
    for key in ("accepted", "moved", "used"):
        out[key] = np.cumsum(per_round[key].astype(np.int64))[grid - 1]
    out["gamed_as_clean"] = np.cumsum((per_round["used"] & per_round["moved"]).astype(np.int64)
                                      )[grid - 1]
    out["clean"] = np.cumsum((per_round["used"] & per_round["accepted"]).astype(np.int64)
                             )[grid - 1]
    return out


def tables_identical(a, b) -> bool:
    """Same columns and bit-identical values (NaN equal to NaN)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for name in a.column_names:
        x, y = a.column(name).to_numpy(), b.column(name).to_numpy()
        if x.dtype.kind == "f":
            if not np.array_equal(x.view(np.int64), y.view(np.int64)):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def naive_linucb(d: int, data: dict, alpha: float, ridge: float, r0: float, bandit: bool):
    """LinUCB's rule g(z) = UCB1(z) − r0 (bandit: UCB1(z) − UCB0(z) − r0), from the data with
    numpy: V_a = λI + XᵀX, θ̂_a = V_a⁻¹Xᵀy, UCB_a(z) = ⟨θ̂_a, z⟩ + α·sqrt(zᵀV_a⁻¹z).

    ``data`` maps True (arm 1) and False (arm 0) to lists of (x, reward). Returns g, vectorized
    over the rows of its argument.
    """
    def arm(points):
        X = np.array([x for x, _ in points]).reshape(-1, d)
        y = np.array([r for _, r in points])
        inv = np.linalg.inv(ridge * np.eye(d) + X.T @ X)
        return inv @ X.T @ y, inv

    t1, m1 = arm(data[True])
    t0, m0 = arm(data[False])

    def g(z):
        z = np.atleast_2d(z)
        out = z @ t1 + alpha * np.sqrt(np.einsum("ij,jk,ik->i", z, m1, z)) - r0
        if bandit:
            out -= z @ t0 + alpha * np.sqrt(np.einsum("ij,jk,ik->i", z, m0, z))
        return out
    return g
