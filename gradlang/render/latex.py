"""LaTeX output: values as mathematics ready to paste into lecture notes.

SymPy's LatexPrinter with gradlang's notation: `\\operatorname{sg}\\left(u\\right)`
for stop_gradient, components as subscripts (`x_{0}`, `W_{0,1}`), vectors and
matrices as `bmatrix`, `where` as cases, and floats with exactly the digits
the plain form shows (`1 \\cdot 10^{-10}` for `1e-10`).
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter

from gradlang.render.plain import format_float
from gradlang.expr import primitives
from gradlang.lazy import np
from gradlang import limits


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


class GradlangLatexPrinter(LatexPrinter):
    """LatexPrinter with gradlang's functions, components and number format."""

    def _print_Add(self, expr, order=None):
        # SymPy orders a sum's terms as polynomial monomials, quadratic in their number: a long sum keeps its stored order.
        return super()._print_Add(expr, order="none" if len(expr.args) > limits.MAX_ORDERED_TERMS else order)

    printmethod = "_gradlang_latex"

    def __init__(self, settings=None):
        defaults = {"mat_str": "bmatrix", "mat_delim": "", "inv_trig_style": "full"}
        super().__init__({**defaults, **(settings or {})})

    def _print_Symbol(self, expr, style="plain"):
        parts = split_component(expr.name)
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

    def _print_Where(self, expr, exp=None):
        condition, a, b = expr.args
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
            return r"\begin{bmatrix}" + " & ".join(self._print(e) for e in expr) + r"\end{bmatrix}"
        return super()._print_NDimArray(expr)

    _print_ImmutableDenseNDimArray = _print_NDimArray

    def _print_ndarray(self, array) -> str:
        if array.ndim == 0:
            return float_latex(float(array))
        if array.ndim == 1:
            return r"\begin{bmatrix}" + " & ".join(float_latex(float(v)) for v in array) + r"\end{bmatrix}"
        rows = (" & ".join(float_latex(float(v)) for v in row) for row in array)
        return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"

    def doprint(self, expr):
        if isinstance(expr, np.ndarray):
            return self._print_ndarray(expr)
        if isinstance(expr, (bool, np.bool_)):
            return r"\text{true}" if expr else r"\text{false}"
        if isinstance(expr, (float, np.floating)):
            return float_latex(float(expr))
        return super().doprint(expr)


_PRINTER = GradlangLatexPrinter()


def to_latex(value) -> str:
    """The value as a LaTeX math-mode fragment (no surrounding $ or \\[)."""
    return _PRINTER.doprint(value)
