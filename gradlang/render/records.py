"""One renderer per record type and format, in a registry: SymPy's `_print_<Class>` protocol in one place.

A printer that meets one of gradlang's records (explain's `Explanation`, a
`BackwardView`, a `Tape`, a `GradcheckReport`, a `Plot`) calls the renderer
registered for the record's class name and the printer's format, and hands it
itself: the renderer prints the record's expressions through the calling
printer, so its settings (`full`) reach every nested expression.

The printers import no renderer, so the render modules form no cycle: a
renderer module imports the printers it draws with and registers its
functions with `renders`. It is imported the first time a printer meets one
of its records (HOMES), so start-up loads none of them.
"""

from __future__ import annotations

import importlib
from typing import Callable

# The module whose import registers a record's renderers (every format).
HOMES = {
    "Explanation": ("gradlang.render.derivation",),
    "BackwardView": ("gradlang.render.tape_view",),
    "Tape": ("gradlang.render.tape",),
    "GradcheckReport": ("gradlang.render.report",),
    "Plot": ("gradlang.render.report", "gradlang.render.chart"),
}
FORMATS = ("plain", "latex", "pretty", "json")

RENDERERS: dict[tuple[str, str], Callable] = {}


def renders(record: str, *formats: str):
    """Register the decorated function as the renderer of `record` (a class name) in the formats.

    The function is called as `renderer(printer, record)` and returns what
    the printer's `_print` returns (text, a rich renderable, JSON data).
    """
    unknown = set(formats) - set(FORMATS)
    if record not in HOMES or unknown or not formats:
        raise ValueError(f"no home for renderer of {record} in {formats}")

    def register(function: Callable) -> Callable:
        for fmt in formats:
            RENDERERS[(record, fmt)] = function
        return function

    return register


def renderer(record: str, fmt: str) -> Callable:
    """The renderer of a record in a format, importing the record's home on first use."""
    found = RENDERERS.get((record, fmt))
    if found is None:
        for module in HOMES[record]:
            importlib.import_module(module)
        found = RENDERERS[(record, fmt)]
    return found


class RecordPrinting:
    """Mixin for the printers: a record goes to its registered renderer, anything else to SymPy's dispatch."""

    format = ""

    def _print(self, expr, **kwargs):
        name = type(expr).__name__
        if name in HOMES:
            return renderer(name, self.format)(self, expr)
        return super()._print(expr, **kwargs)
