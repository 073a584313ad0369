"""The engine's Python reference path: the game played round by round through the per-round API.

Any learner runs here, a plain-Python one (no compiled core) or a compiled one. The loop meets
the same streams as the compiled loop (:mod:`.kernel`): the same contexts, agents and noise
drawn from the same seeded generators in the same order, and it sums regret in the same order
with the same arithmetic, so a compiled learner gives bit-identical results on both paths
(checked for every compiled learner by
:func:`strategic_apple_tasting.checks.check_compiled_matches_reference`). Agents answer a linear
threshold in closed form and a general rule by the compiled numerical best response, whether
its g is compiled (LinUCB) or a Python function (:meth:`.GeneralRule.from_function`).

The engine's loop (:func:`play_published`) drives the learner through the decision API
(:mod:`..learners.decisions`): it publishes every ``game.period`` rounds, decides each agent by
id, and reports each observed outcome ``game.delay`` rounds later (a rejection under apple
tasting is learned at once). :func:`play` is the per-round API's loop (the paper's game, a
user's loop); for the paper's game the two give the same results.

It is slow (tens of microseconds a round for a compiled learner, more for a plain-Python one);
it exists so that every learner can enter the game and so that the fast path has a reference.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ..game.game import Game, GameInstance
from ..learners import Learner
from .groups import GroupTally, count_round, round_shift, shift_model
from .kernel import FLOAT_COLUMNS, INT_COLUMNS


class Round(NamedTuple):
    """What one round of :func:`play` gives: the decision and its bookkeeping."""

    accepted: bool
    moved: bool
    used: bool
    regret: float  # |gap| if the decision differs from π*(x), else 0
    realized: float  # realized reward of π* minus the learner's
    threshold: float
    reward: float  # the learner's realized reward (r(1) if accepted, else r(0))
    #: (used, accepted, moved) of each decision whose feedback the learner learned this round,
    #: in the order learned (:func:`play`: this round's own).
    learned: tuple[tuple[bool, bool, bool], ...] = ()


#: Rounds of contexts and rewards the reference loops draw at once (neither depends on any
#: decision, and each has its own stream, so drawing ahead changes no number).
BATCH = 1024


def _rounds(inst: GameInstance, horizon: int
            ) -> Iterator[tuple[np.ndarray, int, list[float]]]:
    """Each of the next ``horizon`` rounds' true context, the row it came from (a data game's;
    :meth:`~..game.game.GameInstance.next_rounds`) and (E[r(1)], E[r(0)], r(1), r(0)), drawn
    in batches, never past ``horizon``: the streams end where round-by-round draws leave
    them."""
    done = 0
    while done < horizon:
        n = min(BATCH, horizon - done)
        rows = np.empty(n, dtype=np.int64)
        xs, outcomes = inst.next_rounds(n, rows)
        inst.draw_agents_ahead(n)
        yield from zip(xs, rows.tolist(), outcomes.tolist(), strict=True)
        done += n


def play(inst: GameInstance, learner: Learner, horizon: int,
         watch: Callable[[np.ndarray, bool, bool], None] | None = None) -> Iterator[Round]:
    """Play ``horizon`` rounds of ``inst`` with ``learner`` (bound and reset on ``inst``'s
    learner stream), through its per-round API, as a user's loop would: the paper's game, in
    which each round's outcome is learned before the next rule is published. ``watch``, if
    given, is called each round after the decision and before the learner learns from it, as
    ``watch(x, accepted, best)`` (the true context, the decision, π*'s): the learner is then
    as it was when it decided (a lemma about each round reads its estimate there)."""
    game = inst.game
    if game.delay or game.period > 1:
        raise ValueError(f"the per-round API plays the paper's game only (delay 0, period 1), "
                         f"got delay={game.delay}, period={game.period}: use play_published")
    bandit = game.feedback == "bandit"
    for x, row, (mean1, mean0, r1, rew0) in _rounds(inst, horizon):
        rule = learner.policy()
        x_obs, moved = inst.next_response(rule, x, row)
        a = learner.act(x_obs)
        best = mean1 >= mean0
        if watch is not None:
            watch(x, a, best)
        observed = a or bandit
        used = learner.update(x_obs, a, (r1 if a else rew0) if observed else None)
        yield Round(a, moved, used, abs(mean1 - mean0) if a != best else 0.0,
                    (r1 if best else rew0) - (r1 if a else rew0), float(rule.threshold),
                    r1 if a else rew0, ((used, a, moved),))


def play_published(inst: GameInstance, desk: Any, horizon: int,
                   watch: Callable[..., None] | None = None) -> Iterator[Round]:
    """Play ``horizon`` rounds of ``inst`` through a decision API, ``desk`` (a learner's
    ``desk``, or a stand-in with its ``publish``, ``rule_in_force``, ``decide`` and ``report``,
    as a service over the wire is): a rule published
    every ``period`` rounds, decisions by id, outcomes reported ``delay`` rounds late (at the
    end of round t + delay, in decision order). ``used`` is whether this round's own feedback
    was learned from, if it was learned this round. ``watch``, if given, is called each round
    before the decision as ``watch(row, rule, x, x_obs, moved)`` and what it returns with the
    decision once made (the engine counts groups with it)."""
    game = inst.game
    bandit = game.feedback == "bandit"
    arriving: defaultdict[int, list[tuple[int, float, bool]]] = defaultdict(list)
    moved_at: dict[int, bool] = {}
    period = game.period
    published = None
    for t, (x, row, (mean1, mean0, r1, rew0)) in enumerate(_rounds(inst, horizon), start=1):
        if t == 1 or (t - 1) % period == 0:
            published = desk.publish()
        rule = (published if period == 1 else desk.rule_in_force()).rule
        x_obs, moved = inst.next_response(rule, x, row)
        # The watcher reads the rule before the decision: deciding a rejection learns from it
        # at once, which may change what the learner believes.
        done = None if watch is None else watch(row, rule, x, x_obs, moved)
        decision = desk.decide(x_obs, id=t)
        a = decision.accepted
        if done is not None:
            done(a)
        best = mean1 >= mean0
        observed = a or bandit
        learned = []
        used = False
        if not observed:  # learned by decide(): a rejection has no outcome to wait for
            used = bool(decision.used)
            learned.append((used, False, moved))
        late = inst.next_delay()
        if observed:
            arriving[t + late].append((t, r1 if a else rew0, a))
            moved_at[t] = moved
        for i, reward, was in arriving.pop(t, ()):
            u = desk.report(i, reward)
            used = u if i == t else used
            learned.append((u, was, moved_at.pop(i)))
        yield Round(a, moved, used, abs(mean1 - mean0) if a != best else 0.0,
                    (r1 if best else rew0) - (r1 if a else rew0), float(rule.threshold),
                    r1 if a else rew0, tuple(learned))


def run_reference(game: Game, learner: Learner, seed: int, record_at: np.ndarray,
                  tally: GroupTally | None = None,
                  start: Callable[[Learner, GameInstance], None] | None = None
                  ) -> tuple[Learner, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`.simulate.run_one` on the reference path: the bound, run learner and the three
    output arrays (totals after each round of ``record_at``, and the rule in force at it);
    ``start``, if given, warm-starts the learner before round 1; ``tally``, if given, is filled
    with the run's totals by group."""
    inst = game.instance(seed)
    horizon = int(record_at[-1])
    bound = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    if start is not None:
        start(bound, inst)
    watch = None
    if tally is not None and tally.active:
        shift_agents = shift_model(game, bound)

        def watch(row, rule, x, x_obs, moved):
            beta = np.asarray(rule.beta, dtype=np.float64)
            shift = float(round_shift(shift_agents, beta))

            def done(a):
                count_round(tally.groups, tally.repaid, tally.counts, shift, row, beta,
                            float(rule.threshold), x, x_obs, bool(a), bool(moved))
            return done
    out_float = np.empty((len(record_at), len(FLOAT_COLUMNS)))
    out_int = np.empty((len(record_at), len(INT_COLUMNS)), dtype=np.int64)
    out_rule = np.empty((len(record_at), game.dimension + 1))
    target = inst.theta1 - inst.theta0
    regret = realized = earned = 0.0
    counts = [0] * len(INT_COLUMNS)  # accepted, moved, clean, learned, gamed_as_clean
    k = 0
    for t, r in enumerate(play_published(inst, bound.desk, horizon, watch), start=1):
        regret += r.regret
        realized += r.realized
        earned += r.reward
        counts[0] += r.accepted
        counts[1] += r.moved
        for used, accepted, moved in r.learned:
            counts[2] += used and accepted and not moved  # clean: learned, unmoved
            counts[3] += used
            counts[4] += used and moved
        if t == record_at[k]:
            out_float[k, 0] = regret
            out_float[k, 1] = realized
            est = bound.estimate()
            if est is None:
                out_float[k, 2] = np.nan
            else:
                err = 0.0
                for i in range(len(target)):  # index order, as the compiled loop sums it
                    diff = float(est[i]) - float(target[i])
                    err += diff * diff
                out_float[k, 2] = math.sqrt(err)
            out_float[k, 3] = earned
            out_int[k] = counts
            # The rule that decided round t: play_published publishes at the start of a
            # round, so at its end the rule in force is still that one.
            rule = bound.desk.rule_in_force().rule
            out_rule[k, :-1] = rule.beta
            out_rule[k, -1] = rule.threshold
            k += 1
    return bound, out_float, out_int, out_rule
