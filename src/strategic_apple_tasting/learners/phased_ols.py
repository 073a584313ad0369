"""The compiled core shared by every least-squares learner: a schedule of phases.

SA-OLS, its ablations, explore-then-commit and the unknown-horizon doubling scheme are all
sequences of four kinds of phase, each lasting a number of rounds:

=============  ===========================  ==============================================
phase          rule published               learns
=============  ===========================  ==============================================
``ACCEPT``     accept everyone              every point, into θ̂1 (nobody games: clean)
``REJECT``     reject everyone (bandit)     every point, into θ̂0 (nobody games)
``COMMIT``     β = θ̂1 − θ̂0, fixed           nothing
``GREEDY``     β = θ̂1 − θ̂0, refit           accepted points, clean ones only if
                                            ``clean_only``; rejected points into θ̂0 (bandit)
=============  ===========================  ==============================================

The threshold of COMMIT and GREEDY is r0, plus the agents' reach (δ‖β‖ for lazy agents) when
``shift``. A phase may start by clearing the fits (``CLEAR``: each explore-then-commit epoch of
the doubling scheme starts afresh) or by loading the exploration data kept so far (``LOAD``:
the unknown-horizon learner's option to keep clean exploration data when it switches to
SA-OLS). θ̂ is refit lazily, the first time it is needed after new data.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import clean_margin, reach
from ..game.policies import clean_above, norm
from ._invariants import cached, count, finite, fixed, flag, upper_triangular, within
from .base import LearnerKernels
from .least_squares import add_point, new_factor, solve

ACCEPT, REJECT, COMMIT, GREEDY = 0, 1, 2, 3
KEEP, CLEAR, LOAD = 0, 1, 2
#: A phase length meaning "for ever".
FOREVER = np.iinfo(np.int64).max // 4

# counts[...]: rounds seen, current phase, points in fit1, fit0, kept1, kept0, θ̂ stale (0/1)
_ROUNDS, _PHASE, _N1, _N0, _K1, _K0, _STALE = 0, 1, 2, 3, 4, 5, 6


class PhasedOLSState(NamedTuple):
    agents: Any  # the agent model the learner believes in (compiled NamedTuple)
    r0: float
    shift: bool
    clean_only: bool
    keep: bool  # accumulate ACCEPT/REJECT data in kept1/kept0 for a later LOAD
    unlock: bool  # publish accept-all when the GREEDY rule can accept no clean point
    phase_end: np.ndarray  # int64: round count at which each phase ends (cumulative)
    phase_kind: np.ndarray  # int64: ACCEPT, REJECT, COMMIT or GREEDY
    phase_start: np.ndarray  # int64: KEEP, CLEAR or LOAD, applied when the phase begins
    counts: np.ndarray  # int64, see _ROUNDS.. above
    fits: np.ndarray  # (4, d+1, d+1): QR factors of [X | r] for θ̂1, θ̂0, kept1, kept0
    theta: np.ndarray  # (2, d): θ̂1, θ̂0
    work: np.ndarray  # scratch, length d + 1
    radius: np.ndarray  # (1,): largest norm of a point fitted so far (R̂)


def new_state(d: int, agents: Any, r0: float, phases: list[tuple[int, int, int]], *,
              shift: bool = True, clean_only: bool = True, keep: bool = False,
              unlock: bool = False) -> PhasedOLSState:
    """State for a schedule of ``(kind, rounds, start)`` phases; the last one lasts for ever."""
    lengths = [min(int(rounds), FOREVER) for _, rounds, _ in phases[:-1]] + [FOREVER]
    return PhasedOLSState(
        agents=agents, r0=float(r0), shift=shift, clean_only=clean_only, keep=keep,
        unlock=unlock,
        phase_end=np.cumsum(lengths).astype(np.int64),
        phase_kind=np.array([k for k, _, _ in phases], dtype=np.int64),
        phase_start=np.array([s for _, _, s in phases], dtype=np.int64),
        counts=np.zeros(7, dtype=np.int64),
        fits=np.stack([new_factor(d)] * 4), theta=np.zeros((2, d)), work=np.zeros(d + 1),
        radius=np.zeros(1))


@njit(inline="always")
def _refit(state):
    counts = state.counts
    if counts[_STALE]:
        theta = state.theta
        solve(state.fits[0], theta[0])
        solve(state.fits[1], theta[1])
        counts[_STALE] = 0


@njit(inline="always")
def _policy(state, rng, beta):
    d = beta.shape[0]
    kind = state.phase_kind[state.counts[_PHASE]]
    if kind == ACCEPT or kind == REJECT:
        for i in range(d):
            beta[i] = 0.0
        return -1.0 if kind == ACCEPT else 1.0
    _refit(state)
    theta = state.theta
    for i in range(d):
        beta[i] = theta[0, i] - theta[1, i]
    threshold = state.r0
    if state.shift:
        threshold += reach(state.agents, beta)
    if (state.unlock and kind == GREEDY
            and norm(beta) * state.radius[0] <= threshold + clean_margin(state.agents, beta)):
        for i in range(d):
            beta[i] = 0.0
        return -1.0
    return threshold


@njit(inline="always")
def _add(state, which, x, reward):
    add_point(state.fits[which], x, reward, state.work)
    size = norm(x)
    if size > state.radius[0]:
        state.radius[0] = size
    state.counts[_N1 + which] += 1
    state.counts[_STALE] = 1


@njit(inline="always")
def _begin_phase(state, phase):
    start = state.phase_start[phase]
    if start == KEEP:
        return
    # Element loops, not slice assignment: the engine's loop runs without the NRT, and a
    # slice copy may allocate.
    fits = state.fits
    counts = state.counts
    n = fits.shape[1]
    for which in range(2):
        for i in range(n):
            for j in range(n):
                fits[which, i, j] = 0.0 if start == CLEAR else fits[which + 2, i, j]
        counts[_N1 + which] = 0 if start == CLEAR else counts[_K1 + which]
    theta = state.theta
    for i in range(theta.shape[1]):
        theta[0, i] = 0.0
        theta[1, i] = 0.0
    counts[_STALE] = 1


@njit(inline="always")
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    counts = state.counts
    phase = counts[_PHASE]
    kind = state.phase_kind[phase]
    used = False
    if observed:
        if kind == ACCEPT or kind == REJECT:
            which = 0 if accepted else 1
            _add(state, which, x, reward)
            if state.keep:
                add_point(state.fits[which + 2], x, reward, state.work)
                counts[_K1 + which] += 1
            used = True
        elif kind == GREEDY:
            if accepted:
                if not state.clean_only or clean_above(beta, threshold, x,
                                                       clean_margin(state.agents, beta)):
                    _add(state, 0, x, reward)
                    used = True
            else:  # bandit: nobody games to be rejected
                _add(state, 1, x, reward)
                used = True
    counts[_ROUNDS] += 1
    while counts[_ROUNDS] >= state.phase_end[counts[_PHASE]]:
        counts[_PHASE] += 1
        _begin_phase(state, counts[_PHASE])
    return used


@njit(inline="always")
def _estimate(state, out):
    _refit(state)
    theta = state.theta
    for i in range(out.shape[0]):
        out[i] = theta[0, i] - theta[1, i]
    return state.counts[_N1] > 0


def check_state(state: PhasedOLSState, template: PhasedOLSState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: the schedule
    and the belief as the parameters make them, the phase index inside the schedule and the one
    the round count is in, counts >= 0, the fits finite and triangular, θ̂ their fit when the
    state says it is current."""
    fixed(state.agents, template.agents, f"{where}.agents")
    for name in ("phase_end", "phase_kind", "phase_start"):
        fixed(getattr(state, name), getattr(template, name), f"{where}.{name}")
    counts = state.counts
    # No run comes near 2^61 rounds; a count beyond would reach the end of the schedule (the
    # last phase ends after FOREVER more rounds) and index past it.
    rounds = count(counts[_ROUNDS], f"{where}.counts[{_ROUNDS}] (rounds)", 0, FOREVER // 2)
    ends = state.phase_end
    # The kernels index the schedule by the phase and advance it while the round count has
    # reached the phase's end: it must be the phase the count is in (the first one before any
    # round, even one of no rounds).
    phase = count(counts[_PHASE], f"{where}.counts[{_PHASE}] (the phase)", 0, len(ends) - 1)
    expected = int(np.searchsorted(ends, rounds, side="right"))
    if rounds >= ends[-1] or (phase != expected and (rounds, phase) != (0, 0)):
        raise ValueError(f"{where}.counts[{_PHASE}] (the phase) must be {expected}, the phase "
                         f"of round count {rounds}, got {phase}")
    for k in (_N1, _N0, _K1, _K0):  # points learned since a clear: one a round at most
        count(counts[k], f"{where}.counts[{k}] (points)", 0, rounds)
    flag(counts[_STALE], f"{where}.counts[{_STALE}] (θ̂ stale)")
    upper_triangular(state.fits, f"{where}.fits")
    finite(state.theta, f"{where}.theta")
    within(state.radius, f"{where}.radius", 0.0, np.inf)
    if not counts[_STALE]:
        theta = np.zeros_like(state.theta)
        solve(state.fits[0], theta[0])
        solve(state.fits[1], theta[1])
        cached(state.theta, theta, f"{where}.theta", f"the fit of {where}.fits")


KERNELS = LearnerKernels(PhasedOLSState, _policy, _update, _estimate, check=check_state)


def phase_ends(phases: list[tuple[int, int, int]]) -> list[int]:
    """Rounds at which each phase but the last (which lasts for ever) ends."""
    ends = np.cumsum([min(int(rounds), FOREVER) for _, rounds, _ in phases[:-1]])
    return [int(e) for e in ends if e < FOREVER]


def warm_up(d: int, bandit: bool) -> list[tuple[int, int, int]]:
    """The warm-up of `alg:sa-ols`: accept all for d rounds (bandit: then reject all for d)."""
    phases = [(ACCEPT, d, KEEP)]
    if bandit:
        phases.append((REJECT, d, KEEP))
    return phases
