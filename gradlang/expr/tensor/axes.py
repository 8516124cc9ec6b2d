"""The nodes of axes at any rank (section 3b): broadcasting made explicit, reductions along axes, new and
dropped axes of size 1, permutations.

NumPy broadcasting is one node, `BroadcastTo(u, *shape)`, which the evaluator
writes wherever operands of an elementwise operation have different shapes
(core/tensor_broadcast.py), so the elementwise engine keeps equal shapes and
every primitive keeps one derivative rule: BroadcastTo's adjoint sums over
the axes it stretched (`SumAlong`), SumAlong's puts them back
(`ExpandDims`, then `BroadcastTo`). Each node's args are its argument, then
integers (axes, in 0..rank-1, increasing) or sizes (a shape).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.nodes import ArgExtreme, SumAxis, TensorOp, Total, rank, shape_of
from gradlang.expr.tensor.spelling import Spelling


def tuple_text(items: list) -> str:
    """Python's tuple: (0, 2), and (1,) for one item."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _text(printed) -> str:
    """An axis or a size as text: the pretty printer gives a picture (one line for these)."""
    return printed if isinstance(printed, str) else str(printed)


@dataclass(frozen=True)
class PerNode(Spelling):
    """A spelling whose templates depend on the node (its axes): each printer asks `_for(node)` for them."""

    def _for(self, node, printer) -> Spelling:
        raise NotImplementedError

    def plain(self, node, printer) -> str:
        return self._for(node, printer).plain(node, printer)

    def latex(self, node, printer) -> str:
        return self._for(node, printer).latex(node, printer)

    def line(self, node, printer) -> str:
        return self._for(node, printer).line(node, printer)

    def numpy(self, node, printer) -> str:
        return self._for(node, printer).numpy(node, printer)

    def pretty(self, node, printer):
        return self._for(node, printer).pretty(node, printer)


@dataclass(frozen=True)
class TupleSpelling(PerNode):
    """Templates that hold `{tuple}`: the node's args after the first, written as a tuple ((0, 2), (m, n))."""

    shape: bool = False  # a shape is always a tuple; one axis is written bare: sum(X, axis=2), as NumPy reads it

    def _for(self, node, printer) -> Spelling:
        items = [_text(printer._print(a)) for a in node.args[1:]]
        text = items[0] if len(items) == 1 and not self.shape else tuple_text(items)
        fill = lambda template: template.replace("{tuple}", text)  # noqa: E731
        return replace(Spelling(self.plain_template, self.latex_template, self.pretty_template, self.numpy_template),
                       plain_template=fill(self.plain_template), latex_template=fill(self.latex_template),
                       pretty_template=fill(self.pretty_template), numpy_template=fill(self.numpy_template))


class _Axes(TensorOp):
    """A node of one tensor and integers after it (its axes)."""

    @property
    def axes(self) -> tuple:
        return tuple(int(a) for a in self.args[1:])


class BroadcastTo(TensorOp):
    """`broadcast_to(u, shape)`: u stretched as NumPy broadcasts it (axes aligned from the last, size 1 stretched)."""

    zero_in = (0,)
    spelling = TupleSpelling("broadcast_to({0}, {tuple})", r"\operatorname{broadcast}_{ {tuple} }\left({0}\right)",
                             "broadcast_to({0}, {tuple})", "numpy.broadcast_to({0}, {tuple})", shape=True)

    @classmethod
    def eval(cls, u, *shape):
        if u == 0:
            return sp.S.Zero
        if isinstance(u, BroadcastTo):  # stretched twice is stretched once
            return cls(u.args[0], *shape)
        if shape_of(u) == tuple(shape):
            return u
        scalars = [a for a in u.args if not shape_of(a)] if isinstance(u, sp.Mul) else []
        if scalars and len(scalars) < len(u.args):  # -sum(X, 0)/m stretched is -(sum(X, 0) stretched)/m
            return sp.Mul(*scalars) * cls(sp.Mul(*[a for a in u.args if shape_of(a)]), *shape)
        return None

    @property
    def shape(self):
        return tuple(self.args[1:])

    def stretched(self) -> tuple:
        """The axes of the result a sum gives back to u: the new leading ones, then those where u has size 1."""
        inner, outer = shape_of(self.args[0]), self.shape
        lead = len(outer) - len(inner)
        return tuple(range(lead)) + tuple(lead + k for k, n in enumerate(inner) if n == 1 and outer[lead + k] != 1)


class SumAlong(_Axes):
    """`sum(X, axis=(0, 2))`: the sum over the given axes, which are dropped."""

    zero_in = (0,)
    spelling = TupleSpelling("sum({0}, axis={tuple})", r"\operatorname{sum}_{ {tuple} }\left({0}\right)",
                             "sum_{tuple}({0})", "numpy.sum({0}, axis={tuple})")

    @property
    def shape(self):
        return dropped(shape_of(self.args[0]), self.axes)


class MaxAlong(_Axes):
    """`max(X, axis=(1, 2))`: the largest entry over the given axes, which are dropped; ties share (section 5)."""

    spelling = TupleSpelling("max({0}, axis={tuple})", r"\max_{ {tuple} }\left({0}\right)", "max_{tuple}({0})",
                             "numpy.max({0}, axis={tuple})")

    @property
    def shape(self):
        return dropped(shape_of(self.args[0]), self.axes)


class MaxSharesAlong(_Axes):
    """The gradient of max over axes: 1/t on the t entries of each group that attain its maximum."""

    spelling = TupleSpelling("max_shares({0}, {tuple})", r"\frac{\left[{0} = \max_{ {tuple} }\left({0}\right)\right]}{\sum_{ {tuple} }\left[{0} = \max_{ {tuple} }\left({0}\right)\right]}",
                             "∂max_{tuple}({0})", "_gl_max_shares_along({0}, {tuple})")

    @property
    def shape(self):
        return shape_of(self.args[0])


class SoftmaxAlong(_Axes):
    """`softmax(X, axis=-1)` of a tensor of rank 3 or more (or over both axes of a matrix): exp(X) over its sum in
    each group of the axes, one primitive with one rule (ū = s ⊙ (ȳ − Σ_axes ȳ ⊙ s)) at every rank, computed
    stably (shifted by each group's maximum inside its NumPy helper, as jax.nn.softmax is: no stop in the formula)."""

    spelling = TupleSpelling("softmax({0}, axis={tuple})", r"\operatorname{softmax}_{ {tuple} }\left({0}\right)",
                             "softmax_{tuple}({0})", "_gl_softmax_along({0}, {tuple})")

    @property
    def shape(self):
        return shape_of(self.args[0])


class LogSumExpAlong(_Axes):
    """`logsumexp(X, axis=(1, 2))` of a tensor of rank 3 or more: log Σ exp over the axes, which are dropped; its
    gradient is softmax over the same axes; computed stably (jax.nn.logsumexp's shift, inside the helper)."""

    spelling = TupleSpelling("logsumexp({0}, axis={tuple})", r"\operatorname{logsumexp}_{ {tuple} }\left({0}\right)",
                             "logsumexp_{tuple}({0})", "_gl_logsumexp_along({0}, {tuple})")

    @property
    def shape(self):
        return dropped(shape_of(self.args[0]), self.axes)


class ExpandDims(_Axes):
    """`expand_dims(X, axis)`: new axes of size 1 at the given positions of the result."""

    spelling = TupleSpelling("expand_dims({0}, {tuple})", r"\operatorname{expand}_{ {tuple} }\left({0}\right)",
                             "expand_dims({0}, {tuple})", "numpy.expand_dims({0}, {tuple})")

    @classmethod
    def eval(cls, u, *axes):
        """Zero of zero; the axes a squeeze dropped put back give its argument (squeeze's adjoint meeting its own
        node), also under scalar factors: expand_dims(2 squeeze(Y, 1), 1) is 2 Y."""
        if u == 0:
            return sp.S.Zero
        scalars = [a for a in u.args if not shape_of(a)] if isinstance(u, sp.Mul) else []
        tensors = [a for a in u.args if shape_of(a)] if scalars else [u]
        if len(tensors) == 1 and isinstance(tensors[0], Squeeze) and tensors[0].args[1:] == axes:
            return sp.Mul(*scalars) * tensors[0].args[0]
        return None

    @property
    def shape(self):
        inner = list(shape_of(self.args[0]))
        for axis in self.axes:
            inner.insert(axis, sp.S.One)
        return tuple(inner)


class Squeeze(_Axes):
    """`squeeze(X, axis)`: the given axes, each of size 1, dropped."""

    spelling = TupleSpelling("squeeze({0}, {tuple})", r"\operatorname{squeeze}_{ {tuple} }\left({0}\right)",
                             "squeeze({0}, {tuple})", "numpy.squeeze({0}, axis={tuple})")

    @classmethod
    def eval(cls, u, *axes):
        if u == 0:
            return sp.S.Zero
        if isinstance(u, ExpandDims) and u.args[1:] == axes:  # the adjoint of expand_dims meeting its own
            return u.args[0]
        return None

    @property
    def shape(self):
        return dropped(shape_of(self.args[0]), self.axes)


class Permute(_Axes):
    """`transpose(X, (0, 2, 1))`: the axes in the given order (result axis k is the argument's axis perm[k])."""

    zero_in = (0,)
    spelling = TupleSpelling("transpose({0}, {tuple})", r"\operatorname{transpose}_{ {tuple} }\left({0}\right)",
                             "transpose({0}, {tuple})", "numpy.transpose({0}, {tuple})", shape=True)

    @property
    def shape(self):
        inner = shape_of(self.args[0])
        return tuple(inner[k] for k in self.axes)


@dataclass(frozen=True)
class PickSpelling(PerNode):
    """X[i] (axis 0), X[:, j] (axis 1), X[..., k] (the last axis), X[:, :, k] (between): the subscript that reads back."""

    def _for(self, node, printer) -> Spelling:
        axis, rank_of = int(node.args[1]), len(shape_of(node.args[0]))
        plain = "{0}[..., {2}]" if axis == rank_of - 1 and axis > 1 else "{0}[" + ":, " * axis + "{2}]"
        latex = "{0}_{" + ",".join(["{2}" if k == axis else ":" for k in range(rank_of)]) + "}"
        return Spelling(plain, latex, plain, self.numpy_template, postfix=True)



class Pick(TensorOp):
    """`X[i]`, `X[:, j]`, `X[..., k]` of a tensor of rank 3 or more: the slice at one index of an axis, which is
    dropped (args: the tensor, the axis, the index: a whole number or an index name)."""

    nargs = 3
    zero_in = (0,)

    @classmethod
    def eval(cls, base, axis, index):
        return _picked_through(base, axis, index) if index.is_Integer else None

    spelling = PickSpelling("{0}[{2}]", "{0}_{{2}}", "{0}[{2}]", "numpy.take({0}, int({2}), axis=int({1}))",
                            postfix=True)

    @property
    def shape(self):
        return dropped(shape_of(self.args[0]), (int(self.args[1]),))


class _ArgAlong(ArgExtreme):
    """`argmax(X, axis=k)`, `argmin(X, axis=k)`: the index of the first extreme entry along axis k, which is
    dropped; derivative 0."""

    nargs = 2

    @property
    def shape(self):
        return dropped(shape_of(self.args[0]), (int(self.args[1]),))


class ArgMaxAlong(_ArgAlong):
    spelling = Spelling("argmax({0}, axis={1})", r"\operatorname{argmax}_{{1}}\left({0}\right)", "argmax_{1}({0})",
                        "numpy.argmax({0}, axis=int({1}))")


class ArgMinAlong(_ArgAlong):
    spelling = Spelling("argmin({0}, axis={1})", r"\operatorname{argmin}_{{1}}\left({0}\right)", "argmin_{1}({0})",
                        "numpy.argmin({0}, axis=int({1}))")


def _picked_through(base, axis, index):
    """Entry k of a stack along the same axis is that entry (stack's adjoint meeting its own node); through sums,
    products, powers and elementwise functions of such stacks, entry by entry (2 stack([A, B], 0)^2 at 0 is
    2 A^2). None
    where some factor has no entry of its own, so a pick is never spread over a formula it cannot shorten."""
    from gradlang.expr.tensor.joins import Stack  # joins spells its ranges with this module's PerNode

    if isinstance(base, Stack):
        ok = base.args[0] == axis and 0 <= index < len(base.parts)
        return base.parts[int(index)] if ok else None
    if isinstance(base, sp.Pow) and not shape_of(base.args[1]):
        inner = _picked_through(base.args[0], axis, index)
        return None if inner is None else inner ** base.args[1]
    if _elementwise(base) and all(shape_of(a) in ((), shape_of(base)) for a in base.args):
        picks = [_picked_through(a, axis, index) if shape_of(a) else a for a in base.args]
        return base.func(*picks) if all(p is not None for p in picks) else None
    return None


def _elementwise(expr) -> bool:
    """A sum, a product, or a function of the language applied entry by entry (tanh(X), sg(X)); a node of the
    tensor engine is not (its entries mix)."""
    if isinstance(expr, (sp.Add, sp.Mul)):
        return True
    return (isinstance(expr, sp.Function) and not isinstance(expr, TensorOp)
            and all(isinstance(a, sp.Expr) for a in expr.args))


def dropped(shape: tuple, axes: tuple) -> tuple:
    return tuple(n for k, n in enumerate(shape) if k not in axes)


def sum_over(u, axes: tuple):
    """The sum of u over these axes, in the node a reader knows: sum(u) of every axis, sum(M, 1) of one axis of
    a matrix, else sum(u, axis=(0, 2))."""
    axes = tuple(sorted(axes))
    if not axes:
        return u
    if len(axes) == rank(u):
        return Total(u)
    if rank(u) == 2:
        return SumAxis(u, sp.Integer(axes[0]))
    return SumAlong(u, *axes)


def broadcast_to(u, shape: tuple):
    """u stretched to `shape` (a scalar stays a scalar: it broadcasts by itself); the shapes are checked."""
    inner = shape_of(u)
    if not inner or inner == tuple(shape):
        return u
    shapes.stretched([inner, tuple(shape)], "broadcast_to", target=tuple(shape))
    return BroadcastTo(u, *shape)


OPS = (Pick, BroadcastTo, SumAlong, MaxAlong, MaxSharesAlong, SoftmaxAlong, LogSumExpAlong, ExpandDims, Squeeze, Permute,
       ArgMaxAlong, ArgMinAlong)
