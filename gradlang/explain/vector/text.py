"""Formulas for the vectors of a vector derivation: v = x − m, vₖ = xₖ − m, W·a − sg(e).

The inner map (inner.py) says how v is built from the variable, so v is
written the way a teacher writes it (x − m, not [x[0] − m, x[1] − m, …],
and never SymPy's −m + x[0]); a vector that fits no pattern is written out.
"""

from __future__ import annotations

import sympy as sp

from gradlang.explain.formula import formula, math
from gradlang.explain.scalar.components import subscripted
from gradlang.explain.vector.lift import COMPONENT

_INDEX_LATEX = {"ₖ": "k", "ⱼ": "j"}


def _shifted(head, shift) -> tuple:
    """head − c or head + c, in the user's order (the variable first)."""
    if shift == 0:
        return formula(head)
    if shift.could_extract_minus_sign():
        return formula(head, " − ", -shift)
    return formula(head, " + ", shift)


def vector_formula(build, inner, items, index: str = "") -> tuple:
    """v as a teacher writes it; with an index (ₖ), its generic component vₖ."""
    from gradlang.explain.vector.derivation import coefficients

    head = math(build.name + index, f"{build.name}_{_INDEX_LATEX.get(index, index)}") if index else build.variable()
    if inner.kind in ("identity", "shift"):
        return _shifted(head, inner.shift)
    if inner.kind == "linear":
        a = coefficients(inner)
        rest = whole_form([sp.expand(u - sum(c * w for c, w in zip(inner.coefficients, row)))
                           for u, row in zip(items, _rows(build))])
        product = formula(build.variable(), "·", a)
        if rest is None:
            return formula(*product, " + ", sp.ImmutableDenseNDimArray([u for u in items]))
        return formula(*product, *_shifted("", rest)[1:]) if rest != 0 else product
    return formula(sp.ImmutableDenseNDimArray(list(items)))


def _rows(build) -> list:
    rows, columns = build.shape
    return [build.xs[i * columns:(i + 1) * columns] for i in range(rows)]


def component(build, inner, items, k: int) -> tuple:
    """vₖ: x₀ − m for a shift (the component subscripted, as a teacher writes it), else the component."""
    if inner.kind in ("identity", "shift"):
        name = build.xs[k].name
        head = math(subscripted(build.xs[k]), name.replace("[", "_{").replace("]", "}")) if "[" in name else build.xs[k]
        return _shifted(head, inner.shift)
    return formula(items[k])


def whole_form(items: list):
    """One expression for all items, each vector's j-th component written as the vector: e for e[j].

    [−sg(e[0]), −sg(e[1])] gives −sg(e); None when the items differ otherwise.
    """
    forms = set()
    for j, item in enumerate(items):
        mapping = {}
        for s in item.free_symbols:
            match = COMPONENT.match(s.name)
            if match and match.group("index") == str(j):
                mapping[s] = sp.Symbol(match.group("base"), real=True)
        forms.add(item.xreplace(mapping))
    return forms.pop() if len(forms) == 1 else None


def stop_note(inner) -> tuple:
    """"; stop: ∇m ≔ 0" for each stop the inner map cuts (its true gradient is not passed)."""
    parts: list = []
    for stop in inner.stops:
        parts += ["; stop: ∇", stop, " ≔ 0"]
    return formula(*parts)
