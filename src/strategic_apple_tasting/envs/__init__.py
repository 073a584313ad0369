"""The game as a Gymnasium environment (the optional ``gym`` extra).

The principal is the environment's agent: each step it publishes a linear rule (the action),
the round's strategic agent answers it, and it observes what the paper's principal observes.
Importing this package registers the environment with Gymnasium, so that

>>> import gymnasium
>>> env = gymnasium.make("strategic_apple_tasting.envs:StrategicAppleTasting-v0",
...                      dimension=2, delta=0.1, horizon=10)
>>> obs, info = env.reset(seed=0)
>>> sorted(obs)
['accepted', 'features', 'outcome', 'outcome_observed']
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Gymnasium environment needs gymnasium: "
                      "pip install 'strategic-apple-tasting[gym]'") from err

from .apple_tasting import StrategicAppleTastingEnv, rule_to_action

__all__ = ["ENV_ID", "StrategicAppleTastingEnv", "rule_to_action"]

#: The environment's Gymnasium id (``gymnasium.make`` it after importing this package, or as
#: ``"strategic_apple_tasting.envs:StrategicAppleTasting-v0"`` without importing it first).
ENV_ID = "StrategicAppleTasting-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=f"{__name__}.apple_tasting:StrategicAppleTastingEnv")
