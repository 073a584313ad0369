"""The simulation engine: the compiled round loop, its Python reference, and the seed-batched
driver."""

from .grid import MAX_PER_DECADE, recording_grid
from .reference import play, play_published, run_reference
from .simulate import (
    ENGINES,
    MAX_HORIZON,
    MAX_SEED,
    RESULT_COLUMNS,
    check_horizon,
    memory_needed,
    physical_memory,
    run_one,
    simulate,
)

__all__ = ["ENGINES", "MAX_HORIZON", "MAX_PER_DECADE", "MAX_SEED", "RESULT_COLUMNS",
           "check_horizon", "memory_needed", "physical_memory", "play", "play_published",
           "recording_grid",
           "run_one", "run_reference", "simulate"]
