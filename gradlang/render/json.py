"""JSON lines output: one object per printing statement, as the language reference (docs/language.md), section 8 fixes.

A result becomes `{"line", "column", "source", "kind", "text", "latex", "value",
"warnings"}` (and `"steps"` for explain); an error becomes exactly
`{"kind": "error", "error", "message", "line", "column"}`. A value with no
free symbols is encoded as numbers (floats, with `"nan"`, `"inf"`, `"-inf"` as
strings since JSON has no such numbers) or nested lists of them; a boolean
condition as `true`/`false`; anything symbolic or complex as `null`.

`JsonPrinter` is the JSON format's printer: `_print_<Class>` methods turn
Results, derivations, tapes, gradcheck reports, plots and errors into plain
data. `value` keeps every number; `text` and `latex` are what the plain and
LaTeX printers show (summarised above a thousand components unless `full`).
"""

from __future__ import annotations

import json
import math

import sympy as sp
from sympy.logic.boolalg import BooleanFalse, BooleanTrue
from sympy.printing.printer import Printer

from gradlang.render.latex import to_latex
from gradlang.render.records import RecordPrinting
from gradlang.render.plain import to_plain
from gradlang.render.shown import shown_result
from gradlang.lazy import np
from gradlang.expr.walk import dag_atoms
from gradlang.expr.engine import is_list


def json_number(x: float):
    """A float as JSON allows it: the specials become strings."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def encode_value(value):
    """Numbers or nested lists of numbers; None when the value is not all numbers."""
    try:
        return _encode(value)
    except _NotNumeric:
        return None


class _NotNumeric(Exception):
    pass


def _encode(value):
    if isinstance(value, np.ndarray):
        if value.dtype == np.float64 and np.isfinite(value).all():
            return value.tolist()  # NumPy makes the floats in one call; json writes each as repr, as below
        return _encode_list(value.tolist())
    if is_list(value):  # grad(L, [W, b]) at …: one entry per variable, each its own shape
        return [_encode(e) for e in value.entries]
    if isinstance(value, (bool, np.bool_, BooleanTrue, BooleanFalse)):
        return bool(value)
    if isinstance(value, sp.MatrixBase):
        return [[_encode(e) for e in value.row(i)] for i in range(value.rows)]
    if isinstance(value, sp.NDimArray):
        return [_encode(e) for e in value]
    if isinstance(value, (int, float, np.integer, np.floating)):
        return json_number(float(value))
    return _encode_scalar(value)


def _encode_list(items):
    if isinstance(items, list):
        return [_encode_list(item) for item in items]
    return _encode(items)


def _encode_scalar(expr):
    if not isinstance(expr, sp.Expr) or dag_atoms(expr, sp.Symbol):
        raise _NotNumeric
    if expr is sp.nan:
        return "nan"
    if expr is sp.oo or expr is -sp.oo:
        return "inf" if expr is sp.oo else "-inf"
    try:
        number = complex(expr.evalf(17))
    except (TypeError, ValueError):
        raise _NotNumeric from None
    if number.imag != 0:
        raise _NotNumeric
    return json_number(number.real)


class JsonPrinter(RecordPrinting, Printer):
    """Results, records and errors as JSON-ready data (dicts, lists, numbers, strings)."""

    format = "json"  # the renderers it asks for records (records.py)

    _default_settings = {"full": False}

    def doprint(self, expr):
        return self._print(expr)  # data, not a string: dumps() writes the line

    def _print_object(self, value):
        return encode_value(value)

    def _print_Result(self, result) -> dict:
        """The section 8 keys, plus column and warnings (and steps, attachments when there are any)."""
        if result.kind == "assignment":  # no value: the record carries the assignment's warnings
            return {"line": result.line, "column": result.column, "source": result.source, "kind": "assignment",
                    "warnings": list(result.warnings)}
        full = self._settings["full"]
        value = shown_result(result, full)
        data = {
            "line": result.line,
            "column": result.column,
            "source": result.source,
            "kind": result.kind,
            "text": to_plain(value, full),
            "latex": to_latex(value, full),
            "value": encode_value(result.value),
            "warnings": list(result.warnings),
        }
        if result.kind == "explain":
            data["steps"] = [self._print(step) for step in result.steps]
        if result.attachments:
            data["attachments"] = [self._print(attachment) for attachment in result.attachments]
        return data


    def _print_GradlangError(self, error) -> dict:
        """Exactly the error object of section 8."""
        return {"kind": "error", "error": error.kind, "message": error.message, "line": error.line, "column": error.column}


_PRINTER = JsonPrinter()
_FULL = JsonPrinter({"full": True})


def to_json(value, full: bool = False):
    """A Result, record or error as JSON-ready data; any other value as numbers (or None)."""
    return (_FULL if full else _PRINTER).doprint(value)


def dumps(data: dict) -> str:
    """One JSON line (non-ASCII kept readable)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False)
