"""Two mixins of gradlang's own SymPy classes that need nothing of the primitive records' machinery.

Kept out of expr/primitives/ (whose package loads record.py and its dataclasses) so stop_gradient's class,
which every program's evaluator knows, costs start-up nothing more (issue #41)."""

from __future__ import annotations

import sympy as sp


class ZeroDerivative:
    """Mixin for a SymPy function whose derivative is zero (stop_gradient, round, the shares).

    Both of SymPy's hooks answer zero, so no argument is ever differentiated
    (JAX's `ad.defjvp_zero`).
    """

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _eval_derivative(self, symbol):
        return sp.S.Zero


class SpelledAsGradlang:
    """str() of the value reads as gradlang (stop_gradient(x), not StopGradient(x)), whether or not the records
    have been loaded yet: they are, on the first such str() (registering a record sets the same hook)."""

    def _sympystr(self, printer):
        from gradlang.expr import primitives

        return primitives.spelled(self, printer)
