"""The game: contexts, agents, policies and feedback (DESIGN §2). Imports nothing above it."""

from .agents import (
    AGENTS,
    EllipsoidalCost,
    HeterogeneousBudgets,
    LazyBestResponse,
    SubsetGaming,
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
from .data import DataContexts
from .game import FEEDBACK, Game, GameInstance
from .policies import GeneralRule, LinearThreshold
from .rewards import REWARDS, LinearRewards, RecordedRewards

__all__ = [
    "AGENTS",
    "CONTEXTS",
    "FEEDBACK",
    "REWARDS",
    "BoundedRatioMixture",
    "ContextSequence",
    "DataContexts",
    "EllipsoidalCost",
    "EmpiricalContexts",
    "Game",
    "GameInstance",
    "GeneralRule",
    "GreedyTrap",
    "HeterogeneousBudgets",
    "LazyBestResponse",
    "LinearRewards",
    "LinearThreshold",
    "OrthogonalTraps",
    "RecordedRewards",
    "SubsetGaming",
    "TremblingHand",
    "UniformBall",
    "UniformSphere",
    "draw_contexts",
]
