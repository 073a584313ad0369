"""The package's compiled-code cache: numba's on-disk cache, keyed on what a function can reach.

* **Caching keyed on what a function can reach, and no more.** The simulation kernel inlines
  the learner, context and agent code of other modules. Numba stamps a cache entry with the
  source of the *one* file that defines the function, so editing a learner would leave a stale
  kernel in the cache and silently run old code. We register a cache locator that stamps each
  function of this package with the source of its file and of every file of the package that
  file imports (:func:`source_stamp`), and key each entry also on the source behind each class
  its signature names (:func:`class_stamp`: a learner's state class leads to that learner's
  kernels). Editing one learner recompiles that learner's kernels and the engine's loop for
  that learner; the other learners' entries stay valid.
* **No stale kernel for code outside the package.** A learner defined in a user's own file
  reaches the package's compiled functions (the engine's loop inlines its kernels), whose cache
  entries are stamped with the package's source only: edited, that learner would still run its
  old code from the cache. Every compiled function of the package therefore keys its cache
  entries also on a hash of the source of each class defined outside the package that its
  signature names (:func:`external_stamp`): an edit there compiles anew, and the package's
  own entries keep their keys.

The stamps themselves are pure Python, in :mod:`._stamps` (tested without numba). How
functions are compiled and dispatched is :mod:`._jit`'s job; this module and that one are
the only two that use numba's internals.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
from numba.core import caching, types

from ._stamps import (
    PACKAGE_DIR,
    class_stamp,
    external_stamp,
    source_stamp,
)


def cache_root() -> Path:
    """Directory holding the package's compiled-code cache.

    ``SAT_CACHE_DIR`` overrides it; otherwise ``NUMBA_CACHE_DIR`` if set, else
    ``$XDG_CACHE_HOME/strategic-apple-tasting`` (``~/.cache/...``).
    """
    explicit = os.environ.get("SAT_CACHE_DIR") or numba.config.CACHE_DIR
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "strategic-apple-tasting"


_PRUNED = False


#: The directory (under ``cache_root()/numba``) of this layout of the cache; the others are
#: earlier layouts, deleted once a process.
_LAYOUT = "by-module"


def _stamped_root() -> Path:
    """The directory holding the package's cache entries (each stamped by its own sources)."""
    global _PRUNED
    base = cache_root() / "numba"
    here = base / _LAYOUT
    if not _PRUNED:
        _PRUNED = True
        try:
            others = [p for p in base.iterdir() if p.is_dir() and p != here]
        except OSError:
            others = []
        for old in others:  # a whole-package stamp per directory, before this layout
            shutil.rmtree(old, ignore_errors=True)
    return here


class _PackageCacheLocator(caching._CacheLocator):
    """Locate cache files for this package's functions, stamped with :func:`source_stamp`."""

    def __init__(self, py_func: Callable, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(_stamped_root() / module_cache_name(py_file))

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        return source_stamp(self._py_file)

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: Callable, py_file: str):
        try:
            inside = Path(py_file).resolve().is_relative_to(PACKAGE_DIR)
        except OSError:
            return None
        if not inside:
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None  # numba falls back to its own locators
        return self


def module_cache_name(py_file: str | Path) -> str:
    """The name of the directory (under the cache's ``numba/by-module``) that holds the compiled
    entries of the functions of the package's file ``py_file``: numba's, its folder's name and a
    hash of the folder's path (so two checkouts of the package keep apart)."""
    return _PackageCacheLocator.get_suitable_cache_subpath(str(py_file))


def cache_files() -> list[Path]:
    """This checkout's cache files (every entry's index and data), sorted."""
    root = _stamped_root()
    folders = {module_cache_name(path) for path in PACKAGE_DIR.rglob("*.py")}
    return sorted(path for name in folders if (root / name).is_dir()
                  for path in (root / name).iterdir() if path.is_file())


def _install_locator() -> None:
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if impl is None:  # a numba without this hook: its per-file caching still works
        return
    if _PackageCacheLocator not in impl._locator_classes:
        impl._locator_classes = [_PackageCacheLocator, *impl._locator_classes]


_install_locator()

def _classes(typ: Any) -> Iterator[type]:
    """The Python classes behind the namedtuple types within a numba type (tuples nest)."""
    if isinstance(typ, types.BaseNamedTuple):
        yield typ.instance_class
    if isinstance(typ, types.BaseTuple):
        for inner in typ.types:
            yield from _classes(inner)


class StampedCache(caching.FunctionCache):
    """numba's function cache, with the entries of a signature that names classes outside the
    package (:func:`external_stamp`) kept apart: in an index file of their own, named by the
    hash of those classes' source, and keyed by it too.

    numba keys an entry on the signature, the machine and the function's own bytecode, so the
    code a state class leads to (through :mod:`._jit`'s dispatch tables) is not part of it: an
    edited learner outside the package would run its old kernel. And an index pickles the
    classes its keys name: one shared with a project whose module is not importable here could
    not even be read. Apart, neither can happen: a changed source is another file, and a file is
    read only by a process that compiles for those very classes. An index that cannot be read
    anyway is a cache miss (and is rewritten), never an error.

    numba's ``Cache._index_key`` and ``_cache_file`` are the hooks (the one use of
    ``numba.core.caching`` internals); ``tests/engine/test_cache.py`` checks that they hold.
    """

    def _stamps(self, sig: Any) -> tuple[str, ...]:
        args = sig.args if hasattr(sig, "args") else sig
        return tuple(sorted({stamp for typ in args for cls in _classes(typ)
                             if (stamp := external_stamp(cls)) is not None}))

    def _index_key(self, sig: Any, codegen: Any) -> tuple:
        key = super()._index_key(sig, codegen)
        args = sig.args if hasattr(sig, "args") else sig
        stamps = tuple(sorted({class_stamp(cls) for typ in args for cls in _classes(typ)}))
        return (*key, stamps) if stamps else key

    @contextlib.contextmanager
    def _file_for(self, sig: Any) -> Iterator[None]:
        """Point ``_cache_file`` at the index of ``sig``'s outside classes, if it names any
        (numba holds its compiler lock around loads and saves: no other thread sees it)."""
        stamps = self._stamps(sig)
        if not stamps:
            yield
            return
        own = self._cache_file
        tag = hashlib.sha256("".join(stamps).encode()).hexdigest()[:16]
        self._cache_file = caching.IndexDataCacheFile(
            cache_path=self._cache_path, filename_base=f"{self._impl.filename_base}-x{tag}",
            source_stamp=self._impl.locator.get_source_stamp())
        try:
            yield
        finally:
            self._cache_file = own

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        with self._file_for(sig), _locked(self._cache_path):
            try:
                return super().load_overload(sig, target_context)
            except Exception:  # an unreadable index (a class gone...): compile instead
                return None

    def save_overload(self, sig: Any, data: Any) -> None:
        with self._file_for(sig), _locked(self._cache_path):
            try:
                super().save_overload(sig, data)
            except Exception:  # the index could not be read: start it afresh
                with contextlib.suppress(Exception):
                    self._cache_file.flush()
                    super().save_overload(sig, data)
        SAVED.append(describe(self._py_func, sig))


def describe(py_func: Callable, sig: Any) -> str:
    """``module.function(argument types)``, a NamedTuple argument named by its class."""
    args = sig.args if hasattr(sig, "args") else sig
    names = ", ".join(typ.instance_class.__name__ if isinstance(typ, types.BaseNamedTuple)
                      else str(typ) for typ in args)
    return f"{py_func.__module__}.{py_func.__qualname__}({names})"


#: What this process compiled and saved into the cache: "module.function(argument types)" per
#: entry (``sat compile`` reports it; a test asserts that a run after ``sat compile`` adds none).
SAVED: list[str] = []


@contextlib.contextmanager
def _locked(directory: str) -> Iterator[None]:
    """Hold an exclusive lock on a cache directory (``flock`` on its ``.lock``) while an index
    is read or written. numba names a new entry's data file after the entries its index already
    holds: two processes saving into one index at once (``sat compile``'s workers, the test
    suite's) would take the same name, and one would load the other's machine code."""
    try:
        fd = os.open(os.path.join(directory, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a cache we cannot lock (read-only): numba's own behaviour
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
