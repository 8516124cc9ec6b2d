"""Numbers at literal sizes by whole-array NumPy, when the point gives large float arrays.

`g at W1 = load("w1.npy"), …` with `W1: R^(1024,1024)` would cost about a
millisecond per component by the component engine (core/twins.py), which
keeps every number of a small program to its last printed digit. Here the
tensor formula itself is compiled once to NumPy array code
(expr/tensor/numbers.py: one `@` for a matrix product, stable softmax and
logsumexp, IEEE 754 float64) and run on the arrays as given.

It is taken only when it is both safe and worth it (docs/decisions.md,
"Whole-array numbers at literal sizes"):

- the tensors the `at` gives hold at least WHOLE_ARRAY_COMPONENTS components
  together, counted from their declared sizes (so the choice depends on the
  program only, never on the machine), and every one is given floats (an
  array from load, linspace or Session.bind, or a list of floats); exact
  numbers keep the exact component path; a formula that calls logdet takes
  this path at any size, so its numbers are slogdet's (section 6: no
  overflow, det(A) <= 0 a ValueError), never log of a float det;
- every other name the `at` gives is a scalar symbol given one real number,
  and the formula has no free symbol left (else its result is a formula,
  the component engine's to print);
- the formula is one tensor formula (not a list of components, not a point
  taking builtin such as gradcheck) and NumPy evaluates it without error.

Otherwise it answers None and the component engine answers as before, so a
formula numbers.py cannot evaluate is never a silent wrong answer, and an
error is always the component engine's own message.
"""

from __future__ import annotations

import sympy as sp

from gradlang.core.literal_sizes import mixed
from gradlang.expr.tensor.lower import literal
from gradlang.errors import GradlangError
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.values import elements, shape_of
from gradlang.lazy import has_numpy, np
from gradlang.syntax import lowered as lo

# Components of the tensors an `at` gives, together, from which whole-array NumPy
# gives the numbers: 64×64. Every program of examples/ and the goldens gives fewer
# (or exact numbers), so its printed numbers are the component engine's; the tests
# that give more (summaries and limits of 100 000 numbers) print the same either way.
WHOLE_ARRAY_COMPONENTS = 4096


def at(evaluator, inner, bindings, frame, least: int | None = None):
    """The value of `inner at bindings` by whole-array NumPy, or None when the component engine answers.

    `least` is the count of components from which it answers; 0 where the component engine cannot
    (logdet of a 6×6 matrix of floats: its formula by components would have 6! terms)."""
    if not has_numpy() or evaluator._point_taker(inner, frame) is not None:
        return None
    targets = _targets(evaluator, bindings, frame)
    least = WHOLE_ARRAY_COMPONENTS if least is None else least
    if targets is None or (_count(targets) < least and not _calls_logdet(evaluator, inner)):
        return None
    marks = len(evaluator.notes), len(evaluator.attachments)
    try:
        found = _point(evaluator, inner, bindings, targets, frame)
    except GradlangError:
        found = None  # the component engine raises its own error, at its place
    answer = None if found is None else _numbers(*found)
    if answer is None:  # its notes and records are the component engine's to give
        del evaluator.notes[marks[0]:], evaluator.attachments[marks[1]:]
    return answer


def _targets(evaluator, bindings, frame):
    """The symbol each binding gives a value to (a declared tensor of literal size or a scalar symbol), else None."""
    from gradlang.core.evaluate import symbol

    targets = []
    for binding in bindings:
        target = binding.target
        if target.indices:
            return None
        name = target.name
        bound = evaluator.lookup(name, frame)
        bound = symbol(name) if bound is None else bound
        if isinstance(bound, Var) and literal(bound):
            targets.append(bound)
        elif isinstance(bound, sp.Symbol) and not isinstance(bound, Var) and not shapes.is_size(bound):
            targets.append(bound)
        else:
            return None
    return targets if len(set(targets)) == len(targets) else None


def _calls_logdet(evaluator, inner) -> bool:
    """The expression, or a user function it calls, is written with logdet."""
    from gradlang.core.evaluate import FunctionDef

    seen, todo = set(), [inner]
    while todo:
        for node in lo.walk(todo.pop()):
            if isinstance(node, lo.Call) and node.name not in seen:
                seen.add(node.name)
                bound = evaluator.env.get(node.name)
                if isinstance(bound, FunctionDef):
                    todo.append(bound.body)
    return "logdet" in seen


def _count(targets: list) -> int:
    total = 0
    for target in targets:
        if isinstance(target, Var):
            total += int(np.prod([int(n) for n in target.shape]))
    return total


def _point(evaluator, inner, bindings, targets, frame):
    """(the formula NumPy computes, the point), or None when the whole-array path does not apply."""
    from gradlang.core.point_indices import check_indices, check_ranges

    value = evaluator.evaluate(inner, frame)
    if not isinstance(value, sp.Expr) or not literal(value) or mixed(value):
        return None
    point, pairs = {}, []
    for target, binding in zip(targets, bindings):
        given = _floats(target, evaluator.evaluate(binding.value, frame))
        if given is None:
            return None
        point[target] = given
        if not isinstance(target, Var):
            pairs.append((target, sp.Float(given)))
    computed, indexes, symbols = _prepared(value)
    if not symbols <= set(point):
        return None
    if indexes:  # an index given a float, or out of range: the component engine's error
        check_indices(value, pairs)
        check_ranges(value, pairs, {})
    return computed, point


def _numbers(computed, point):
    """The formula's value at the point; None when numbers.py cannot compile it (the component engine's then).

    Its own errors (a singular matrix under inv, an index NumPy computes out
    of range) are the answer's: the component engine would say the same, or
    stop at its size limit first."""
    from gradlang.expr.tensor import numbers

    try:
        return numbers.as_value(numbers.evaluate(computed, point, {}))
    except GradlangError:
        raise
    except Exception:  # a node the code generator has no spelling for: never a wrong number
        return None


_PREPARED: dict = {}  # id of a formula -> (it, and what _prepared says of it): each formula is walked once


def _prepared(value) -> tuple:
    """(the formula as NumPy computes it, does it take an entry, a row, a column or a one-hot vector?,
    its symbols)."""
    from gradlang.expr.graph import build_dag
    from gradlang.expr.tensor import nodes as t

    known = _PREPARED.get(id(value))
    if known is None or known[0] is not value:
        nodes = build_dag([value]).nodes
        indexes = any(isinstance(n, (t.Entry, t.Row, t.Column, t.OneHot)) for n in nodes)
        symbols = frozenset(n for n in nodes if isinstance(n, sp.Symbol))  # Vars too; one walk of the DAG
        known = _PREPARED[id(value)] = (value, _scaled_outers(value, nodes), indexes, symbols)
        if len(_PREPARED) > 256:
            _PREPARED.pop(next(iter(_PREPARED)))
    return known[1:]


def _scaled_outers(value, nodes: list):
    """s*outer(u, v) computed as outer(s*u, v): one pass over the matrix, not two (the same numbers to rounding).

    The gradient of a layer by its weights has this form; only a formula of a
    few hundred nodes is rewritten (xreplace walks it as a tree)."""
    from gradlang.expr.tensor import nodes as t

    if len(nodes) > 400:
        return value
    mapping = {}
    for node in nodes:
        if isinstance(node, sp.Mul):
            outers = [a for a in node.args if isinstance(a, t.Outer)]
            rest = [a for a in node.args if not isinstance(a, t.Outer)]
            if len(outers) == 1 and rest and all(t.shape_of(a) == () for a in rest):
                u, v = outers[0].args
                mapping[node] = t.Outer(sp.Mul(*rest, u), v)
    return value.xreplace(mapping) if mapping else value


def _floats(target, given):
    """The number (a scalar symbol) or float64 array (a tensor) given to a target, or None."""
    if not isinstance(target, Var):
        if isinstance(given, sp.Expr) and given.is_number and given.is_comparable:
            return float(given)
        return None
    shape = tuple(int(n) for n in target.shape)
    if isinstance(given, np.ndarray):
        return given if given.shape == shape and given.dtype == np.float64 else None
    if shape_of(given) != shape:
        return None
    items = elements(given)
    if not all(isinstance(e, sp.Float) for e in items):
        return None  # exact numbers: exact in, exact out, by components
    return np.array([float(e) for e in items], dtype=np.float64).reshape(shape)
