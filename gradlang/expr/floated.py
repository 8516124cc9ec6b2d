"""A formula's form with its exact numbers as floats, to find one formula inside another built with floats.

A value with a float in it is folded (core/floats.py): its integers become floats where SymPy keeps them
(DreamerV3's KL balance holds the user's t5 = exp(t3 - bc(t4)) as exp(t3 - 1.0*bc(t4)) inside
log(0.99*t6 + 0.0025)), so the user's binding, or a stop as the evaluator recorded it, is not `==` the node
of the explained formula that it is. Their forms are: every exact number of a sum, product or power made a
float, the node built again (SymPy evaluates the two alike). Each distinct part is formed once (a DAG walk).
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.graph import build_dag


class Forms:
    """form(value) for values that share parts, each distinct part formed once over all of them."""

    def __init__(self):
        self.form: dict = {}

    def __call__(self, value):
        if not isinstance(value, sp.Basic):
            return value
        if value not in self.form:
            for node in build_dag([value]).nodes:
                if node not in self.form:
                    self.form[node] = _with_floats(node, [self.form[a] for a in node.args])
        return self.form[value]


def _with_floats(node, args: list):
    """The node over its formed args, an exact number of a sum, product or power made a float."""
    if isinstance(node, (sp.Add, sp.Mul, sp.Pow)):
        args = [sp.Float(a) if isinstance(a, sp.Rational) else a for a in args]
    if all(a is b for a, b in zip(args, node.args)):
        return node
    try:
        return node.func(*args)
    except (TypeError, ValueError, AttributeError):
        return node
