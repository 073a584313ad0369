"""MABWiser's linear contextual bandits (LinUCB, LinTS, LinGreedy) as learners.

The library's ``MAB`` object is used as its users use it: ``MAB(arms=[1, 0], learning_policy,
seed=...)``, ``fit`` (here on no data: the ridge prior), then each round ``predict`` /
``predict_expectations`` on the observed context and ``partial_fit`` with the decision and its
reward. Arm 1 is accept, arm 0 reject; accept is listed first so that a tie, which MABWiser
breaks towards the first arm, accepts, as "g(x') ≥ 0" does.

The published rule is g(x') = E[1] − E[0], the two arms' expectations from
``predict_expectations`` at x' (with a constant 1 appended when ``intercept``): MABWiser's
``predict`` is the argmax of the same numbers, so g ≥ 0 exactly when it predicts arm 1.

Randomness. MABWiser draws from numpy Generators in every prediction (a uniform per context
for ε, and for LinTS a coefficient sample per context and arm): the ``MAB`` object's own, and a
copy in each arm's model, made whenever the arm is fitted (MABWiser deep-copies an arm's model
to fit it). The adapter seeds ``MAB`` from the learner's Generator. When it publishes the round's
rule it saves the state of every Generator the ``MAB`` object holds and restores them before
every evaluation of g, so every point of the round is judged with the same draws: LinTS's rule
for the round is one sample, LinGreedy's one coin. When the round ends it restores them once
more and predicts at the observed x' (a user's one prediction of the round), which moves the
library's streams on. MABWiser has no public way to replay its draws: the adapter finds the
Generators by walking the object's attributes (:func:`generators`).

The estimate of θ1 − θ0 is the difference of the two arms' ridge coefficients (without the
intercept's), read from MABWiser's per-arm models (``MAB._imp.arm_to_model[arm].beta``, not
public); it serves the results' ``theta_error`` only.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..game.game import check_number
from ..game.policies import central_differences
from ._common import Box, PeerLearner, examples_need, seed_from

LIBRARY = "mabwiser"


def generators(obj: Any) -> list[np.random.Generator]:
    """Every numpy Generator held inside ``obj`` (through attributes, dicts, lists, tuples),
    each once: MABWiser's ``MAB`` holds one, and each arm's model a copy of it, made when
    the arm was last fitted."""
    found: dict[int, np.random.Generator] = {}
    seen: set[int] = set()
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.random.Generator):
            found[id(item)] = item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type | np.ndarray):
            stack.extend(vars(item).values())
    return list(found.values())


class _MABBox(Box):
    def __init__(self, d: int, intercept: bool, mab: Any, *, deterministic: bool,
                 linear: bool) -> None:
        super().__init__(d, intercept)
        self.mab = mab
        self.deterministic = deterministic  # predictions draw nothing that matters (LinUCB)
        self.linear = linear  # a frozen round's rule is linear in x' (LinTS, LinGreedy)
        self.frozen: dict | None = None
        if deterministic:
            self.gradient = self._gradient

    def _restore(self) -> None:
        if self.frozen is not None:
            for generator, state in self.frozen:
                generator.bit_generator.state = state

    def freeze(self) -> None:
        self.frozen = [(g, g.bit_generator.state) for g in generators(self.mab)]

    def value(self, z: np.ndarray) -> float:
        self._restore()
        got = self.mab.predict_expectations(self.features(z)[None, :])
        return float(got[1] - got[0])

    def values(self, zs: np.ndarray) -> np.ndarray:
        if not self.deterministic or len(zs) == 1:
            return super().values(zs)
        self._restore()  # the draws do not change a deterministic policy's numbers
        got = self.mab.predict_expectations(self.features(zs))
        return np.array([float(e[1] - e[0]) for e in got])

    def _gradient(self, z: np.ndarray) -> np.ndarray:
        return central_differences(self.values, z)

    def end_round(self, x_obs: np.ndarray, arm: int, reward: float | None) -> None:
        context = self.features(x_obs)[None, :]
        self._restore()
        self.mab.predict(context)  # the user's prediction of the round: the stream moves on
        self.frozen = None
        if reward is not None:
            self.mab.partial_fit([arm], [reward], context)

    def estimate(self) -> np.ndarray | None:
        # The ridge coefficients of each arm (MABWiser keeps them in its per-arm models).
        models = self.mab._imp.arm_to_model
        coef = np.asarray(models[1].beta, float) - np.asarray(models[0].beta, float)
        return coef[:self.d].copy()


class _MABWiserLearner(PeerLearner):
    library = LIBRARY
    # MABWiser inverts its ridge matrix λI + XᵀX in double precision: a feature of 10⁹ makes
    # 1 + 10¹⁸ = 10¹⁸ and the inverse fails on the first point. Up to 10⁶ the ridge stays
    # visible (10¹² against 2⁵³ ≈ 9·10¹⁵) for thousands of points at the bound.
    input_bound = 1e6
    _policy_name: ClassVar[str]
    _deterministic: ClassVar[bool] = False
    _linear: ClassVar[bool] = False
    l2_lambda: float

    def _policy(self, learning_policy: Any) -> Any:
        raise NotImplementedError

    def _check_params(self) -> None:
        super()._check_params()
        check_number("l2_lambda", self.l2_lambda, 0.0, open_low=True)

    def _box(self, d: int) -> _MABBox:
        mab_module = self._require("mab")
        mab = mab_module.MAB(arms=[1, 0], learning_policy=self._policy(mab_module.LearningPolicy),
                             seed=seed_from(self._rng))
        k = d + 1 if self.intercept else d
        mab.fit(np.zeros(0, dtype=int), np.zeros(0), np.zeros((0, k)))  # the prior, no data
        return _MABBox(d, self.intercept, mab, deterministic=self._deterministic,
                       linear=self._linear)



class _AlphaLearner(_MABWiserLearner):
    """LinUCB and LinTS: the same hyperparameters (α scales the bonus or the sample)."""

    alpha: float

    def __init__(self, alpha: float = 1.0, l2_lambda: float = 1.0, intercept: bool = True,
                 r0: float | None = None, feedback: str | None = None) -> None:
        self._require()
        self.alpha = alpha
        self.l2_lambda = l2_lambda
        self.intercept = intercept
        self.r0 = r0
        self.feedback = feedback

    def _check_params(self) -> None:
        super()._check_params()
        check_number("alpha", self.alpha, 0.0)

    def _policy(self, learning_policy: Any) -> Any:
        return getattr(learning_policy, self._policy_name)(alpha=self.alpha,
                                                           l2_lambda=self.l2_lambda)


@examples_need(LIBRARY)
class MABWiserLinUCB(_AlphaLearner):
    """MABWiser's ``LearningPolicy.LinUCB`` over accept (arm 1) and reject (arm 0).

    Each arm keeps MABWiser's ridge regression; the rule accepts iff the library's upper
    confidence bound of accepting, ⟨β̂1, x'⟩ + α·sqrt(x'ᵀA1⁻¹x'), is at least reject's
    (apple tasting: a regression fitted to r0 on the rejected points). Not a linear threshold:
    agents answer it numerically. Unaware of gaming.

    Parameters
    ----------
    alpha : float
        α ≥ 0, MABWiser's exploration width.
    l2_lambda : float
        λ > 0, MABWiser's ridge prior.
    intercept : bool
        Append a constant 1 to the context (without it no arm can fit a constant r0).
    r0 : float, optional
        Reward of rejecting (None: the game's).
    feedback : {"apple", "bandit"}, optional
        Feedback mode (None: the game's).

    Examples
    --------
    >>> import numpy as np
    >>> from strategic_apple_tasting.peers import MABWiserLinUCB
    >>> learner = MABWiserLinUCB(r0=0.1, feedback="apple").reset(2, np.random.default_rng(0))
    >>> x = np.array([0.4, 0.3])
    >>> accepted = learner.act(x)     # the library's decision at x, under the round's rule
    >>> accepted
    True
    >>> learner.update(x, accepted, reward=0.8)
    True
    """

    name = "mabwiser:LinUCB"
    _deterministic = True

    _policy_name = "LinUCB"


@examples_need(LIBRARY)
class MABWiserLinTS(_AlphaLearner):
    """MABWiser's ``LearningPolicy.LinTS`` over accept (arm 1) and reject (arm 0).

    MABWiser samples each arm's coefficients from N(β̂_a, α²A_a⁻¹) in every prediction; the
    adapter freezes the library's draws for the round, so the round's rule is one sample:
    accept iff ⟨β̃1 − β̃0, x'⟩ ≥ 0 (with the intercept's part), linear in x'. Unaware of
    gaming.

    Parameters
    ----------
    alpha : float
        α ≥ 0, the scale of MABWiser's posterior sample.
    l2_lambda, intercept, r0, feedback
        As for :class:`MABWiserLinUCB`.

    Examples
    --------
    >>> import numpy as np
    >>> from strategic_apple_tasting.peers import MABWiserLinTS
    >>> learner = MABWiserLinTS(r0=0.1, feedback="apple").reset(2, np.random.default_rng(0))
    >>> rule = learner.policy()       # one posterior sample, fixed for the round
    >>> x = np.array([0.4, 0.3])
    >>> rule.accepts(x) == rule.accepts(x) == learner.act(x)
    True
    """

    name = "mabwiser:LinTS"
    _linear = True

    _policy_name = "LinTS"


@examples_need(LIBRARY)
class MABWiserLinGreedy(_MABWiserLearner):
    """MABWiser's ``LearningPolicy.LinGreedy`` over accept (arm 1) and reject (arm 0).

    With probability ε a prediction is random (MABWiser draws random expectations); the adapter
    freezes the draws for the round, so an exploring round accepts everyone or no one, and any
    other round accepts iff ⟨β̂1 − β̂0, x'⟩ ≥ 0 (with the intercept's part). Unaware of gaming.

    Parameters
    ----------
    epsilon : float
        ε in [0, 1], MABWiser's exploration probability.
    l2_lambda, intercept, r0, feedback
        As for :class:`MABWiserLinUCB`.

    Examples
    --------
    >>> from strategic_apple_tasting.peers import MABWiserLinGreedy
    >>> MABWiserLinGreedy(epsilon=0.05).get_params()
    {'epsilon': 0.05, 'l2_lambda': 1.0, 'intercept': True, 'r0': None, 'feedback': None}
    """

    name = "mabwiser:LinGreedy"
    _linear = True

    def __init__(self, epsilon: float = 0.1, l2_lambda: float = 1.0, intercept: bool = True,
                 r0: float | None = None, feedback: str | None = None) -> None:
        self._require()
        self.epsilon = epsilon
        self.l2_lambda = l2_lambda
        self.intercept = intercept
        self.r0 = r0
        self.feedback = feedback

    def _check_params(self) -> None:
        super()._check_params()
        check_number("epsilon", self.epsilon, 0.0, 1.0)

    def _policy(self, learning_policy: Any) -> Any:
        return learning_policy.LinGreedy(epsilon=self.epsilon, l2_lambda=self.l2_lambda)
