"""Values at literal sizes: `x: R^3` is the tensor formula `x`, with its components on request.

A declaration binds one tensor symbol whatever its sizes (section 3a), so
`W: R^(2,3)` gives the formula `W: R^(m,n)` gives. Where the tensor engine has
no whole-tensor form for an operation, a value at literal sizes is *lowered*
to the component engine's representation (an array of scalar expressions in
x[0], x[1], …) and the component engine answers, as it did before tensors
were values. This module says which values are at literal sizes, lowers them,
and keeps the two representations from meeting unlowered: the tensor engine
sees the symbol x[0] as a stranger to x, so a value holding both is lowered
whole before it is differentiated or given numbers.
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.errors import NeedsNumbers
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor.nodes import TensorOp, Var, shape_of
from gradlang.expr.values import from_elements

_INVOLVED: dict = {}
_CACHE_LIMIT = 4 * limits.MAX_ELEMENTS


def involves(value) -> bool:
    """True when a value holds a declared tensor or a size symbol."""
    return _flags(value)[0]


def literal(value) -> bool:
    """True when a value holds declared tensors whose every size is a number (`x: R^3`).

    Such a value can always be lowered to its components, so where the tensor
    engine has no whole-tensor form the component engine answers instead."""
    involved, symbolic, _ = _flags(value)
    return involved and not symbolic


def symbolic(value) -> bool:
    """True when a value holds a symbolic size (`x: R^n`, or n itself), whatever literal sizes are beside it.

    Such a value has no components until a point gives its sizes, so `e at …` is the tensor engine's
    (core/tensor_at.py), never the component engine's reading of x as one scalar given a list."""
    return _flags(value)[1]


def mixed(*values) -> bool:
    """True when values at literal sizes hold both a tensor and component symbols (x and x[0]).

    The tensor engine sees x[0] as a stranger to x, so such values are lowered
    whole before they are differentiated or given numbers."""
    flags = [_flags(v) for v in values]
    tensors, symbolic, pieces = (any(f[i] for f in flags) for i in range(3))
    return tensors and pieces and not symbolic


def lowered(value):
    """A value at literal sizes as the component engine holds it (each entry a scalar); others as they are."""
    from gradlang.core.tensor_at import components

    if isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        if not any(literal(e) for e in value):
            return value
        return from_elements(tuple(value.shape), [lowered(e) for e in value])
    if isinstance(value, TensorList):  # grad(L, [W, b]): each entry's components
        return TensorList(*(lowered(e) for e in value.entries))
    return components(value, {}) if literal(value) else value


def aligned(values: list) -> list:
    """Operands of one operation where a list meets a tensor of literal size: a list of numbers becomes a
    constant of the tensor engine (W @ [1, 2] stays a formula of W); any other list takes the tensor as
    its components. Beside a tensor of symbolic size a list of scalars is a constant too ([y[0], 2] + [a, b],
    transpose(W) @ zeros(2) as the printer writes a zero vector of literal length), as it is for a builtin."""
    if not any(isinstance(v, (sp.NDimArray, sp.MatrixBase)) for v in values):
        return values
    if any(literal(v) for v in values):
        return [as_constant(v) for v in values] if constants_only(values) else [lowered(v) for v in values]
    if any(involves(v) for v in values):
        return [as_constant(v) if _of_scalars(v) else v for v in values]
    return values


def _of_scalars(value) -> bool:
    """A list (vector or matrix) of scalars: the tensor engine holds it as a constant of its shape."""
    return isinstance(value, (sp.NDimArray, sp.MatrixBase)) and len(value.shape) <= 2 and not any(
        isinstance(e, (sp.NDimArray, sp.MatrixBase)) for e in value)


def constants_only(values: list) -> bool:
    """Every list among the values holds numbers only, and no value holds x[0] beside x."""
    lists = [v for v in values if isinstance(v, (sp.NDimArray, sp.MatrixBase))]
    return not mixed(*values) and all(
        len(v.shape) <= 2 and all(isinstance(e, sp.Number) and e.is_finite for e in v) for v in lists)


def as_constant(value):
    """A list of numbers as the tensor engine's constant (expr/tensor/nodes.py, Literal); others unchanged."""
    from gradlang.expr.tensor.nodes import Literal

    return Literal.of(value) if isinstance(value, (sp.NDimArray, sp.MatrixBase)) else value


def _flags(value) -> tuple:
    """(involves a tensor, has a symbolic size, has a component symbol such as x[0]), cached per node by identity (linear in the DAG).

    Two equal expressions built apart would be compared by SymPy as trees,
    once per path to each shared node, so the cache is keyed by id."""
    if not isinstance(value, sp.Basic):
        return False, False, False
    stack = [value]
    while stack:
        node = stack[-1]
        if _known(node):
            stack.pop()
            continue
        pending = [a for a in node.args if not _known(a)]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        symbolic = shapes.is_size(node) or (isinstance(node, Var) and not all(n.is_Integer for n in node.shape))
        own = isinstance(node, (Var, TensorOp)) or symbolic  # zeros(3) too: a tensor constant
        piece = isinstance(node, sp.Symbol) and not isinstance(node, Var) and "[" in node.name
        kids = [_INVOLVED[id(a)] for a in node.args]
        _INVOLVED[id(node)] = (node, own or any(k[1] for k in kids), symbolic or any(k[2] for k in kids),
                               piece or any(k[3] for k in kids))
    answer = _INVOLVED[id(value)][1:]
    if len(_INVOLVED) > _CACHE_LIMIT:  # a bound on memory, not on correctness: answers are recomputed
        _INVOLVED.clear()
    return answer


def _known(node) -> bool:
    entry = _INVOLVED.get(id(node))
    return entry is not None and entry[0] is node


def _free_index(value) -> bool:
    """Does the value pick a component by an index left symbolic (x[k], onehot(k, 3))? It has no components then."""
    from gradlang.expr.tensor.nodes import Entry, OneHot, Row, Column

    return any(isinstance(node, (Entry, OneHot, Row, Column)) and any(not i.is_Integer for i in _indices(node))
               for node in sp.preorder_traversal(value))


def _indices(node) -> tuple:
    from gradlang.expr.tensor.nodes import OneHot

    return node.args[:1] if isinstance(node, OneHot) else node.args[1:]


_SHORT_ENTRIES, _SHORT_NODES = 64, 400  # bounds by size: the choice never depends on the machine


def shorter(value):
    """A value at literal sizes as its components when they print shorter than its formula (for display).

    hessian(norm(x), x)[0, 1] at x: R^2 reads -x[0]*x[1]/norm([x[0], x[1]])^3, and
    grad(x[0]*x[1], x) reads [x[1], x[0], 0], as a teacher writes them, not
    x[0]*onehot(1, 3) + x[1]*onehot(0, 3); grad(sum(x^2), x) stays 2*x. An
    array of numbers is shown as such: [0, 0, 0], not zeros(3). Bounded by
    size, so the choice never depends on the machine."""
    from gradlang.core.tensor_at import components
    from gradlang.expr.graph import build_dag
    from gradlang.expr.source import to_source

    if not isinstance(value, sp.Expr) or isinstance(value, (Var, sp.MatrixBase)) or not literal(value):
        return value
    count = 1
    for n in shape_of(value):
        count *= int(n)
    if count > _SHORT_ENTRIES or len(build_dag([value]).nodes) > _SHORT_NODES or _free_index(value):
        return value
    try:
        parts = components(value, {})
    except NeedsNumbers:  # argmax(x) of symbols has no components (it needs numbers): the formula is the value
        return value
    entries = list(parts) if isinstance(parts, (sp.NDimArray, sp.MatrixBase)) else [parts]
    numbers = not any(e.free_symbols for e in entries)
    return parts if numbers or len(to_source(parts)) < len(to_source(value)) else value


def picks_at(value, arrays: dict, pairs: list):
    """argmax(y), argmin(y) with the point's exact arrays put in first: of component symbols they have no
    components (NeedsNumbers), of numbers they are an index (x[argmax(y)] at y = [1, 5, 2], x: R^3)."""
    from gradlang.expr.tensor.nodes import ArgExtreme

    given = {var: as_constant(a) for var, a in arrays.items() if isinstance(a, (sp.NDimArray, sp.MatrixBase))}
    given.update({s: v for s, v in pairs if isinstance(v, sp.Number)})
    picks = {n: n.xreplace(given) for n in sp.preorder_traversal(value) if isinstance(n, ArgExtreme)}
    return value.xreplace(picks) if picks and given else value
