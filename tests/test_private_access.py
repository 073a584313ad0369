"""No module reads another's private attributes.

An attribute whose name starts with one underscore belongs to the module that defines it (assigns
it on an object, or defines it in a class body). Any other module that reads it through an
object other than ``self``, ``cls`` or ``super()`` is reaching into another's bookkeeping: this
scan of the package's source finds every such read. NamedTuple's own API (``_replace``,
``_asdict``, ``_fields``, ...) is public despite its underscore. The few justified uses of other
libraries' internals are listed in ``ALLOWED``, the one place they are kept, each with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import strategic_apple_tasting

PACKAGE = Path(strategic_apple_tasting.__file__).parent

#: NamedTuple's public API, documented with its leading underscore.
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})

#: (module, attribute) → why another's private attribute may be read there. Only other
#: libraries' internals, each in the one module that wraps them.
ALLOWED: dict[tuple[str, str], str] = {
    # numba's cache machinery (docs/design.md: every use of numba's internals is in _jit.py and
    # _jit_cache.py, each guarded by a test that fails on an upgrade: tests/test_jit.py and
    # tests/engine/test_cache.py).
    ("_jit_cache.py", "_CacheLocator"): "numba: the cache locator class we subclass",
    ("_jit_cache.py", "_locator_classes"): "numba: where our cache locator is registered",
    ("_jit.py", "_cache"): "numba: a dispatcher's cache, set to the package's stamped cache",
    ("_jit.py", "_getframe"): "CPython: the caller's module, to name a compiled function",
    # The peer adapters read the parameters their libraries' policies predict with (the
    # compiled twins, docs/design.md), which those libraries keep only in private fields.
    ("peers/mabwiser.py", "_imp"): "MABWiser: the policy's implementation holds the ridges",
    ("peers/mabwiser.py", "_set_arms_as_trained"): "MABWiser: what partial_fit runs after "
                                                   "its validation",
    ("peers/river.py", "_bayes_lin_regs"): "river: the per-arm Bayesian regressions",
    ("peers/river.py", "_rng"): "river: the policy's own generator, seeded from ours",
    ("peers/river.py", "_counts"): "river: the arms' pull counts",
    ("peers/river.py", "_idx"): "river: a regression's feature index",
    ("peers/river.py", "_ensure_m"): "river: builds a regression's mean before it is read",
    ("peers/river.py", "_m_arr"): "river: a regression's posterior mean",
    ("peers/river.py", "_ss_inv_arr"): "river: a regression's posterior covariance",
    ("_jit_cache.py", "_CacheImpl"): "numba: the cache implementation's class (renamed "
                                       "CacheImpl in later numba: both names are tried)",
    # The standard library's documented functions whose names start with an underscore.
    ("experiments/sweep.py", "_exit"): "os._exit: a worker dies with its sweep",
    ("experiments/sweep.py", "_processes"): "concurrent.futures: a pool's worker processes, "
                                            "terminated when a sweep is interrupted",
}


def _owned(tree: ast.Module) -> set[str]:
    """The private names a module defines: assigned on an object, or defined in a class."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
    return {n for n in names if n.startswith("_")}


def _method_receivers(tree: ast.Module) -> dict[int, str]:
    """For each node inside a method (a function defined in a class body), the name of that
    method's first argument (``self``, ``cls``): reads through it are the object's own."""
    receiver: dict[int, str] = {}

    def visit(node: ast.AST, current: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            name = current
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                args = child.args.posonlyargs + child.args.args
                if isinstance(node, ast.ClassDef) and args:
                    name = args[0].arg
            elif isinstance(child, ast.ClassDef):
                name = None
            if name is not None:
                receiver[id(child)] = name
            visit(child, name)

    visit(tree, None)
    return receiver


def _own_object(node: ast.AST, value: ast.AST, receivers: dict[int, str]) -> bool:
    """Whether ``value``, read from at ``node``, is the method's own object (or super())."""
    if isinstance(value, ast.Name) and receivers.get(id(node)) == value.id:
        return True
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id == "super")


def _reads(tree: ast.Module):
    """Every attribute read in ``tree``, as (node, the object read from, the name): ``a.b``,
    and ``getattr(a, "b", ...)`` / ``hasattr(a, "b")`` with the name written out (a read the
    attribute syntax does not show)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            yield node, node.value, node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            yield node, node.args[0], node.args[1].value


def foreign_reads(package: Path = PACKAGE) -> list[str]:
    """Every read of another module's private attribute in ``package``, as ``file:line: code``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owned = _owned(tree)
        receivers = _method_receivers(tree)
        for node, value, attr in _reads(tree):
            if not attr.startswith("_") or attr.startswith("__") or attr in NAMEDTUPLE_API:
                continue
            if _own_object(node, value, receivers) or attr in owned or (module, attr) in ALLOWED:
                continue
            found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_reads_another_modules_private_attributes():
    assert foreign_reads() == []


def test_the_scan_sees_a_foreign_read(tmp_path):
    # The control: a module reading what another module keeps is found, and its own are not.
    (tmp_path / "owner.py").write_text("class A:\n    def __init__(self):\n"
                                       "        self._kept = 1\n")
    (tmp_path / "reader.py").write_text("def peek(a, self):\n"
                                        "    return a._kept, a._replace(), self._kept\n"
                                        "def hide(a):\n"
                                        "    return getattr(a, '_kept', None), "
                                        "hasattr(a, '_kept')\n"
                                        "class B:\n    def m(self):\n"
                                        "        return self._kept, getattr(self, '_kept')\n")
    assert foreign_reads(tmp_path) == [
        "reader.py:2: a._kept", "reader.py:2: self._kept",
        "reader.py:4: getattr(a, '_kept', None)", "reader.py:4: hasattr(a, '_kept')"]


def test_every_allowed_use_is_still_there():
    # A stale entry would let a later read through unseen: each must still be needed.
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        stores = (n.attr for n in ast.walk(tree)  # _jit.py sets a dispatcher's _cache
                  if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store))
        for attr in (*(attr for _, _, attr in _reads(tree)), *stores):
            if (module, attr) in ALLOWED:
                used.add((module, attr))
    assert set(ALLOWED) - used == set()
