"""The record renderers' registry: every record has one renderer per format, called with the calling printer,
and the render modules import one another without a cycle (the printers import no renderer)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradlang.core.session import Session
from gradlang.render import records, to_json, to_latex, to_plain, to_rich

RENDER = Path(__file__).resolve().parents[2] / "gradlang" / "render"
PRINTERS = ("plain", "latex", "pretty", "json")


def _render_imports(path: Path) -> set[str]:
    """The render modules a module imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "gradlang.render":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradlang.render."):
            found.add(node.module.split(".")[2])
    return found & {p.stem for p in RENDER.glob("*.py")}


def _graph() -> dict[str, set[str]]:
    return {p.stem: _render_imports(p) for p in RENDER.glob("*.py") if p.stem != "__init__"}


@pytest.mark.parametrize("record", sorted(records.HOMES))
@pytest.mark.parametrize("fmt", records.FORMATS)
def test_every_record_has_a_renderer_in_every_format(record, fmt):
    assert callable(records.renderer(record, fmt))


def test_the_printers_import_no_renderer():
    renderers = {module.split(".")[-1] for homes in records.HOMES.values() for module in homes}
    graph = _graph()
    for printer in PRINTERS:
        assert not graph[printer] & renderers, f"{printer}.py imports {graph[printer] & renderers}"


def test_the_render_modules_form_no_cycle():
    graph, done, path = _graph(), set(), []

    def visit(module):
        assert module not in path, " → ".join(path[path.index(module):] + [module])
        if module in done:
            return
        path.append(module)
        for target in sorted(graph.get(module, ())):
            visit(target)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_unknown_records_and_formats_are_refused():
    with pytest.raises(ValueError):
        records.renders("Explanation", "html")
    with pytest.raises(ValueError):
        records.renders("NoSuchRecord", "plain")


@pytest.mark.parametrize("print_with", [to_plain, to_latex, to_json, to_rich])
def test_a_renderer_receives_the_calling_printer_and_its_settings(monkeypatch, print_with):
    explanation = Session().run("x: R\nexplain diff(x*stop_gradient(x^2), x)")[-1].steps[0]
    fmt = {to_plain: "plain", to_latex: "latex", to_json: "json", to_rich: "pretty"}[print_with]
    seen = []
    monkeypatch.setitem(records.RENDERERS, ("Explanation", fmt),
                        lambda printer, record: seen.append((printer._settings["full"], record)) or "drawn")
    assert print_with(explanation, full=True) == "drawn"
    assert print_with(explanation, full=False) == "drawn"
    assert seen == [(True, explanation), (False, explanation)]

