"""A selected part of a tensor derivation: `grad(e, x)[1]`, `jacobian(s, x)[0, 2]`, `hessian(e, x)[0, 1]`.

The tensor pass derives the whole derivative, as it does without the index, and one more line picks the
entries asked for and tidies them (`(e₀ − s)[1] = −s[1]`). So a selection reads the same at `x: R^3` and at
`x: R^n` (one engine), where it used to be the rule table's walk over the components at a literal size and
the whole derivative, the index dropped, at a symbolic one.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.derive.tensor.rewrite import tidy
from gradlang.expr.tensor import nodes as t
from gradlang.explain.formula import Math, VectorLine, formula

_RULE = Math("the entries asked for: (v)ₖ = eₖᵀ v", r"\text{the entries asked for}: (v)_k = e_k^{\top} v")


def part(value, indices: tuple):
    """value[i] or value[i, j] as the language indexes a tensor: an entry, or row i of a matrix."""
    if len(indices) < t.rank(value) and t.rank(value) == 2:
        return t.Row(value, indices[0])
    return t.Entry(value, *indices)


def entries(value, indices: tuple):
    """value[indices] taken inside the formula where an entry is plain: of a sum the sum of the entries, of a
    product by scalars or of tensors of one shape the product, eₖ[i] and I[i, j] as 0 or 1, diag(v)[i, j] as
    v[i] or 0, outer(a, b)[i, j] as a[i]·b[j]; elsewhere the entry of the part as it is."""
    rank = t.rank(value)
    if len(indices) != rank or not all(getattr(i, "is_Integer", False) for i in indices):
        return part(value, indices)
    if isinstance(value, sp.Add):
        return sp.Add(*(entries(a, indices) if t.rank(a) else a for a in value.args))
    if isinstance(value, sp.Mul):
        tensors = [a for a in value.args if t.rank(a)]
        if all(t.shape_of(a) == t.shape_of(value) for a in tensors):
            return sp.Mul(*(entries(a, indices) if t.rank(a) else a for a in value.args))
    return _plain(value, indices)


def _plain(value, indices: tuple):
    """An entry of one of the marks the rewrites leave (eₖ, I, diag, outer, ones, zeros), else of the part."""
    same = len(set(indices)) == 1
    if isinstance(value, t.OneHot) and value.args[0].is_Integer:
        return sp.S.One if value.args[0] == indices[0] else sp.S.Zero
    if isinstance(value, (t.Eye, t.Diag)):
        if not same:
            return sp.S.Zero
        return sp.S.One if isinstance(value, t.Eye) else entries(value.args[0], indices[:1])
    if isinstance(value, t.Outer):
        return entries(value.args[0], indices[:1]) * entries(value.args[1], indices[1:])
    if isinstance(value, (t.Ones, t.Zeros)):
        return sp.S.One if isinstance(value, t.Ones) else sp.S.Zero
    return part(value, indices)


def picked(explanation, request):
    """The explanation of the whole derivative with a last line that picks request.indices from it; its
    result (and the value it is checked by) the tidied entries, its request the selection as written."""
    vector = explanation.vector
    indices = tuple(sp.Integer(i) if isinstance(i, int) else i for i in request.indices)
    raw = part(explanation.derived, indices)
    value = tidy(entries(explanation.derived, indices))
    last = vector.lines[-1]
    index = ", ".join(str(i) for i in request.indices)
    lhs = formula("(", *last.lhs, f")[{index}]")
    rhs = (formula(raw), formula(value)) if value != raw else (formula(value),)
    vector = replace(vector, lines=(*vector.lines, VectorLine(lhs, rhs, (_RULE,))), result=value)
    return replace(explanation, request=request, derived=value, vector=vector)
