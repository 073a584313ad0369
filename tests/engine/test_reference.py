"""The engine's Python reference path: plain-Python learners in the game, compiled learners on
both paths, and rules given by Python functions answered by the compiled best response."""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import check_learner, tables_identical
from strategic_apple_tasting.game import (
    EllipsoidalCost,
    GeneralRule,
    LazyBestResponse,
    LinearThreshold,
)
from strategic_apple_tasting.game.best_response import respond_to_rule
from strategic_apple_tasting.game.policies import _FUNCTIONS
from strategic_apple_tasting.learners import Learner, LearnerTags, LinUCB


class PlainUCB(Learner):
    """A plain-Python optimistic learner whose rule is not linear: accept iff
    ⟨θ̂, z⟩ + α‖z‖_{V⁻¹} ≥ r0, with θ̂ and V from every accepted point."""

    name = "plain-ucb"
    tags = LearnerTags(strategy_aware=False, nonlinear=True)

    def __init__(self, alpha=0.5, r0=None, feedback=None):
        self.alpha, self.r0, self.feedback = alpha, r0, feedback

    def _init_state(self, d):
        self._gram, self._xy = np.eye(d), np.zeros(d)

    def _publish(self):
        inv = np.linalg.pinv(self._gram)  # (features near the input bound swamp the ridge)
        theta = inv @ self._xy
        alpha, r0 = self.alpha, self.r0
        return GeneralRule.from_function(
            lambda z: float(theta @ z + alpha * np.sqrt(z @ inv @ z)) - r0, theta, r0)

    def _learn(self, rule, x_obs, accepted, reward):
        if not accepted or reward is None:
            return False
        self._gram += np.outer(x_obs, x_obs)
        self._xy += reward * x_obs
        return True

    def _estimate(self):
        return np.linalg.lstsq(self._gram, self._xy, rcond=None)[0]


class FunctionLinUCB(LinUCB):
    """LinUCB whose non-linear rules reach agents as Python functions (its compiled g and ∇g
    called from Python): the same numbers through the object-mode call-back."""

    def __init__(self, alpha=1.0, ridge=1.0, r0=None, feedback=None, gradient=True):
        super().__init__(alpha=alpha, ridge=ridge, r0=r0, feedback=feedback)
        self.gradient = gradient

    def _publish(self):
        rule = super()._publish()
        if isinstance(rule, GeneralRule):
            return GeneralRule.from_function(rule.value, rule.beta, rule.threshold,
                                             gradient=rule.gradient if self.gradient else None)
        return rule


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_a_function_rule_is_answered_by_the_same_search(feedback):
    """Agents answer a rule given as a Python function with the compiled search itself: LinUCB
    with its rules handed over as functions gives the compiled LinUCB's table bit for bit.
    Under apple tasting the agents have an ellipsoidal cost: with an ℓ2 cost the compiled
    LinUCB's rule is answered in closed form instead of by the search (checked
    against the search in tests/game/test_best_response.py)."""
    agents = (EllipsoidalCost.from_cost(np.diag([1.0, 2.0, 0.5])) if feedback == "apple"
              else LazyBestResponse())
    game = Game(dimension=3, delta=0.3, feedback=feedback, r0=0.2 if feedback == "apple" else 0,
                agents=agents)
    compiled = simulate(game, [LinUCB()], 300, seeds=[1, 2], engine="compiled")
    wrapped = simulate(game, [FunctionLinUCB()], 300, seeds=[1, 2], engine="reference")
    assert np.asarray(compiled.column("moved"))[-1] > 0
    same = [c for c in compiled.column_names if c not in ("learner_name", "learner_params")]
    assert tables_identical(compiled.select(same), wrapped.select(same))
    # The control: with its gradient by central differences instead, the search lands
    # elsewhere (by far less than the budget, but not bit for bit), and the check sees it.
    approx = simulate(game, [FunctionLinUCB(gradient=False)], 300, seeds=[1, 2],
                      engine="reference")
    assert not tables_identical(compiled.select(same), approx.select(same))


def test_a_plain_python_learner_passes_every_public_check():
    check_learner(PlainUCB())


def test_a_plain_python_learner_runs_with_compiled_ones_on_the_same_streams():
    game = Game(dimension=2, delta=0.2)
    table = simulate(game, [PlainUCB(), "linucb", "accept-all"], 500, seeds=2, threads=2)
    assert set(table.column("learner").to_pylist()) == {"plain-ucb", "linucb", "accept-all"}
    alone = simulate(game, [PlainUCB()], 500, seeds=2)
    ours = table.filter(np.asarray(table.column("learner")) == "plain-ucb")
    assert tables_identical(ours, alone)  # whatever ran beside it, on whatever thread


def test_the_engine_path_is_checked():
    game = Game(dimension=2)
    with pytest.raises(ValueError, match="engine must be one of auto, compiled, reference, "
                                         "got 'fast'"):
        simulate(game, ["sa-ols"], 10, engine="fast")
    with pytest.raises(ValueError, match="engine 'compiled' cannot run this: plain-ucb is a "
                                         "plain-Python learner"):
        simulate(game, [PlainUCB()], 10, engine="compiled")


class _Bad(PlainUCB):
    def __init__(self, what="type", alpha=0.5, r0=None, feedback=None):
        super().__init__(alpha, r0, feedback)
        self.what = what

    def _publish(self):
        d = self.dimension
        return {"type": "accept everyone",
                "beta": LinearThreshold(beta=np.ones(d + 1), threshold=0.0),
                "nan": LinearThreshold(beta=np.full(d, np.nan), threshold=0.0),
                "threshold": LinearThreshold(beta=np.ones(d), threshold=float("inf")),
                }[self.what]

    def _estimate(self):
        return np.zeros(self.dimension + 1)


@pytest.mark.parametrize("what, message", [
    ("type", r"_Bad._publish\(\) must return a LinearThreshold or a GeneralRule, "
             "got 'accept everyone'"),
    ("beta", r"_Bad._publish\(\) must give a finite beta of shape \(2,\)"),
    ("nan", r"_Bad._publish\(\) must give a finite beta of shape \(2,\)"),
    ("threshold", r"_Bad._publish\(\) must give a finite threshold, got inf"),
])
def test_a_learner_publishing_nonsense_is_one_clear_error(what, message):
    learner = _Bad(what, r0=0.0, feedback="apple").reset(2, rng=0)
    with pytest.raises(ValueError, match=message):
        learner.policy()


def test_a_general_rule_needs_nonlinear_and_a_bad_estimate_is_refused():
    class Undeclared(PlainUCB):
        tags = LearnerTags(strategy_aware=False)

    with pytest.raises(ValueError, match=r"returned a GeneralRule but Undeclared does not "
                                         r"declare tags = LearnerTags\(nonlinear=True\)"):
        Undeclared(r0=0.0, feedback="apple").reset(2).policy()
    bad = _Bad(r0=0.0, feedback="apple").reset(2)
    with pytest.raises(ValueError, match=r"_Bad._estimate\(\) must return None or an array of "
                                         r"shape \(2,\), got shape \(3,\)"):
        bad.estimate()


def test_a_learner_without_hooks_or_kernels_is_refused_when_defined():
    with pytest.raises(TypeError, match=r"must set kernels .* or define _publish and _learn"):
        class Nothing(Learner):
            name = "nothing"


def test_function_rules_pickle_and_free_their_handles():
    rule = GeneralRule.from_function(lambda z: float(z @ z) - 0.25, [1.0, 0.0], 0.5)
    assert rule.accepts([0.3, 0.4]) and not rule.accepts([0.3, 0.3])
    x_obs, moved = respond_to_rule(LazyBestResponse(delta=0.2), rule, np.array([0.4, 0.0]))
    assert moved and rule.accepts(x_obs) and abs(np.linalg.norm(x_obs) - 0.5) < 1e-12
    revived = pickle.loads(pickle.dumps(_Picklable.rule()))
    assert revived.value(np.array([1.0, 1.0])) == 1.75
    assert revived.state.handle in _FUNCTIONS
    handle = rule.state.handle
    del rule
    gc.collect()
    assert handle not in _FUNCTIONS  # the table holds live rules only


def _norm_rule(z):
    return float(z @ z) - 0.25


class _Picklable:
    @staticmethod
    def rule():
        return GeneralRule.from_function(_norm_rule, [1.0, 0.0], 0.5)


def test_a_function_rule_that_misbehaves_is_one_clear_error():
    rule = GeneralRule.from_function(lambda z: float("nan"), [1.0, 0.0], 0.5)
    with pytest.raises(ValueError, match="the rule's function must return a finite number, "
                                         "got nan"):
        respond_to_rule(LazyBestResponse(delta=0.2), rule, np.array([0.4, 0.0]))
    with pytest.raises(ValueError, match="g must be a callable"):
        GeneralRule.from_function("g", [1.0, 0.0], 0.5)
