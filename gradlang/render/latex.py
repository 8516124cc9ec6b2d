"""LaTeX output: values as mathematics ready to paste into lecture notes.

SymPy's LatexPrinter with gradlang's notation: `\\operatorname{sg}\\left(u\\right)`
for stop_gradient, components as subscripts (`x_{0}`, `W_{0,1}`), vectors and
matrices as `bmatrix`, `where` as cases, and floats with exactly the digits
the plain form shows (`1 \\cdot 10^{-10}` for `1e-10`).

The same printer writes gradlang's own records (Results, derivations, tapes,
gradcheck reports, plots) through `_print_<Class>` methods, and summarises
arrays of more than a thousand components (`\\cdots`, `\\vdots`, and
`\\in \\mathbb{R}^{n}`) unless the `full` setting is on.
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.printing.latex import LatexPrinter

from gradlang.expr.engine import loaded, spelling
from gradlang.expr.names_shown import names_shown
from gradlang.expr.source import InStoredOrder
from gradlang.render.records import RecordPrinting
from gradlang.render.plain import format_float
from gradlang.render.teacher import TeacherOrder, where_latex
from gradlang.render.shown import BOTH_GAP, COLUMN_GAP, ROW_GAP, shape_text, shown_result, Summarising
from gradlang import limits
from gradlang.lazy import deferred_module

primitives = deferred_module("gradlang.expr.primitives")  # the records on first use (issue #41)

_GAPS = {ROW_GAP: r"\cdots", COLUMN_GAP: r"\vdots", BOTH_GAP: r"\ddots"}
_UNICODE_INDEX = re.compile(r"([A-Za-z]+)([₀-₉ₖᵢⱼₙ]+)")
_FROM_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉ₖᵢⱼₙ", "0123456789kijn")


def split_component(name: str) -> tuple[str, str] | None:
    """`"W[0, 1]"` -> `("W", "0,1")`; None for a name without brackets."""
    if not name.endswith("]") or "[" not in name:
        return None
    base, _, index = name[:-1].partition("[")
    return base, ",".join(part.strip() for part in index.split(","))


def float_latex(value: float) -> str:
    text = format_float(value)
    if text in ("nan", "inf", "-inf"):
        return {"nan": r"\text{NaN}", "inf": r"\infty", "-inf": r"-\infty"}[text]
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return f"{mantissa} \\cdot 10^{{{int(exponent)}}}"


_TEXT_ESCAPES = str.maketrans({
    "\\": r"\textbackslash{}", "_": r"\_", "^": r"\^{}", "#": r"\#", "%": r"\%",
    "&": r"\&", "$": r"\$", "{": r"\{", "}": r"\}",
    # pdflatex with amsmath knows no Unicode: the symbols explain writes in words, as math
    "→": r"$\to$", "—": "---", "∂": r"$\partial$", "∇": r"$\nabla$", "Σ": r"$\Sigma$",
    "≔": ":=", "·": r"$\cdot$", "−": "-", "̄": "", "✓": "ok",
    "…": r"\dots{}", "ₖ": "$_k$", "ⱼ": "$_j$", "ᵢ": "$_i$", "ₙ": "$_n$", "ℝ": "R", "δ": r"$\delta$",
    **{chr(0x2080 + i): f"$_{i}$" for i in range(10)},
    **{c: f"$^{i}$" for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
    # and those of vector derivations (explain/formula.py): −1ᵀ(e₀ − s), Σₖ sₖ, ‖v‖
    **{c: f"$_{s}$" for c, s in zip("ₖᵢⱼᵥ", "kijv")}, "ᵀ": r"$^{\top}$", "‖": r"$\|$", "δ": r"$\delta$",
})


def text_escape(text: str) -> str:
    """Text safe inside \\text{...} or \\intertext{...} (one pass, so no escape is escaped again)."""
    return text.translate(_TEXT_ESCAPES)


class GradlangLatexPrinter(RecordPrinting, Summarising, TeacherOrder, InStoredOrder, LatexPrinter):
    """LatexPrinter with gradlang's functions, components and number format."""

    format = "latex"  # the renderers it asks for records (records.py)

    def _print_Mul(self, expr):
        """The elementwise product of tensors as u \\odot v (SymPy's own product otherwise)."""
        return (loaded() and spelling.hadamard_latex(self, expr)) or super()._print_Mul(expr)

    def _needs_mul_brackets(self, expr, first=False, last=False) -> bool:
        """An einsum in index notation opens a Σ that would run on over the factors after it: bracketed unless last."""
        opens = getattr(getattr(expr, "spelling", None), "opens_sum", None)
        if opens is not None and not last and opens(expr):
            return True
        return super()._needs_mul_brackets(expr, first, last)

    def _print_Add(self, expr, order=None):
        # SymPy orders a sum's terms as polynomial monomials, quadratic in their number: a long sum keeps its stored order.
        text = super()._print_Add(expr, order="none" if len(expr.args) > limits.MAX_ORDERED_TERMS else order)
        # a held -inf (expr/domain.py's Written) is a term SymPy cannot see the sign of: y + -inf reads y - inf
        return text.replace(r" + -\infty", r" - \infty")

    _default_settings = {**LatexPrinter._default_settings, "full": False}

    def __init__(self, settings=None):
        defaults = {"mat_str": "bmatrix", "mat_delim": "", "inv_trig_style": "full"}
        super().__init__({**defaults, **(settings or {})})

    def _print_Symbol(self, expr, style="plain"):
        if expr in _GAPS:
            return _GAPS[expr]
        numbered = _UNICODE_INDEX.fullmatch(expr.name)
        if numbered:  # explain's short names (c₁, m₂) and rule letters (u₁): a subscript, not a Unicode character
            base = super()._print_Symbol(sp.Symbol(numbered.group(1)), style)
            return f"{base}_{{{numbered.group(2).translate(_FROM_SUBSCRIPTS)}}}"
        parts = split_component(expr.name)
        if parts is None and not expr.name.isascii():  # a let name of explain's (δ, δ₁): pdflatex knows no Unicode
            from gradlang.explain.formula import latex_chars

            return latex_chars(expr.name).strip()
        if parts is None:
            return super()._print_Symbol(expr, style)
        base = super()._print_Symbol(sp.Symbol(parts[0]), style)
        if "_" in base or "^" in base:
            base = "{" + base + "}"
        return f"{base}_{{{parts[1]}}}"

    def _print_Float(self, expr):
        return float_latex(float(expr))

    def _named(self, name: str, args) -> str:
        inner = ", ".join(self._print(a) for a in args)
        return f"{name}\\left({inner}\\right)"

    def _print_Function(self, expr, exp=None):
        """gradlang's own functions by the LaTeX names of their records; SymPy's through SymPy's printer."""
        record = primitives.by_class(type(expr))
        if record is None or record.latex is None:
            return super()._print_Function(expr, exp)
        if record.form == "component":
            text = self._named(record.latex, expr.args[1:]) + f"_{{{self._print(expr.args[0])}}}"
        else:
            text = self._named(record.latex, expr.args)
        return f"{text}^{{{exp}}}" if exp else text

    def _print_Written(self, expr, exp=None):
        """Kept as the user wrote it (gradlang.expr.domain); a power of it comes here as `exp`."""
        text = self._print(expr.args[0])
        return f"\\left({text}\\right)^{{{exp}}}" if exp else text

    def _print_Where(self, expr, exp=None):
        condition, a, b = expr.args
        if (a, b) == (1, 0):  # the indicator of the condition, Iverson's bracket: as wide as the condition
            text = rf"\left[{self._print(condition)}\right]"
            return f"{text}^{{{exp}}}" if exp else text
        text = (
            r"\begin{cases} " + self._print(a) + r" & \text{if}\ " + self._print(condition)
            + r" \\ " + self._print(b) + r" & \text{otherwise} \end{cases}"
        )
        return f"\\left({text}\\right)^{{{exp}}}" if exp else text

    def _print_Infinity(self, expr):
        return r"\infty"

    def _print_NegativeInfinity(self, expr):
        return r"-\infty"

    def _print_NaN(self, expr):
        return r"\text{NaN}"

    def _print_BooleanTrue(self, expr):
        return r"\text{true}"

    def _print_BooleanFalse(self, expr):
        return r"\text{false}"

    def _print_NDimArray(self, expr):
        if expr.rank() == 1:
            return _vector([self._print(e) for e in expr])
        return super()._print_NDimArray(expr)

    _print_ImmutableDenseNDimArray = _print_NDimArray

    def _print_MatrixBase(self, expr):
        return super()._print_MatrixBase(expr)

    def _print_ndarray(self, array) -> str:
        if array.ndim == 0:
            return float_latex(float(array))
        if array.ndim == 1:
            return _vector([float_latex(float(v)) for v in array])
        rows = (" & ".join(float_latex(float(v)) for v in row) for row in array)
        return r"\begin{bmatrix}" + r"\\".join(rows) + r"\end{bmatrix}"  # as SymPy sets a Matrix: one value, one text

    def _print_TensorList(self, value) -> str:
        """A list of tensors of different shapes (grad(L, [W, b])): its entries in brackets."""
        return r"\left[ " + r",\; ".join(self._print(e) for e in value.entries) + r" \right]"

    _print_ListAt = _print_TensorList

    def _print_bool(self, value) -> str:
        return r"\text{true}" if value else r"\text{false}"

    _print_bool_ = _print_bool

    def _print_float(self, value) -> str:
        return float_latex(float(value))

    _print_floating = _print_float

    def _print_Shown(self, shown) -> str:
        """Named shared parts as an aligned block, then the value and the size a summary stands for;
        a tensor value's parts after it (`\\text{where } s = …`)."""
        if shown.tensor:
            with self.tensor_order(True):
                text = self._print(shown.value)
                return where_latex(self, text, shown.named) if shown.named else text
        text = self._print(shown.value)
        if shown.shape:
            size = shape_text(shown.shape).replace("×", r" \times ")
            text += rf" \in \mathbb{{R}}^{{{size}}}"
        if not shown.named:
            return text
        rows = [f"{self._print(name)} &= {self._print(expr)}" for name, expr in shown.named]
        return "\\begin{aligned}\n" + " \\\\\n".join(rows + [f"&{text}"]) + "\n\\end{aligned}"

    # --- gradlang's records ---------------------------------------------------------

    def _print_Result(self, result) -> str:
        """Derivations, then the value, then attachments, one per line."""
        with names_shown(result.bound):  # pi[2] beside a name pi2 keeps its brackets
            parts = [self._print(step) for step in result.steps]
            parts.append(self._print(value_shown(result, self._settings["full"])))
        parts.extend(self._print(attachment) for attachment in result.attachments)
        return "\n".join(parts)


def value_shown(result, full: bool):
    """The value as plain text and pretty show it: under a derivation that names parts, with its names (the
    user's pi, not a letter of the value printer's own), its other parts named apart from those."""
    from gradlang.render.shown import derivation_names, in_its_form, shown

    form = in_its_form(result)
    if form is None:
        return shown_result(result, full)
    return shown(form, full, result.bound | derivation_names(result))


_ROW_CHARACTERS = 60  # a vector whose entries are longer than this together is set as a column (a row would overflow the page)


def _vector(entries: list) -> str:
    """A row vector, or, when it would not fit a letter page, the transpose of a column."""
    if sum(len(e) for e in entries) <= _ROW_CHARACTERS:
        return r"\begin{bmatrix}" + " & ".join(entries) + r"\end{bmatrix}"
    return r"\begin{bmatrix}" + r" \\ ".join(entries) + r"\end{bmatrix}^{\top}"


_PRINTER = GradlangLatexPrinter()
_FULL = GradlangLatexPrinter({"full": True})


def to_latex(value, full: bool = False) -> str:
    """A value or a record as a LaTeX fragment (no surrounding $ or \\[)."""
    return (_FULL if full else _PRINTER).doprint(value)
