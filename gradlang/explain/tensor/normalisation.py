"""A normalisation in the reverse pass as one step: batch norm's and layer norm's backward in closed form.

Written out with means, squares and a square root (as the importers write
`batch_norm` and `layer_norm`, frameworks/norms.py), a standardisation
y = (x − μ) ⊘ σ, μ = mean x, σ = √(mean (x − μ)² + ε), along an axis, takes
ten adjoint lines through its means, square, sum and root. A teacher writes
its backward once, in the known closed form

    x̄ = (ȳ − mean ȳ − y ⊙ mean(ȳ ⊙ y)) ⊘ σ

(the mean's own path cancels: the centred values sum to zero). `sites`
finds each standardisation in a formula as SymPy holds it: the product
centred · σ⁻¹ · rest (an affine weight among the rest), the statistics
spread back along the axis by `outer(ones(n), s)` (axis 0), `outer(s,
ones(n))` (axis 1) or, for a statistic of every entry, broadcast as a
scalar. reverse_pass.py shows the line of x with the closed form and leaves
out the lines inside; the pass itself, and so the derived gradient and its
check, are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradlang.expr.graph import build_dag
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import rank, shape_of
from gradlang.explain.formula import Math

_CENTRED = Math("normalisation y = (x − μ) ⊘ σ: x̄ = (ȳ − mean ȳ − y ⊙ mean(ȳ ⊙ y)) ⊘ σ",
                r"\text{normalisation } y = (x - \mu) \oslash \sigma\text{: } \bar{x} = (\bar{y} - \operatorname{mean}\bar{y}"
                r" - y \odot \operatorname{mean}(\bar{y} \odot y)) \oslash \sigma")
_NORM = Math("normalize y = v ⊘ ‖v‖: v̄ = (ȳ − y ⊙ ⟨ȳ, y⟩) ⊘ ‖v‖",
             r"\text{normalize } y = v \oslash \|v\|\text{: } \bar{v} = (\bar{y} - y \odot \langle \bar{y}, y \rangle)"
             r" \oslash \|v\|")
_RMS = Math("RMS norm y = v ⊘ σ: v̄ = (ȳ − y ⊙ mean(ȳ ⊙ y)) ⊘ σ",
            r"\text{RMS norm } y = v \oslash \sigma\text{: } \bar{v} = (\bar{y} - y \odot \operatorname{mean}(\bar{y} \odot y))"
            r" \oslash \sigma")
_CLAMPED = Math(", ε clamped: ⟨ȳ, y⟩ times the clamp's slope", r"\text{, } \varepsilon \text{ clamped}")


@dataclass(frozen=True)
class Site:
    """One normalisation: the product `node` = scaled ⊙ scale⁻¹ ⊙ rest, scale = spread(σ), σ = √g(c Σ scaled²)
    along the axis (0 or 1 of a matrix, None: every entry), g adding ε or clamping at it (slope: g′); scaled is
    x − spread(mean x) (centred: batch or layer norm) or x itself (F.normalize, an RMS norm)."""

    node: object
    x: object
    scaled: object
    inverse: object  # the factor of `node` that is scale⁻¹ (SymPy writes a scalar's as V^(−1/2))
    rest: tuple
    axis: object
    coefficient: object  # c: 1/n for a mean of squares, 1 for a norm
    slope: object
    centred: bool

    def closed_form(self, adjoint):
        """x̄ from this normalisation, given the adjoint of the product: ȳ = adjoint ⊙ rest."""
        ybar = sp.Mul(adjoint, *self.rest)
        y = sp.Mul(self.scaled, self.inverse)
        terms = [ybar, -y * self._spread(self.slope * self.coefficient * self._sum(sp.Mul(ybar, y)))]
        if self.centred:
            terms.insert(1, -self._spread(self._sum(ybar) / _count(self.axis, self.x)))
        return sp.Mul(sp.Add(*terms), self.inverse)

    def rule(self) -> Math:
        """The closed form in words: batch or layer norm's, F.normalize's, an RMS norm's."""
        said = _CENTRED if self.centred else _NORM if self.coefficient == 1 else _RMS
        if self.slope == 1:
            return said
        return Math(said.plain + _CLAMPED.plain, said.latex + _CLAMPED.latex)

    def _sum(self, u):
        return t.Total(u) if self.axis is None else t.SumAxis(u, self.axis)

    def _spread(self, stat):
        """A statistic spread back over the axis, as the formula spread μ and σ."""
        if self.axis is None:
            return stat
        ones = t.Ones(shape_of(self.x)[self.axis])
        return t.Outer(ones, stat) if self.axis == 0 else t.Outer(stat, ones)

    def inside(self) -> set:
        """The nodes between the product and x: those of the statistics, the centred value and the scale that
        read x (a constant among them, ones(n), is no step of the pass)."""
        reads: dict = {self.x: True}

        def walk(node) -> bool:
            if node not in reads:
                reads[node] = isinstance(node, sp.Basic) and any([walk(a) for a in node.args])
            return reads[node]

        walk(self.scaled), walk(self.inverse)
        return {node for node, read in reads.items() if read and node != self.x}


def shown_sites(expr, uses) -> tuple:
    """({x: its normalisations} whose inner nodes nothing else uses (uses: node → its (user, position) pairs),
    the inner nodes, whose lines the one step replaces)."""
    found: dict = {}
    for site in sites(expr):
        inside = site.inside()
        if all(user in inside or user == site.node for node in inside for user, _ in uses.get(node, ())):
            found.setdefault(site.x, []).append(site)
    return found, set().union(*(site.inside() for shown in found.values() for site in shown))


def _adjoint(node, tidied, bars, uses):
    """A node's adjoint in the names of the lines above: its own name, or what its users send it by theirs."""
    from gradlang.derive.tensor.reverse import sent

    if node in bars:
        return bars[node]
    arriving = [(user, k) for user, k in uses.get(node, ()) if user in tidied]
    if any(user in bars for user, _ in arriving):
        return sp.Add(*[sent(user, bars.get(user, tidied[user]), k) for user, k in arriving])
    return tidied.get(node, sp.S.Zero)


def folded_line(lhs, found, arriving, tidied, bars, uses):
    """x's line (lhs: its left side) when it is normalised: the closed form from the adjoint of the product (in
    the names of the lines above: bars), plus what x's other users send it."""
    from gradlang.derive.tensor.reverse import sent
    from gradlang.explain.formula import VectorLine, formula

    found = [site for site in found if site.node in tidied]  # a normalisation the gradient flows through
    inside = set().union(*(site.inside() for site in found), (site.node for site in found))
    others = [sent(user, bars.get(user, tidied[user]), k) for user, k in arriving if user not in inside]
    closed = [site.closed_form(_adjoint(site.node, tidied, bars, uses)) for site in found]
    return VectorLine(lhs, (formula(sp.Add(*others, *closed)),), (found[0].rule(),))


def sites(expr) -> list:
    """Every normalisation in the formula, by its product node."""
    found = []
    for node in build_dag([expr]).nodes:
        if isinstance(node, sp.Mul) and rank(node) > 0:
            site = _site(node)
            if site is not None:
                found.append(site)
    return found


def _site(node):
    """The normalisation whose product `node` is, or None."""
    for inverse in node.args:
        axis, variance = _scale(inverse)
        if variance is None:
            continue
        squares, slope = _clamped(variance)
        for scaled in node.args:
            statistic = _statistic(squares, axis) if squares is not None else None
            if scaled is inverse or statistic is None or statistic[1] != scaled ** 2:
                continue
            x = _centred_of(scaled, axis)
            rest = tuple(f for f in node.args if f is not scaled and f is not inverse)
            return Site(node, scaled if x is None else x, scaled, inverse, rest, axis, statistic[0], slope, x is not None)
    return None


def _scale(factor) -> tuple:
    """(axis, V) for a factor that is the reciprocal of a spread √V, else (None, None)."""
    if not isinstance(factor, sp.Pow):
        return None, None
    base, exponent = factor.args
    if exponent == -1 and isinstance(base, t.Outer):
        spread = _spread(base)
        if spread is not None and rank(spread[1]) == 1 and _root(spread[1]) is not None:
            return spread[0], _root(spread[1])
    if exponent == sp.Rational(-1, 2) and rank(base) == 0:  # a scalar's 1/√V
        return None, base
    return None, None


def _clamped(variance) -> tuple:
    """(c Σ u², g′) of V = g(c Σ u²): + ε (ε a number ≥ 0: slope 1), max(·, ε) (slope: max's), or itself."""
    if isinstance(variance, sp.Add):
        numbers = [a for a in variance.args if a.is_number]
        others = [a for a in variance.args if not a.is_number]
        if len(others) == 1 and all(n >= 0 for n in numbers):
            return others[0], sp.S.One
        return None, None
    if type(variance).__name__ == "Maximum" and len(variance.args) == 2 and variance.args[1].is_number:
        from gradlang.derive.tensor.reverse import _partial

        return variance.args[0], _partial(variance, 0)
    return variance, sp.S.One


def _spread(node):
    """(axis, s) for outer(ones(n), s) (axis 0) or outer(s, ones(n)) (axis 1); None otherwise."""
    if isinstance(node, t.Outer):
        first, second = node.args
        if isinstance(first, t.Ones) and not isinstance(second, t.Ones):
            return 0, second
        if isinstance(second, t.Ones) and not isinstance(first, t.Ones):
            return 1, first
        return None
    return (None, node) if rank(node) == 0 else None


def _root(sigma):
    """V for σ = √V, else None."""
    if isinstance(sigma, sp.Pow) and sigma.args[1] == sp.S.Half:
        return sigma.args[0]
    return None


def _centred_of(centred, axis):
    """x when `centred` is x − spread(mean x) along the axis, else None."""
    if not isinstance(centred, sp.Add):
        return None
    for term in centred.args:
        number, core = _split(term)
        spread = _spread(core)
        if spread is None or spread[0] != axis:
            continue
        mean = _statistic(spread[1], axis)
        x = sp.Add(*(a for a in centred.args if a is not term))
        if mean is not None and mean[1] == x and _is_one_over(-number * mean[0], axis, x):
            return x
    return None


def _statistic(node, axis):
    """(c, u) for c·sum(u, axis) (c·sum(u) for no axis), else None."""
    number, core = _split(node)
    if axis is None and isinstance(core, t.Total):
        return number, core.args[0]
    if axis is not None and isinstance(core, t.SumAxis) and core.args[1] == axis:
        return number, core.args[0]
    return None


def _split(term) -> tuple:
    """(its number, the rest) of a product with one non-number factor; (1, term) otherwise."""
    if isinstance(term, sp.Mul):
        numbers = [f for f in term.args if f.is_number]
        others = [f for f in term.args if not f.is_number]
        if len(others) == 1:
            return sp.Mul(*numbers), others[0]
    return sp.S.One, term


def _count(axis, x):
    """How many entries a mean along the axis averages."""
    shape = shape_of(x)
    return sp.Mul(*shape) if axis is None else shape[axis]


def _is_one_over(c, axis, x) -> bool:
    """Is c 1/n, n the count the mean averages (to a float's precision: the importers write 0.25)?"""
    product = c * _count(axis, x)  # 1/n · n is 1 as SymPy builds it, at a symbolic n too
    return product == 1 or (product.is_number and abs(float(product) - 1) < 1e-12)
