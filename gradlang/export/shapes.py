"""Which shape each parameter of a user function has, for export.

gradlang functions are untyped: a body is evaluated at each call with whatever
it is given. An exported function needs concrete SymPy symbols for its
parameters, so we guess, from the syntax only (never by evaluating user text):

1. a hint: the function is called somewhere (another body, or the script's
   source if the caller passes it) with a declared vector/matrix or a list
   literal at that position -> that shape;
2. a parameter that is indexed, an operand of `@`, or in the argument of a
   reduction (`sum(v)`, `max(v)`, `sum(v + sg(v))`) must be an array -> the
   shapes of the declared vectors and matrices, in declaration order;
3. otherwise a scalar first, then those shapes;
4. a parameter used as an index (`pi[a]`) is an integer: INDEX (see units.py).

An array parameter may also be a vector whose length is a dimension of a
declared array (a row of `W: R^(2,2)` has length 2): those come after the
declared shapes.

export tries the combinations in that order and keeps the first whose body
evaluates without a ShapeError.
"""

from __future__ import annotations

import itertools

import sympy as sp

from gradlang.core.builtins_axes import is_axis_call
from gradlang.core.builtins_vectors import WHOLE_VALUES
from gradlang.core.evaluate import FunctionDef
from gradlang.expr import primitives
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import read
from gradlang.expr.values import elements, shape_of


def _primitive_names(*applies) -> set:
    """The names of the registry's primitives applied in one of these ways (see builtins.APPLY)."""
    return {name for r in primitives.records() if r.apply in applies for name in r.names}


# The builtins that take whole vectors: the operations of builtins.py and the registry's reductions.
REDUCTIONS = {"sum", "mean", "prod", "dot", "len", "transpose", "reduce_sum", "reduce_mean"} | _primitive_names(
    "reduction", "rows") | WHOLE_VALUES
ONE_ARGUMENT_REDUCTIONS = _primitive_names("extremum")
ELEMENTWISE = _primitive_names("elementwise", "where")  # where(c, a, b) is elementwise in a and b too
DEFAULT_SHAPE = (3,)
MAX_TRIES = 256
INDEX = "index"  # the option of a parameter used as an index
SUBSCRIPTS = (lo.Index, lo.Column, lo.Row)  # v[i], M[i, j]; the slices M[:, j] and M[i, :]


def declared_shapes(names: dict) -> list[tuple]:
    """Shapes of the declared vectors and matrices, in declaration order, without repeats."""
    shapes = []
    for value in names.values():
        shape = shape_of(value)
        if shape and isinstance(value, sp.Basic) and all(isinstance(e, sp.Symbol) for e in elements(value)):
            if shape not in shapes:
                shapes.append(shape)
    return shapes


def call_hints(names: dict, source: str | None) -> dict:
    """(function name, parameter index) -> shape, from calls with arrays or list literals."""
    trees = [v.body for v in names.values() if isinstance(v, FunctionDef)]
    if source:
        try:
            trees.extend(read(source).statements)
        except Exception:  # noqa: BLE001 - a script that does not parse gives no hints
            pass
    hints: dict = {}
    for tree in trees:
        for node in lo.walk(tree):
            if isinstance(node, lo.Call) and isinstance(names.get(node.name), FunctionDef):
                for i, argument in enumerate(node.args):
                    shape = _literal_shape(argument, names)
                    if shape:
                        hints.setdefault((node.name, i), shape)
    return hints


def array_shapes(names: dict) -> list[tuple]:
    """Shapes an array parameter may have: the declared ones, then vectors as long as their dimensions."""
    declared = declared_shapes(names) or [DEFAULT_SHAPE]
    vectors = [(n,) for shape in declared for n in shape]
    return list(dict.fromkeys(declared + vectors))


def parameter_options(definition: FunctionDef, names: dict, hints: dict) -> list[list]:
    """For each parameter, the shapes to try, most likely first (INDEX for an index)."""
    shapes = array_shapes(names)
    arrays, indices = array_parameters(definition, names), index_parameters(definition)
    ranks = indexed_ranks(definition)
    options = []
    for i, param in enumerate(definition.params):
        if param in indices:
            options.append([INDEX])
        elif (definition.name, i) in hints:
            options.append([hints[(definition.name, i)]])
        elif param in arrays:
            options.append(_by_indexing(shapes, ranks.get(param)))
        else:
            options.append([()] + shapes)
    return options


def _by_indexing(shapes: list, rank) -> list:
    """The shapes to try, those of the rank the body indexes the parameter at first: `c[0]` is an entry of a
    vector more likely than a row of a matrix, now that a list of rows may make a tensor of rank 3."""
    if rank is None:
        return shapes
    return sorted(shapes, key=lambda shape: len(shape) != rank)


def indexed_ranks(definition: FunctionDef) -> dict:
    """The number of indices each parameter is written with (`c[0]`: 1, `M[i, j]`: 2), where it is one."""
    params, found = set(definition.params), {}
    for node in lo.walk(definition.body):
        if isinstance(node, lo.Index) and isinstance(node.base, lo.Name) and node.base.name in params:
            found.setdefault(node.base.name, set()).add(len(node.indices))
    return {name: ranks.pop() for name, ranks in found.items() if len(ranks) == 1}


def assignments(options: list[list[tuple]]):
    """Combinations of parameter shapes, fewest arrays first, at most MAX_TRIES."""
    combos = sorted(itertools.product(*options), key=lambda c: sum(1 for s in c if s))
    return combos[:MAX_TRIES]


def array_parameters(definition: FunctionDef, names: dict) -> set[str]:
    """Parameters the body uses as arrays: indexed or sliced, in `@`, or given to a reduction (or max(M, axis=1)).

    A reduction's argument counts only as itself or an elementwise expression
    of it: the items of a list literal (`sum([a, b])`, `softmax([t, 1])`) may
    be scalars, and a user function that shadows a builtin (`len(a, b) = a + b`)
    reduces nothing.
    """
    params, found = set(definition.params), set()
    for node in lo.walk(definition.body):
        if isinstance(node, SUBSCRIPTS):
            found |= _direct_names(node.base, params, names)
        elif isinstance(node, lo.Product):
            operands = node.operands
            for op, (left, right) in zip(node.operators, zip(operands, operands[1:])):
                if op == "@":
                    found |= _direct_names(left, params, names) | _direct_names(right, params, names)
        elif isinstance(node, lo.Call):
            name, args = _builtin(node, names), node.args
            if name in REDUCTIONS or (name in ONE_ARGUMENT_REDUCTIONS and len(args) == 1):
                arrays = args
            elif name in ONE_ARGUMENT_REDUCTIONS and is_axis_call(name, args, args):
                arrays = args[:1]  # max(M, axis=1): the axis form takes a matrix (core/builtins_axes.py)
            else:
                arrays = []
            for argument in arrays:
                found |= _direct_names(argument, params, names) or _operand_names(argument, params, names)
    return found


def _builtin(call: lo.Call, names: dict) -> str | None:
    """The builtin a call node calls; None when a user function of that name shadows it."""
    name = call.name
    return None if isinstance(names.get(name), FunctionDef) else name


def index_parameters(definition: FunctionDef) -> set[str]:
    """Parameters written as an index themselves: `a` in pi[a] or W[a, 0]."""
    params, found = set(definition.params), set()
    for node in lo.walk(definition.body):
        if isinstance(node, SUBSCRIPTS):
            for argument in _subscripts(node):
                if isinstance(argument, lo.Name) and argument.name in params:
                    found.add(argument.name)
    return found


def _direct_names(node, params: set, names: dict) -> set[str]:
    """The parameter a node is, possibly through elementwise calls: v, exp(v), sg(exp(v))."""
    while isinstance(node, lo.Call) and _builtin(node, names) in ELEMENTWISE:
        if len(node.args) != 1:
            return set()
        node = node.args[0]
    if isinstance(node, lo.Name) and node.name in params:
        return {node.name}
    return set()


def _operand_names(node, params: set, names: dict) -> set[str]:
    """Parameters in an elementwise expression given to a reduction, sum(v + sg(v)): not under an index,
    nor items of a list literal (in `sum([a, b] * 2)` a and b may be scalars)."""
    found, stack = set(), [node]
    while stack:
        node = stack.pop()
        if isinstance(node, (*SUBSCRIPTS, lo.Brackets)):
            continue
        if isinstance(node, lo.Name) and node.name in params:
            found.add(node.name)
        elif not isinstance(node, lo.Call) or _builtin(node, names) in ELEMENTWISE:
            stack.extend(node.parts())
    return found


def _subscripts(node) -> tuple:
    """The index expressions of v[i], M[i, j], or of a slice M[:, j], M[i, :] (one)."""
    return node.indices if isinstance(node, lo.Index) else (node.index,)


def _literal_shape(node, names: dict):
    if isinstance(node, lo.Name):
        value = names.get(node.name)
        return shape_of(value) if isinstance(value, sp.Basic) and shape_of(value) else None
    if isinstance(node, lo.Brackets):
        items = node.items
        inner = {_literal_shape(i, names) if isinstance(i, lo.Brackets) else () for i in items}
        if len(inner) == 1:
            (shape,) = inner
            return (len(items),) + (shape or ())
    return None
