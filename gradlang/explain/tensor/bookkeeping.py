"""The reshapes of a tensor pass: steps of bookkeeping a derivation does not show as lines of their own.

A traced program writes a keepdims max or sum as reshape(m, (2, 3, 3, 1)) inside broadcast_to(…) (JAX's
jaxpr has no keepdims), a view as reshape(einsum(…), (2, 3, 3, 4)). The adjoint of a reshape is the same
entries in the argument's shape: a reader takes the broadcast's Σ over the stretched axes straight to the
argument, as a teacher writes ∂L/∂m = Σₖ ȳ. expand_dims and squeeze are reshapes too, and so is a product by
the number 1 (logits divided by a temperature of 1.0).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor.axes import ExpandDims, Squeeze
from gradlang.expr.tensor.products import Reshape

_RESHAPES = (Reshape, ExpandDims, Squeeze)


def unit(node) -> bool:
    """u times the number 1 (`logits / 1.0`, a temperature of 1): the same entries, as a reshape has."""
    if not isinstance(node, sp.Mul):
        return False
    numbers = [f for f in node.args if f.is_number]
    product = sp.Mul(*numbers)
    return len(node.args) - len(numbers) == 1 and product.is_Number and float(product) == 1.0  # 1.0 is not 1 to SymPy


def bookkeeping(node, arriving, names, variables) -> bool:
    """A line of reshaping only: a reshape's own (expand_dims, squeeze: the keepdims of a traced softmax, its
    adjoint flows on to its argument's line, which says the rule of the operation above the reshape), or the
    line under a reshape shown by its name (DreamerV3's t2 = reshape(einsum(…), (2, 3, 3, 4)): ∂L/∂einsum(…) is
    ∂L/∂t2's entries in other brackets). The same numbers in another shape: not a step a reader takes."""
    if isinstance(node, _RESHAPES) and len(arriving) == 1 or unit(node) and node not in names:
        return True
    return len(arriving) == 1 and isinstance(arriving[0][0], _RESHAPES) and arriving[0][0] in names


def ruler(user, uses, tidied, names, variables):
    """The operation whose rule sent a line's adjoint: the user above it, or, past an unshown reshape, the
    user above that (broadcast_to's Σ over the stretched axes, of the traced keepdims reshape)."""
    while isinstance(user, _RESHAPES) and user not in names and user not in variables:
        above = [u for u, _ in uses.get(user, ()) if u in tidied]
        if len(above) != 1:
            return user
        user = above[0]
    return user


def through_units(arriving, uses, tidied, names) -> list:
    """The users that send a line its adjoint, past a product by 1 that is not shown: its own users (its line
    would repeat the factor's, ∂L/∂(1.0·z) = ∂L/∂z)."""
    while len(arriving) == 1 and unit(arriving[0][0]) and arriving[0][0] not in names:
        arriving = [(user, k) for user, k in uses.get(arriving[0][0], ()) if user in tidied]
    return arriving
