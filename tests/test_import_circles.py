"""No two modules of the package import each other, directly or round a circle.

The graph's arrows are the package's own imports, at module level or inside functions (a lazy
import still ties the two modules together), resolved to the module they name. An import of a
package whose ``__init__`` only gathers its parts (imports, ``__all__``) is not an arrow: that
front door holds nothing of its own. A package whose ``__init__`` defines names (a registry, a
function) is a module like any other: an import of it is an arrow to it, and its own imports are
its arrows. Imports under ``if TYPE_CHECKING:`` never run and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import strategic_apple_tasting

PACKAGE = Path(strategic_apple_tasting.__file__).parent
NAME = "strategic_apple_tasting"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join([NAME, *parts])


def _defines_names(tree: ast.Module) -> bool:
    """Whether a module does more than gather names: anything at its top level but imports, its
    docstring, ``__all__`` and ``if TYPE_CHECKING:`` blocks."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom) or _type_checking(stmt):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == [
                "__all__"]:
            continue
        return True
    return False


def _type_checking(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and getattr(stmt.test, "id", None) == "TYPE_CHECKING"


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import in ``tree`` that can run (those under ``if TYPE_CHECKING:`` cannot)."""
    skipped = {id(n) for stmt in tree.body if _type_checking(stmt) for n in ast.walk(stmt)}
    return [n for n in ast.walk(tree)
            if isinstance(n, ast.Import | ast.ImportFrom) and id(n) not in skipped]


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the package's modules it imports. A package whose ``__init__`` defines names is
    a module (named as the package); one whose ``__init__`` only gathers its parts is left
    out."""
    files = {_module_name(p, root): p for p in root.rglob("*.py")}
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in files.items()}
    modules = {m for m in files if not m.endswith(".__init__")}
    packages = {m.removesuffix(".__init__") for m in files if m.endswith(".__init__")}
    doors = {p for p in packages if _defines_names(trees[f"{p}.__init__"])}
    modules |= doors
    packages -= doors
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module in modules:
        tree = trees[module] if module in files else trees[f"{module}.__init__"]
        here = module if module in doors else module.rsplit(".", 1)[0]
        for node in _imports(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [f"{target}.{a.name}" for a in node.names] + [target]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name in modules and name != module:
                    graph[module].add(name)
                    break
                if name in packages:
                    continue
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_round_a_circle():
    assert circles(import_graph()) == []


def test_the_scan_sees_a_circle(tmp_path):
    # The control: two modules importing each other (one lazily) are a circle.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("from .b import g\n\ndef f():\n    return g()\n")
    (pkg / "b.py").write_text("def g():\n    from . import a\n    return a\n")
    (pkg / "c.py").write_text("from . import f\n")  # the package's front door: no arrow
    assert circles(import_graph(pkg)) == [[f"{NAME}.a", f"{NAME}.b"]]


def test_a_front_door_that_defines_names_is_in_the_graph(tmp_path):
    # The control of the loop a registry in a package's __init__ made: the door defines the
    # registry and imports the base, the base lazily imports the saving module, which imports
    # the registry from the door. Counted, it is a circle; a door that only gathers its parts
    # (the registry in a module of its own) is not.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Doc."""\nfrom .base import Base\n\n'
                                     'REGISTRY = {"base": Base}\n')
    (pkg / "base.py").write_text("class Base:\n    def save(self):\n"
                                 "        from .saving import save\n        return save(self)\n")
    (pkg / "saving.py").write_text("def save(x):\n    from . import REGISTRY\n"
                                   "    return REGISTRY\n")
    assert circles(import_graph(pkg)) == [[NAME, f"{NAME}.base", f"{NAME}.saving"]]
    (pkg / "registry.py").write_text("from .base import Base\n\nREGISTRY = {'base': Base}\n")
    (pkg / "__init__.py").write_text('"""Doc."""\nfrom .base import Base\n'
                                     "from .registry import REGISTRY\n\n"
                                     '__all__ = ["REGISTRY", "Base"]\n')
    (pkg / "saving.py").write_text("def save(x):\n    from .registry import REGISTRY\n"
                                   "    return REGISTRY\n")
    assert circles(import_graph(pkg)) == [[f"{NAME}.base", f"{NAME}.registry", f"{NAME}.saving"]]
    # ...which the layers break: saving is moved above the base and imports nothing of it.
    (pkg / "base.py").write_text("class Base:\n    pass\n")
    assert circles(import_graph(pkg)) == []


#: The package's layers, lowest first (docs/design.md, "Shape of the code"): a module imports
#: only from its own layer or those below it, through a package's front door or not.
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer.split()) for layer in (
    "_version _lazy _stamps _jit_cache _memo theory metrics",
    "_jit",
    "game",
    "learners",
    "persistence",
    "peers engine envs",
    "checks scenarios",
    "experiments",
    "reports",
    "__init__",  # the package's front door (it loads every public name, lazily)
    "service cli __main__",
))


def _area(module: str) -> str:
    """The part of the package a module belongs to: its subpackage, or its own name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(root: Path = PACKAGE) -> list[str]:
    """Every import of a higher layer than the importing module's, as ``module -> target``."""
    rank = {area: i for i, layer in enumerate(LAYERS) for area in layer}
    found = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root).removesuffix(".__init__")
        here = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = here.split(".")
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            names = [f"{target}.{a.name}" for a in node.names] if target == NAME else [target]
            for name in names:
                # A name the front door defines (not a module or subpackage) is the door's.
                if rank.get(_area(name), rank["__init__"]) > rank[_area(module)]:
                    found.append(f"{module} -> {name}")
    return found


def test_imports_flow_down_the_layers():
    assert upward_imports() == []


def test_the_layer_scan_sees_an_import_running_up(tmp_path):
    # The control: the engine importing the experiments' settings, and a learner the package's
    # front door, both run up.
    pkg = tmp_path / "pkg"
    for sub in ("engine", "experiments", "learners"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "loop.py").write_text("def f():\n    from ..experiments import settings\n")
    (pkg / "learners" / "base.py").write_text("from .. import __version__\n")
    (pkg / "experiments" / "settings.py").write_text("from ..engine import loop\n")
    assert upward_imports(pkg) == [f"{NAME}.engine.loop -> {NAME}.experiments",
                                   f"{NAME}.learners.base -> {NAME}.__version__"]
