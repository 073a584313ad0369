"""The game: its settings (:class:`Game`) and one seeded instance of it (:class:`GameInstance`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._jit import compiled_for, njit
from .agents import (
    RESPOND,
    AgentsCore,
    LazyBestResponse,
    Uniforms,
    compiled_agents,
    draws_per_round,
    is_agent_model,
)
from .best_response import respond_to_rule
from .contexts import CONTEXTS, UniformBall, compiled_contexts, draw_context
from .policies import GeneralRule, LinearThreshold, score
from .rewards import REWARDS, LinearRewards, reward_draw, reward_mean

#: The reward noise σ of a game that does not set it (a data game: the fit's spread).
DEFAULT_SIGMA = 0.1

#: Feedback modes (DESIGN §2): apple tasting sees r(1) only when accepting; bandit sees r(a).
FEEDBACK = ("apple", "bandit")

#: Independent random streams spawned, in this order, from each seed's SeedSequence.
#: ("benchmark" draws the search directions of the Stackelberg benchmark, "delays" the outcome
#: delays; appended last, each left the streams before it unchanged.)
STREAMS = ("theta", "contexts", "agents", "noise", "learner", "benchmark", "delays")

#: How outcome delays are drawn (:class:`Game`'s ``delay_law``): every outcome ``delay`` rounds
#: late, or uniformly from 0 to 2·``delay`` rounds late (mean ``delay``).
DELAY_LAWS = ("fixed", "uniform")


def check_number(name: str, value: Any, low: float | None = None, high: float = math.inf, *,
                 open_low: bool = False, what: str = "") -> float:
    """``value`` as a float, or ``ValueError`` in one line naming ``name``, the value and what
    is allowed: a finite real number (not a bool) in [low, high] (low excluded if
    ``open_low``). The one check of a number's range in the package.

    Examples
    --------
    >>> check_number("alpha", 0.5, 0.0, 1.0)
    0.5
    >>> check_number("ridge", 0.0, 0.0, open_low=True)
    Traceback (most recent call last):
    ...
    ValueError: ridge must be a finite number > 0, got 0.0
    """
    low = -math.inf if low is None else low
    ok = (isinstance(value, int | float) and not isinstance(value, bool)
          and math.isfinite(value) and (value > low if open_low else value >= low)
          and value <= high)
    if not ok:
        bounds = ([f"> {low:g}" if open_low else f">= {low:g}"] if low > -math.inf else []) + (
            [f"<= {high:g}"] if high < math.inf else [])
        allowed = what or " ".join(["a finite number", " and ".join(bounds)]).strip()
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return float(value)


#: The longest delay or publication period, in rounds.
MAX_ROUNDS = 10**9

def group_budgets(budgets: Mapping[Any, Any], contexts: Any, agents: Any) -> tuple[float, ...]:
    """A budget per group (a mapping of every group name to its budget) as a tuple in the
    groups' order, or ``ValueError`` in one line: the contexts must be a data set's rows with
    groups, the agents a built-in model of one budget, every group named once, no other name,
    each budget a finite number >= 0.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> rows = SimpleNamespace(groups=np.array([0, 1]), group_names=("a", "b"))
    >>> group_budgets({"b": 0.5, "a": 0.25}, rows, LazyBestResponse())
    (0.25, 0.5)
    >>> group_budgets({"a": 0.25}, rows, LazyBestResponse())
    Traceback (most recent call last):
    ...
    ValueError: delta by group must give a budget to every group (a, b), missing 'b'
    """
    names = tuple(getattr(contexts, "group_names", ()) or ())
    if getattr(contexts, "groups", None) is None or not names:
        raise ValueError(f"delta by group needs a data set whose rows have groups (German "
                         f"credit, FICO), got contexts {getattr(contexts, 'name', contexts)!r}")
    if type(compiled_agents(agents)) is not AgentsCore or getattr(agents, "low", None) \
            is not None:
        raise ValueError(f"delta by group needs agents of one budget each (lazy, trembling, "
                         f"ellipsoid or subset gaming), got {getattr(agents, 'name', agents)!r}")
    allowed = ", ".join(names)
    for name in budgets:
        if name not in names:
            raise ValueError(f"delta by group names an unknown group {name!r}; the groups "
                             f"are: {allowed}")
    missing = [n for n in names if n not in budgets]
    if missing:
        raise ValueError(f"delta by group must give a budget to every group ({allowed}), "
                         f"missing {missing[0]!r}")
    return tuple(check_number(f"delta of group {n!r}", budgets[n], low=0.0) for n in names)


def format_group_budgets(names: tuple[str, ...], budgets: tuple[float, ...]) -> str:
    """``name=budget,...`` in the groups' order (a results table's ``delta_by_group``, the
    form ``--delta-by-group`` reads).

    Examples
    --------
    >>> format_group_budgets(("a", "b"), (0.25, 0.5))
    'a=0.25,b=0.5'
    """
    return ",".join(f"{n}={b!r}" for n, b in zip(names, budgets, strict=True))


def budget_label(delta: float | Mapping[str, float]) -> str:
    """A budget as text: ``δ = 0.25``, or each group's.

    Examples
    --------
    >>> budget_label(0.25), budget_label({"a": 0.25, "b": 0.5})
    ('δ = 0.25', 'δ by group: a 0.25, b 0.5')
    """
    if isinstance(delta, Mapping):
        return "δ by group: " + ", ".join(f"{n} {float(b):g}" for n, b in delta.items())
    return f"δ = {delta:g}"


def _unit_vector(rng: np.random.Generator, d: int) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


@njit
def _draw_one(contexts, rng, t, out):
    return draw_context(contexts, rng, t, out)


@njit
def _draw_rounds(contexts, rewards, context_rng, first_round, theta1, theta0, bandit, r0, sigma,
                 noise_rng, xs, outcomes, rows):
    """Rounds ``first_round``.. as the engine's loop draws them: each true context into a row of
    ``xs`` and the data row it came from into ``rows``, then (E[r(1)], E[r(0)], r(1), r(0))
    into the row of ``outcomes``. Returns the last round's row (a data game's)."""
    row = 0
    for i in range(xs.shape[0]):
        x = xs[i]
        row = draw_context(contexts, context_rng, first_round + i, x)
        rows[i] = row
        mean1 = reward_mean(rewards, theta1, x, row)
        r1 = reward_draw(rewards, mean1, sigma, noise_rng, row)
        if bandit:
            mean0 = score(theta0, x)
            rew0 = mean0 + sigma * noise_rng.standard_normal()
        else:
            mean0 = r0
            rew0 = r0
        outcomes[i, 0] = mean1
        outcomes[i, 1] = mean0
        outcomes[i, 2] = r1
        outcomes[i, 3] = rew0
    return row


@dataclass(frozen=True)
class Game:
    """Settings of the principal–agent game (paper §2, `fig:summary`).

    Parameters
    ----------
    dimension : int
        Context dimension d.
    delta : float or mapping, optional
        Agents' manipulation budget δ; overrides the agent model's (default: the model's, 0.1).
        A data game whose rows have groups may give a budget per group instead, a mapping of
        every group name to its budget: each applicant games with its group's budget, the
        game's ``delta`` becomes the largest (what a learner is told: it never sees a group)
        and :attr:`group_budgets` holds them in the groups' order.
    feedback : {"apple", "bandit"}
        Apple tasting (see r(1) only when accepting) or bandit (see r(a) for the action taken).
    r0 : float
        Known reward of rejecting (apple tasting only; must be 0 under bandit feedback).
    sigma : float, optional
        Standard deviation of the Gaussian reward noise (default 0.1). Under recorded rewards
        no noise is added (the outcome is the row's): σ is then only what learners tuned to a
        noise level are told, by default the spread of the rows' rewards about θ1's fit
        (:meth:`~.data.DataContexts.fitted`).
    contexts : context model
        How true contexts are drawn; default :class:`UniformBall`. A data set's rows
        (:class:`~.data.DataContexts`) make a data game: apple feedback, θ1 the least-squares
        fit of the rows' mean rewards unless given.
    rewards : {"linear", "recorded"}, optional
        The reward of accepting: the paper's ⟨θ1, x⟩ + σ·ε, or the drawn row's own outcome
        (data contexts only; their default).
    truthful : float, optional
        Probability that an agent reports its context without gaming; overrides the agent
        model's (default: the model's, 0).
    agents : agent model
        How agents respond; default :class:`LazyBestResponse`.
    theta1, theta0 : array of shape (d,), optional
        True reward parameters; by default each seed draws them uniformly on the unit sphere
        (θ0 is 0 under apple tasting).
    delay : int
        Rounds after its decision that an observed outcome reaches the learner (its mean,
        under ``delay_law="uniform"``): 0, the paper's game, learns each outcome at the end of
        its own round. A rejection under apple tasting has no outcome and is learned at once.
    delay_law : {"fixed", "uniform"}
        Every outcome ``delay`` rounds late, or a delay drawn uniformly from 0..2·delay each
        round (from its own stream, so every learner meets the same delays).
    period : int
        Rounds a published rule stays in force: the learner publishes at rounds 1, 1 + period,
        1 + 2·period, ... (1, the paper's game, publishes every round).

    Examples
    --------
    >>> game = Game(dimension=3, delta=0.1)
    >>> inst = game.instance(seed=0)
    >>> inst.theta1.shape, round(float(np.linalg.norm(inst.theta1)), 6)
    ((3,), 1.0)
    """

    dimension: int
    delta: float | Mapping[str, float] | None = None
    feedback: str = "apple"
    r0: float = 0.0
    sigma: float | None = None
    contexts: Any = field(default_factory=UniformBall)
    truthful: float | None = None
    agents: Any = field(default_factory=LazyBestResponse)
    theta1: np.ndarray | None = field(default=None, compare=False)
    theta0: np.ndarray | None = field(default=None, compare=False)
    delay: int = 0
    delay_law: str = "fixed"
    period: int = 1
    rewards: str | None = None
    #: Each group's budget, in the order of the rows' ``group_names`` (None: one budget).
    group_budgets: tuple[float, ...] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        d = self.dimension
        if not (isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 1):
            raise ValueError(f"dimension must be an integer >= 1, got {d!r}")
        if not is_agent_model(self.agents):
            raise ValueError(f"agents must be an agent model, got {self.agents!r}")
        if isinstance(self.delta, Mapping):
            budgets = group_budgets(self.delta, self.contexts, self.agents)
            object.__setattr__(self, "group_budgets", budgets)
            object.__setattr__(self, "delta", max(budgets))
        overrides = {k: v for k, v in (("delta", self.delta), ("truthful", self.truthful))
                     if v is not None}
        object.__setattr__(self, "agents", self.agents._replace(**overrides))
        self.agents.check()
        object.__setattr__(self, "delta", self.agents.delta)
        object.__setattr__(self, "truthful", self.agents.truthful)
        if self.feedback not in FEEDBACK:
            raise ValueError(f"feedback must be one of {', '.join(FEEDBACK)}, "
                             f"got {self.feedback!r}")
        check_number("r0", self.r0)
        if self.feedback == "bandit" and self.r0 != 0:
            raise ValueError(f"r0 must be 0 under bandit feedback (r(0) is <theta0, x> + noise), "
                             f"got {self.r0!r}")
        if type(self.contexts) not in CONTEXTS.values():
            raise ValueError(f"contexts must be a context model, got {self.contexts!r}")
        self.contexts.check()
        check_game = getattr(self.contexts, "check_game", None)
        if check_game is not None:
            check_game(self)
        dim = getattr(self.contexts, "dimension", d)
        if dim != d:
            raise ValueError(f"contexts have dimension {dim} but the game has dimension {d}")
        check_agents = getattr(self.agents, "check_dimension", None)
        if check_agents is not None:
            check_agents(d)
        rows = self.has_rows
        rewards = ("recorded" if rows else "linear") if self.rewards is None else self.rewards
        if rewards not in REWARDS:
            raise ValueError(f"rewards must be one of {', '.join(REWARDS)}, got {rewards!r}")
        if rewards == "recorded" and not rows:
            raise ValueError(f"rewards 'recorded' needs a data set's rows as contexts (each "
                             f"row's own outcome), got contexts {self.contexts.name!r}")
        object.__setattr__(self, "rewards", rewards)
        fit = self.contexts.fitted() if rows and (self.sigma is None or self.theta1 is None) \
            else None
        if self.sigma is None:
            object.__setattr__(self, "sigma", DEFAULT_SIGMA if fit is None else fit[1])
        check_number("sigma", self.sigma, low=0.0)
        if fit is not None and self.theta1 is None:
            object.__setattr__(self, "theta1", fit[0])
        for name in ("theta1", "theta0"):
            value = getattr(self, name)
            if value is None:
                continue
            arr = np.asarray(value, dtype=float)
            if arr.shape != (d,):
                raise ValueError(f"{name} must have shape ({d},), got shape {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite, got {arr.tolist()!r}")
            object.__setattr__(self, name, arr)
        if self.theta0 is not None and self.feedback == "apple" and np.any(self.theta0 != 0):
            raise ValueError("theta0 must be 0 under apple tasting (r(0) is the constant r0)")
        for name, low in (("delay", 0), ("period", 1)):
            value = getattr(self, name)
            if not (isinstance(value, int | np.integer) and not isinstance(value, bool)
                    and low <= value <= MAX_ROUNDS):
                raise ValueError(f"{name} must be an integer from {low} to 10^9, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.delay_law not in DELAY_LAWS:
            raise ValueError(f"delay_law must be one of {', '.join(DELAY_LAWS)}, "
                             f"got {self.delay_law!r}")

    @property
    def has_rows(self) -> bool:
        """Whether the contexts are a data set's rows (a data game: :mod:`.data`)."""
        return hasattr(self.contexts, "recorded")

    @property
    def repaid(self) -> float | None:
        """A data game's reward of a repaid loan (the largest a row's outcome earns; None for
        the paper's game, or when every outcome earns the same): the logistic learners' label 1
        (:meth:`Learner.bind <strategic_apple_tasting.learners.Learner.bind>` reads it)."""
        rewards = self.contexts.outcome_rewards() if self.has_rows else None
        return None if rewards is None else rewards[0]

    @property
    def defaulted(self) -> float | None:
        """A data game's reward of a defaulted loan (the smallest), as :attr:`repaid`."""
        rewards = self.contexts.outcome_rewards() if self.has_rows else None
        return None if rewards is None else rewards[1]

    @property
    def break_even_column(self) -> int | None:
        """The column of a data game's rows holding each loan's own break-even log-odds
        (:class:`~.data.DataContexts`), for recorded rewards; None otherwise: the logistic
        learners' ``break_even_column`` (:meth:`Learner.bind
        <strategic_apple_tasting.learners.Learner.bind>` reads it)."""
        if not self.has_rows or self.rewards != "recorded":
            return None
        return self.contexts.break_even_column

    @property
    def max_delay(self) -> int:
        """The longest delay an outcome can have (the engine keeps that many rounds pending)."""
        return self.delay * (2 if self.delay_law == "uniform" else 1)

    def settings(self) -> dict[str, Any]:
        """Flat settings for results tables: one column each."""
        out: dict[str, Any] = {
            "dimension": int(self.dimension), "delta": float(self.delta),
            "feedback": self.feedback, "r0": float(self.r0), "sigma": float(self.sigma),
            "contexts": self.contexts.name, "truthful": float(self.truthful),
            "agents": self.agents.name, "delay": self.delay, "delay_law": self.delay_law,
            "period": self.period,
        }
        # A data game names its gameable features (and says where its rewards come from); the
        # paper's game keeps its columns.
        names = getattr(self.contexts, "feature_names", ())
        named = getattr(self.agents, "named_settings", None)
        out.update(self.agents.settings() if named is None else named(names))
        out.update(self.contexts.settings())
        if self.has_rows:
            out["rewards"] = self.rewards
        if self.group_budgets is not None:
            out["delta_by_group"] = format_group_budgets(self.contexts.group_names,
                                                         self.group_budgets)
        return out

    def row_budgets(self) -> np.ndarray:
        """Each data row's budget, its group's ((n,) float64; empty with one budget): what the
        engine's agents game with (:func:`~.agents.with_row_budget`)."""
        if self.group_budgets is None:
            return np.empty(0)
        return np.ascontiguousarray(np.asarray(self.group_budgets)[self.contexts.groups])

    def instance(self, seed: int) -> GameInstance:
        """The game for one seed: its θ and its independent random streams."""
        return GameInstance(self, seed)


class GameInstance:
    """One seed of a :class:`Game`: true parameters and the random streams of DESIGN §5.

    The streams are spawned from ``SeedSequence(seed)`` in the order of :data:`STREAMS`, so a
    given seed gives every learner the same contexts, agents and noise (common random numbers).
    The ``next_*`` methods step the game round by round with the same compiled code the engine
    runs, for tests and for users who drive the loop themselves.

    Examples
    --------
    >>> inst = Game(dimension=2).instance(seed=1)
    >>> x = inst.next_context()
    >>> rule = LinearThreshold(beta=inst.theta1, threshold=0.0)
    >>> x_obs, moved = inst.next_response(rule, x)
    >>> r1, r0 = inst.next_rewards(x)
    """

    def __init__(self, game: Game, seed: int) -> None:
        if not (isinstance(seed, int | np.integer) and not isinstance(seed, bool) and seed >= 0):
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        self.game = game
        self.seed = int(seed)
        sequences = np.random.SeedSequence(self.seed).spawn(len(STREAMS))
        self.rngs = {name: np.random.Generator(np.random.PCG64(s))
                     for name, s in zip(STREAMS, sequences, strict=True)}
        d = game.dimension
        # Both are drawn every time so θ1 does not depend on the feedback mode.
        theta1 = _unit_vector(self.rngs["theta"], d)
        theta0 = _unit_vector(self.rngs["theta"], d)
        self.theta1 = theta1 if game.theta1 is None else game.theta1.copy()
        if game.feedback == "apple":
            self.theta0 = np.zeros(d)
        else:
            self.theta0 = theta0 if game.theta0 is None else game.theta0.copy()
        bind = getattr(game.contexts, "for_instance", None)
        #: The context model drawn from (a θ-dependent model bound to this instance's θ).
        self.contexts = game.contexts if bind is None else bind(self)
        fit = getattr(self.contexts, "fit", None)
        if fit is not None and len(fit):
            # A held-out protocol's seed: θ1, the least-squares rule, is fitted on the rows
            # this seed learns from, never on the ones it holds out (game.data).
            self.theta1 = np.array(fit, dtype=float)
        #: The reward model (:mod:`.rewards`).
        self.rewards = (game.contexts.recorded() if game.rewards == "recorded"
                        else LinearRewards())
        #: The context, agent and reward models as compiled code receives them.
        self.compiled_contexts = compiled_contexts(self.contexts)
        self.compiled_agents = compiled_agents(game.agents)
        self.compiled_rewards = self.rewards.compiled()
        #: Each data row's budget with per-group budgets (empty: every agent has the model's).
        self.row_budgets = game.row_budgets()
        self._round = 0
        self._row = 0  # the row the last context came from (a data game's reward reads it)
        self._respond: Any = None  # the agents' compiled response, for this game's types
        # The agents' uniforms, drawn ahead (a built-in model draws a fixed number a round):
        # handing compiled code an array is cheaper than handing it the Generator.
        core = self.compiled_agents
        self._per_round = draws_per_round(core) if type(core) is AgentsCore else None
        self._draws = Uniforms(np.empty(0), np.zeros(1, dtype=np.int64))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_respond"] = None  # compiled code does not pickle; found again on first use
        return state

    def draw_agents_ahead(self, rounds: int) -> None:
        """Draw the agents' random numbers for the next ``rounds`` rounds now, in one call
        (exactly what their responses would draw, in order; a model of the user's, whose draws
        are not known, draws as it goes). The reference loop calls it per batch of rounds."""
        self._agents_source(rounds)

    def _agents_source(self, rounds: int = 1) -> Any:
        """What the agents' responses draw from: their Generator, or its uniforms drawn ahead,
        topped up to ``rounds`` rounds' worth by exactly the shortfall."""
        k = self._per_round
        if k is None:
            return self.rngs["agents"]
        draws = self._draws
        left = draws.values.shape[0] - int(draws.taken[0])
        if left < k * rounds:
            values = np.concatenate([draws.values[draws.taken[0]:],
                                     self.rngs["agents"].random(k * rounds - left)])
            self._draws = draws = Uniforms(values, np.zeros(1, dtype=np.int64))
        return draws

    @property
    def target(self) -> np.ndarray:
        """θ1 − θ0: the direction of the optimal rule, which learners estimate."""
        return self.theta1 - self.theta0

    def mean_reward(self, x: np.ndarray) -> float:
        """E[r(1)] at true context x: ⟨θ1, x⟩, or under recorded rewards the mean outcome of
        the row the last context was drawn from."""
        if self.game.rewards == "recorded":
            return float(self.rewards.mean[self._row])
        return float(score(self.theta1, x))

    def gap(self, x: np.ndarray) -> float:
        """E[r(1)] − E[r(0)] at true context x: ⟨θ1, x⟩ − r0 (apple) or ⟨θ1 − θ0, x⟩ (bandit)
        (:meth:`mean_reward` for E[r(1)])."""
        mean0 = self.game.r0 if self.game.feedback == "apple" else float(score(self.theta0, x))
        return self.mean_reward(x) - mean0

    def optimal_action(self, x: np.ndarray) -> bool:
        """π*(x): accept iff ⟨θ1 − θ0, x⟩ ≥ r0, on the true context."""
        return self.gap(x) >= 0

    def next_context(self) -> np.ndarray:
        """Draw the next agent's true context (with the compiled sampler, as the engine)."""
        self._round += 1
        out = np.empty(self.game.dimension)
        self._row = int(_draw_one(self.compiled_contexts, self.rngs["contexts"], self._round,
                                  out))
        return out

    def next_rounds(self, n: int, rows: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The next ``n`` rounds at once: their true contexts (rows) and their (E[r(1)],
        E[r(0)], r(1), r(0)) (rows): what ``n`` calls of :meth:`next_context` and
        :meth:`next_rewards` give, drawn in one compiled call. The reference loop draws its
        rounds this way, ahead of the learner, from streams no decision changes. ``rows``, if
        given ((n,) int64), receives the data row each context was drawn from (what
        :meth:`next_context` leaves in ``_row``; a data game's groups are counted by it).

        Examples
        --------
        >>> a, b = Game(dimension=2).instance(3), Game(dimension=2).instance(3)
        >>> xs, outs = a.next_rounds(2)
        >>> x = b.next_context()
        >>> bool((xs[0] == x).all()), bool(outs[0, 2] == b.next_rewards(x)[0])
        (True, True)
        """
        game = self.game
        xs = np.empty((n, game.dimension))
        out = np.empty((n, 4))
        if rows is None:
            rows = np.empty(n, dtype=np.int64)
        elif rows.shape != (n,) or rows.dtype != np.int64:
            raise ValueError(f"rows must be an int64 array of shape ({n},), got {rows.dtype} "
                             f"of shape {rows.shape}")
        self._row = int(_draw_rounds(
            self.compiled_contexts, self.compiled_rewards, self.rngs["contexts"],
            self._round + 1, self.theta1, self.theta0, game.feedback == "bandit",
            float(game.r0), float(game.sigma), self.rngs["noise"], xs, out, rows))
        self._round += n
        return xs, out

    def next_response(self, policy: LinearThreshold | GeneralRule, x: np.ndarray,
                      row: int | None = None) -> tuple[np.ndarray, bool]:
        """The next agent's reported context under ``policy`` and whether it moved.

        A linear threshold is answered in closed form, a general rule by numerical best
        response (:mod:`.best_response`); both draw the same random numbers. With per-group
        budgets the agent games with the budget of data row ``row`` (default: the row the
        last :meth:`next_context` drew).
        """
        source = self._agents_source()
        agents = self.compiled_agents
        if self.row_budgets.shape[0]:
            # The engine's loop does the same (:func:`~.agents.with_row_budget`): the model
            # with its delta replaced by the row's group's budget.
            row = self._row if row is None else int(row)
            agents = agents._replace(delta=float(self.row_budgets[row]))
        if isinstance(policy, GeneralRule):
            return respond_to_rule(agents, policy, x, source)
        beta = np.ascontiguousarray(policy.beta, dtype=float)
        x = np.ascontiguousarray(x, dtype=float)
        d = self.game.dimension
        if beta.shape != (d,) or x.shape != (d,):
            raise ValueError(f"the rule's beta and the context must have shape ({d},), got "
                             f"{beta.shape} and {x.shape}")
        out = np.empty(d)
        if self._respond is None:  # once: numba's dispatch would type the model every call
            self._respond = compiled_for(RESPOND[type(self.compiled_agents)],
                                         self.compiled_agents, source, beta, 0.0, x, out)
        moved = self._respond(agents, source, beta, float(policy.threshold), x, out)
        return out, bool(moved)

    def next_delay(self) -> int:
        """Draw this round's outcome delay (drawn every round, whatever the decision, so that
        every learner meets the same delays; no draw when the law is fixed)."""
        game = self.game
        if game.delay_law == "fixed" or game.delay == 0:
            return game.delay
        # A uniform double scaled to 0..2·delay: the compiled loop draws it the same way, bit
        # for bit (numba's random() is numpy's; its integers() need not be).
        return int(self.rngs["delays"].random() * (2 * game.delay + 1))

    def next_rewards(self, x: np.ndarray) -> tuple[float, float]:
        """Draw this round's noise; return the realized (r(1), r(0)) for true context x (under
        recorded rewards: the outcome of the row the last context was drawn from)."""
        rng = self.rngs["noise"]
        if self.game.rewards == "linear":
            r1 = float(score(self.theta1, x)) + self.game.sigma * rng.standard_normal()
        else:
            # As the compiled draw (:mod:`.rewards`): one uniform, whatever the row.
            model, row = self.rewards, self._row
            repaid = rng.random() < model.repaid[row]
            r1 = float(model.if_repaid[row] if repaid else model.if_defaulted[row])
        if self.game.feedback == "apple":
            return r1, float(self.game.r0)
        return r1, float(score(self.theta0, x)) + self.game.sigma * rng.standard_normal()
