"""EXP3.P weights over an implicit grid of experts: the untouched ones as one class.

EXP3.P (Auer, Cesa-Bianchi, Freund and Schapire 2002, "The nonstochastic multiarmed bandit
problem", algorithm Exp3.P) keeps a weight per expert i of E (K = |E|), draws from
p_i = (1 − γ)·w_i/W + γ/K and, after the reward x ∈ [0, 1] of the played expert i_t, sets for
*every* i

    w_i ← w_i·exp((γ/(3K))·(x̂_i + α/(p_i·sqrt(KT)))),   x̂_i = x/p_i if i = i_t else 0,

starting from w_i = exp((αγ/3)·sqrt(T/K)). The confidence bonus α/(p_i·sqrt(KT)) moves every
weight every round, so EXP3-SAE's "only the played expert changes" (:mod:`.lazy_experts`) does
not carry over. But an expert never played has x̂ = 0 in every round, and experts with equal
weights have equal p and so get equal updates: all never-played ("untouched") experts keep one
common weight. We store

* one log weight for the class of the K − k untouched experts, and
* one log weight per touched (played at least once) expert, in a slot; slots are named by the
  hash table of a :class:`~.lazy_experts.ExpertsState` used as an index only (a new expert is
  inserted by scaling its weight there by 1; those weights and their sum tree are never read).
  When K ≤ capacity that index is dense: every expert has a slot (C order) from the start and
  there is no untouched class.

So a round costs O(d + k) time, k = touched experts ≤ min(t, K): every touched weight is
rewritten each round (its bonus depends on its own p, which depends on its weight nonlinearly,
so there is no common factor to defer). This is not EXP3-SAE's O(d + log T); it is
O(min(T, K)) where a dense implementation is O(K) = O(n^d), so a grid of 10^30 experts runs at
moderate T (T² work overall). Memory is O(capacity·d).

Numerics. Everything is in log space: K may be 2^1000 and a log weight grows by up to
1/3 + α/(3·sqrt(KT)) a round (x/p ≤ K/γ). ``share[s] = exp(log w_s − top)`` and
``share_u = exp(log w_u − top)`` hold the weights scaled by the largest one (``top``, the
largest log weight, so every share is ≤ 1 and the largest is 1), and
``total = (K − k)·share_u + Σ_s share[s]`` ∈ [1, K], so log W = top + log(total) and
p_i = (1 − γ)·share_i/total + γ/K. :func:`update` recomputes every share and the total from
the new log weights in each round (two passes: update and find the new max, then exponentiate
and sum), so no rounding error accumulates except in the log weights themselves, running sums
of the increments.

Sampling procedure (:func:`sample`), fixed so a test oracle can mirror it draw by draw (it is
:mod:`.lazy_experts`'s procedure with these weights):

1. ``u = rng.random()``. If ``u < γ``: a uniform expert, ``rng.integers(0, n)`` once per axis
   in axis order (drawn without allocating, as :mod:`.lazy_experts` does). Done.
2. Else ``U = (K − k)·share_u`` (0 when dense), ``v = rng.random()·total``. If ``v < U``: a
   uniform *untouched* expert by rejection (draw the d axis indices as in step 1; redraw the
   whole expert while it is touched). Else the touched expert whose interval of the cumulative
   sum of ``share`` in slot order (order of first touch; dense: C order) contains ``v − U``
   (a linear scan: the round is O(k) anyway); if rounding leaves ``v − U`` past the end, the
   last slot with a positive share (if there is none, an untouched expert as above).

The returned probability is p(e) = (1 − γ)·share(e)/total + γ/K.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import njit
from ._invariants import finite, within
from .lazy_experts import (
    ExpertsState,
    _axis_index,
    check_experts,
    find_slot,
    n_touched,
    new_experts,
    scale_log_weight,
    slot_coords,
)

#: ``reals``: log weight of an untouched expert, its share exp(log w_u − top), the largest log
#: weight ``top`` and ``total`` = W·e^(−top).
_LOGW_U, _SHARE_U, _TOP, _TOTAL = 0, 1, 2, 3


class Exp3PWeights(NamedTuple):
    """EXP3.P weights of a grid's experts; build with :func:`new_weights`."""

    index: ExpertsState  # names the slots: touched experts (lazy) or all of them (dense)
    log_w: np.ndarray  # float64 (slots,): log weight of each slot
    share: np.ndarray  # float64 (slots,): exp(log w − top)
    reals: np.ndarray  # float64 [log w_u, share_u, top, total]

    @property
    def n_experts(self) -> float:
        """K = |E| as a float."""
        return self.index.n_experts

    @property
    def untouched_log_weight(self) -> float:
        """The common log weight of the experts never played (lazy mode; unused when dense)."""
        return float(self.reals[_LOGW_U])

    @property
    def log_total(self) -> float:
        """log W, the log of the sum of all K weights."""
        return float(self.reals[_TOP] + math.log(self.reals[_TOTAL]))


def new_weights(d: int, points_per_axis: int, capacity: int,
                log_w0: float = 0.0) -> Exp3PWeights:
    """EXP3.P weights, all exp(``log_w0``), of the n^d experts of a grid (n = ``points_per_axis``).

    ``capacity`` bounds the number of distinct experts that may ever be played (pass about
    min(T, |E|)); touching more raises ``ValueError`` in :func:`update`. If n^d ≤ capacity
    every expert has a slot from the start (dense).

    Examples
    --------
    >>> w = new_weights(d=20, points_per_axis=32, capacity=1000, log_w0=0.5)
    >>> w.index.dense, w.n_experts == 2.0 ** 100, w.log_total == 0.5 + 100 * math.log(2)
    (False, True, True)
    """
    if not math.isfinite(log_w0):
        raise ValueError(f"log_w0 must be a finite number, got {log_w0!r}")
    index = new_experts(d, points_per_axis, capacity)
    slots = index.capacity
    reals = np.array([log_w0, 1.0, log_w0, index.n_experts])  # dense: K shares of 1; lazy: K·1
    return Exp3PWeights(index=index, log_w=np.full(slots, float(log_w0)), share=np.ones(slots),
                        reals=reals)


def check_weights(w: Exp3PWeights, template: Exp3PWeights, where: str) -> None:
    """The invariants the kernels rely on, for weights read from a saved file: the index's
    (:func:`.lazy_experts.check_experts`), the touched slots' log weights finite, the largest
    log weight their maximum (with the untouched class's, lazy mode), every share in [0, 1],
    and the total in [1, K] (the largest share is 1)."""
    index = w.index
    check_experts(index, template.index, f"{where}.index")
    k = int(index.ints[0])  # slots in use, checked by check_experts
    finite(w.log_w[:k], f"{where}.log_w")
    within(w.share[:k], f"{where}.share", 0.0, 1.0)
    finite(w.reals, f"{where}.reals")
    top = np.max(w.log_w[:k], initial=-np.inf)
    if not index.dense:
        top = max(top, w.reals[_LOGW_U])
    if w.reals[_TOP] != top:
        raise ValueError(f"{where}.reals[{_TOP}] (the largest log weight) must be {float(top)!r}, "
                         f"got {float(w.reals[_TOP])!r}")
    within(w.reals[_SHARE_U], f"{where}.reals[{_SHARE_U}] (the untouched share)", 0.0, 1.0)
    within(w.reals[_TOTAL], f"{where}.reals[{_TOTAL}] (the total)", 1.0, index.n_experts)


@njit
def _p(share, total, gamma, n_experts):
    return (1.0 - gamma) * (share / total) + gamma / n_experts


@njit
def expert_log_weight(w, coords):
    """log w(e) of the expert at ``coords``."""
    slot = find_slot(w.index, coords)
    return w.reals[_LOGW_U] if slot < 0 else w.log_w[slot]


@njit
def expert_probability(w, coords, gamma):
    """p(e) = (1 − γ)·w(e)/W + γ/K for the current weights."""
    slot = find_slot(w.index, coords)
    share = w.reals[_SHARE_U] if slot < 0 else w.share[slot]
    return _p(share, w.reals[_TOTAL], gamma, w.index.n_experts)


@njit
def sample(w, rng, gamma, coords_out):
    """Draw e ~ p into ``coords_out`` (per-axis indices) and return p(e).

    Follows the procedure of the module docstring exactly. O(d + k) (lazy: plus the expected
    K/(K − k) draws of the rejection, entered with probability (1 − γ)·(K − k)·w_u/W).
    """
    index, share, reals = w.index, w.share, w.reals
    n, d, n_experts = index.n, index.d, index.n_experts
    k = n_touched(index)
    u = rng.random()
    slot = -1
    uniform = u < gamma
    if not uniform:
        untouched = (n_experts - k) * reals[_SHARE_U]
        v = rng.random() * reals[_TOTAL]
        uniform = v < untouched
        if not uniform:
            v -= untouched
            last = -1
            for s in range(k):
                e = share[s]
                if e > 0.0:
                    last = s
                    if v < e:
                        break
                    v -= e
            # the slot found, or the last positive one if rounding ran past the end (none: the
            # untouched, whose mass then was all of the total)
            slot = last
            uniform = last < 0
            if not uniform:
                slot_coords(index, slot, coords_out)
    if uniform:  # u < γ, or uniform over the untouched by rejection
        while True:
            for i in range(d):
                coords_out[i] = _axis_index(rng, n)
            slot = find_slot(index, coords_out)
            if u < gamma or slot < 0:
                break
    return _p(reals[_SHARE_U] if slot < 0 else share[slot], reals[_TOTAL], gamma, n_experts)


@njit
def update(w, coords, x, gamma, bonus):
    """One EXP3.P update after expert ``coords`` was played and earned ``x`` ∈ [0, 1].

    ``bonus`` is α/sqrt(KT). Every weight gets log w_i += (γ/(3K))·(x̂_i + bonus/p_i) with
    p_i the probabilities before the update; the played expert is touched (given a slot) if new.
    Raises ``ValueError`` if it is new and ``capacity`` experts are already touched. O(d + k).
    """
    index, log_w, share, reals = w.index, w.log_w, w.share, w.reals
    n_experts = index.n_experts
    rate = gamma / (3.0 * n_experts)
    total = reals[_TOTAL]
    k = n_touched(index)
    played = find_slot(index, coords)
    if played < 0 and k >= index.capacity:  # before anything changes
        raise ValueError("exp3p experts: capacity exceeded (more distinct experts played than "
                         "the capacity given to new_weights)")
    top = -np.inf
    for s in range(k):
        p = _p(share[s], total, gamma, n_experts)
        gain = bonus + x if s == played else bonus
        new = log_w[s] + rate * (gain / p)
        log_w[s] = new
        if new > top:
            top = new
    log_wu = reals[_LOGW_U]
    if not index.dense:  # the untouched class (never empty in lazy mode: capacity < K)
        p = _p(reals[_SHARE_U], total, gamma, n_experts)
        if played < 0:  # a new expert leaves the class with the played expert's update
            scale_log_weight(index, coords, 0.0)  # gives it slot k (the index's weights stay 1)
            new = log_wu + rate * ((bonus + x) / p)
            log_w[k] = new
            k += 1
            if new > top:
                top = new
        log_wu += rate * (bonus / p)
        reals[_LOGW_U] = log_wu
        if log_wu > top:
            top = log_wu
    total = 0.0
    for s in range(k):
        e = math.exp(log_w[s] - top)
        share[s] = e
        total += e
    share_u = math.exp(log_wu - top)
    if not index.dense:
        total += (n_experts - k) * share_u
    reals[_SHARE_U] = share_u
    reals[_TOP] = top
    reals[_TOTAL] = total
