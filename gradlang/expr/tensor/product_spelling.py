"""How an einsum is written: the call that reads back in plain, a teacher's notation in pretty and LaTeX.

Plain writes `einsum("bi,bj->ij", delta, x)`, which the grammar reads back as
the same node. Pretty and LaTeX write the matrix-calculus form where the
product is one of matrices and vectors (`δᵀ x`, `Wᵀ δ`, `u vᵀ`, `uᵀ v`, `Aᵀ`):
two operands of rank at most 2 with at most one letter summed, each letter
in the output or summed between the two. Anything else is written in index
notation with its sums shown (`Σ_d Q_{btd} K_{bsd}`, LaTeX `\\sum_{d}`), the
output's letters after it where their order is not the order they are read in.
"""

from __future__ import annotations

from sympy.printing.precedence import PRECEDENCE, precedence

from gradlang.expr.tensor import subscripts


class EinsumSpelling:
    """The spellings of an Einsum node (its args: the explicit subscripts, then the operands).

    `infix`: pretty and LaTeX write it as a juxtaposition (W x, Σ_j A_{ij} x_j), which a factor of ⊙ or a
    postfix mark brackets."""

    infix = True
    postfix = bare_first = False
    plain_template = 'einsum("{spec}", {all})'

    def plain(self, node, printer) -> str:
        operands = ", ".join(printer._print(a) for a in node.args[1:])
        return f'einsum("{node.args[0].name}", {operands})'

    def numpy(self, node, printer) -> str:
        operands = ", ".join(printer._print(a) for a in node.args[1:])
        return f'numpy.einsum("{node.args[0].name}", {operands}, optimize=True)'

    def helper(self) -> None:
        return None

    def line(self, node, printer) -> str:
        return _written(node, lambda a: _text(printer, a), "line")

    def latex(self, node, printer) -> str:
        return _written(node, lambda a: printer._print(a), "latex")

    def pretty(self, node, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(_written(node, lambda a: _text(printer, a), "line"))


def _text(printer, arg) -> str:
    """An operand on one line: the pretty printer's picture when it is one line, else its plain text."""
    form = printer._print(arg)
    picture = getattr(form, "picture", None)
    if picture is not None:
        return picture[0] if len(picture) == 1 else str(arg)
    return str(form)


_MARKS = {"line": ("ᵀ", "({})", "Σ_{}", "{}_{{{}}}"), "latex": (r"^{\top}", r"\left({}\right)", r"\sum_{{{}}}", "{}_{{{}}}")}


def _written(node, spell, form: str) -> str:
    spec, operands = node.spec, node.args[1:]
    matrix = _matrix_form(spec, [len(letters) for letters in spec.inputs])
    if matrix is not None:
        return _matrix_text(matrix, operands, spell, form)
    order = _permutation(spec)
    if order is not None:
        return (r"\operatorname{{transpose}}_{{{}}}\left({}\right)" if form == "latex" else "transpose({1}, {0})").format(
            "(" + ", ".join(str(k) for k in order) + ")", spell(operands[0]))
    return _index_text(spec, operands, spell, form)


def _permutation(spec: subscripts.Spec):
    """The axes of a one-operand einsum that only reorders them ("abc->cab" is (2, 0, 1)), else None."""
    if len(spec.inputs) != 1 or len(set(spec.inputs[0])) != len(spec.inputs[0]) \
            or sorted(spec.inputs[0]) != sorted(spec.output):
        return None
    return tuple(spec.inputs[0].index(letter) for letter in spec.output)


def _matrix_form(spec: subscripts.Spec, ranks: list):
    """[(operand position, transposed?), …] in the order written, where the einsum is a matrix product; else None."""
    if any(r > 2 for r in ranks) or len(spec.output) > 2 or any(len(set(s)) != len(s) for s in spec.inputs):
        return None
    if len(spec.inputs) == 1:
        (letters,) = spec.inputs
        if len(letters) == 2 and spec.output == letters[::-1]:
            return [(0, True)]
        return [(0, False)] if spec.output == letters else None
    if len(spec.inputs) != 2:
        return None
    a, b = spec.inputs
    shared = set(a) & set(b)
    if len(shared) > 1 or any(x in spec.output for x in shared) or set(spec.output) != (set(a) | set(b)) - shared:
        return None
    if not shared:  # the outer product u vᵀ
        if len(a) == len(b) == 1 and len(spec.output) == 2:
            return [(0, False), (1, True)] if spec.output == a + b else [(1, False), (0, True)]
        return None
    return _contraction(a, b, spec.output, shared.pop())


def _contraction(a: tuple, b: tuple, output: tuple, c: str):
    """The product of two operands over one shared letter c, the matrix first where the output is a vector."""
    free_a, free_b = tuple(x for x in a if x != c), tuple(x for x in b if x != c)
    if len(output) == 0:
        return [(0, True), (1, False)]  # uᵀ v
    order = [(0, a), (1, b)]
    if output != free_a + free_b:
        if output != free_b + free_a:
            return None
        order.reverse()
    if len(order[0][1]) == 1:  # a vector times a matrix: written as the matrix (transposed) times the vector
        order.reverse()
    (i, left), (j, right) = order
    return [(i, len(left) == 2 and left[-1] != c), (j, len(right) == 2 and right[0] != c)]


def _matrix_text(parts: list, operands, spell, form: str) -> str:
    mark, wrap = _MARKS[form][0], _MARKS[form][1]
    written = []
    for position, transposed in parts:
        operand = operands[position]
        text = spell(operand)
        simple = precedence(operand) >= PRECEDENCE["Func" if transposed else "Pow"]
        text = text if simple else wrap.format(text)
        written.append(text + (mark if transposed else ""))
    return " ".join(written)


def _index_text(spec: subscripts.Spec, operands, spell, form: str) -> str:
    mark, wrap, total, indexed = _MARKS[form]
    pieces = []
    summed = spec.summed()
    if summed:
        letters = ",".join(summed)
        pieces.append(total.format(letters if form == "latex" or len(summed) == 1 else "{" + letters + "}"))
    for operand, letters in zip(operands, spec.inputs):
        text = spell(operand)
        bare = precedence(operand) >= PRECEDENCE["Func"] and not getattr(getattr(operand, "spelling", None), "infix", False)
        text = text if bare else wrap.format(text)
        pieces.append(indexed.format(text, "".join(letters)))
    read = tuple(dict.fromkeys(x for letters in spec.inputs for x in letters if x in spec.output))
    body = " ".join(pieces)
    if read == spec.output:
        return body
    return indexed.format(wrap.format(body), "".join(spec.output))
