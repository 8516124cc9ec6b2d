"""A product with a `where` selects after multiplying: the untaken branch never poisons it.

JAX's reverse mode sends the cotangent through `jnp.where` with a select, so in
`d sqrt(where(y > 0, y*y, 0))/dy` at y < 0 the infinite sqrt'(0) meets a selected
zero and the gradient is 0 (issue 12, program 14). The symbolic derivative is the
product `1/(2*sqrt(w)) * where(y > 0, 2*y, 0)`, which IEEE arithmetic evaluates
to inf * 0 = nan. Before compiling to NumPy, every product with a `where` factor
one of whose branches is exactly zero is turned into the `where` of the products,
`where(y > 0, 2*y/(2*sqrt(w)), 0)`: the same number wherever both are finite, and
the selected zero where the other factors are not (docs/decisions.md).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.graph import build_dag
from gradlang.expr.functions import Where
from gradlang.expr.walk import dag_has


def mask_untaken(exprs: tuple) -> tuple:
    """The expressions with products pushed into their zero-branch `where` factors."""
    if not dag_has(list(exprs), Where):
        return exprs
    dag = build_dag(list(exprs))
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        args = [built[k] for k in kids]
        if kids and any(a is not b for a, b in zip(args, node.args)):
            node = node.func(*args)
        built.append(_pushed(node) if isinstance(node, sp.Mul) else node)
    return tuple(built[r] for r in dag.roots)


def _pushed(product):
    """where(c, a, 0) * rest -> where(c, a*rest, 0), for the first such factor."""
    for factor in product.args:
        if isinstance(factor, Where) and (factor.args[1].is_zero or factor.args[2].is_zero):
            condition, a, b = factor.args
            rest = [f for f in product.args if f is not factor]
            return Where(condition, _pushed_if_product(sp.Mul(a, *rest)), _pushed_if_product(sp.Mul(b, *rest)))
    return product


def _pushed_if_product(expr):
    return _pushed(expr) if isinstance(expr, sp.Mul) else expr
