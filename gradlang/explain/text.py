"""Expressions as text for the renderers: gradlang plain syntax and LaTeX.

The project printers (gradlang.render.plain / .latex) are used when present;
until then small local printers give the same surface syntax (`x^2`,
`stop_gradient(x)`, `max(a, b)`, `where(c, a, b)`), never SymPy's class names.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.str import StrPrinter

_NAMES = {
    "StopGradient": "stop_gradient", "Maximum": "max", "Minimum": "min",
    "MaxShare": "max_share", "MinShare": "min_share", "Relu": "relu",
    "Round": "round", "Where": "where", "Abs": "abs", "ceiling": "ceil",
}


class _PlainPrinter(StrPrinter):
    """SymPy's str printer with gradlang's names and `^` for powers."""

    def _print_Pow(self, expr, rational=False):
        return super()._print_Pow(expr, rational).replace("**", "^")

    def _print_Function(self, expr):
        name = _NAMES.get(type(expr).__name__, type(expr).__name__)
        return f"{name}({self.stringify(expr.args, ', ')})"

    _print_Abs = _print_Function

    def _print_Symbol(self, expr):
        return expr.name

    def _print_Exp1(self, expr):
        return "exp(1)"


class _LatexPrinter(LatexPrinter):
    """SymPy's LaTeX printer with stop_gradient as \\operatorname{sg}."""

    def _print_StopGradient(self, expr, exp=None):
        return r"\operatorname{sg}\left(%s\right)" % self._print(expr.args[0])

    def _named(self, name, expr):
        args = ", ".join(self._print(a) for a in expr.args)
        return r"\operatorname{%s}\left(%s\right)" % (name.replace("_", r"\_"), args)

    def _print_Function(self, expr, exp=None):
        name = _NAMES.get(type(expr).__name__)
        if name is None:
            return super()._print_Function(expr, exp)
        text = self._named(name, expr)
        return f"{text}^{{{exp}}}" if exp else text

    def _print_Symbol(self, expr, style="plain"):
        name = expr.name
        if "[" in name:
            base, index = name.rstrip("]").split("[", 1)
            return f"{self._print(sp.Symbol(base))}_{{{index.replace(' ', '')}}}"
        return super()._print_Symbol(expr, style)


def _project_printer(module: str):
    try:
        imported = __import__(f"gradlang.render.{module}", fromlist=["x"])
    except ImportError:
        return None
    return getattr(imported, f"to_{module}", None)


def plain(value) -> str:
    """gradlang source text of a value."""
    printer = _project_printer("plain")
    return printer(value) if printer else _PlainPrinter({"order": None}).doprint(value)


def latex(value) -> str:
    """LaTeX of a value, stop_gradient as sg."""
    printer = _project_printer("latex")
    return printer(value) if printer else _LatexPrinter().doprint(value)


_LATEX_TEXT_ESCAPES = str.maketrans({
    "\\": r"\textbackslash{}", "_": r"\_", "^": r"\^{}", "#": r"\#", "%": r"\%",
    "&": r"\&", "$": r"\$", "{": r"\{", "}": r"\}",
    # pdflatex with amsmath knows no Unicode: the symbols explain writes in words, as math
    "→": r"$\to$", "—": "---", "∂": r"$\partial$", "∇": r"$\nabla$", "Σ": r"$\Sigma$",
    "≔": ":=", "·": r"$\cdot$", "−": "-", "̄": "", "✓": "ok",
    **{chr(0x2080 + i): f"$_{i}$" for i in range(10)},
    **{c: f"$^{i}$" for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
})


def latex_text(text: str) -> str:
    """Text safe inside \\text{...} (one pass, so no escape is escaped again)."""
    return text.translate(_LATEX_TEXT_ESCAPES)
