"""Plain output: values as gradlang source, and gradlang's records as plain text.

`PlainPrinter` is the plain format's one printer: expr/source.py's
`SourcePrinter` (values as gradlang source that reads back to them) plus
`_print_<Class>` methods for gradlang's own records (Results, derivations,
tapes, gradcheck reports, plots). An array of more than a thousand
components is summarised (`[a, b, c, …, x, y, z]  # R^n, summarised`, see
shown.py) unless the `full` setting is on; only a full printout reads back.
"""

from __future__ import annotations


from gradlang.render.records import RecordPrinting
from gradlang.render.shown import MARKS, in_its_form, is_gap_row, shape_text, shown_result, Summarising
from gradlang.expr.source import SourcePrinter, format_float
from gradlang.render.teacher import TeacherOrder


class PlainPrinter(RecordPrinting, Summarising, TeacherOrder, SourcePrinter):
    """gradlang source for values; plain text for records; summaries of large arrays."""

    format = "plain"  # the renderers it asks for records (records.py)

    _default_settings = {**SourcePrinter._default_settings, "full": False}

    def _print_Symbol(self, expr):
        return "…" if expr in MARKS else expr.name

    _print_Dummy = _print_Symbol

    def _print_NDimArray(self, expr):
        return super()._print_NDimArray(expr)

    _print_ImmutableDenseNDimArray = _print_NDimArray
    _print_ImmutableSparseNDimArray = _print_NDimArray

    def _print_MatrixBase(self, expr):
        rows = [list(expr.row(i)) for i in range(expr.rows)]
        shown = ("…" if is_gap_row(row) else "[" + ", ".join(self._print(e) for e in row) + "]" for row in rows)
        return "[" + ", ".join(shown) + "]"

    _print_ImmutableMatrix = _print_MatrixBase
    _print_ImmutableDenseMatrix = _print_MatrixBase
    _print_MutableDenseMatrix = _print_MatrixBase

    def _print_ndarray(self, array):
        return super()._print_ndarray(array)

    def _print_Shown(self, shown):
        """Named shared parts (t1 = …, s = softmax(x)) first, as assignments, then the value, then the size a summary stands for."""
        with self.tensor_order(shown.tensor):
            lines = [f"{self._print(name)} = {self._print(expr)}" for name, expr in shown.named]
            text = self._print(shown.value)
        if shown.shape:
            size = shape_text(shown.shape).replace("×", ",")
            text += f"  # R^{size if len(shown.shape) == 1 else '(' + size + ')'}, summarised"
        return "\n".join(lines + [text])

    # --- gradlang's records (derivations are comments, so the output stays source) ---

    def _print_Result(self, result):
        """A whole result as the plain format prints it: derivations, value, attachments; under a derivation
        the value writes its stops as the derivation does, sg(u) (which reads back as stop_gradient)."""
        parts = [_comment(self._print(step)) for step in result.steps]
        printer = in_derivation(self) if result.kind == "explain" else self
        value = printer._print(shown_result(result, self._settings["full"]))
        if result.kind == "explain" and not self._settings["full"]:
            value = _after_derivation(_in_its_form(result, printer) or value, result.value)
        parts.append(value + "\n")
        parts.extend(_comment(self._print(attachment)) for attachment in result.attachments)
        return "".join(parts)


EXPLAINED_CHARACTERS = 200   # a symbolic value after a derivation longer than this is shortened to one line
EXPLAINED_WIDTH = 100        # the columns of that line, its comment included


def _after_derivation(text: str, value) -> str:
    """A long symbolic value after a derivation: one line and its shape, as pretty shortens it.

    The derivation above states the result, so its full text (often a screenful
    of SymPy's expansion) adds nothing a reader needs; `--full` prints it whole,
    and JSON always keeps it. Numbers (`explain … at x = v`) are never shortened:
    they are what the statement asked for. Like a summarised array, the shortened
    line does not read back (module docstring).
    """
    from gradlang.expr.values import elements, is_scalar, shape_of, to_symbolic

    from gradlang.expr.tensor.nodes import is_tensor, shape_of as tensor_shape

    symbolic = to_symbolic(value)
    items = [symbolic] if is_scalar(symbolic) else elements(symbolic)
    if "\n" in text or len(text) <= EXPLAINED_CHARACTERS or not any(getattr(e, "free_symbols", None) for e in items):
        return text
    shape = tensor_shape(symbolic) if is_tensor(symbolic) else shape_of(symbolic)
    size = shape_text(shape).replace("×", ",")
    what = f"R^{size if len(shape) == 1 else '(' + size + ')'}" if shape else "scalar"
    note = f"  # {what}, {len(text)} characters, shortened: --full prints it whole"
    return text[:max(24, EXPLAINED_WIDTH - len(note) - 1)] + "…" + note  # the line within the width


def _in_its_form(result, printer) -> str | None:
    """The value under one derivation that names parts, written with those names (shown.in_its_form)."""
    value = in_its_form(result)
    return None if value is None else printer.doprint(value)


def _comment(text: str) -> str:
    """Lines as gradlang comments."""
    return "".join(f"# {line}\n" for line in text.splitlines())


_PRINTER = PlainPrinter({"order": None})
_FULL = PlainPrinter({"order": None, "full": True})
_DERIVATION = PlainPrinter({"order": None, "sg": True})
_DERIVATION_FULL = PlainPrinter({"order": None, "full": True, "sg": True})


def to_plain(value, full: bool = False) -> str:
    """A value as gradlang source, or a record (Result, Explanation, report, …) as plain text."""
    return (_FULL if full else _PRINTER).doprint(value)


def in_derivation(printer: PlainPrinter) -> PlainPrinter:
    """The plain printer a derivation writes with: the printer's, its stops as `sg(u)`, as pretty and LaTeX
    call them (a title `blocked(-dot(p1, stop_gradient(z2))/…` ran 146 columns where pretty's read sg(z2))."""
    return _DERIVATION_FULL if printer._settings["full"] else _DERIVATION


def derivation_text(value, full: bool = False) -> str:
    """A value as a plain derivation writes it (tapes, explain backward): gradlang source, stops as `sg(u)`."""
    return (_DERIVATION_FULL if full else _DERIVATION).doprint(value)


__all__ = ["derivation_text", "in_derivation", "to_plain", "format_float", "PlainPrinter"]
