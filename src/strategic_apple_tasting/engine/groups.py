"""Who pays: a data game's totals by group, kept by both of the engine's paths.

A data set may give each row a group (:class:`~..game.data.DataContexts`' ``groups``: German
credit's sex and age band, FICO's four groups). No learner sees it; the engine counts, per
group, over a run: the applicants, those accepted, the expected number of accepted who repay
(the rows' probabilities of repaying, so a recorded outcome counts 0 or 1), those who moved,
the total distance moved, and the **honest applicants rejected by the shift**: applicants who
did not move, were rejected, and whose true score ⟨β, x⟩ reaches the threshold less the shift
a strategy-aware learner adds for gaming (δ·reach(β) in the learner's own belief). They would
have been accepted by the rule before it was shifted; they are rejected because others game
(Milli et al. 2019's social burden, here counted in applicants: with one shared budget every
applicant of the band can move, so it is the truthful and those with a smaller budget who
pay). A learner that does not shift has no such band.

:class:`GroupTally` is what both paths fill (the compiled loop in :mod:`.kernel`, the reference
loop in :mod:`.reference`), to the same bits; a data game's results table has one list column
per count (``group_<count>``, one entry per group, at each run's last round), which
:func:`~strategic_apple_tasting.scenarios.groups.group_summary` turns into a lender's table.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import compiled_agents, reach
from ..game.policies import score
from ..learners.binding import compiled_belief_of
from ..learners.budget import BudgetBelief, estimating_belief

#: What a tally counts per group, in the order of its columns (and of the table's
#: ``group_<name>`` list columns, one entry per group).
GROUP_COUNTS = ("applicants", "accepted", "repaid", "moved", "distance", "burden")


class GroupTally(NamedTuple):
    """Per-group totals of one run: ``groups`` (n,) int64 the group of each row (empty: no
    groups, nothing counted), ``repaid`` (n,) each row's probability of repaying, and
    ``counts`` (G, 6), float64, the running totals of :data:`GROUP_COUNTS`."""

    groups: np.ndarray
    repaid: np.ndarray
    counts: np.ndarray

    @property
    def active(self) -> bool:
        return self.groups.shape[0] > 0


@njit(inline="always")
def count_round(groups, repaid, counts, shift, row, beta, threshold, x, x_obs, accepted, moved):
    """Add one round to the tally (compiled; the engine's both paths call it): the row's group,
    whether it was accepted (and its chance of repaying), moved (and how far), or was honest
    and rejected inside the learner's ``shift`` (:func:`round_shift`, read before the learner
    learns from the round)."""
    g = groups[row]
    counts[g, 0] += 1.0
    if accepted:
        counts[g, 1] += 1.0
        counts[g, 2] += repaid[row]
    if moved:
        counts[g, 3] += 1.0
        dist = 0.0
        for i in range(x.shape[0]):
            step = x_obs[i] - x[i]
            dist += step * step
        counts[g, 4] += math.sqrt(dist)
    elif not accepted and shift > 0.0 and score(beta, x) >= threshold - shift:
        counts[g, 5] += 1.0


@njit
def round_shift(shift_agents, beta):
    """The learner's shift this round: ``shift_agents``' reach on β (:func:`shift_model`)."""
    return reach(shift_agents, beta)


def no_tally() -> GroupTally:
    """The tally of a game without groups: nothing is counted."""
    return GroupTally(np.empty(0, dtype=np.int64), np.empty(0), np.zeros((0, len(GROUP_COUNTS))))


def new_tally(game: Any) -> GroupTally:
    """A zeroed tally for one run of ``game`` (:func:`no_tally` if its rows have no groups)."""
    contexts = game.contexts
    groups = getattr(contexts, "groups", None)
    if not game.has_rows or groups is None:
        return no_tally()
    # Writable copies where the caller's are not (pandas hands out read-only arrays): a
    # read-only array is another type to compiled code, a kernel compiled again.
    return GroupTally(np.require(groups, dtype=np.int64, requirements=["C", "W"]),
                      np.require(contexts.repaid, dtype=np.float64, requirements=["C", "W"]),
                      np.zeros((len(contexts.group_names), len(GROUP_COUNTS))))


def shift_belief(learner: Any) -> BudgetBelief | None:
    """The belief (a :class:`~..learners.budget.BudgetBelief`, as compiled code receives it)
    whose reach is ``learner``'s shift (a reset learner): the live belief of a learner
    estimating its budget (the learner updates its arrays as δ̂ moves), the belief of a
    strategy-aware learner with a budget, else None (it does not shift). What the engine's
    loops and the decision service both read."""
    live = estimating_belief(learner.state)
    if live is not None:
        return live
    if type(learner).tags().strategy_aware and "delta" in learner.get_params():
        return compiled_belief_of(learner)
    return None


def shift_model(game: Any, bound: Any) -> BudgetBelief:
    """:func:`shift_belief` as the engine's loop receives it, a
    :class:`~..learners.budget.BudgetBelief` over the game's compiled agent type: the learner's
    belief if its model is of that type or it estimates δ, else the game's agents with the
    learner's δ, or with budget 0 for a learner that does not shift (no shift, no band). Every
    built-in model is one compiled type (:class:`~..game.agents.AgentsCore`) and a told δ is
    the same type as an estimated one, so the loop is compiled once for all of them."""
    belief = shift_belief(bound)
    if belief is None:
        return BudgetBelief.known(compiled_agents(game.agents._replace(delta=0.0)))
    if belief.estimating or type(belief.base) is type(compiled_agents(game.agents)):
        return belief
    return BudgetBelief.known(compiled_agents(game.agents._replace(delta=float(belief.delta))))


def group_names(game: Any) -> tuple[str, ...]:
    """The group names of a data game's rows (empty if none)."""
    contexts = game.contexts
    if not game.has_rows or getattr(contexts, "groups", None) is None:
        return ()
    return tuple(contexts.group_names)
