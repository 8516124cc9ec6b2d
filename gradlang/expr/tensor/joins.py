"""Joining tensors and taking ranges of them: `concat([A, B], axis)`, `stack([A, B], axis)` (section 3b),
and the ranges `v[a:b]`, `M[:, a:b]` that concat's adjoint is made of.

`concat` of `R^m` and `R^n` is `R^(m + n)`: a size may be a sum of sizes
(shapes.py), valued at a point from its parts. `stack` adds an axis whose size
is the number of entries; the engine holds rank at most 2, so stack joins
vectors into a matrix and refuses matrices by the rank they
would need. Each node's args are the axis (a SymPy integer in 0..rank-1)
and then the entries, so a list of any length is one node.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import GradlangError, ValueError
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.nodes import Entry, Ones, Outer, TensorOp, Zeros, shape_of
from gradlang.expr.tensor.spelling import Spelling
from gradlang.expr.values import elements, from_elements, to_symbolic


class JoinSpelling:
    """How concat and stack are written: the call that reads back in plain and pretty, a block matrix in
    LaTeX (`[a; b]` stacked blocks; stack's entries are rows, aᵀ, on axis 0), NumPy's own function."""

    infix = postfix = bare_first = False

    def __init__(self, name: str, numpy: str):
        self.name, self.numpy_name = name, numpy
        self.plain_template = f"{name}({{all}})"

    def plain(self, node, printer) -> str:
        parts = ", ".join(printer._print(a) for a in node.args[1:])
        return f"{self.name}([{parts}], {int(node.args[0])})"

    line = plain

    def pretty(self, node, printer):
        """The call, its entries as the pretty printer draws them (an exponent stays above its line)."""
        from sympy.printing.pretty.stringpict import prettyForm, stringPict

        pieces = [prettyForm(f"{self.name}([")]
        for k, part in enumerate(node.args[1:]):
            pieces += ([prettyForm(", ")] if k else []) + [printer._print(part)]
        return prettyForm(*stringPict.next(*pieces, prettyForm(f"], {int(node.args[0])})")))

    def latex(self, node, printer) -> str:
        axis, parts = int(node.args[0]), node.args[1:]
        rowed = self.name == "stack" and axis == 0  # each vector a row: aᵀ
        texts = [printer._print(p) + (r"^{\top}" if rowed else "") for p in parts]
        body = " & ".join(texts) if axis == 1 else r" \\ ".join(texts)
        return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"

    def helper(self) -> None:
        return None

    def numpy(self, node, printer) -> str:
        parts = ", ".join(printer._print(a) for a in node.args[1:])
        return f"numpy.{self.numpy_name}(({parts},), axis={int(node.args[0])})"


class Row(TensorOp):
    """`M[i, :]` (or `M[i]`): row i of a matrix, a vector. Row j of a stack is its entry j, of 𝟙 vᵀ it is v."""

    nargs = 2
    # plain `M[i]`: M[i] is row i (section 3)
    spelling = Spelling("{0}[{1}]", r"{0}_{{1},:}", "{0}[{1}, :]", "{0}[int({1}), :]", postfix=True)

    @classmethod
    def eval(cls, base, index):
        return _picked(base, index, 0)

    @property
    def shape(self):
        return shape_of(self.args[0])[1:]


class Column(TensorOp):
    """`M[:, j]`: column j of a matrix, a vector. Column j of a stack on axis 1 is its entry j, of u 𝟙ᵀ it is u."""

    nargs = 2
    spelling = Spelling("{0}[:, {1}]", r"{0}_{:,{1}}", "{0}[:, {1}]", "{0}[:, int({1})]", postfix=True)

    @classmethod
    def eval(cls, base, index):
        return _picked(base, index, 1)

    @property
    def shape(self):
        return shape_of(self.args[0])[:1]


def _picked(base, index, axis: int):
    """Line `index` along `axis` where the formula says it without a node: a stack's entry, an outer
    product's other factor when one factor is ones (the adjoint of a matrix product reaching a stack)."""
    if base == 0:
        return sp.S.Zero
    if isinstance(base, Stack) and base.axis == axis and index.is_Integer and 0 <= index < len(base.parts):
        return base.parts[int(index)]
    if isinstance(base, Outer) and _shape(base.args[axis]) != (None,):  # of u vᵀ: u_i v (v_j u)
        picked = base.args[axis]
        return base.args[1 - axis] * (1 if isinstance(picked, Ones) else Entry(picked, index))
    if isinstance(base, (sp.Add, sp.Mul)) and all(len(_shape(a)) in (0, 2) for a in base.args):
        picks = [_picked(a, index, axis) if _shape(a) else a for a in base.args]  # elementwise: line by line
        if all(p is not None for p in picks):
            return base.func(*picks)
    return None


def _shape(expr) -> tuple:
    """The shape, or none where the formula's parts have been named (a printer's shared part)."""
    try:
        return shape_of(expr)
    except GradlangError:
        return (None,)


class Join(TensorOp):
    """A node whose args are an axis and then its entries."""

    @property
    def axis(self) -> int:
        return int(self.args[0])

    @property
    def parts(self) -> tuple:
        return self.args[1:]


class Concat(Join):
    """`concat([A, B], axis)`: the entries joined along an existing axis (np.concatenate)."""

    spelling = JoinSpelling("concat", "concatenate")

    @property
    def shape(self):
        return shapes.concat([shape_of(p) for p in self.parts], self.axis)


class Stack(Join):
    """`stack([u, v], axis)`: the entries of one shape along a new axis (np.stack); `[u, v]` of vectors is this."""

    spelling = JoinSpelling("stack", "stack")

    @property
    def shape(self):
        return shapes.stack([shape_of(p) for p in self.parts], self.axis)


class RangeSpelling(Spelling):
    """A range is written after its base: anything but a name or a call of the language is bracketed,
    so pretty's (ℯ^u)[0:m] is never read as an exponent's subscript."""

    def _needs_parens(self, index: int, arg) -> bool:
        if index:
            return False
        return not (isinstance(arg, sp.Symbol) or isinstance(arg, TensorOp) and not arg.spelling.infix
                    and arg.spelling.plain_template.endswith(")"))


class SliceRows(TensorOp):
    """`v[a:b]`, `M[a:b]`: the entries (rows) a to b − 1 along axis 0; concat's adjoint on axis 0."""

    nargs = 3
    spelling = RangeSpelling("{0}[{1}:{2}]", r"{0}_{{1}:{2}}", "{0}[{1}:{2}]", "{0}[int({1}):int({2})]", postfix=True)

    @classmethod
    def eval(cls, base, start, stop):
        return _range_of(base, start, stop, 0)

    @property
    def shape(self):
        base = shape_of(self.args[0])
        return (sp.expand(self.args[2] - self.args[1]),) + base[1:]


class SliceColumns(TensorOp):
    """`M[:, a:b]`: the columns a to b − 1 of a matrix; concat's adjoint on axis 1."""

    nargs = 3
    spelling = RangeSpelling("{0}[:, {1}:{2}]", r"{0}_{:,{1}:{2}}", "{0}[:, {1}:{2}]", "{0}[:, int({1}):int({2})]",
                        postfix=True)

    @classmethod
    def eval(cls, base, start, stop):
        return _range_of(base, start, stop, 1)

    @property
    def shape(self):
        base = shape_of(self.args[0])
        return base[:1] + (sp.expand(self.args[2] - self.args[1]),)


def ranged(base, axis: int, start, stop):
    """base[start:stop] along an axis."""
    return (SliceRows if axis == 0 else SliceColumns)(base, start, stop)


def _same(a, b) -> bool:
    return sp.expand(a - b) == 0


def _range_of(base, start, stop, axis: int):
    """A range the formula says without a node: all of the base, zero of zero, one entry of a concat on the
    same axis (times the scalars beside it): concat's adjoint of a concat gives each its own part."""
    if base == 0:
        return sp.S.Zero
    shape = shape_of(base)
    if len(shape) <= axis:  # a name standing for the base (a shared part the printers named): kept as written
        return None
    if start == 0 and _same(stop, shape[axis]):
        return base
    if isinstance(base, sp.Mul):
        tensors = [f for f in base.args if shape_of(f)]
        inner = _range_of(tensors[0], start, stop, axis) if len(tensors) == 1 else None
        return None if inner is None else sp.Mul(*(f for f in base.args if not shape_of(f))) * inner
    if isinstance(base, (Ones, Zeros)):  # 𝟙[a:b] is 𝟙 of length b − a
        return type(base)(*(shape[:axis] + (sp.expand(stop - start),) + shape[axis + 1:]))
    if isinstance(base, Outer) and len(shape) == 2:  # (u vᵀ)[a:b] = u[a:b] vᵀ, (u vᵀ)[:, a:b] = u v[a:b]ᵀ
        u, v = base.args
        return Outer(SliceRows(u, start, stop), v) if axis == 0 else Outer(u, SliceRows(v, start, stop))
    if isinstance(base, Concat) and base.axis == axis:
        offset = sp.S.Zero
        for part in base.parts:
            size = shape_of(part)[axis]
            if _same(start, offset) and _same(stop, offset + size):
                return part
            offset += size
    return None


OPS = (Concat, Stack, SliceRows, SliceColumns)


# --- components: how the component engine computes each node (lower.py's _BUILD reads COMPONENTS) ----------


def _nested(value) -> list:
    """A component vector as its list, a component matrix as its list of rows."""
    return [list(row) for row in value.tolist()] if len(value.shape) == 2 else list(value)


def _rebuilt(rows: list, matrix: bool):
    """Components from a list (a vector) or a list of rows (a matrix)."""
    if not matrix:
        return from_elements((len(rows),), rows)
    return from_elements((len(rows), len(rows[0])), [e for row in rows for e in row])


def _concat_components(node, args, sizes):
    parts = [_nested(to_symbolic(a)) for a in args[1:]]
    matrix = len(shape_of(node)) == 2
    if node.axis == 0:
        return _rebuilt([row for part in parts for row in part], matrix)
    return _rebuilt([[e for part in parts for e in part[i]] for i in range(len(parts[0]))], True)


def _stack_components(node, args, sizes):
    rows = [elements(to_symbolic(a)) for a in args[1:]]
    if node.axis == 1:
        rows = [list(column) for column in zip(*rows)]
    return _rebuilt(rows, True)


def _bound(value) -> int:
    if not isinstance(value, sp.Integer):
        raise ValueError(f"the range bound '{value}' needs a number to take components: add it to the at")
    return int(value)


def _range_components(node, args, sizes):
    rows = _nested(to_symbolic(args[0]))
    start, stop = _bound(args[1]), _bound(args[2])
    shapes.check_range(sp.Integer(start), sp.Integer(stop), sp.Integer(len(rows if isinstance(node, SliceRows)
                                                                           else rows[0])))
    if isinstance(node, SliceRows):
        return _rebuilt(rows[start:stop], len(shape_of(node)) == 2)
    return _rebuilt([row[start:stop] for row in rows], True)


COMPONENTS = {Concat: _concat_components, Stack: _stack_components,
              SliceRows: _range_components, SliceColumns: _range_components}
