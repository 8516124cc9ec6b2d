"""Pretty output: Unicode mathematics in a rich console, like a notebook transcript.

The mathematics is SymPy's Unicode pretty printer taught gradlang's names
(`max`, `relu`, `where` as cases, components as `x₀`), with stop_gradient as a
compact `sg(…)`. To colour a stopped region inside a two-dimensional picture,
the printer draws its characters shifted into Unicode's private use planes
(one plane for the argument, another for the `sg` label and brackets);
`to_text` shifts them back and styles them, so the layout SymPy computed is
kept character for character. Without colour the `sg(…)` notation alone marks
where the gradient stops.

The same printer turns gradlang's own records (Results, derivations, tapes,
gradcheck reports, plots) into rich renderables through `_print_<Class>`
methods; `to_rich` is the entry point for both. Arrays of more than a thousand
components are summarised (`⋯`, `⋮`, `∈ ℝ¹⁰⁰⁰⁰⁰⁰`) unless `full` is on.
"""

from __future__ import annotations

import re
from itertools import groupby

import sympy as sp
from sympy.printing.precedence import PRECEDENCE
from rich.console import Group
from rich.text import Text
from sympy.printing.pretty.pretty import PrettyPrinter
from sympy.printing.pretty.pretty_symbology import pretty_symbol
from sympy.printing.pretty.stringpict import prettyForm, stringPict

from gradlang import limits
from gradlang.expr import primitives
from gradlang.expr.names_shown import names_shown
from gradlang.expr.tensor.nodes import TensorOp
from gradlang.expr.tensor.spelling import hadamard_pretty
from gradlang.render.latex import split_component
from gradlang.expr.source import InStoredOrder
from gradlang.render.records import RecordPrinting
from gradlang.render.plain import PlainPrinter, format_float, to_plain
from gradlang.render.shown import derivation_names, in_its_form, shape_text, shown, shown_result, Summarising
from gradlang.render.teacher import is_tensor_value, negated_pretty, TeacherOrder, tensor_sum_pretty, where_pretty
from gradlang.expr.values import from_elements, shape_of, to_symbolic
from gradlang.lazy import np

STOPPED_STYLE = "magenta"
STOP_LABEL_STYLE = "bold magenta"
SOURCE_STYLE = "bold"
GUTTER_STYLE = "dim"

_ARGUMENT_PLANE = 0xF0000   # Supplementary Private Use Area-A
_LABEL_PLANE = 0x100000     # Supplementary Private Use Area-B
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_SUPERSCRIPTS = str.maketrans("0123456789×", "⁰¹²³⁴⁵⁶⁷⁸⁹ˣ")
_PLANE_STYLES = {0: None, _ARGUMENT_PLANE: STOPPED_STYLE, _LABEL_PLANE: STOP_LABEL_STYLE}
_FLOAT_DIGITS = 10          # significant digits shown for floats
_EXPLAINED_ROWS = 9         # an explained value taller than this is shown on one line


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


class GradlangPrettyPrinter(RecordPrinting, Summarising, TeacherOrder, InStoredOrder, PrettyPrinter):
    """SymPy's Unicode pretty printer with gradlang's names and the sg(…) mark, and gradlang's records."""

    format = "pretty"  # the renderers it asks for records (records.py)

    def _print_Add(self, expr, order=None):
        if self._tensor_value:
            return tensor_sum_pretty(self, expr)  # W x − y: a teacher's order and minus sign
        # SymPy orders a sum's terms as polynomial monomials, quadratic in their number: a long sum keeps its stored order.
        form = super()._print_Add(expr, order="none" if len(expr.args) > limits.MAX_ORDERED_TERMS else order)
        if form.height() == 1 and "+ -∞" in form.picture[0]:  # a held -inf (Written) shows no sign to SymPy
            return prettyForm(form.picture[0].replace("+ -∞", "- ∞"), form.baseline, form.binding)
        return form

    _default_settings = {**PrettyPrinter._default_settings, "full": False, "source": False}

    def __init__(self, width: int | None = None, full: bool = False, source: bool = False):
        super().__init__({
            "use_unicode": True, "wrap_line": width is not None, "num_columns": width, "full": full, "source": source,
        })

    def _print_Mul(self, expr):
        """The elementwise product of tensors as u ⊙ v (SymPy's own product otherwise); −u in a tensor value."""
        if self._tensor_value and expr.could_extract_minus_sign():
            return negated_pretty(self, expr)
        return hadamard_pretty(self, expr) or super()._print_Mul(expr)

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
        if record.name[-1].isdigit():  # float32, expm1: a name, never a symbol with a subscript (float₃₂)
            return self._named_call(record.name, expr.args)
        return self._helper_print_function(expr.func, expr.args, func_name=record.name)

    def _named_call(self, name: str, args) -> prettyForm:
        """name(args) with the name as written, in the form SymPy's function printer builds (powers go after it)."""
        function = prettyForm(name)
        arguments = prettyForm(*self._print_seq(args, delimiter=", ").parens())
        form = prettyForm(binding=prettyForm.FUNC, *stringPict.next(function, arguments))
        form.prettyFunc, form.prettyArgs = function, arguments
        return form

    def _print_Written(self, expr):
        return self._print(expr.args[0])  # kept as the user wrote it (gradlang.expr.domain)

    def _print_Where(self, expr):
        condition, a, b = expr.args
        return self._print(sp.Piecewise((a, condition), (b, True), evaluate=False))

    def _print_BooleanTrue(self, expr):
        return prettyForm("true")

    def _print_BooleanFalse(self, expr):
        return prettyForm("false")

    def _print_bool(self, value):
        return prettyForm("true" if value else "false")

    _print_bool_ = _print_bool

    def _print_float(self, value):
        return self._print(_float_to_sympy(float(value)))

    _print_floating = _print_float

    def _print_NDimArray(self, expr):
        if expr.rank() == 1:  # a row; from_elements allows conditions in it (SymPy deprecates them in a Matrix)
            return self._print(from_elements((1, len(expr)), list(expr)))
        return super()._print_NDimArray(expr)

    _print_ImmutableDenseNDimArray = _print_NDimArray

    def _print_MatrixBase(self, expr):
        return super()._print_MatrixBase(expr)

    def _print_ndarray(self, array):
        return self._print(_ndarray_to_sympy(array))

    def _print_TensorList(self, value):
        """A list of tensors of different shapes (grad(L, [W, b])): its entries side by side in brackets."""
        return self._print_seq(value.entries, "[", "]")

    _print_ListAt = _print_TensorList

    def _print_Shown(self, shown):
        """The value (named parts are shown as text lines by `_print_Result`) and the size a summary stands for;
        a tensor value with its named parts under it (`where s = softmax(x)`)."""
        if shown.tensor:
            with self.tensor_order(True):
                form = self._print(shown.value)
                return where_pretty(self, form, shown.named) if shown.named else form
        form = self._print(shown.value)
        if not shown.shape:
            return form
        size = prettyForm(" ∈ ℝ" + shape_text(shown.shape).translate(_SUPERSCRIPTS))
        return prettyForm(*stringPict.next(form, size), binding=prettyForm.ATOM)

    # --- gradlang's records: rich renderables --------------------------------------

    def _print_Result(self, result):
        """One result as a transcript cell: the statement (with `source`), any derivation, `→ value`."""
        with_source = self._settings["source"]
        gutter = " " * (len(str(result.line)) + 1) + "→ " if with_source else ""
        parts = [source_text(result)] if with_source else []
        with names_shown(result.bound):  # pi[2] beside a name pi2 keeps its brackets
            parts.extend(self._print(step) for step in result.steps)
            if not _told_by_attachment(result):
                parts.append(self._value_part(result, gutter))
        parts.extend(self._print(attachment) for attachment in result.attachments)
        return Group(*parts)

    def _value_part(self, result, gutter: str):
        """The `→ value` of a result: a 2-D picture, or one line when it is large or summarises a derivation;
        under a derivation that names parts, written with its names (as plain text writes it)."""
        form, full = in_its_form(result), self._settings["full"]
        if form is None:
            value = shown_result(result, full)
        else:  # its parts named apart from the session's names and the derivation's
            value = shown(form, full, result.bound | derivation_names(result))
        if value.named and not value.tensor or _components(value.value) > limits.MAX_LAID_OUT_COMPONENTS:
            # Named shared parts, or many components shown whole (--full): one line of text, not a 2-D
            # layout (SymPy's grows quadratically: a 300×300 matrix took minutes).
            return Text(to_plain(value, self._settings["full"]))
        if result.kind == "explain" and not self._settings["full"] and not self._fits(value, gutter):
            return self._value_line(value, gutter)
        return self._value_text(value, gutter)

    def _fits(self, value, prefix: str) -> bool:
        """Does the 2-D picture fit the width, in a few rows? (An explained value is a summary of what came above.)"""
        art = GradlangPrettyPrinter(None)._print(value).render(wrap_line=False, use_unicode=True)
        rows = art.split("\n")
        width = self._settings["num_columns"]
        return len(rows) <= _EXPLAINED_ROWS and (width is None or max(map(len, rows)) + len(prefix) <= width)

    def _value_line(self, value, prefix: str) -> Text:
        """A value too large to draw after a derivation: one line of it, and its shape (--full draws it whole)."""
        width = self._settings["num_columns"] or 100
        line = _shortened(Text(prefix, style=GUTTER_STYLE).append_text(styled(to_line(value.value))), width)
        for k, (name, part) in enumerate(value.named if value.tensor else ()):  # each name on a line of its own, so
            lead = " " * len(prefix) + ("where " if k == 0 else "      ")    # none is cut off with the value
            line.append("\n").append_text(_shortened(Text(lead).append_text(styled(f"{to_line(name)} = {to_line(part)}")), width))
        shape = shape_of(to_symbolic(value.value))
        what = self._what(shape)
        line.append(f"\n{' ' * len(prefix)}({what} on one line, shortened: --full or :full draws it whole)", GUTTER_STYLE)
        return line

    @staticmethod
    def _what(shape) -> str:
        """The value's kind and size, in words: a vector of 3 components, a 3×3 matrix."""
        if not shape:
            return "the value"
        return f"a {shape_text(shape)} matrix" if len(shape) == 2 else f"a vector of {shape_text(shape)} components"

    def _value_text(self, value, prefix: str) -> Text:
        """A value with a prefix (like `→ `) on its baseline."""
        width = self._settings["num_columns"]
        printer = GradlangPrettyPrinter(None if width is None else max(20, width - len(prefix)), self._settings["full"])
        form = printer._print(value)
        art = form.render(**printer._settings)
        baseline = form.baseline if art.count("\n") + 1 == form.height() else 0
        return _beside(prefix, styled(art), baseline) if prefix else styled(art)


# --- one line of Unicode mathematics (derivations) ------------------------------------


class LinePrinter(PlainPrinter):
    """Expressions on one line, as a teacher writes them: x₀, a·b, x², x − 1, and sg(…) marked.

    Derivation steps are lines of text in a tree, so they are not drawn in
    two dimensions; stopped regions are shifted into the private planes, as
    the 2-D printer does, so `styled` colours them where they act.
    """

    printmethod = "_gradlang_line"  # not the classes' _sympystr hook (gradlang source): the methods below

    def _print(self, expr, **kwargs):
        if isinstance(expr, TensorOp):  # W x, s sᵀ: the pretty notation (dispatch by name would find SymPy's MatMul)
            return expr.spelling.line(expr, self)
        return super()._print(expr, **kwargs)

    def parenthesize(self, item, level, strict=False):
        """An einsum written as operands side by side is bracketed where a product's factor or a power's base is:
        (Dᵀ X)², 2·(Σ_j A_{ij} x_j); its plain form, a call, never is."""
        juxtaposed = getattr(getattr(item, "spelling", None), "juxtaposed", None)
        if isinstance(item, TensorOp) and juxtaposed is not None and level >= PRECEDENCE["Mul"] and juxtaposed(item):
            return f"({self._print(item)})"
        return super().parenthesize(item, level, strict)

    def _print_Symbol(self, expr):
        parts = split_component(expr.name)
        if parts is None:
            return pretty_symbol(expr.name)
        return pretty_symbol(parts[0]) + parts[1].translate(_SUBSCRIPTS)

    def _print_StopGradient(self, expr):
        inner = tidy_line(self._print(expr.args[0]))
        return _shift("sg(", _LABEL_PLANE) + _shift(inner, _ARGUMENT_PLANE) + _shift(")", _LABEL_PLANE)

    def _print_Function(self, expr):
        record = primitives.by_class(type(expr))
        if record is not None and record.form == "component":
            index = self._print(expr.args[0]).translate(_SUBSCRIPTS)
            return f"{record.name}{index}({self.stringify(expr.args[1:], ', ')})"
        if record is not None and record.form == "vector":
            return f"{record.name}({self.stringify(expr.args, ', ')})"
        return super()._print_Function(expr)

    def _print_Exp(self, expr):
        argument = expr.args[0]
        text = self._print(argument)
        return f"e^{text}" if argument.is_Symbol else f"e^({text})"

    _print_exp = _print_Exp

    def _print_TensorList(self, value):
        """grad(L, [W, b]) on one line: [δ xᵀ, δ], as the value prints it."""
        return "[" + ", ".join(self._print(e) for e in value.entries) + "]"


_LINE_PRINTER = LinePrinter({"order": None})
_LINE_FULL = LinePrinter({"order": None, "full": True})
_POWER = re.compile(r"\^([0-9]+)(?![0-9.])")
_SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


_COMPONENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\[([0-9]+)(?:, ([0-9]+))?\]")


def tidy_line(text: str) -> str:
    """Plain operators as mathematics: * as ·, ^2 as ², a binary or leading - as −, x[0] as x₀."""
    text = _COMPONENT.sub(lambda m: m.group(1) + ",".join(i for i in m.groups()[1:] if i).translate(_SUBSCRIPTS), text)
    text = _POWER.sub(lambda m: m.group(1).translate(_SUPERSCRIPT_DIGITS), text)
    text = text.replace("*", "·").replace(" - ", " − ").replace("(-", "(−").replace(", -", ", −")
    return "−" + text[1:] if text.startswith("-") else text


def to_line(value, full: bool = False) -> str:
    """A value as one line of Unicode mathematics, stops marked (give it to `styled` for colour)."""
    return tidy_line((_LINE_FULL if full else _LINE_PRINTER).doprint(value))


def styled_line(text: str) -> Text:
    """Marked text as a Text that wraps (a tree label), stopped regions styled."""
    out = Text()
    out.append_text(styled(text))
    return out


def _components(value) -> int:
    return int(np.prod(value.shape)) if isinstance(value, (np.ndarray, sp.MatrixBase, sp.NDimArray)) else 1


def _ndarray_to_sympy(array: np.ndarray):
    if array.ndim == 0:
        return _float_to_sympy(float(array))
    items = [_float_to_sympy(float(v)) for v in array.ravel()]
    if array.ndim == 1:
        return sp.ImmutableDenseNDimArray(items, array.shape)
    return sp.ImmutableMatrix(array.shape[0], array.shape[1], items)


def _float_to_sympy(value: float) -> sp.Expr:
    """NumPy is loaded whenever a float reaches a printer, so expr.numeric costs nothing here."""
    from gradlang.expr.numeric import to_sympy_number

    return to_sympy_number(value)


def _told_by_attachment(result) -> bool:
    """Is the value only what its one attachment shows better (plot's expressions, gradcheck's largest error)?

    A chart or table on a terminal is the answer; the value above it repeated
    it as a bare list or number. Plain and JSON keep the value: there it is
    the source that reads back, or the data a tool reads.
    """
    if len(result.attachments) != 1:
        return False
    told = getattr(result.attachments[0], "value", None)
    return told is not None and told == result.value


def _shortened(line: Text, width: int) -> Text:
    """The line cut to the width with a mark, when it is wider."""
    cut = line.cell_len > width
    line.truncate(width - 1 if cut else line.cell_len)
    return line.append("…") if cut else line


def to_rich(value, width: int | None = None, full: bool = False, source: bool = False):
    """A value as styled Text, or a record (Result, Explanation, report, …) as a rich renderable."""
    printer = GradlangPrettyPrinter(width, full, source)
    with printer.tensor_order(is_tensor_value(value)):
        out = printer._print(value)
    if isinstance(out, stringPict):
        return styled(out.render(**printer._settings))
    return out


def to_pretty(value, width: int | None = None) -> str:
    """The value as Unicode art, without styles (what a colourless terminal shows)."""
    return to_text(value, width).plain


def to_text(value, width: int | None = None) -> Text:
    """The value as a rich Text, stopped regions styled."""
    return to_rich(value, width)


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


def source_text(result) -> Text:
    """The statement that produced a result, with its line number in a gutter; a line too wide ends in `…`."""
    lines = result.source.splitlines() or [""]
    number = str(result.line)
    out = Text(no_wrap=True, overflow="ellipsis")
    for i, line in enumerate(lines):
        gutter = number if i == 0 else " " * len(number)
        out.append(f"{gutter} ┃ ", GUTTER_STYLE)
        out.append(line, SOURCE_STYLE)
        if i < len(lines) - 1:
            out.append("\n")
    return out
