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

# The names below are loaded on first use (PEP 562), so that importing the package, and so
# `sat --help`, does not import numba, pyarrow, pandas or matplotlib. Every compiled module
# imports `_jit` (which installs the package-wide compiled-code cache) before it defines a
# compiled function, so loading them late is safe.

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names
from ._version import __version__ as __version__

__all__ = [
    "LEARNERS", "SAOLS", "AcceptAll", "BoundedRatioMixture", "Game", "GameInstance",
    "LazyBestResponse", "Learner", "LinearThreshold", "NaiveGreedyOLS", "Oracle", "RejectAll",
    "ShiftedOLS", "UniformBall", "UniformSphere", "load", "load_learner", "make_learner",
    "recording_grid", "save_learner", "simulate",
]

#: Where each public name is defined (relative to this package).
_SOURCES = {
    **dict.fromkeys(("recording_grid", "simulate"), ".engine"),
    "load": ".experiments.sweep",
    **dict.fromkeys(("BoundedRatioMixture", "Game", "GameInstance", "LazyBestResponse",
                     "LinearThreshold", "UniformBall", "UniformSphere"), ".game"),
    **dict.fromkeys(("LEARNERS", "SAOLS", "AcceptAll", "Learner", "NaiveGreedyOLS", "Oracle",
                     "RejectAll", "ShiftedOLS", "make_learner"), ".learners"),
    **dict.fromkeys(("load_learner", "save_learner"), ".persistence"),
}


if TYPE_CHECKING:  # what type checkers and editors see: the same names, imported eagerly
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
    from .persistence import load_learner, save_learner

__getattr__, __dir__ = lazy_names(__name__, _SOURCES, __all__)
