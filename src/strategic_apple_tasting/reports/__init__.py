"""Reports: figures and summaries of results tables."""

from .plots import plot_regret, regret_curves
from .summary import summary_text

__all__ = ["plot_regret", "regret_curves", "summary_text"]
