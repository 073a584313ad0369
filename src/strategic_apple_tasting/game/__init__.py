"""The game: contexts, agents, policies and feedback (DESIGN §2). Imports nothing above it."""

from .agents import AGENTS, LazyBestResponse
from .contexts import CONTEXTS, BoundedRatioMixture, UniformBall, UniformSphere, draw_contexts
from .game import FEEDBACK, Game, GameInstance
from .policies import LinearThreshold

__all__ = [
    "AGENTS", "CONTEXTS", "FEEDBACK", "BoundedRatioMixture", "Game", "GameInstance",
    "LazyBestResponse", "LinearThreshold", "UniformBall", "UniformSphere", "draw_contexts",
]
