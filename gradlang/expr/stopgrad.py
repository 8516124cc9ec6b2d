"""The stop_gradient primitive: value of its input, derivative zero.

`StopGradient` is a SymPy function with a zero derivative rule, in the spirit
of JAX's `lax.stop_gradient` with `ad.defjvp_zero`. It survives
differentiation, so higher derivatives come out right, and numeric evaluation
treats it as the identity (see numeric.py).

Differentiation does not rely on the zero rule alone: SymPy would still
differentiate the argument and multiply by zero, which is ruinously slow on
large arguments. derive.py swaps every stopped subexpression for a constant
placeholder symbol before differentiating (`freeze`) and swaps it back after
(`thaw`); the zero rule here is the safety net.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.function_bases import SpelledAsGradlang, ZeroDerivative
from gradlang.expr.walk import dag_has, rebuild, shaped_build, unwrap


class StopGradient(ZeroDerivative, SpelledAsGradlang, sp.Function):
    """stop_gradient(u): value u, derivative 0 with respect to every variable."""

    nargs = 1

    @classmethod
    def eval(cls, arg):
        if isinstance(arg, StopGradient):
            return arg
        if not dag_has(arg, sp.Symbol):  # free_symbols walks the tree: exponential when shared
            return arg
        return None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _latex(self, printer, exp=None):
        tex = rf"\operatorname{{sg}}\left({printer._print(self.args[0])}\right)"
        return tex if exp is None else f"{tex}^{{{exp}}}"

    def _eval_is_positive(self):
        return self.args[0].is_positive

    def _eval_is_negative(self):
        return self.args[0].is_negative

    def _eval_is_zero(self):
        return self.args[0].is_zero

    def _eval_is_integer(self):
        return self.args[0].is_integer


def stop_gradient(expr: sp.Expr) -> sp.Expr:
    """Apply the primitive (constants and stopped values pass through)."""
    return StopGradient(expr)


def unstopped(expr: sp.Basic) -> sp.Basic:
    """`expr` with every stop_gradient removed: the function it computes.

    Each rebuilt part keeps its shape: unstopped(sg(v)/v) is v/v, which is ones(n), not SymPy's 1."""
    return unwrap(expr, StopGradient, shaped_build)


def transparent(expr: sp.Basic, stops) -> sp.Basic:
    """`expr` with the given stop nodes made transparent: each replaced by its argument unstopped (a stop
    inside it goes with it), every other stop kept. The ledger of a higher derivative removes the stops one
    after another this way (explain/ledger/higher.py)."""
    return rebuild(expr, {stop: unstopped(stop.args[0]) for stop in stops}, shaped_build) if stops else expr


def unstopped_symbols(exprs) -> set:
    """The symbols reached without passing through a stop: those a derivative can still see.

    One walk over distinct subexpressions (a shared subtree is visited once),
    not entering any StopGradient.
    """
    seen, found = set(), set()
    stack = [e for e in exprs if isinstance(e, sp.Basic)]
    while stack:
        node = stack.pop()
        if node in seen or isinstance(node, StopGradient):
            continue
        seen.add(node)
        if isinstance(node, sp.Symbol):
            found.add(node)
        stack.extend(a for a in node.args if isinstance(a, sp.Basic))
    return found
