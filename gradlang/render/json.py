"""JSON lines output: one object per printing statement, as the language reference (docs/language.md), section 8 fixes.

A result becomes `{"line", "column", "source", "kind", "text", "latex", "value",
"warnings"}` (and `"steps"` for explain); an error becomes exactly
`{"kind": "error", "error", "message", "line", "column"}`. A value with no
free symbols is encoded as numbers (floats, with `"nan"`, `"inf"`, `"-inf"` as
strings since JSON has no such numbers) or nested lists of them; a boolean
condition as `true`/`false`; anything symbolic or complex as `null`.
"""

from __future__ import annotations

import json
import math

import sympy as sp
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from gradlang.render.latex import to_latex
from gradlang.render.plain import to_plain
from gradlang.lazy import np
from gradlang.expr.walk import dag_atoms


def encode_float(value: float):
    """A float as JSON allows it: the specials become strings."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


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
        return _encode_list(value.tolist())
    if isinstance(value, (bool, np.bool_, BooleanTrue, BooleanFalse)):
        return bool(value)
    if isinstance(value, sp.MatrixBase):
        return [[_encode(e) for e in value.row(i)] for i in range(value.rows)]
    if isinstance(value, sp.NDimArray):
        return [_encode(e) for e in value]
    if isinstance(value, (int, float, np.integer, np.floating)):
        return encode_float(float(value))
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
    return encode_float(number.real)


def _steps_json(result) -> list:
    """The derivations of an explain result, through the explain package's encoder."""
    from gradlang.explain import to_json

    steps: list = []
    for explanation in result.steps or ():
        data = to_json(explanation)
        steps.extend(data if isinstance(data, list) else [data])
    return steps


def result_to_json(result) -> dict:
    """The JSON object for one Result (section 8 keys, plus column and warnings)."""
    text = result.text if getattr(result, "text", None) is not None else to_plain(result.value)
    latex = result.latex if getattr(result, "latex", None) is not None else to_latex(result.value)
    data = {
        "line": result.line,
        "column": getattr(result, "column", None),
        "source": result.source,
        "kind": result.kind,
        "text": text,
        "latex": latex,
        "value": encode_value(result.value),
        "warnings": list(getattr(result, "warnings", ()) or ()),
    }
    if result.kind == "explain":
        data["steps"] = _steps_json(result)
    attachments = getattr(result, "attachments", ()) or ()
    if attachments:
        data["attachments"] = [attachment.to_json() for attachment in attachments]
    return data


def error_to_json(error) -> dict:
    """Exactly the error object of section 8."""
    return {
        "kind": "error",
        "error": error.kind,
        "message": error.message,
        "line": error.line,
        "column": error.column,
    }


def dumps(data: dict) -> str:
    """One JSON line (non-ASCII kept readable)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False)
