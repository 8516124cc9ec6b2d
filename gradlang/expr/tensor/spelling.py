"""How a tensor operation is written in each output form, from one template per form.

A template names the arguments `{0}`, `{1}` (`{b0}`: argument 0 never wrapped, inside a call's own
parentheses where the template writes it twice, as `det({b0}) {0}⁻ᵀ`), the indices after the first
argument `{rest}` (`{rest_int}` as Python integers, for NumPy) and all the
arguments `{all}`. The plain form is gradlang source that reads back; LaTeX
and pretty are the notation of matrix calculus (`W x`, `u vᵀ`, `e_k`, `I`);
NumPy is whole-array code. An argument is put in parentheses where the
notation would otherwise bind it wrongly: an infix operation (`@`,
juxtaposition) wraps sums and products, a postfix one (`ᵀ`, `[k]`) wraps
anything that is not a name or a call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.pretty.stringpict import prettyForm, stringPict

from gradlang.expr.names_shown import shown

_HOLE = "\x00"  # where the next link of a chain goes, in the text of the link around it (no name holds one)
_FIELD = re.compile(r"\{(\d+|b\d+|rest|rest_int|all)\}")
_HELPER = re.compile(r"\b_gl_\w+")
_SUBSCRIPTS = str.maketrans("0123456789aeijklmnorstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑᵢⱼₖₗₘₙₒᵣₛₜᵤᵥₓ")


@dataclass(frozen=True)
class Spelling:
    """The four spellings of one tensor operation."""

    plain_template: str
    latex_template: str
    pretty_template: str
    numpy_template: str
    infix: bool = False  # written between its arguments: wrap sums and products
    postfix: bool = False  # written after its first argument: wrap anything compound
    bare_first: bool = False  # pretty/LaTeX write the first argument with a mark (uᵀv, ‖u‖)

    def plain(self, node, printer) -> str:
        if not self.plain_template.startswith("{0}"):  # a call: its parentheses are the brackets
            return _fill(self.plain_template, node, lambda i, a: printer._print(a), printer)
        return self._chained(self.plain_template, node, printer, "plain")

    def latex(self, node, printer) -> str:
        if _entry_beside_a_name(node):  # pi[2] beside a name pi2: \pi[2], as \pi_{2} is pi2
            return self._wrap(printer._print(node.args[0]), 0, node.args[0], "latex") + f"[{node.args[1]}]"
        base = inverse_transposed(node)
        if base is not None:  # A^{-\top}: a transpose over A^{-1} would be a double superscript
            return self._wrap(printer._print(base), 0, base, "latex") + r"^{-\top}"
        return self._chained(self.latex_template, node, printer, "latex")

    def line(self, node, printer) -> str:
        """The pretty notation on one line of text (W x, s sᵀ, e₁), for printers of lines such as explain's."""
        special = _pretty_special(self, node, printer)
        if special is not None:
            return special.picture[0]
        base = inverse_transposed(node)
        if base is not None:
            return self._wrap(printer._print(base), 0, base, "line") + "⁻ᵀ"
        return self._chained(self.pretty_template, node, printer, "line")

    def numpy(self, node, printer) -> str:
        return _fill(self.numpy_template, node, lambda i, a: printer._print(a), printer)

    def helper(self) -> str | None:
        """The helper of its own the NumPy template calls (`_gl_softmax_vector`), or None for NumPy's functions."""
        found = _HELPER.search(self.numpy_template)
        return found.group(0) if found else None

    def pretty(self, node, printer):
        special = _pretty_special(self, node, printer)
        if special is not None:
            return special
        links = self._links(node, self.pretty_template)
        pieces = self._pretty_pieces(self.pretty_template, links[-1], printer)
        for link in reversed(links[:-1]):
            pieces += self._pretty_pieces(self.pretty_template[len("{0}"):], link, printer)
        return prettyForm(*stringPict.next(*pieces)) if pieces else prettyForm("")

    def _pretty_pieces(self, template: str, node, printer) -> list:
        pieces = []
        for literal, field in _split(template):
            if literal:
                pieces.append(prettyForm(literal))
            if field is not None:
                pieces.extend(_pretty_field(self, field, node, printer))
        return pieces

    def _links(self, node, template: str) -> list:
        """The nodes of a left-nested chain of this operation written without brackets, outermost first.

        `W @ W @ … @ x` is MatMul(MatMul(…), x), nested as deep as the chain is
        long; printing it link by link keeps the printer's recursion as deep as
        one link, not one per operand (1000 operands passed Python's limit)."""
        links = [node]
        if not (self.infix and template.startswith("{0}")):
            return links
        while type(links[-1].args[0]) is type(node) and not self._needs_parens(0, links[-1].args[0]):
            links.append(links[-1].args[0])
        return links

    def _chained(self, template: str, node, printer, form: str) -> str:
        """The template filled link by link down a chain of this operation, left (W @ W @ x) or right
        (W @ (W @ x), as a gradient nests): each link's text around the next, with no recursion."""
        before, after = [], []
        side = self._descent(node, template)
        while side is not None:
            hole = lambda i, a, side=side: (self._wrap(_HOLE, i, a, form) if i == side  # noqa: E731
                                            else self._wrapped(printer, i, a, form))
            head, tail = _fill(template, node, hole, printer).split(_HOLE)
            before.append(head)
            after.append(tail)
            node = node.args[side]
            side = self._descent(node, template)
        inner = _fill(template, node, lambda i, a: self._wrapped(printer, i, a, form), printer)
        return "".join(before) + inner + "".join(reversed(after))

    def _descent(self, node, template: str) -> int | None:
        """The argument a chain goes on into: one of this node's own operation, else None."""
        if not self.infix:
            return None
        for index in (0, 1):
            if type(node.args[index]) is type(node) and f"{{{index}}}" in template:
                return index
        return None

    def _wrapped(self, printer, index: int, arg, form: str) -> str:
        return self._wrap(printer._print(arg), index, arg, form)

    def _wrap(self, text: str, index: int, arg, form: str) -> str:
        if self._needs_parens(index, arg):
            return rf"\left({text}\right)" if form == "latex" else f"({text})"
        if form == "latex" and index == 0 and self.latex_template.startswith("{0}_") and "_" in text:
            return "{" + text + "}"  # s1[0] as {s_{1}}_{0}: s_{1}_{0} is a double subscript LaTeX refuses
        if form == "latex" and f"{{{index}}}^" in self.latex_template and "^" in text:
            return "{" + text + "}"  # outer(1, x^2) as 1 {x^{2}}^{\top}: x^{2}^{\top} is a double superscript
        return text

    def _needs_parens(self, index: int, arg) -> bool:
        if self.bare_first and "{1}" in self.pretty_template:  # uᵀv: ᵀ binds to u alone, and v is a factor
            return not _is_simple(arg) if index == 0 else precedence(arg) < PRECEDENCE["Mul"]
        if self.postfix and index == 0:
            return not _is_simple(arg)
        if self.infix:
            level = precedence(arg)
            if hadamard_parts(arg) is not None:  # (u ⊙ v) xᵀ: ⊙ binds looser than juxtaposition
                return True
            return level < PRECEDENCE["Mul"] or (index > 0 and level <= PRECEDENCE["Mul"])
        return False


def _is_simple(arg) -> bool:
    """A name, a number or a call: nothing a postfix mark could bind into."""
    from gradlang.expr.tensor.nodes import TensorOp

    if isinstance(arg, TensorOp):  # a call, not one spelled as a product (the cofactors, det(A) A⁻ᵀ)
        return arg.spelling.plain_template.endswith(")") and not arg.spelling.infix and arg.precedence >= PRECEDENCE["Func"]
    return isinstance(arg, (sp.Symbol, sp.Integer)) or (isinstance(arg, sp.Function))


def _split(template: str):
    """(literal, field) pairs of a template; the last field may be None."""
    position = 0
    for match in _FIELD.finditer(template):
        yield template[position : match.start()], match.group(1)
        position = match.end()
    yield template[position:], None


def _fill(template: str, node, argument, printer) -> str:
    def replace(match):
        field = match.group(1)
        if field == "rest":
            return ", ".join(printer._print(a) for a in node.args[1:])
        if field == "rest_int":
            return ", ".join(f"int({printer._print(a)})" for a in node.args[1:])
        if field == "all":
            return ", ".join(printer._print(a) for a in node.args)
        if field.startswith("b"):
            return printer._print(node.args[int(field[1:])])
        return argument(int(field), node.args[int(field)])

    return _FIELD.sub(replace, template)


def _pretty_field(spelling: Spelling, field: str, node, printer) -> list:
    if field in ("rest", "rest_int", "all"):
        args = node.args[1:] if field != "all" else node.args
        return [prettyForm(", ".join(str(a) for a in args))]
    index = int(field.removeprefix("b"))
    form = printer._print(node.args[index])
    if not field.startswith("b") and spelling._needs_parens(index, node.args[index]):
        form = prettyForm(*form.parens())
    return [form]


def inverse_transposed(node):
    """A, for transpose(inv(A)) or inv(transpose(A)), written A⁻ᵀ as the Matrix Cookbook does; else None.

    Either mark alone is a superscript, and `A^{-1}^{\top}` is a double superscript LaTeX refuses."""
    kinds = tuple(type(n).__name__ for n in (node, *node.args[:1]))
    if kinds in (("Transpose", "Inv"), ("Inv", "Transpose")):
        return node.args[0].args[0]
    return None


def _entry_beside_a_name(node) -> bool:
    from gradlang.expr.tensor.nodes import Entry

    if not (isinstance(node, Entry) and isinstance(node.args[0], sp.Symbol) and len(node.args) == 2):
        return False
    return shown(f"{node.args[0].name}{node.args[1]}")


def _pretty_special(spelling: Spelling, node, printer):
    """Subscripts where the index is short: e₁, eₖ, xₖ, s₀ (else the template's brackets); A⁻ᵀ."""
    from gradlang.expr.tensor.nodes import Entry, OneHot

    base = inverse_transposed(node)
    if base is not None:
        inner = printer._print(base)
        inner = prettyForm(inner) if isinstance(inner, str) else inner  # a line printer's (render/pretty.to_line)
        if spelling._needs_parens(0, base):
            inner = prettyForm(*inner.parens())
        return prettyForm(*stringPict.next(inner, prettyForm("⁻ᵀ")))
    if isinstance(node, OneHot):
        return prettyForm("e" + _subscript(node.args[0], "[{}]"))
    if isinstance(node, Entry) and isinstance(node.args[0], sp.Symbol) and len(node.args) == 2:
        from sympy.printing.pretty.pretty_symbology import pretty_symbol

        name = node.args[0].name  # as the name alone prints: π for pi, z₁₂ for z12
        if name[-1].isdigit() or _entry_beside_a_name(node):  # z12[2] as z₁₂[2], never z₁₂₂; pi[2] beside pi2
            return prettyForm(pretty_symbol(name) + f"[{node.args[1]}]")
        return prettyForm(pretty_symbol(name) + _subscript(node.args[1], "[{}]"))
    return None


def _subscript(index, fallback: str) -> str:
    """k as a subscript (e_k, x₁) when it has one, else in brackets as gradlang writes it (x^2, not x**2)."""
    from gradlang.expr.source import to_source  # source.py reads the records, which read this module

    text = to_source(index)
    translated = text.translate(_SUBSCRIPTS)
    if len(text) <= 3 and translated != text or (text.isdigit() and len(text) <= 3):
        if all(not c.isascii() for c in translated):
            return translated
    return fallback.format(text)


def hadamard_parts(expr):
    """(scalar factors, tensor factors) of a product with two or more tensor factors, else None."""
    from gradlang.expr.tensor.nodes import rank

    if not isinstance(expr, sp.Mul):
        return None
    tensors = [f for f in expr.args if rank(f) > 0]
    if len(tensors) < 2:
        return None
    return [f for f in expr.args if rank(f) == 0], tensors


def _loose(factor) -> bool:
    """A factor of ⊙ that needs brackets: a sum, a product, or a juxtaposition (W x, u vᵀ)."""
    from gradlang.expr.tensor.nodes import TensorOp

    if isinstance(factor, TensorOp) and factor.spelling.infix:
        return True
    return isinstance(factor, (sp.Add, sp.Mul)) or precedence(factor) < PRECEDENCE["Mul"]


def hadamard_pretty(printer, expr):
    """u ⊙ v for the elementwise product of tensors, after its scalar factors: 2⋅y ⊙ (1 − tanh²(W x))."""
    parts = hadamard_parts(expr)
    if parts is None:
        return None
    scalars, tensors = parts
    pieces = []
    if scalars:
        pieces += [printer._print(sp.Mul(*scalars)), prettyForm("⋅")]
    for i, factor in enumerate(tensors):
        form = printer._print(factor)
        if _loose(factor):
            form = prettyForm(*form.parens())
        pieces += ([prettyForm(" ⊙ ")] if i else []) + [form]
    return prettyForm(*stringPict.next(*pieces), binding=prettyForm.MUL)


def hadamard_latex(printer, expr):
    """u \\odot v for the elementwise product of tensors."""
    parts = hadamard_parts(expr)
    if parts is None:
        return None
    scalars, tensors = parts
    texts = []
    for factor in tensors:
        text = printer._print(factor)
        wrap = _loose(factor)
        texts.append(rf"\left({text}\right)" if wrap else text)
    head = printer._print(sp.Mul(*scalars)) + " " if scalars else ""
    return head + r" \odot ".join(texts)


def _bmatrix(rows: list, rank: int, printer) -> str:
    """A vector as a column, a matrix as itself, a tensor of rank 3 or more as a row of its blocks along
    axis 0 (as SymPy's printer draws an array of that rank)."""
    if rank > 2:
        body = " & ".join(_bmatrix(block, rank - 1, printer) for block in rows)
    else:
        body = r" \\ ".join(" & ".join(printer._print(e) for e in (row if rank == 2 else [row])) for row in rows)
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


class ListSpelling:
    """How a Literal is written: as the list it is in plain and pretty, a bmatrix in LaTeX, an array in NumPy."""

    plain_template = "[{all}]"
    infix = postfix = bare_first = False

    def plain(self, node, printer) -> str:
        return node.spelled(printer._print)

    line = plain

    def latex(self, node, printer) -> str:
        return _bmatrix(node.rows(), len(node.shape), printer)

    def pretty(self, node, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(node.spelled(lambda e: str(printer._print(e))))

    def helper(self) -> None:
        return None

    def numpy(self, node, printer) -> str:
        if all(e.is_Number for e in node.entries):
            return f"numpy.array({node.spelled(lambda e: repr(float(e)))})"
        return f"numpy.array({node.spelled(printer._print)}, dtype=float)"  # scalars of tensors: 0-d arrays
