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

    def opens_sum(self, node) -> bool:
        """Written in index notation with a Σ in front, which would run on over a factor after it."""
        spec = node.spec
        return _matrix_form(spec, [len(s) for s in spec.inputs]) is None and _permutation(spec) is None \
            and bool(spec.summed()) and _in_reading_order(spec)

    def juxtaposed(self, node) -> bool:
        """Written as operands side by side (Dᵀ X, Σ_j A_{ij} x_j), which a power or a product brackets."""
        return len(node.args) > 2 or self.opens_sum(node)

    def line(self, node, printer) -> str:
        return "".join(_spelled(piece, node, printer, "line") for piece in _pieces(node, "line"))

    def latex(self, node, printer) -> str:
        return "".join(_spelled(piece, node, printer, "latex") for piece in _pieces(node, "latex"))

    def pretty(self, node, printer):
        """The pieces side by side, each operand as the pretty printer draws it (an exponent stays above it)."""
        from sympy.printing.pretty.stringpict import prettyForm, stringPict

        forms = []
        for piece in _pieces(node, "line"):
            if isinstance(piece, str):
                forms.append(prettyForm(piece))
                continue
            form = printer._print(node.args[1 + piece[0]])
            forms.append(prettyForm(*form.parens()) if piece[1] else form)
        binding = prettyForm.ADD if self.opens_sum(node) else prettyForm.MUL if len(forms) > 1 else prettyForm.ATOM
        return prettyForm(*stringPict.next(*forms), binding=binding)  # a Σ is bracketed as a factor: it would run on


def _spelled(piece, node, printer, form: str) -> str:
    if isinstance(piece, str):
        return piece
    text = printer._print(node.args[1 + piece[0]])
    if form == "line" and not isinstance(text, str):
        text = text.picture[0] if len(text.picture) == 1 else str(node.args[1 + piece[0]])
    if piece[1]:
        return rf"\left({text}\right)" if form == "latex" else f"({text})"
    return "{" + text + "}" if form == "latex" and piece[2] else text  # {t_{1}}_{bi}: one subscript each


_MARKS = {"line": ("ᵀ", "Σ_{}", "_{{{}}}"), "latex": (r"^{\top}", r"\sum_{{{}}}", "_{{{}}}")}


def _pieces(node, form: str) -> list:
    """The einsum as text pieces and operands (position, bracketed?), in matrix, permutation or index form."""
    spec, operands = node.spec, node.args[1:]
    matrix = _matrix_form(spec, [len(letters) for letters in spec.inputs])
    if matrix is not None:
        return _matrix_pieces(matrix, operands, form)
    order = _permutation(spec)
    if order is not None:
        axes = "(" + ", ".join(str(k) for k in order) + ")"
        if form == "latex":
            return [rf"\operatorname{{transpose}}_{{{axes}}}\left(", (0, False, False), r"\right)"]
        return ["transpose(", (0, False, False), f", {axes})"]
    return _index_pieces(spec, operands, form)


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


def _matrix_pieces(parts: list, operands, form: str) -> list:
    mark = _MARKS[form][0]
    pieces = []
    for k, (position, transposed) in enumerate(parts):
        operand = operands[position]
        simple = precedence(operand) >= PRECEDENCE["Func" if transposed else "Pow"] and not _juxtaposed(operand)
        pieces += ([" "] if k else []) + [(position, not simple, False)] + ([mark] if transposed else [])
    return pieces


def _juxtaposed(operand) -> bool:
    return getattr(getattr(operand, "spelling", None), "infix", False)


def _index_pieces(spec: subscripts.Spec, operands, form: str) -> list:
    _, total, indexed = _MARKS[form]
    pieces = []
    summed = spec.summed()
    if summed:
        letters = ",".join(summed)
        pieces.append(total.format(letters if form == "latex" or len(summed) == 1 else "{" + letters + "}") + " ")
    for k, (operand, letters) in enumerate(zip(operands, spec.inputs)):
        bare = precedence(operand) >= PRECEDENCE["Func"] and not _juxtaposed(operand)
        pieces += ([" "] if k else []) + [(k, not bare, True), indexed.format("".join(letters))]
    if _in_reading_order(spec):
        return pieces
    opened, closed = (r"\left(", r"\right)") if form == "latex" else ("(", ")")
    return [opened, *pieces, closed + indexed.format("".join(spec.output))]


def _in_reading_order(spec: subscripts.Spec) -> bool:
    """The output's letters in the order the operands first use them: the notation says the order itself."""
    return tuple(dict.fromkeys(x for letters in spec.inputs for x in letters if x in spec.output)) == spec.output
