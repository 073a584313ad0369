"""The game: contexts, agents, policies and feedback (DESIGN §2). Imports nothing above it."""

from .agents import (
    AGENTS,
    EllipsoidalCost,
    HeterogeneousBudgets,
    LazyBestResponse,
    TremblingHand,
)
from .contexts import (
    CONTEXTS,
    BoundedRatioMixture,
    ContextSequence,
    EmpiricalContexts,
    GreedyTrap,
    OrthogonalTraps,
    UniformBall,
    UniformSphere,
    draw_contexts,
)
from .game import FEEDBACK, Game, GameInstance
from .policies import GeneralRule, LinearThreshold

__all__ = [
    "AGENTS",
    "CONTEXTS",
    "FEEDBACK",
    "BoundedRatioMixture",
    "ContextSequence",
    "EllipsoidalCost",
    "EmpiricalContexts",
    "Game",
    "GameInstance",
    "GeneralRule",
    "GreedyTrap",
    "HeterogeneousBudgets",
    "LazyBestResponse",
    "LinearThreshold",
    "OrthogonalTraps",
    "TremblingHand",
    "UniformBall",
    "UniformSphere",
    "draw_contexts",
]
