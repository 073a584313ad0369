"""Exponential weights over N sampled strategy-aware experts, for oblivious adversarial contexts.

Our design, not the paper's: EXP3-SAE (`alg:UPD-ONE`) over a fixed number N of linear rules
drawn at random instead of a grid whose size is exponential in d, with every expert's loss
estimated every round from the one observed outcome. A round costs O(N·d) time and the state
O(N·d) memory, whatever T.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import clean_margin, reach
from ..game.game import check_number
from ..game.policies import clean_above, norm
from ._invariants import cached, finite, fixed, within
from .base import Learner, LearnerKernels
from .binding import compiled_belief_of
from .tags import LearnerTags

#: Weights are rescaled to a largest of 1 once it falls below this: p is unchanged, and no
#: weight that still matters can underflow.
_FLOOR = 1e-150
#: ``q_sum`` of a state whose weights changed since q was computed (a sum is never negative).
_STALE = -1.0
#: The largest exponent of a weight's factor in the scaled update (e^700 < 1.8·10³⁰⁸).
_MAX_EXPONENT = 700.0


class SampledSAEState(NamedTuple):
    agents: Any  # the agent model the learner believes in
    r0: float
    lam: float  # λ: losses are 1 + λ − r
    eta: float  # η: learning rate
    gamma: float  # γ: uniform exploration
    bandit: bool
    experts: np.ndarray  # float64 (N, d): the sampled rules β_j
    w: np.ndarray  # float64 (N,): the weights, exp(−η·(estimated cumulative loss)), rescaled
    q: np.ndarray  # float64 (N,): q = (1 − γ)p + γ/N under the current weights, if q_sum is
    q_sum: np.ndarray  # float64 (1,): Σ_j q_j, or −1 once the weights have changed since
    votes: np.ndarray  # bool (N,): scratch, whether expert j would accept this round's agent
    x_hat: np.ndarray  # float64 (d,): scratch, the estimated true context
    played: np.ndarray  # int64 (1,): the expert committed to this round
    q_played: np.ndarray  # float64 (1,): its probability under q


@njit
def _refresh(state):
    """q for the current weights into ``state.q``; returns Σ_j q_j.

    Cached until the next update: a round computes it once whether policy or update asks first.
    """
    if state.q_sum[0] >= 0.0:  # (a state saved by an older release marks it NaN)
        return state.q_sum[0]
    w, q = state.w, state.q
    n = w.shape[0]
    mass = 0.0
    for j in range(n):
        mass += w[j]
    keep = (1.0 - state.gamma) / mass
    spread = state.gamma / n
    total = 0.0
    for j in range(n):
        q[j] = w[j] * keep + spread
        total += q[j]
    state.q_sum[0] = total
    return total


@njit
def _policy(state, rng, beta):
    total = _refresh(state)
    q, experts = state.q, state.experts
    n = q.shape[0]
    v = rng.random() * total
    chosen = -1
    last = 0  # v can round up to the total; then the last expert that has mass
    cum = 0.0
    for j in range(n):
        if q[j] > 0.0:
            last = j
        cum += q[j]
        if v < cum:
            chosen = j
            break
    if chosen < 0:
        chosen = last
    state.played[0] = chosen
    state.q_played[0] = q[chosen] / total
    for k in range(beta.shape[0]):
        beta[k] = experts[chosen, k]
    return state.r0 + reach(state.agents, beta)


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    """Learn one round's feedback: the context recovered, then every expert's importance-
    weighted gain and the weights.

    Why it is long: a compiled loop over the experts whose per-expert arithmetic shares the
    round's recovered context, probability and estimates held in locals."""
    bandit = state.bandit
    if (accepted or bandit) and not observed:
        return False  # the outcome the estimates need was not seen: learn nothing
    agents, x_hat = state.agents, state.x_hat
    d = x.shape[0]
    # Nobody moves to be rejected, and an accepted point clear of the boundary band is
    # unmoved; a gamed point's true context lies on x' − m·β/‖β‖, 0 < m ≤ reach/‖β‖, and we
    # take the middle (a heuristic: see the class docstring).
    back = 0.0
    if accepted and not clean_above(beta, threshold, x, clean_margin(agents, beta)):
        nb = norm(beta)
        if nb > 0.0:
            back = 0.5 * reach(agents, beta) / (nb * nb)
    for k in range(d):
        x_hat[k] = x[k] - back * beta[k]

    total = _refresh(state)
    q, experts, votes, w = state.q, state.experts, state.votes, state.w
    n = q.shape[0]
    r0 = state.r0
    played = state.played[0]
    mass_accept = 0.0
    mass_reject = 0.0
    top_accept = 0.0  # the largest weight on each side (for the update's scaling below)
    top_reject = 0.0
    for j in range(n):
        if j == played:
            vote = accepted  # the estimator must agree with what happened
        else:
            s = 0.0
            for k in range(d):
                s += experts[j, k] * x_hat[k]
            vote = s >= r0
        votes[j] = vote
        if vote:
            mass_accept += q[j]
            top_accept = max(top_accept, w[j])
        else:
            mass_reject += q[j]
            top_reject = max(top_reject, w[j])
    # Probabilities under the weights of now, not of the policy's draw (they differ when a
    # rule is held for a period); never below the played expert's own probability, which is
    # on the side that was taken.
    q_played = state.q_played[0]
    lam = state.lam
    # Clipped at 0: noise beyond λ (EXP3-SAE's bad event) would make a loss negative, and a
    # negative loss over a small probability would blow a weight up.
    loss = max(0.0, 1.0 + lam - reward)
    if bandit:
        if accepted:
            loss_accept = loss / max(mass_accept / total, q_played)
            loss_reject = 0.0
        else:
            loss_accept = 0.0
            loss_reject = loss / max(mass_reject / total, q_played)
    else:
        # Rejecting earns the known r0: every rejecting expert's loss is known, no weighting.
        loss_reject = max(0.0, 1.0 + lam - r0)
        loss_accept = loss / max(mass_accept / total, q_played) if accepted else 0.0
    # Every expert's loss is one of two values: two exponentials a round, not N. (η = 0 learns
    # nothing; an infinite loss, over a probability that underflowed, would make 0·∞ = NaN.)
    eta = state.eta
    exponent_accept = -eta * loss_accept if eta > 0.0 else 0.0
    exponent_reject = -eta * loss_reject if eta > 0.0 else 0.0
    factor_accept = math.exp(exponent_accept)
    factor_reject = math.exp(exponent_reject)
    if max(top_accept * factor_accept, top_reject * factor_reject) == 0.0:
        # Every weight would underflow to 0 (an outcome far beyond λ over a small P): scale
        # both factors so that the largest new weight is 1, which leaves p as it should be.
        # With the weights all on one side and its factor 0, they all lose the same: p stays.
        # A factor is capped at e^700 (finite): only a side whose weights are all below e^−700
        # (so 0·∞ never happens) would need more, and it keeps its proportions.
        top_log = max(math.log(top_accept) + exponent_accept if top_accept > 0.0 else -math.inf,
                      math.log(top_reject) + exponent_reject if top_reject > 0.0 else -math.inf)
        if top_log == -math.inf:
            factor_accept = factor_reject = 1.0
        else:
            factor_accept = math.exp(min(exponent_accept - top_log, _MAX_EXPONENT))
            factor_reject = math.exp(min(exponent_reject - top_log, _MAX_EXPONENT))
    top = 0.0
    for j in range(n):
        w[j] *= factor_accept if votes[j] else factor_reject
        top = max(top, w[j])
    if 0.0 < top < _FLOOR:  # (the side with most mass keeps a positive weight)
        for j in range(n):
            w[j] /= top
    state.q_sum[0] = _STALE
    # No point is ever learned "as clean" (SA-OLS's sense): only whole-population weights move.
    return False


@njit
def _estimate(state, out):
    # None: the p-weighted mean of the experts would be no estimate of θ1 − θ0. At r0 = 0 every
    # positive multiple of a rule is the same rule, so the losses identify a direction only,
    # and a mean of points of the ball shrinks towards 0 as p spreads: its distance to θ (the
    # results' theta_error) would measure p's spread and an unidentified scale, not learning.
    return False


def check_state(state: SampledSAEState, template: SampledSAEState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: the belief as
    the parameters make it, the experts finite, the weights finite and >= 0, the cached q
    (when q_sum says it is current) what the weights give, the played expert one of the N and
    its probability in [0, 1]."""
    fixed(state.agents, template.agents, f"{where}.agents")
    finite(state.experts, f"{where}.experts")
    finite(state.w, f"{where}.w")
    within(state.w, f"{where}.w", 0.0, np.inf)
    n = state.w.shape[0]
    within(state.played, f"{where}.played", 0, n - 1)
    within(state.q_played, f"{where}.q_played", 0.0, 1.0)
    if state.q_sum[0] >= 0.0:  # current (stale: _STALE, or NaN from an older release)
        fresh = state._replace(q=np.empty(n), q_sum=np.full(1, _STALE))
        _refresh(fresh)
        cached(state.q, fresh.q, f"{where}.q", f"{where}.w")
        cached(state.q_sum, fresh.q_sum, f"{where}.q_sum", f"{where}.w")


KERNELS = LearnerKernels(SampledSAEState, _policy, _update, _estimate, check=check_state)


def sample_ball(rng: np.random.Generator, n: int, d: int, bound: float) -> np.ndarray:
    """``n`` points drawn uniformly from the ball of radius ``bound`` in R^d, as rows.

    A uniform direction (a normalized Gaussian) times ``bound``·U^(1/d).

    Examples
    --------
    >>> points = sample_ball(np.random.default_rng(0), 1000, 3, 2.0)
    >>> points.shape, bool(np.linalg.norm(points, axis=1).max() <= 2.0)
    ((1000, 3), True)
    """
    z = rng.standard_normal((n, d))
    length = np.linalg.norm(z, axis=1)
    length[length == 0.0] = 1.0  # probability 0; the expert is then β = 0
    radius = bound * rng.random(n) ** (1.0 / d)
    return z * (radius / length)[:, None]


class SampledSAE(Learner):
    """Exponential weights over N sampled strategy-aware experts (oblivious contexts).

    Our design (not in the paper), made to learn at d = 2, 5, 10 in time polynomial in d, where
    EXP3-SAE's grid is so fine that at T < 10^7 it plays nearly uniformly at random.

    **Experts.** At reset, N = ``experts`` vectors β_j drawn once, uniformly from the ball of
    radius B = ``bound`` in R^d (under bandit feedback they stand for θ1 − θ0, as in EXP3-SAE).
    Expert j's rule is EXP3-SAE's shifted rule: accept iff ⟨β_j, x'⟩ ≥ r0 + reach(β_j)
    (δ‖β_j‖ for lazy agents), which accepts exactly the agents with ⟨β_j, x⟩ ≥ r0 when every
    agent games lazily.

    **Playing.** q = (1 − γ)p + γ/N with p ∝ w; draw i ~ q and publish expert i's rule.

    **Learning** from (x', accepted, reward), every expert at once:

    * the true context x̂: x' if rejected (nobody moves to be rejected) or if accepted clear of
      the band in which a mover can land (``clean_above``, certified unmoved); else (gamed, on
      the boundary) the middle of the segment x' − m·u, 0 < m ≤ reach(β_i)/‖β_i‖,
      u = β_i/‖β_i‖, on which the true context lies. This is a heuristic: for an expert whose
      boundary crosses that segment between x and x̂ it guesses the vote below wrong, and the
      estimates are biased;
    * a_j = 1 iff ⟨β_j, x̂⟩ ≥ r0 (expert j's shifted rule would accept this agent), except that
      a_i = accepted for the played expert; P = Σ_j q_j a_j with the *current* weights (under
      delays or a rule held for a period, the weights have moved since the draw and P is an
      approximation);
    * with L(r) = max(0, 1 + λ − r), λ = σ·sqrt(2 log T) (EXP3-SAE's shift, which bounds the
      noise; the clip acts only beyond it): under apple tasting, experts that reject get
      L(r0) (known: a rejection earns r0), experts that accept get L(y)·𝟙{accepted}/P; under
      bandit feedback accepters get L(y)·𝟙{accepted}/P and rejecters L(y)·𝟙{rejected}/(1 − P).
      P and 1 − P are floored at q_i on the side the played expert took (equal to them in the
      per-round game, a guard when the weights have moved);
    * w_j ← w_j·exp(−η·ℓ̂_j) for every j (ℓ̂_j takes one of two values: two exponentials a
      round). The weights are rescaled (p does not change) so that the largest stays above
      10⁻¹⁵⁰, and in a round whose losses would take every weight to 0 (an outcome far beyond
      λ over a small P, or an infinite ℓ̂) the two factors are scaled so that the largest new
      weight is 1: any outcome the API accepts is learned, and no weight becomes NaN.

    No point is ever learned "as clean" (``update`` returns False), and there is no estimate
    of θ (see ``_estimate``). O(N·d) time a round, O(N·d) memory.

    **What can be argued** (not proved in the paper; no more than this). Assume contexts are
    oblivious; every agent responds as the learner believes (lazy, and every agent games when
    it can, ``truthful = 0``: otherwise expert j's rule does not accept exactly
    {⟨β_j, x⟩ ≥ r0}); every a_j is right (true when x̂ = x: a rejected or certified-clean agent,
    or a gamed one whose segment no expert's boundary crosses); each outcome is learned before
    the next draw; and the noise stays within λ. Then, given the past and x_t, P is the
    chance the learner accepts and ℓ̂_j is an unbiased, nonnegative estimate of expert j's
    loss. EXP3's inequality (e^(−z) ≤ 1 − z + z²/2 for z ≥ 0), at γ = 0, gives
    Σ_t ⟨p_t, ℓ̂_t⟩ − Σ_t ℓ̂_{t,k} ≤ ln N/η + (η/2)·Σ_t Σ_j p_{t,j}·ℓ̂_{t,j}². The accepters
    (mass P) have nonzero estimates with probability P, each L²/P², so their part of the
    second moment is P·P·E[L²]/P² = E[L²]; the rejecters add (1 − P)·L(r0)² (apple) or
    E[L²] of rejecting (bandit). With M² = (2 + λ)² + σ² ≥ each E[L²] (|⟨θ, x⟩| ≤ 1,
    |r0| ≤ 1), the expected regret against the best of the N sampled experts is at most
    ln N/η + η·T·M², i.e. 2M·sqrt(T ln N) = O((2 + λ)·sqrt(T log N)) at the default η. With
    γ > 0, add γ·T times the loss range and divide the η term by 1 − γ.

    Against the best linear rule, add T times the best sampled expert's per-round gap. At
    r0 = 0 that gap is at most ‖θ‖ sin ε (a misclassified point has |⟨θ, x⟩| ≤ ‖θ‖‖x‖ sin ε,
    ‖x‖ ≤ 1) for ε the smallest angle between θ and an expert, and a sequence may put its
    points in that wedge; for N uniform directions ε ≈ N^(−1/(d−1)) (up to a factor of d), so
    a fixed accuracy needs N exponential in d (with r0 ≠ 0 the scale must be right too:
    ‖β_j − θ‖ ≈ N^(−1/d), for ‖θ‖ ≤ B). At r0 = 0, N ≈ T^((d−1)/2) would balance the two
    terms at Õ(sqrt(d·T)) under the assumptions above, at a cost exponential in d a round: no
    polynomial-time guarantee in general (the paper's open problem). On sequences where a
    constant share of directions is optimal (``GreedyTrap``: a quarter of them), the gap is 0
    but with probability (1 − share)^N, and the regret is the regret against the best
    sampled expert. Where the assumptions fail (agents truthful in part; gamed points whose
    segment some boundary crosses, which happens on the trap too), the estimates are biased
    and the bound is not claimed.

    Parameters
    ----------
    horizon : int, optional
        T, which sets λ and η (None: the run's horizon).
    sigma : float, optional
        Reward noise σ (None: the game's).
    experts : int
        N, the number of sampled experts, >= 1.
    bound : float
        B, the radius of the ball the experts are drawn from, > 0.
    eta : float, optional
        Learning rate η >= 0 (default sqrt(ln N / (T·M²)), M² = (2 + λ)² + σ², the minimizer
        of the bound above; the σ² term, negligible at small σ, is what the noise adds to
        the cruder (2 + λ)²).
    gamma : float
        Uniform exploration γ in [0, 1] (default 0: the importance weights are over the mass
        of a whole side, P, not over one expert's probability, so they need no floor).
    delta, r0, feedback, agents
        As for :class:`~strategic_apple_tasting.learners.SAOLS`.

    Examples
    --------
    >>> learner = SampledSAE(horizon=1000, sigma=0.1, experts=64, delta=0.1, r0=0.0,
    ...                      feedback="apple").reset(2, rng=0)
    >>> rule = learner.policy()
    >>> accepted = learner.act([0.5, 0.2])
    >>> learner.update([0.5, 0.2], accepted, 0.3 if accepted else None)
    False
    >>> learner.state.experts.shape
    (64, 2)
    """

    name = "sampled-sae"
    # update() forces the played expert's vote and floors P with its probability; P is
    # computed with the weights of the moment: outcomes in another order see other ones.
    # The checks' games are short: 64 experts take every code path that 1024 take.
    tags = LearnerTags(published_fields=("played", "q_played"), outcomes_commute=False,
                       check_with=({"experts": 64},))
    kernels = KERNELS

    def __init__(self, horizon: int | None = None, sigma: float | None = None,
                 experts: int = 1024, bound: float = 1.0, eta: float | None = None,
                 gamma: float = 0.0, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None) -> None:
        self.horizon = horizon
        self.sigma = sigma
        self.experts = experts
        self.bound = bound
        self.eta = eta
        self.gamma = gamma
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def _check_params(self) -> None:
        super()._check_params()
        self._check_own()

    def _check_own(self) -> None:
        """The checks of this learner's own hyperparameters (the game's are checked by the
        base class, once they are bound)."""
        for name, value in (("experts", self.experts), ("horizon", self.horizon)):
            if value is None and name == "horizon":
                continue  # taken from the run by bind
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        check_number("bound", self.bound, 0.0, open_low=True)
        if self.eta is not None:
            check_number("eta", self.eta, 0.0)
        check_number("gamma", self.gamma, 0.0, 1.0)
        if self.sigma is not None:
            check_number("sigma", self.sigma, 0.0)

    def learning_rates(self) -> tuple[float, float]:
        """(λ, η) for the bound horizon and noise: λ = σ·sqrt(2 log T) and η as documented.

        Examples
        --------
        >>> lam, eta = SampledSAE(horizon=10**4, sigma=0.1, experts=1024).learning_rates()
        >>> round(lam, 4), round(eta, 6)
        (0.4292, 0.010829)
        """
        if self.horizon is None or self.sigma is None:
            raise ValueError("sampled-sae needs horizon and sigma (both taken from a "
                             "simulation)")
        self._check_own()
        horizon, sigma = int(self.horizon), float(self.sigma)
        lam = sigma * math.sqrt(2.0 * math.log(horizon))
        if self.eta is not None:
            return lam, float(self.eta)
        spread = (2.0 + lam) ** 2 + sigma**2
        return lam, math.sqrt(math.log(int(self.experts)) / (horizon * spread))

    def state_bytes(self, d: int) -> int:
        """Bytes of the state: the experts (N·d doubles) and three length-N arrays, from N and
        d (measuring the state, as the default does, would draw the experts)."""
        n = int(self.experts)
        return 8 * n * d + 17 * n + 8 * d + 256

    def _check_state(self, state: Any, template: Any, where: str) -> None:
        """The kernels' invariants (:func:`check_state`), and the experts inside the ball of
        radius ``bound`` they were drawn from (one far outside overflows the agents' reach)."""
        super()._check_state(state, template, where)
        with np.errstate(over="ignore"):  # a norm past 1e154 is inf, and outside
            norms = np.linalg.norm(state.experts, axis=1)
        outside = norms > float(self.bound) * (1.0 + 1e-9)
        if outside.any():
            j = int(np.argmax(outside))
            raise ValueError(f"{where}.experts[{j}] must lie in the ball of radius bound = "
                             f"{self.bound!r}, has norm {float(norms[j])!r}")

    def _init_state(self, d: int) -> Any:
        lam, eta = self.learning_rates()
        if self.r0 is None or self.feedback is None:
            raise ValueError("sampled-sae needs r0 and feedback (both taken from a game)")
        n = int(self.experts)
        experts = sample_ball(self.generator, n, d, float(self.bound))
        return SampledSAEState(
            agents=compiled_belief_of(self), r0=float(self.r0), lam=lam, eta=eta,
            gamma=float(self.gamma), bandit=self.feedback == "bandit", experts=experts,
            w=np.ones(n), q=np.zeros(n), q_sum=np.full(1, _STALE),
            votes=np.zeros(n, dtype=np.bool_), x_hat=np.zeros(d),
            played=np.zeros(1, dtype=np.int64), q_played=np.ones(1))
