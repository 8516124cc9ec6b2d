"""Long LaTeX formulas broken into rows that fit a letter page (issue 40), for render/derivation.py and
render/vector_lines.py: a sum between its terms, a product between its factors, a function's long
argument (or each of several long arguments, ending at its comma) inside \\Bigl( \\Bigr), which, unlike
\\left( \\right), may span rows. Widths are counted in characters of plain text, so the rows are the same
on every run.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.nodes import TensorOp, Var, rank as tensor_rank, shape_of as tensor_shape
from gradlang.render.plain import to_plain as plain

LATEX_LINE = 56   # characters of gradlang text per LaTeX line: a letter page's text width
LHS_HEAD = 10     # the width of ∂/∂x( before a broken left side, in the same characters


def pieces(expr, show, line: int = LATEX_LINE) -> list[str]:
    """An expression as LaTeX lines that fit the page (at most LATEX_LINE characters
    of plain text each, where the expression allows): a long sum is broken between
    its terms, a product between its factors, and a function or power of a long
    argument inside \\Bigl( \\Bigr), which, unlike \\left( \\right), may span lines. The expression is
    measured and broken as the derivation shows it (show.form: its lets and the user's names), so a stop that
    plain text writes sg(mean(u3)) is not broken as the formula the name u3 stands for."""
    form = getattr(show, "form", None)
    if form is not None and isinstance(expr, sp.Basic):
        expr = form(expr)
    if len(plain(expr)) <= line or not isinstance(expr, sp.Basic):
        return [show(expr)]
    if expr.is_Add or expr.is_Mul:
        return _joined(expr, show, line)
    if expr.is_Pow and expr.exp.is_Integer:
        inner = pieces(expr.base, show, line)
        return _wrapped_lines(r"\Bigl(", inner, r"\Bigr)^{%s}" % show(expr.exp))
    if isinstance(expr, TensorOp) and len(expr.args) > 1 and max(len(plain(a)) for a in expr.args) > line // 2:
        return _argument_broken(expr, show, line)
    if isinstance(expr, sp.Function) and len(expr.args) > 1 and not isinstance(expr, TensorOp):
        return _arguments_broken(expr, show, line)
    if isinstance(expr, sp.Function) and len(expr.args) == 1:
        hole = sp.Symbol("HOLE")
        prefix, _, suffix = show(expr.func(hole)).partition("HOLE")
        prefix = prefix.replace(r"{\left(", r"\Bigl(").replace(r"\left(", r"\Bigl(")
        suffix = suffix.replace(r"\right)}", r"\Bigr)").replace(r"\right)", r"\Bigr)")
        if r"\left" in prefix or r"\right" in suffix or prefix.count("{") != prefix.count("}"):
            return [show(expr)]
        if not prefix.endswith(r"\Bigl("):  # a postfix mark (uᵀ): the broken argument needs brackets of its own
            prefix, suffix = prefix + r"\Bigl(", r"\Bigr)" + suffix
        return _wrapped_lines(prefix, pieces(expr.args[0], show, line), suffix)
    return [show(expr)]


def _argument_broken(expr, show, line: int) -> list[str]:
    """A tensor operation of a long argument (u vᵀ with u long, A (B C) with B C long): that argument broken
    inside \\Bigl( \\Bigr)."""
    k = max(range(len(expr.args)), key=lambda i: len(plain(expr.args[i])))
    hole = Var("HOLE", tensor_shape(expr.args[k]))
    prefix, _, suffix = show(expr.func(*expr.args[:k], hole, *expr.args[k + 1:])).partition("HOLE")
    if k == 0:  # u vᵀ, outer(u, v): the brackets around u give way to \\Bigl( \\Bigr)
        prefix = prefix.replace(r"\left(", "")
        suffix = suffix.replace(r"\right)", "", 1) if suffix.startswith(r"\right)") else suffix
    elif prefix.rstrip().endswith(r"\left(") and suffix.startswith(r"\right)"):
        prefix, suffix = prefix.rstrip()[:-len(r"\left(")], suffix[len(r"\right)"):]
    if "HOLE" in suffix or prefix.count("{") != prefix.count("}") or k and prefix.count(r"\left") != prefix.count(r"\right"):
        return [show(expr)]
    return _wrapped_lines(prefix.rstrip() + r"\Bigl(", pieces(expr.args[k], show, line), r"\Bigr)" + suffix)


def _arguments_broken(expr, show, line: int) -> list[str]:
    """A function of several long arguments (norm(a, b) of two sums): one argument after another inside
    \\Bigl( \\Bigr), a row ending at a comma, each argument broken if long."""
    if len(expr.args) > 26:
        return [show(expr)]
    holes = [sp.Symbol(f"HOLE{chr(65 + k)}") for k in range(len(expr.args))]  # letters: HOLE1 would print as a subscript
    try:
        spelled = show(expr.func(*holes))
    except (TypeError, ValueError):  # a function whose arguments must be of a kind a symbol is not
        return [show(expr)]
    prefix, _, rest = spelled.partition(holes[0].name)
    suffix = rest.rpartition(holes[-1].name)[2]
    prefix, suffix = prefix.replace(r"\left(", r"\Bigl("), suffix.replace(r"\right)", r"\Bigr)")
    if not prefix.endswith(r"\Bigl(") or not suffix.startswith(r"\Bigr)") or r"\left" in prefix + suffix:
        return [show(expr)]
    lines: list[str] = []
    for k, argument in enumerate(expr.args):
        texts = pieces(argument, show, line)
        if k + 1 < len(expr.args):
            texts[-1] += ","
        lines += texts
    return _wrapped_lines(prefix, lines, suffix)


def _wrapped_lines(prefix: str, lines: list, suffix: str) -> list[str]:
    lines = list(lines)
    lines[0] = prefix + lines[0]
    lines[-1] = lines[-1] + suffix
    return lines


def _joined(expr, show, line: int = LATEX_LINE) -> list[str]:
    """A sum or product broken between its terms or factors, each part broken if long."""
    parts = list(expr.as_ordered_terms()) if expr.is_Add else list(expr.as_ordered_factors())
    lines, current, width = [], "", 0
    for k, part in enumerate(parts):
        texts = pieces(part, show, line) if expr.is_Add or not part.is_Add else _wrapped_lines(
            r"\Bigl(", pieces(part, show, line), r"\Bigr)")
        glue = "" if k == 0 else (" " if expr.is_Add and texts[0].lstrip().startswith("-") else
                                  (" + " if expr.is_Add else r" \odot " if tensor_rank(part) else r" \cdot "))
        size = len(plain(part))
        if current and (width + size > line or len(texts) > 1):
            lines.append(current)
            current, width = "", 0
        current += glue + texts[0]
        width += size
        if len(texts) > 1:
            lines += [current] + texts[1:-1]
            current, width = texts[-1], line
    return lines + [current] if current else lines


def breakable(expr, show) -> str:
    """An expression inside a sentence, where TeX breaks a line only at an operator outside every
    \\left( \\right): the rows of _pieces (whose brackets are \\Bigl( \\Bigr)) with a break allowed between them."""
    return r" \allowbreak ".join(pieces(expr, show, LATEX_LINE // 2))
