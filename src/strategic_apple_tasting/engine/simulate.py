"""Run learners on a game over many seeds with the compiled kernel; return a tidy table."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa

from ..game.game import Game
from ..learners import Learner, make_learner
from .grid import recording_grid
from .kernel import FLOAT_COLUMNS, INT_COLUMNS, run_rounds
from .stackelberg import stackelberg_shortfall

#: Columns every results table has, before the settings columns.
RESULT_COLUMNS = ("learner", "seed", "t", "regret", "stackelberg_regret", "stackelberg_exact",
                  "realized_regret", *INT_COLUMNS, "theta_error")


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
        if not (isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0):
            raise ValueError(f"each seed must be an integer >= 0, got {s!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must be distinct, got {out!r}")
    return [int(s) for s in out]


def _grid(game: Game, learner: Learner, horizon: int, per_decade: int) -> np.ndarray:
    """The rounds recorded for ``learner``: the log-spaced grid and the learner's milestones
    (phase ends, such as explore-then-commit's T0), which depend on the game, not the seed."""
    bound = learner.bind(game.instance(0), horizon)
    extra = [m for m in bound.milestones(game.dimension) if 1 <= m < horizon]
    return np.union1d(recording_grid(horizon, per_decade), np.asarray(extra, dtype=np.int64))


def run_one(game: Game, learner: Learner, seed: int, record_at: np.ndarray
            ) -> tuple[Learner, np.ndarray, np.ndarray]:
    """Run one learner on one seed; returns the bound, run learner and the two output arrays."""
    inst = game.instance(seed)
    horizon = int(record_at[-1])
    bound = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    out_float = np.empty((len(record_at), len(FLOAT_COLUMNS)))
    out_int = np.empty((len(record_at), len(INT_COLUMNS)), dtype=np.int64)
    run_rounds(bound.state, inst.contexts, game.agents, inst.theta1, inst.theta0,
               game.feedback == "bandit", float(game.r0), float(game.sigma),
               inst.rngs["contexts"], inst.rngs["agents"], inst.rngs["noise"],
               inst.rngs["learner"], record_at, out_float, out_int)
    return bound, out_float, out_int


def simulate(game: Game, learners: Sequence[Learner | str] | Learner | str, horizon: int,
             seeds: int | Iterable[int] = 1, *, threads: int = 1, per_decade: int = 20,
             ) -> pa.Table:
    """Simulate ``learners`` on ``game`` for ``horizon`` rounds on each seed.

    Every learner meets the same agents and noise on a given seed (common random numbers), and a
    seed's results do not depend on the other seeds, on ``threads`` or on the batch.

    Parameters
    ----------
    game : Game
    learners : learner, name, or a sequence of them
        Unset ``delta``, ``r0`` and ``feedback`` are taken from the game.
    horizon : int
        Rounds T per run.
    seeds : int or iterable of int
        A count n (seeds 0..n−1) or the seeds themselves.
    threads : int
        Worker threads; the compiled kernel releases the GIL.
    per_decade : int
        Density of the log-spaced grid of recorded rounds (the last round is always recorded,
        and so are the rounds at which a learner changes phase: its ``milestones``).

    Returns
    -------
    pyarrow.Table
        One row per learner × seed × recorded round: ``learner, seed, t, regret,
        stackelberg_regret, stackelberg_exact, realized_regret, accepted, moved, clean,
        learned, gamed_as_clean, theta_error`` and one column per game setting plus ``horizon``.
        ``stackelberg_regret`` equals ``regret`` when ``stackelberg_exact``; otherwise it is a
        search-based lower bound (:mod:`.stackelberg`).

    Examples
    --------
    >>> table = simulate(Game(dimension=2), ["sa-ols", "oracle"], horizon=100, seeds=2)
    >>> table.num_rows == 2 * 2 * len(recording_grid(100))
    True
    """
    learner_list = [_as_learner(s) for s in
                    ([learners] if isinstance(learners, Learner | str) else learners)]
    if not learner_list:
        raise ValueError("learners must not be empty")
    names = [lr.name for lr in learner_list]
    seed_list = _seeds(seeds)
    recording_grid(horizon, per_decade)  # checks both
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"threads must be an integer >= 1, got {threads!r}")
    grids = [_grid(game, lr, horizon, per_decade) for lr in learner_list]
    everywhere = np.unique(np.concatenate(grids))
    jobs = [(i, s) for i in range(len(learner_list)) for s in seed_list]

    def run(job):
        i, s = job
        return run_one(game, learner_list[i], s, grids[i])

    if threads == 1 or len(jobs) == 1:
        outputs = [run(job) for job in jobs]
        shortfalls = [stackelberg_shortfall(game, s, everywhere) for s in seed_list]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(jobs))) as pool:
            runs = pool.map(run, jobs)
            shortfalls = pool.map(lambda s: stackelberg_shortfall(game, s, everywhere),
                                  seed_list)
            outputs, shortfalls = list(runs), list(shortfalls)
    by_seed = dict(zip(seed_list, shortfalls, strict=True))
    return _table(game, horizon, names, jobs, grids, outputs, by_seed, everywhere)


def _label(names: list[str], index: int) -> str:
    """Learner label: its name, numbered when the same name appears more than once."""
    name = names[index]
    if names.count(name) == 1:
        return name
    return f"{name}#{names[:index + 1].count(name)}"


def _table(game: Game, horizon: int, names: list[str], jobs: list[tuple[int, int]],
           grids: list[np.ndarray], outputs: list, shortfalls: dict[int, np.ndarray | None],
           everywhere: np.ndarray) -> pa.Table:
    lengths = [len(grids[i]) for i, _ in jobs]
    cols: dict[str, Any] = {
        "learner": np.repeat([_label(names, i) for i, _ in jobs], lengths),
        "seed": np.repeat([s for _, s in jobs], lengths).astype(np.int64),
        "t": np.concatenate([grids[i] for i, _ in jobs]),
    }
    floats = np.concatenate([f for _, f, _ in outputs])
    ints = np.concatenate([i for _, _, i in outputs])
    cols["regret"] = floats[:, 0]
    exact = all(v is None for v in shortfalls.values())
    shortfall = [np.zeros(len(grids[i])) if shortfalls[s] is None
                 else shortfalls[s][np.searchsorted(everywhere, grids[i])] for i, s in jobs]
    cols["stackelberg_regret"] = floats[:, 0] - np.concatenate(shortfall)
    cols["stackelberg_exact"] = np.full(len(floats), exact)
    cols["realized_regret"] = floats[:, 1]
    for j, name in enumerate(INT_COLUMNS):
        cols[name] = ints[:, j]
    cols["theta_error"] = floats[:, 2]
    rows = len(cols["t"])
    for key, value in {**game.settings(), "horizon": int(horizon)}.items():
        cols[key] = np.repeat(np.array([value]), rows)
    return pa.table(cols)


def default_threads() -> int:
    """Threads to use by default: the CPUs this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)
