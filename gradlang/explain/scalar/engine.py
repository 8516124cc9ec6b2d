"""The derivation engine: one scalar derivative, rule by rule.

It works exactly as derive.derivative does: stopped and piecewise-constant
subexpressions are first frozen into placeholder symbols, then every node
is differentiated by the rule registered for its SymPy class (scalar/rules.py),
which composes the node's result from its children's results with the same
SymPy operations as SymPy's own `_eval_derivative`. So the root result is
structurally the result of `diff`, and the tree shown is the tree computed.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.derivatives import freeze
from gradlang.explain.note import note
from gradlang.explain.scalar.steps import Derived, Step
from gradlang.expr.walk import dag_atoms, dag_has


class Context:
    """What every rule needs: the variable, the frozen placeholders, a memo."""

    def __init__(self, symbol: sp.Symbol, frozen):
        self.symbol = symbol
        self.frozen = frozen
        # placeholders whose stopped expression depends on the variable
        self.live = {d for d, e in frozen.thaw_map.items() if dag_has(e, symbol)}
        self.memo: dict = {}

    def thaw(self, expr):
        return self.frozen.thaw(expr)

    def stopped(self, placeholder):
        """The stopped (or piecewise-constant) expression behind a placeholder."""
        return self.frozen.thaw_map.get(placeholder)

    def involves(self, expr) -> bool:
        """Does the expression depend on the variable, through a stop or not?"""
        free = dag_atoms(expr, sp.Symbol)
        return self.symbol in free or bool(self.live & free)

    def derive(self, expr) -> Derived:
        """The derivation of a (frozen) subexpression, memoised."""
        if expr not in self.memo:
            self.memo[expr] = self._derive(expr)
        return self.memo[expr]

    def _derive(self, expr) -> Derived:
        from gradlang.explain.scalar.rules import constant, rule_for

        if not self.involves(expr):
            return constant(expr, self)
        derived = rule_for(expr)(expr, self)
        if not dag_has(expr, self.symbol) and derived.raw != 0:
            # SymPy's Derivative answers 0 before any rule runs; so must we.
            return self.make(derived.step.rule, expr, sp.S.Zero, (),
                             note=derived.step.note, substeps_steps=derived.step.substeps)
        return derived

    def make(self, rule, expr, raw, substeps=(), *, substeps_steps=None, **fields) -> Derived:
        """A Derived record whose step shows thawed (readable) forms."""
        steps = substeps_steps if substeps_steps is not None else tuple(d.step for d in substeps)
        fields["note"] = note(fields.get("note", ""))  # words, or a Note with the expressions in it
        if fields.get("given"):
            fields["given"] = tuple((name, self.thaw(e)) for name, e in fields["given"])
        step = Step(rule, self.thaw(expr), self.symbol, self.thaw(raw), tuple(steps), **fields)
        return Derived(step, raw)


def derivation(expr, symbol) -> Step:
    """The step-by-step derivative of a scalar expression with respect to a symbol.

    The root's result equals `derive.derivative(expr, symbol)`.
    """
    context = Context(symbol, freeze(expr))
    return context.derive(context.frozen.expr).step
