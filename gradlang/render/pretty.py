"""Pretty output: Unicode mathematics in a rich console, like a notebook transcript.

The mathematics is SymPy's Unicode pretty printer taught gradlang's names
(`max`, `relu`, `where` as cases, components as `x₀`), with stop_gradient as a
compact `sg(…)`. To colour a stopped region inside a two-dimensional picture,
the printer draws its characters shifted into Unicode's private use planes
(one plane for the argument, another for the `sg` label and brackets);
`to_text` shifts them back and styles them, so the layout SymPy computed is
kept character for character. Without colour the `sg(…)` notation alone marks
where the gradient stops.
"""

from __future__ import annotations

from itertools import groupby

import sympy as sp
from rich.console import Group
from rich.text import Text
from sympy.printing.pretty.pretty import PrettyPrinter
from sympy.printing.pretty.pretty_symbology import pretty_symbol
from sympy.printing.pretty.stringpict import prettyForm, stringPict

from gradlang.render.latex import split_component
from gradlang.render.plain import format_float
from gradlang import limits
from gradlang.expr.values import elements
from gradlang.expr import primitives
from gradlang.lazy import np

STOPPED_STYLE = "magenta"
STOP_LABEL_STYLE = "bold magenta"
SOURCE_STYLE = "bold"
GUTTER_STYLE = "dim"

_ARGUMENT_PLANE = 0xF0000   # Supplementary Private Use Area-A
_LABEL_PLANE = 0x100000     # Supplementary Private Use Area-B
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_PLANE_STYLES = {0: None, _ARGUMENT_PLANE: STOPPED_STYLE, _LABEL_PLANE: STOP_LABEL_STYLE}
_FLOAT_DIGITS = 10          # significant digits shown for floats


def _shift(text: str, plane: int) -> str:
    """Move every visible BMP character not yet marked into a private plane."""
    out = []
    for char in text:
        code = ord(char)
        visible = char != " " and code < 0x10000 and not 0x300 <= code < 0x370
        out.append(chr(plane + code) if visible else char)
    return "".join(out)


def _mark(form: prettyForm, plane: int) -> prettyForm:
    lines = [_shift(line, plane) for line in form.picture]
    return prettyForm("\n".join(lines), form.baseline, form.binding)


def format_pretty_float(value: float) -> str:
    """A float rounded to a readable number of digits, still recognisably a float."""
    text = format_float(value)
    if text in ("nan", "inf", "-inf"):
        return text
    return format_float(float(f"{value:.{_FLOAT_DIGITS}g}"))


class GradlangPrettyPrinter(PrettyPrinter):
    """SymPy's Unicode pretty printer with gradlang's names and the sg(…) mark."""

    def _print_Add(self, expr, order=None):
        # SymPy orders a sum's terms as polynomial monomials, quadratic in their number: a long sum keeps its stored order.
        return super()._print_Add(expr, order="none" if len(expr.args) > limits.MAX_ORDERED_TERMS else order)

    printmethod = "_gradlang_pretty"

    def __init__(self, width: int | None = None):
        super().__init__({"use_unicode": True, "wrap_line": width is not None, "num_columns": width})

    def _print_Symbol(self, expr, bold_name=False):
        parts = split_component(expr.name)
        if parts is None:
            return super()._print_Symbol(expr, bold_name)
        base = pretty_symbol(parts[0])
        return prettyForm(base + parts[1].translate(_SUBSCRIPTS))

    def _print_Float(self, expr):
        return prettyForm(format_pretty_float(float(expr)))

    def _print_StopGradient(self, expr):
        argument = _mark(self._print(expr.args[0]), _ARGUMENT_PLANE)
        brackets = _mark(prettyForm(*argument.parens()), _LABEL_PLANE)
        label = prettyForm(_shift("sg", _LABEL_PLANE))
        # ATOM, not FUNC: a power goes after the brackets, sg(u)², never sg²(u).
        return prettyForm(*stringPict.next(label, brackets), binding=prettyForm.ATOM)

    def _print_Function(self, expr, sort=False, func_name=None, **kwargs):
        """gradlang's own functions by their records' names (softmax's component k as softmaxₖ)."""
        record = primitives.by_class(type(expr))
        if func_name is not None or record is None or not type(expr).__module__.startswith("gradlang"):
            return super()._print_Function(expr, sort, func_name, **kwargs)
        if record.form == "component":
            name = record.name + str(expr.args[0]).translate(_SUBSCRIPTS)
            return self._helper_print_function(expr.func, expr.args[1:], func_name=name)
        return self._helper_print_function(expr.func, expr.args, func_name=record.name)

    def _print_Where(self, expr):
        condition, a, b = expr.args
        return self._print(sp.Piecewise((a, condition), (b, True), evaluate=False))

    def _print_BooleanTrue(self, expr):
        return prettyForm("true")

    def _print_BooleanFalse(self, expr):
        return prettyForm("false")

    def _print_NDimArray(self, expr):
        if expr.rank() == 1:
            return self._print(sp.ImmutableMatrix([list(expr)]))
        return super()._print_NDimArray(expr)

    _print_ImmutableDenseNDimArray = _print_NDimArray

    def doprint(self, expr):
        if isinstance(expr, np.ndarray):
            expr = _ndarray_to_sympy(expr)
        elif isinstance(expr, (bool, np.bool_)):
            expr = sp.true if expr else sp.false
        elif isinstance(expr, (float, np.floating)):
            expr = sp.Float(float(expr))
        return super().doprint(expr)


def _ndarray_to_sympy(array: np.ndarray):
    if array.ndim == 0:
        return _float_to_sympy(float(array))
    items = [_float_to_sympy(float(v)) for v in array.ravel()]
    if array.ndim == 1:
        return sp.ImmutableDenseNDimArray(items, array.shape)
    return sp.ImmutableMatrix(array.shape[0], array.shape[1], items)


def _float_to_sympy(value: float) -> sp.Expr:
    if np.isnan(value):
        return sp.nan
    if np.isinf(value):
        return sp.oo if value > 0 else -sp.oo
    return sp.Float(value)


def to_pretty(value, width: int | None = None) -> str:
    """The value as Unicode art, without styles (what a colourless terminal shows)."""
    return to_text(value, width).plain


def to_text(value, width: int | None = None) -> Text:
    """The value as a rich Text, stopped regions styled."""
    art = GradlangPrettyPrinter(width).doprint(value)
    return styled(art)


def styled(art: str) -> Text:
    """Shift marked characters back and give them the stop styles."""
    text = Text(no_wrap=True, overflow="ignore")
    for plane, run in groupby(art, _plane_of):
        chars = "".join(chr(ord(c) - plane) for c in run)
        text.append(chars, _PLANE_STYLES[plane])
    return text


def _plane_of(char: str) -> int:
    code = ord(char)
    return _LABEL_PLANE if code >= _LABEL_PLANE else _ARGUMENT_PLANE if code >= _ARGUMENT_PLANE else 0


def _beside(prefix: str, body: Text, baseline: int) -> Text:
    """Put `prefix` on the baseline row of a multi-line picture, blanks elsewhere."""
    rows = body.split("\n", allow_blank=True)
    out = Text(no_wrap=True, overflow="ignore")
    for i, row in enumerate(rows):
        out.append(prefix if i == baseline else " " * len(prefix), GUTTER_STYLE)
        out.append_text(row)
        if i < len(rows) - 1:
            out.append("\n")
    return out


def value_text(value, width: int | None = None, prefix: str = "") -> Text:
    """A value with an optional prefix (like `→ `) on its baseline."""
    printer = GradlangPrettyPrinter(None if width is None else max(20, width - len(prefix)))
    form = printer._print(_prepare(value))
    art = printer.doprint(value)
    baseline = form.baseline if art.count("\n") + 1 == form.height() else 0
    return _beside(prefix, styled(art), baseline) if prefix else styled(art)


def _components(value) -> int:
    return int(np.size(value)) if isinstance(value, np.ndarray) else len(elements(value)) if hasattr(value, "shape") else 1


def _prepare(value):
    if isinstance(value, np.ndarray):
        return _ndarray_to_sympy(value)
    if isinstance(value, (bool, np.bool_)):
        return sp.true if value else sp.false
    if isinstance(value, (float, np.floating)):
        return sp.Float(float(value))
    return value


def source_text(result) -> Text:
    """The statement that produced a result, with its line number in a gutter."""
    lines = result.source.splitlines() or [""]
    number = str(result.line)
    out = Text(no_wrap=True, overflow="ignore")
    for i, line in enumerate(lines):
        gutter = number if i == 0 else " " * len(number)
        out.append(f"{gutter} ┃ ", GUTTER_STYLE)
        out.append(line, SOURCE_STYLE)
        if i < len(lines) - 1:
            out.append("\n")
    return out


def steps_renderables(result) -> list:
    """The derivations of an explain result, through the explain package's renderer."""
    if not getattr(result, "steps", None):
        return []
    try:
        from gradlang.explain import to_rich
    except ImportError:
        return [Text(str(step)) for step in result.steps]
    return [to_rich(step) for step in result.steps]


def result_renderable(result, width: int | None = None, with_source: bool = True):
    """One result as a transcript cell: the statement, any derivation, `→ value`."""
    gutter = " " * (len(str(result.line)) + 1) + "→ " if with_source else ""
    parts = [source_text(result)] if with_source else []
    parts.extend(steps_renderables(result))
    if getattr(result, "named", ()) or _components(result.value) > limits.MAX_LAID_OUT_COMPONENTS:
        # A large value with named shared parts, or with many components: one line of text, not a 2-D
        # layout (SymPy's grows quadratically: a 300×300 matrix took minutes).
        parts.append(Text(result.text))
    else:
        parts.append(value_text(result.value, width, gutter))
    return Group(*parts)
