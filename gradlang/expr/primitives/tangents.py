"""The vocabulary tangent rules are written in (record.TensorRule.tangent), for forward mode at the tensor level.

A tangent rule `tangent(node, d, vector)` is the node's derivative by the
variable, given its arguments' derivatives `d` (one per argument, 0 where an
argument does not depend on the variable): shaped like the node when the
variable is a scalar (`vector` False, a directional derivative), the node's
shape followed by the variable's length when it is a vector (a Jacobian).
Each tensor operation's rule lives in its record, beside its adjoint
(tensor_ops.py, vectors.py, nonsmooth.py); derive/tensor/forward.py walks
the formula and calls them. A rule that would need a tensor of rank three
(a matrix by a vector) raises DiffNeedsComponents, which forward mode turns
into a message that names the matrix.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import DiffNeedsComponents
from gradlang.expr.engine import nodes as t, rank

TOO_HIGH = "this derivative would be a tensor of rank three; declare literal sizes and use components"


class DiagTangent:
    """The tangent of diag(u) by a vector (rank three, never written): J_u, for the product that reads it."""

    def __init__(self, of_u):
        self.of_u = of_u


def sum_of(*terms):
    """The sum of the terms that are there (None: a term that vanished)."""
    return sp.Add(*[term for term in terms if term is not None])


def linear(build_scalar, build_vector):
    """A rule from its form by a scalar variable and its form by a vector one, each of (node, d[0])."""

    def rule(node, d, vector):
        return build_vector(node, d[0]) if vector else build_scalar(node, d[0])

    return rule


def no_vector(build_scalar):
    """A rule by a scalar only, from build_scalar(node, d): by a vector it would be a tensor of rank three."""

    def rule(node, d, vector):
        if vector:
            raise DiffNeedsComponents(TOO_HIGH)
        return build_scalar(node, d)

    return rule


def inner(u, d, vector: bool):
    """⟨u, du⟩: dot for vectors (u @ J by a vector), for matrices the Frobenius Σ(U ⊙ dU), not U @ dU."""
    if rank(u) == 2:
        if vector:
            raise DiffNeedsComponents(TOO_HIGH)
        return t.Total(u * d)
    return t.MatMul(u, d) if vector else t.Dot(u, d)
