"""The shape of the house: packages import downward only, modules and functions stay short.

docs/architecture.md draws the layers; this test keeps the code and the drawing
in step. A package may import from its own package and from any lower layer,
never from a higher one or a sibling of the same layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gradlang"

# Lower layers first. Top-level modules (errors, limits, budget, lazy) are the
# shared vocabulary every stage may import.
LAYERS = [
    {"vocabulary"},
    {"syntax", "expr"},
    {"derive"},
    {"explain", "tools"},
    {"core"},
    {"export", "render", "frameworks"},
    {"shell"},
]
LAYER_OF = {package: depth for depth, group in enumerate(LAYERS) for package in group}
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 40


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _package_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "gradlang":
        return "external"
    return parts[1] if parts[1] in LAYER_OF else "vocabulary"


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _dotted(path).split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(path, node)
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _violations(path: Path) -> list[str]:
    home = _package_of(_dotted(path))
    if _dotted(path) in ("gradlang", "gradlang.__main__"):
        return []  # the package's front doors re-export the public API and the command
    bad = []
    for line, target in _imports(path):
        there = _package_of(target)
        if there in ("external", home):
            continue
        if LAYER_OF[there] >= LAYER_OF[home]:
            bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({home}) imports {target} ({there})")
    return bad


def test_packages_import_only_downward():
    bad = [v for path in _modules() for v in _violations(path)]
    assert not bad, "\n".join(bad)


def test_only_syntax_reads_the_lark_tree():
    """Every later stage reads the lowered form (syntax/lowered.py), never the parser's tree."""
    readers = [str(path.relative_to(PACKAGE)) for path in _modules()
               if _package_of(_dotted(path)) != "syntax"
               and any(target.split(".")[0] == "lark" for _, target in _imports(path))]
    assert not readers, readers


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_is_short(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_MODULE_LINES


def test_functions_are_short():
    long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({length} lines)")
    assert not long, "\n".join(long)
