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

For LinTS and LinGreedy the round's rule is linear once its draws are made: the adapter makes
them as MABWiser's prediction makes them (the twin, :meth:`_MABBox.twin`), so at a point x'
where ⟨w, x̄'⟩ is farther from 0 than rounding could reach (:data:`SURE`) MABWiser's own
prediction there would return the same decision, and the adapter takes it from those draws and
leaves the Generators where that prediction would leave them; nearer the boundary it asks
MABWiser. tests/peers checks decisions and the Generators' later draws against a MAB driven
through its public API.

The estimate of θ1 − θ0 is the difference of the two arms' ridge coefficients (without the
intercept's), read from MABWiser's per-arm models (``MAB._imp.arm_to_model[arm].beta``, not
public); it serves the results' ``theta_error`` only.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, ClassVar

import numpy as np

from ..game.game import check_number
from ..game.policies import central_differences
from ._common import Box, PeerLearner, check_fields, examples_need, seed_from
from .twins import UCBGapTwin, linear_twin

LIBRARY = "mabwiser"
#: MABWiser's private fields the adapter reads (checked when a MAB is made: check_fields): its
#: implementation's per-arm models, generator and ε, what partial_fit runs after validating,
#: and each arm model's ridge coefficients, inverse, α and generator.
PRIVATE_IMP = ("arm_to_model", "rng", "epsilon", "_set_arms_as_trained")
PRIVATE_ARM = ("beta", "A_inv", "alpha", "rng", "fit")
#: The twin's margin (:mod:`.twins`), relative to the sizes of the terms of g: MABWiser's
#: numbers, computed in double precision in another order, are a few ulps away.
MARGIN = 1e-9
#: How far from 0, relative to the size of its terms (1 + Σ|w_i x̄'_i|), g of a linear round
#: must be for the adapter to decide from the round's draws without MABWiser's prediction:
#: MABWiser's g is the same double-precision sum in another order, a few ulps (10⁻¹⁵) away.
SURE = 1e-9


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
    def __init__(self, d: int, intercept: bool, mab: Any, *, kind: str) -> None:
        super().__init__(d, intercept)
        self.mab = mab
        self.kind = kind  # "ucb", "ts" or "greedy": MABWiser's regression
        self.deterministic = kind == "ucb"  # predictions draw nothing that matters (LinUCB)
        self.linear = kind != "ucb"  # a frozen round's rule is linear in x' (LinTS, LinGreedy)
        self.frozen: list | None = None
        # A linear round's rule from its draws (w, offset) and the Generators' states after a
        # prediction made those draws (see :meth:`twin`).
        self.drawn: tuple[np.ndarray, float, list] | None = None
        self.generators: list | None = None  # the Generators the MAB object holds
        self.factors: dict[int, tuple] = {}  # arm model → (its A⁻¹, LinTS's Cholesky factor)
        # After the last evaluation of the round: its point and the generators' states then,
        # which are the states after a user's one prediction there.
        self.after: tuple[bytes, list] | None = None
        if self.deterministic:
            self.gradient = self._gradient

    def _restore(self) -> None:
        if self.frozen is not None:
            for generator, state in self.frozen:
                generator.bit_generator.state = state

    def freeze(self) -> None:
        if self.generators is None:  # found again only when an arm's generator was copied
            self.generators = generators(self.mab)
        self.frozen = [(g, g.bit_generator.state) for g in self.generators]
        self.after = self.drawn = None

    def value(self, z: np.ndarray) -> float:
        if self.drawn is not None:
            w, offset, states = self.drawn
            terms = w * np.asarray(z, float)
            g = float(terms.sum()) + offset
            if abs(g) > SURE * (1.0 + float(np.abs(terms).sum()) + abs(offset)):
                self.after = (np.asarray(z, float).tobytes(), states)
                return g
        self._restore()
        got = self.mab.predict_expectations(self.features(z)[None, :])
        if self.frozen is not None:
            self.after = (np.asarray(z, float).tobytes(),
                          [(g, g.bit_generator.state) for g, _ in self.frozen])
        return float(got[1] - got[0])

    def values(self, zs: np.ndarray) -> np.ndarray:
        if not self.deterministic or len(zs) == 1:
            return super().values(zs)
        self._restore()  # the draws do not change a deterministic policy's numbers
        got = self.mab.predict_expectations(self.features(zs))
        self.after = None
        return np.array([float(e[1] - e[0]) for e in got])

    def _gradient(self, z: np.ndarray) -> np.ndarray:
        return central_differences(self.values, z)

    def twin(self) -> Any:
        """The round's rule from MABWiser's per-arm models: LinUCB's two upper bounds; for
        LinTS and LinGreedy the round's draws, made as ``_Linear._vectorized_predict_context``
        makes them for one context (the MAB's uniform for ε, then each arm's sample), from the
        frozen generators, which are put back after."""
        imp = self.mab._imp
        models = [imp.arm_to_model[1], imp.arm_to_model[0]]
        k = self.d + 1 if self.intercept else self.d
        if self.kind == "ucb":
            theta = np.array([np.asarray(m.beta, float) for m in models])
            inv = np.array([np.asarray(m.A_inv, float) for m in models])
            return UCBGapTwin(theta, inv, float(models[0].alpha), self.intercept, MARGIN,
                              np.empty((2, k)))
        self._restore()
        explore = imp.rng.rand(1)[0] < imp.epsilon
        if explore:  # random expectations: the round accepts everyone or no one
            e1, e0 = imp.rng.rand((1, 2))[0]
            w, offset = np.zeros(self.d), float(e1 - e0)
        else:
            if self.kind == "ts":  # MABWiser's sample: β_a + L_a ξ, LL' = α²A_a⁻¹ (Cholesky)
                coef = [np.asarray(m.beta, float) + self._factor(m) @ m.rng.rng.standard_normal(k)
                        for m in models]
            else:
                coef = [np.asarray(m.beta, float) for m in models]
            diff = np.asarray(coef[0], float) - np.asarray(coef[1], float)
            w, offset = diff[:self.d], (float(diff[self.d]) if self.intercept else 0.0)
        self.drawn = (np.array(w, dtype=float), offset,
                      [(g, g.bit_generator.state) for g, _ in self.frozen])
        self._restore()
        return linear_twin(w, offset, MARGIN)

    def _factor(self, model: Any) -> np.ndarray:
        """The Cholesky factor of an arm's sampling covariance α²A⁻¹ (made again when the arm
        learns: MABWiser replaces A⁻¹ then), as numpy's ``multivariate_normal(method=
        "cholesky")`` factors it; the twin's sample is then the library's to rounding."""
        cached = self.factors.get(id(model))
        if cached is None or cached[0] is not model.A_inv:
            cached = (model.A_inv, np.linalg.cholesky(np.square(model.alpha) * model.A_inv))
            self.factors[id(model)] = cached
        return cached[1]

    def end_round(self, x_obs: np.ndarray, arm: int, reward: float | None) -> None:
        context = self.features(x_obs)[None, :]
        if self.after is not None and self.after[0] == np.asarray(x_obs, float).tobytes():
            for generator, state in self.after[1]:  # the decision was the user's prediction
                generator.bit_generator.state = state
        else:
            self._restore()
            self.mab.predict(context)  # the user's prediction of the round: the stream moves on
        self.frozen = self.after = self.drawn = None
        if reward is not None:
            self._fit(arm, float(reward), context)

    def _fit(self, arm: int, reward: float, context: np.ndarray) -> None:
        """What ``MAB.partial_fit([arm], [reward], context)`` does, without its per-call cost
        (validating the input, joblib, deep-copying both arms' models: 1 ms a call): the arm's
        own ridge update (``_RidgeRegression.fit``) and its trained status. MABWiser fits a deep
        copy of the arm's model, whose generator thereafter draws on its own: LinTS's samples
        come from it, so its generator is copied as MABWiser's copy would be (the other
        policies' arm models draw nothing). tests/peers checks the two give the same numbers."""
        imp = self.mab._imp
        model = imp.arm_to_model[arm]
        if self.kind == "ts" and any(model.rng is other.rng for other in
                                     (imp, *imp.arm_to_model.values()) if other is not model):
            # Shared (an arm never fitted holds the MAB's own): a copy, as MABWiser's deep copy
            # makes it; once the arm's own, later copies change nothing a prediction sees.
            model.rng = copy.deepcopy(model.rng)
            self.generators = None
        model.fit(context, np.array([reward]))
        imp._set_arms_as_trained(decisions=np.array([arm]), is_partial=True)

class _MABWiserLearner(PeerLearner, abstract=True):
    library = LIBRARY
    # MABWiser inverts its ridge matrix λI + XᵀX in double precision: a feature of 10⁹ makes
    # 1 + 10¹⁸ = 10¹⁸ and the inverse fails on the first point. Up to 10⁶ the ridge stays
    # visible (10¹² against 2⁵³ ≈ 9·10¹⁵) for thousands of points at the bound.
    tags = dataclasses.replace(PeerLearner.tags(), input_bound=1e6)
    _policy_name: ClassVar[str]
    _kind: ClassVar[str]  # MABWiser's regression: "ucb", "ts" or "ridge" (LinGreedy)
    l2_lambda: float

    def _policy(self, learning_policy: Any) -> Any:
        raise NotImplementedError

    def _check_params(self) -> None:
        super()._check_params()
        check_number("l2_lambda", self.l2_lambda, 0.0, open_low=True)

    def _box(self, d: int) -> _MABBox:
        mab_module = self._require("mab")
        mab = mab_module.MAB(arms=[1, 0], learning_policy=self._policy(mab_module.LearningPolicy),
                             seed=seed_from(self.generator))
        k = d + 1 if self.intercept else d
        mab.fit(np.zeros(0, dtype=int), np.zeros(0), np.zeros((0, k)))  # the prior, no data
        check_fields(LIBRARY, mab, "MAB", ("_imp",))
        check_fields(LIBRARY, mab._imp, "MAB's implementation", PRIVATE_IMP)
        for arm in (1, 0):
            check_fields(LIBRARY, mab._imp.arm_to_model[arm], "arm model", PRIVATE_ARM)
        return _MABBox(d, self.intercept, mab, kind=self._kind)



class _AlphaLearner(_MABWiserLearner, abstract=True):
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
    _kind = "ucb"

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
    _kind = "ts"

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
    _kind = "greedy"

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
