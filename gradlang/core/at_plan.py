"""A compiled plan of an `at` statement: `g at W = Wd, c = 0.1` run again at new arrays is a call, not a walk.

A loop in a notebook, Session.run or the REPL evaluates the same written
statement (the same lowered node: syntax/lower.py's read gives a text read
lately its program again) with new arrays bound to the same names. Its
first run takes the whole way (core/at.py: the bindings looked up and
checked, the names noted, the point's sizes learnt, the formula compiled to
whole-array NumPy); when that way ended in whole-array NumPy at top level,
with no note but the kinks', the plan of the run is kept here, by the node
and the formula's value (two sessions running the same text keep a plan each):

- the formula's value by identity, each target's tensor or symbol by
  identity or equality (a name bound anew, a tensor redeclared at another
  shape, misses the plan);
- for each binding, where its number comes from: the session's array of a
  name (float64, the shape it had: anything else misses), the session's real
  number of a name, or a literal's float, made once;
- the compiled NumPy function with the sizes and the result's shape
  (expr/tensor/numbers.py's Compiled), and the memory bounds it was checked
  under (a bound changed since misses).

A call that meets its plan checks just that and calls the function; the
kink notes, which depend on the numbers, are found again only when the
formula has a node with a kink (tools/tensor_kinks.py, its candidates
remembered). A miss takes the whole way, which learns the plan anew. The
numbers are the whole way's: the same function at the same arrays.
"""

from __future__ import annotations

from collections import OrderedDict
from operator import is_

import sympy as sp

from gradlang import limits
from gradlang.expr.engine import Var
from gradlang.expr.values import is_condition
from gradlang.lazy import deferred, np
from gradlang.remembered import CAPACITY, trim
from gradlang.syntax import lowered as lo

# A plan is made by core/at.py's whole way, which has imported these; the first `at` runs it (issue #41).
_index_symbols = deferred("gradlang.core.point_indices", "_index_symbols")
has_kinks = deferred("gradlang.tools.tensor_kinks", "has_kinks")
kink_notes = deferred("gradlang.tools.tensor_kinks", "kink_notes")

# (id(At node), id(value), id(the session's bindings)) -> Plan; the plan holds the first two, so their ids stay
# theirs; the bindings' id keeps a plan per session (two sessions of one program share the remembered value, and
# each would otherwise meet the other's plan by SymPy's equality of its tensors); a dict that has gone and
# another at its id is checked as any session is, binding by binding
_PLANS: OrderedDict = OrderedDict()


class Plan:
    """What a run of one `at` node needs beside the numbers (see the module docstring)."""

    def __init__(self, node, body_value, sources: tuple, compiled, sizes: dict, bounds: tuple):
        self.node = node
        self.name = node.body.name
        self.value = body_value
        order = sorted((s[1] for s in sources), key=lambda symbol: symbol.name)
        # (target name, target's Var or symbol, kind, name or float, shape, place among the function's arguments)
        self.sources = tuple((*source, order.index(source[1])) for source in sources)
        self.targets = tuple((source[0], source[1]) for source in sources)  # each checked at a call
        self.target_names = tuple(source[0] for source in sources)  # the same, for one C loop (_same_targets)
        self.target_values = tuple(source[1] for source in sources)
        self.arrays = tuple((s[3], s[4], s[5]) for s in self.sources if s[2] == "array")  # (name, shape, place)
        self.numbers = tuple((s[3], s[5]) for s in self.sources if s[2] == "number")  # (name, place)
        # The function's arguments as a call gives them (numeric's NumPy floats), the literals' made once
        # and the sizes after the point's numbers: a call fills in the arrays and the numbers of names.
        self.arguments = [np.float64(s[3]) if s[2] == "literal" else None for s in sorted(
            sources, key=lambda source: source[1].name)] + compiled.sizes
        self.compiled = compiled
        self.sizes = sizes
        self.bounds = bounds
        self.kinks = has_kinks(body_value)
        self.float64 = np.dtype(np.float64)
        self.condition = is_condition(body_value)


def run(env: dict, node, notes: list | None):
    """The value of `node` (an At) by its plan, its kink notes added to `notes`; None when it has no plan or
    the session's bindings `env` no longer fit it."""
    body = node.body
    key = (id(node), id(env.get(body.name)), id(env)) if body.kind == "name" else None
    plan = _PLANS.get(key)
    if plan is None or plan.node is not node or env.get(plan.name) is not plan.value \
            or limits.max_memory() != plan.bounds[0] or limits.MAX_NUMERIC_PRODUCTS != plan.bounds[1]:
        return None
    arguments = _arguments(plan, env)
    if arguments is None:
        return None
    try:
        _PLANS.move_to_end(key)  # as remembered.touch: another thread may have dropped it
    except KeyError:
        pass
    return _value(plan, arguments, notes)


def _arguments(plan: Plan, env: dict) -> list | None:
    """The compiled function's arguments at the session's bindings `env`, or None where they miss the plan."""
    if not all(map(is_, map(env.get, plan.target_names), plan.target_values)):  # each the same object: one C loop
        for target, bound in plan.targets:
            held = env.get(target)
            if held is not bound and (type(held) is not type(bound) or held != bound):
                return None  # equal: another session's tensor of the same name and shape (never an array's ==)
    arguments = plan.arguments.copy()
    for origin, shape, place in plan.arrays:
        given = env.get(origin)
        if type(given) is not np.ndarray or given.shape != shape or given.dtype is not plan.float64:
            return None  # a float64 array in the machine's byte order, as Session.bind and load make
        arguments[place] = given
    for origin, place in plan.numbers:
        given = env.get(origin)
        if not isinstance(given, (sp.Float, sp.Rational)):
            return None
        arguments[place] = np.float64(float(given))
    return arguments


def _value(plan: Plan, arguments: list, notes: list):
    """The formula at the point, as core/at.py's whole way gives it, its kink notes added."""
    result = plan.compiled.outputs(arguments)[0]
    if result.shape == ():
        result = sp.Float(float(result))  # as expr/tensor/numbers.py's as_value
    if plan.kinks and notes is not None:
        point = {source[1]: arguments[source[-1]] for source in plan.sources}
        notes.extend(n for n in kink_notes(plan.value, point, plan.sizes) if n not in notes)
    if plan.condition and isinstance(result, sp.Float):
        return sp.true if result else sp.false
    return result


def learn(evaluator, node, value, floats: dict, sizes: dict) -> None:
    """Keep the plan of a run that the whole way just evaluated by whole-array NumPy at `floats`, when every
    binding's number comes from a name or a literal (see the module docstring); else keep none."""
    from gradlang.expr.tensor import numbers

    if not isinstance(node.body, lo.Name) or evaluator.env.get(node.body.name) is not value or evaluator.notes:
        return
    sources = _sources(evaluator.env, node.bindings, floats)
    if sources is None or len(sources) != len(floats) or _index_symbols(value) & set(floats):
        return
    order = sorted(floats, key=lambda symbol: symbol.name) + sorted(sizes, key=lambda symbol: symbol.name)
    compiled = numbers.Compiled(value, order, sizes, len(floats))
    compiled.specialize()  # at its first call, the plan's second run: no evaluation more than the runs'

    _PLANS[(id(node), id(value), id(evaluator.env))] = Plan(node, value, sources, compiled, dict(sizes), _bounds())
    trim(_PLANS, CAPACITY)


def _sources(env: dict, bindings: tuple, floats: dict):
    """(target, its Var or symbol, kind, origin, shape) of each binding, or None when one is not planned."""
    sources = []
    for binding in bindings:
        target, given = binding.target, binding.value
        bound = env.get(target.name)
        planned = isinstance(bound, sp.Basic) and bound in floats  # an array or a function is never planned
        if target.indices or not planned or any(source[1] is bound for source in sources):
            return None
        if isinstance(given, lo.Number) and not isinstance(bound, Var):
            sources.append((target.name, bound, "literal", floats[bound], ()))
        elif isinstance(given, lo.Name) and env.get(given.name) is floats[bound] and isinstance(bound, Var):
            sources.append((target.name, bound, "array", given.name, floats[bound].shape))
        elif isinstance(given, lo.Name) and isinstance(env.get(given.name), (sp.Float, sp.Rational)) \
                and not isinstance(bound, Var):
            sources.append((target.name, bound, "number", given.name, ()))
        else:
            return None
    return tuple(sources)


def _bounds() -> tuple:
    """The limits the formula's cost was checked under (expr/tensor/numbers.py): a change misses the plan
    (run() reads them alike)."""
    return (limits.max_memory(), limits.MAX_NUMERIC_PRODUCTS)


def forget() -> None:
    """Drop every plan (tests)."""
    _PLANS.clear()
