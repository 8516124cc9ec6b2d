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
        elif _deferred(node):
            found.append((node.lineno, ".".join(a.value for a in node.args)))
    return found


def _deferred(node) -> bool:
    """`deferred("gradlang.x", "name")` or `deferred_module("gradlang.x")` (gradlang/lazy.py): an import done on
    first use is an import all the same, for the layers and the cycles."""
    name = getattr(node.func, "id", getattr(node.func, "attr", None)) if isinstance(node, ast.Call) else None
    return (name in ("deferred", "deferred_module") and bool(node.args)
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
            and node.args[0].value.startswith("gradlang."))


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


def _core_import_graph() -> dict:
    """Each module of core/ and the modules of core/ it imports, at any level (a function's imports too)."""
    core = {_dotted(path): path for path in _modules() if _dotted(path).startswith("gradlang.core.")}
    graph = {}
    for name, path in core.items():
        found = set()
        for _, target in _imports(path):
            module = target if target in core else target.rsplit(".", 1)[0]
            if module in core and module != name:
                found.add(module)
        graph[name] = found
    return graph


def _cycles(graph: dict) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_core_has_no_import_cycle():
    """One engine (docs/architecture.md): core/ is a layered set of modules, not a knot of twins."""
    assert _cycles(_core_import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_a_deferred_import_is_read_as_an_import():
    """expr/engine.py reaches the tensor engine by deferred_module: the layer check sees it."""
    targets = [target for _, target in _imports(PACKAGE / "expr" / "engine.py")]
    assert "gradlang.expr.tensor.nodes" in targets
    targets = [target for _, target in _imports(PACKAGE / "core" / "session.py")]
    assert "gradlang.core.tensor_values.declare_size" in targets


def test_one_engine_keeps_no_twins():
    """A statement is evaluated once: no component twin, no evaluator mode by components."""
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        assert "by_components" not in text and "twins" not in text, path
