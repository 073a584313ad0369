"""Compile every kernel and engine loop of the package into the on-disk cache, in parallel
worker processes, once (``sat compile``).

What "every" is comes from the registry, not from a list kept here: compiled code is
specialized on the class of a learner's state (its kernels and the engine's loop for it), while
every built-in agent model, context model and reward model reaches compiled code as one type
each (:class:`~strategic_apple_tasting.game.agents.AgentsCore`,
:class:`~strategic_apple_tasting.game.contexts.ContextsCore`,
:class:`~strategic_apple_tasting.game.rewards.RewardsCore`: subset gaming, a data set's rows and
its recorded outcomes among them), and the feedback mode, the delays and the period are values,
not types. So the parts are:

* one per state class of the registered learners (the registry and the entry points, a
  user's compiled learner among them): the engine's loop and the learner's kernels, reached by
  short runs of a learner of that class on both of the engine's paths and in both feedback
  modes, with outcomes delayed and with truthful agents (the Stackelberg search); a
  strategy-aware learner also estimating its budget (``delta="estimate"``: the same compiled
  types as when it is told δ, run so its estimator's paths are loaded), in those games and in
  a data game with groups;
* the game's Python side: what plain-Python learners meet (the agents' responses to linear
  rules and to rules given as Python functions, the batched draws), a data game's benchmarks
  (its rows, subset gaming and recorded rewards are the same compiled types as every game's,
  so the learners' loops need no data game of their own; its groups are counted on both
  paths) and the public functions that call compiled code from Python (the budget's probe and
  estimator among them);
* the plain-Python learners of the entry points (the peer adapters), whose rules agents answer
  with compiled code.

Each part runs in a worker process; the cache's index is locked while a worker writes it
(``_jit_cache._locked``). A part already in the cache loads in a fraction of a second, and once
every part has finished, a stamp beside the cache (the package's source, numba's and Python's
versions, the machine) makes the next ``sat compile`` return at once until one of them changes.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from ..game.policies import GeneralRule, LinearThreshold
from ..learners import Learner, LearnerTags
from ..learners.introspect import param_names

#: Rounds of each short run: past every learner's warm-up at d = 2 (compiling does not depend on
#: it, but a path is only loaded when it runs).
HORIZON = 40


@dataclass(frozen=True)
class Part:
    """A unit of ``sat compile``'s work: learners to run (registry or entry-point names) or, with
    none, the game's Python side."""

    name: str
    learners: tuple[str, ...] = ()


def _entry_points() -> dict[str, Any]:
    from ..learners import ENTRY_POINTS

    return {e.name: e for e in metadata.entry_points(group=ENTRY_POINTS)}


def parts() -> list[Part]:
    """The parts of ``sat compile``, derived from the registry and the entry points: the
    compiled learners grouped by state class, the game's Python side, and the plain-Python
    learners of the entry points whose libraries are installed. The heaviest go first, so that
    no worker is left with one at the end: a class whose rule may be non-linear (its loop holds
    agents' search), then the plain-Python learners (their rules' twins hold it too), then by
    the number of learners sharing a class."""
    from ..learners import LEARNERS, learner_class

    by_state: dict[type, list[str]] = {}
    plain: list[str] = []
    names = list(LEARNERS) + [n for n in _entry_points() if n not in LEARNERS]
    for name in names:
        try:
            cls = learner_class(name)
        except ValueError:  # an entry point whose module does not import here
            continue
        if cls.kernels is not None:
            by_state.setdefault(cls.kernels.state, []).append(name)
        elif name not in LEARNERS:
            plain.append(name)

    def nonlinear(group: list[str]) -> bool:
        return any(learner_class(n).tags().nonlinear for n in group)

    ordered = sorted(by_state.items(), key=lambda item: (not nonlinear(item[1]), -len(item[1])))
    out = [Part(f"{state.__name__} ({', '.join(group)})", tuple(group))
           for state, group in ordered if nonlinear(group)]
    if plain:
        out.append(Part(f"plain-Python learners ({', '.join(plain)})", tuple(plain)))
    out += [Part(f"{state.__name__} ({', '.join(group)})", tuple(group))
            for state, group in ordered if not nonlinear(group)]
    out.append(Part("the game's Python side"))
    return out


def _games() -> list[Any]:
    """Game shapes that reach every compiled path a learner has: both feedback modes, outcomes
    delayed (the decision API's path on the reference loop), and agents of whom some are
    truthful (the Stackelberg benchmark's search)."""
    from ..game import Game

    return [Game(dimension=2, feedback="apple"), Game(dimension=2, feedback="bandit"),
            Game(dimension=2, delay=2), Game(dimension=2, truthful=0.5)]


def _data_game() -> Any:
    """The smallest bundled data game (the FICO tables, d = 2), as ``sat run --data`` builds it."""
    from .settings import game_from_settings

    return game_from_settings({"dimension": 2, "data": "fico"})


def estimating(cls: type) -> Learner | None:
    """``cls`` estimating its agents' budget (``delta="estimate"``), if it can: a
    strategy-aware learner with a ``delta``. Its state's
    :class:`~..learners.budget.BudgetBelief` estimates instead of being told δ: the same
    compiled type."""
    if not (cls.tags().strategy_aware and "delta" in param_names(cls)):
        return None
    learner = cls(delta="estimate")
    # Checked as a game binds it (r0 and the feedback filled): the oracle refuses it (it knows
    # δ, and has no estimator).
    known = {k: v for k, v in (("r0", 0.0), ("feedback", "apple")) if k in param_names(cls)}
    try:
        learner.clone(**known).check_params()
    except ValueError:
        return None
    return learner


def _run_learner(name: str) -> None:
    from ..engine.simulate import ENGINES, compiled_path_refusal, simulate
    from ..learners import learner_class

    cls = learner_class(name)
    try:
        learner = cls()
    except ValueError:  # a peer adapter without its library
        return
    _read_out(learner)
    for game in _games():
        for engine in ENGINES[1:]:
            if engine == "compiled" and compiled_path_refusal(game, learner) is not None:
                continue
            simulate(game, [learner], HORIZON, seeds=1, engine=engine)
    _run_adaptive(name, learner)
    # The learner estimating its budget, also in a data game with groups: the
    # estimator on both paths, and the groups counted with its shift as it changes.
    estimator = estimating(cls)
    if estimator is None:
        return
    for game in [*_games(), _data_game()]:
        for engine in ENGINES[1:]:
            if engine == "compiled" and compiled_path_refusal(game, estimator) is not None:
                continue
            try:
                simulate(game, [estimator], HORIZON, seeds=1, engine=engine)
            except ValueError:  # a learner that cannot estimate in this game
                pass


def _run_adaptive(name: str, learner: Learner) -> None:
    """The adaptive adversary's own loop (``claims/adaptive.py``), for the learners its part
    plays: compiled per learner state class, like the engine's."""
    from ..game.game import Game
    from .claims import adaptive

    if name in adaptive.LEARNERS:
        adaptive.play_adaptive(Game(**adaptive.GAME), learner.clone(), 0, HORIZON)


def _read_out(learner: Learner) -> None:
    """A learner's read-outs that call compiled code from Python (its estimate; a logistic
    learner's fitted coefficients), after a few rounds of the per-round API, bound to a game as
    the engine binds it."""
    rng = np.random.default_rng(0)
    learner = learner.bind(_games()[0].instance(0), HORIZON).reset(2, 0)
    for _ in range(HORIZON):
        x = rng.uniform(-1.0, 1.0, 2)
        accepted = learner.act(x)
        learner.update(x, accepted, 0.5 if accepted else None)
    learner.estimate()
    if callable(getattr(learner, "coefficients", None)):
        learner.coefficients()


class _PlainLinear(Learner):
    """A plain-Python learner publishing a linear threshold."""

    name = "sat-compile-linear"
    tags = LearnerTags(strategy_aware=False)

    def __init__(self, r0: float | None = None, feedback: str | None = None) -> None:
        self.r0, self.feedback = r0, feedback

    def _init_state(self, d: int) -> None:
        return None

    def _publish(self) -> LinearThreshold | GeneralRule:
        return LinearThreshold(beta=np.ones(self.dimension), threshold=0.5)

    def _learn(self, rule: Any, x_obs: Any, accepted: bool, reward: float | None) -> bool:
        return False


def _outside_ball(z: np.ndarray) -> float:
    return float(z @ z) - 0.25


class _PlainGeneral(_PlainLinear):
    """A plain-Python learner publishing a rule given as a Python function."""

    name = "sat-compile-general"
    tags = LearnerTags(strategy_aware=False, nonlinear=True)

    def _publish(self) -> LinearThreshold | GeneralRule:
        return GeneralRule.from_function(_outside_ball, np.ones(self.dimension), 0.5)


def _run_game_side() -> None:
    """The game's Python side: the plain-Python learners above on the reference loop, and the
    public functions that call compiled code from Python."""
    from ..engine.kernel import respond_linear
    from ..engine.probe import probe_rule
    from ..engine.simulate import simulate
    from ..game import LazyBestResponse, draw_contexts
    from ..game.best_response import respond_to_rule
    from ..learners import LinUCB
    from ..learners.budget import estimate_budget
    from .settings import game_from_settings

    for game in _games():
        simulate(game, [_PlainLinear(), _PlainGeneral()], HORIZON, seeds=1)
    # A data game: its agents, rows and rewards are the same compiled types as every game's,
    # but its benchmarks replay each seed (:mod:`.hindsight`) instead of the Stackelberg search.
    simulate(_data_game(), [_PlainLinear()], HORIZON, seeds=1)
    # Under a held-out protocol the recorded rules are scored on held-out applicants
    # (:mod:`..engine.holdout`), with the agents' compiled response.
    simulate(game_from_settings({"data": "fico", "protocol": "holdout"}), [_PlainLinear()],
             HORIZON, seeds=1)
    rng = np.random.default_rng(0)
    x = np.array([0.1, 0.2])
    LazyBestResponse().respond_once(np.ones(2), 0.5, x, rng)
    for rule in (LinUCB(r0=0.5, feedback="apple").reset(2).policy(),
                 GeneralRule.from_function(_outside_ball, [1.0, 0.0], 0.5)):
        respond_to_rule(LazyBestResponse(), rule, x, rng)
    draw_contexts(_games()[0].contexts, 2, 3, rng)
    # The agents' budget probed with a fixed rule and estimated.
    estimate_budget(probe_rule(_games()[0], np.ones(2), 0.0, HORIZON))
    _games()[0].instance(0).next_context()
    LinearThreshold(np.ones(2), 0.5).accepts(x)
    # What the engine's loop of a learner from outside the package calls instead of inlining
    # (engine/kernel.py): compiled here, a user's compiled learner compiles only its own loop.
    agents = _games()[0].instance(0).compiled_agents
    respond_linear(agents, rng, np.ones(2), 0.5, x, np.zeros(2))
    for game in _games()[:2]:  # a game instance's per-round read-outs, in both feedback modes
        instance = game.instance(0)
        instance.mean_reward(x), instance.gap(x), instance.next_rewards(x)
    _run_kernel_helpers(x, rng)


def _run_kernel_helpers(x: np.ndarray, rng: np.random.Generator) -> None:
    """The compiled helpers that the package inlines into its loops and that its modules also
    export for calling from Python (the tests check them one by one; a researcher reads a
    learner's ``state`` with them), each compiled alone for the types the package's own arrays
    and states have. The test suite fails naming any helper it compiled that this (or a run)
    did not, so a new one cannot be missed silently."""
    from ..game.agents import BUDGET, AgentsCore, LazyBestResponse, lazy_move
    from ..game.policies import clean_above, norm, score
    from ..learners import Exp3PSAE, Exp3SAE, exp3p_experts, lazy_experts

    beta, out = np.array([1.0, 0.5]), np.zeros(2)
    score(beta, x), norm(beta), clean_above(beta, 0.5, x, 0.0)
    lazy_move(beta, 0.5, 0.1, x, out)
    BUDGET[AgentsCore](LazyBestResponse().compiled(), rng)
    coords = np.zeros(2, dtype=np.int64)
    instance = _games()[0].instance(0)
    experts = Exp3SAE().bind(instance, HORIZON).reset(2).state.experts
    lazy_experts.expert_log_weight(experts, coords)
    lazy_experts.expert_weight(experts, coords)
    lazy_experts.expert_probability(experts, coords, 0.1)
    lazy_experts.scale_weight(experts, coords, 0.5)
    weights = Exp3PSAE().bind(instance, HORIZON).reset(2).state.weights
    exp3p_experts.expert_log_weight(weights, coords)
    exp3p_experts.expert_probability(weights, coords, 0.1)


def run_part(part: Part) -> tuple[str, float, list[str]]:
    """Compile (or load) one part in this process; returns its name, the seconds it took and
    what it compiled (``module.function(types)`` of each entry saved into the cache)."""
    from .. import _jit_cache

    start = time.perf_counter()
    before = len(_jit_cache.SAVED)
    if part.learners:
        for name in part.learners:
            _run_learner(name)
    else:
        _run_game_side()
    return part.name, time.perf_counter() - start, _jit_cache.SAVED[before:]


def stamp_path() -> Path:
    """The file whose presence says that ``sat compile`` finished for this package's source
    at its place on disk, numba, Python and machine (its name is their hash), in the cache's
    directory. The place counts: the cache keeps each checkout's entries apart (by the hash of
    its folders' paths), so a stamp written for the same source elsewhere (another clone, a
    CI runner's warm-up checkout) says nothing of this one's entries."""
    from .._jit_cache import PACKAGE_DIR, cache_root

    digest = hashlib.sha256(str(PACKAGE_DIR).encode())
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    for name in sorted(_entry_points()):
        digest.update(f"{name}={_entry_points()[name].value}".encode())
    digest.update(f"{metadata.version('numba')} {sys.version} {platform.machine()} "
                  f"{platform.processor()}".encode())
    return cache_root() / "numba" / f"compiled-{digest.hexdigest()[:24]}"


def _removed(stamp: Path) -> list[str]:
    """The cache files a finished run listed in its stamp that are gone (every one, for a
    stamp that lists none: it says nothing of what is there)."""
    from .._jit_cache import cache_root

    root = cache_root()
    listed = stamp.read_text().splitlines()[1:]
    if not listed:
        return ["(the stamp lists no files)"]
    return [name for name in listed if not (root / name).is_file()]


def _format_seconds(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 120 else f"{seconds / 60:,.1f} min"


def compile_all(workers: int | None = None, *, force: bool = False, verbose: bool = False,
                say: Callable[[str], None] = print) -> int:
    """Compile every part (:func:`parts`) into the cache with ``workers`` processes (default:
    the CPUs this process may use), saying what finished, when, and the time left once it can
    tell (``verbose``: and each entry compiled). Returns the number of cache entries compiled.
    With the stamp of a finished run present (:func:`stamp_path`) it returns 0 at once, unless
    ``force``."""
    from .._jit_cache import cache_files, cache_root
    from ..engine.simulate import default_threads

    stamp = stamp_path()
    if stamp.exists() and not force:
        gone = _removed(stamp)
        if not gone:
            say(f"sat compile: up to date ({cache_root()})")
            return 0
        say(f"sat compile: {len(gone)} cache file(s) of the last run are gone (the first: "
            f"{gone[0]}): compiling again")
    todo = parts()
    workers = max(1, min(workers or default_threads(), len(todo)))
    say(f"sat compile: {len(todo)} parts on {workers} worker process(es) into {cache_root()}")
    start = time.perf_counter()
    compiled = 0
    done = 0
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_part, part) for part in todo]
        for future in as_completed(futures):
            name, seconds, saved = future.result()
            done += 1
            compiled += len(saved)
            took = time.perf_counter() - start
            left = ""
            if done < len(todo):
                rate = took / done  # parts finish at this pace with the workers busy
                left = f", about {_format_seconds(rate * (len(todo) - done))} left"
            say(f"sat compile: [{done}/{len(todo)}] {name}: {_format_seconds(seconds)}, "
                f"{len(saved)} compiled; {_format_seconds(took)} elapsed{left}")
            for entry in saved if verbose else ():
                say(f"    {entry}")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    root = cache_root()
    stamp.write_text(f"sat compile finished in {time.perf_counter() - start:.1f} s\n"
                     + "".join(f"{path.relative_to(root)}\n" for path in cache_files()))
    for old in stamp.parent.glob("compiled-*"):  # stamps of earlier sources
        if old != stamp:
            old.unlink(missing_ok=True)
    say(f"sat compile: done in {_format_seconds(time.perf_counter() - start)}, "
        f"{compiled} cache entries compiled")
    return compiled


if __name__ == "__main__":  # pragma: no cover - python -m ...precompile
    compile_all(int(os.environ.get("SAT_COMPILE_WORKERS", "0")) or None)
