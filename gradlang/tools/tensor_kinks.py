"""Kink notes of a tensor formula at a float point, whatever its sizes: found by whole-array NumPy.

A statement's value is one tensor formula (core/at.py); its numbers at a float
point come from whole-array NumPy at every size, and so do its notes. The
formula's DAG is walked once for the nodes where a derivative is a convention
(kinks.py: relu, sign, floor, ceil, round, a max/min of several or a share of
one, a where, and the tensor nodes max(v), its shares, and max along an axis),
each node's arguments are evaluated as whole arrays (expr/tensor/numbers.py),
and the components that sit on the kink are found with NumPy. Only those are
then said, in kinks.py's words: as the literal-size formula writes them
(`relu(W[1, 0]*x[0] + W[1, 1]*x[1])`, the node's components, lowered) while the
tensors under the node hold at most WORDED components, else by the entry of the
formula (`relu((W @ x)[1])`). So `x: R^3` and `x: R^n` at the same point print
the same notes, at any size; at most HITS components of one node are said.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.relational import Relational

from gradlang.errors import GradlangError
from gradlang.expr import primitives
from gradlang.expr.functions import MaxShare, MinShare
from gradlang.expr.source import to_source
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.lower import components, declared_components
from gradlang.expr.values import elements, to_symbolic
from gradlang.expr.walk import dag_atoms
from gradlang.lazy import np
from gradlang.remembered import remembered
from gradlang.tools import kinks

WORDED = 4096  # components of the tensors under a kink node, up to which its note names them as components
HITS = 8  # components of one kink node said, the first in order (one line each, as the literal formula gave)
_REDUCTIONS = (t.MaxOf, t.MaxShares, t.MaxAxis, t.MaxSharesAxis)


def kink_notes(value, floats: dict, sizes: dict) -> list:
    """The kink warnings of `value` (a tensor formula) at the float point `floats` (Var or symbol -> number or
    array), `sizes` the sizes of its size symbols; in the order of the formula's DAG, each said once."""
    notes: list = []
    for node, stopped in remembered("kink candidates", value, _candidates):  # a walk of the DAG, once a formula
        try:
            found = _hits(node, floats, sizes)
        except GradlangError:  # an argument NumPy cannot evaluate here: the value's own numbers say why
            continue
        if found is None or not found.any():
            continue
        indices = [tuple(int(i) for i in index) for index in np.argwhere(found)[:HITS]]
        for warning in _said(node, indices, floats, sizes, stopped):
            if warning not in notes:
                notes.append(warning)
    return notes


def has_kinks(value) -> bool:
    """Whether the formula has a node whose derivative may be a convention: then its notes depend on the point."""
    return bool(remembered("kink candidates", value, _candidates))


def _candidates(value) -> tuple:
    """(node, met only inside stop_gradient) for each node whose derivative may be a convention, in the order met.

    A fact of the formula alone, remembered by its identity (remembered.py): `g at …` run again with new arrays
    walks nothing (the walk hashes every node: half of a repeated at at width 64, issue #41)."""
    order, stopped, stack = [], {}, [(value, False)]
    while stack:
        node, inside = stack.pop()
        if node in stopped and (stopped[node] is False or inside):
            continue  # met already, outside a stop or inside one as now
        if node not in stopped:
            order.append(node)
        stopped[node] = inside
        inner = inside or isinstance(node, StopGradient)
        stack.extend((a, inner) for a in reversed(node.args) if isinstance(a, sp.Basic))
    exact = {sp.Eq(node.args[0], 0) for node in order if isinstance(node, t.ProdOf)}
    return tuple((node, stopped[node]) for node in order if _is_kink(node) and not _exact_choice(node, exact))


def _exact_choice(node, exact: set) -> bool:
    """A where on `u == 0` of a u whose product the formula takes: prod's gradient (tensor_ops.others) picks the
    product of the others exactly so, in value and derivative, and no convention is met there."""
    record = primitives.by_class(node.func) if exact else None  # a reduction (max(x)) has no scalar record
    return record is not None and record.kink.kind == "boundary" and node.args[0] in exact


def _is_kink(node) -> bool:
    if isinstance(node, _REDUCTIONS):
        return True
    record = primitives.by_class(node.func) if isinstance(node, sp.Basic) else None
    kink = record.kink if record is not None else None
    return kink is not None and not (kink.kind == "boundary" and not isinstance(node.args[0], Relational))


def _shape(node, sizes: dict) -> tuple:
    try:
        return tuple(int(sizes.get(s, s)) for s in t.shape_of(node))
    except GradlangError:  # a comparison's side: no shape of its own, a scalar
        return ()


def _array(expr, floats: dict, sizes: dict, shape: tuple):
    """An argument's numbers by whole-array NumPy, broadcast to the node's shape."""
    from gradlang.expr.tensor import numbers

    if not isinstance(expr, sp.Basic) or isinstance(expr, sp.Number):  # a constant formula (zeros(3)) is no float
        return np.broadcast_to(np.asarray(float(expr)), shape)
    return np.broadcast_to(numbers.evaluate(expr, floats, sizes), shape)


def _hits(node, floats: dict, sizes: dict):
    """A boolean array shaped like the node: True where the node sits on its kink."""
    shape = _shape(node, sizes)
    if isinstance(node, _REDUCTIONS):
        return _tied_lines(node, floats, sizes, shape)
    record = primitives.by_class(node.func)
    kink = record.kink
    if kink.kind == "point":
        return np.asarray(kink.hit(_array(node.args[0], floats, sizes, shape)))
    if kink.kind == "tie":
        args = node.args[1:] if isinstance(node, (MaxShare, MinShare)) else node.args
        return _tied([_array(a, floats, sizes, shape) for a in args], np.max if node.pick is max else np.min)
    condition = node.args[0]
    with np.errstate(invalid="ignore"):
        return _array(condition.lhs, floats, sizes, shape) == _array(condition.rhs, floats, sizes, shape)


def _tied(arrays: list, pick) -> np.ndarray:
    """Where two or more of the arrays attain their extremum (nan ties nothing, as kinks.py reads it)."""
    stacked = np.stack(arrays)
    with np.errstate(invalid="ignore"):
        return (stacked == pick(stacked, axis=0)).sum(axis=0) >= 2


def _tied_lines(node, floats: dict, sizes: dict, shape: tuple) -> np.ndarray:
    """max(v) and its shares: a tie anywhere in v; along an axis: the lines with a tie (each entry of a share)."""
    argument = node.args[0]
    array = _array(argument, floats, sizes, _shape(argument, sizes))
    with np.errstate(invalid="ignore"):
        if isinstance(node, (t.MaxOf, t.MaxShares)):
            return np.broadcast_to((array == np.max(array)).sum() >= 2, shape)
        axis = int(node.args[1])
        lines = (array == np.max(array, axis=axis, keepdims=True)).sum(axis=axis) >= 2  # one per line
    return lines if isinstance(node, t.MaxAxis) else np.broadcast_to(np.expand_dims(lines, axis), shape)


def _said(node, indices: list, floats: dict, sizes: dict, stopped: bool) -> list:
    """kinks.py's warnings for the node's components at these indices."""
    counted = sum(_count(v, sizes) for v in dag_atoms(node, t.Var))  # one visit a node of a shared DAG
    if counted > WORDED:
        return _said_by_entries(node, indices, floats, sizes, stopped)
    try:
        items, mapping = _lowered(node, indices, floats, sizes)
    except GradlangError:  # no components to read (an index left to NumPy, `v[k] at k = 0`): said by its entries
        return _said_by_entries(node, indices, floats, sizes, stopped)
    return _warnings(items, mapping, stopped)


def _said_by_entries(node, indices: list, floats: dict, sizes: dict, stopped: bool) -> list:
    """The warnings with each tensor argument named by an entry of the formula; a max over a tensor (a
    reduction, no scalar record to read its arguments by) names the tied entries of its argument."""
    if isinstance(node, _REDUCTIONS):
        return _said_ties(node, indices, floats, sizes, stopped)
    return _warnings(*_entries(node, indices, floats, sizes), stopped)


def _warnings(items: list, mapping: dict, stopped: bool) -> list:
    return kinks.kink_warnings([StopGradient(i) if stopped else i for i in items], mapping)


def _count(var, sizes: dict) -> int:
    return int(np.prod([int(sizes.get(s, s)) for s in var.shape])) if var.shape else 1


def _lowered(node, indices: list, floats: dict, sizes: dict) -> tuple:
    """The node's components at the indices, as the literal-size formula has them, and the point by component."""
    known = {s: n for s, n in sizes.items() if isinstance(s, sp.Symbol)}
    lowered = to_symbolic(components(node, known))
    items = elements(lowered)
    shape = _shape(node, sizes)
    picked = [items[int(np.ravel_multi_index(i, shape))] if shape else items[0] for i in indices]
    mapping: dict = {}
    for symbol, number in floats.items():
        if isinstance(symbol, t.Var):
            mapping.update(zip(elements(declared_components(symbol, known)), np.asarray(number, dtype=float).reshape(-1)))
        else:
            mapping[symbol] = float(number)
    return picked, mapping


def _entries(node, indices: list, floats: dict, sizes: dict) -> tuple:
    """The node's components at the indices with each tensor argument an entry of the formula, `(W @ x)[1]`."""
    shape = _shape(node, sizes)
    items, mapping = [], {}
    for index in indices:
        proxies = {}
        for part in _parts(node):
            if isinstance(part, sp.Basic) and not part.is_number and part not in proxies:
                symbol = sp.Symbol(_entry_name(part, index if _shape(part, sizes) else ()), real=True)
                proxies[part] = symbol
                mapping[symbol] = float(_array(part, floats, sizes, shape)[index])
        items.append(node.xreplace(proxies))
    return items, mapping


def _parts(node) -> tuple:
    """The arguments a kink reads: a where's two sides and branches, else the node's own arguments."""
    if primitives.by_class(node.func).kink.kind == "boundary":
        return (node.args[0].lhs, node.args[0].rhs, *node.args[1:])
    return node.args[1:] if isinstance(node, (MaxShare, MinShare)) else node.args


def _said_ties(node, indices: list, floats: dict, sizes: dict, stopped: bool) -> list:
    """max(v) (or the lines of a matrix along an axis) tied, its entries named by the formula's entries."""
    argument = node.args[0]
    array = _array(argument, floats, sizes, _shape(argument, sizes))
    text = to_source(argument)
    said = []
    for index in indices[:1] if isinstance(node, (t.MaxOf, t.MaxShares)) else indices:
        places = _line(node, index, array.shape)
        values = [float(array[p]) for p in places]
        extremum = max(values)
        shown = kinks.shown_arguments([_entry_name(argument, p, text) for p in places[:_SHOWN]])
        tied = [_entry_name(argument, p, text) for p, v in zip(places, values) if v == extremum]
        warning = kinks.tie_message("max", shown, len(places), tied, extremum, stopped)
        if warning not in said:
            said.append(warning)
    return said


_SHOWN = 16  # entries written before the cut of a note's arguments (each at least 4 characters, the cut at 60)


def _line(node, index: tuple, shape: tuple) -> list:
    """The places of the entries a max reads: all of v, or one line of a matrix along the node's axis."""
    if isinstance(node, (t.MaxOf, t.MaxShares)):
        return [tuple(int(i) for i in p) for p in np.ndindex(shape)]
    axis = int(node.args[1])
    line = index[0] if isinstance(node, t.MaxAxis) else index[1 - axis]
    return [(k, line) if axis == 0 else (line, k) for k in range(shape[axis])]


def _entry_name(part, index: tuple, text: str | None = None) -> str:
    """`x[1]`, `(W @ x)[1]`: an entry of a part of the formula (`text`, its spelling, if known already)."""
    text = to_source(part) if text is None else text
    if not index:
        return text
    inside = ", ".join(str(i) for i in index)
    return f"{text}[{inside}]" if isinstance(part, sp.Symbol) else f"({text})[{inside}]"
