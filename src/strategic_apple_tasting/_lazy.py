"""Names of a package loaded on first use (PEP 562): the package's own and ``scenarios``'.

A package that imports its modules eagerly makes ``sat --help`` import numba, pyarrow and
pandas; with ``__getattr__, __dir__ = lazy_names(__name__, SOURCES, __all__)`` each public name
is imported from its module the first time it is read, then bound in the package, so later
reads are plain attribute lookups.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def lazy_names(package: str, sources: Mapping[str, str], public: Sequence[str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names (``public``) are
    defined in the modules ``sources`` gives (name → module, relative to ``package``).

    Examples
    --------
    >>> getattr_, dir_ = lazy_names("json", {"loads": ".decoder"}, ["loads"])
    >>> "loads" in dir_()
    True
    """

    def __getattr__(name: str) -> Any:
        try:
            source = sources[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(import_module(source, package), name)
        setattr(sys.modules[package], name, value)  # later uses are plain attribute lookups
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public))

    return __getattr__, __dir__
