"""The tables through which compiled code reaches compiled learners.

A **compiled learner** (:class:`~.base.Learner`'s second tier) sets ``kernels``, a
:class:`LearnerKernels`: a ``NamedTuple`` state (what its ``_init_state(d)`` returns) and
compiled functions

* ``policy(state, rng, beta) -> threshold``: the linear threshold to commit to this round (β
  into ``beta``),
* ``update(state, rng, beta, threshold, x, accepted, reward, observed) -> used``,
* ``estimate(state, out) -> bool``: write the current estimate of θ1 − θ0, if there is one,

(a kernel compiled ``inline="always"`` with exactly these parameter names is inlined into the
engine's loop without a one-line caller to type: :func:`~.._jit.dispatch_on_class`),

and, for a rule that is not a linear threshold (LinUCB),

* ``rule(state, z, grad, need_grad) -> g(z)``: it accepts iff g(x') ≥ 0 (∇g into ``grad`` when
  ``need_grad``); ``policy`` then writes the rule's linear part, the start of agents'
  numerical best response (:mod:`..game.best_response`),
* ``linear(state) -> bool``: whether this round's rule is exactly the linear threshold that
  ``policy`` wrote (then agents respond in closed form, as to any other learner).

and, for a state whose values the kernels index by (counters, slots, phases), a Python

* ``check(state, template, where)``: raise ``ValueError`` naming the field if a state read from
  a saved file (already of the template's shapes and dtypes) breaks an invariant the kernels
  rely on (:meth:`~.base.Learner._check_state`).

The hooks of a compiled learner call these same functions, and so does the compiled engine
(through :func:`learner_policy` etc., resolved at compile time by the state's class): one
implementation of each algorithm, on both of the engine's paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._jit import dispatch_on_class, njit
from .._stamps import note_kernels
from ..game.policies import RULES, GeneralRule, LinearThreshold
from .budget import estimating_belief, observe


@njit
def never_linear(state):
    """The ``linear`` of a learner whose rule is never a linear threshold."""
    return False


class LearnerKernels(NamedTuple):
    """A learner's compiled core: its state class and its compiled functions.

    ``rule`` and ``linear`` are given only by learners whose rule may be non-linear; the
    engine then compiles the general-rule path for them (``linear`` defaults to
    :func:`never_linear`). Every other learner keeps the linear-threshold path. ``check`` (plain
    Python) checks a state read from a saved file before any kernel sees it.
    """

    state: type
    policy: Callable
    update: Callable
    estimate: Callable
    rule: Callable | None = None
    linear: Callable | None = None
    check: Callable | None = None

    # The base's hooks for a compiled learner (the same kernels the compiled engine calls).
    def publish_rule(self, state: Any, rng: np.random.Generator, d: int
                     ) -> LinearThreshold | GeneralRule:
        """This round's rule: the kernels' policy, as a general rule when ``rule`` says so."""
        beta = np.empty(d)
        threshold = float(self.policy(state, rng, beta))
        if self.rule is not None and not (self.linear or never_linear)(state):
            return GeneralRule.publish(state, beta, threshold)
        return LinearThreshold(beta=beta, threshold=threshold)

    def learn(self, state: Any, rng: np.random.Generator, rule: Any, x_obs: np.ndarray,
              accepted: bool, reward: float | None) -> bool:
        """Learn one round's feedback under ``rule`` (a belief estimating δ sees it first)."""
        live = estimating_belief(state)
        if live is not None:
            observe(live, rule.beta, float(rule.threshold), x_obs)
        return self.update(state, rng, rule.beta, rule.threshold, x_obs, accepted,
                           0.0 if reward is None else reward, reward is not None)

    def estimate_of(self, state: Any, d: int) -> np.ndarray | None:
        """The kernels' estimate of θ1 − θ0, or None if there is none yet."""
        out = np.empty(d)
        return out if self.estimate(state, out) else None


_POLICY: dict[type, Callable] = {}
_UPDATE: dict[type, Callable] = {}
_ESTIMATE: dict[type, Callable] = {}
_LINEAR: dict[type, Callable] = {}


def has_rule(state_cls: type | None) -> bool:
    """Whether learners with this state class may publish a general (non-linear) rule."""
    return state_cls in RULES


learner_policy = dispatch_on_class(
    "learner_policy", ("state", "rng", "beta"), _POLICY,
    "Compiled-only: the learner's policy this round (β into ``beta``, returns c).")
learner_update = dispatch_on_class(
    "learner_update",
    ("state", "rng", "beta", "threshold", "x", "accepted", "reward", "observed"), _UPDATE,
    "Compiled-only: feed back one round; returns whether the point was used for learning.")
learner_estimate = dispatch_on_class(
    "learner_estimate", ("state", "out"), _ESTIMATE,
    "Compiled-only: write the estimate of θ1 − θ0 into ``out``; False if none yet.")
learner_linear = dispatch_on_class(
    "learner_linear", ("state",), _LINEAR,
    "Compiled-only: whether a general-rule learner's rule this round is its linear part.")


def register_kernels(kernels: LearnerKernels) -> None:
    """Enter a compiled learner's kernels in the tables, by its state class (what the
    compiled engine dispatches on), and note them for the compile cache's stamps."""
    note_kernels(kernels.state, [kernels.policy, kernels.update, kernels.estimate,
                                 kernels.rule, kernels.linear])
    _POLICY[kernels.state] = kernels.policy
    _UPDATE[kernels.state] = kernels.update
    _ESTIMATE[kernels.state] = kernels.estimate
    if kernels.rule is not None:
        RULES[kernels.state] = kernels.rule
        _LINEAR[kernels.state] = kernels.linear or never_linear
