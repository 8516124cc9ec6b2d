"""The printers: one class per output format, for values and for gradlang's records alike.

Each format is one SymPy-style printer whose `_print_<Class>` methods handle
SymPy values (expressions, matrices, arrays), NumPy arrays, and gradlang's
records: `Result`, explain's `Explanation`, `BackwardView` and `Tape`,
`GradcheckReport`, `Plot` (the language reference, docs/language.md, section 8).

- plain  (`to_plain`, plain.PlainPrinter): gradlang source that reads back to the same value;
- latex  (`to_latex`, latex.GradlangLatexPrinter): math-mode fragments, stop_gradient as \\operatorname{sg};
- pretty (`to_rich`, pretty.GradlangPrettyPrinter): Unicode mathematics as rich renderables;
- json   (`to_json`, json.JsonPrinter): plain data for JSON lines.

Every entry point takes `full=True` to print large arrays whole (shown.py).
Values and records carry no text: a shell asks a printer when it shows them.
"""

from gradlang.core import session as _session
from gradlang.render.plain import to_plain
from gradlang.render.shown import shown as _shown


def to_latex(value, full: bool = False):
    """A value or record as LaTeX (latex.py, its printer and patterns loaded on first use: issue #41)."""
    from gradlang.render.latex import to_latex as printed

    return printed(value, full)


def to_json(value, full: bool = False):
    """A value or record as JSON data (json.py, loaded on first use, with the LaTeX printer it needs)."""
    from gradlang.render.json import to_json as printed

    return printed(value, full)


def to_rich(value, width: int | None = None, full: bool = False, source: bool = False):
    """A value or record as a rich renderable; rich is imported only when pretty output is asked for."""
    from gradlang.render.pretty import to_rich as printed

    return printed(value, width, full, source)


# Result.text, .latex and .named of the Python API, computed on first access.
_session.TEXT_FORMS.update(
    plain=lambda value, bound=frozenset(): to_plain(_shown(value, taken=bound)),
    latex=lambda value, bound=frozenset(): to_latex(_shown(value, taken=bound)),
    named=lambda value, bound=frozenset(): _shown(value, taken=bound).named,
)

__all__ = ["to_json", "to_latex", "to_plain", "to_rich"]
