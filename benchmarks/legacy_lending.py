"""The lending scenario's own loop before lending ran on the compiled engine, kept to compare
with the engine.

This is ``strategic_apple_tasting/scenarios/run.py`` as it was at commit 2436d1d (the first
lending scenario, part 4), imports made absolute, nothing else changed: a Python loop through
the decision API at about 75 µs a round. ``benchmarks/lending.py`` times it against the
lending game on the compiled engine, and ``tests/scenarios/test_lending_game.py`` replays its
applicants through the engine to show the two give the same numbers where their arithmetic is
the same.

Original docstring:

The semi-synthetic lending scenario: real applicants, real outcomes, simulated gaming.

Each round an applicant (a row of a :class:`~.lending.LendingData`) arrives; the learner
publishes its rule through the per-round API; the applicant games the *gameable* features
within budget δ if that gets it accepted; the learner decides on what it sees and, under apple
tasting, sees the row's real reward only if it accepted (rejecting gives r0).

**Agents.** Gaming only a subset G of the features is the ellipsoidal cost of
:class:`~strategic_apple_tasting.game.agents.EllipsoidalCost` with A⁻¹ = diag(1_G): a move v
costs ‖v‖ if it stays in G and is impossible otherwise (infinite cost). The cheapest move that
raises ⟨β, x⟩ by g is then v = g·β_G/‖β_G‖² (Cauchy–Schwarz on the coordinates in G), of
cost g/‖β_G‖, so an agent moves iff c − ⟨β, x⟩ ≤ δ‖β_G‖, and a strategy-aware rule shifts by
δ‖β_G‖. The package's model already does exactly this (its move A⁻¹β/βᵀA⁻¹β and reach
δ·sqrt(βᵀA⁻¹β)), so both the agents and the learners' belief are that model; nothing new.

**Benchmarks.** (a) ``regret``: against θ*, the least-squares fit of the reward on the features
over all rows, accepting iff ⟨θ*, x⟩ ≥ r0 on the *true* row, scored on the same sampled rows
as the learner. (b) ``stackelberg_regret``: against the fitted rule shifted by the budget,
(θ*, r0 + δ‖θ*_G‖), published every round and answered by the same agents (the same truthful
coins). When every agent games (``truthful = 0``), a mover lands exactly where θ* accepts, so
(b) accepts the same rows as (a) and the two regrets are equal; with a truthful fraction,
truthful rows in the band [r0, r0 + δ‖θ*_G‖) are rejected by (b), and the columns differ. The
rows' rewards are the real outcomes, so each round's reward is exactly known: a regret here is
realized on the sampled rows (it can be negative: θ* is the best *least-squares* rule, not the
best rule).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from strategic_apple_tasting.game.agents import (
    BUDGET_SLACK,
    RESPOND,
    EllipsoidalCost,
    compiled_agents,
)
from strategic_apple_tasting.game.policies import LinearThreshold
from strategic_apple_tasting.learners import Learner, make_learner
from strategic_apple_tasting.metrics import mean_ci
from strategic_apple_tasting.scenarios.lending import LendingData

#: The first lending scenario's comparison: SA-OLS, explore-then-commit, the oracle (θ* shifted: the
#: Stackelberg benchmark itself, a control whose regret must be 0) and the non-strategy-aware
#: learners of the registry that publish linear rules. LinUCB is left out: its optimistic rule
#: is not linear, and the package's numerical best response needs a positive definite cost,
#: which subset gaming (infinite cost off G) is not.
LEARNERS = ("sa-ols", "etc", "oracle", "naive-greedy", "shifted-ols", "lin-ts",
            "epsilon-greedy", "accept-all", "reject-all")

#: Columns of :func:`run_lending`'s table, after the learner, seed and setting columns.
COUNTS = ("accepted", "moved", "clean", "learned", "gamed_as_clean")


@dataclass(frozen=True)
class _Game:
    """What :meth:`Learner.bind` reads from a game: the settings learners are bound to."""

    delta: float
    r0: float
    feedback: str
    agents: Any
    sigma: float


@dataclass(frozen=True)
class _Instance:
    """A bindable stand-in for a game instance (``Oracle.bind`` also reads θ)."""

    game: _Game
    theta1: np.ndarray
    theta0: np.ndarray


def subset_agents(gameable: np.ndarray, delta: float, truthful: float = 0.0) -> EllipsoidalCost:
    """Agents that game only the features where ``gameable`` is True, within budget ``delta``.

    An :class:`~strategic_apple_tasting.game.agents.EllipsoidalCost` with A⁻¹ = diag(gameable)
    (a move off those features has infinite cost). Built directly: ``from_cost`` needs A itself,
    which is infinite here.

    Examples
    --------
    >>> import numpy as np
    >>> agents = subset_agents(np.array([False, True]), delta=0.5)
    >>> x_obs, moved = agents.respond_once(np.array([1.0, 1.0]), 0.4, np.zeros(2))
    >>> moved, float(x_obs[0]), round(float(x_obs[1]), 12)
    (True, 0.0, 0.4)
    """
    mask = np.asarray(gameable, dtype=bool)
    if mask.ndim != 1:
        raise ValueError(f"gameable must be a 1-d boolean mask, got shape {mask.shape}")
    model = EllipsoidalCost(delta=delta, truthful=truthful, cost_inv=np.diag(mask.astype(float)))
    model.check()
    return model


def fitted_rule(data: LendingData) -> tuple[np.ndarray, float]:
    """θ*, the least-squares fit of the reward on the features over all rows, and the residual
    standard deviation (the reward noise σ learners tuned to it are bound to).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income\\n0,3\\n1,1\\n0,2\\n1,0\\n")
    >>> theta, sigma = fitted_rule(load_csv(csv, label="bad", default_value=1,
    ...                                     features=["income"]))
    >>> theta.round(3).tolist(), round(sigma, 3)
    ([0.0, 0.894], 0.447)
    """
    theta, *_ = np.linalg.lstsq(data.features, data.reward, rcond=None)
    resid = data.reward - data.features @ theta
    return theta, float(np.sqrt(np.mean(resid * resid)))


def _resolve(given: Any) -> tuple[str, Learner]:
    """A learner spec (a name, a Learner, or a (label, name or Learner) pair) → label, learner."""
    label, spec = given if isinstance(given, tuple) and len(given) == 2 else (None, given)
    learner = make_learner(spec) if isinstance(spec, str) else spec
    if not isinstance(learner, Learner) or not (label is None or isinstance(label, str)):
        raise ValueError(f"learners must be names, Learner instances or (label, learner) "
                         f"pairs, got {given!r}")
    return (label or (spec if isinstance(spec, str) else learner.name)), learner


def _check(delta: Any, r0: Any, truthful: Any, horizon: Any, seeds: Any) -> list[int]:
    for name, value, low, high in (("delta", delta, 0.0, math.inf), ("r0", r0, -math.inf,
                                   math.inf), ("truthful", truthful, 0.0, 1.0)):
        if not (isinstance(value, int | float) and not isinstance(value, bool)
                and math.isfinite(value) and low <= value <= high):
            raise ValueError(f"{name} must be a finite number in [{low}, {high}], got {value!r}")
    if not (isinstance(horizon, int | np.integer) and not isinstance(horizon, bool)
            and horizon >= 1):
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    if isinstance(seeds, int | np.integer) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be a count >= 1 or a list of seed indices, got {seeds}")
        return list(range(int(seeds)))
    if not (isinstance(seeds, Sequence) and seeds and all(
            isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0
            for s in seeds)):
        raise ValueError(f"seeds must be a count >= 1 or a list of seed indices >= 0, "
                         f"got {seeds!r}")
    return [int(s) for s in seeds]


def run_lending(data: LendingData, learners: Sequence[str | Learner] = LEARNERS, *,
                horizon: int, seeds: int | Sequence[int], delta: float, r0: float = 0.0,
                truthful: float = 0.0, seed: int = 0,
                record_at: Sequence[int] | None = None, delay: int = 0,
                period: int = 1) -> pd.DataFrame:
    """Play the lending scenario; one row per learner × seed × recorded round.

    Seed index s uses the child s of ``SeedSequence(seed)``, which spawns three streams: the
    applicants (rows drawn with replacement), the agents (who is truthful) and the learner.
    Every learner meets the same applicants and agents on a seed, and a seed's results do not
    depend on the other seeds run with it.

    Parameters
    ----------
    data : LendingData
        The applicants (:func:`~.lending.load_german_credit`, :func:`~.lending.load_csv`).
    learners : sequence of str, Learner or (str, str or Learner)
        Registry names, learner instances, or (label, learner) pairs to tell apart two
        configurations of one learner (unset ``delta``, ``r0``, ``feedback``,
        ``agents``, ``sigma`` and ``horizon`` are bound to this game; ``agents`` is the
        subset-gaming model). Default :data:`LEARNERS`.
    horizon : int
        Rounds T.
    seeds : int or sequence of int
        How many seeds (0, 1, ...), or which.
    delta : float
        Agents' budget, in the standardized features' units.
    r0 : float
        Reward of rejecting, in the scaled rewards' units.
    truthful : float
        Probability that an agent does not game.
    seed : int
        Entropy of the root ``SeedSequence``.
    record_at : sequence of int, optional
        Rounds after which totals are recorded (default: the last round only).
    delay : int
        Rounds after its decision that a loan's outcome reaches the learner (0: at the end of
        its own round, the paper's game). Learners run through the decision API
        (:mod:`strategic_apple_tasting.learners.decisions`): outcomes are reported by id.
    period : int
        Rounds a published rule stays in force (1: a rule each round).

    Returns
    -------
    pandas.DataFrame
        Columns ``learner, seed, t, delta, truthful, regret, stackelberg_regret,
        stackelberg_exact, reward, accepted, moved, clean, learned, gamed_as_clean,
        seconds``: cumulative regrets against the two benchmarks (module docstring), the
        learner's total reward, and counts (``moved``: agents that gamed; ``clean``: accepted
        points learned from whose agent did not move; ``learned``: all points learned from;
        ``gamed_as_clean``: moved points learned from). ``stackelberg_exact`` is True when every
        agent games, where the two benchmarks coincide.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income,cash\\n0,3,1\\n1,1,0\\n0,2,2\\n1,0,1\\n")
    >>> data = load_csv(csv, label="bad", default_value=1, features=["income", "cash"],
    ...                 gameable=["cash"])
    >>> table = run_lending(data, ["oracle", "accept-all"], horizon=50, seeds=2, delta=0.5)
    >>> table.groupby("learner", sort=False)["regret"].max().round(9).tolist()
    [0.0, 27.0]
    """
    seed_list = _check(delta, r0, truthful, horizon, seeds)
    for name, value, low in (("delay", delay, 0), ("period", period, 1)):
        if not (isinstance(value, int | np.integer) and not isinstance(value, bool)
                and value >= low):
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not isinstance(data, LendingData):
        raise ValueError(f"data must be a LendingData (load_german_credit, load_csv), "
                         f"got {type(data).__name__}")
    record = sorted({int(horizon)} if record_at is None else {int(t) for t in record_at})
    if record[0] < 1 or record[-1] > horizon:
        raise ValueError(f"record_at must be rounds in [1, {horizon}], got {list(record_at)!r}")
    if not learners:
        raise ValueError("learners must name at least one learner")
    theta, sigma = fitted_rule(data)
    agents = subset_agents(data.gameable, float(delta), float(truthful))
    game = _Game(delta=float(delta), r0=float(r0), feedback="apple", agents=agents, sigma=sigma)
    instance = _Instance(game=game, theta1=theta, theta0=np.zeros(data.d))
    specs = [_resolve(given) for given in learners]
    labels = [label for label, _ in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"learners must have distinct labels (give (label, learner) pairs), "
                         f"got {labels!r}")
    rows = []
    root = np.random.SeedSequence(seed)
    for s in seed_list:
        streams = _Streams.make(root, s, data, agents, int(horizon), float(r0))
        for label, spec in specs:
            bound = spec.bind(instance, int(horizon))
            rows += _play(data, bound, streams, agents, int(horizon), float(r0), record,
                          int(delay), int(period), label=label, seed=s, delta=float(delta),
                          truthful=float(truthful))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Streams:
    """One seed's draws, shared by every learner, and the benchmarks' rewards on them."""

    rows: np.ndarray  # the applicant of each round
    honest: np.ndarray  # whether the round's agent does not game
    learner: np.random.SeedSequence
    benchmark: np.ndarray  # (a)'s reward each round
    stackelberg: np.ndarray  # (b)'s reward each round

    @classmethod
    def make(cls, root: np.random.SeedSequence, s: int, data: LendingData,
             agents: EllipsoidalCost, horizon: int, r0: float) -> _Streams:
        # SeedSequence(entropy, spawn_key=(s,)) is root.spawn(...)[s] without spawning s
        # children first: seed s is the same whichever seeds run with it.
        child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, s))
        rows_ss, agents_ss, learner_ss = child.spawn(3)
        rows = np.random.default_rng(rows_ss).integers(0, data.n, size=horizon)
        draws = np.random.default_rng(agents_ss).random(horizon)  # drawn whatever truthful is
        honest = draws < agents.truthful if agents.delta > 0 else np.ones(horizon, bool)
        theta, _ = fitted_rule(data)
        x, y = data.features[rows], data.reward[rows]
        scores = x @ theta
        best = np.where(scores >= r0, y, r0)
        # (b): the fitted rule shifted by the reach δ‖θ*_G‖; a gamer moves iff its gap to the
        # threshold is within the reach (the agents' own test, ties to the agent).
        reach_norm = float(np.linalg.norm(theta[data.gameable]))
        threshold = r0 + agents.delta * reach_norm
        gap = threshold - scores
        accepted = (gap <= 0) | (~honest & _within(gap, reach_norm, agents.delta))
        return cls(rows=rows, honest=honest, learner=learner_ss, benchmark=best,
                   stackelberg=np.where(accepted, y, r0))


def _within(gap: np.ndarray, reach_norm: float, delta: float) -> np.ndarray:
    """Vectorized ``within_budget`` of the cost gap/‖β_G‖: the agents' own test, ties settled
    for the agent (False everywhere when no gameable feature has weight)."""
    if reach_norm == 0:
        return np.zeros(gap.shape, bool)
    return gap / reach_norm <= delta * (1.0 + BUDGET_SLACK)


def _play(data: LendingData, learner: Learner, streams: _Streams, agents: EllipsoidalCost,
          horizon: int, r0: float, record: list[int], delay: int, period: int,
          **labels: Any) -> list[dict[str, Any]]:
    start = time.perf_counter()
    learner.reset(data.d, np.random.default_rng(streams.learner))
    gamer = compiled_agents(agents._replace(truthful=0.0))  # the coin is drawn up front
    respond = RESPOND[type(gamer)]  # (streams.honest)
    scratch_rng = np.random.default_rng(0)  # respond draws nothing when truthful is 0
    out = np.empty(data.d)
    # Writable copies: LendingData's arrays are frozen, and a read-only row is another compiled
    # type for the agents' responses and the learners' kernels, which no package run compiles.
    features, reward = np.array(data.features), np.array(data.reward)
    totals = dict.fromkeys(COUNTS, 0)
    regret = stack = earned = 0.0
    rows, k = [], 0
    moved_at: dict[int, bool] = {}
    for t in range(horizon):
        i = streams.rows[t]
        x = features[i]
        if t % period == 0:
            learner.publish()
        rule = learner.rule_in_force().rule
        if not isinstance(rule, LinearThreshold):
            raise ValueError(f"learner {labels['label']!r} published a non-linear rule; the "
                             "lending scenario's agents answer linear thresholds only")
        beta = np.asarray(rule.beta, dtype=float)
        moved = False
        if not streams.honest[t] and float(beta @ x) < rule.threshold:
            moved = bool(respond(gamer, scratch_rng, beta, float(rule.threshold), x, out))
        x_obs = out.copy() if moved else x
        decision = learner.decide(x_obs, id=t)
        accepted = decision.accepted
        got = float(reward[i]) if accepted else r0
        if accepted:
            moved_at[t] = moved
        else:  # a rejection's (empty) feedback is learned by decide(), at once
            _count(totals, bool(decision.used), False, moved)
        # The loan of round t − delay is repaid (or not) now: its outcome reaches the learner.
        due = t - delay
        if due in moved_at:
            _count(totals, learner.report(due, float(reward[streams.rows[due]])), True,
                   moved_at.pop(due))
        earned += got
        regret += streams.benchmark[t] - got
        stack += streams.stackelberg[t] - got
        totals["accepted"] += accepted
        totals["moved"] += moved
        if t + 1 == record[k]:
            rows.append({"learner": labels["label"], "seed": labels["seed"], "t": t + 1,
                         "delta": labels["delta"], "truthful": labels["truthful"],
                         "delay": delay, "period": period,
                         "regret": regret, "stackelberg_regret": stack,
                         "stackelberg_exact": agents.truthful in (0.0, 1.0) or agents.delta == 0,
                         "reward": earned, **totals,
                         "seconds": time.perf_counter() - start})
            k += 1
    return rows


def _count(totals: dict[str, int], used: bool, accepted: bool, moved: bool) -> None:
    totals["clean"] += used and accepted and not moved  # the engine's: learned and unmoved
    totals["learned"] += used
    totals["gamed_as_clean"] += used and moved


def compare_lending(data: LendingData, learners: Sequence[str | Learner] = LEARNERS, *,
                    horizon: int, seeds: int | Sequence[int], deltas: Sequence[float],
                    r0: float = 0.0, truthful: float = 0.0, seed: int = 0,
                    table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Final regret per δ × learner: means over seeds with 95% Student-t intervals.

    Runs :func:`run_lending` at each δ (or summarizes ``table``, one of its outputs).

    Returns
    -------
    pandas.DataFrame
        Columns ``delta, learner, seeds, regret, regret_ci, stackelberg_regret,
        stackelberg_ci, accepted, moved, clean, gamed_as_clean, seconds``: ``*_ci`` is the
        half-width of the interval (NaN for one seed); counts are means over seeds, except
        ``gamed_as_clean``, the largest over seeds; ``seconds`` is the mean time of a run.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income,cash\\n0,3,1\\n1,1,0\\n0,2,2\\n1,0,1\\n")
    >>> data = load_csv(csv, label="bad", default_value=1, features=["income", "cash"],
    ...                 gameable=["cash"])
    >>> summary = compare_lending(data, ["oracle", "reject-all"], horizon=40, seeds=3,
    ...                           deltas=[0.5])
    >>> summary[["learner", "seeds"]].values.tolist()
    [['oracle', 3], ['reject-all', 3]]
    """
    if table is None:
        if isinstance(deltas, int | float) or not deltas:
            raise ValueError(f"deltas must be a non-empty list of budgets, got {deltas!r}")
        table = pd.concat([run_lending(data, learners, horizon=horizon, seeds=seeds, delta=d,
                                       r0=r0, truthful=truthful, seed=seed) for d in deltas],
                          ignore_index=True)
    last = table[table["t"] == table["t"].max()]
    out = []
    for (delta, learner), group in last.groupby(["delta", "learner"], sort=False):
        regret, regret_ci = mean_ci(group["regret"].to_numpy())
        stack, stack_ci = mean_ci(group["stackelberg_regret"].to_numpy())
        out.append({"delta": delta, "learner": learner, "seeds": len(group),
                    "regret": regret, "regret_ci": regret_ci, "stackelberg_regret": stack,
                    "stackelberg_ci": stack_ci, "accepted": group["accepted"].mean(),
                    "moved": group["moved"].mean(), "clean": group["clean"].mean(),
                    "gamed_as_clean": int(group["gamed_as_clean"].max()),
                    "seconds": group["seconds"].mean()})
    return pd.DataFrame(out)


def format_table(summary: pd.DataFrame | Mapping[str, Any]) -> str:
    """:func:`compare_lending`'s summary as a Markdown table (regret as mean ± half-width).

    Examples
    --------
    >>> import pandas as pd
    >>> print(format_table(pd.DataFrame([{"delta": 0.5, "learner": "oracle", "seeds": 2,
    ...     "regret": 0.0, "regret_ci": 0.0, "stackelberg_regret": 0.0, "stackelberg_ci": 0.0,
    ...     "accepted": 10.0, "moved": 2.0, "clean": 0.0, "gamed_as_clean": 0,
    ...     "seconds": 0.1}])).splitlines()[2])
    | 0.5 | oracle | 2 | 0 (on every seed) | 0 (on every seed) | 10 | 2 | 0 | 0 |
    """
    frame = pd.DataFrame(summary)
    head = ("| δ | learner | seeds | regret (95% CI) | Stackelberg regret (95% CI) | accepted "
            "| moved | clean | gamed as clean |")
    lines = [head, "|" + "---|" * 9]
    for r in frame.itertuples(index=False):
        lines.append(f"| {r.delta:g} | {r.learner} | {r.seeds} | "
                     f"{shown_mean(r.regret, r.regret_ci)} | "
                     f"{shown_mean(r.stackelberg_regret, r.stackelberg_ci)} "
                     f"| {r.accepted:.0f} | {r.moved:.0f} | {r.clean:.0f} | "
                     f"{r.gamed_as_clean} |")
    return "\n".join(lines)


def shown_mean(value: float, half: float) -> str:
    """A mean with its interval's half-width; never "± 0", which would claim a precision:
    a value that is the same on every seed says so, one seed has no interval."""
    if math.isnan(half):
        return f"{value:.4g} (one seed)"
    if half == 0:
        return f"{value:.4g} (on every seed)"
    return f"{value:.4g} ± {half:.2g}"
