"""The paper's game (`fig:summary`) as a Gymnasium environment, with the principal as its agent.

One step is one round: the principal publishes a linear rule ⟨β, x′⟩ ≥ c (the action), the
round's agent answers it within its budget (the game's agent model, compiled, as in every run),
the rule decides the reported features x′, and the principal observes x′, its decision, and
the outcome only if it accepted (apple tasting; every outcome under bandit feedback). The reward
is the principal's realized reward r(a); ``info["regret"]`` is the round's strategic regret
(the reward gap when the decision differs from π* on the agent's *true* features), which an
agent must not learn from but a researcher wants to plot.

The streams are the engine's: ``reset(seed=s)`` plays the game instance of seed ``s`` (its θ,
contexts, agents and noise), so a learner driven through the environment meets exactly the
rounds it meets in ``sat run --seed s`` (a test holds SA-OLS to the same regret, bit for bit).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from ..game.game import MAX_ROUNDS, Game, GameInstance
from ..game.policies import LinearThreshold
from ..learners.inputs import real_array

#: Rounds of contexts, rewards and agents' draws taken at once (each has its own stream, so
#: drawing ahead changes no number; never past the horizon).
BATCH = 1024

#: Relative slack on the features' bound: a lazy agent lands on the boundary up to rounding.
SLACK = 1e-9


def _feature_bound(game: Game) -> np.ndarray:
    """Per feature, the largest |x′_i| an agent can report: the contexts' reach (a data set's
    largest |value| per column, a ball's radius) plus the longest move the agents' budget
    allows (δ, or δ·√λ_max(A⁻¹) under an ellipsoidal cost); infinite for a context model
    whose reach is not declared."""
    d = game.dimension
    rows = getattr(game.contexts, "rows", None)
    radius = getattr(game.contexts, "radius", None)
    if rows is not None:
        reach = np.abs(np.asarray(rows, dtype=float)).max(axis=0)
    elif radius is not None:
        reach = np.full(d, float(radius))
    else:
        return np.full(d, np.inf)
    cost_inv = game.agents.compiled().cost_inv
    stretch = math.sqrt(float(np.linalg.eigvalsh(cost_inv).max())) if cost_inv.size else 1.0
    return (reach + float(game.delta) * stretch) * (1 + SLACK)


def _outcome_bounds(game: Game) -> tuple[float, float]:
    """The range of an observed outcome: a data game's rewards of repaying and defaulting
    (0 included, the value shown when nothing is observed); unbounded under Gaussian noise."""
    if game.rewards != "recorded":
        return -np.inf, np.inf
    model = game.contexts
    values = np.concatenate([model.if_repaid, model.if_defaulted, [0.0]])
    return float(values.min()), float(values.max())


def rule_to_action(rule: LinearThreshold) -> np.ndarray:
    """A linear rule as the environment's action: (β, c) scaled by a power of two into
    [−1, 1]^(d+1).

    A positive scale changes no decision and no agent's answer, and a power of two changes no
    bit of either (every product and quotient is scaled exactly), so a learner's rule played
    through the environment meets exactly the agents it meets in the engine.

    Examples
    --------
    >>> import numpy as np
    >>> rule_to_action(LinearThreshold(beta=np.array([3.0, -1.0]), threshold=0.5)).tolist()
    [0.75, -0.25, 0.125]
    """
    action = np.append(np.asarray(rule.beta, dtype=np.float64), float(rule.threshold))
    if not np.all(np.isfinite(action)):
        raise ValueError(f"rule must have a finite beta and threshold, got {action.tolist()!r}")
    largest = float(np.abs(action).max())
    if largest > 1.0:
        action = np.ldexp(action, -math.frexp(largest)[1])
    return action


class StrategicAppleTastingEnv(gymnasium.Env):
    """The principal's side of the strategic apple-tasting game, one round a step.

    Parameters
    ----------
    game : Game, optional
        The game's settings (agents, budget, contexts, feedback; a data game too). Its delay
        must be 0 and its period 1: the environment is the paper's game, in which each round's
        outcome is seen before the next rule is published.
    horizon : int
        Rounds in an episode; the last step returns ``truncated=True``.
    **settings
        The settings of a :class:`~strategic_apple_tasting.game.Game` built here, when ``game``
        is not given (``dimension=5, delta=0.1``, ...), so that ``gymnasium.make`` can pass them.

    Notes
    -----
    Action: ``Box(-1, 1, (d + 1,))``, the rule's β then its threshold c (accept iff
    ⟨β, x′⟩ ≥ c). A rule is the same rule at any positive scale, so the box loses nothing
    (:func:`rule_to_action` scales one into it); a finite action outside the box is played
    as the rule it is.

    Observation: a dict of the round's reported features ``features`` (d,), the decision
    ``accepted`` (0/1), ``outcome_observed`` (0/1) and ``outcome`` (1,) (0 when not observed).
    ``reset`` returns zeros: nothing is seen before the first rule is published.

    Info: ``regret`` (the round's strategic regret, on the true features), ``moved`` (whether
    the agent gamed) and ``round``.

    Examples
    --------
    >>> import numpy as np
    >>> env = StrategicAppleTastingEnv(dimension=2, delta=0.1, horizon=3)
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(np.array([1.0, 0.0, 0.2]))
    >>> obs["features"].shape, bool(obs["accepted"]) == bool(obs["outcome_observed"])
    ((2,), True)
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, game: Game | None = None, horizon: int = 1000, **settings: Any) -> None:
        if game is not None and settings:
            raise ValueError(f"give a game or its settings, not both: got game and "
                             f"{', '.join(sorted(settings))}")
        if game is None:
            if "dimension" not in settings:
                raise ValueError("dimension must be given (an integer >= 1) when no game is")
            game = Game(**settings)
        if not isinstance(game, Game):
            raise ValueError(f"game must be a Game, got {type(game).__name__}")
        if game.delay != 0 or game.period != 1:
            raise ValueError(f"the environment plays the paper's game (delay 0, period 1), got "
                             f"delay={game.delay}, period={game.period}")
        if not (isinstance(horizon, int | np.integer) and not isinstance(horizon, bool)
                and 1 <= horizon <= MAX_ROUNDS):
            raise ValueError(f"horizon must be an integer from 1 to 10^9, got {horizon!r}")
        self.game = game
        self.horizon = int(horizon)
        d = game.dimension
        self.action_space = spaces.Box(-1.0, 1.0, shape=(d + 1,), dtype=np.float64)
        bound = _feature_bound(game)
        low, high = _outcome_bounds(game)
        self.observation_space = spaces.Dict({
            "features": spaces.Box(-bound, bound, shape=(d,), dtype=np.float64),
            "accepted": spaces.Discrete(2),
            "outcome_observed": spaces.Discrete(2),
            "outcome": spaces.Box(low, high, shape=(1,), dtype=np.float64),
        })
        self._instance: GameInstance | None = None

    @property
    def instance(self) -> GameInstance:
        """This episode's seeded game instance: its θ and its streams (a package learner is
        bound to it and reset on its ``rngs["learner"]``, as the engine does)."""
        if self._instance is None:
            raise RuntimeError("call reset() before the first episode's instance is read")
        return self._instance

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: the game instance of ``seed`` (the engine's seed), or, without
        one, of a seed drawn from the environment's generator."""
        super().reset(seed=seed)
        if options:
            raise ValueError(f"reset takes no options, got {', '.join(sorted(options))}")
        if seed is None:
            seed = int(self.np_random.integers(0, 2**63 - 1))
        self._instance = self.game.instance(seed)
        self._t = 0
        self._drawn = 0
        self._buffer: list[tuple[np.ndarray, int, list[float]]] = []
        d = self.game.dimension
        observation = {"features": np.zeros(d), "accepted": 0, "outcome_observed": 0,
                       "outcome": np.zeros(1)}
        return observation, {"round": 0}

    def _next_round(self) -> tuple[np.ndarray, int, list[float]]:
        """The next round's true context, the data row it came from (a budget per group reads
        it) and (E[r(1)], E[r(0)], r(1), r(0)), drawn ahead in batches as the engine's
        reference loop draws them."""
        if not self._buffer:
            inst = self.instance
            n = min(BATCH, self.horizon - self._drawn)
            rows = np.empty(n, dtype=np.int64)
            xs, outcomes = inst.next_rounds(n, rows)
            inst.draw_agents_ahead(n)
            self._buffer = list(zip(xs, rows.tolist(), outcomes.tolist(), strict=True))[::-1]
            self._drawn += n
        return self._buffer.pop()

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Publish the rule ``action`` (β then c) for one round."""
        inst = self.instance
        if self._t >= self.horizon:
            raise RuntimeError(f"the episode ended after {self.horizon} rounds: call reset()")
        d = self.game.dimension
        rule = np.array(real_array("action", action), copy=True)  # a complex β: refused
        if rule.shape != (d + 1,):
            raise ValueError(f"action must have shape ({d + 1},) (beta then threshold), got "
                             f"shape {rule.shape}")
        if not np.all(np.isfinite(rule)):
            raise ValueError(f"action must be finite, got {rule.tolist()!r}")
        beta, threshold = rule[:d], float(rule[d])
        x, row, (mean1, mean0, r1, r0) = self._next_round()
        published = LinearThreshold(beta=beta, threshold=threshold)
        x_obs, moved = inst.next_response(published, x, row)
        accepted = published.accepts(x_obs)
        observed = accepted or self.game.feedback == "bandit"
        reward = r1 if accepted else r0
        self._t += 1
        observation = {"features": x_obs, "accepted": int(accepted),
                       "outcome_observed": int(observed),
                       "outcome": np.array([reward if observed else 0.0])}
        regret = abs(mean1 - mean0) if accepted != (mean1 >= mean0) else 0.0
        info = {"regret": regret, "moved": moved, "round": self._t}
        return observation, float(reward), False, self._t >= self.horizon, info
