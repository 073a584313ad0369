"""Reports: figures, summaries and the HTML report of results tables.

The names below load on first use (PEP 562): ``sat run`` prints a summary without importing
matplotlib, which the HTML report and the plots need.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["load_results", "plot_regret", "regret_curves", "summary_text", "write_report"]

_SOURCES = {"write_report": ".html", "load_results": ".load", "plot_regret": ".plots",
            "regret_curves": ".plots", "summary_text": ".summary"}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_SOURCES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
