"""The inner map of a vector chain rule: how v = [u₀, u₁, …] depends on the variable.

A vector identity gives g = ∇ᵥF; the gradient with respect to the variable
is Jᵀg, J = ∂v/∂x. Teachers name the few J that occur: the identity
(v = x), a shift by a constant or a stopped value (v = x − m: J = I,
∇m ≔ 0), a linear map of a matrix variable (v = W·a: ∇_W = g aᵀ), and a
scalar that is affine in the variable (δ = r + γ·m − W₀,₀: ∇δ constant).
`inner_map` says which it is, or None (the scalar derivation is used).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.derive.derivatives import derivative
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.values import from_elements
from gradlang.expr.walk import dag_has
from gradlang.explain.vector.lift import stops_in

KINDS = ("identity", "shift", "linear", "affine")


@dataclass(frozen=True)
class Inner:
    """J = ∂v/∂x named: kind (KINDS); shift, the common shift of v − x; coefficients a of
    v = W·a + r (linear), or the constant gradient ∇δ (affine); stops, those the path cuts."""

    kind: str
    shift: object = sp.S.Zero
    coefficients: object = None
    stops: tuple = ()

    def chain(self, g: list, wrt_shape):
        """Jᵀg in the variable's shape."""
        if self.kind in ("identity", "shift"):
            return from_elements(wrt_shape, list(g))
        if self.kind == "linear":
            return from_elements(wrt_shape, [gi * a for gi in g for a in self.coefficients])
        return from_elements(wrt_shape, [g[0] * c for c in self.coefficients])


def outside(expr, xs) -> bool:
    """Does the expression depend on the variables other than through stops?"""
    frozen = expr.xreplace({s: sp.Dummy() for s in expr.atoms(StopGradient)})
    return dag_has(frozen, *xs)


def _cut(expr, xs) -> tuple:
    """The stops of the expression whose argument depends on the variables (the path cuts them)."""
    return tuple(s for s in stops_in(expr) if dag_has(s.args[0], *xs))


def inner_map(items: list, xs: list, wrt_shape) -> Inner | None:
    """How v = items depends on the variables xs (in wrt_shape), or None when no name fits."""
    if len(wrt_shape) == 1 and len(items) == len(xs):
        shifts = {sp.expand(u - x) for u, x in zip(items, xs)}
        if len(shifts) == 1:
            shift = shifts.pop()
            if not outside(shift, xs):
                kind = "identity" if shift == 0 else "shift"
                return Inner(kind, shift, stops=_cut(shift, xs))
    if len(wrt_shape) == 2 and len(items) == wrt_shape[0] and len(items) > 1:
        return _linear(items, xs, wrt_shape)
    if len(items) == 1:
        return _affine(items[0], xs)
    return None


def _linear(items, xs, shape) -> Inner | None:
    """v = W·a + r with a constant and r free of W outside stops."""
    rows, columns = shape
    grid = [xs[i * columns:(i + 1) * columns] for i in range(rows)]
    coefficients = None
    for i, u in enumerate(items):
        for r in range(rows):
            slopes = [derivative(u, w) for w in grid[r]]
            if r != i and any(s != 0 for s in slopes):
                return None
            if r == i:
                if coefficients is not None and slopes != coefficients or any(outside(s, xs) for s in slopes):
                    return None
                coefficients = slopes
    rest = [sp.expand(u - sum(a * w for a, w in zip(coefficients, grid[i]))) for i, u in enumerate(items)]
    if any(outside(r, xs) for r in rest):
        return None
    return Inner("linear", coefficients=tuple(coefficients), stops=tuple(s for r in rest for s in _cut(r, xs)))


def _affine(u, xs) -> Inner | None:
    """A scalar whose gradient is constant (it depends on the variables linearly)."""
    slopes = [derivative(u, x) for x in xs]
    if any(outside(s, xs) for s in slopes) or all(s == 0 for s in slopes):
        return None
    return Inner("affine", coefficients=tuple(slopes), stops=_cut(u, xs))
