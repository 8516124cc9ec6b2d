"""NumPy broadcasting made explicit (section 3b): the operands of an elementwise operation, each stretched to
their common shape by one node, `broadcast_to` (expr/tensor/axes.py).

The elementwise engine then meets equal shapes (or scalars, which SymPy's
algebra broadcasts by itself), so each primitive keeps its one derivative
rule, and the stretching has its own: its adjoint sums over the stretched
axes. `X - mean(X, 0)` of `X: R^(m,n)` is `X - broadcast_to(sum(X, 0)/m, (m, n))`
at every size (docs/decisions.md, "Broadcasting is one node").
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.axes import broadcast_to
from gradlang.expr.tensor.lower import involves
from gradlang.expr.tensor.nodes import shape_of
from gradlang.expr.walk import relation


def stretched(values: list, what: str = "an elementwise operation") -> list:
    """The operands with every tensor of another shape stretched to the broadcast of them all (NumPy's rule;
    a ShapeError names two shapes that clash). Scalars and operands of that shape are unchanged."""
    tensors = [shape_of(v) for v in values if _tensor(v)]
    if len({s for s in tensors if s}) <= 1:
        return values
    target = shapes.stretched([s for s in tensors if s], what)
    return [broadcast_to(v, target) if _tensor(v) else v for v in values]


def stretched_condition(condition, target: tuple):
    """A comparison of tensors (where's condition) with its sides stretched to `target`."""
    if not isinstance(condition, sp.Rel) or not any(_tensor(side) for side in condition.args):
        return condition
    sides = [broadcast_to(side, target) if _tensor(side) else side for side in condition.args]
    return relation(condition.func, *sides)


def _tensor(value) -> bool:
    return isinstance(value, sp.Expr) and involves(value) and bool(shape_of(value))
