"""No function of the package is longer than 80 lines of code without saying why.

The count is the function's lines without its docstring (a numpydoc docstring, with its
parameters and an example, is documentation, not length). A longer function says why in its
docstring, in a paragraph that starts "Why it is long:".
"""

from __future__ import annotations

import ast
from pathlib import Path

import strategic_apple_tasting

PACKAGE = Path(strategic_apple_tasting.__file__).parent
LIMIT = 80
REASON = "Why it is long:"


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines of code) of each function in ``source`` over :data:`LIMIT` lines whose
    docstring gives no reason."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        doc = ast.get_docstring(node) or ""
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        if not body:
            continue
        code = node.end_lineno - body[0].lineno + 1
        if code > LIMIT and REASON not in doc:
            found.append((node.name, code))
    return found


def test_no_function_is_long_without_a_reason():
    found = [f"{path.relative_to(PACKAGE)}: {name} ({code} lines)"
             for path in sorted(PACKAGE.rglob("*.py"))
             for name, code in long_functions(path.read_text())]
    assert found == [], "over 80 lines of code without a reason: " + "; ".join(found)


def test_the_scan_finds_a_long_function_and_accepts_a_reason():
    """The control: the scan flags an 81-line body and lets the same body with a reason pass;
    a long docstring alone does not count."""
    body = "\n".join(f"    x{k} = {k}" for k in range(81))
    assert long_functions(f"def f():\n{body}\n") == [("f", 81)]
    assert long_functions(f'def f():\n    """Why it is long: a table."""\n{body}\n') == []
    doc = "\n".join("    line" for _ in range(100))
    assert long_functions(f'def f():\n    """Doc.\n{doc}\n    """\n    return 1\n') == []
