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

from dataclasses import dataclass

import sympy as sp

from gradlang.errors import GradlangError, ValueError
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.nodes import Entry, Ones, Outer, TensorOp, Zeros, shape_of
from gradlang.expr.tensor.spelling import Spelling
from gradlang.expr.tensor.axes import PerNode
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
        if len(shape_of(node)) > 2:  # no block matrix beyond rank 2: the call, its axis as a subscript
            texts = ", ".join(printer._print(p) for p in parts)
            return rf"\operatorname{{{self.name}}}_{{{axis}}}\left({texts}\right)"
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


class _Range(TensorOp):
    """A range along one axis (`axis`), its bounds the last two args."""

    axis = 0

    @property
    def bounds(self) -> tuple:
        return self.args[-2], self.args[-1]

    @property
    def shape(self):
        return _ranged_shape(shape_of(self.args[0]), self.axis, *self.bounds)


class SliceRows(_Range):
    """`v[a:b]`, `M[a:b]`, `X[a:b]`: the entries a to b − 1 along axis 0, at any rank; concat's adjoint on axis 0."""

    nargs = 3
    spelling = RangeSpelling("{0}[{1}:{2}]", r"{0}_{{1}:{2}}", "{0}[{1}:{2}]", "{0}[int({1}):int({2})]", postfix=True)

    @classmethod
    def eval(cls, base, start, stop):
        return _range_of(base, start, stop, 0)


class SliceColumns(_Range):
    """`M[:, a:b]`, `X[:, a:b]`: the entries a to b − 1 along axis 1, at any rank; concat's adjoint on axis 1."""

    spelling = RangeSpelling("{0}[:, {1}:{2}]", r"{0}_{:,{1}:{2}}", "{0}[:, {1}:{2}]", "{0}[:, int({1}):int({2})]",
                             postfix=True)
    axis = 1

    @classmethod
    def eval(cls, base, start, stop):
        return _range_of(base, start, stop, 1)


@dataclass(frozen=True)
class _AlongSpelling(PerNode):
    """`X[:, :, a:b]` (a colon for each axis before) or `X[..., a:b]` on the last axis: the subscript that reads back."""

    def _for(self, node, printer) -> Spelling:
        axis, rank_of = int(node.args[1]), len(shape_of(node.args[0]))
        lead = "..., " if axis == rank_of - 1 else ":, " * axis
        plain = "{0}[" + lead + "{2}:{3}]"
        latex = "{0}_{" + ",".join("{2}:{3}" if k == axis else ":" for k in range(rank_of)) + "}"
        numpy = "{0}[" + ":, " * axis + "int({2}):int({3})]"
        return RangeSpelling(plain, latex, plain, numpy, postfix=True)


class SliceAlong(_Range):
    """`X[:, :, a:b]`, `X[..., a:b]`: the entries a to b − 1 along axis 2 or later (args: the tensor, the axis,
    the bounds); concat's adjoint on that axis."""

    nargs = 4
    spelling = _AlongSpelling("{0}[{2}:{3}]", "{0}_{{2}:{3}}", "{0}[{2}:{3}]", "{0}[int({2}):int({3})]", postfix=True)

    @classmethod
    def eval(cls, base, axis, start, stop):
        return _range_of(base, start, stop, int(axis))

    @property
    def axis(self) -> int:
        return int(self.args[1])


def _ranged_shape(base: tuple, axis: int, start, stop) -> tuple:
    return base[:axis] + (sp.expand(stop - start),) + base[axis + 1:]


def ranged(base, axis: int, start, stop):
    """base[start:stop] along an axis (any axis of any rank)."""
    if axis >= 2:
        return SliceAlong(base, sp.Integer(axis), start, stop)
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
        return type(base)(*_ranged_shape(shape, axis, start, stop))
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


OPS = (Concat, Stack, SliceRows, SliceColumns, SliceAlong)


# --- components: how the component engine computes each node (lower.py's _BUILD reads COMPONENTS) ----------
# An array of components is held as nested lists (one level an axis), joined or cut at the node's axis's depth.


def _nested(value):
    """A component array as nested lists, one level per axis (a scalar stays itself)."""
    value = to_symbolic(value)
    items, shape = elements(value), tuple(int(n) for n in value.shape) if hasattr(value, "shape") else ()
    return _nest(list(items), shape)


def _nest(items: list, shape: tuple):
    if len(shape) <= 1:
        return items if shape else items[0]
    if shape[0] == 0:  # an empty range (x[1:t] at t = 1): no entries, at any depth
        return []
    step = len(items) // shape[0]
    return [_nest(items[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])]


def _flat(nested, depth: int) -> list:
    return [nested] if depth == 0 else [e for part in nested for e in _flat(part, depth - 1)]


def _rebuilt(node, nested, sizes: dict):
    """Nested lists as a component array of the node's shape at these sizes (an axis may be empty)."""
    shape = tuple(int(shapes.valued(n, sizes)) for n in shape_of(node))
    return from_elements(shape, _flat(nested, len(shape)))


def _at_depth(join, lists: list, depth: int):
    """`join` of these nested lists at this depth (the node's axis): below it, level by level."""
    if depth == 0:
        return join(lists)
    return [_at_depth(join, [part[i] for part in lists], depth - 1) for i in range(len(lists[0]))]


def _concat_components(node, args, sizes):
    joined = _at_depth(lambda lists: [e for part in lists for e in part], [_nested(a) for a in args[1:]], node.axis)
    return _rebuilt(node, joined, sizes)


def _stack_components(node, args, sizes):
    return _rebuilt(node, _at_depth(list, [_nested(a) for a in args[1:]], node.axis), sizes)


def _bound(value) -> int:
    if not isinstance(value, sp.Integer):
        raise ValueError(f"the range bound '{value}' needs a number to take components: add it to the at")
    return int(value)


def _range_components(node, args, sizes):
    nested = _nested(args[0])
    start, stop = (_bound(b) for b in args[len(node.args) - 2:])
    length = to_symbolic(args[0]).shape[node.axis]
    shapes.check_range(sp.Integer(start), sp.Integer(stop), sp.Integer(int(length)))
    return _rebuilt(node, _at_depth(lambda lists: lists[0][start:stop], [nested], node.axis), sizes)


COMPONENTS = {Concat: _concat_components, Stack: _stack_components,
              SliceRows: _range_components, SliceColumns: _range_components, SliceAlong: _range_components}
