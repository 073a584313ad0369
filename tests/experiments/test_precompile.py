"""``sat compile`` compiles everything a run compiles: after it, a representative run of every
registered learner in every game shape, on both of the engine's paths, compiles nothing more.
The parts it compiles are derived from the registry, and one compiled type stands
for every built-in agent model and context model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from strategic_apple_tasting.experiments import precompile
from strategic_apple_tasting.game import Game
from strategic_apple_tasting.game.agents import AGENTS, AgentsCore
from strategic_apple_tasting.game.contexts import MODELS as CONTEXT_MODELS
from strategic_apple_tasting.game.contexts import ContextsCore
from strategic_apple_tasting.learners import LEARNERS
from strategic_apple_tasting.learners.introspect import param_names

#: A run of every registered learner (each configuration its class gives, and estimating its
#: budget if it can) in every game shape the flags give (each agent model, each context model,
#: both feedback modes, delays, truthful agents, a data game with recorded and with linear
#: rewards, whose groups are counted), on both engine paths, and the budget's probe and
#: estimator under each agent model; then the package's entries it saved into the cache.
REPRESENTATIVE = """
import json, sys
from strategic_apple_tasting import _jit_cache
from strategic_apple_tasting.engine.simulate import compiled_path_refusal, simulate
from strategic_apple_tasting.experiments.settings import (FLAG_AGENTS, FLAG_CONTEXTS,
                                                          game_from_settings)
from strategic_apple_tasting.experiments.precompile import estimating
from strategic_apple_tasting.engine.probe import probe_rule
from strategic_apple_tasting.learners import LEARNERS
from strategic_apple_tasting.learners.budget import estimate_budget
from strategic_apple_tasting.learners.introspect import check_configurations

shapes = [{"agents": a, "cost": [1.0, 2.0] if a == "ellipsoid" else None} for a in FLAG_AGENTS]
shapes += [{"contexts": c} for c in FLAG_CONTEXTS]
shapes += [{"feedback": "bandit"}, {"delay": 3, "delay_law": "uniform"}, {"period": 2},
           {"truthful": 0.5}, {"data": "fico"}, {"data": "fico", "rewards": "linear"}]
for name in sys.argv[1:]:
    configurations = check_configurations(LEARNERS[name])
    if estimating(LEARNERS[name]) is not None:  # the budget estimated as it plays
        configurations.append(estimating(LEARNERS[name]))
    for learner in configurations:
        for shape in shapes:
            settings = {"dimension": 2, **{k: v for k, v in shape.items() if v is not None}}
            game = game_from_settings(settings)
            for engine in ("compiled", "reference"):
                try:
                    if engine == "compiled" and compiled_path_refusal(game, learner):
                        continue
                    simulate(game, [learner], 30, seeds=1, engine=engine)
                except ValueError:  # a learner that cannot play this shape (say so and go on)
                    pass
for shape in shapes[:len(FLAG_AGENTS)]:  # the budget probed and estimated
    game = game_from_settings({"dimension": 2, **{k: v for k, v in shape.items()
                                                  if v is not None}})
    try:
        estimate_budget(probe_rule(game, [1.0, 1.0], 0.0, 30))
    except ValueError:  # a rule that no agent of this model can game
        pass
print(json.dumps(_jit_cache.SAVED))
"""


def test_every_built_in_model_is_one_compiled_type():
    """What makes one game shape stand for all: each agent, context and reward model (subset
    gaming, a data set's rows and its recorded outcomes among them) reaches compiled code as the
    same numba type (so ``sat compile`` needs no list of models)."""
    import numba
    import numpy as np

    from strategic_apple_tasting.game import (
        DataContexts,
        EllipsoidalCost,
        LinearRewards,
        SubsetGaming,
    )

    def one_type(models):
        found = {numba.typeof(model.compiled()) for model in models}
        assert len(found) == 1, found
        return found.pop()

    special = {EllipsoidalCost: EllipsoidalCost.from_cost(np.eye(2)),
               SubsetGaming: SubsetGaming(gameable=np.array([False, True]))}
    agents = [special.get(cls) or cls() for cls in AGENTS.values()]
    assert SubsetGaming in AGENTS.values()
    assert one_type(agents).instance_class is AgentsCore
    rows = np.eye(2)
    data = DataContexts(rows=rows, repaid=np.ones(2), if_repaid=np.ones(2),
                        if_defaulted=np.zeros(2))
    weighted = data._replace(weights=np.array([1.0, 3.0]), order=np.array([1, 0]))
    game = Game(dimension=2, contexts=data)
    contexts = [cls(rows) if cls.name in ("empirical", "sequence") else cls()
                for cls in CONTEXT_MODELS]
    contexts += [data.for_instance(game.instance(0)), weighted.for_instance(game.instance(0))]
    assert one_type(contexts).instance_class is ContextsCore
    one_type([LinearRewards(), data.recorded()])


def test_every_learner_that_can_estimate_its_budget_is_compiled_estimating_it():
    """sat compile (and the test below) run each strategy-aware learner with a ``delta`` as
    ``delta="estimate"`` too: only the oracle, which knows δ, refuses it. (After the learner
    protocol's stricter parameter check, every one was silently skipped: r0 was None.)"""
    can = {name for name, cls in LEARNERS.items()
           if cls.tags().strategy_aware and "delta" in param_names(cls)}
    assert {"sa-ols", "sa-logistic", "exp3-sae"} <= can
    assert {n for n in can if precompile.estimating(LEARNERS[n]) is None} == {"oracle"}


def test_the_parts_are_the_registry_s_state_classes():
    """One part per state class of the registered learners (each class's learners named), the
    game's Python side, and the entry points' plain-Python learners: nothing hand-listed."""
    found = precompile.parts()
    states = {cls.kernels.state for cls in LEARNERS.values() if cls.kernels is not None}
    learner_parts = [p for p in found if p.learners and all(n in LEARNERS for n in p.learners)]
    assert len(learner_parts) == len(states)
    assert sorted(n for p in learner_parts for n in p.learners) == sorted(
        n for n, cls in LEARNERS.items() if cls.kernels is not None)
    assert any(not p.learners for p in found)


def test_a_run_after_sat_compile_compiles_nothing(tmp_path):
    """After ``sat compile``, a representative run of every registered learner in every game
    shape, on both paths, saves no entry into the cache: nothing is compiled twice, by two test
    workers or by a user's first run. The cache is the one the test session's ``sat compile``
    left (a copy, taken before any test ran); run alone, the test compiles one itself."""
    cache = tmp_path / "cache"
    snapshot = os.environ.get("SAT_COMPILED_SNAPSHOT")
    env = {**os.environ, "SAT_CACHE_DIR": str(cache)}
    if snapshot and os.path.isdir(os.path.join(snapshot, "numba")):
        shutil.copytree(os.path.join(snapshot, "numba"), cache / "numba")
    else:
        subprocess.run([sys.executable, "-m", "strategic_apple_tasting", "compile"], env=env,
                       check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", REPRESENTATIVE, *LEARNERS], env=env,
                          capture_output=True, text=True, check=True)
    saved = json.loads(done.stdout.strip().splitlines()[-1])
    assert saved == [], f"compiled after sat compile: {saved}"


def test_the_finished_stamp_is_the_checkouts_own(tmp_path, monkeypatch):
    """The same source at another place on disk (another clone; a CI runner that compiled a
    warm-up checkout) has another stamp: the cache keeps each checkout's entries apart, so a
    stamp shared between them made ``sat compile`` say "up to date" and compile nothing for
    the second one, whose first runs then compiled everything."""
    from strategic_apple_tasting import _jit_cache

    here = precompile.stamp_path()
    assert precompile.stamp_path() == here  # the control: the same checkout, the same stamp
    copy = tmp_path / "elsewhere" / "strategic_apple_tasting"
    shutil.copytree(_jit_cache.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_jit_cache, "PACKAGE_DIR", copy)
    assert precompile.stamp_path() != here


def test_a_cache_file_removed_since_the_last_run_is_compiled_again(tmp_path, monkeypatch):
    """The stamp lists the cache files the finished run left; with one of them gone (a cache
    cleaned by hand, a disk tidier) ``sat compile`` said "up to date" and the next runs
    compiled in every worker. The control: with nothing removed it is up to date."""
    from strategic_apple_tasting import _jit_cache

    monkeypatch.setenv("SAT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(precompile, "parts", list)  # nothing to compile: the listing alone
    folder = (tmp_path / "numba" / "by-module"
              / _jit_cache.module_cache_name(_jit_cache.PACKAGE_DIR / "engine" / "kernel.py"))
    folder.mkdir(parents=True)
    for name in ("kernel.f-12.py311.nbi", "kernel.f-12.py311.1.nbc"):
        (folder / name).write_bytes(b"entry")
    said: list[str] = []
    precompile.compile_all(1, say=said.append)
    precompile.compile_all(1, say=said.append)
    assert said[-1].startswith("sat compile: up to date")
    (folder / "kernel.f-12.py311.1.nbc").unlink()
    said.clear()
    precompile.compile_all(1, say=said.append)
    gone = (folder / "kernel.f-12.py311.1.nbc").relative_to(tmp_path)
    assert said[0] == (f"sat compile: 1 cache file(s) of the last run are gone (the first: "
                       f"{gone}): compiling again"), said
