"""`einsum`, `reshape`, `take` and batched `@` (section 3b): the builtins, at every size.

With a tensor among the arguments each is one node of the tensor engine
(expr/tensor/products.py), at literal sizes as at symbolic ones; of lists of
numbers and scalars, it is the same node's components (expr/tensor/lower.py).
einsum's subscripts are a quoted text the grammar reads (never evaluated as
code), checked against the operands' shapes where the call is written.
"""

from __future__ import annotations

import sympy as sp

from gradlang.core.builtin_table import Call, builtin
from gradlang.core.builtins_vectors import placed
from gradlang.errors import ShapeError
from gradlang.expr.engine import lower, nodes, rank, shape_of
from gradlang.lazy import deferred_module

# The engine's, imported by the first call: registering these builtins loads none of it (issue #41).
products = deferred_module("gradlang.expr.tensor.products")
components, Literal = lower.components, nodes.Literal


def _subscripts(value) -> str:
    if not isinstance(value, str):
        raise ShapeError('einsum\'s first argument is its subscripts in quotes, as einsum("ij,jk->ik", A, B)')
    return value


def _einsum(args):
    if len(args) < 2:
        raise ShapeError('einsum needs its subscripts and at least one operand, as einsum("ij,jk->ik", A, B)')
    return products.einsum(_subscripts(args[0]), list(args[1:]))


def _sizes(value) -> list:
    """A shape written (b, t*d), or one size n."""
    return list(value) if isinstance(value, sp.Tuple) else [value]


def _reshape(args):
    if len(args) != 2:
        raise ShapeError("reshape takes a value and a shape, as reshape(X, (b, t*d))")
    return products.reshape(args[0], _sizes(args[1]))


def _take(args):
    """take(X, idx, axis); without an axis X is read flat first, as NumPy's."""
    if len(args) == 2:
        return products.take(products.reshape(args[0], [-1]), args[1], 0)
    if len(args) != 3:
        raise ShapeError("take takes a value, an integer index tensor and an axis, as take(X, idx, 0)")
    return products.take(*args)


def batched(a, b):
    """a @ b beyond rank 2: NumPy's matmul, batched over the leading axes (which broadcast), as an einsum."""
    inner = shape_of(b)[-2] if rank(b) > 1 else shape_of(b)[0]
    if rank(a) == 0 or rank(b) == 0 or shape_of(a)[-1] != inner:  # the contracted axis never broadcasts, in matmul
        raise ShapeError(f"@ cannot multiply {_shown(a)} by {_shown(b)}")
    left = "...ij" if rank(a) > 1 else "j"
    right = "...jk" if rank(b) > 1 else "j"
    out = "..." + ("i" if rank(a) > 1 else "") + ("k" if rank(b) > 1 else "")
    try:
        return products.einsum(f"{left},{right}->{out}", [a, b])
    except ShapeError:
        raise ShapeError(f"@ cannot multiply {_shown(a)} by {_shown(b)}") from None


def _shown(value) -> str:
    return "×".join(str(s) for s in shape_of(value)) or "a scalar"


TABLE = {"einsum": _einsum, "reshape": _reshape, "take": _take}


def _of_lists(name: str):
    """Of lists of numbers and scalars (no tensor): the node's components, as the component engine holds them."""

    def apply(call: Call):
        args = [Literal.of(a) if isinstance(a, (sp.NDimArray, sp.MatrixBase)) else a for a in call.args]
        node = placed(call, None, TABLE[name], args)
        return components(node, {})

    return apply


builtin("einsum", 2, None, 'Einstein summation as NumPy\'s: einsum("ij,jk->ik", A, B)',
        'einsum("i,i->", [1, 2], [3, 4])', "vector")(_of_lists("einsum"))
builtin("reshape", 2, 2, "the entries in row-major order in a new shape: reshape(X, (b, t*d))",
        "reshape([[1, 2], [3, 4]], (4,))", "vector")(_of_lists("reshape"))
builtin("take", 2, 3, "the slices along an axis at integer indices (gather): take(X, idx, axis)",
        "take([10, 20, 30], [2, 0], 0)", "vector")(_of_lists("take"))


def _scatter_add(args):
    """scatter_add(V, idx, axis, n), how take's gradient prints: zeros of length n along the axis, each slice of V
    added at its index (np.add.at), so the printed gradient reads back."""
    if len(args) != 4:
        raise ShapeError("scatter_add takes values, an integer index tensor, an axis and a length: scatter_add(V, idx, 0, n)")
    values, index, axis, length = args
    if not (getattr(length, "is_integer", False) and length.is_positive):
        raise ShapeError("scatter_add's length must be a positive integer or a size")
    axis = products.shapes.axis_of(axis, rank(values), "scatter_add")
    if shape_of(values)[axis:axis + rank(index)] != shape_of(index):
        raise ShapeError("scatter_add's values must have the index tensor's axes at the axis")
    return products.ScatterAdd(values, index, sp.Integer(axis), length)


TABLE["scatter_add"] = _scatter_add
builtin("scatter_add", 4, 4, "take's adjoint: each slice of V added at its index along an axis of length n",
        "scatter_add([1, 2, 3], [0, 0, 1], 0, 2)", "vector")(_of_lists("scatter_add"))
