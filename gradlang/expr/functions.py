"""gradlang's own SymPy functions for the non-smooth builtins of the language reference (docs/language.md), section 5.

SymPy's `Max` gives 1/2 to every tied argument whatever their number, its
`sign`/`floor` differentiate into `DiracDelta`, and its Heaviside terms
lambdify into slow, fragile `select` calls. gradlang instead uses:

- `Maximum` / `Minimum`: one reduction over any number of arguments whose
  derivative is a tie-aware share, `MaxShare(k, a_0, ..., a_n)`: 1/t when a_k
  attains the extremum together with t arguments in all, else 0.
- `Relu`, whose derivative is `where(u > 0, 1, 0)` (0 at 0).
- `Round` (halves to even, as NumPy and tf.round).
- `Where(c, a, b)`, which differentiates its branches only.

Each class's derivative is the `partial` rule of its record in the registry
(gradlang/expr/primitives/); the piecewise-constant ones (round, the shares) take
the zero-derivative mixin, and derive.py treats them, with sign, floor and
ceiling, as constants like stop_gradient.
"""

from __future__ import annotations

import math

import sympy as sp
from sympy.logic.boolalg import BooleanFalse, BooleanTrue

from gradlang.expr.primitives.record import GradlangFunction, ZeroDerivative
from gradlang.expr.engine import kept_shape, shape_of
from gradlang.expr.walk import dag_has


def _ordered_values(args) -> list | None:
    """Each argument as a 30-digit number, when SymPy can order them all; else None.

    A held IEEE form such as inf^0.0 (1.0 in float) is comparable to SymPy yet
    evaluates to its nan: it is left to the float path (grammar fuzzer, typed seed 407).
    """
    if dag_has(list(args), sp.Symbol):  # one walk of the DAG first: is_comparable asks SymPy's
        return None  # assumptions, which walk a shared argument once per path (max(f30, x) of a doubling chain)
    if not all(a.is_comparable for a in args):
        return None
    values = [a.evalf(30) for a in args]
    return None if any(v is sp.nan for v in values) else values


class _Reduction(GradlangFunction):
    """max/min over all arguments at once; the derivative splits ties equally."""

    pick = max
    share_class: type

    @classmethod
    def eval(cls, *args):
        if not args:
            raise TypeError(f"{cls.__name__} needs at least one argument")
        if len(args) == 1:
            return args[0]
        if sp.nan in args:
            return sp.nan  # IEEE, as np.maximum and jnp.max: a nan argument makes the extremum nan
        values = _ordered_values(args)
        return None if values is None else args[values.index(cls.pick(values))]

    def _latex(self, printer, exp=None):
        name = r"\max" if self.pick is max else r"\min"
        tex = rf"{name}\left({', '.join(printer._print(a) for a in self.args)}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"

    def _eval_is_extended_real(self):
        return all(a.is_extended_real for a in self.args) or None


class _Share(ZeroDerivative, sp.Function):
    """The share of argument k in the derivative of a max/min (piecewise constant)."""

    pick = max

    @classmethod
    def eval(cls, k, *args):
        values = _ordered_values(args) if args else None
        if values is None:
            return None
        extremum = cls.pick(values)
        tied = [v == extremum for v in values]
        return sp.Rational(1, sum(tied)) if tied[int(k)] else sp.S.Zero

    def _eval_is_extended_real(self):
        return True

    def _eval_is_nonnegative(self):
        return True


class MaxShare(_Share):
    pick = max


class MinShare(_Share):
    pick = min


class Maximum(_Reduction):
    pick = max
    share_class = MaxShare


class Minimum(_Reduction):
    pick = min
    share_class = MinShare


class Relu(GradlangFunction):
    """relu(u) = max(u, 0) with derivative 1 where u > 0, else 0 (0 at 0)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_comparable:
            return u if u > 0 else (u * 0 if u.is_Float else sp.S.Zero)
        if u.is_nonnegative:
            return u
        if u.is_nonpositive:
            return sp.S.Zero
        return None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_is_nonnegative(self):
        return True if self.args[0].is_extended_real else None


class Round(ZeroDerivative, sp.Function):
    """round(u): nearest integer, halves to even (NumPy, tf.round)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_Integer or u in (sp.oo, -sp.oo, sp.nan):
            return u  # IEEE: round(±inf) and round(nan) are themselves
        if u.is_Float:  # beyond float64 (1e308^2 held by SymPy as 1e616) it is inf, as IEEE rounds it
            return sp.Float(round(float(u))) if math.isfinite(float(u)) else (sp.oo if u > 0 else -sp.oo)
        if u.is_Rational or (u.is_number and u.is_comparable):
            return sp.Integer(round(sp.Rational(u) if u.is_Rational else sp.Rational(str(u.evalf(40)))))
        return None

    def _eval_is_integer(self):
        return self.args[0].is_extended_real or None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real


class Where(sp.Function):
    """where(c, a, b): a where the condition holds, else b; only a and b are differentiated."""

    nargs = 3

    @classmethod
    def eval(cls, condition, a, b):
        if isinstance(condition, BooleanTrue) or condition is True:
            return _branch(a, condition, a, b)
        if isinstance(condition, BooleanFalse) or condition is False:
            return _branch(b, condition, a, b)
        if a == b:
            return _branch(a, condition, a, b)
        return None

    def _eval_derivative(self, symbol):
        condition, a, b = self.args
        return Where(condition, a.diff(symbol), b.diff(symbol))

    def _eval_is_extended_real(self):
        _, a, b = self.args
        return (a.is_extended_real and b.is_extended_real) or None


def _branch(taken, condition, a, b):
    """The branch a decided where gives, with the where's shape: where(z > 0, t, t) of a vector z is t 𝟙,
    not the scalar t (a decided condition has no shape left; its branches keep theirs)."""
    parts = (*(condition.args if isinstance(condition, sp.Rel) else ()), a, b)
    try:
        shape = max((shape_of(p) for p in parts), key=len)
    except RecursionError:  # too deep to walk for a shape: a scalar formula in practice
        return taken
    return kept_shape(taken, shape)


class RealAbs(sp.Function):
    """abs(u) while sympy.diff runs (derive/derivatives.py `tree_gradient`): derivative sign(u)*u'.

    gradlang's values are real (a non-real result is nan), so abs' is sign(u)
    as the reference says. SymPy's Abs, unable to prove that log(y) or a
    `where` holding 1/y is real, differentiates through re, im and atan2
    instead: `diff(abs(log(y)), y)` printed log(y/sign(y))*sign(y)^2*… and a
    `where` of 1/y gave inf*0 = nan at y = 0 (differential fuzzer, seed 112).
    """

    nargs = 1

    def _eval_derivative(self, symbol):
        u = self.args[0]
        return sp.sign(u) * u.diff(symbol)

    def _eval_is_extended_nonnegative(self):
        return True


def _real_argument_first(sympy_rule):
    """tanh of an extended-real argument is real and finite. SymPy's own rules for
    those facts first split the argument into real and imaginary parts, expanding it
    as a tree: exponential in the depth of a self-composed function (issue 12, #15)."""

    def rule(self):
        if self.args[0].is_extended_real:
            return True
        return sympy_rule(self)

    return rule


for _fact in ("finite", "real"):  # SymPy looks the rules up in a table built with the class
    sp.tanh._prop_handler[_fact] = _real_argument_first(sp.tanh._prop_handler[_fact])
