"""Products and shape operations of any rank (section 3b): `einsum`, `reshape`, `take` and take's adjoint.

`Einsum(spec, A, B, …)` is one node whatever its rank: its first argument is
its subscripts made explicit (subscripts.py), a SymPy `Str` (an atom with no
symbols, so no pass differentiates or substitutes it). `A @ B` beyond rank 2
is an Einsum too (NumPy's matmul, batched over the leading axes), and so is
`transpose(X, (0, 2, 1))`. `Reshape(X, *sizes)` reads X's entries in
row-major order into a shape whose sizes may be products of sizes.
`Take(X, idx, axis)` gathers along an axis by an integer tensor (np.take);
its adjoint is `ScatterAdd(Ȳ, idx, axis, n)`, which adds each slice back into
the place it was taken from (np.add.at), so an index taken twice receives twice.
"""

from __future__ import annotations

import itertools
import math

import sympy as sp
from sympy.core.symbol import Str

from gradlang import limits
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.tensor import shapes, subscripts
from gradlang.expr.tensor.nodes import Eye, Ones, TensorOp, Transpose, Zeros, shape_of
from gradlang.expr.tensor.axes import ExpandDims, Permute, Squeeze, tuple_text
from gradlang.expr.tensor.literals import Literal
from gradlang.expr.tensor.product_spelling import EinsumSpelling
from gradlang.expr.tensor.spelling import Spelling
from gradlang.expr.source import to_source
from gradlang.expr.values import describe_shape as describe, elements, from_elements, to_symbolic
from gradlang.lazy import np


class Einsum(TensorOp):
    """`einsum("bij,bjk->bik", A, B)`: NumPy's Einstein sum; args are the explicit subscripts, then the operands."""

    spelling = EinsumSpelling()

    @classmethod
    def eval(cls, spec, *operands):
        """0 where an operand is 0 (it is linear in each); zeros of its shape where one is zeros(…)."""
        if any(o == 0 for o in operands):
            return sp.S.Zero
        if any(isinstance(o, Zeros) for o in operands):
            shape = cls(spec, *operands, evaluate=False).shape
            return Zeros(*shape) if shape else sp.S.Zero
        letters = subscripts.read(spec.name)
        if len(operands) == 1 and letters.inputs[0] == letters.output:  # einsum("ij->ij", A) is A
            return operands[0]
        factors, kept = _scalars_out(operands)
        return sp.Mul(*factors) * cls(spec, *kept) if factors else None

    @property
    def spec(self) -> subscripts.Spec:
        return subscripts.read(self.args[0].name)

    @property
    def operands(self) -> tuple:
        return self.args[1:]

    @property
    def shape(self):
        known = self.__dict__.get("_known_shape")
        if known is None:
            known = self.__dict__["_known_shape"] = self.spec.shape([shape_of(o) for o in self.operands])
        return known


def _scalars_out(operands) -> tuple:
    """(the scalar factors of the operands, the operands without them): an einsum is linear in each operand, so
    einsum(2 u, A) is 2 einsum(u, A), and SymPy's algebra sees the two as one term."""
    factors, kept = [], []
    for operand in operands:
        if isinstance(operand, sp.Mul):
            scalars = [f for f in operand.args if not shape_of(f)]
            if scalars and len(scalars) < len(operand.args):
                factors += scalars
                operand = sp.Mul(*(f for f in operand.args if shape_of(f)))
        kept.append(operand)
    return factors, kept


def einsum(text: str, operands: list):
    """The Einsum of NumPy's subscripts `text` over the operands, its spec checked and made explicit; an operand
    that only permutes its own operand's axes (transpose(K, (0, 2, 1))) is read through (Q Kᵀ as "btd,bsd->bts")."""
    spec = subscripts.parse(text, [shape_of(o) for o in operands])
    spec, operands = _through_permutations(spec, list(operands))
    return Einsum(Str(spec.text), *operands)


def _through_permutations(spec: subscripts.Spec, operands: list) -> tuple:
    """Each operand that is an einsum permuting one operand's axes replaced by that operand, its letters moved."""
    inputs = list(spec.inputs)
    for k, operand in enumerate(operands):
        if isinstance(operand, Permute):  # transpose(X, perm): its axis k is X's axis perm[k]
            order = [int(a) for a in operand.args[1:]]
            inputs[k] = tuple(inputs[k][order.index(j)] for j in range(len(order)))
            operands[k] = operand.args[0]
        elif isinstance(operand, Einsum) and len(operand.operands) == 1:
            inner = operand.spec
            (written,) = inner.inputs
            if len(set(written)) == len(written) and sorted(written) == sorted(inner.output):
                inputs[k] = tuple(inputs[k][inner.output.index(letter)] for letter in written)
                operands[k] = operand.operands[0]
    return subscripts.Spec(tuple(inputs), spec.output), operands


def contraction(node: Einsum, value_of) -> tuple:
    """(multiply-adds, entries of the largest intermediate) of the einsum contracted pairwise from the left, each
    intermediate keeping the letters still needed: what np.einsum's chosen order costs at most, about.
    `value_of(size)` is the size's number at the point (None where it has none: the cost is then unknown, 0)."""
    spec = node.spec
    sizes = {letter: value_of(size) for letter, size in spec.sizes([shape_of(o) for o in node.operands]).items()}
    if any(v is None for v in sizes.values()):
        return 0, 0
    held, work, largest = set(spec.inputs[0]), 0, 0
    for k, letters in enumerate(spec.inputs[1:], start=1):
        together = held | set(letters)
        work += math.prod(sizes[x] for x in together)
        later = {x for rest in spec.inputs[k + 1:] for x in rest} | set(spec.output)
        held = {x for x in together if x in later}
        largest = max(largest, math.prod(sizes[x] for x in held))
    return work or math.prod(sizes.values()), largest


def explicit(spec: subscripts.Spec, operands: list):
    """An Einsum of a spec already explicit (an adjoint's, a tangent's). A scalar operand is a factor in front;
    ones along every letter (a scalar's adjoint broadcast, "->ij" of ones(m), ones(n)) is ones of the shape."""
    spec, operands = _contracted(*_through_permutations(spec, list(operands)))
    scalars = [o for o, letters in zip(operands, spec.inputs) if not letters]
    kept = [(o, letters) for o, letters in zip(operands, spec.inputs) if letters]
    factor = sp.Mul(*scalars)
    inner = subscripts.Spec(tuple(letters for _, letters in kept), spec.output)
    if len(kept) == 1 and len(spec.output) == 2 and kept[0][1] == spec.output[::-1]:  # "ij->ji": Aᵀ, as written
        return factor * Transpose(kept[0][0])
    if all(isinstance(o, Ones) and len(letters) == 1 for o, letters in kept) \
            and len({letters for _, letters in kept}) == len(kept) == len(spec.output):
        return factor * Ones(*inner.shape([shape_of(o) for o, _ in kept])) if kept else factor
    return factor * Einsum(Str(inner.text), *(o for o, _ in kept))


def _contracted(spec: subscripts.Spec, operands: list) -> tuple:
    """The spec without its identities δ_pq where one of p, q is summed: that letter renamed to the other
    (Σ_q A_iq δ_qa = A_ia), so a Jacobian through eye(n) is the matrix itself."""
    for k, (operand, letters) in enumerate(zip(operands, spec.inputs)):
        if isinstance(operand, Eye) and len(set(letters)) == 2 and len(operands) > 1:
            p, q = letters
            gone, kept = (q, p) if q not in spec.output else (p, q) if p not in spec.output else (None, None)
            if gone is not None:
                rename = lambda ls: tuple(kept if x == gone else x for x in ls)  # noqa: E731
                inputs = tuple(rename(ls) for j, ls in enumerate(spec.inputs) if j != k)
                return _contracted(subscripts.Spec(inputs, spec.output), operands[:k] + operands[k + 1:])
    return spec, operands


def product_size(sizes) -> sp.Expr:
    return sp.Mul(*sizes) if sizes else sp.S.One


class ShapeSpelling(Spelling):
    """reshape's: its sizes as a tuple, `(b, t*d)`, and `(n,)` for one (a tuple of one, as Python writes it)."""

    def plain(self, node, printer) -> str:
        return f"reshape({printer._print(node.args[0])}, {_tuple(printer, node.args[1:])})"

    def line(self, node, printer) -> str:
        return f"reshape({self._wrapped(printer, 0, node.args[0], 'line')}, {_tuple(printer, node.args[1:])})"

    def pretty(self, node, printer):
        from sympy.printing.pretty.stringpict import prettyForm, stringPict

        sizes = prettyForm(", " + _tuple(lambda s: str(printer._print(s)), node.args[1:]) + ")")
        return prettyForm(*stringPict.next(prettyForm("reshape("), printer._print(node.args[0]), sizes))


def _tuple(printer, sizes) -> str:
    return tuple_text([str((printer if callable(printer) else printer._print)(s)) for s in sizes])


class Reshape(TensorOp):
    """`reshape(X, (b, t*d))`: X's entries in row-major order, in a shape of as many entries."""

    spelling = ShapeSpelling("reshape({0}, ({rest},))", r"\operatorname{reshape}_{{rest}}\left({0}\right)",
                        "reshape({0}, ({rest},))", "numpy.reshape({0}, ({rest_int},))")

    @classmethod
    def eval(cls, base, *sizes):
        if base == 0:
            return sp.S.Zero
        if isinstance(base, (Reshape, ExpandDims, Squeeze)):  # a reshape of a reshape (expand_dims and squeeze
            return Reshape(base.args[0], *sizes)  # are reshapes) reads the same entries in the same order
        tensors = [f for f in base.args if shape_of(f)] if isinstance(base, sp.Mul) else ()
        if len(tensors) == 1 and isinstance(tensors[0], Reshape):  # c reshape(A): the scalars stay in front
            return sp.Mul(*(f for f in base.args if f is not tensors[0])) * Reshape(tensors[0], *sizes)
        if tuple(sizes) == tuple(shape_of(base)):
            return base
        if isinstance(base, Zeros):
            return Zeros(*sizes)
        return None

    @property
    def shape(self):
        return tuple(self.args[1:])


def reshape(base, sizes: list):
    """reshape(X, sizes) with one size -1 at most (the one NumPy infers), the count of entries checked."""
    shape = shape_of(base)
    total = product_size(shape)
    sizes = [shapes.as_basic(s) for s in sizes]  # the evaluator's values: never text
    if any(not (s == -1 or s.is_integer and (s.is_positive or s.is_Symbol or not s.is_Number)) for s in sizes):
        raise ShapeError("reshape's sizes are positive integers, sizes or products of them (one may be -1)")
    if sum(1 for s in sizes if s == -1) > 1:
        raise ShapeError("reshape infers one size at most (-1)")
    if any(s == -1 for s in sizes):
        known = product_size([s for s in sizes if s != -1])
        inferred = sp.cancel(total / known)
        if not (inferred.is_polynomial() and sp.fraction(sp.together(inferred))[1] == 1):
            raise ShapeError(f"reshape cannot infer a size: {to_source(total)} entries do not divide by {to_source(known)}")
        sizes = [sp.expand(inferred) if s == -1 else s for s in sizes]
    if sp.expand(product_size(sizes) - total) != 0:
        shown = " × ".join(to_source(s) for s in sizes) if sizes else "a scalar"
        raise ShapeError(f"reshape cannot put {describe(shape)} ({to_source(total)} entries) into {shown} "
                         f"({to_source(product_size(sizes))} entries)")
    return Reshape(base, *sizes)


class Take(TensorOp):
    """`take(X, idx, axis)`: the slices of X along the axis at the integer tensor idx (np.take)."""

    nargs = 3
    spelling = Spelling("take({0}, {1}, {2})", r"\operatorname{take}_{{2}}\left({0}, {1}\right)",
                        "take({0}, {1}, {2})", "_gl_take({0}, {1}, {2})")

    @classmethod
    def eval(cls, base, index, axis):
        return sp.S.Zero if base == 0 else None

    @property
    def shape(self):
        base, index, axis = shape_of(self.args[0]), shape_of(self.args[1]), int(self.args[2])
        return base[:axis] + index + base[axis + 1:]


class ScatterAdd(TensorOp):
    """take's adjoint: zeros of length n along the axis, each slice of Y added at its index (np.add.at)."""

    nargs = 4
    spelling = Spelling("scatter_add({0}, {1}, {2}, {3})", r"\operatorname{scatter}_{{2}}\left({0}, {1}\right)",
                        "scatter_add({0}, {1}, {2}, {3})", "_gl_scatter_add({0}, {1}, {2}, {3})")

    @classmethod
    def eval(cls, values, index, axis, length):
        return sp.S.Zero if values == 0 else None

    @property
    def shape(self):
        values, index, axis = shape_of(self.args[0]), shape_of(self.args[1]), int(self.args[2])
        return values[:axis] + (self.args[3],) + values[axis + len(index):]


def take(base, index, axis):
    """take(X, idx, axis) checked: an axis of X (negative from the end), idx a tensor or an integer."""
    shape = shape_of(base)
    if not shape:
        raise ShapeError("take needs a vector, matrix or tensor to take from, not a scalar")
    written = index.entries if isinstance(index, Literal) else (index,) if isinstance(index, sp.Number) else ()
    if any(e.is_Number and not e.is_Integer for e in written):
        raise ValueError("take's indices must be integers")
    if not getattr(axis, "is_Integer", False):
        raise ShapeError("take's axis must be an integer, as take(X, idx, 0)")
    return Take(base, index, sp.Integer(shapes.axis_of(axis, len(shape), "take")))


def _indices(index) -> "np.ndarray":
    """An index array as integers; a number that is not one is a ValueError (take's indices are integers)."""
    array = np.asarray(index)
    if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
        raise ValueError("take's indices must be integers")
    return array.astype(np.int64)


def take_numbers(base, index, axis):
    """np.take of whole arrays (expr/tensor/numbers.py); an index out of range is NumPy's IndexError."""
    return np.take(np.asarray(base, dtype=float), _indices(index), axis=int(axis))


def scatter_numbers(values, index, axis, length):
    """Zeros of length `length` along the axis with each slice of `values` added at its index (np.add.at)."""
    values, index, axis = np.asarray(values, dtype=float), _indices(index), int(axis)
    shape = values.shape[:axis] + (int(length),) + values.shape[axis + index.ndim:]
    out = np.zeros(shape)
    np.add.at(out, (slice(None),) * axis + (index,), values)
    return out


# --- components: how the component engine computes each node (lower.py's _BUILD reads COMPONENTS) ----------


def _flat(value) -> tuple:
    """A component value as (its row-major entries, its shape), of any rank; pure Python (the page has no NumPy)."""
    value = to_symbolic(value)
    return elements(value), tuple(int(n) for n in getattr(value, "shape", ()))


def _offset(place: tuple, shape: tuple) -> int:
    offset = 0
    for i, n in zip(place, shape):
        offset = offset * n + i
    return offset


def _places(shape: tuple):
    return itertools.product(*(range(n) for n in shape))


def _value(items: list, shape: tuple):
    """Entries and a shape back as the component engine's value."""
    return from_elements(shape, items)


def _einsum_components(node, args, sizes):
    """Σ over the summed letters of the operands' products, entry by entry."""
    spec, flats = node.spec, [_flat(a) for a in args[1:]]
    sizes_of = spec.sizes([shape for _, shape in flats])
    summed, shape = spec.summed(), tuple(sizes_of[letter] for letter in spec.output)
    terms = math.prod(sizes_of.values())
    if terms * len(flats) > limits.MAX_MATMUL_PRODUCTS:  # each a SymPy product, as a matrix product's (exact.py)
        raise LimitError(f"this einsum would build {terms * len(flats)} products of entries, above the limit of "
                         f"{limits.MAX_MATMUL_PRODUCTS}; give its operands float numbers with `at` to compute it numerically")
    out = []
    for place in _places(shape):
        fixed, terms = dict(zip(spec.output, place)), []
        for inner in _places(tuple(sizes_of[letter] for letter in summed)):
            fixed.update(zip(summed, inner))
            terms.append(sp.Mul(*(items[_offset(tuple(fixed[x] for x in letters), dims)]
                                  for (items, dims), letters in zip(flats, spec.inputs))))
        out.append(sp.Add(*terms))
    return _value(out, shape)


def _reshape_components(node, args, sizes):
    return _value(_flat(args[0])[0], tuple(int(n) for n in args[1:]))


def _integers(index) -> tuple:
    """take's indices as Python integers; symbols have none until the point gives them (as x[k]: FreeIndex)."""
    from gradlang.expr.tensor.lower import FreeIndex

    items, shape = _flat(index)
    if any(not i.is_Number for i in items):
        raise FreeIndex("take's indices need numbers to take components: give them in the at")
    if not all(i.is_Integer or i.is_Float and i == int(i) for i in items):
        raise ValueError("take's indices must be integers")
    return [int(i) for i in items], shape


def _gathered(shape: tuple, index: list, index_shape: tuple, axis: int, length: int):
    """(place in the gathered value, place in the value gathered from) for every entry, an index checked."""
    for place in _places(shape[:axis] + index_shape + shape[axis + 1:]):
        k = index[_offset(place[axis:axis + len(index_shape)], index_shape)]
        if not -length <= k < length:
            raise ShapeError(f"take: index {k} is out of range for length {length}")
        yield place, place[:axis] + (k % length,) + place[axis + len(index_shape):]


def _take_components(node, args, sizes):
    (items, shape), (index, index_shape), axis = _flat(args[0]), _integers(args[1]), int(args[2])
    out = [items[_offset(source, shape)] for _, source in _gathered(shape, index, index_shape, axis, shape[axis])]
    return _value(out, shape[:axis] + index_shape + shape[axis + 1:])


def _scatter_components(node, args, sizes):
    (items, shape), (index, index_shape), axis, length = _flat(args[0]), _integers(args[1]), int(args[2]), int(args[3])
    target = shape[:axis] + (length,) + shape[axis + len(index_shape):]
    out = [sp.S.Zero] * math.prod(target)
    spread = target[:axis] + index_shape + target[axis + 1:]
    for place, source in _gathered(target, index, index_shape, axis, length):
        out[_offset(source, target)] += items[_offset(place, spread)]
    return _value(out, target)


OPS = (Einsum, Reshape, Take, ScatterAdd)
COMPONENTS = {Einsum: _einsum_components, Reshape: _reshape_components, Take: _take_components,
              ScatterAdd: _scatter_components}
