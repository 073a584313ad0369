"""Strategic Apple Tasting: online learning against strategic agents with one-sided feedback.

An implementation of Harris, Podimata and Wu, *Strategic Apple Tasting* (NeurIPS 2023).

Examples
--------
>>> import strategic_apple_tasting as sat
>>> game = sat.Game(dimension=3, delta=0.1)
>>> table = sat.simulate(game, ["sa-ols", "oracle"], horizon=1000, seeds=2)
>>> sorted(set(table.column("learner").to_pylist()))
['oracle', 'sa-ols']
"""

from . import _jit  # noqa: F401  (installs the package-wide compiled-code cache first)
from .engine import recording_grid, simulate
from .experiments.sweep import load
from .game import (
    BoundedRatioMixture,
    Game,
    GameInstance,
    LazyBestResponse,
    LinearThreshold,
    UniformBall,
    UniformSphere,
)
from .learners import (
    LEARNERS,
    SAOLS,
    AcceptAll,
    Learner,
    NaiveGreedyOLS,
    Oracle,
    RejectAll,
    ShiftedOLS,
    make_learner,
)

__version__ = "0.1.0"

__all__ = [
    "LEARNERS", "SAOLS", "AcceptAll", "BoundedRatioMixture", "Game", "GameInstance",
    "LazyBestResponse", "Learner", "LinearThreshold", "NaiveGreedyOLS", "Oracle", "RejectAll",
    "ShiftedOLS", "UniformBall", "UniformSphere", "load", "make_learner", "recording_grid",
    "simulate",
]
