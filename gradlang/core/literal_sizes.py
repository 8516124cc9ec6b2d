"""Values at literal sizes: `x: R^3` is the tensor formula `x`, with its components on request.

A declaration binds one tensor symbol whatever its sizes (section 3a), so
`W: R^(2,3)` gives the formula `W: R^(m,n)` gives. Where the tensor engine has
no whole-tensor form for an operation, a value at literal sizes is *lowered*
to the component engine's representation (an array of scalar expressions in
x[0], x[1], …: the view of expr/tensor/lower.py, which also says which values
are at literal sizes) and the component engine answers, as it did before
tensors were values. This module keeps the two representations from meeting
unlowered: the tensor engine sees the symbol x[0] as a stranger to x, so a
value holding both is lowered whole before it is differentiated or given
numbers.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import FreeIndex, LimitError, NeedsComponents, NeedsNumbers
from gradlang.expr.graph import build_dag
from gradlang.expr.engine import involves, literal, lower, lowered, nodes, shape_of, symbolic
from gradlang.expr.values import elements
from gradlang.expr.walk import dag_nodes, rebuild, shaped_replace


def mixed(*values) -> bool:
    """True when values at literal sizes hold both a tensor and component symbols (x and x[0]).

    The tensor engine sees x[0] as a stranger to x, so such values are lowered
    whole before they are differentiated or given numbers."""
    return (any(involves(v) for v in values) and any(lower.holds_components(v) for v in values)
            and not any(symbolic(v) for v in values))


def aligned(values: list) -> list:
    """Operands of one operation where a list meets a tensor of literal size: a list of numbers becomes a
    constant of the tensor engine (W @ [1, 2] stays a formula of W), and so is a list of scalars free of x[0]
    (transpose(W) @ [a, b], as at a symbolic size: lowering it would lower argmax(M, axis=0) too, which has no
    components before numbers); a list holding x[0] takes the tensor as its components. Beside a tensor of
    symbolic size a list of scalars is a constant too ([y[0], 2] + [a, b],
    transpose(W) @ zeros(2) as the printer writes a zero vector of literal length), as it is for a builtin."""
    if not any(isinstance(v, (sp.NDimArray, sp.MatrixBase)) for v in values):
        return values
    if any(literal(v) for v in values):
        return [as_constant(v) for v in values] if constants_only(values) or _free_scalars(values) else [
            lowered(v) for v in values]
    if any(involves(v) for v in values):
        return [as_constant(v) if _of_scalars(v) else v for v in values]
    return values


def _free_scalars(values: list) -> bool:
    """Every list among the values is of scalars, and no value holds a component symbol x[0]."""
    lists = [v for v in values if isinstance(v, (sp.NDimArray, sp.MatrixBase))]
    return all(_of_scalars(v) for v in lists) and not any(lower.holds_components(v) for v in values)


def _of_scalars(value) -> bool:
    """A list (vector or matrix) of scalars: the tensor engine holds it as a constant of its shape."""
    return isinstance(value, (sp.NDimArray, sp.MatrixBase)) and not any(
        isinstance(e, (sp.NDimArray, sp.MatrixBase)) for e in elements(value))


def constants_only(values: list) -> bool:
    """Every list among the values holds numbers only, and no value holds x[0] beside x."""
    lists = [v for v in values if isinstance(v, (sp.NDimArray, sp.MatrixBase))]
    return not mixed(*values) and all(
        all(isinstance(e, sp.Number) and e.is_finite for e in elements(v)) for v in lists)


def as_constant(value):
    """A list of numbers as the tensor engine's constant (expr/tensor/nodes.py, Literal); others unchanged."""
    return nodes.Literal.of(value) if isinstance(value, (sp.NDimArray, sp.MatrixBase)) else value



def picks_at(value, arrays: dict, pairs: list, sizes: dict):
    """argmax(y), argmin(y) and take's indices with the point's exact arrays put in first: of component symbols they
    have no components (NeedsNumbers), of numbers they are an index (x[argmax(y)] at y = [1, 5, 2], x: R^3)."""
    from gradlang.expr.tensor.nodes import ArgExtreme, ScatterAdd, Take

    given = {var: as_constant(a) for var, a in arrays.items() if isinstance(a, (sp.NDimArray, sp.MatrixBase))}
    given.update({s: v for s, v in pairs if isinstance(v, sp.Number)})
    if not given:
        return value
    given.update({s: sp.Integer(n) for s, n in sizes.items() if isinstance(s, sp.Symbol)})
    nodes = dag_nodes(value)  # a DAG walk: one visit a node
    picks = {n: _given_in(n, given) for n in nodes if isinstance(n, ArgExtreme)}
    picks.update({n.args[1]: _given_in(n.args[1], given) for n in nodes if isinstance(n, (Take, ScatterAdd))})
    return rebuild(value, picks) if picks else value


def _given_in(pick, given: dict):
    """The pick with the point put in when the point gives every tensor it reads, its sizes too (the ones(n) of
    log_softmax(W, 1) meets W's 3×3 array as ones(3)), each part keeping its shape (argmax(b*y) at b = 0 reads
    zeros(3), not SymPy's 0); else the pick as it is (it needs numbers the point does not give)."""
    if any(var not in given for var in dag_nodes(pick) if isinstance(var, nodes.Var)):
        return pick
    return shaped_replace(pick, given)


PROVED_ENTRIES, PROVED_NODES = 64, 400  # bounds by size, as render's choice of components (render/shown.py, shorter)


def proved_constant(value, simplify):
    """A formula at literal sizes whose components `simplify` takes to numbers, as those numbers; else the
    formula, as at a symbolic size.

    The formula's own rewrites do not prove every identity its components do:
    the stable softmax's stop blocks nothing (blocked is the zero matrix), and
    the taste program's two Jacobians are equal (section 1). `simplify(parts)`
    gives the simplified components, or None where they are too large for it.
    Bounded by size, so the answer never depends on the machine."""
    if not literal(value):
        return value
    count = 1
    for size in shape_of(value):
        count *= int(size)
    if count > PROVED_ENTRIES or len(build_dag([value]).nodes) > PROVED_NODES:
        return value
    try:
        simplified = simplify(lowered(value))
    except (NeedsComponents, NeedsNumbers, FreeIndex, LimitError):  # argmax(x), x[k]: no components yet
        return value
    entries = list(simplified) if isinstance(simplified, (sp.NDimArray, sp.MatrixBase)) else [simplified]
    return simplified if simplified is not None and all(isinstance(e, sp.Number) for e in entries) else value
