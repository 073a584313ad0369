"""The simulation engine: the compiled round loop and the seed-batched driver."""

from .grid import MAX_PER_DECADE, recording_grid
from .simulate import (
    MAX_HORIZON,
    MAX_SEED,
    RESULT_COLUMNS,
    check_horizon,
    memory_needed,
    physical_memory,
    run_one,
    simulate,
)

__all__ = ["MAX_HORIZON", "MAX_PER_DECADE", "MAX_SEED", "RESULT_COLUMNS", "check_horizon",
           "memory_needed", "physical_memory", "recording_grid", "run_one", "simulate"]
