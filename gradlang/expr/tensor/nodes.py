"""Tensor-level values: whole vectors and matrices as single SymPy nodes with a shape.

A declared `W: R^(m,n)` is one `Var`, a SymPy symbol that carries its shape.
Elementwise arithmetic and the elementwise functions of the language are
SymPy's own nodes over such symbols (`exp(x)`, `2*x - y`, `x*y` is the
Hadamard product), so SymPy's algebra applies to them as it does to scalars;
their shape is the broadcast of their arguments' shapes (`shape_of`). The
operations that are not elementwise (`@`, `transpose`, `outer`, `dot`, the
reductions, `softmax`, indexing, `onehot`, `diag`, `eye`) are the `TensorOp`
classes below; each knows its shape and how the four output forms spell it
(SymPy's printers call `_sympystr`, `_latex`, `_pretty` and `_numpycode`).

A zero argument makes a product-like node zero, so an adjoint that vanishes
collapses to the scalar 0, which broadcasts to any shape; a zeros(…) argument
(a value such as `M*0.0`) makes it zeros of its own shape, which it keeps.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.precedence import PRECEDENCE

from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.spelling import Spelling


class Var(sp.Symbol):
    """A declared vector or matrix as one symbol, with its shape (sizes literal or symbolic)."""

    def __new__(cls, name: str, shape: tuple):
        obj = sp.Symbol.__xnew__(cls, name, real=True)
        obj._shape = tuple(sp.Integer(s) if isinstance(s, int) else s for s in shape)  # ints and size symbols
        return obj

    def __getnewargs_ex__(self):
        return ((self.name, self._shape), {})

    def _hashable_content(self):
        return super()._hashable_content() + (self._shape,)

    @property
    def shape(self) -> tuple:
        return self._shape


class TensorOp(sp.Function):
    """A tensor operation that is not elementwise: its shape and spellings are its own."""

    is_real = True
    spelling: Spelling  # how plain, LaTeX, pretty and NumPy write it
    precedence = PRECEDENCE["Func"]
    zero_in: tuple = ()  # argument positions where a zero makes the whole node zero (it is linear there)

    @classmethod
    def eval(cls, *args):
        """0 where a linear argument is the scalar 0 (an adjoint that vanished); zeros of the node's own shape
        where it is a zeros(…) of a value, so `sum(M*0.0, 1)` is zeros(m) as `sum(M*0, 1)` of 2×3 is [0, 0]."""
        if any(args[k] == 0 for k in cls.zero_in):
            return sp.S.Zero
        if any(isinstance(args[k], Zeros) for k in cls.zero_in):
            shape = cls(*args, evaluate=False).shape
            return Zeros(*shape) if shape else sp.S.Zero
        return None

    @property
    def shape(self) -> tuple:
        raise NotImplementedError

    def _sympystr(self, printer):
        return self.spelling.plain(self, printer)

    def _latex(self, printer, exp=None):
        text = self.spelling.latex(self, printer)
        return text if exp is None else rf"\left({text}\right)^{{{exp}}}"

    def _pretty(self, printer):
        return self.spelling.pretty(self, printer)

    def _gradlang_line(self, printer):
        return self.spelling.line(self, printer)

    def _numpycode(self, printer):
        return self.spelling.numpy(self, printer)


class ScalarOp(TensorOp):
    """A tensor operation whose value is a scalar (a reduction, an entry, an inner product)."""

    @property
    def shape(self) -> tuple:
        return ()


class MatMul(TensorOp):
    """`A @ B`: matrix times matrix, matrix times vector, vector times matrix."""

    zero_in = (0, 1)
    nargs = 2
    precedence = PRECEDENCE["Mul"]
    spelling = Spelling("{0} @ {1}", r"{0} {1}", "{0} {1}", "numpy.matmul({0}, {1})", infix=True)

    @property
    def shape(self):
        """Computed once per node: a chain W @ W @ … @ x asks each link's shape of the one inside it."""
        known = self.__dict__.get("_known_shape")
        if known is None:
            known = self.__dict__["_known_shape"] = shapes.matmul(shape_of(self.args[0]), shape_of(self.args[1]))
        return known


class Dot(ScalarOp):
    """`dot(u, v)`: the inner product of two vectors, a scalar."""

    zero_in = (0, 1)
    nargs = 2
    spelling = Spelling("dot({0}, {1})", r"{0}^{\top} {1}", "{0}ᵀ{1}", "numpy.dot({0}, {1})", bare_first=True)


class Outer(TensorOp):
    """`outer(u, v)`: u vᵀ, a matrix."""

    zero_in = (0, 1)
    nargs = 2
    # NumPy's ufunc method, not numpy.outer: the same products, without numpy.outer's Python wrapper (its two
    # ravels) at each call, and of shape(u) + shape(v) at any rank, as `shape` says (numpy.outer flattens)
    spelling = Spelling("outer({0}, {1})", r"{0} {1}^{\top}", "{0} {1}ᵀ", "numpy.multiply.outer({0}, {1})",
                        infix=True)

    @property
    def shape(self):
        return shape_of(self.args[0]) + shape_of(self.args[1])


class Transpose(TensorOp):
    """`transpose(A)`: Aᵀ. Transposing twice is the identity."""

    nargs = 1
    spelling = Spelling("transpose({0})", r"{0}^{\top}", "{0}ᵀ", "numpy.transpose({0})", postfix=True)

    @classmethod
    def eval(cls, a):
        if isinstance(a, Transpose):
            return a.args[0]
        if isinstance(a, (Var, TensorOp)) and len(a.shape) < 2:  # a vector is its own transpose, as in NumPy
            return a
        return sp.S.Zero if a == 0 else None

    @property
    def shape(self):
        return tuple(reversed(shape_of(self.args[0])))


class Total(ScalarOp):
    """`sum(u)`: the sum of every component, a scalar."""

    zero_in = (0,)
    nargs = 1
    spelling = Spelling("sum({0})", r"\operatorname{sum}\left({0}\right)", "sum({0})", "numpy.sum({0})")


class NormOf(ScalarOp):
    """`norm(u)`: the Euclidean norm ‖u‖."""

    nargs = 1
    spelling = Spelling("norm({0})", r"\left\|{0}\right\|", "‖{0}‖", "numpy.linalg.norm({0})", bare_first=True)


class SoftmaxOf(TensorOp):
    """`softmax(z)` of a vector: exp(z)/Σ exp(z), evaluated shifted by the maximum."""

    nargs = 1
    spelling = Spelling("softmax({0})", r"\operatorname{softmax}\left({0}\right)", "softmax({0})", "_gl_softmax_vector({0})")

    @property
    def shape(self):
        return shape_of(self.args[0])


class LogSumExpOf(ScalarOp):
    """`logsumexp(z)` of a vector, a scalar; its gradient is softmax(z)."""

    nargs = 1
    spelling = Spelling("logsumexp({0})", r"\operatorname{logsumexp}\left({0}\right)", "logsumexp({0})",
                        "_gl_logsumexp_vector({0})")


class Entry(ScalarOp):
    """`v[k]`, `M[i, j]`: one component, a scalar (indices integers or integer symbols)."""

    spelling = Spelling("{0}[{rest}]", r"{0}_{{rest}}", "{0}[{rest}]", "{0}[{rest_int}]", postfix=True)

    @classmethod
    def eval(cls, base, *indices):  # an entry of a list at numbers is that entry: [u, 2][0] = u
        if isinstance(base, Literal) and all(i.is_Integer for i in indices) and len(indices) == len(base.shape):
            return sp.Array(base.rows())[tuple(int(i) for i in indices)]
        if isinstance(base, Zeros) and _within(indices, base.shape):  # (v - v)[2] is the exact 0 it is
            return sp.S.Zero
        return None


def _within(indices, shape) -> bool:
    """Integer indices, one per axis of literal length, each inside it. A symbolic length keeps the entry:
    zeros(n)[5] at n = 3 must stay an index out of range, never a silent 0."""
    return len(indices) == len(shape) and all(
        i.is_Integer and n.is_Integer and 0 <= i < n for i, n in zip(indices, shape))


class OneHot(TensorOp):
    """`onehot(k, n)`: the basis vector e_k of length n; of an integer tensor k, a last axis of size n is added
    (section 3b), as jax.nn.one_hot."""

    nargs = 2
    spelling = Spelling("onehot({0}, {1})", r"e_{{0}}", "e_{0}", "_gl_onehot_vector({0}, {1})")

    @property
    def shape(self):
        return shape_of(self.args[0]) + (self.args[1],)


class Diag(TensorOp):
    """`diag(v)`: the diagonal matrix with v on its diagonal; `diag(A)` of a square matrix: its diagonal, as NumPy."""

    nargs = 1
    spelling = Spelling("diag({0})", r"\operatorname{diag}\left({0}\right)", "diag({0})", "numpy.diag({0})")

    @property
    def shape(self):
        n = shape_of(self.args[0])[0]
        return (n,) if len(shape_of(self.args[0])) == 2 else (n, n)


class Eye(TensorOp):
    """`eye(n)`: the n×n identity matrix."""

    nargs = 1
    spelling = Spelling("eye({0})", "I", "I", "numpy.eye({0})")

    @property
    def shape(self):
        return (self.args[0], self.args[0])


class Ones(TensorOp):
    """`ones(n)`: the vector of ones (a scalar broadcast to a shape, made explicit)."""

    # `\mathbf 1`, not `\mathbf{1}`: a template reads `{1}` as the argument 1 (spelling.py)
    spelling = Spelling("ones({all})", r"\mathbf 1", "𝟙", "numpy.ones(({all},))")

    @property
    def shape(self):
        return tuple(self.args)


class Zeros(TensorOp):
    """`zeros(n)`, `zeros(m, n)`: a zero that keeps its shape (a gradient that nothing reaches)."""

    spelling = Spelling("zeros({all})", r"\mathbf 0", "𝟎", "numpy.zeros(({all},))")

    @property
    def shape(self):
        return tuple(self.args)


class ProdOf(ScalarOp):
    """`prod(u)`: the product of every component, a scalar."""

    nargs = 1
    spelling = Spelling("prod({0})", r"\prod\left({0}\right)", "prod({0})", "numpy.prod({0})")


class MaxOf(ScalarOp):
    """`max(v)`: the largest component; ties share the gradient equally (section 5)."""

    nargs = 1
    spelling = Spelling("max({0})", r"\max\left({0}\right)", "max({0})", "numpy.max({0})")


class MaxShares(TensorOp):
    """The gradient of max(v): 1/t on each of the t components that attain the maximum, 0 elsewhere."""

    nargs = 1
    # plain in the language's own builtins, so it reads back at every rank: the ties, over their count
    spelling = Spelling("(where({0} == max({0}), 1, 0)/sum(where({0} == max({0}), 1, 0)))",
                        r"\frac{\left[{0} = \max\left({0}\right)\right]}{\sum\left[{0} = \max\left({0}\right)\right]}", "∂max({0})", "_gl_max_shares_vector({0})")

    @property
    def shape(self):
        return shape_of(self.args[0])


class ArgExtreme(ScalarOp):
    """`argmax(v)`, `argmin(v)`: the index of the first largest (smallest) component; derivative 0."""

    nargs = 1
    is_integer = True


class ArgMax(ArgExtreme):
    spelling = Spelling("argmax({0})", r"\operatorname{argmax}\left({0}\right)", "argmax({0})", "numpy.argmax({0})")


class ArgMin(ArgExtreme):
    spelling = Spelling("argmin({0})", r"\operatorname{argmin}\left({0}\right)", "argmin({0})", "numpy.argmin({0})")


class _AlongAxis(TensorOp):
    """An operation along axis 0 (down each column) or 1 (along each row) of a matrix."""

    nargs = 2

    @property
    def shape(self):
        """One entry per column (axis 0) or per row (axis 1); _LinewiseAxis keeps the shape."""
        m, n = shape_of(self.args[0])
        return (n,) if self.args[1] == 0 else (m,)


class SumAxis(_AlongAxis):
    """`sum(M, axis)`: one sum per column (axis 0) or per row (axis 1)."""

    zero_in = (0,)
    spelling = Spelling("sum({0}, {1})", r"\operatorname{sum}_{{1}}\left({0}\right)", "sum_{1}({0})",
                        "numpy.sum({0}, axis=int({1}))")


class LogSumExpAxis(_AlongAxis):
    """`logsumexp(M, axis)`: one logsumexp per column or row, computed stably."""

    spelling = Spelling("logsumexp({0}, {1})", r"\operatorname{logsumexp}_{{1}}\left({0}\right)",
                        "logsumexp_{1}({0})", "_gl_logsumexp_axis({0}, {1})")


class _LinewiseAxis(_AlongAxis):
    """An operation along an axis that keeps the matrix's shape: each line mapped to a line."""

    @property
    def shape(self):
        return shape_of(self.args[0])


class SoftmaxAxis(_LinewiseAxis):
    """`softmax(M, axis)`: each column (axis 0) or row (axis 1) normalised."""

    spelling = Spelling("softmax({0}, {1})", r"\operatorname{softmax}_{{1}}\left({0}\right)",
                        "softmax_{1}({0})", "_gl_softmax_axis({0}, {1})")


class MaxAxis(_AlongAxis):
    """`max(M, axis=k)`: the largest entry of each column (axis 0) or row (axis 1); ties share (section 5).

    Written with its keyword: `max(M, 0)` is the elementwise maximum with 0 (section 6)."""

    spelling = Spelling("max({0}, axis={1})", r"\max_{{1}}\left({0}\right)", "max_{1}({0})", "numpy.max({0}, axis=int({1}))")


class MaxSharesAxis(_LinewiseAxis):
    """The gradient of max(M, axis): in each column or row, 1/t on the t entries that attain its maximum."""

    spelling = Spelling("max_shares({0}, {1})", r"\frac{\left[{0} = \max_{{1}}\left({0}\right)\right]}{\sum_{{1}}\left[{0} = \max_{{1}}\left({0}\right)\right]}",
                        "∂max_{1}({0})", "_gl_max_shares_axis({0}, {1})")


_SHAPES: dict = {}
_SHAPES_LIMIT = 1 << 16


def shape_of(expr) -> tuple:
    """The shape of a tensor expression: its own for a Var or TensorOp, else the broadcast of its arguments'.

    Cached by identity: SymPy compares equal expressions built apart as trees. (all(c) and any(c) say theirs: ().)"""
    if isinstance(expr, (Var, TensorOp)) or getattr(expr, "reduces_condition", False) \
            or getattr(expr, "own_shape", False):  # numbers.py's _PlusDiagonal, of the generated NumPy only
        return expr.shape
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, sp.Symbol):
        return ()
    entry = _SHAPES.get(id(expr))
    if entry is not None and entry[0] is expr:
        return entry[1]
    shape = shapes.broadcast([shape_of(a) for a in expr.args])
    if len(_SHAPES) > _SHAPES_LIMIT:
        _SHAPES.clear()
    _SHAPES[id(expr)] = (expr, shape)
    return shape


def rank(expr) -> int:
    return len(shape_of(expr))


def is_zero_number(expr) -> bool:
    """The number zero, exact or float: SymPy (1.13 on) has `Float(0.0) == 0` false, and `0.0*M` is the float
    0.0 (expr/exact.py keeps it floating), so a test by `== 0` would leave it a scalar where M had a shape."""
    return isinstance(expr, sp.Expr) and expr.is_Number and expr.is_zero


def is_tensor(value) -> bool:
    """True for a value of the tensor engine: a SymPy expression over at least one declared `Var`."""
    return isinstance(value, sp.Basic) and any(isinstance(s, Var) for s in value.free_symbols)


# The linear algebra of square matrices (trace, det, logdet, inv, cofactors) and concat, stack and ranges are modules
# of their own; they build on the classes above.
from gradlang.expr.tensor.linalg import Cofactor, Det, Inv, LogDet, Trace  # noqa: E402
from gradlang.expr.tensor.joins import Column, Concat, Row, SliceAlong, SliceColumns, SliceRows, Stack  # noqa: E402
from gradlang.expr.tensor.literals import Literal  # noqa: E402
from gradlang.expr.tensor import axes as _axes  # noqa: E402
from gradlang.expr.tensor.products import Einsum, Reshape, ScatterAdd, Take  # noqa: E402

OPS = (Zeros, MatMul, Dot, Outer, Transpose, Total, ProdOf, NormOf, SoftmaxOf, LogSumExpOf, Entry, OneHot, Diag, Eye, Ones,
       MaxOf, MaxShares, ArgMax, ArgMin, Trace, Det, LogDet, Inv, Cofactor,
       SumAxis, LogSumExpAxis, SoftmaxAxis, MaxAxis, MaxSharesAxis, Row, Column, Literal, Concat, Stack, SliceRows, SliceColumns,
       SliceAlong, *_axes.OPS, Einsum, Reshape, Take, ScatterAdd)
