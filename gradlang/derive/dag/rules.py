"""Local derivative rules: one function per SymPy class, in one table.

A rule takes a node and, for each of its args, whether that arg needs an
adjoint (`wanted`), and returns the partial derivative of the node by each
arg (ZERO where not wanted). Reverse accumulation multiplies these by the
node's adjoint; nothing else about differentiation lives anywhere.

The functions of the language take their partials from their records in
the registry (gradlang/expr/primitives/), written once against `Ops` and built
here with the sharing-preserving constructors of build.py. What stays here is
structural: sums, products, powers and where. Conventions of the language
reference (docs/language.md), section 5: stop_gradient and the
piecewise-constant functions cut the edge to their argument (no adjoint flows
through it), and where differentiates its branches only.
"""

from __future__ import annotations

import sympy as sp
from sympy.logic.boolalg import Boolean

from gradlang.expr import primitives
from gradlang.expr.functions import Where
from gradlang.derive.dag.build import ONE, ZERO, add, mul, power, reciprocal

CUT_CLASSES = primitives.constant_classes()

RULES: dict = {}


def is_cut(node) -> bool:
    """A node whose argument never receives an adjoint (a cut edge)."""
    # SymPy's Symbol is also a Boolean; only conditions (relations, and/or) are cut.
    return isinstance(node, CUT_CLASSES) or (isinstance(node, Boolean) and not node.is_Symbol)


def rule(*classes):
    def register(function):
        for cls in classes:
            RULES[cls] = function
        return function
    return register


def call(function, *args):
    """function(*args), unevaluated unless all args are atoms.

    SymPy's eval of sin, cos, comparisons and the shares asks assumptions of
    its argument, which on a first meeting walks it: quadratic along a deep
    chain. Small results are evaluated afterwards anyway (canonical.py).
    """
    if all(a.is_Atom for a in args):
        return function(*args)
    return function(*args, evaluate=False)


DAG = primitives.Ops(add=add, mul=mul, power=power, call=call)


def _record_rule(record):
    """The partials of a primitive from its record, built with the DAG's constructors."""
    return lambda node, wanted: [record.partial(DAG, node, k) if w else ZERO for k, w in enumerate(wanted)]


def local_partials(node, wanted) -> list:
    """The partials of node by each of its args, from the rule table."""
    if isinstance(node, CUT_CLASSES):
        return [ZERO] * len(node.args)
    rule_for = RULES.get(type(node)) or _inherited_rule(type(node))
    return rule_for(node, wanted)


def _inherited_rule(cls):
    for base in cls.__mro__[1:]:
        if base in RULES:
            return RULES[base]
    return _fdiff_rule


def _fdiff_rule(node, wanted) -> list:
    """Fallback for other functions: SymPy's own fdiff, one argument at a time."""
    return [node.fdiff(i + 1) if w else ZERO for i, w in enumerate(wanted)]


@rule(sp.Add)
def _add(node, wanted):
    return [ONE] * len(node.args)


@rule(sp.Mul)
def _mul(node, wanted):
    """Prefix and suffix products over the varying factors: no division, linear size."""
    args = node.args
    constant = mul(*[a for a, w in zip(args, wanted) if not w])
    varying = [i for i, w in enumerate(wanted) if w]
    prefix = [ONE]
    for i in varying[:-1]:
        prefix.append(mul(prefix[-1], args[i]))
    suffix = [ONE]
    for i in reversed(varying[1:]):
        suffix.append(mul(args[i], suffix[-1]))
    suffix.reverse()
    partials = [ZERO] * len(args)
    for j, i in enumerate(varying):
        partials[i] = mul(constant, prefix[j], suffix[j])
    return partials


@rule(sp.Pow)
def _pow(node, wanted):
    base, exponent = node.args
    by_base = ZERO
    if wanted[0] and exponent.is_Number:
        by_base = mul(exponent, power(base, add(exponent, sp.S.NegativeOne)))
    elif wanted[0]:
        by_base = mul(exponent, node, reciprocal(base))
    by_exponent = mul(node, call(sp.log, base)) if wanted[1] else ZERO
    return [by_base, by_exponent]


for _record in primitives.records():
    if _record.cls is not None and _record.partial is not None:
        RULES[_record.cls] = _record_rule(_record)


class Branch(Where):
    """where(c, 1, 0) as the partial of a where by its branch (canonical.py sinks it)."""


@rule(Where)
def _where(node, wanted):
    """The condition is not differentiated; each branch is selected by it."""
    condition = node.args[0]
    return [ZERO, Branch(condition, ONE, ZERO), Branch(condition, ZERO, ONE)]
