"""Run learners on a game over many seeds with the compiled kernel; return a tidy table."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import numpy as np
import pyarrow as pa

from ..game.game import Game, GameInstance
from ..learners import LEARNERS, Learner, make_learner
from ..learners.budget import estimating_belief
from .grid import recording_grid
from .groups import (
    GROUP_COUNTS,
    GroupTally,
    group_names,
    new_tally,
    no_tally,
    shift_model,
)
from .hindsight import Hindsight, game_search, hindsight, plan
from .holdout import (
    HOLDOUT_COLUMNS,
    cross_fitted,
    held_out,
    is_holdout,
    learning_search,
    score_rules,
)
from .kernel import (
    FLOAT_COLUMNS,
    INT_COLUMNS,
    Groups,
    Outputs,
    Schedule,
    Streams,
    Truth,
    run_rounds,
)
from .reference import run_reference
from .stackelberg import stackelberg_shortfall

#: Columns every results table has, before the settings columns.
RESULT_COLUMNS = ("learner", "learner_name", "learner_params", "seed", "t", "regret",
                  "stackelberg_regret", "stackelberg_exact", "realized_regret", *INT_COLUMNS,
                  "theta_error")
#: Columns a data game's table adds (:mod:`.hindsight`): the learner's realized profit, regret
#: against the best linear rule on true contexts (``linear_regret``; answered by the agents it
#: is ``stackelberg_regret``) and against the least-squares rule in both versions, and the
#: realized profit of the best rule answered by the agents.
DATA_COLUMNS = ("profit", "linear_regret", "ls_regret", "ls_stackelberg_regret",
                "best_rule_profit")

#: Columns a table adds when a learner estimates its agents' budget (``delta="estimate"``):
#: the estimate, its interval and the δ in force, at each run's last round.
ESTIMATE_COLUMNS = ("delta_estimate", "delta_low", "delta_high", "delta_in_force")

#: The longest run: rounds are counted in int64, and at the engine's ~10⁷ rounds a second a
#: run of 10¹² rounds already takes more than a day.
MAX_HORIZON = 10**12
#: Seeds are int64 columns of the results.
MAX_SEED = 2**63 - 1

#: The engine's paths: ``auto`` runs a compiled learner compiled and any other on the reference.
ENGINES = ("auto", "compiled", "reference")

#: A warm start (:func:`simulate`'s ``start``): called with a run's bound, reset learner and
#: its seed's game instance before round 1.
Start = Callable[[Learner, GameInstance], None]


def _as_learner(spec: Learner | str) -> Learner:
    return make_learner(spec) if isinstance(spec, str) else spec


def _seeds(seeds: int | Iterable[int]) -> list[int]:
    if isinstance(seeds, int | np.integer) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1 (a count) or a list of seeds, got {seeds!r}")
        return list(range(int(seeds)))
    out = list(seeds)
    if not out:
        raise ValueError("seeds must not be empty")
    for s in out:
        if not (isinstance(s, int | np.integer) and not isinstance(s, bool)
                and 0 <= s <= MAX_SEED):
            raise ValueError(f"each seed must be an integer from 0 to 2^63 - 1, got {s!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must be distinct, got {out!r}")
    return [int(s) for s in out]


def _grid(game: Game, learner: Learner, horizon: int, per_decade: int) -> np.ndarray:
    """The rounds recorded for ``learner``: the log-spaced grid and the learner's milestones
    (phase ends, such as explore-then-commit's T0), which depend on the game, not the seed."""
    bound = learner.bind(game.instance(0), horizon)
    extra = [m for m in bound.milestones(game.dimension) if 1 <= m < horizon]
    return np.union1d(recording_grid(horizon, per_decade), np.asarray(extra, dtype=np.int64))


def run_one(game: Game, learner: Learner, seed: int, record_at: np.ndarray,
            tally: GroupTally | None = None, start: Start | None = None
            ) -> tuple[Learner, np.ndarray, np.ndarray, np.ndarray]:
    """Run one compiled learner on one seed with the compiled loop; returns the bound, run
    learner and the three output arrays (totals, counts and the rule in force at each
    recorded round; :func:`.reference.run_reference` is its Python twin); ``start``, if
    given, warm-starts the bound and reset learner before round 1 (:func:`simulate`);
    ``tally``, if given, is filled with the run's totals by group (:mod:`.groups`)."""
    inst = game.instance(seed)
    horizon = int(record_at[-1])
    bound = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    if start is not None:
        start(bound, inst)
    tally = no_tally() if tally is None else tally
    # Read only with groups, but passed always: the loop then has one type per learner state
    # (a BudgetBelief, told or estimating), with groups or without.
    shift_agents = shift_model(game, bound)
    out_float = np.empty((len(record_at), len(FLOAT_COLUMNS)))
    out_int = np.empty((len(record_at), len(INT_COLUMNS)), dtype=np.int64)
    out_rule = np.empty((len(record_at), game.dimension + 1))
    rngs = inst.rngs
    run_rounds(bound.state, inst.compiled_contexts, inst.compiled_agents, inst.compiled_rewards,
               Truth(inst.theta1, inst.theta0, game.feedback == "bandit", float(game.r0),
                     float(game.sigma)),
               Streams(rngs["contexts"], rngs["agents"], rngs["noise"], rngs["learner"],
                       rngs["delays"]),
               Schedule(record_at, game.period, game.delay, game.delay_law == "uniform"),
               Groups(tally, shift_agents, inst.row_budgets),
               Outputs(out_float, out_int, out_rule))
    return bound, out_float, out_int, out_rule


def compiled_path_refusal(game: Game, learner: Learner) -> str | None:
    """Why the compiled loop cannot run ``learner`` on ``game`` (None if it can).

    The compiled loop decides with the learner's live state: a general rule (LinUCB's) held
    for a period would change as outcomes arrive, and a learner whose update reads what its
    policy drew (``published_fields``) would learn a late outcome with this round's draw. The
    reference loop keeps each published rule as published and runs both.
    """
    cls = type(learner)
    if cls.kernels is None:
        return f"{learner.name} is a plain-Python learner"
    if game.period > 1 and cls.tags().nonlinear:
        return (f"{learner.name} publishes a general rule, which the compiled loop cannot hold "
                f"for a period (period = {game.period})")
    if game.max_delay > 0 and cls.tags().published_fields:
        return (f"{learner.name} learns with what its policy drew, which the compiled loop "
                f"cannot keep for late outcomes (delay = {game.delay})")
    return None


def check_horizon(horizon: Any, name: str = "horizon") -> int:
    """``horizon`` as an int, or ``ValueError`` naming it and the allowed range."""
    if not (isinstance(horizon, int | np.integer) and not isinstance(horizon, bool)
            and 1 <= horizon <= MAX_HORIZON):
        raise ValueError(f"{name} must be an integer from 1 to 10^12, got {horizon!r}")
    return int(horizon)


def physical_memory() -> int:
    """Bytes of physical memory of this machine (the default ``max_memory``)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume a small machine
        return 8 * 2**30


def memory_needed(game: Game, learners: Sequence[Learner], horizon: int, n_seeds: int,
                  threads: int, per_decade: int = 20) -> int:
    """Bytes a :func:`simulate` call needs at its peak, estimated without allocating: the
    learner states of the runs in flight (one per thread) plus every run's recorded rows."""
    inst = game.instance(0)
    states = sorted((lr.bind(inst, horizon).state_bytes(game.dimension) for lr in learners),
                    reverse=True)
    runs = len(learners) * n_seeds
    in_flight = min(threads, runs)
    peak_states = sum(states[i % len(states)] for i in range(in_flight))
    rows = len(recording_grid(horizon, per_decade)) * runs
    row_bytes = 8 * (len(RESULT_COLUMNS) + len(game.settings()) + 1)
    # Each run in flight keeps the decisions awaiting outcomes: x', β, and five numbers.
    pending = in_flight * (game.max_delay + 1) * 8 * (2 * game.dimension + 5)
    return int(peak_states + pending + 3 * rows * row_bytes)


def check_learners(game: Game, learners: Sequence[Learner], horizon: int) -> None:
    """Each learner's parameters as the game binds them, checked before any run or search
    (a run used to refuse them in its first round, after a data game's searches)."""
    inst = game.instance(0)
    for learner in learners:
        try:
            learner.bind(inst, horizon).check_params()
        except ValueError as exc:
            if game.group_budgets is None or not str(exc).startswith("delta "):
                raise
            raise ValueError(f"delta by group: learners are told the largest budget, and "
                             f"{exc}") from None


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


def simulate(game: Game, learners: Sequence[Learner | str] | Learner | str, horizon: int,
             seeds: int | Iterable[int] = 1, *, threads: int = 1, per_decade: int = 20,
             max_memory: int | None = None,
             progress: Callable[[int, int], None] | None = None,
             engine: str = "auto", start: Start | None = None) -> pa.Table:
    """Simulate ``learners`` on ``game`` for ``horizon`` rounds on each seed.

    Every learner meets the same agents and noise on a given seed (common random numbers), and a
    seed's results do not depend on the other seeds, on ``threads`` or on the batch.

    Parameters
    ----------
    game : Game
    learners : learner, name, or a sequence of them
        Unset ``delta``, ``r0`` and ``feedback`` are taken from the game. Compiled learners and
        plain-Python ones alike (:class:`~strategic_apple_tasting.learners.Learner`).
    horizon : int
        Rounds T per run.
    seeds : int or iterable of int
        A count n (seeds 0..n−1) or the seeds themselves.
    threads : int
        Worker threads; the compiled kernel releases the GIL.
    per_decade : int
        Density of the log-spaced grid of recorded rounds (the last round is always recorded,
        and so are the rounds at which a learner changes phase: its ``milestones``).
    max_memory : int, optional
        Refuse (``ValueError``, before allocating anything) a run whose estimated peak memory
        (:func:`memory_needed`) exceeds this many bytes; default: the machine's physical
        memory.
    progress : callable, optional
        Called as ``progress(runs_done, runs_total)`` in the calling thread after each
        learner × seed run finishes.
    engine : {"auto", "compiled", "reference"}
        The compiled loop (:mod:`.kernel`) or the Python reference loop (:mod:`.reference`),
        which give bit-identical tables for a compiled learner; ``auto`` runs each compiled
        learner compiled and each plain-Python learner on the reference loop (and a compiled
        one the compiled loop cannot run on this game: :func:`compiled_path_refusal`).
    start : callable, optional
        A warm start: called as ``start(learner, instance)`` with each run's learner, bound
        and reset, and the seed's game instance, before round 1 (the lender's backtest replays
        a history of past decisions into it through the decision API). It must leave no
        decision awaiting an outcome.

    Returns
    -------
    pyarrow.Table
        One row per learner × seed × recorded round: ``learner`` (its label),
        ``learner_name`` (:func:`learner_id`), ``learner_params`` (JSON), ``seed, t, regret,
        stackelberg_regret, stackelberg_exact, realized_regret, accepted, moved, clean,
        learned, gamed_as_clean, theta_error`` and one column per game setting plus ``horizon``.
        ``stackelberg_regret`` equals ``regret`` when ``stackelberg_exact``; otherwise it is a
        search-based lower bound (:mod:`.stackelberg`). A data game (contexts a data set's rows,
        :mod:`..game.data`) measures ``regret`` against accepting exactly the rows that gain,
        ``stackelberg_regret`` against the best linear rule found by a search over its rows,
        answered by the agents (:mod:`.hindsight`), and adds :data:`DATA_COLUMNS`.

    Examples
    --------
    >>> table = simulate(Game(dimension=2), ["sa-ols", "oracle"], horizon=100, seeds=2)
    >>> table.num_rows == 2 * 2 * len(recording_grid(100))
    True
    """
    learner_list = _checked_learners(game, learners, engine)
    compiled = [engine != "reference" and compiled_path_refusal(game, lr) is None
                for lr in learner_list]
    names = [lr.name for lr in learner_list]
    identities = [(learner_id(lr), learner_params(lr)) for lr in learner_list]
    seed_list = _seeds(seeds)
    horizon = check_horizon(horizon)
    _check_run(game, learner_list, horizon, len(seed_list), threads, per_decade, max_memory)
    grids = [_grid(game, lr, horizon, per_decade) for lr in learner_list]
    everywhere = np.unique(np.concatenate(grids))
    jobs = [(i, s) for i in range(len(learner_list)) for s in seed_list]
    # A data game's benchmarks replay each seed against the rules its rows' search found;
    # under a held-out protocol each seed's search and least-squares rule are its learning
    # rows' own, and its cross-fitted rules are scored on its held-out rows.
    holdout = is_holdout(game)
    prepared = plan(game, game_search(game)) if game.has_rows and not holdout else None
    scored = [not lr.tags().nonlinear for lr in learner_list]
    parts = {s: held_out(game, s) for s in seed_list} if holdout else {}

    def benchmark(seed: int) -> np.ndarray | Hindsight | None:
        if holdout:
            part = parts[seed]
            search = learning_search(game, part)
            return (hindsight(game, seed, everywhere, prepared=plan(game, search, seed)),
                    score_rules(part, cross_fitted(game, part, search)))
        if prepared is not None:
            return hindsight(game, seed, everywhere, prepared=prepared)
        return stackelberg_shortfall(game, seed, everywhere)

    def run(job):
        i, s = job
        # Keep the recorded rows only: a finished run's learner state is freed at once, so
        # the runs in flight bound the memory (as memory_needed assumes).
        path = run_one if compiled[i] else run_reference
        tally = new_tally(game)
        bound, out_float, out_int, out_rule = path(game, learner_list[i], s, grids[i], tally,
                                                   start)
        held = None
        if holdout:
            # A general rule (LinUCB's) is not a threshold on its recorded β: not scored.
            held = (score_rules(parts[s], out_rule) if scored[i]
                    else np.full(len(out_rule), np.nan))
        return out_float, out_int, (tally.counts, budget_estimate(bound), held)

    def report(done: int) -> None:
        if progress is not None:
            progress(done, len(jobs))

    if threads == 1 or len(jobs) == 1:
        outputs = []
        for job in jobs:
            outputs.append(run(job))
            report(len(outputs))
        shortfalls = [benchmark(s) for s in seed_list]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(jobs))) as pool:
            futures = [pool.submit(run, job) for job in jobs]
            behind = [pool.submit(benchmark, s) for s in seed_list]
            for done, _ in enumerate(as_completed(futures), start=1):
                report(done)
            outputs = [f.result() for f in futures]
            shortfalls = [f.result() for f in behind]
    crossed = None
    if holdout:
        crossed = {s: cross for s, (_, cross) in zip(seed_list, shortfalls, strict=True)}
        shortfalls = [h for h, _ in shortfalls]
    by_seed = dict(zip(seed_list, shortfalls, strict=True))
    return _table(game, horizon, names, identities, jobs, grids, outputs, by_seed, everywhere,
                  crossed)


def _checked_learners(game: Game, learners: Sequence[Learner | str] | Learner | str,
                      engine: str) -> list[Learner]:
    """The learners as a list of instances (names made), each one the game and ``engine`` can
    run; else ``ValueError`` in one line."""
    learner_list = [_as_learner(s) for s in
                    ([learners] if isinstance(learners, Learner | str) else learners)]
    if not learner_list:
        raise ValueError("learners must not be empty")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    for lr in learner_list:
        if not isinstance(lr, Learner):
            raise ValueError(f"learners must be Learner instances or their names, got {lr!r}")
        if game.period > 1 and not lr.tags().holds_rules:
            raise ValueError(f"learner {lr.name} cannot hold a rule for a period (period = "
                             f"{game.period}): its rule reads its live model, which changes as "
                             "it learns")
        refusal = compiled_path_refusal(game, lr)
        if engine == "compiled" and refusal is not None:
            raise ValueError(f"engine 'compiled' cannot run this: {refusal} (use engine 'auto' "
                             "or 'reference')")
    return learner_list


def _check_run(game: Game, learner_list: list[Learner], horizon: int, seeds: int,
               threads: int, per_decade: int, max_memory: int | None) -> None:
    """Refuse, before anything is allocated, a run that cannot be made: a bad ``per_decade``
    or ``threads``, more memory than allowed, more rows than the protocol gives, a learner
    whose parameters the game refuses."""
    recording_grid(horizon, per_decade)  # checks per_decade
    if not (isinstance(threads, int) and not isinstance(threads, bool) and threads >= 1):
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    limit = physical_memory() if max_memory is None else max_memory
    need = memory_needed(game, learner_list, horizon, seeds, threads, per_decade)
    if need > limit:
        raise ValueError(f"this run needs about {_gib(need)} of memory (d = {game.dimension}, "
                         f"{min(threads, seeds * len(learner_list))} run(s) at once), "
                         f"more than the {_gib(limit)} allowed: lower the dimension, the "
                         f"threads or the horizon, or raise max_memory (--max-memory)")
    check_rows = getattr(game.contexts, "check_horizon", None)
    if check_rows is not None:
        check_rows(horizon)  # a protocol's limit: each row at most once
    check_learners(game, learner_list, horizon)


def budget_estimate(bound: Learner) -> tuple[float, float, float, float] | None:
    """A run learner's estimate of its agents' budget, its interval and the δ in force (None
    if it does not estimate it)."""
    belief = estimating_belief(bound.state)
    if belief is None:
        return None
    cur = belief.current
    return float(cur[1]), float(cur[2]), float(cur[3]), float(cur[0])


def _label(names: list[str], index: int) -> str:
    """Learner label: its name, numbered when the same name appears more than once."""
    name = names[index]
    if names.count(name) == 1:
        return name
    return f"{name}#{names[:index + 1].count(name)}"


def learner_id(learner: Learner) -> str:
    """The name that :func:`~strategic_apple_tasting.learners.learner_class` resolves to the
    learner's class: its registry name, or its import path ``module:Class``."""
    cls = type(learner)
    if LEARNERS.get(cls.name) is cls:
        return cls.name
    return f"{cls.__module__}:{cls.__qualname__}"


def learner_params(learner: Learner) -> str:
    """The learner's hyperparameters as given (unset ones null), as a JSON object."""
    return json.dumps(learner.get_params(), sort_keys=True, default=repr)


def _table(game: Game, horizon: int, names: list[str], identities: list[tuple[str, str]],
           jobs: list[tuple[int, int]], grids: list[np.ndarray], outputs: list,
           shortfalls: dict[int, Any], everywhere: np.ndarray,
           crossed: dict[int, np.ndarray] | None = None) -> pa.Table:
    lengths = [len(grids[i]) for i, _ in jobs]
    cols: dict[str, Any] = {
        "learner": np.repeat([_label(names, i) for i, _ in jobs], lengths),
        "learner_name": np.repeat([identities[i][0] for i, _ in jobs], lengths),
        "learner_params": np.repeat([identities[i][1] for i, _ in jobs], lengths),
        "seed": np.repeat([s for _, s in jobs], lengths).astype(np.int64),
        "t": np.concatenate([grids[i] for i, _ in jobs]),
    }
    floats = np.concatenate([f for f, _, _ in outputs])
    ints = np.concatenate([i for _, i, _ in outputs])
    cols["regret"] = floats[:, 0]
    at = [np.searchsorted(everywhere, grids[i]) for i, _ in jobs]

    def per_row(field: str | None) -> np.ndarray:
        """A seed's benchmark (a shortfall, or a data game's field of it) on each job's rows."""
        parts = []
        for (_, s), where in zip(jobs, at, strict=True):
            value = shortfalls[s] if field is None else getattr(shortfalls[s], field)
            parts.append(np.zeros(len(where)) if value is None else value[where])
        return np.concatenate(parts)

    data = game.has_rows
    exact = not data and all(v is None for v in shortfalls.values())
    cols["stackelberg_regret"] = floats[:, 0] - per_row("stackelberg" if data else None)
    cols["stackelberg_exact"] = np.full(len(floats), exact)
    cols["realized_regret"] = floats[:, 1]
    for j, name in enumerate(INT_COLUMNS):
        cols[name] = ints[:, j]
    cols["theta_error"] = floats[:, 2]
    if data:
        cols["profit"] = floats[:, 3]
        cols["linear_regret"] = floats[:, 0] - per_row("linear")
        cols["ls_regret"] = floats[:, 0] - per_row("ls")
        cols["ls_stackelberg_regret"] = floats[:, 0] - per_row("ls_stackelberg")
        cols["best_rule_profit"] = per_row("best_profit")
    if crossed is not None:
        # Held out: the rule in force at each recorded round, and the seed's two cross-fitted
        # rules (the same on every row of the seed), each on the held-out applicants.
        cols[HOLDOUT_COLUMNS[0]] = np.concatenate([held for _, _, (_, _, held) in outputs])
        for j, name in enumerate(HOLDOUT_COLUMNS[1:]):
            cols[name] = np.concatenate([np.full(len(grids[i]), crossed[s][j])
                                         for i, s in jobs])
    if group_names(game):
        # A run's totals by group, at its last round only (earlier rounds: null).
        for j, name in enumerate(GROUP_COUNTS):
            values: list[Any] = []
            for (i, _), (_, _, (counts, _, _)) in zip(jobs, outputs, strict=True):
                values.extend([None] * (len(grids[i]) - 1))
                values.append(counts[:, j].tolist())
            cols[f"group_{name}"] = pa.array(values, type=pa.list_(pa.float64()))
    if any(est is not None for _, _, (_, est, _) in outputs):
        # A learner that estimates its agents' budget: the estimate, its interval and the δ
        # in force at its run's last round (NaN elsewhere, and for the other learners).
        for j, name in enumerate(ESTIMATE_COLUMNS):
            column = np.full(len(cols["t"]), np.nan)
            end = np.cumsum([len(grids[i]) for i, _ in jobs]) - 1
            for k, (_, _, (_, est, _)) in enumerate(outputs):
                if est is not None:
                    column[end[k]] = est[j]
            cols[name] = column
    rows = len(cols["t"])
    for key, value in {**game.settings(), "horizon": int(horizon)}.items():
        cols[key] = np.repeat(np.array([value]), rows)
    return pa.table(cols)


def default_threads() -> int:
    """Threads to use by default: the CPUs this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)
