"""Rules scored on applicants the learner never met: the ``holdout`` protocol of a data game.

Under ``holdout`` (:mod:`..game.data`) each seed holds a share of the rows out of the learning
stream. The engine records the rule in force at every recorded round (:mod:`.kernel`'s
``Outputs.rules``), and :func:`score_rules` publishes each of them to every held-out applicant,
who answers it as the game's agents do (gaming its gameable features within its budget, a
truthful one not at all), and earns the row's reward if accepted and r0 if not: the profit per
applicant a lender would have had from that rule on new applicants. A randomized learner's rule
is the one it drew for that round, so its mean over seeds is its expected held-out profit.

Beside the learners, two fixed rules are **cross-fitted**, chosen on the seed's learning rows
only and scored the same way on its held-out ones (:func:`cross_fitted`):

* the best linear rule: the search of :mod:`.best_rule` run on the learning rows, each of its
  directions with its best *published* threshold on those rows (the agents answering it, a
  truthful share by its expectation), the best of them kept;
* the least-squares rule, shifted by the budget: θ1 fitted on the learning rows, published at
  r0 + δ·reach(θ1) (what the oracle learner plays).

The cross-fitted best rule is no upper bound out of sample: on German credit the search
overfits its 700 learning rows, and the cross-fitted least-squares rule earns more on the
held-out ones (``benchmarks/RESULTS.md``). A leak is caught otherwise
(``tests/engine/test_holdout.py``): no seed draws a held-out row, and the oracle's held-out
profit is the cross-fitted least-squares rule's, seed by seed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import REACH, compiled_agents, respond, with_row_budget
from ..game.data import PROTOCOL_STREAM
from ..game.game import Game, GameInstance
from ..game.policies import accepts
from .best_rule import RuleSearch, cached_search

#: Random starts of the search on each seed's learning rows (the whole data's search has 12).
#: It runs once per seed and split, where the data's runs once, and it was most of a held-out
#: run's time (3.5 s a seed of a 4.7 s cell on German credit); its in-sample optimum overfits
#: anyway (cross-fitted it earns less than the least-squares rule): ``benchmarks/RESULTS.md``
#: measures what 3 starts cost against 12.
RESTARTS = 3
#: Columns a held-out protocol's table adds: the rule in force scored on the held-out
#: applicants (per recorded round), and the two cross-fitted rules scored on them (per seed),
#: each a profit per applicant in reward units.
HOLDOUT_COLUMNS = ("holdout_profit", "holdout_best_rule_profit", "holdout_ls_profit")


class HeldOut(NamedTuple):
    """One seed's held-out applicants and what scoring them needs."""

    rows: np.ndarray  # (n, d): every row of the data (held-out ones are indexed)
    held: np.ndarray  # indices of the held-out rows
    weights: np.ndarray  # each held-out row's weight in the score (sum 1)
    learn: np.ndarray  # indices of the rows the seed learns from
    mean: np.ndarray  # (n,): each row's expected reward if accepted
    r0: float
    agents: object  # the game's agents, compiled
    row_budgets: np.ndarray  # each row's budget with budgets per group (empty: one budget)
    seed: int
    fit: np.ndarray  # θ1 fitted on the learning rows


def is_holdout(game: Game) -> bool:
    """Whether ``game`` is a data game under the ``holdout`` protocol."""
    return game.has_rows and getattr(game.contexts, "protocol", "replay") == "holdout"


def held_out(game: Game, seed: int) -> HeldOut:
    """Seed ``seed``'s held-out applicants of a ``holdout`` data game."""
    inst = game.instance(seed)
    bound = inst.contexts
    n = game.contexts.n
    if game.contexts.population:
        learn = np.arange(n, dtype=np.int64)
    else:
        learn = np.setdiff1d(np.arange(n, dtype=np.int64), bound.held_out)
    return _scored(game, inst, bound.held_out, bound.held_weights, learn)


def every_row(game: Game, seed: int) -> HeldOut:
    """Every row of a data game, each weighing the same, as :func:`score_rules` scores them
    (the lender's backtest scores fixed rules on all its new applicants)."""
    n = game.contexts.n
    return _scored(game, game.instance(seed), np.arange(n, dtype=np.int64),
                   np.full(n, 1.0 / n), np.empty(0, dtype=np.int64))


def _scored(game: Game, inst: GameInstance, held: np.ndarray, weights: np.ndarray,
            learn: np.ndarray) -> HeldOut:
    if game.rewards == "recorded":
        mean = np.asarray(inst.rewards.mean, dtype=float)
    else:
        mean = game.contexts.rows @ inst.theta1
    return HeldOut(rows=np.ascontiguousarray(game.contexts.rows), held=held, weights=weights,
                   learn=learn, mean=np.ascontiguousarray(mean), r0=float(game.r0),
                   agents=inst.compiled_agents, row_budgets=inst.row_budgets,
                   seed=int(inst.seed), fit=np.asarray(inst.theta1, dtype=float))


def scoring_rng(seed: int) -> np.random.Generator:
    """The held-out agents' random numbers (truthful coins) of seed ``seed``: the same for every
    learner's rules, a child of the seed's protocol stream."""
    sequence = np.random.SeedSequence(int(seed), spawn_key=(PROTOCOL_STREAM, 0))
    return np.random.Generator(np.random.PCG64(sequence))


@njit
def _score(agents, rng, rows, held, weights, mean, r0, row_budgets, rules, out):
    d = rows.shape[1]
    x = np.empty(d)
    x_obs = np.empty(d)
    beta = np.empty(d)
    for k in range(rules.shape[0]):
        for c in range(d):
            beta[c] = rules[k, c]
        threshold = rules[k, d]
        total = 0.0
        for j in range(held.shape[0]):
            i = held[j]
            for c in range(d):
                x[c] = rows[i, c]
            agent = with_row_budget(agents, row_budgets, i)
            respond(agent, rng, beta, threshold, x, x_obs)
            total += weights[j] * (mean[i] if accepts(beta, threshold, x_obs) else r0)
        out[k] = total


def score_rules(part: HeldOut, rules: np.ndarray) -> np.ndarray:
    """Each rule's profit per held-out applicant (reward units), the applicants answering it.

    ``rules`` is (K, d + 1): β, then the threshold (the engine's recorded rules). Each call
    draws the agents' coins afresh from the seed's scoring stream, so every learner's rules
    meet the same applicants and coins.

    Examples
    --------
    >>> from strategic_apple_tasting.scenarios.datasets import data_game, load_dataset
    >>> game = data_game(load_dataset("fico"), delta=0.5, protocol="holdout")
    >>> part = held_out(game, 0)
    >>> accept_all, reject_all = [0.0, 0.0, -1.0], [0.0, 0.0, 1.0]
    >>> profit = score_rules(part, np.array([accept_all, reject_all]))
    >>> bool(profit[0] < 0.0), float(profit[1])
    (True, 0.0)
    """
    rules = np.ascontiguousarray(rules, dtype=float)
    out = np.empty(rules.shape[0])
    _score(part.agents, scoring_rng(part.seed), part.rows, part.held, part.weights, part.mean,
           part.r0, part.row_budgets, rules, out)
    return out


def _best_published(scores: np.ndarray, shifted: np.ndarray, gain: np.ndarray,
                    truthful: float) -> tuple[float, float]:
    """The best published threshold for one direction on the learning rows, and its value:
    a gamer is accepted at c iff its reachable score ``shifted`` ≥ c, a truthful applicant iff
    its ``scores`` ≥ c (a share ``truthful`` of each row, by expectation); c = +inf accepts
    nobody (value 0)."""
    candidates = np.unique(np.concatenate([scores, shifted]))

    def above(values: np.ndarray) -> np.ndarray:
        order = np.argsort(values, kind="stable")
        tail = np.concatenate([np.cumsum(gain[order][::-1])[::-1], [0.0]])
        return tail[np.searchsorted(values[order], candidates, side="left")]

    value = (1.0 - truthful) * above(shifted) + truthful * above(scores)
    j = int(np.argmax(value))
    if value[j] <= 0.0:
        return np.inf, 0.0
    return float(candidates[j]), float(value[j])


def learning_search(game: Game, part: HeldOut) -> RuleSearch:
    """The best-rule search of :mod:`.best_rule` on the seed's learning rows only, with
    :data:`RESTARTS` random starts (cached per process for the same rows)."""
    weights = game.contexts.probabilities()[part.learn]
    return cached_search(np.ascontiguousarray(part.rows[part.learn]),
                         (part.mean - part.r0)[part.learn], weights / weights.sum(),
                         restarts=RESTARTS)


def cross_fitted(game: Game, part: HeldOut, search: RuleSearch | None = None) -> np.ndarray:
    """The best linear rule and the shifted least-squares rule, both chosen on the seed's
    learning rows (module docstring), as rules (2, d + 1) to :func:`score_rules`
    (``search``: :func:`learning_search`'s, run if not given)."""
    rows = part.rows[part.learn]
    gain = (part.mean - part.r0)[part.learn]
    weights = game.contexts.probabilities()[part.learn]
    weights = weights / weights.sum()
    search = learning_search(game, part) if search is None else search
    unit = compiled_agents(game.agents._replace(delta=1.0))
    budgets = (part.row_budgets[part.learn] if part.row_budgets.shape[0]
               else np.full(len(part.learn), float(game.delta)))
    truthful = float(game.truthful)
    best = (-np.inf, np.zeros(rows.shape[1]), np.inf)
    for u in search.directions:
        scores = rows @ u
        shifted = scores + budgets * float(REACH[type(unit)](unit, u))
        c, value = _best_published(scores, shifted, weights * gain, truthful)
        if value > best[0]:
            best = (value, u, c)
    _, u, c = best
    best_rule = np.concatenate([u, [c if np.isfinite(c) else np.finfo(float).max]])
    # The oracle's rule: θ1 shifted by the largest budget, the one a learner is told.
    top = float(part.row_budgets.max()) if part.row_budgets.shape[0] else float(game.delta)
    ls = np.concatenate([part.fit, [part.r0 + top * float(REACH[type(unit)](unit, part.fit))]])
    return np.stack([best_rule, ls])
