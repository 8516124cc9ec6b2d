"""The builtins of the tensor engine that take an axis or reduce a whole tensor: sum, mean, max, softmax, …

`BUILD` holds each one-argument builtin's node (of a whole tensor: a scalar
for a reduction), `AXIS` each one's node along an axis; core/tensor_values.py's
`TABLE` reads both.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.core.tensor_broadcast import stretched
from gradlang.errors import ShapeError, ShapeNeedsComponents
from gradlang.expr.functions import Maximum, Minimum
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.axes import (ArgMaxAlong, ArgMinAlong, BroadcastTo, ExpandDims, LogSumExpAlong, MaxAlong,
                                       MaxSharesAlong, SoftmaxAlong, sum_over)
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.lower import literal
from gradlang.expr.tensor.nodes import rank, shape_of

EXTREMA = ("max", "min", "reduce_max", "reduce_min")


def along_axis(name: str, value, axis):
    """name(X, axis) at any rank (section 3b): one axis or a tuple of them, negative ones counting from the end;
    a matrix's one axis is the node of section 6 (sum(M, 1)), every axis of a vector the whole reduction."""
    r = rank(value)
    if r == 0:
        raise ShapeError(f"{name}: a scalar has no axis {axis}")
    axes = shapes.axes_of(axis, r, name)
    if name in ("argmax", "argmin"):
        if len(axes) != 1:
            raise ShapeError(f"{name} takes one axis, as {name}(X, axis=1)")
        return BUILD[name](value) if r == 1 else (ArgMaxAlong if name == "argmax" else ArgMinAlong)(value, sp.Integer(axes[0]))
    if r == 1 and (name in BUILD or name in EXTREMA):
        return BUILD[name](value) if name in BUILD else extremum(name)([value])
    if r == 2 and len(axes) == 1 and name in AXIS:
        return AXIS[name](value, axes[0])
    if name not in GENERAL:
        raise ShapeNeedsComponents(f"{name} takes no axis at a symbolic size yet; declare literal sizes")
    return GENERAL[name](value, axes)


def put_back(y, axes: tuple, shape: tuple):
    """A reduction's value over `axes` stretched back over the shape it reduced (keepdims, then broadcast)."""
    return BroadcastTo(ExpandDims(y, *axes), *shape)


def _logsumexp(u, axes: tuple):
    """log Σ exp over the axes: one primitive (its gradient softmax over the axes), computed stably by its
    helper as jax.nn.logsumexp is; of every axis, the whole tensor's logsumexp."""
    return t.LogSumExpOf(u) if len(axes) == rank(u) else LogSumExpAlong(u, *axes)


def _count(u, axes: tuple):
    return sp.Mul(*(shape_of(u)[k] for k in axes))


GENERAL = {
    "sum": lambda u, axes: sum_over(u, axes),
    "mean": lambda u, axes: sum_over(u, axes) / _count(u, axes),
    "max": lambda u, axes: t.MaxOf(u) if len(axes) == rank(u) else MaxAlong(u, *axes),
    "min": lambda u, axes: -(t.MaxOf(-u) if len(axes) == rank(u) else MaxAlong(-u, *axes)),
    "logsumexp": _logsumexp,
    "softmax": lambda u, axes: SoftmaxAlong(u, *axes),
    "log_softmax": lambda u, axes: u - put_back(_logsumexp(u, axes), axes, shape_of(u)),
    "norm": lambda u, axes: sp.sqrt(sum_over(u**2, axes)),
    "max_shares": lambda u, axes: t.MaxShares(u) if len(axes) == rank(u) else MaxSharesAlong(u, *axes),
}
AXIS_TAKING = frozenset({*GENERAL, "argmax", "argmin"})


ANY_RANK = frozenset(range(limits.MAX_RANK + 1))  # a whole reduction takes a tensor of any rank (section 3b)
TENSORS = ANY_RANK - {0}


def one(name: str, check=None):
    """A builtin of one tensor argument (and an axis, where it takes one), its rank checked."""

    def apply(args):
        if len(args) == 2 and name in AXIS_TAKING:
            return along_axis(name, *args)
        if len(args) != 1:  # an axis it does not take, or a wrong count: the component path says which
            raise ShapeNeedsComponents(f"{name} takes one vector or matrix at a symbolic size; declare literal sizes")
        (value,) = args
        if check is not None and rank(value) not in check:
            allowed = " or ".join({0: "a scalar", 1: "a vector", 2: "a matrix"}.get(r, "") for r in sorted(check)[:3])
            allowed += " or a tensor of any rank" if len(check) > 3 else ""
            raise ShapeNeedsComponents(f"{name} takes {allowed}, got {shapes.describe(shape_of(value))}")
        return BUILD[name](value)

    return apply


BUILD = {
    "sum": lambda u: t.Total(u) if rank(u) else u,
    "prod": lambda u: _by_symbolic_size(t.ProdOf, u) if rank(u) else u,
    "mean": lambda u: t.Total(u) / sp.Mul(*shape_of(u)) if rank(u) else u,
    "norm": lambda u: t.NormOf(u),
    "softmax": lambda u: t.SoftmaxOf(u),
    "logsumexp": lambda u: t.LogSumExpOf(u),
    "log_softmax": lambda u: u - t.LogSumExpOf(u),
    "normalize": lambda u: u / t.NormOf(u),
    "diag": lambda u: _diagonal(u) if rank(u) == 2 else t.Diag(u),
    "len": lambda u: shape_of(u)[0],
    "argmax": lambda u: t.ArgMax(u),
    "argmin": lambda u: t.ArgMin(u),
    "max_shares": lambda u: t.MaxShares(u),  # how grad(max(v), v) prints: it must read back
    "trace": lambda u: t.Trace(u),
    "det": lambda u: t.Det(u),
    "logdet": lambda u: t.LogDet(u),
    "inv": lambda u: t.Inv(u),
}


def _by_symbolic_size(build, u):
    """A node the component engine writes better at literal sizes ([x[1]*x[2], …] for the gradient of prod)."""
    if literal(u):
        raise ShapeNeedsComponents("taken by components at literal sizes")
    return build(u)


def _diagonal(matrix):
    """diag(A): the diagonal of a square matrix (a non-square one's is taken by components, at literal sizes)."""
    m, n = shape_of(matrix)
    if m != n:
        raise ShapeNeedsComponents(f"diag of a matrix takes a square one at a symbolic size, got {shapes.describe((m, n))}")
    return t.Diag(matrix)


def square(name: str):
    """A builtin of one square matrix."""

    def apply(args):
        (value,) = args
        shape = shape_of(value)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ShapeError(f"{name} takes a square matrix, got {shapes.describe(shape)}")
        return BUILD[name](value)

    return apply


AXIS = {
    "max": lambda M, a: t.MaxAxis(M, a),
    "min": lambda M, a: -t.MaxAxis(-M, a),
    "max_shares": lambda M, a: t.MaxSharesAxis(M, a),  # how grad(sum(max(M, 1)), M) prints: it must read back
    "sum": lambda M, a: t.SumAxis(M, a),
    "mean": lambda M, a: t.SumAxis(M, a) / shape_of(M)[a],  # the count along the axis
    "logsumexp": lambda M, a: t.LogSumExpAxis(M, a),
    "softmax": lambda M, a: t.SoftmaxAxis(M, a),
    "log_softmax": lambda M, a: M - (t.Outer(t.Ones(shape_of(M)[0]), t.LogSumExpAxis(M, a)) if a == 0
                                     else t.Outer(t.LogSumExpAxis(M, a), t.Ones(shape_of(M)[1]))),
}


def pair(build, name: str):
    def apply(args):
        a, b = args
        if rank(a) != 1 or rank(b) != 1:
            raise ShapeError(f"{name} takes two vectors, got {shapes.describe(shape_of(a))} and {shapes.describe(shape_of(b))}")
        if name != "outer" and shape_of(a) != shape_of(b):
            raise ShapeError(f"{name} needs equal lengths, got {shapes.describe(shape_of(a))} and {shapes.describe(shape_of(b))}")
        return build(a, b)

    return apply


def extremum(name: str):
    def apply(args):
        if len(args) == 1 and rank(args[0]) > 0:
            v = args[0]
            return t.MaxOf(v) if name == "max" else -t.MaxOf(-v)
        return (Maximum if name == "max" else Minimum)(*stretched(args, name))

    return apply
