"""The scalar simplifier's budget of work: the terms SymPy would create, counted before it runs (issue #41).

SymPy's simplify, cancel and factor bring a formula over one denominator and
multiply it out (simplify's `_mexpand(cancel(e))`, cancel's `as_numer_denom`
then its polynomials), and that is where their time goes: a layer norm's
derivative over five scalars is 227 nodes, under the size bound, yet its
numerator multiplied out has thousands of terms and simplify took 4 s of it,
with `0.5` or `1/2` alike. The size of a tree does not predict that; the terms
do. So before SymPy runs, `work` multiplies the formula out itself, the
way `as_numer_denom` does (a sum's terms over the product of their distinct
denominators, inside every function's argument too), keeping only which
monomials appear, never their coefficients: a monomial is one Python integer
whose bit fields are the exponents of its generators (symbols, function
applications, roots b^(1/q)), so multiplying two is adding two integers. Each
product of two polynomials pays |A|·|B| units of work and each sum its terms,
from a `Meter`; when the units run out the count stops there, so counting is
bounded by the same budget it enforces. A formula whose count passes the
budget is not given to SymPy (bounded.py keeps it, with a note).

The count depends only on the formula's structure, never on its numbers nor on
a clock: `0.5` and `1/2` cost the same, and the same formula is let through or
kept on every machine and every run.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.graph import build_dag

BITS = 64  # bits of one generator's exponent in a monomial: a count of at most 2^20 products adds at most
# 2^20 exponents each at most the budget, so no exponent can carry into the next field
_MASK = (1 << BITS) - 1


class OutOfWork(Exception):
    """A step's count passed what is left of the budget (the count stops where it is)."""


class Meter:
    """Units of work left to a count, and those spent: `spent` never passes the budget."""

    def __init__(self, units: int):
        self.budget, self.spent = units, 0

    def pay(self, units: int) -> None:
        if self.spent + units > self.budget:
            self.spent = self.budget  # nothing more is counted: what is left cannot pay for any step
            raise OutOfWork
        self.spent += units

    def afford(self, count, expr) -> bool:
        """Whether `count(expr, meter)` is paid for (the count's own work included); False once it is not."""
        try:
            count(expr, self)
        except OutOfWork:
            return False
        return True


def polynomial_work(expr, meter: Meter) -> None:
    """Pay for bringing expr over one denominator and multiplying it out, as cancel does: the products
    and sums of monomials it takes, then the degrees (SymPy's polynomials are dense lists: x^100000 − 1
    is a list of 100 001 coefficients). OutOfWork, having paid what it counted, when the meter runs out."""
    forms = _Forms(meter)
    numerator, denominator = forms.of(expr)
    for poly in (numerator, forms.denominator_poly(denominator)):
        meter.pay(sum(_degrees(poly, len(forms.generators))))


def expansion_work(expr, meter: Meter) -> None:
    """Pay for expr multiplied out as simplify's `_mexpand(cancel(e))` writes it, a copy of the
    denominator under every term of the numerator: the nodes of that tree, which every later tree walk
    visits (40 terms over a denominator of 800 nodes are 32 000 nodes)."""
    forms = _Forms(meter)
    numerator, denominator = forms.of(expr)
    below = forms.written(forms.denominator_poly(denominator))
    meter.pay(forms.written(numerator) + (len(numerator) * below if denominator else 0))


class _Forms:
    """Each distinct subexpression as (numerator, denominator): the numerator a frozenset of monomials, the
    denominator a sorted tuple of (factor, power), each factor a key of `factors` (its frozenset of monomials)."""

    def __init__(self, meter: Meter):
        self.meter = meter
        self.generators: dict = {}
        self.sizes: list = []  # the written size of each generator (`written`), in the order of their bits
        self.factors: dict = {}
        self.factor_ids: dict = {}
        self.products: dict = {(): frozenset({0})}

    def of(self, expr):
        dag = build_dag([expr])
        forms: list = []
        for node, kids in zip(dag.nodes, dag.children):
            self.meter.pay(1)
            forms.append(self._form(node, [forms[k] for k in kids]))
        return forms[dag.roots[0]]

    def _form(self, node, args):
        if isinstance(node, sp.Number):
            return frozenset({0}), ()
        if isinstance(node, sp.Add):
            return self._sum(args)
        if isinstance(node, sp.Mul):
            return self._product(args)
        if isinstance(node, sp.Pow) and node.exp.is_Integer:
            return self._power((node.base, 1), args[0], int(node.exp))
        if isinstance(node, sp.Pow) and node.exp.is_Rational:
            return self._root(node, args[0])
        return frozenset({self._generator(node, args)}), ()

    def _root(self, node, base):
        """b^(p/q) as expand writes it: b^k, multiplied out, times the root b^(1/q) to the remainder
        ((x + y)^(5/2) = (x² + 2xy + y²) √(x + y), and its inverse in a denominator); of a base that is
        no sum, the root to the power p, as SymPy's polynomials take it (x^(1000001/1000) has degree
        1 000 001 in x^(1/1000))."""
        sign, whole, rest = (1 if node.exp > 0 else -1), *divmod(abs(int(node.exp.p)), int(node.exp.q))
        root = self._generator(sp.Pow(node.base, sp.Rational(1, node.exp.q)), [base])
        if not isinstance(node.base, sp.Add):
            return self._power((node.base, node.exp.q), (frozenset({root}), ()), int(node.exp.p))
        parts = [self._power((node.base, node.exp.q), (frozenset({root}), ()), sign * rest)]
        if whole:
            parts.append(self._power((node.base, 1), base, sign * whole))
        return self._product(parts)

    def _generator(self, node, args=()) -> int:
        """The monomial of one generator: 1 in its bit field. Its size is its arguments' written out."""
        if node not in self.generators:
            self.sizes.append(1 + sum(self.written(n) + self.written(self.denominator_poly(d)) for n, d in args))
            self.generators[node] = 1 << (BITS * len(self.generators))
        return self.generators[node]

    def written(self, poly: frozenset) -> int:
        """The nodes of a polynomial written out: a node per term and per factor, each generator its size."""
        self.meter.pay(len(poly) * max(len(self.generators), 1))
        total = 0
        for monomial in poly:
            total += 1
            for g, size in enumerate(self.sizes):
                if (monomial >> (BITS * g)) & _MASK:
                    total += size + 1
        return total

    def _sum(self, args):
        """Terms grouped by denominator; each group's numerator times the other groups' denominators."""
        groups: dict = {}
        for numerator, denominator in args:
            groups[denominator] = self.union(groups.get(denominator, frozenset()), numerator)
        if len(groups) == 1:
            (denominator, numerator), = groups.items()
            return numerator, denominator
        total: frozenset = frozenset()
        for denominator, numerator in groups.items():
            others = _merged([d for d in groups if d != denominator])
            total = self.union(total, self.times(numerator, self.denominator_poly(others)))
        return total, _merged(list(groups))

    def _product(self, args):
        numerator = frozenset({0})
        for factor, _ in args:
            numerator = self.times(numerator, factor)
        return numerator, _merged([d for _, d in args])

    def _power(self, base_key, base, power: int):
        """base^power; a negative power puts base's numerator in the denominator, a factor named by the
        base and its root (b^-1 and b^-2 are powers of one factor, as SymPy's as_numer_denom sees them)."""
        numerator, denominator = base
        if power < 0:
            key = self.factor_ids.setdefault(base_key, len(self.factor_ids))
            self.factors[key] = numerator
            numerator, denominator = self.denominator_poly(denominator), ((key, 1),)
        if len(numerator) == 1:  # a monomial's power: its exponents multiplied, the degree paid for
            (monomial,) = numerator
            self.meter.pay(max(_degrees(numerator, len(self.generators)), default=0) * abs(power))
            raised = frozenset({monomial * abs(power)})
        else:
            raised = frozenset({0})
            for _ in range(abs(power)):
                raised = self.times(raised, numerator)
        return raised, tuple((key, p * abs(power)) for key, p in denominator)

    def denominator_poly(self, denominator) -> frozenset:
        """The product of a denominator's factors, multiplied out (once per denominator)."""
        if denominator not in self.products:
            poly = frozenset({0})
            for key, power in denominator:
                for _ in range(power):
                    poly = self.times(poly, self.factors[key])
            self.products[denominator] = poly
        return self.products[denominator]

    def times(self, a: frozenset, b: frozenset) -> frozenset:
        self.meter.pay(len(a) * len(b))
        if len(a) == 1 and 0 in a:
            return b
        return frozenset(x + y for x in a for y in b)

    def union(self, a: frozenset, b: frozenset) -> frozenset:
        self.meter.pay(len(a) + len(b))
        return a | b


def _merged(denominators: list) -> tuple:
    """The product of denominators: each factor's powers added."""
    powers: dict = {}
    for denominator in denominators:
        for key, power in denominator:
            powers[key] = powers.get(key, 0) + power
    return tuple(sorted(powers.items()))  # factors numbered as met: the same order on every run and hash seed


def _degrees(poly: frozenset, generators: int) -> list:
    """The highest exponent of each generator in a polynomial (its dense list's length, less one)."""
    return [max((m >> (BITS * g)) & _MASK for m in poly) for g in range(generators)]
