"""Constant factors a tensor pass folds into its adjoints rather than spending a line on.

A teacher writes ∂L/∂Z = … with a mean's 1/n, a loss weight's 25 or the sign of `1 - std` already in it;
a pass that shows each product with a constant as a line of its own (`∂L/∂std = -∂L/∂(1 - std)`,
`∂L/∂sum(u) = ∂L/∂u2/m`) spends half a derivation on them (VICReg's variance hinge: six of twelve lines).
Three folds, the same at literal sizes (where the constants are numbers) and symbolic ones (where they
hold the sizes, 25/(m*n)):

- an adjoint that is itself a constant is no line (`constant`);
- a node whose one user is c*node sends nothing but c times its user's adjoint: the line below it folds
  the c in (`scaled`);
- a line whose adjoint reaches one named node (or the variable) below it only through constant factors and
  sums with what does not depend on the variable (`1 - std` above the user's std) is said by that node's
  line, under the rule of the operation above it (`FoldedAbove`).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.nodes import shape_of
from gradlang.expr.tensor.shapes import is_size


def constant(value) -> bool:
    """A formula of numbers and sizes only (a mean's 25/(m*n) at symbolic sizes, 25/6 at literal ones; ones(n)
    as ones(3))."""
    return all(is_size(s) for s in value.free_symbols)


def scaled(node, arriving) -> bool:
    """A constant factor's product rule: the node's one user (arriving: (user, position) pairs) is c*node."""
    if len(arriving) != 1:
        return False
    user, at = arriving[0]
    return _scales(user, at)


def _scales(user, at: int) -> bool:
    """Is the user's argument at `at` times a scalar constant all the user does to it (not a data array's ⊙)?"""
    return isinstance(user, sp.Mul) and all(constant(factor) and not shape_of(factor)
                                            for k, factor in enumerate(user.args) if k != at)


class FoldedAbove:
    """The lines a named node's (or the variable's) line says: `above[v] = (u, c)` when u's adjoint reaches v
    only as c times it (u = a + c*v, a independent of the variable, v of u's shape), so v's line shows u's rule
    instantiated and scaled by c, and u has no line of its own."""

    def __init__(self, traced, uses: dict, shown):
        """traced: the nodes the pass visits; uses: node -> (user, position) pairs; shown(node): is the node
        named (the variable, a user's binding), so that its line is shown whatever it says."""
        traced = set(traced)
        self.above: dict = {}
        for node in traced:
            if shown(node):
                top, factor = _top(node, traced, uses, shown)
                if top is not None and any(user in traced for user, _ in uses.get(top, ())):
                    self.above[node] = (top, factor)
        self.folded = frozenset(top for top, _ in self.above.values())


def _top(node, traced: set, uses: dict, shown) -> tuple:
    """(the highest node whose adjoint reaches `node` only through sums and constant factors, the product of
    those factors); (None, 1) when the node's one user is no such step. Each step has one traced user and sends
    its adjoint to no other traced argument, and no named node stands between."""
    top, factor = None, sp.S.One
    while True:
        users = [(user, k) for user, k in uses.get(node, ()) if user in traced]
        if len(users) != 1:
            return top, factor
        user, at = users[0]
        affine = _scales(user, at) or isinstance(user, sp.Add)
        others = any(arg in traced for k, arg in enumerate(user.args) if k != at)
        if not affine or others or shown(user) or shape_of(user) != shape_of(node):
            return top, factor
        if isinstance(user, sp.Mul):
            factor *= sp.Mul(*[arg for k, arg in enumerate(user.args) if k != at])
        node = top = user
