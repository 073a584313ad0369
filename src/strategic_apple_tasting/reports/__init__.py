"""Reports: figures, summaries and the HTML report of results tables."""

from .html import write_report
from .load import load_results
from .plots import plot_regret, regret_curves
from .summary import summary_text

__all__ = ["load_results", "plot_regret", "regret_curves", "summary_text", "write_report"]
