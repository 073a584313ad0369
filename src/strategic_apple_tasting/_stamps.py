"""Stamps of source: what a compiled function of the package can reach, hashed.

Pure Python (no numba): which files of the package a file imports, and a hash of everything a
compiled function defined there can inline (:func:`source_stamp`), of the source behind a
class a compiled signature names (:func:`class_stamp`), and of a class defined outside the
package (:func:`external_stamp`). :mod:`._jit_cache` keys numba's cache entries on them.
"""

from __future__ import annotations

import ast
import hashlib
import marshal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
#: The modules that make compiled code and key its cache (how it is compiled is part of every
#: stamp).
_JIT_FILES = (PACKAGE_DIR / "_jit.py", PACKAGE_DIR / "_jit_cache.py", PACKAGE_DIR / "_stamps.py")


def _module_file(parts: tuple[str, ...]) -> Path | None:
    """The file of the package's module ``a.b.c`` (a module or a subpackage), if it exists."""
    if not parts or parts[0] != PACKAGE_DIR.name:
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _outside_functions(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``tree`` outside function bodies. A compiled function reads the globals of
    its module, which only imports run outside functions bind: an import inside a function
    (a Python-side helper reaching, say, the registry) reaches no compiled code."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef
                                       | ast.Lambda))


_IMPORTS: dict[Path, frozenset[Path]] = {}


def _imports(path: Path) -> frozenset[Path]:
    """The package's files that ``path`` imports, read from its import statements (parsed once
    a process: every stamp's walk meets the same modules).

    Imports inside functions do not count (:func:`_outside_functions`). A module imported
    from a package counts, not the package's ``__init__`` (importing
    ``learners.base`` runs ``learners/__init__.py``, but the code reached is ``base``'s);
    ``from pkg import name`` counts ``pkg/name.py`` when ``name`` is a module, else ``pkg``.
    """
    if path in _IMPORTS:
        return _IMPORTS[path]
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    package = parts[:-1]  # a module's package; ``pkg/__init__``'s is ``pkg`` too
    found: set[Path] = set()
    for node in _outside_functions(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (file := _module_file(tuple(alias.name.split(".")))) is not None:
                    found.add(file)
        elif isinstance(node, ast.ImportFrom):
            target = (package[:len(package) - node.level + 1] if node.level else ())
            target += tuple(node.module.split(".")) if node.module else ()
            for alias in node.names:
                file = _module_file((*target, alias.name)) or _module_file(target)
                if file is not None:
                    found.add(file)
    found.discard(path)
    _IMPORTS[path] = frozenset(found)
    return _IMPORTS[path]


_CLOSURE_STAMPS: dict[Path, str] = {}


def source_stamp(path: str | Path) -> str:
    """A hash of the source of a file of the package and of every file of the package it
    imports, directly or not: everything a compiled function defined there can inline.

    A compiled function's cache entries are stamped with it, so editing one learner's file
    recompiles what imports that file and nothing else (the engine's loop, which reaches a
    learner only through the class of its state, is keyed on that class:
    :func:`class_stamp`). Computed once a process, from the files as they are then.
    """
    start = Path(path).resolve()
    if start not in _CLOSURE_STAMPS:
        seen: set[Path] = set()
        todo = [start]
        while todo:
            file = todo.pop()
            if file not in seen:
                seen.add(file)
                todo.extend(_imports(file))
        digest = hashlib.sha256()
        for file in sorted(seen | set(_JIT_FILES)):
            digest.update(file.relative_to(PACKAGE_DIR).as_posix().encode())
            digest.update(file.read_bytes())
        _CLOSURE_STAMPS[start] = digest.hexdigest()
    return _CLOSURE_STAMPS[start]


_STAMPS: dict[type, str | None] = {}
_KERNEL_CODE: dict[type, list[Any]] = {}


def note_kernels(cls: type, functions: list[Any]) -> None:
    """Record the compiled functions that serve a state class (the learners' base class does):
    for a class whose module has no file (a notebook, ``python -c``), their code is what
    :func:`external_stamp` hashes."""
    _KERNEL_CODE[cls] = [f for f in functions if f is not None]


def _source_files(module_name: str) -> list[Path]:
    """The files whose code a module outside the package may call: every ``.py`` file of its
    top-level package, or the module's own file when it is not in a package."""
    top = sys.modules.get(module_name.partition(".")[0])
    file = getattr(top, "__file__", None)
    if file is not None and Path(file).name == "__init__.py":
        return sorted(Path(file).parent.rglob("*.py"))
    file = getattr(sys.modules.get(module_name), "__file__", None)
    return [Path(file)] if file else []


def external_stamp(cls: type) -> str | None:
    """A hash of the source that the compiled code of ``cls`` (a learner's state class, an
    agent model...) may reach, if ``cls`` is defined outside this package; None otherwise.
    Defined in a module without a file (a notebook), the code of the compiled functions
    registered for it (:func:`note_kernels`) stands for its source.

    Computed once a process: a process runs the code it imported, so this is the source of
    the code it runs.

    Examples
    --------
    >>> from strategic_apple_tasting.learners.baselines import FixedPolicyState
    >>> external_stamp(FixedPolicyState) is None
    True
    """
    if cls not in _STAMPS:
        file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if file is None:  # a notebook, `python -c`: no file, but the kernels' code
            digest = hashlib.sha256(f"{cls.__module__}.{cls.__qualname__}".encode())
            for function in _KERNEL_CODE.get(cls, []):
                digest.update(marshal.dumps(getattr(function, "py_func", function).__code__))
            _STAMPS[cls] = digest.hexdigest()
        elif Path(file).resolve().is_relative_to(PACKAGE_DIR):
            _STAMPS[cls] = None
        else:
            digest = hashlib.sha256(cls.__module__.encode())
            for path in _source_files(cls.__module__):
                digest.update(str(path).encode())
                digest.update(path.read_bytes())
            _STAMPS[cls] = digest.hexdigest()
    return _STAMPS[cls]


def outside_package(cls: type) -> bool:
    """Whether ``cls`` (a learner's state class...) is defined outside this package: in a
    user's file, a notebook or ``python -c``.

    Examples
    --------
    >>> from strategic_apple_tasting.learners.baselines import FixedPolicyState
    >>> outside_package(FixedPolicyState)
    False
    """
    return external_stamp(cls) is not None


_CLASS_STAMPS: dict[type, str] = {}


def class_stamp(cls: type) -> str:
    """A hash of the source that compiled code specialized for ``cls`` reaches through it: for
    a class of the package (a learner's state, an agent or context model), the
    :func:`source_stamp` of its module and of the modules of the compiled functions registered
    for it (:func:`note_kernels`); for a class outside the package, :func:`external_stamp`.

    The engine's loop is compiled once per learner state class, and reaches the learner's
    code only through dispatch tables keyed by that class: its cache entries are keyed on
    this stamp, so editing one learner's kernels recompiles the loop for that learner only.

    Examples
    --------
    >>> from strategic_apple_tasting.learners.baselines import FixedPolicyState
    >>> len(class_stamp(FixedPolicyState))
    64
    """
    outside = external_stamp(cls)
    if outside is not None:
        return outside
    if cls not in _CLASS_STAMPS:
        files = {sys.modules[cls.__module__].__file__}
        files |= {sys.modules[getattr(f, "py_func", f).__module__].__file__
                  for f in _KERNEL_CODE.get(cls, [])}
        digest = hashlib.sha256()
        for file in sorted(files):
            digest.update(source_stamp(file).encode())
        _CLASS_STAMPS[cls] = digest.hexdigest()
    return _CLASS_STAMPS[cls]
