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

Piecewise-constant functions (sign, floor, ceiling, round and the shares)
have derivative zero; derive.py treats them as constants like stop_gradient.
"""

from __future__ import annotations

import sympy as sp
from sympy.logic.boolalg import BooleanFalse, BooleanTrue


def _comparable(args) -> bool:
    return all(a.is_comparable for a in args)


class _Reduction(sp.Function):
    """max/min over all arguments at once; the derivative splits ties equally."""

    pick = max
    share_class: type

    @classmethod
    def eval(cls, *args):
        if not args:
            raise TypeError(f"{cls.__name__} needs at least one argument")
        if len(args) == 1:
            return args[0]
        if _comparable(args):
            return cls.pick(args, key=lambda a: a.evalf(30))
        return None

    def _latex(self, printer, exp=None):
        name = r"\max" if self.pick is max else r"\min"
        tex = rf"{name}\left({', '.join(printer._print(a) for a in self.args)}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"

    def _eval_derivative(self, symbol):
        terms = []
        for k, arg in enumerate(self.args):
            darg = arg.diff(symbol)
            if darg != 0:
                terms.append(self.share_class(sp.Integer(k), *self.args) * darg)
        return sp.Add(*terms)

    def fdiff(self, argindex=1):
        return self.share_class(sp.Integer(argindex - 1), *self.args)

    def _eval_is_extended_real(self):
        return all(a.is_extended_real for a in self.args) or None


class _Share(sp.Function):
    """The share of argument k in the derivative of a max/min (piecewise constant)."""

    pick = max

    @classmethod
    def eval(cls, k, *args):
        if not args or not _comparable(args):
            return None
        values = [a.evalf(30) for a in args]
        extremum = cls.pick(values)
        tied = [v == extremum for v in values]
        return sp.Rational(1, sum(tied)) if tied[int(k)] else sp.S.Zero

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _eval_derivative(self, symbol):
        return sp.S.Zero

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


class Relu(sp.Function):
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

    def fdiff(self, argindex=1):
        u = self.args[0]
        return Where(sp.StrictGreaterThan(u, 0), sp.S.One, sp.S.Zero)

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_is_nonnegative(self):
        return True if self.args[0].is_extended_real else None


class Round(sp.Function):
    """round(u): nearest integer, halves to even (NumPy, tf.round)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_Integer:
            return u
        if u.is_Float:
            return sp.Float(round(float(u)))
        if u.is_Rational or (u.is_number and u.is_comparable):
            return sp.Integer(round(sp.Rational(u) if u.is_Rational else sp.Rational(str(u.evalf(40)))))
        return None

    def fdiff(self, argindex=1):
        return sp.S.Zero

    def _eval_derivative(self, symbol):
        return sp.S.Zero

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
            return a
        if isinstance(condition, BooleanFalse) or condition is False:
            return b
        if a == b:
            return a
        return None

    def _eval_derivative(self, symbol):
        condition, a, b = self.args
        return Where(condition, a.diff(symbol), b.diff(symbol))

    def _eval_is_extended_real(self):
        _, a, b = self.args
        return (a.is_extended_real and b.is_extended_real) or None


# Piecewise-constant functions: derivative zero, treated as constants by derive.py.
PIECEWISE_CONSTANT = (sp.sign, sp.floor, sp.ceiling, Round, MaxShare, MinShare)
