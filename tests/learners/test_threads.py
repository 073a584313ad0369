"""A learner used from several threads at once: its public calls take turns (a lock of its
own), so nothing is lost or corrupted and its state is that of some serial order of the calls.
Threads start together at a barrier; a tiny switch interval makes Python interleave them often
(the compiled kernels release the GIL and would run in parallel)."""

from __future__ import annotations

import copy
import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.learners import (
    LEARNERS,
    ExploreThenCommit,
    Learner,
    LearnerTags,
)
from strategic_apple_tasting.persistence import load_learner, save_learner

THREADS = 4
PER_THREAD = 1500


@contextmanager
def _interleaved() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _together(work: Callable[[int], None]) -> list[str]:
    """Run ``work(k)`` in THREADS threads started at one barrier; the errors they raised."""
    barrier = threading.Barrier(THREADS)
    errors: list[str] = []

    def run(k: int) -> None:
        barrier.wait()
        try:
            work(k)
        except Exception as exc:  # what a caller would see
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    with _interleaved():
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return errors


def _applicants(k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(k)
    return rng.uniform(-1, 1, (PER_THREAD, 3)), rng.integers(-4, 5, PER_THREAD).astype(float)


def _exploring() -> Learner:
    """Least squares on every outcome (explore-then-commit that never commits): outcomes in any
    order give the same fit, to rounding."""
    return ExploreThenCommit(exploration_rounds=10**9, delta=0.3, r0=0.0,
                             feedback="apple").reset(3, 0)


def test_decisions_outcomes_and_publications_from_four_threads_lose_nothing():
    """Each thread decides its applicants and reports each outcome; every 50 decisions it
    publishes. Without a lock an outcome was lost with a bare KeyError (a publication forgot
    the rule a decision was still filed under) and the desk's counts of pending decisions
    went negative."""
    learner = _exploring()
    learner.publish()

    def work(k: int) -> None:
        xs, ys = _applicants(k)
        for i in range(PER_THREAD):
            decision = learner.decide(xs[i], id=f"{k}-{i}")
            learner.report(decision.id, ys[i])
            if i % 50 == 0:
                learner.publish()

    assert _together(work) == []
    counts = learner.state.counts
    total = THREADS * PER_THREAD
    assert counts[0] == total and counts[2] == total  # rounds seen, points in the fit
    assert not learner.pending() and all(n >= 0 for n in learner.desk_record().uses.values())
    serial = _exploring()
    for k in range(THREADS):
        for x, y in zip(*_applicants(k), strict=True):
            serial.report(serial.decide(x).id, y)
    assert np.allclose(learner.estimate(), serial.estimate(), rtol=1e-9, atol=1e-12)


class _Counting(Learner):
    """A plain-Python learner whose model is Python numbers updated in place."""

    name = "counting"
    tags = LearnerTags(strategy_aware=False)

    def __init__(self, r0=None, feedback=None):
        self.r0, self.feedback = r0, feedback

    def _init_state(self, d):
        self._seen, self._total = 0, 0.0

    def _publish(self):
        return LinearThreshold(beta=np.zeros(self.dimension), threshold=-1.0)  # accept all

    def _learn(self, rule, x_obs, accepted, reward):
        seen, total = self._seen, self._total
        self._seen, self._total = seen + 1, total + reward  # read, then write
        return True


def test_a_plain_python_learner_from_four_threads():
    """A plain-Python model (Python numbers, read then written in ``_learn``) deciding and
    learning from four threads, one of them publishing: every outcome is counted once and
    summed once (integers: the sum is exact in any order)."""
    learner = _Counting(r0=0.0, feedback="apple").reset(3, 0)

    def work(k: int) -> None:
        xs, ys = _applicants(k)
        for i in range(PER_THREAD):
            learner.report(learner.decide(xs[i], id=f"{k}-{i}").id, ys[i])
            if k == 0 and i % 20 == 0:
                learner.publish()

    assert _together(work) == []
    assert learner._seen == THREADS * PER_THREAD and not learner.pending()
    assert learner._total == sum(float(_applicants(k)[1].sum()) for k in range(THREADS))


def test_a_learner_with_its_lock_still_copies_pickles_and_saves(tmp_path):
    learner = _exploring()
    learner.report(learner.decide([0.3, 0.2, 0.1]).id, 1.0)
    learner.decide([0.1, 0.1, 0.1], id="waiting")
    copies = [copy.deepcopy(learner),
              *(pickle.loads(pickle.dumps(learner, protocol)) for protocol in range(6)),
              load_learner(save_learner(learner, tmp_path / "learner.sat"))]
    for other in copies:
        assert other.desk.lock is not learner.desk.lock  # a copy is a learner of its own
        assert other.pending() == ["waiting"]
        assert np.array_equal(other.estimate(), learner.estimate())
        other.report("waiting", 0.5)  # and it works
    assert learner.pending() == ["waiting"]


def test_which_learners_say_they_are_thread_safe():
    """Every learner of the registry holds its state on itself: thread-safe through its lock.
    The peer adapters' rules call their libraries' live models outside it: not."""
    assert all(cls.tags().thread_safe for cls in LEARNERS.values())
    peers = pytest.importorskip("strategic_apple_tasting.peers")
    assert not any(cls.tags().thread_safe for cls in peers.PEERS.values())
