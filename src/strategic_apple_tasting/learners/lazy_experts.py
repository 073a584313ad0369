"""EXP3 weights over an implicit grid of experts, touched lazily (DESIGN §3, `alg:UPD-ONE`).

The experts of EXP3-SAE are the points of a regular grid over [−B, B]^d with ``n`` points per
axis, so |E| = n^d: 2^100 for d = 20, n = 32, more than an int64 can index. EXP3 samples from
q = (1 − γ)·p + γ/|E| with p ∝ w and then rescales the weight of the *played* expert only, so
every expert never played keeps weight 1. We therefore store weights for touched experts only:

* an expert is named by its per-axis grid indices ``coords`` (ints in [0, n)); inside, they are
  packed into a few 64-bit words (``bits`` bits per axis, no axis straddling two words) that
  serve as the hash key;
* an open-addressing hash table (linear probing, power-of-two size ≥ 2·capacity, so a load of at
  most ½; no deletions) maps a key to a *slot*; slots are handed out in order of first touch.
  An entry also holds 31 bits of the key's hash, so a probe past another key rarely has to read
  that key (a cache miss in a large table);
* a sum tree over the slots holds the (scaled) weights; the untouched experts are one implicit
  block of mass (|E| − k)·1, sampled by drawing the grid uniformly and rejecting touched experts.

That gives O(d + log capacity) expected time per sample and per update and O(capacity·d)
memory, 56–88 bytes per slot at d = 20 (``capacity`` = most distinct experts ever touched;
the caller passes about min(T, |E|)). Measured here: ~0.75 µs per sample + update round at
d = 20, n = 32 (|E| = 2^100) and ~0.6 µs at d = 5, n = 2^13 (|E| = 2^65), capacity 10^5.

**Dense mode.** When |E| ≤ capacity every expert gets its slot up front: slot = the mixed-radix
(C-order, first axis most significant, as ``numpy.ravel_multi_index``) index of its coordinates,
which fits an int64 then; there is no hash table and no rejection.

Sampling procedure (:func:`sample_expert`), fixed so that a test oracle can mirror it draw by draw:

1. ``u = rng.random()``. If ``u < γ``: a uniform expert, ``rng.integers(0, n)`` once per axis, in
   axis order. Done.
2. Else draw from p. Lazy mode: ``U = |E| − k`` (floats; k = touched experts, |E| as a float),
   ``W = U + Σ touched weights``, ``v = rng.random()·W``. If ``v < U``: a uniform *untouched*
   expert by rejection (draw the d axis indices as in step 1; redraw the whole expert while it is
   touched). Else the touched expert whose interval of the cumulative sum of weights, in slot
   order (= order of first touch), contains ``v − U`` (a walk down the sum tree).
3. Dense mode, step 2 is ``W = Σ weights``, ``v = rng.random()·W`` and the walk with ``v``, slots
   in C order.

Dense and lazy mode consume random numbers differently (dense never rejects) but sample the same
distribution q. The returned probability is q(e) = (1 − γ)·w(e)/W + γ/|E|.

Numerics. Weights are kept as log weights (``logw``; an untouched expert has log weight 0) and
the tree leaves hold w·e^(−s) = exp(log w − s) for a common shift s (initially 0, so the leaves
are the weights themselves and the procedure above holds literally). Every update rewrites one
leaf and recomputes the sums on its path to the root from the two children (no deltas are
added), so each internal node is always a plain sum of current leaves: no error accumulates over
10^7 updates. Weights may shrink or grow by any factor: when a leaf would exceed 2^900, or the
total mass falls below 2^−900 (weights shrinking together, e.g. in dense mode where EXP3's
weights all decay like exp(−η·Σℓ̂)), the tree is rebuilt with s = the largest log weight
(O(capacity), after the scale has moved by a factor 2^900, i.e. practically never). Sampling
and q only involve ratios of leaves, so the shift never shows; a leaf that underflows to 0
(a weight below 2^−1074 of the largest one) is negligible against the total.

Layout. The state holds three arrays, not one per role: compiled code pays a reference-count
round trip for every array it takes out of a namedtuple on a path with branches (taking seven
arrays cost ~100 ns in a micro-benchmark here, a round at d = 20 is ~0.7 µs). ``reals`` =
[s, e^(−s), log weights of the slots..., sum tree...], ``ints`` = [slots in use, rebuilds,
scratch, hash table...], ``keys`` = the packed coordinates of each slot plus a scratch row; the
scalar fields give the offsets, and properties give readable views. The scratch makes a state
unsafe to use from two threads at once (give each run its own state, as every learner does).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# numba's own kernels behind Generator.integers (not public API: see _axis_index), None if a
# numba moved them (then rng.integers itself is used); _jit holds every use of numba internals.
from .._jit import bounded_lemire_uint64, buffered_bounded_lemire_uint32, next_uint32, njit
from ._invariants import MOST_ROUNDS, count, finite, within

#: ``reals[0:2]``: the shift s, and e^(−s) (the leaf of an untouched expert).
_SHIFT, _UNIT = 0, 1
#: ``ints[0:3]``: slots in use (touched experts; dense: |E|), tree rebuilds so far, and the
#: table entry (less the slot) of the expert last looked up and not found.
_USED, _REBUILDS, _PENDING = 0, 1, 2
#: Offset of the log weights in ``reals`` and of the hash table in ``ints``.
_LOGW0, _TABLE0 = 2, 3
#: Rebuild the tree (new shift) when a leaf would pass _BIG or the total mass falls below _TINY.
_BIG = 2.0 ** 900
_TINY = 2.0 ** -900
#: Largest grid accepted: |E| = n^d must stay a finite double with room for the tree's sums.
_MAX_LOG2_EXPERTS = 1000

_H_SEED = np.uint64(0x9E3779B97F4A7C15)
_H_MUL1 = np.uint64(0xFF51AFD7ED558CCD)
_H_MUL2 = np.uint64(0xC4CEB9FE1A85EC53)
_U33 = np.uint64(33)
#: A hash table entry is (31-bit tag of the key's hash) << 32 | slot; −1 marks an empty position.
_SLOT_MASK = (1 << 32) - 1
_TAG_MASK = -(1 << 32)
_MAX_CAPACITY = 1 << 32
_U0 = np.uint64(0)
_U1 = np.uint64(1)


class ExpertsState(NamedTuple):
    """Weights of the grid's experts; build with :func:`new_experts`.

    Scalars are fixed at construction; everything that changes lives in the three arrays.
    """

    d: int
    n: int  # points per axis
    dense: bool  # every expert has a slot (|E| ≤ capacity)
    bits: int  # bits per axis index in a packed key
    per_word: int  # axis indices per key word
    n_experts: float  # |E| = n^d as a float
    capacity: int  # slots (dense: |E|)
    size: int  # leaves of the sum tree, a power of two ≥ capacity
    mask: int  # hash table size − 1 (lazy mode; dense: 0)
    tree0: int  # offset of the sum tree in reals: node i at tree0 + i; slot s is node size + s
    reals: np.ndarray  # float64 [s, e^(−s), log w of each slot (capacity), tree (2·size)]
    ints: np.ndarray  # int64 [used, rebuilds, pending, table (mask + 1): tag·2^32 + slot or −1]
    keys: np.ndarray  # uint64 (capacity + 1, words): packed coordinates per slot; last row scratch

    @property
    def log_weights(self) -> np.ndarray:
        """View of the log weights, one per slot."""
        return self.reals[_LOGW0:_LOGW0 + self.capacity]

    @property
    def tree(self) -> np.ndarray:
        """View of the sum tree (node i = tree[2i] + tree[2i + 1]; index 0 unused)."""
        return self.reals[self.tree0:self.tree0 + 2 * self.size]

    @property
    def table(self) -> np.ndarray:
        """The slot at each hash table position (−1: empty); a copy without the hash tags."""
        entries = self.ints[_TABLE0:]
        return np.where(entries < 0, -1, entries & _SLOT_MASK)

    @property
    def shift(self) -> float:
        """The common shift s of the tree's leaves, exp(log w − s)."""
        return float(self.reals[_SHIFT])

    @property
    def rebuilds(self) -> int:
        """How many times the tree was rebuilt with a new shift."""
        return int(self.ints[_REBUILDS])


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def new_experts(d: int, points_per_axis: int, capacity: int) -> ExpertsState:
    """Weights (all 1) of the n^d experts of a grid with n = ``points_per_axis`` per axis.

    ``capacity`` bounds the number of distinct experts that may ever be touched (scaled); the
    state takes O(capacity·d) memory. If n^d ≤ capacity the state is dense (every expert has a
    slot from the start); otherwise it is lazy and touching more than ``capacity`` distinct
    experts raises ``ValueError``. Lazy sampling rejects touched experts, so it expects
    |E|/(|E| − k) draws; pass capacity ≥ |E| for grids that will be mostly touched.

    Examples
    --------
    >>> s = new_experts(d=20, points_per_axis=32, capacity=1000)
    >>> s.dense, s.n_experts == 2.0 ** 100
    (False, True)
    >>> new_experts(d=2, points_per_axis=5, capacity=100).dense
    True
    """
    d = _int("d", d, 1)
    n = _int("points_per_axis", points_per_axis, 1)
    capacity = _int("capacity", capacity, 1)
    if n >= 2**62:
        raise ValueError(f"points_per_axis must be < 2**62, got {n}")
    if d * math.log2(n) > _MAX_LOG2_EXPERTS:
        raise ValueError(f"the grid has points_per_axis**d = {n}**{d} experts; at most "
                         f"2**{_MAX_LOG2_EXPERTS} are allowed")
    n_exact = n**d
    dense = n_exact <= capacity
    if not dense and capacity >= _MAX_CAPACITY:
        raise ValueError(f"capacity must be < 2**32 for a lazy grid, got {capacity}")
    bits = max(1, (n - 1).bit_length())
    per_word = 64 // bits
    words = -(-d // per_word)
    slots = n_exact if dense else capacity
    size = 1 << max(0, (slots - 1).bit_length())
    tree0 = _LOGW0 + slots
    reals = np.zeros(tree0 + 2 * size)
    reals[_UNIT] = 1.0
    tree = reals[tree0:]
    if dense:
        tree[size:size + slots] = 1.0
        lo = size // 2
        while lo >= 1:  # level by level, each node the sum of its two children
            tree[lo:2 * lo] = tree[2 * lo:4 * lo:2] + tree[2 * lo + 1:4 * lo:2]
            lo //= 2
    table_size = 1 if dense else 1 << max(1, (2 * capacity - 1).bit_length())
    ints = np.full(_TABLE0 + table_size, -1, dtype=np.int64)
    ints[_USED] = slots if dense else 0
    ints[_REBUILDS] = 0
    keys = np.zeros((1 if dense else capacity + 1, words), dtype=np.uint64)
    return ExpertsState(
        d=d, n=n, dense=dense, bits=bits, per_word=per_word, n_experts=float(n_exact),
        capacity=slots, size=size, mask=table_size - 1, tree0=tree0, reals=reals, ints=ints,
        keys=keys)


def experts_bytes(d: int, points_per_axis: int, capacity: int) -> int:
    """Bytes that :func:`new_experts` would allocate, computed without allocating them (the
    engine's memory check before a run)."""
    n = max(1, int(points_per_axis))
    capacity = max(1, int(capacity))
    if d * math.log2(max(n, 2)) > 62:  # more experts than any capacity: a lazy grid
        dense, n_exact = False, capacity + 1
    else:
        n_exact = n**d
        dense = n_exact <= capacity
    words = -(-d // (64 // max(1, (n - 1).bit_length())))
    slots = n_exact if dense else capacity
    size = 1 << max(0, (slots - 1).bit_length())
    table_size = 1 if dense else 1 << max(1, (2 * capacity - 1).bit_length())
    keys = (1 if dense else capacity + 1) * words
    return 8 * ((_LOGW0 + slots + 2 * size) + (_TABLE0 + table_size) + keys)


def check_experts(state: ExpertsState, template: ExpertsState, where: str) -> None:
    """The invariants the kernels rely on, for weights read from a saved file (the scalars, and
    so the arrays' shapes, are the template's already).

    Slots in use within the capacity; in lazy mode the hash table holds each slot in use exactly
    once, where a probe for its key finds it, and an empty position besides (a probe for a new
    key stops there); each slot's key is a grid point's canonical packing, and no two slots
    hold the same key; log weights neither NaN nor +inf (0 for a slot not in use); the shift
    finite; the tree's leaves finite, in [0, 2^900], 0 outside the slots in use, and each node
    the sum of its two children (the walk down the tree lands on a slot in use only then).
    """
    reals, ints = state.reals, state.ints
    capacity, size, tree0 = state.capacity, state.size, state.tree0
    if state.dense:
        used = count(ints[_USED], f"{where}.ints[{_USED}] (slots in use)", capacity, capacity)
    else:
        used = count(ints[_USED], f"{where}.ints[{_USED}] (slots in use)", 0, capacity)
    count(ints[_REBUILDS], f"{where}.ints[{_REBUILDS}] (rebuilds)", 0, MOST_ROUNDS)
    if not state.dense:
        _check_table(state, used, where)
    # The shift is the largest log weight at the last rebuild (lazy mode: untouched experts'
    # 0 among them); e^-shift is an untouched expert's leaf, which dense mode never reads (a
    # shift below -709 makes it inf there).
    shift = f"{where}.reals[{_SHIFT}] (the shift)"
    finite(reals[_SHIFT], shift)
    unit = f"{where}.reals[{_UNIT}] (e^-shift)"
    if state.dense:
        within(reals[_UNIT], unit, 0.0, np.inf)
    else:
        within(reals[_SHIFT], shift, 0.0, np.inf)
        within(reals[_UNIT], unit, 0.0, 1.0)
    logw = reals[_LOGW0:_LOGW0 + capacity]
    bad = np.isnan(logw[:used]) | (logw[:used] == np.inf)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{where}.reals[{_LOGW0 + k}] (log weight of slot {k}) must be < inf "
                         f"and not NaN, got {float(logw[k])!r}")
    if np.any(logw[used:] != 0.0):
        k = used + int(np.argmax(logw[used:] != 0.0))
        raise ValueError(f"{where}.reals[{_LOGW0 + k}] (log weight of slot {k}, not in use) "
                         f"must be 0, got {float(logw[k])!r}")
    tree = reals[tree0:tree0 + 2 * size]
    leaves = tree[size:]
    within(leaves, f"{where}.reals[{tree0 + size}:] (the tree's leaves)", 0.0, _BIG)
    if np.any(leaves[used:] != 0.0):
        k = used + int(np.argmax(leaves[used:] != 0.0))
        raise ValueError(f"{where}.reals[{tree0 + size + k}] (the leaf of slot {k}, not in use) "
                         f"must be 0, got {float(leaves[k])!r}")
    lo = size // 2
    while lo >= 1:  # each level's nodes, from their children (the kernels' own additions)
        nodes, sums = tree[lo:2 * lo], tree[2 * lo:4 * lo:2] + tree[2 * lo + 1:4 * lo:2]
        if not np.array_equal(nodes, sums):
            k = lo + int(np.argmax(nodes != sums))
            raise ValueError(f"{where}.reals[{tree0 + k}] (node {k} of the tree) must be the "
                             f"sum of its children, {float(tree[2 * k] + tree[2 * k + 1])!r}, got "
                             f"{float(tree[k])!r}")
        lo //= 2


def _check_table(state: ExpertsState, used: int, where: str) -> None:
    """The lazy mode's keys and hash table (see :func:`check_experts`)."""
    ints, keys = state.ints, state.keys
    table = ints[_TABLE0:]
    field = f"{where}.ints[{_TABLE0}:] (the hash table)"
    filled = table >= 0
    if np.any(table[~filled] != -1):
        k = int(np.argmax((table != -1) & ~filled))
        raise ValueError(f"{field}: position {k} must be -1 (empty) or a slot, got {table[k]}")
    positions = np.flatnonzero(filled)
    slots = table[positions] & _SLOT_MASK
    if len(positions) != used or not np.array_equal(np.sort(slots), np.arange(used)):
        held = np.sort(slots).tolist()
        shown = ", ".join(map(str, held[:5])) + (", ..." if len(held) > 5 else "")
        raise ValueError(f"{field} must hold each of the {used} slots in use (0 to {used - 1}) "
                         f"once, holds slots {shown or 'none'}")
    if used == len(table):
        raise ValueError(f"{field} must keep an empty position")
    rows = keys[:used]
    coords = np.zeros((used, state.d), dtype=np.uint64)
    low = np.uint64((1 << state.bits) - 1)
    packed = np.zeros_like(rows)
    for i in range(state.d):
        w, at = divmod(i, state.per_word)
        coords[:, i] = (rows[:, w] >> np.uint64(state.bits * at)) & low
        packed[:, w] |= coords[:, i] << np.uint64(state.bits * at)
    if np.any(coords >= np.uint64(state.n)) or not np.array_equal(packed, rows):
        slot = int(np.argmax(np.any(coords >= np.uint64(state.n), axis=1)
                             | np.any(packed != rows, axis=1)))
        raise ValueError(f"{where}.keys[{slot}] must pack a grid point's coordinates, each in "
                         f"[0, {state.n})")
    if len(np.unique(rows, axis=0)) != used:
        raise ValueError(f"{where}.keys must name each expert in one slot only")
    # Where a probe for each slot's key starts, and its tag; the probe walks on to the slot's
    # position and must meet no empty position on the way.
    h = np.full(used, _H_SEED, dtype=np.uint64)
    for w in range(keys.shape[1]):
        h = (h ^ rows[:, w]) * _H_MUL1
        h ^= h >> _U33
    h *= _H_MUL2
    h ^= h >> _U33
    h *= _H_MUL1
    h ^= h >> _U33
    at = np.empty(used, dtype=np.int64)
    at[slots] = positions
    tags = table[at] & _TAG_MASK
    if not np.array_equal(tags, (h >> _U33).astype(np.int64) << 32):
        raise ValueError(f"{field} must tag each slot with its key's hash")
    home = (h & np.uint64(state.mask)).astype(np.int64)
    n = len(table)
    empties = np.concatenate([[0], np.cumsum(np.concatenate([~filled, ~filled]))])
    ahead = (at - home) % n  # positions probed before the slot's own
    if np.any(empties[home + ahead] - empties[home] != 0):
        raise ValueError(f"{field} must let a probe for each slot's key reach it")


# -- keys and slots ------------------------------------------------------------------------------


@njit
def key_hash(keys, row):
    """64-bit hash of the packed key ``keys[row]`` (words mixed in, then Murmur3's finalizer)."""
    h = _H_SEED
    for w in range(keys.shape[1]):
        h = (h ^ keys[row, w]) * _H_MUL1
        h ^= h >> _U33
    h *= _H_MUL2
    h ^= h >> _U33
    h *= _H_MUL1
    h ^= h >> _U33
    return h


@njit
def _locate(state, coords, ints, keys):
    """Slot of the expert at ``coords`` (checked to lie in the grid). If untouched (lazy):
    −1 − p with p the free table position for it, its packed key left in the scratch row and
    its table entry less the slot in ``ints[_PENDING]``."""
    n, d = state.n, state.d
    inside = True
    for i in range(d):
        inside &= 0 <= coords[i] < n
    if not inside:
        raise ValueError("expert coordinates must lie in [0, points_per_axis)")
    if state.dense:
        idx = 0
        for i in range(d):
            idx = idx * n + coords[i]
        return idx
    bits, per_word = state.bits, state.per_word
    words = keys.shape[1]
    row = keys.shape[0] - 1
    for w in range(words):
        word = _U0
        lo = w * per_word
        for i in range(lo, min(d, lo + per_word)):
            word |= np.uint64(coords[i]) << np.uint64(bits * (i - lo))
        keys[row, w] = word
    mask = state.mask
    h = key_hash(keys, row)
    pos = np.int64(h & np.uint64(mask))
    tag = np.int64(h >> _U33) << 32  # 31 bits above the slot: most mismatches skip the key
    while True:
        entry = ints[_TABLE0 + pos]
        if entry < 0:
            ints[_PENDING] = tag
            return -1 - pos
        if entry & _TAG_MASK == tag:
            slot = entry & _SLOT_MASK
            same = True
            for w in range(words):
                if keys[slot, w] != keys[row, w]:
                    same = False
                    break
            if same:
                return slot
        pos = (pos + 1) & mask


@njit
def _slot_coords(state, keys, slot, coords_out):
    n, d = state.n, state.d
    if state.dense:
        idx = slot
        for i in range(d - 1, -1, -1):
            coords_out[i] = idx % n
            idx //= n
        return
    bits, per_word = state.bits, state.per_word
    low = (_U1 << np.uint64(bits)) - _U1
    for i in range(d):
        w = i // per_word
        coords_out[i] = np.int64((keys[slot, w] >> np.uint64(bits * (i - w * per_word))) & low)


@njit
def find_slot(state, coords):
    """The slot of an expert, or −1 if it was never touched (O(d) expected)."""
    slot = _locate(state, coords, state.ints, state.keys)
    return slot if slot >= 0 else -1


@njit
def slot_coords(state, slot, coords_out):
    """Write the coordinates of the expert in ``slot`` into ``coords_out``."""
    _slot_coords(state, state.keys, slot, coords_out)


# -- the sum tree --------------------------------------------------------------------------------


@njit
def _set_leaf(reals, tree0, size, slot, value):
    """Set one leaf and recompute the sums on its path from the children (no deltas)."""
    i = size + slot
    reals[tree0 + i] = value
    i >>= 1
    while i >= 1:
        reals[tree0 + i] = reals[tree0 + 2 * i] + reals[tree0 + 2 * i + 1]
        i >>= 1


@njit
def _walk(reals, tree0, size, v):
    """The slot whose interval of the cumulative leaf sums contains ``v`` (never a zero leaf)."""
    i = 1
    while i < size:
        left = reals[tree0 + 2 * i]
        if left > 0.0 and (v < left or reals[tree0 + 2 * i + 1] <= 0.0):
            i = 2 * i
        else:
            v -= left
            i = 2 * i + 1
    return i - size


@njit
def _untouched_mass(state, reals, ints):
    """Scaled mass of the untouched experts, (|E| − k)·e^(−s) (0 in dense mode)."""
    if state.dense:
        return 0.0
    return (state.n_experts - ints[_USED]) * reals[_UNIT]


@njit
def _rebuild(state, reals, ints):
    """Shift so the largest (scaled) weight is 1, and recompute every leaf and sum."""
    tree0, size = state.tree0, state.size
    used = ints[_USED]
    top = -np.inf if state.dense else 0.0  # lazy: untouched experts (weight 1) remain
    for s in range(used):
        top = max(top, reals[_LOGW0 + s])
    if top == -np.inf:  # every weight is 0
        top = 0.0
    reals[_SHIFT] = top
    reals[_UNIT] = math.exp(-top)
    for s in range(used):
        reals[tree0 + size + s] = math.exp(reals[_LOGW0 + s] - top)
    for i in range(size - 1, 0, -1):
        reals[tree0 + i] = reals[tree0 + 2 * i] + reals[tree0 + 2 * i + 1]
    ints[_REBUILDS] += 1


# -- weights -------------------------------------------------------------------------------------


@njit
def expert_log_weight(state, coords):
    """log w(e) (0 for an untouched expert; −inf if its weight was set to 0)."""
    slot = _locate(state, coords, state.ints, state.keys)
    return 0.0 if slot < 0 else state.reals[_LOGW0 + slot]


@njit
def expert_weight(state, coords):
    """w(e) = exp(log w(e)); 1 for an untouched expert (may under/overflow: see the log form)."""
    return math.exp(expert_log_weight(state, coords))


@njit
def scale_log_weight(state, coords, log_factor):
    """w(e) ← w(e)·exp(``log_factor``), touching e if new; returns the new log w(e).

    ``log_factor`` may be −inf (weight 0) but not +inf or NaN. Raises ``ValueError`` when e is
    new and ``capacity`` experts are already touched. O(d + log capacity).
    """
    if math.isnan(log_factor) or log_factor == np.inf:
        raise ValueError("log_factor must be < inf and not NaN")
    reals, ints, keys = state.reals, state.ints, state.keys
    slot = _locate(state, coords, ints, keys)
    if slot < 0:  # lazy, untouched: take the next slot (the key is in the scratch row)
        used = ints[_USED]
        if used >= state.capacity:
            raise ValueError("lazy experts: capacity exceeded (more distinct experts "
                             "touched than the capacity given to new_experts)")
        row = keys.shape[0] - 1
        ints[_TABLE0 - 1 - slot] = ints[_PENDING] | used
        for w in range(keys.shape[1]):
            keys[used, w] = keys[row, w]
        ints[_USED] = used + 1
        slot = used
    new = reals[_LOGW0 + slot] + log_factor
    reals[_LOGW0 + slot] = new
    leaf = math.exp(new - reals[_SHIFT])
    rebuild = leaf > _BIG
    if not rebuild:
        tree0 = state.tree0
        _set_leaf(reals, tree0, state.size, slot, leaf)
        rebuild = reals[tree0 + 1] + _untouched_mass(state, reals, ints) < _TINY
    if rebuild:
        _rebuild(state, reals, ints)
    return new


@njit
def scale_weight(state, coords, factor):
    """w(e) ← w(e)·``factor`` (finite, ≥ 0), touching e if new; returns the new w(e).

    Prefer :func:`scale_log_weight` with −η·ℓ̂ when a factor could underflow.
    """
    if not (factor >= 0.0 and factor < np.inf):
        raise ValueError("factor must be finite and >= 0")
    lf = math.log(factor) if factor > 0.0 else -np.inf
    return math.exp(scale_log_weight(state, coords, lf))


@njit
def n_touched(state):
    """Experts with a slot: touched ones (lazy), or all |E| (dense)."""
    return state.ints[_USED]


# -- sampling ------------------------------------------------------------------------------------

if buffered_bounded_lemire_uint32 is not None:

    @njit
    def _axis_index(rng, n):
        """``rng.integers(0, n)``, the same draw, without its 1-element array.

        numba's scalar ``Generator.integers`` allocates an array per call (~70 ns, 15 times a
        ``random()``); we call the kernels it calls, as it calls them (numpy's own algorithm:
        Lemire's method on 32-bit draws below 2^32). The oracle test checks the stream against
        numpy's ``Generator.integers``.
        """
        span = n - 1
        if span == 0:
            return 0
        bitgen = rng.bit_generator
        if span < 0xFFFFFFFF:
            return np.int64(buffered_bounded_lemire_uint32(bitgen, span))
        if span == 0xFFFFFFFF:
            return np.int64(next_uint32(bitgen))
        return np.int64(bounded_lemire_uint64(bitgen, span))

else:  # pragma: no cover

    @njit
    def _axis_index(rng, n):
        return rng.integers(0, n)


@njit
def _probability(state, reals, ints, slot, gamma):
    uniform = gamma / state.n_experts
    if gamma >= 1.0:
        return uniform
    total = reals[state.tree0 + 1] + _untouched_mass(state, reals, ints)
    leaf = reals[_UNIT] if slot < 0 else reals[state.tree0 + state.size + slot]
    return (1.0 - gamma) * (leaf / total) + uniform


@njit
def expert_probability(state, coords, gamma):
    """q(e) = (1 − γ)·w(e)/W + γ/|E| for the current weights (NaN if all are 0 and γ < 1)."""
    reals, ints = state.reals, state.ints
    slot = _locate(state, coords, ints, state.keys)
    return _probability(state, reals, ints, slot, gamma)


@njit
def sample_expert(state, rng, gamma, coords_out):
    """Draw e ~ q = (1 − γ)·p + γ/|E| into ``coords_out`` (per-axis indices); return q(e).

    γ ∈ [0, 1]. Follows the procedure of the module docstring exactly. Raises ``ValueError``
    if p must be sampled while every weight is 0. O(d + log capacity) expected (lazy mode:
    |E|/(|E| − k) uniform draws for an untouched expert).
    """
    reals, ints, keys = state.reals, state.ints, state.keys
    n, dense = state.n, state.dense
    tree0, size = state.tree0, state.size
    u = rng.random()
    walk = False
    v = 0.0
    untouched = _untouched_mass(state, reals, ints)
    if not u < gamma:
        root = reals[tree0 + 1]
        total = root + untouched
        if not total > 0.0:
            raise ValueError("every expert weight is 0: p is undefined")
        v = rng.random() * total
        walk = root > 0.0 and not v < untouched
    if walk:
        slot = _walk(reals, tree0, size, v - untouched)
        _slot_coords(state, keys, slot, coords_out)
    else:  # uniform (u < γ), or uniform over the untouched by rejection
        while True:
            for i in range(coords_out.shape[0]):
                coords_out[i] = _axis_index(rng, n)
            slot = _locate(state, coords_out, ints, keys)
            if u < gamma or slot < 0 or dense:
                break
    return _probability(state, reals, ints, slot, gamma)


# -- geometry ------------------------------------------------------------------------------------


def grid_points(d: int, points_per_axis: int, bound: float = 1.0) -> np.ndarray:
    """Every expert's grid point, (n^d, d), in the experts' index order (first axis most
    significant), with :func:`expert_point`'s arithmetic: the grid EXP3-SAE plays, for code
    that reads all of it at once.

    Examples
    --------
    >>> grid_points(1, 3).ravel().tolist()
    [-1.0, 0.0, 1.0]
    """
    n = points_per_axis
    i = np.arange(n, dtype=np.float64)
    axis = bound * ((2 * i - (n - 1)) / (n - 1)) if n > 1 else np.zeros(1)
    return np.stack(np.meshgrid(*[axis] * d, indexing="ij"), axis=-1).reshape(-1, d)


@njit
def expert_point(state, coords, bound, out):
    """The expert's grid point in [−B, B]^d: −B + 2B·i/(n − 1) per axis (n = 1: 0).

    Computed as B·((2i − (n − 1))/(n − 1)), which is exactly ±B at the ends, exactly 0 at the
    centre and symmetric.
    """
    n = state.n
    for i in range(state.d):
        if n == 1:
            out[i] = 0.0
        else:
            out[i] = bound * ((2 * coords[i] - (n - 1)) / (n - 1))
