"""The base class keeps its runtime out of a learner's names, refuses a class that cannot
work when its class statement runs, and offers the decision desk under the learner's lock."""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest

from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.learners import SAOLS, Learner, LearnerTags
from strategic_apple_tasting.learners.base import RESERVED
from strategic_apple_tasting.learners.introspect import model_attributes


class Plain(Learner):
    """A plain-Python learner keeping its model under a natural name of its own."""

    name = "plain"
    tags = LearnerTags(strategy_aware=False)

    def __init__(self, r0=0.0, feedback="apple"):
        self.r0, self.feedback = r0, feedback

    def _init_state(self, d):
        self._sums = np.zeros(d)

    def _publish(self):
        return LinearThreshold(beta=self._sums.copy(), threshold=-1.0)

    def _learn(self, rule, x_obs, accepted, reward):
        if reward is None:
            return False
        self._sums += reward * x_obs
        return True

    def _estimate(self):
        return self._sums.copy()


def test_a_plain_learner_assigning_the_bases_state_name_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"^learner class .*Clashing assigns '_state' in "
                                        r"_init_state, a name the Learner base reserves "
                                        r"\(its state is what _init_state returns, read as "
                                        r"self.state\): name it otherwise$") as err:
        class Clashing(Plain):
            name = "clashing"

            def _init_state(self, d):
                self._state = np.zeros(d)

    assert "\n" not in str(err.value)
    # Control: the same learner under a name of its own works, and keeps its model through
    # reset, the rounds and a copy.
    learner = Plain().reset(2, rng=0)
    for _ in range(3):
        learner.update([1.0, 0.5], learner.act([1.0, 0.5]), 1.0)
    assert np.array_equal(learner.estimate(), [3.0, 1.5])
    assert np.array_equal(copy.deepcopy(learner).estimate(), [3.0, 1.5])
    assert model_attributes(learner).keys() == {"_sums"}  # the base's runtime is not its own
    learner.reset(2, rng=0)
    assert np.array_equal(learner.estimate(), [0.0, 0.0])


@pytest.mark.parametrize("reserved", ["_state", "_d", "reset", "desk", "estimate"])
def test_a_learner_defining_a_reserved_name_is_refused_at_class_creation(reserved):
    with pytest.raises(TypeError, match=rf"^learner class .* defines '{reserved}', a name the "
                                        r"Learner base reserves \(.*\): name it otherwise$"):
        type("Defining", (Plain,), {"name": "defining", reserved: None})
    assert reserved in RESERVED


def test_a_concrete_learner_without_a_name_is_refused_in_one_line():
    with pytest.raises(TypeError, match=r"^learner class .*Nameless has no name: set name = "
                                        r"'\.\.\.' \(its name in results tables\), or declare "
                                        r"a base for other learners abstract: class "
                                        r"Nameless\(\.\.\., abstract=True\)$"):
        class Nameless(Learner):
            def _init_state(self, d):
                return None

            def _publish(self):
                return LinearThreshold(np.zeros(1), 0.0)

            def _learn(self, rule, x_obs, accepted, reward):
                return False

    # Controls: a base declared abstract needs no name, and its named subclass works.
    class Base(Learner, abstract=True):
        def __init__(self):
            pass

        def _init_state(self, d):
            return None

        def _learn(self, rule, x_obs, accepted, reward):
            return False

    class Named(Base):
        name = "named"

        def _publish(self):
            return LinearThreshold(np.zeros(self.dimension), -1.0)

    assert Named().reset(1).act([0.5])


def test_a_concrete_learner_without_its_hooks_is_refused():
    with pytest.raises(TypeError, match=r"^learner Hookless must set kernels \(a compiled "
                                        r"learner\) or define _publish and _learn"):
        class Hookless(Learner):
            name = "hookless"

            def _init_state(self, d):
                return None
    with pytest.raises(TypeError, match=r"^learner Stateless must define _init_state\(d\), "
                                        r"which returns its state$"):
        class Stateless(Learner):
            name = "stateless"

            def _publish(self):
                return LinearThreshold(np.zeros(1), 0.0)

            def _learn(self, rule, x_obs, accepted, reward):
                return False


def test_a_compiled_learners_init_state_returns_its_kernels_state():
    class Wrong(SAOLS):
        name = "wrong"

        def _init_state(self, d):
            return {"not": "a state"}

    learner = SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0)
    with pytest.raises(TypeError, match=r"^Wrong._init_state\(d\) must return a "
                                        r"PhasedOLSState \(its kernels' state\), got dict$"):
        Wrong(delta=0.1, r0=0.0, feedback="apple").reset(2)
    # Control: SA-OLS's own returns its state, kept as learner.state.
    assert type(learner.state).__name__ == "PhasedOLSState"


def test_a_failed_reset_leaves_the_learner_as_it_was():
    class Failing(Plain):
        name = "failing"

        def _init_state(self, d):
            if d > 2:
                raise ValueError("d must be at most 2")
            super()._init_state(d)

    learner = Failing()
    with pytest.raises(ValueError, match="d must be at most 2"):
        learner.reset(3)
    with pytest.raises(RuntimeError, match=r"^call Failing.reset\(d, rng\) first$"):
        learner.desk  # noqa: B018
    learner.reset(2, rng=0)
    with pytest.raises(ValueError, match="d must be at most 2"):
        learner.reset(3)
    assert learner.dimension == 2 and learner.desk is not None


def test_the_old_runtime_names_read_the_public_ones_with_a_warning():
    learner = SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0)
    for old, new in (("_d", "dimension"), ("_rng", "generator"), ("_state", "state")):
        with pytest.warns(DeprecationWarning, match=rf"^SAOLS.{old} is deprecated: read "
                                                    rf"self.{new}$"):
            assert getattr(learner, old) is getattr(learner, new)


def _held_elsewhere(lock) -> bool:
    """Whether another thread holds ``lock`` (it cannot take it without waiting)."""
    got = []

    def probe() -> None:
        got.append(lock.acquire(blocking=False))
        if got[0]:
            lock.release()

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return not got[0]


SEEN: dict[str, bool] = {}


class Watching(Plain):
    """Notes whether another thread could take the learner's desk's lock during its hooks."""

    name = "watching"

    def _publish(self):
        SEEN["publish"] = _held_elsewhere(self.desk.lock)
        return super()._publish()

    def _estimate(self):
        SEEN["estimate"] = _held_elsewhere(self.desk.lock)
        return super()._estimate()


def test_the_desk_is_reached_and_its_methods_hold_the_learners_lock():
    seen = SEEN
    seen.clear()
    learner = Watching().reset(2, rng=0)
    desk = learner.desk
    rule = desk.publish(time=0.0)
    decision = desk.decide([0.2, 0.1], id="a")
    assert decision.accepted and desk.pending() == ["a"] and rule.version == 1
    assert desk.report("a", 1.0)
    learner.estimate()
    # The desk's publish and the learner's estimate held one lock: the learner's.
    assert seen == {"publish": True, "estimate": True}
    # Control: outside any call, the lock is free.
    assert not _held_elsewhere(desk.lock)
    # The forwarders of earlier releases are the desk's methods, one release more.
    assert learner.decide([0.2, 0.1], id="b").version == desk.rule_in_force().version
    assert learner.pending() == desk.pending() == ["b"]
    assert learner.publish_every(outcomes=2) is learner
    # A copy is a learner of its own: its own lock, which its desk shares.
    for other in (copy.deepcopy(learner), pickle.loads(pickle.dumps(learner))):
        assert other.desk.lock is not desk.lock
        seen.clear()
        other.estimate()
        assert seen == {"estimate": True}
