"""A broadcast made explicit: the shape a scalar stands for, written as ones.

An adjoint that is a scalar (0, or c for c 𝟙) broadcasts to any shape; the
adjoint rules of the records (expr/primitives/) and the passes of
derive/tensor/ make the shape explicit where a formula needs it (`full`),
and spread a vector along a reduced axis back over its matrix (`spread`).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor import nodes as t, shapes
from gradlang.expr.tensor.nodes import rank, shape_of


def full(expr, shape: tuple):
    """`expr` with its shape made explicit: a scalar standing for a broadcast becomes c 𝟙."""
    if t.is_zero_number(expr):  # 0 or 0.0: zeros, never 0.0 𝟙 (which SymPy makes the scalar 0)
        return t.Zeros(*shape) if shape else sp.S.Zero
    if rank(expr) == len(shape):
        return expr
    if len(shape) == 2:
        return expr * t.Outer(t.Ones(shape[0]), t.Ones(shape[1]))
    return expr * t.Ones(*shape)


def spread(node, vector):
    """A vector along the reduced axis spread back over the matrix: v 𝟙ᵀ for rows, 𝟙 vᵀ for columns."""
    m, n = shape_of(node.args[0])
    vector = full(vector, node.shape if rank(node) == 1 else shape_of(vector))
    return t.Outer(t.Ones(m), vector) if node.args[1] == 0 else t.Outer(vector, t.Ones(n))


def kept_shape(expr, shape: tuple):
    """`expr` with at least the rank of `shape`: a scalar that SymPy's algebra left where the formula had
    that shape (v/v = 1, a where whose condition is decided) becomes c 𝟙 (0 becomes zeros)."""
    if not shape or not isinstance(expr, sp.Expr) or rank(expr) == len(shape):
        return expr
    return full(expr, shape)


def without_zeros(terms: list) -> list:
    """The terms of a sum without its zeros(…) where the others keep the sum's shape: `sg(u)*0.0 + u` is u,
    not u + zeros(n) (SymPy drops a scalar 0 from a sum, but a zeros(…) is a node it cannot read as 0)."""
    rest = [term for term in terms if not isinstance(term, t.Zeros)]
    if not rest or len(rest) == len(terms):
        return terms
    whole = shapes.broadcast([shape_of(term) for term in terms])
    return rest if shapes.broadcast([shape_of(term) for term in rest]) == whole else terms
