"""What a tensor formula costs at given sizes, known from its shapes before any number is computed.

Whole-array NumPy (numbers.py) assigns every distinct node of the formula's
DAG to a variable of the generated function (numeric.dag_cse), so the arrays
it holds at once are the formula's nodes, each as large as its shape says,
plus the temporaries of a helper (softmax's exponentials) while it runs. A
matrix product, inverse or determinant costs multiply-adds beyond its size.
Both are estimated here from the shapes and the sizes the point gives, and a
formula above limits.max_memory() or limits.MAX_NUMERIC_PRODUCTS is
refused with a LimitError before NumPy allocates anything: `hessian(
logsumexp(x), x) at x = linspace(0, 1, 100000)` would ask for 74.5 GiB.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.errors import GradlangError, LimitError
from gradlang.expr.tensor import axes, nodes as t
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.products import contraction

# Operations whose NumPy helper makes arrays as large as its argument while it runs (numbers.py).
_TRANSIENT = (t.SoftmaxOf, t.LogSumExpOf, t.MaxShares, t.SoftmaxAxis, t.LogSumExpAxis, t.MaxSharesAxis,
              t.NormOf, t.Inv, t.Det, t.LogDet, t.Cofactor, axes.MaxSharesAlong, axes.SoftmaxAlong, axes.LogSumExpAlong)
TRANSIENT_COPIES = 2


def count(shape: tuple, sizes: dict) -> int | None:
    """Components of a shape once its sizes are known; None while a size has no value."""
    total = 1
    for size in shape:
        value = shapes.valued(size, sizes)
        if not isinstance(value, (int, sp.Integer)):
            return None
        total *= int(value)
    return total


def _shape(node) -> tuple | None:
    try:
        return t.shape_of(node)
    except GradlangError:  # a node no shape is asked of (a comparison's parts): none of its own
        return None


def _products(node, sizes: dict) -> int:
    """Multiply-adds of a matrix product, a dot product, an inverse, a determinant or cofactors (0 for other nodes)."""
    if isinstance(node, (t.MatMul, t.Dot)):
        left, right = (t.shape_of(a) for a in node.args[:2])
        inner = count(left, sizes) or 0
        return inner * (count(right[1:], sizes) or 0) if len(right) == 2 else inner
    if isinstance(node, (t.Inv, t.Det, t.LogDet, t.Cofactor)):
        n = count(t.shape_of(node.args[0])[:1], sizes) or 0
        return n ** 3
    if isinstance(node, t.Einsum):
        return contraction(node, lambda size: count((size,), sizes))[0]
    return 0


def _check_range(node, sizes: dict) -> None:
    """A range v[a:b] inside its base at the point's sizes: NumPy would cut it short without a word."""
    if isinstance(node, (t.SliceRows, t.SliceColumns, t.SliceAlong)):
        length = t.shape_of(node.args[0])[node.axis]
        shapes.check_range(*(shapes.as_basic(shapes.valued(v, sizes)) for v in (*node.bounds, length)))


gib = limits.readable_bytes


def dimensions(shape: tuple, sizes: dict) -> str:
    return "×".join(str(shapes.valued(s, sizes)) for s in shape)


def check(nodes: list, sizes: dict) -> None:
    """Refuse, by a LimitError naming the bound, a formula (its DAG's nodes) too large to evaluate whole."""
    held, transient, products, largest = 0, 0, 0, (0, ())
    for node in nodes:
        shape = _shape(node)
        if shape is None or not isinstance(node, sp.Basic):  # a constant (Eye(3)) is held too
            continue
        shapes.check_valued(shape, sizes)
        size = 8 * (count(shape, sizes) or 0)
        held += size
        largest = max(largest, (size, shape), key=lambda pair: pair[0])
        if isinstance(node, _TRANSIENT):
            argument = _shape(node.args[0]) or ()
            transient = max(transient, TRANSIENT_COPIES * 8 * (count(argument, sizes) or 0))
        if isinstance(node, t.Einsum):  # its intermediates, while np.einsum contracts pair by pair
            transient = max(transient, 8 * contraction(node, lambda size: count((size,), sizes))[1])
        products += _products(node, sizes)
        _check_range(node, sizes)
    if held + transient > limits.max_memory():
        raise LimitError(limits.memory_refusal(
            f"evaluating this at the point (its largest array, {dimensions(largest[1], sizes)}, is "
            f"{gib(largest[0])})", held + transient))
    if products > limits.MAX_NUMERIC_PRODUCTS:
        raise LimitError(
            f"evaluating this at the point takes about {products:.2g} multiply-adds in @, einsum, inv and det, "
            f"above the limit of {limits.MAX_NUMERIC_PRODUCTS:.2g}"
        )
