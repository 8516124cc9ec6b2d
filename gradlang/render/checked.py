"""The closing check of a derivation (core/explain_check.Check) in the four formats.

One line, the last of a derivation: `✓ equals grad; at x = [1, 3, 3]: [0.937,
-0.468, -0.468]`, or with a stop that changes the gradient `✓ equals diff; at
x = 3: value 9, gradient 3, true gradient 6`, or `✗ differs from grad; …` with
both numbers. Numbers are short (three significant digits, exact integers and
small fractions as they are) and long vectors are summarised: the check is a
glance, the value printed below the derivation has every digit.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.listed import is_list
from gradlang.expr.values import elements, shape_of, to_symbolic
from gradlang.render.latex import text_escape, to_latex
from gradlang.render.plain import to_plain

_SHOWN = 6          # components shown before a vector is summarised
_EXACT_CHARS = 8    # an exact number this short is shown as it is (9, 3/4); longer ones rounded
_SYMBOLIC_CHARS = 40
_WORDS = {"jacobian": "Jacobian", "hessian": "Hessian"}


def _word(check) -> str:
    """What the derivative is called beside the value: gradient, Jacobian, Hessian."""
    return _WORDS.get(check.operation, "gradient")


def _scalar(e, minus: str) -> str:
    """A short number: exact when short, else three significant digits; a short expression as text."""
    if isinstance(e, sp.Basic) and not e.is_number:
        text = to_plain(e)
        return text if len(text) <= _SYMBOLIC_CHARS else "…"
    text = to_plain(e)
    if not (isinstance(e, (sp.Integer, sp.Rational)) and len(text) <= _EXACT_CHARS):
        try:
            text = format(float(e), ".3g")
        except (TypeError, ValueError):
            pass
    return text.replace("-", minus)


def numbers(value, minus: str = "-", scalar=None, latex: bool = False) -> str:
    """A value in a few characters: 9, [0.937, -0.468, -0.468], [[1, 0], [0, 1]], [1, 2, 3, …, 9] (10 components)."""
    scalar = scalar or (lambda e: _scalar(e, minus))
    if is_list(value):  # grad(L, [W, b]) at a point: each gradient's numbers, in a list
        comma = r",\allowbreak " if latex else ", "
        return "[" + comma.join(numbers(e, minus, scalar, latex) for e in value.entries) + "]"
    value = to_symbolic(value)
    shape = shape_of(value)
    if not shape:
        return scalar(value)
    items = [scalar(e) for e in elements(value)]
    comma = r",\allowbreak " if latex else ", "  # TeX breaks inline mathematics only where it is allowed to
    if len(items) > _SHOWN:
        count = rf"\ ({len(items)}\ \text{{components}})" if latex else f" ({len(items)} components)"
        return "[" + comma.join(items[:3] + [r"\dots" if latex else "…", items[-1]]) + "]" + count
    if len(shape) == 2:
        rows = [items[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
        return "[" + comma.join("[" + comma.join(row) + "]" for row in rows) + "]"
    return "[" + comma.join(items) + "]"


def _said(check, show, operation: str) -> str:
    """The numbers: the derivative; with a stop, the value and the true one; when they differ, both."""
    return ", ".join(_said_items(check, show, operation))


def _said_items(check, show, operation: str) -> list[str]:
    """_said's items, each a phrase that reads alone (a long check breaks between them)."""
    if not check.agrees:
        return [f"derivation {show(check.derived)}", f"{operation} {show(check.engine)}"]
    if check.value is None:
        return [show(check.derived)]
    items = [f"value {show(check.value)}", f"{_word(check)} {show(check.derived)}"]
    return items + ([f"true {_word(check)} {show(check.true)}"] if check.true is not None else [])


def _at_words(check) -> str:
    """"at " a point the statement gave, "at a test point " one the check chose (only said on a failure)."""
    chosen = not check.agrees and check.value is None and all(isinstance(v, sp.Float) for _, v in check.point)
    return "at a test point " if chosen else "at "


def kind_words(check, size=lambda name, n: f"{name} = {n}") -> str:
    """How a check at a symbolic size was made, in words: "" at literal sizes (numbers, as always)."""
    if check.kind == "symbolic":
        return "symbolically: the same formula at every size"
    if check.kind == "numeric":
        sizes = ", ".join(size(name, n) for name, n in check.sizes)
        return "numerically: at a random point" + (f" with {sizes}" if sizes else "")
    return ""


def parts(check, minus: str = "-") -> tuple[str, str]:
    """(the verdict, the numbers): ("✓ equals grad", "at x = 3: 6"); the numbers are "" without a point.
    At a symbolic size the verdict says how it was found: "✓ equals grad (numerically: at a random point
    with n = 3)"."""
    mark = f"✓ equals {check.operation}" if check.agrees else f"✗ differs from {check.operation}"
    mark += f" ({kind_words(check)})" if check.kind else ""
    if not check.point:
        return mark, ""
    show = lambda value: numbers(value, minus)  # noqa: E731
    where = ", ".join(f"{name} = {show(value)}" for name, value in check.point)
    return mark, f"{_at_words(check)}{where}: {_said(check, show, check.operation)}"


WIDTH = 98  # plain columns of a check line (the CLI prefixes "# "); a longer one breaks between its phrases


def plain_line(check) -> str:
    mark, said = parts(check)
    line = f"{mark}; {said}" if said else mark
    if len(line) <= WIDTH:
        return line
    show = lambda value: numbers(value, "-")  # noqa: E731
    where = ", ".join(f"{name} = {show(value)}" for name, value in check.point)
    point = f"{_at_words(check)}{where}:"
    rows = [f"{mark}; {point}"] if len(mark) + len(point) + 2 <= WIDTH else [f"{mark};", f"   {point}"]
    current = ""
    for item in _said_items(check, show, check.operation):
        if current and len(current) + len(item) + 5 > WIDTH:
            rows.append("   " + current)
            current = item
        else:
            current = f"{current}, {item}" if current else item
    return "\n".join(rows + ["   " + current])


def rich_line(check):
    from rich.text import Text

    mark, said = parts(check, "−")
    text = Text(mark, style="bold green" if check.agrees else "bold red")
    if said:
        text.append("; " + said)
    return text


def latex_line(check) -> str:
    """An \\intertext line: the verdict in words, the point and the numbers as mathematics."""
    words = "Check: equals" if check.agrees else "Check failed: differs from"
    operation = rf"\texttt{{{check.operation}}}"
    if check.kind:  # the words escaped, each size as mathematics
        words_of = kind_words(check, lambda name, n: "\0")
        sizes = iter(f"${to_latex(sp.Symbol(name))} = {n}$" for name, n in check.sizes)
        operation += " (" + "".join(p if k % 2 else text_escape(p)
                                    for k, p in enumerate(_split(words_of, sizes))) + ")"
    if not check.point:
        return rf"\intertext{{\sloppy\small {words} {operation}.}}"
    math = lambda value: "$" + numbers(value, "-", _latex_scalar, latex=True) + "$"  # noqa: E731
    where = ", ".join(f"${to_latex(sp.Symbol(name))} = {numbers(v, '-', _latex_scalar, latex=True)}$" for name, v in check.point)
    said = _said(check, math, operation)
    return rf"\intertext{{\sloppy\small {words} {operation}; {text_escape(_at_words(check))}{where}: {said}.}}"


def _split(text: str, sizes) -> list:
    """Words and sizes alternating: the text split at each \0 mark, a size between the pieces."""
    pieces = text.split("\0")
    out = [pieces[0]]
    for piece in pieces[1:]:
        out += [next(sizes), piece]
    return out


def _latex_scalar(e) -> str:
    text = _scalar(e, "-")
    if isinstance(e, sp.Basic) and not e.is_number:
        return to_latex(e) if text != "…" else r"\dots"
    return text.replace("…", r"\dots")


def json_data(check) -> dict:
    """The check as data: agrees, the operation, and at the point every number in full."""
    from gradlang.render.json import encode_value

    data = {"agrees": check.agrees, "operation": check.operation, "text": plain_line(check)}
    if check.kind:  # at a symbolic size: how it was checked, and the random sizes of a numeric check
        data.update(kind=check.kind, sizes={name: n for name, n in check.sizes})
    if check.point:
        data["point"] = {name: encode_value(value) for name, value in check.point}
        data.update(derivation=encode_value(check.derived), engine=encode_value(check.engine))
    if check.value is not None:
        data.update(value=encode_value(check.value), true=encode_value(check.true))
    return data
