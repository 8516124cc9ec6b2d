"""Seeing vectors in scalars: the vector-level shape of gradlang's component values.

gradlang's values are arrays of scalar SymPy expressions, so `softmax(x - m)`
reaches explain as three expressions and `sum((W @ a - e)^2)` as one sum of
two squares. The vector derivations (vector/derivation.py) need the vector beneath:
this module finds it, by matching the components against each other
(anti-unification: the same template with a different hole in each) and by
recognising the builtins' two spellings (`softmax` kept whole, or written
out as `exp(v) / sum(exp(v))` by a user definition). Nothing here decides
anything about derivatives; every match is checked again by the derivation.
"""

from __future__ import annotations

import re

import sympy as sp

from gradlang.expr.primitives.vectors import LogSumExp, Softmax
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.walk import dag_atoms

HOLE = sp.Symbol("u_hole", real=True)
COMPONENT = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)\[(?P<index>\d+(, \d+)?)\]$")


def whole_name(items) -> str | None:
    """x when the items are exactly x[0], …, x[n-1] (or W[0, 0], … row by row), n ≥ 2."""
    if len(items) < 2 or not all(isinstance(i, sp.Symbol) for i in items):
        return None
    matches = [COMPONENT.match(i.name) for i in items]
    if not all(matches) or len({m.group("base") for m in matches}) != 1:
        return None
    base = matches[0].group("base")
    if "," in matches[0].group("index"):
        return base if _is_grid(base, [m.group("index") for m in matches]) else None
    return base if [m.group("index") for m in matches] == [str(k) for k in range(len(items))] else None


def _is_grid(base: str, indices: list) -> bool:
    rows = 1 + max(int(i.split(",")[0]) for i in indices)
    columns = len(indices) // rows
    return indices == [f"{r}, {c}" for r in range(rows) for c in range(columns)]


def template(terms: list):
    """(h, [u₀, u₁, …]) with terms[j] = h(u_j), h holding HOLE; None if they do not share one.

    The hole goes as deep as the terms agree: where exactly one argument
    position differs, the match continues inside it; where several differ,
    the hole is that node.
    """
    if len(set(terms)) == 1:
        return None
    first = terms[0]
    same_shape = all(t.func == first.func and len(t.args) == len(first.args) for t in terms)
    if not same_shape or first.is_Atom or not first.args:
        return HOLE, list(terms)
    differing = [k for k in range(len(first.args)) if len({t.args[k] for t in terms}) > 1]
    if len(differing) != 1:
        return HOLE, list(terms)
    k = differing[0]
    inner = template([t.args[k] for t in terms])
    if inner is None:
        return HOLE, list(terms)
    shape, holes = inner
    args = list(first.args)
    args[k] = shape
    return first.func(*args), holes


def softmax_form(expr):
    """(k, [a₀, …]) when expr is component k of softmax(a): kept whole or written exp(a_k)/Σ exp(a_j)."""
    if isinstance(expr, Softmax):
        return int(expr.args[0]), list(expr.args[1:])
    if not expr.is_Mul or len(expr.args) != 2:
        return None
    numerator = [f for f in expr.args if isinstance(f, sp.exp)]
    denominator = [f for f in expr.args if f.is_Pow and f.exp == -1]
    if len(numerator) != 1 or len(denominator) != 1:
        return None
    args = exp_sum(denominator[0].base)
    if args is None or numerator[0].args[0] not in args:
        return None
    return args.index(numerator[0].args[0]), args


def exp_sum(expr):
    """[a₀, …] when expr is exp(a₀) + exp(a₁) + … (two terms or more), else None."""
    if not expr.is_Add or not all(isinstance(t, sp.exp) for t in expr.args):
        return None
    return ordered([t.args[0] for t in expr.args])


def logsumexp_form(expr):
    """[a₀, …] when expr is logsumexp(a): kept whole or written log(Σ exp(a_j))."""
    if isinstance(expr, LogSumExp):
        return list(expr.args)
    if isinstance(expr, sp.log) and len(expr.args) == 1:
        return exp_sum(expr.args[0])
    return None


def ordered(args: list) -> list:
    """Arguments in the order of the components they hold (SymPy sorts a sum its own way)."""
    def key(a):
        outside = a.xreplace({s: sp.Dummy() for s in a.atoms(StopGradient)}).free_symbols
        indices = sorted(int(m.group("index").split(",")[0]) for s in outside if (m := COMPONENT.match(s.name)))
        return (indices[:1] or [len(args)], sp.default_sort_key(a))
    return sorted(args, key=key)


def stops_in(expr) -> list:
    """The outermost stops of an expression, in a fixed order."""
    stops = dag_atoms(expr, StopGradient)
    inner = set().union(*(dag_atoms(s.args[0], StopGradient) for s in stops)) if stops else set()
    return sorted(stops - inner, key=sp.default_sort_key)
