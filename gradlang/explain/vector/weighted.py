"""A sum over data with stopped weights: ∂/∂μ Σᵢ rᵢ·q(dᵢ, μ) = Σᵢ rᵢ·∂q/∂μ (EM's M-step).

EM's expected complete-data log-likelihood is Σᵢ sg(rᵢ)·log φ(dᵢ; μ₁) + …:
each term is a stopped weight times a function of one parameter and one
data point. A teacher writes its gradient as Σᵢ rᵢ(dᵢ − μ₁), the weights
held fixed. `weighted_sum` finds that shape: the terms grouped by the
parameter they depend on, in each group the same function q of a
differing data value dᵢ (lift.template), and states the gradient once per
parameter with the weights and the data named.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.values import from_elements, is_scalar
from gradlang.explain.formula import formula, math
from gradlang.explain.vector.inner import outside
from gradlang.explain.vector.lift import HOLE, stops_in, template

_LETTERS = (("r", "ρ"), ("w", "ω"), ("a", "α"), ("b", "β"))


def _split_term(term, xs):
    """(weight, rest, variable): weight the factors holding a stop but no variable outside it."""
    factors = sp.Mul.make_args(term)
    weight = sp.Mul(*[f for f in factors if not f.is_number and not outside(f, xs) and stops_in(f)])
    rest = sp.Mul(*[f for f in factors if f.is_number or outside(f, xs) or not stops_in(f)])
    used = [x for x in xs if outside(rest, [x])]
    return (weight, rest, used[0]) if weight != 1 and len(used) == 1 else None


def _groups(build):
    """{variable: [(weight, rest)]} when every term has a stopped weight and one variable."""
    expr = build.expr
    if is_scalar(expr) and expr.is_Add and len(expr.args) >= 2 * len(build.xs):
        split = [_split_term(t, build.xs) for t in expr.args]
        if all(split):
            groups = {x: [(w, r) for w, r, v in split if v == x] for x in build.xs}
            if all(len(g) >= 2 for g in groups.values()):
                return groups
    return None


def weighted_sum(build):
    """∂/∂μ Σᵢ rᵢ·q(dᵢ, μ) = Σᵢ rᵢ·q′(dᵢ, μ) for each parameter, the weights stopped."""
    groups = _groups(build)
    if groups is None:
        return None
    results, data_name = [], {}
    for n, (x, terms) in enumerate(groups.items()):
        found = numbered_template([r for _, r in terms])
        if found is None:
            return None
        order = sorted(range(len(terms)), key=lambda i: found[1][i])
        terms, found = [terms[i] for i in order], (found[0], [found[1][i] for i in order])
        results.append(_group_line(build, x, terms, found, _LETTERS[n % len(_LETTERS)], data_name))
    return build.finish("stopped weights (the weights held fixed)", from_elements(build.shape, results))


def numbered_template(terms: list):
    """(q, [d₀, d₁, …]) with terms[j] = q(d_j) for numbers d_j, or None.

    A data value of 0 (or 1) collapses its term, −(0 − μ)²/2 = −μ²/2, so the
    shared q is found from two terms that keep it, and every term is then
    matched by a number it holds, or 0, 1 or −1, in q's hole."""
    found = template(terms)
    if _numbered(found):
        return found
    for i in range(len(terms)):
        for j in range(i + 1, len(terms)):
            pair = template([terms[i], terms[j]])
            if _numbered(pair):
                values = [_value_in(pair[0], term) for term in terms]
                if all(v is not None for v in values):
                    return pair[0], values
    return None


def _numbered(found) -> bool:
    return found is not None and found[0] != HOLE and all(v.is_number for v in found[1])


def _value_in(q, term):
    """The number d with q(d) = term, among the numbers the term holds and 0, ±1; None if none is."""
    candidates = sorted(term.atoms(sp.Number) | {sp.S.Zero, sp.S.One, sp.S.NegativeOne}, key=sp.default_sort_key)
    return next((c for c in candidates if sp.expand(q.xreplace({HOLE: c}) - term) == 0), None)


def _data_let(build, data, data_name: dict) -> str:
    """d = [−2, −1, 1, 2], named once for every group that has the same data."""
    key = tuple(data)
    if key not in data_name:
        data_name[key] = build.fresh("d", "t", "z")
        build.let(math(data_name[key]), formula(sp.ImmutableDenseNDimArray(list(data))), "the data value of each term")
    return data_name[key]


def _generic_weight(terms, data, xs, generic):
    """The weights written once with dᵢ for the data value (None when they differ otherwise).

    The form is read off a term whose data value is not 0 or ±1 (those collapse: 0 − μ is −μ),
    and must give every weight back when its own value is put in."""
    for (weight, _), value in zip(terms, data):
        if abs(value) != 1 and value != 0:
            form = weight.xreplace({sp.Add(value, -x): sp.Add(generic, -x) for x in xs})
            if all(form.xreplace({generic: v}) == w for (w, _), v in zip(terms, data)):
                return form
            return None
    return None


def _group_line(build, x, terms, found, letters, data_name):
    """let r, d; then ∂/∂μ Σᵢ rᵢ·q(dᵢ, μ) = Σᵢ rᵢ·q′(dᵢ, μ)."""
    q, data = found
    weights = build.vector_let(letters, [w for w, _ in terms])
    r = weights[0].name.split("[")[0]
    d = _data_let(build, data, data_name)
    generic = sp.Symbol(f"{d}ᵢ", real=True)
    weight = _generic_weight(terms, data, build.xs, generic)
    shown = formula(weight) if weight is not None else formula(terms[0][0], f", {r}₁, … likewise")
    build.let(math(f"{r}ᵢ"), shown, "stopped: the weights are held fixed")
    derivative = sp.diff(q, x).xreplace({HOLE: generic})
    component = sp.Add(*[w * sp.diff(q, x).xreplace({HOLE: v}) for w, v in zip(weights, data)])
    build.line(formula(f"∂/∂{x.name} Σᵢ {r}ᵢ·(", q.xreplace({HOLE: generic}), ")"),
               formula(f"Σᵢ {r}ᵢ·(", derivative, ")"), rule=formula(f"stopped weights: ∂{r}ᵢ/∂{x.name} ≔ 0"))
    return component
