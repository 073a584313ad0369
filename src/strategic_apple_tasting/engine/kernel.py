"""The compiled simulation loop: one seed, one learner, T rounds, random numbers drawn inside.

Per round (paper `fig:summary`): the learner commits to (β, c); the agent draws its true context
and best-responds; the learner acts on the observed context; the noise of this round is drawn
(always, so every learner meets the same noise); feedback goes back to the learner. Regret and
ground-truth counters accumulate and are written at the recorded rounds.

A learner that may publish a general rule g(x') ≥ 0 (one whose kernels have a ``rule``: LinUCB)
gets, chosen at compile time by its state's class, a loop in which agents answer the rule by
numerical best response and the decision is g(x') ≥ 0, unless the learner says the round's rule
is its linear part. Every other learner compiles to the linear-threshold loop as before.

The package's learners have the agents' response to a linear rule inlined into their loops
(compiled at set-up by ``sat compile``, where the few per cent it gains pay); a compiled learner
from outside the package calls :func:`respond_linear` instead, compiled once for all, so that
its loop compiles in about half the time (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba.extending import overload

from .._jit import NO_NRT, njit, state_class
from .._stamps import outside_package
from ..game.agents import reach, respond, with_row_budget
from ..game.best_response import respond_rule, rule_accepts, scratch_rows
from ..game.contexts import draw_context
from ..game.policies import accepts, score
from ..game.rewards import reward_draw, reward_mean
from ..learners.base import (
    has_rule,
    learner_estimate,
    learner_linear,
    learner_policy,
    learner_update,
)
from ..learners.budget import observe_point
from .groups import GroupTally, count_round

#: Columns of the float and integer outputs of :func:`run_rounds`, in order (``reward``: the
#: learner's total realized reward, a data game's profit).
FLOAT_COLUMNS = ("regret", "realized_regret", "theta_error", "reward")
INT_COLUMNS = ("accepted", "moved", "clean", "learned", "gamed_as_clean")
#: Scratch rows of the loop: x, x_obs, β, the estimate, then the best response's.
_ROWS = 4
#: What the loop learns next at the end of a round (a slot of a decision awaiting its outcome
#: otherwise): this round's own feedback, the chain of outcomes arriving now, nothing more.
NOW, CHAIN, DONE = -2, -3, -1


def respond_and_act(state, agents, rng, beta, threshold, x, x_obs, work):
    """Compiled-only: the agent's report of this round into ``x_obs`` under the learner's rule,
    and the learner's decision on it; returns (moved, accepted)."""
    raise NotImplementedError("compiled-only")


@njit(inline="always")
def _act_linear(agents, rng, beta, threshold, x, x_obs):
    moved = respond(agents, rng, beta, threshold, x, x_obs)
    return moved, accepts(beta, threshold, x_obs)


@njit(inline="never", **NO_NRT)
def respond_linear(agents, rng, beta, threshold, x, x_obs):
    """The agent's report against a linear threshold, and whether it is accepted: compiled once
    and called by the loop of a learner from outside the package (see below)."""
    return _act_linear(agents, rng, beta, threshold, x, x_obs)


def _called(state) -> bool:
    """Whether the loop for ``state`` calls :func:`respond_linear` instead of inlining the
    agents' response. The package's learners inline it (their loops are compiled at set-up,
    and inlined it runs faster); a learner from outside the package calls it, compiled once
    for every learner: retyping and inlining the agents' models is most of the time its loop
    takes to compile."""
    cls = state_class(state)
    return cls is not None and outside_package(cls)


@overload(respond_and_act, inline="always")
def _respond_and_act_overload(state, agents, rng, beta, threshold, x, x_obs, work):
    act = respond_linear if _called(state) else _act_linear
    if not has_rule(state_class(state)):
        return lambda state, agents, rng, beta, threshold, x, x_obs, work: act(
            agents, rng, beta, threshold, x, x_obs)

    def general(state, agents, rng, beta, threshold, x, x_obs, work):
        if learner_linear(state):
            return act(agents, rng, beta, threshold, x, x_obs)
        moved = respond_rule(agents, rng, state, beta, x, x_obs, work)
        return moved, rule_accepts(state, x_obs, work[0])
    return general


class Truth(NamedTuple):
    """What the game knows and the learner does not: each arm's θ (``theta0`` read under bandit
    feedback only), the feedback mode, the reward of rejecting under apple tasting, the noise."""

    theta1: np.ndarray
    theta0: np.ndarray
    bandit: bool
    r0: float
    sigma: float


class Streams(NamedTuple):
    """The seed's random streams, one per part of the game (common random numbers)."""

    contexts: np.random.Generator
    agents: np.random.Generator
    noise: np.random.Generator
    learner: np.random.Generator
    delays: np.random.Generator


class Schedule(NamedTuple):
    """When things happen: the rounds recorded (the last is the horizon), the rule's period, the
    outcomes' delay (``uniform``: drawn from 0..2·delay each round)."""

    record_at: np.ndarray
    period: int
    delay: int
    uniform: bool


class Groups(NamedTuple):
    """A data game's rows by group (:mod:`.groups`; ``tally.groups`` empty: nothing counted),
    the agents whose reach is the learner's shift, and each row's budget (empty: the model's)."""

    tally: GroupTally
    shift_agents: Any
    row_budgets: np.ndarray


class Outputs(NamedTuple):
    """Row k: the totals after ``record_at[k]`` (:data:`FLOAT_COLUMNS`, :data:`INT_COLUMNS`),
    and the rule in force at that round (``rules[k]``: β, then the threshold), which a
    held-out protocol scores on applicants the learner never met (:mod:`.holdout`)."""

    floats: np.ndarray
    ints: np.ndarray
    rules: np.ndarray


class _Pending(NamedTuple):
    """Decisions awaiting their outcomes: slot t mod K holds round t's, for K = longest delay
    + 1 (it is learned before the slot is reused), chained per arrival round in decision
    order (bucket[0, b] and bucket[1, b]: first and last of arrival round ≡ b mod K)."""

    vec: np.ndarray  # x', and β of the rule it was decided under
    num: np.ndarray  # the rule's threshold, the reward
    int: np.ndarray  # accepted, moved, next in its chain
    bucket: np.ndarray


def run_rounds(state, contexts, agents, rewards, truth, streams, schedule, groups, out):
    """Simulate rounds 1..record_at[-1] of one seed (the named parts above); row k of ``out``
    holds totals after ``schedule.record_at[k]``. Allocates the loop's scratch and runs the
    compiled loop (:func:`_rounds`).

    The learner publishes every ``schedule.period`` rounds; an observed outcome reaches it
    ``schedule.delay`` rounds after its decision. ``contexts``, ``agents`` and ``rewards`` are
    the game's models (:mod:`..game`), resolved at compile time. A data game with groups adds
    each round to ``groups.tally``, with the learner's shift read from ``groups.shift_agents``;
    with per-group budgets the agent of row i games with ``groups.row_budgets[i]``.
    """
    d = truth.theta1.shape[0]
    scratch = np.empty((_ROWS + scratch_rows(d), d))
    slots = (2 * schedule.delay if schedule.uniform else schedule.delay) + 1
    pending = _Pending(np.empty((slots, 2, d)), np.empty((slots, 2)),
                       np.empty((slots, 3), dtype=np.int64),
                       np.full((2, slots), -1, dtype=np.int64))
    _rounds(state, contexts, agents, rewards, truth, streams, schedule, groups, out, scratch,
            pending)


# The loop is compiled without the NRT (no reference counting): every function it inlines binds
# its array arguments to new variables, and every ``state.field`` access takes a reference; the
# NRT's incref/decref pairs around the inner loops survive LLVM's refcount pruning and cost an
# atomic instruction each (~60 per round for SA-OLS, more than half its time). Nothing in the
# loop allocates (the compiler rejects it if it does); ``run_rounds`` owns the scratch arrays.
# ``run_rounds`` is plain Python and calls the loop through its dispatcher (numba unboxes the
# arguments without the NRT): a compiled caller would link the loop's module into its own and
# have LLVM optimize it all again when it is finalized, two of the ten seconds a new state
# class's loop took to compile, and a cache entry per state class.
@njit(inline="never", **NO_NRT)
def _rounds(state, contexts, agents, rewards, truth, streams, schedule, groups, out, scratch,
            pending):
    """The compiled engine's loop: every round of one run, recorded on the grid.

    Why it is long: the round (draw, publish, respond, decide, reward, learn, tally, record,
    with delays and periods) is one loop over locals; its steps are already calls to the
    learner's, the agents' and the contexts' kernels, and what is left inline is the
    bookkeeping those calls share, which split functions would pass back and forth."""
    theta1, theta0, bandit, r0, sigma = (truth.theta1, truth.theta0, truth.bandit, truth.r0,
                                         truth.sigma)
    context_rng, agent_rng, noise_rng = streams.contexts, streams.agents, streams.noise
    learner_rng, delay_rng = streams.learner, streams.delays
    record_at, period = schedule.record_at, schedule.period
    delay, uniform = schedule.delay, schedule.uniform
    tally, shift_agents, row_budgets = groups.tally, groups.shift_agents, groups.row_budgets
    group_of, repaid, group_counts = tally.groups, tally.repaid, tally.counts
    out_float, out_int, out_rule = out.floats, out.ints, out.rules
    pend_vec, pend_num, pend_int, bucket = pending.vec, pending.num, pending.int, pending.bucket
    d = theta1.shape[0]
    x = scratch[0]
    x_obs = scratch[1]
    beta = scratch[2]
    est = scratch[3]
    work = scratch[_ROWS:]
    regret = 0.0
    realized = 0.0
    earned = 0.0
    n_accepted = 0
    n_moved = 0
    n_clean = 0
    n_learned = 0
    n_gamed_clean = 0
    k = 0
    threshold = 0.0
    slots = bucket.shape[1]
    horizon = record_at[record_at.shape[0] - 1]
    for t in range(1, horizon + 1):
        row = draw_context(contexts, context_rng, t, x)  # its own stream: drawn first, the CPU
        if period == 1 or (t - 1) % period == 0:  # overlaps it with the learner's chain
            threshold = learner_policy(state, learner_rng, beta)
        agent = with_row_budget(agents, row_budgets, row)  # the model itself with one budget
        moved, a = respond_and_act(state, agent, agent_rng, beta, threshold, x, x_obs, work)
        shift = reach(shift_agents, beta) if group_of.shape[0] > 0 else 0.0

        mean1 = reward_mean(rewards, theta1, x, row)
        r1 = reward_draw(rewards, mean1, sigma, noise_rng, row)
        if bandit:
            mean0 = score(theta0, x)
            rew0 = mean0 + sigma * noise_rng.standard_normal()
        else:
            mean0 = r0
            rew0 = r0
        best = mean1 >= mean0
        if a != best:
            regret += abs(mean1 - mean0)
        realized += (r1 if best else rew0) - (r1 if a else rew0)
        n_accepted += a
        n_moved += moved
        if group_of.shape[0] > 0:
            count_round(group_of, repaid, group_counts, shift, row, beta, threshold, x, x_obs, a,
                        moved)

        observed = a or bandit
        reward = r1 if a else rew0
        earned += reward
        # What the learner learns at the end of round t, in order: this round's own feedback
        # if it is learned now (the paper's game, or a rejection under apple tasting, which
        # has nothing to wait for), then the late outcomes arriving now, in decision order.
        # One call site of the learner's update: it is inlined into the loop once.
        e = NOW if slots == 1 or not observed else CHAIN
        if slots > 1:
            late = delay
            if uniform and delay > 0:
                # As GameInstance.next_delay: drawn every round, a double scaled to 0..2·delay.
                late = int(delay_rng.random() * (2 * delay + 1))
            if observed:
                slot = t % slots
                for i in range(d):
                    pend_vec[slot, 0, i] = x_obs[i]
                    pend_vec[slot, 1, i] = beta[i]
                pend_num[slot, 0] = threshold
                pend_num[slot, 1] = reward
                pend_int[slot, 0] = a
                pend_int[slot, 1] = moved
                pend_int[slot, 2] = -1
                b = (t + late) % slots
                if bucket[0, b] < 0:
                    bucket[0, b] = slot
                else:
                    pend_int[bucket[1, b], 2] = slot
                bucket[1, b] = slot
        while e != DONE:
            if e == CHAIN:
                b = t % slots
                e = bucket[0, b]
                bucket[0, b] = -1
                if e < 0:
                    break
            if e == NOW:
                rule_beta, rule_threshold, point = beta, threshold, x_obs
                was, was_moved, got, seen = a, moved, reward, observed
                after = CHAIN if slots > 1 else DONE
            else:
                rule_beta, rule_threshold, point = pend_vec[e, 1], pend_num[e, 0], pend_vec[e, 0]
                was, was_moved, got, seen = pend_int[e, 0] != 0, pend_int[e, 1] != 0, \
                    pend_num[e, 1], True
                after = pend_int[e, 2] if pend_int[e, 2] >= 0 else DONE
            observe_point(state, rule_beta, rule_threshold, point)  # delta="estimate" only
            used = learner_update(state, learner_rng, rule_beta, rule_threshold, point, was, got,
                                  seen)
            # clean: an accepted point learned from whose features are the agent's true ones
            # (not moved): a learner that learns from gamed points gets no credit for them.
            n_clean += used and was and not was_moved
            n_learned += used  # every point learned from (bandit: rejected ones fit θ̂0)
            n_gamed_clean += used and was_moved
            e = after

        if t == record_at[k]:
            out_float[k, 0] = regret
            out_float[k, 1] = realized
            if learner_estimate(state, est):
                err = 0.0
                for i in range(d):
                    diff = est[i] - (theta1[i] - theta0[i])
                    err += diff * diff
                out_float[k, 2] = math.sqrt(err)
            else:
                out_float[k, 2] = np.nan
            out_float[k, 3] = earned
            out_int[k, 0] = n_accepted
            out_int[k, 1] = n_moved
            out_int[k, 2] = n_clean
            out_int[k, 3] = n_learned
            out_int[k, 4] = n_gamed_clean
            for i in range(d):
                out_rule[k, i] = beta[i]
            out_rule[k, d] = threshold
            k += 1
