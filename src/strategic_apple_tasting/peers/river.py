"""river's ``bandit.LinUCBDisjoint`` as a learner.

The policy is used as river's users use it: ``pull(arm_ids, context)`` chooses an arm for a
context (a dict of features) and ``update(arm_id, context, reward)`` learns. Arm 1 is accept and
arm 0 reject; contexts are ``{"x0": x'_0, ..., "bias": 1.0}`` (no ``bias`` without an
intercept).

The published rule: accept iff ``pull([1, 0], context(x'))`` is 1. river picks the arm with the
larger upper bound μ_a + σ_a of its per-arm ``BayesianLinearRegression`` (σ the predictive
deviation, noise included) and breaks exact ties at random. g carries the decision's sign and,
for agents' numerical search, the size of the gap between the two arms' bounds, computed from
the per-arm models' parameters as ``predict_one(context, with_dist=True)`` computes each (the
round's twin, :mod:`.twins`): g = |UCB1 − UCB0| when river pulls arm 1, −max(|UCB1 − UCB0|,
tiny) when it pulls arm 0 (so g ≥ 0 exactly when it pulls arm 1).
The per-arm models sit in a private attribute of the policy (``_bayes_lin_regs``); they serve
g's size, its gradient (central differences of the gap) and the estimate of θ1 − θ0 (the
difference of the arms' posterior means, each read by ``predict_one`` at unit contexts), never
the decision.

Randomness. The tie-break draws from the policy's ``random.Random``, seeded from the learner's
Generator (``seed=``). The adapter saves its state when it publishes the round's rule and
restores it before every ``pull`` of the round, so ties are broken the same way at every point
(before any data every point ties: the round accepts everyone or no one). When the round ends
it restores the state once more and pulls at the observed x' (a user's one pull of the round),
which moves the stream on. river keeps this generator in a private attribute (``_rng``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._jit import compiled_for
from ..game.game import check_number
from ..game.policies import RULES, central_differences
from ._common import TINY, Box, PeerLearner, check_fields, examples_need, seed_from
from .twins import BayesGapTwin, linear_twin

LIBRARY = "river"
#: river's private fields the adapter reads (checked when a policy is made: check_fields):
#: the policy's pull counts, per-arm regressions and tie-break generator, and each regression's
#: feature index, posterior mean and covariance.
PRIVATE_POLICY = ("_counts", "_bayes_lin_regs", "_rng", "burn_in")
PRIVATE_MODEL = ("_idx", "_ensure_m", "_m_arr", "_ss_inv_arr", "alpha", "beta", "predict_one")
ARMS = [1, 0]
#: The twin's margin (:mod:`.twins`), relative to the sizes of the terms of g: river's numbers,
#: computed in double precision in another order, are a few ulps away.
MARGIN = 1e-9
#: The compiled g of a BayesGapTwin, called without numba's dispatch (one signature: made once).
_GAP = None


class _RiverBox(Box):
    def __init__(self, d: int, intercept: bool, policy: Any) -> None:
        super().__init__(d, intercept)
        self.policy = policy
        self.names = [f"x{i}" for i in range(d)]
        self.features_named = [*self.names, "bias"] if intercept else self.names
        self.frozen: tuple | None = None
        # The round's last pull: its point (every pull of the round starts from the frozen
        # state, so the state after it is the state after a user's one pull there).
        self.last: bytes | None = None
        self.dirty = False  # whether a pull of the round may have drawn (a tie)
        self.gap_twin: BayesGapTwin | None = None  # the round's twin without its margin
        self.twin_now: BayesGapTwin | None = None  # and with it
        self.gradient = self._gradient

    def context(self, z: np.ndarray) -> dict[str, float]:
        ctx = {name: float(v) for name, v in zip(self.names, z, strict=True)}
        if self.intercept:
            ctx["bias"] = 1.0
        return ctx

    def _restore(self) -> None:
        if self.frozen is not None and self.dirty:
            self.policy._rng.setstate(self.frozen)  # river's tie-break generator (private)
            self.dirty = False

    def freeze(self) -> None:
        self.frozen = self.policy._rng.getstate()
        self.last = None
        self.dirty = False

    def twin(self) -> object:
        """The round's rule from the two arms' Bayesian regressions (their posterior means and
        covariances, ``_m_arr`` and ``_ss_inv_arr``, at each feature's index ``_idx``), as
        ``predict_one(with_dist=True)`` computes each bound; during river's burn-in, the arm
        it pulls whatever the context (the first still short of its pulls)."""
        policy = self.policy
        self.gap_twin = None
        for arm in ARMS:
            if policy._counts[arm] < policy.burn_in:
                return linear_twin(np.zeros(self.d), 1.0 if arm == 1 else -1.0, MARGIN)
        names = self.features_named
        k = len(names)
        mean, cov = np.zeros((2, k)), np.zeros((2, k, k))
        extra, noise = np.zeros((2, k)), np.zeros(2)
        for a, arm in enumerate(ARMS):
            model = policy._bayes_lin_regs[arm]
            noise[a] = 1.0 / model.beta
            idx = model._idx
            index = [idx.get(name) for name in names]
            if None not in index:  # every feature seen (all but the first rounds)
                model._ensure_m()
                mean[a] = model._m_arr[index]
                cov[a] = model._ss_inv_arr[index][:, index]
                continue
            known = [i for i, j in enumerate(index) if j is not None]
            if known:
                model._ensure_m()
                at = [index[i] for i in known]
                mean[a, known] = model._m_arr[at]
                cov[a][np.ix_(known, known)] = model._ss_inv_arr[np.ix_(at, at)]
            extra[a, [i for i, j in enumerate(index) if j is None]] = 1.0 / model.alpha
        self.gap_twin = BayesGapTwin(mean, cov, extra, noise, self.intercept, 0.0,
                                     np.empty((2, k)))
        self.twin_now = self.gap_twin._replace(rel=MARGIN, work=np.empty((2, k)))
        return self.twin_now

    def _gap(self, ctx: dict[str, float]) -> float:
        """UCB1 − UCB0 as river's pull computes each bound: μ + σ of the arm's model."""
        models = self.policy._bayes_lin_regs
        bounds = []
        for arm in ARMS:
            dist = models[arm].predict_one(ctx, with_dist=True)
            bounds.append(dist.mu + dist.sigma)
        return float(bounds[0] - bounds[1])

    def value(self, z: np.ndarray) -> float:
        ctx = self.context(z)
        if self.gap_twin is not None:
            gap, margin = self._size(z)
        else:
            gap, margin = self._gap(ctx), math.inf
        self._restore()
        arm = self.policy.pull(ARMS, ctx)  # the decision: river's own
        # river draws only to break an exact tie of the two bounds: a gap beyond the twin's
        # margin (10⁻⁹ of the bounds' size, far beyond their rounding) cannot be one, so the
        # generator is still as frozen (no need to save it and put it back).
        self.dirty = self.dirty or not abs(gap) > margin
        self.last = np.asarray(z, float).tobytes()
        return abs(gap) if arm == 1 else -max(abs(gap), TINY)

    def _size(self, z: np.ndarray) -> tuple[float, float]:
        """UCB1 − UCB0 from the round's parameters, computed as the twin computes it, and the
        twin's margin there: river's two predictions per arm again would double a decision's
        cost."""
        global _GAP
        z = np.ascontiguousarray(z, dtype=float)
        grad = np.empty(z.shape[0])
        if _GAP is None:  # once: numba's dispatch would type the twin at every call
            _GAP = compiled_for(RULES[BayesGapTwin], self.gap_twin, z, grad, False)
        gap = float(_GAP(self.gap_twin, z, grad, False))
        return gap, gap - float(_GAP(self.twin_now, z, grad, False))

    def _gradient(self, z: np.ndarray) -> np.ndarray:
        return central_differences(
            lambda points: [self._gap(self.context(p)) for p in points], np.asarray(z, float))

    def end_round(self, x_obs: np.ndarray, arm: int, reward: float | None) -> None:
        ctx = self.context(x_obs)
        if self.frozen is None or self.last != np.asarray(x_obs, float).tobytes():
            self._restore()
            self.policy.pull(ARMS, ctx)  # the user's pull of the round: the stream moves on
        # (else the round's last pull, the decision, was the user's pull, from the frozen state)
        self.frozen = self.last = None
        self.dirty = False
        if reward is not None:
            self.policy.update(arm, ctx, reward)

    def estimate(self) -> np.ndarray | None:
        # Each arm's posterior mean coefficients, read through its predict_one (linear: the
        # prediction at a unit context is the coefficient).
        models = self.policy._bayes_lin_regs
        out = np.empty(self.d)
        for i, name in enumerate(self.names):
            unit = {n: (1.0 if n == name else 0.0) for n in self.names}
            out[i] = models[1].predict_one(unit) - models[0].predict_one(unit)
        return out


@examples_need(LIBRARY)
class RiverLinUCBDisjoint(PeerLearner):
    """river's ``bandit.LinUCBDisjoint`` over accept (arm 1) and reject (arm 0).

    Each arm keeps river's Bayesian linear regression (prior precision α, noise precision β);
    the rule accepts iff river pulls arm 1, that is iff accept's upper bound μ1 + σ1 at x' beats
    reject's (apple tasting: a regression fitted to r0 on the rejected points), ties broken by
    river's seeded generator, frozen for the round. Not a linear threshold: agents answer it
    numerically. Unaware of gaming.

    Parameters
    ----------
    alpha : float
        α > 0, river's prior precision parameter of each arm's regression.
    beta : float
        β > 0, river's noise precision parameter.
    smoothing : float, optional
        river's forgetting factor in (0, 1) (None: none).
    burn_in : int
        river's burn-in: each arm is pulled this many times first.
    intercept : bool
        Add a constant feature ``bias`` = 1 to the context.
    r0 : float, optional
        Reward of rejecting (None: the game's).
    feedback : {"apple", "bandit"}, optional
        Feedback mode (None: the game's).

    Examples
    --------
    >>> import numpy as np
    >>> from strategic_apple_tasting.peers import RiverLinUCBDisjoint
    >>> learner = RiverLinUCBDisjoint(r0=0.1, feedback="apple").reset(2, np.random.default_rng(0))
    >>> x = np.array([0.4, 0.3])
    >>> accepted = learner.act(x)     # river's pull at x, under the round's rule
    >>> learner.update(x, accepted, 0.8 if accepted else None)
    True
    """

    # river keeps each arm's posterior covariance by Sherman–Morrison updates: at features of
    # 10⁹ rounding makes a variance negative, and σ, its square root, complex (river's caller
    # keeps the real part, with a warning). Up to 10⁶ it stays positive.
    tags = dataclasses.replace(PeerLearner.tags(), input_bound=1e6)

    name = "river:LinUCBDisjoint"
    library = LIBRARY

    def __init__(self, alpha: float = 1.0, beta: float = 1.0, smoothing: float | None = None,
                 burn_in: int = 0, intercept: bool = True, r0: float | None = None,
                 feedback: str | None = None) -> None:
        self._require()
        self.alpha = alpha
        self.beta = beta
        self.smoothing = smoothing
        self.burn_in = burn_in
        self.intercept = intercept
        self.r0 = r0
        self.feedback = feedback

    def _check_params(self) -> None:
        super()._check_params()
        check_number("alpha", self.alpha, 0.0, open_low=True)
        check_number("beta", self.beta, 0.0, open_low=True)
        if self.smoothing is not None:
            check_number("smoothing", self.smoothing, 0.0, 1.0, open_low=True)
        if not (isinstance(self.burn_in, int) and not isinstance(self.burn_in, bool)
                and self.burn_in >= 0):
            raise ValueError(f"burn_in must be an integer >= 0, got {self.burn_in!r}")

    def _box(self, d: int) -> _RiverBox:
        bandit = self._require("bandit")
        policy = bandit.LinUCBDisjoint(alpha=self.alpha, beta=self.beta,
                                       smoothing=self.smoothing, burn_in=self.burn_in,
                                       seed=seed_from(self.generator))
        check_fields(LIBRARY, policy, "bandit.LinUCBDisjoint", PRIVATE_POLICY)
        check_fields(LIBRARY, policy._bayes_lin_regs.default_factory(),
                     "linear_model.BayesianLinearRegression", PRIVATE_MODEL)
        return _RiverBox(d, self.intercept, policy)
