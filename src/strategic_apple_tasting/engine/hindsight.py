"""A data game's benchmarks, on each seed's own applicants (DESIGN §2, "Data").

On a data game the engine's ``regret`` compares each decision with accepting exactly the rows
that gain: no rule can do that, so it is an upper bound on regret against any rule. The
benchmarks a lender reads are fixed linear rules, each in two versions: on the *true*
contexts (the rule a lender could use if applicants did not game) and *answered by the
agents* (the rule published, every agent gaming it: Stackelberg, `def:stackel`).

* the **least-squares rule** (θ*, accept iff ⟨θ*, x⟩ ≥ r0), and shifted by the budget,
  (θ*, r0 + reach(θ*)), answered by the agents: exact;
* the **best linear rule**: each direction of the search over the rows
  (:mod:`.best_rule`) with its best threshold *in hindsight* on the seed's applicants, up to
  each recorded round; on the true contexts, and answered by the agents. A lower bound on the
  best linear rule in hindsight (the directions were searched once, on the rows).

A rule (β, c) published to an agent of budget b accepts it iff ⟨β, x⟩ + b·reach₁(β) ≥ c (lazy
agents; a data game refuses budgets drawn at random). With a budget per group (``Game(delta=
{group: budget})``) an agent of row i has its group's budget b_i, so for a direction β the
accepted set at threshold c is {i : ⟨β, x_i⟩ + b_i·reach₁(β) ≥ c}: still a threshold on one
number per row, each row's score shifted by its own group's reach, and the best threshold is
still an exact sweep over those shifted scores (a truthful agent's is its own score). The
shifted least-squares rule is shifted by the largest budget, the one a learner is told. The
replay draws
the seed's applicants, agents and outcomes from fresh copies of its streams, exactly as the
simulation did, so it runs once per seed for every learner. Each benchmark comes back as a
shortfall below accepting exactly the rows that gain (regret against it is ``regret`` minus
the shortfall), with the realized profit of the best rule answered by the agents.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import REACH, agent_budget, compiled_agents, within_budget
from ..game.contexts import draw_context
from ..game.game import Game
from ..game.policies import score
from ..game.rewards import reward_draw, reward_mean
from .best_rule import RuleSearch, cached_search

#: The shortfalls (and the profit) the replay returns, in the order of its output's columns.
BENCHMARKS = ("linear", "stackelberg", "ls", "ls_stackelberg", "best_profit")


class Hindsight(NamedTuple):
    """A seed's benchmarks at each recorded round (arrays of the recorded rounds' length)."""

    linear: np.ndarray  # shortfall of the best linear rule on true contexts
    stackelberg: np.ndarray  # ... of the best linear rule answered by the agents
    ls: np.ndarray  # ... of the least-squares rule on true contexts
    ls_stackelberg: np.ndarray  # ... of the shifted least-squares rule answered by the agents
    best_profit: np.ndarray  # realized profit of the best rule answered by the agents


@njit
def _best_cut(hist, width):
    """The best suffix sum over each direction's bins (0: accept nobody): (value, j, k)."""
    best, bj, bk = 0.0, -1, -1
    for j in range(hist.shape[0]):
        tail = 0.0
        for b in range(width[j] - 1, -1, -1):
            tail += hist[j, b]
            if tail > best:
                best, bj, bk = tail, j, b
    return best, bj, bk


@njit
def _replay(contexts, agents, rewards, theta1, r0, sigma, context_rng, agent_rng, noise_rng,
            rank_true, width_true, rank_calm, rank_game, width_game, ls, ls_threshold,
            ls_reach, row_budgets, record_at, out):
    d = theta1.shape[0]
    n_dir = rank_true.shape[0]
    true_hist = np.zeros((n_dir, width_true.max()))
    game_hist = np.zeros((n_dir, width_game.max()))
    game_real = np.zeros((n_dir, width_game.max()))
    x = np.empty(d)
    positive = ls_true = ls_game = 0.0
    k = 0
    horizon = record_at[record_at.shape[0] - 1]
    for t in range(1, horizon + 1):
        row = draw_context(contexts, context_rng, t, x)
        budget = agent_budget(agents, agent_rng)
        if budget > 0.0 and row_budgets.shape[0] > 0:
            budget = row_budgets[row]  # the row's group's (the same draws: a truthful coin)
        mean = reward_mean(rewards, theta1, x, row)
        realized = reward_draw(rewards, mean, sigma, noise_rng, row)
        gain = mean - r0
        if gain > 0.0:
            positive += gain
        gamer = budget > 0.0
        for j in range(n_dir):
            true_hist[j, rank_true[j, row]] += gain
            b = rank_game[j, row] if gamer else rank_calm[j, row]
            game_hist[j, b] += gain
            game_real[j, b] += realized - r0
        s = score(ls, x)
        if s >= r0:
            ls_true += gain
        if s >= ls_threshold or (gamer and ls_reach > 0.0
                                 and within_budget((ls_threshold - s) / ls_reach, budget)):
            ls_game += gain
        if t == record_at[k]:
            best_true = _best_cut(true_hist, width_true)[0]
            best_game, j, b = _best_cut(game_hist, width_game)
            earned = 0.0
            if j >= 0:
                for c in range(b, width_game[j]):
                    earned += game_real[j, c]
            # ≥ 0 in exact arithmetic; summed in another order they can come out −1e-13.
            out[k, 0] = max(positive - best_true, 0.0)
            out[k, 1] = max(positive - best_game, 0.0)
            out[k, 2] = positive - ls_true
            out[k, 3] = positive - ls_game
            out[k, 4] = r0 * t + earned
            k += 1


def _ranks(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """Each score's rank among the distinct scores, and how many there are."""
    values, inverse = np.unique(scores, return_inverse=True)
    return inverse.astype(np.int64), len(values)


def game_search(game: Game) -> RuleSearch:
    """The search of :mod:`.best_rule` on a data game's rows (once per process for the same
    rows, gains and weights)."""
    data = game.contexts
    inst = game.instance(0)
    if game.rewards == "recorded":
        mean = inst.rewards.mean
    else:
        mean = data.rows @ inst.theta1
    return cached_search(data.rows, mean - game.r0, data.probabilities())


class Plan(NamedTuple):
    """What the replay needs of a game and its search, the same for every seed: each
    direction's rank of every row's score (on true features; for an agent that does not game
    and one that does, on one scale) and the least-squares rule."""

    rank_true: np.ndarray
    width_true: np.ndarray
    rank_calm: np.ndarray
    rank_game: np.ndarray
    width_game: np.ndarray
    ls: np.ndarray
    ls_threshold: float
    ls_reach: float


def plan(game: Game, search: RuleSearch | None = None, seed: int = 0) -> Plan:
    """:class:`Plan` of a data game, from its search (run if not given). A gamer's effective
    score is its score plus its own budget's reach (its group's, with per-group budgets). The
    least-squares rule is seed ``seed``'s θ1 (the same for every seed but under a held-out
    protocol, where each seed fits it on its own learning rows)."""
    search = game_search(game) if search is None else search
    agents = game.agents
    rows = game.contexts.rows
    directions = search.directions
    unit = compiled_agents(agents._replace(delta=1.0))
    reach = np.array([REACH[type(unit)](unit, u) for u in directions])
    n_dir, n = len(directions), rows.shape[0]
    rank_true = np.empty((n_dir, n), dtype=np.int64)
    rank_calm = np.empty((n_dir, n), dtype=np.int64)
    rank_game = np.empty((n_dir, n), dtype=np.int64)
    width_true = np.empty(n_dir, dtype=np.int64)
    width_game = np.empty(n_dir, dtype=np.int64)
    budgets = game.row_budgets() if game.group_budgets is not None else agents.delta
    for j, u in enumerate(directions):
        scores = rows @ u
        rank_true[j], width_true[j] = _ranks(scores)
        # A gamer's effective score: what it can reach. Both kinds share one sorted scale.
        both, width_game[j] = _ranks(np.concatenate([scores, scores + budgets * reach[j]]))
        rank_calm[j], rank_game[j] = both[:n], both[n:]
    ls = np.ascontiguousarray(game.instance(seed).theta1)
    ls_reach = float(REACH[type(unit)](unit, ls))
    return Plan(rank_true, width_true, rank_calm, rank_game, width_game, ls,
                float(game.r0) + agents.delta * ls_reach, ls_reach)


def hindsight(game: Game, seed: int, record_at: np.ndarray, search: RuleSearch | None = None,
              prepared: Plan | None = None) -> Hindsight:
    """A data game's benchmarks on ``seed``'s applicants at each round of ``record_at``
    (``prepared``: the game's :func:`plan`, shared by its seeds).

    Examples
    --------
    >>> from strategic_apple_tasting.game import DataContexts, SubsetGaming
    >>> rows = np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> data = DataContexts(rows=rows, repaid=np.array([0.0, 0.0, 1.0, 1.0]),
    ...                     if_repaid=np.full(4, 0.5), if_defaulted=np.full(4, -1.0))
    >>> game = Game(dimension=2, contexts=data, delta=0.5,
    ...             agents=SubsetGaming(gameable=np.array([False, True])))
    >>> h = hindsight(game, 0, np.array([100]))
    >>> float(h.linear[0]), float(h.stackelberg[0])  # a threshold on the second feature
    (0.0, 0.0)
    """
    p = plan(game, search) if prepared is None else prepared
    inst = game.instance(seed)
    record_at = np.asarray(record_at, dtype=np.int64)
    out = np.empty((len(record_at), len(BENCHMARKS)))
    _replay(inst.compiled_contexts, inst.compiled_agents, inst.compiled_rewards, inst.theta1,
            float(game.r0), float(game.sigma), inst.rngs["contexts"], inst.rngs["agents"],
            inst.rngs["noise"],
            p.rank_true, p.width_true, p.rank_calm, p.rank_game, p.width_game, p.ls,
            p.ls_threshold, p.ls_reach, inst.row_budgets, record_at, out)
    return Hindsight(*(out[:, i].copy() for i in range(len(BENCHMARKS))))
