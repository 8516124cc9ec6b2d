"""The evaluator's hooks into the tensor engine, which is imported on first use (issue #41).

Every operation of the evaluator asks the engine something: do the operands hold a tensor, are lists beside
them its constants, what shape does the result keep. A value of the engine exists only once it is loaded
(expr/engine.py), so before that each answer is known without it: operands stay as they are, results keep
their value, and `1 + 1` imports none of core/tensor_values.py, core/at.py or expr/tensor/. Once the engine
is loaded each hook is the engine's own function. The evaluator's other reaches into it (an index, a tensor
builtin, an `at` that binds a tensor) import it where they are first taken.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr import engine
from gradlang.expr.engine import involves, is_list
from gradlang.lazy import deferred, deferred_module
from gradlang.remembered import remembered
from gradlang.syntax import lowered as lo

# A user function, made by the session at the first definition: before it, nothing is one (issue #41)
FunctionDef = deferred("gradlang.core.definitions", "FunctionDef")
at = deferred_module("gradlang.core.at")
literal_sizes = deferred_module("gradlang.core.literal_sizes")
subscripts = deferred_module("gradlang.core.subscripts")
tensor_broadcast = deferred_module("gradlang.core.tensor_broadcast")
tensor_lists = deferred_module("gradlang.core.tensor_lists")
tensor_values = deferred_module("gradlang.core.tensor_values")

BY_LIST = frozenset({"grad"})  # the builtins whose variable (second argument) may be a list of tensors
JOINS = frozenset({"concat", "stack"})  # the builtins whose first argument is a list of tensors to join


def aligned(values: list) -> list:
    """Operands where a list meets a tensor: the list as the engine's constant or the tensor as components."""
    return literal_sizes.aligned(values) if engine.loaded() else values


def stretched(values: list) -> list:
    """Operands of an elementwise operation, tensors stretched to one shape (NumPy's broadcast)."""
    return tensor_broadcast.stretched(values) if engine.loaded() else values


def fit(result, operands: list):
    """An elementwise result with the shape of its tensor operands, where SymPy's algebra dropped it."""
    return tensor_values.fit(result, operands) if engine.loaded() else result


def checked(value):
    """The value, its shape checked where it holds a tensor."""
    return tensor_values.checked(value) if involves(value) else value


def listed(values: list) -> bool:
    """Do the entries of `[…]` make a list of tensors (core/tensor_lists.py)?"""
    return engine.loaded() and tensor_lists.listed(values)


def stacks(values: list) -> bool:
    """Do the entries of `[…]` stack into a matrix at the tensor level (core/tensor_lists.py)?"""
    return engine.loaded() and tensor_lists.stacks(values)


def binds_tensor(evaluator, bindings, frame) -> bool:
    """Does an `at` give a value to a declared tensor or a size (core/at.py)?"""
    return engine.loaded() and at.binds_tensor(evaluator, bindings, frame)


def takes_list(name: str, position: int, node) -> bool:
    """Is this argument grad's variable written as a list (`grad(L, [W, b])`)?"""
    return name in BY_LIST and position == 1 and isinstance(node, lo.Brackets)


def takes_entries(name: str, position: int, node) -> bool:
    """Is this argument the list a join reads entry by entry (`concat([A, B], 0)`, `stack([u, v])`)?"""
    return name in JOINS and position == 0 and isinstance(node, lo.Brackets)


def check_arguments(name: str, args: list, nodes) -> None:
    """A list of tensors is an argument of grad's variable only: elsewhere a ShapeError at its place."""
    for position, (value, node) in enumerate(zip(args, nodes)):
        if is_list(value) and not (name in BY_LIST and position == 1) and not (name in JOINS and position == 0):
            raise engine.listed.refused(f"an argument of {name}").located(node.span)


def list_at(evaluator, node, frame):
    """`g at …` of a list of tensors (core/tensor_lists.py); None when the expression can be no such list."""
    return tensor_lists.at(evaluator, node, frame) if may_be_list(evaluator, node.body, frame) else None


def may_be_list(evaluator, inner, frame) -> bool:
    """Can the expression be a list: does it, or a function it calls, write a list or read a name bound to one?

    What is written is read once per node (remembered.py); the names are looked up at every call, since a
    name may be bound anew between two runs of the same statement."""
    seen, todo = set(), [inner]
    while todo:
        brackets, names = remembered("list shape", todo.pop(), _written_list_shape)
        if brackets:
            return True
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            bound = evaluator.lookup(name, frame)
            if is_list(bound):
                return True
            if isinstance(bound, FunctionDef):
                todo.append(bound.body)
    return False


def _written_list_shape(node) -> tuple:
    """(whether brackets are written at or below the node, the names read or called there, in order)."""
    names = []
    for part in lo.walk(node):
        if isinstance(part, lo.Brackets):
            return True, ()
        if isinstance(part, (lo.Name, lo.Call)):
            names.append(part.name)
    return False, tuple(dict.fromkeys(names))


# Subscripts (v[i], M[:, j], M[i, :], X[..., k], X[:, :, k], v[a:b]) are the evaluator's methods, each imported when first
# written: an index of a list of numbers takes the engine's way too (core/subscripts.py).

def index(evaluator, node, frame):
    return subscripts.index(evaluator, node, frame)


def column(evaluator, node, frame):
    return subscripts.column(evaluator, node, frame)


def row(evaluator, node, frame):
    return subscripts.row(evaluator, node, frame)


def last(evaluator, node, frame):
    return subscripts.last(evaluator, node, frame)


def along(evaluator, node, frame):
    return subscripts.along(evaluator, node, frame)


def range_of(evaluator, node, frame):
    return subscripts.range_of(evaluator, node, frame)


def numbers_whole(name: str, args: list, nodes: list):
    """A list of numbers that only the engine's axes can take (`norm([[3, 4], [6, 8]], axis=1)`,
    `onehot([1, 0], 3)`), by tensor_values; a call without a list first never loads the engine."""
    if not args or not isinstance(args[0], (sp.NDimArray, sp.MatrixBase)):
        return None
    return tensor_values.numbers_whole(name, args, nodes)
