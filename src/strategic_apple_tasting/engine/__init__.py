"""The simulation engine: the compiled round loop and the seed-batched driver."""

from .grid import recording_grid
from .simulate import RESULT_COLUMNS, run_one, simulate

__all__ = ["RESULT_COLUMNS", "recording_grid", "run_one", "simulate"]
