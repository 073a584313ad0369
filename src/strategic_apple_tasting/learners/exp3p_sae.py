"""EXP3.P with strategy-aware experts: `alg:UPD-ONE` against adaptive adversaries (paper remark)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .. import theory
from .._jit import njit
from ..game.agents import reach
from ._invariants import fixed, within
from .base import Learner, LearnerKernels
from .binding import compiled_belief_of
from .exp3p_experts import check_weights, new_weights, sample, update
from .lazy_experts import expert_point, experts_bytes
from .tags import LearnerTags
from .theorem import Theorem


@dataclass(frozen=True)
class Exp3PSAEParameters:
    """Tuning of EXP3.P-SAE, as computed by :meth:`Exp3PSAE.parameters`.

    ``epsilon``, ``points_per_axis``, ``grid_size`` and ``lam`` are EXP3-SAE's
    (:func:`~strategic_apple_tasting.theory.exp3_sae_parameters`); ``alpha``, ``gamma`` and
    ``confidence`` are EXP3.P's α, γ and δ.
    """

    epsilon: float
    points_per_axis: int
    grid_size: int
    lam: float
    alpha: float
    gamma: float
    confidence: float

    def experts(self) -> float:
        """K, the grid's number of experts, as a float (inf for a grid beyond the float range,
        which the weights refuse with a clear message)."""
        try:
            return float(self.grid_size)
        except OverflowError:
            return math.inf

    def bonus(self, horizon: int) -> float:
        """EXP3.P's bonus α/√(KT) over the grid's K experts at ``horizon`` (through the square
        roots of each factor: K·T may overflow a double where K does not)."""
        return self.alpha / (math.sqrt(self.experts()) * math.sqrt(float(horizon)))


class Exp3PSAEState(NamedTuple):
    agents: Any  # the agent model the learner believes in
    r0: float
    bound: float  # B: experts are grid points of [−B, B]^d
    lam: float  # λ: rewards r map to (r + 1 + λ)/(2(1 + λ)), clipped to [0, 1]
    gamma: float  # EXP3.P's γ
    bonus: float  # α/sqrt(|E|·T)
    weights: Any  # exp3p_experts.Exp3PWeights
    played: np.ndarray  # int64 (d,): the expert committed to this round
    q_played: np.ndarray  # float64 (1,): its probability


@njit
def _policy(state, rng, beta):
    played = state.played
    state.q_played[0] = sample(state.weights, rng, state.gamma, played)
    expert_point(state.weights.index, played, state.bound, beta)
    return state.r0 + reach(state.agents, beta)


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    # As EXP3-SAE: the played expert's reward is known every round (r0 on a rejection under
    # apple tasting). EXP3.P then moves every weight (its confidence bonus).
    r = reward if observed else state.r0
    lam = state.lam
    gain = min(1.0, max(0.0, (r + 1.0 + lam) / (2.0 * (1.0 + lam))))
    update(state.weights, state.played, gain, state.gamma, state.bonus)
    return False


@njit
def _estimate(state, out):
    return False


def check_state(state: Exp3PSAEState, template: Exp3PSAEState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: the belief as
    the parameters make it, the weights (:func:`.exp3p_experts.check_weights`), the played
    expert a grid point and its probability in [0, 1]."""
    fixed(state.agents, template.agents, f"{where}.agents")
    check_weights(state.weights, template.weights, f"{where}.weights")
    within(state.played, f"{where}.played", 0, state.weights.index.n - 1)
    within(state.q_played, f"{where}.q_played", 0.0, 1.0)


KERNELS = LearnerKernels(Exp3PSAEState, _policy, _update, _estimate, check=check_state)


def _in_range(name: str, value: Any, ok, allowed: str) -> float:
    good = (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and ok(value))
    if not good:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return float(value)


class Exp3PSAE(Learner):
    """EXP3.P over EXP3-SAE's grid of shifted linear rules, for adaptive adversaries.

    The paper remarks (after ``thm:upd-one``) that `alg:UPD-ONE` handles agents chosen by an
    *adaptive* adversary if EXP3.P (Auer, Cesa-Bianchi, Freund, Schapire 2002) replaces EXP3.
    The experts, the committed rule (accept iff ⟨e, x'⟩ ≥ δ‖e‖ + r0) and the feedback
    (r_t(a_t), r0 on a rejection under apple tasting) are :class:`Exp3SAE`'s; the weights are
    EXP3.P's: draw e from p = (1 − γ)w/W + γ/|E|, then for *every* expert
    w(e) ← w(e)·exp(γ/(3|E|)·(x̂(e) + α/(p(e)·sqrt(|E|T)))), x̂ = x/p(e_t) for the played
    expert and 0 otherwise, from w = exp((αγ/3)·sqrt(T/|E|)).

    **Rewards.** EXP3.P needs x ∈ [0, 1]. The reward r has mean in [−1, 1] (‖θ‖, ‖x‖ ≤ 1)
    plus noise that `thm:upd-one-app` assumes below λ = σ·sqrt(2 log T) in absolute value
    (its "good event"). We use the affine map sending [−1 − λ, 1 + λ] onto [0, 1],
    x = (r + 1 + λ)/(2(1 + λ)) = 1 − ℓ/(2(1 + λ)) with ℓ = 1 + λ − r EXP3-SAE's loss: both
    learners see the same signal, and regret in x is regret in r divided by 2(1 + λ).
    Rewards outside that interval (the bad event, probability ≤ 2/T over the whole run in
    the paper's bound) are clipped to [0, 1].

    **Cost.** EXP3.P's bonus changes every weight every round, so EXP3-SAE's O(d + log T)
    does not carry over. Experts never played keep one common weight (equal weights get equal
    updates), so we store that weight plus one per played expert (:mod:`.exp3p_experts`): a
    round costs O(d + k) with k ≤ min(t, |E|) the experts played so far, O(T·min(T, |E|))
    over a run rather than a dense implementation's O(T·|E|), and memory is
    O(min(T, |E|)·d). Grids of 10^30 experts run at moderate T (about 10^4 rounds a second
    at T = 10^4: ``benchmarks/exp3.py``).

    Parameters
    ----------
    horizon : int, optional
        T, which sets ε, λ, α, γ and the bonus (None: the run's horizon).
    sigma : float, optional
        Reward noise σ (None: the game's).
    bound : float
        B, the half-width of the grid.
    epsilon, points_per_axis : optional
        Grid spacing or points per axis, overriding ε = (dσ log T / T)^{1/(d+2)}.
    lam : float, optional
        λ of the reward map, ≥ 0 (default σ·sqrt(2 log T)).
    confidence : float, optional
        EXP3.P's failure probability δ, in (0, 1) (default 1/T, so the failure event adds
        at most about one round's regret to the expected regret).
    alpha, gamma : float, optional
        Override α = 2·sqrt(ln(|E|T/δ)) (≥ 0) and γ = min(3/5, 2·sqrt(3|E| ln|E| / (5T)))
        (in (0, 1]), the choice of Auer et al.'s high-probability theorem for Exp3.P
        (Theorem 6.3 there). At |E| ≫ T, γ = 3/5.
    delta, r0, feedback, agents
        As for :class:`~strategic_apple_tasting.learners.SAOLS`.

    Examples
    --------
    >>> learner = Exp3PSAE(horizon=1000, sigma=0.1, delta=0.1, r0=0.0, feedback="apple")
    >>> p = learner.parameters(d=2)
    >>> p.grid_size, round(p.gamma, 4), round(p.alpha, 4)   # 12 points an axis at T = 1000
    (144, 0.6, 8.6684)
    >>> rule = learner.reset(2, np.random.default_rng(0)).policy()
    >>> accepted = learner.act([0.5, 0.2])
    >>> learner.update([0.5, 0.2], accepted, 0.3 if accepted else None)
    False
    """

    name = "exp3p-sae"
    # update() learns the played expert's weight with its probability (set by policy()).
    tags = LearnerTags(published_fields=("played", "q_played"),
                       theorem=Theorem("(d+1)/(d+2)", "thm:upd-one-app",
                                       lambda d: (d + 1) / (d + 2)))
    kernels = KERNELS

    def __init__(self, horizon: int | None = None, sigma: float | None = None,
                 bound: float = 1.0, epsilon: float | None = None,
                 points_per_axis: int | None = None, lam: float | None = None,
                 confidence: float | None = None, alpha: float | None = None,
                 gamma: float | None = None, delta: float | None = None,
                 r0: float | None = None, feedback: str | None = None,
                 agents: Any = None) -> None:
        self.horizon = horizon
        self.sigma = sigma
        self.bound = bound
        self.epsilon = epsilon
        self.points_per_axis = points_per_axis
        self.lam = lam
        self.confidence = confidence
        self.alpha = alpha
        self.gamma = gamma
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def parameters(self, d: int) -> Exp3PSAEParameters:
        """The grid, λ and EXP3.P's α, γ, δ for dimension d (defaults, with overrides)."""
        if self.horizon is None or self.sigma is None:
            raise ValueError("exp3p-sae needs horizon and sigma (both taken from a simulation)")
        g = theory.exp3_sae_parameters(d, self.horizon, sigma=self.sigma, bound=self.bound,
                                       epsilon=self.epsilon,
                                       points_per_axis=self.points_per_axis)
        lam = g.lam if self.lam is None else _in_range(
            "lam", self.lam, lambda v: v >= 0, "a finite number >= 0")
        confidence = 1.0 / self.horizon if self.confidence is None else _in_range(
            "confidence", self.confidence, lambda v: 0 < v < 1, "a number in (0, 1)")
        log_k = d * math.log(g.points_per_axis)  # log|E| > 0: points_per_axis >= 2
        log_t = math.log(self.horizon)
        if self.alpha is None:
            alpha = 2.0 * math.sqrt(log_k + log_t - math.log(confidence))
        else:
            alpha = _in_range("alpha", self.alpha, lambda v: v >= 0, "a finite number >= 0")
        if self.gamma is None:
            log_gamma = math.log(2.0) + 0.5 * (math.log(0.6) + log_k + math.log(log_k) - log_t)
            gamma = 0.6 if log_gamma >= math.log(0.6) else math.exp(log_gamma)
        else:
            gamma = _in_range("gamma", self.gamma, lambda v: 0 < v <= 1, "a number in (0, 1]")
        return Exp3PSAEParameters(epsilon=g.epsilon, points_per_axis=g.points_per_axis,
                                  grid_size=g.grid_size, lam=lam, alpha=alpha, gamma=gamma,
                                  confidence=confidence)

    def state_bytes(self, d: int) -> int:
        """Bytes of the expert grid's state, from its parameters (it grows with the horizon and
        exponentially in d, not as a quadratic)."""
        p = self.parameters(d)
        capacity = max(1, int(min(self.horizon, p.grid_size)))
        # the weights' own arrays (log w and the share of each slot) on top of the grid
        slots = capacity if p.grid_size > capacity else int(p.grid_size)
        return experts_bytes(d, p.points_per_axis, capacity) + 16 * slots + 64 * d

    def _init_state(self, d: int) -> Any:
        p = self.parameters(d)
        horizon = float(self.horizon)
        # w0 = exp((αγ/3)·sqrt(T/K)), through the square roots of each factor
        log_w0 = p.alpha * p.gamma / 3.0 * (math.sqrt(horizon) / math.sqrt(p.experts()))
        bonus = p.bonus(self.horizon)
        capacity = int(min(self.horizon, p.grid_size))
        return Exp3PSAEState(
            agents=compiled_belief_of(self), r0=float(self.r0), bound=float(self.bound),
            lam=float(p.lam), gamma=float(p.gamma), bonus=bonus,
            weights=new_weights(d, p.points_per_axis, max(capacity, 1), log_w0),
            played=np.zeros(d, dtype=np.int64), q_played=np.ones(1))
