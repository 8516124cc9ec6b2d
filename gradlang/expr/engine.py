"""The tensor engine (expr/tensor/) as the rest of gradlang reaches it: imported on first use (issue #41).

A program that declares no tensor and calls no tensor builtin (`1 + 1`, `x: R; diff(sin(x), x)`) never needs
the engine's 60 SymPy classes, and start-up is most of such a program's time. The engine's values exist only
once it is loaded: a `Var` is made by a declaration, every other node by a builtin, a product or an index of
one, and each of those imports it. So until then no value is a tensor or holds one, and every shape is ();
the answers below say so without importing anything, and are the engine's own once it is loaded.

The modules are `Deferred` (gradlang/lazy.py): `nodes.Var` in an isinstance check is false until the engine
is loaded; a call imports it. Modules of the engine itself, and modules reached only through a tensor value,
import expr/tensor/ as usual.
"""

from __future__ import annotations

from gradlang.lazy import deferred_module

nodes = deferred_module("gradlang.expr.tensor.nodes")
shapes = deferred_module("gradlang.expr.tensor.shapes")
lower = deferred_module("gradlang.expr.tensor.lower")
listed = deferred_module("gradlang.expr.tensor.listed")
joins = deferred_module("gradlang.expr.tensor.joins")
axes = deferred_module("gradlang.expr.tensor.axes")
broadcast = deferred_module("gradlang.expr.tensor.broadcast")
spelling = deferred_module("gradlang.expr.tensor.spelling")

Var, TensorOp, TensorList = nodes.Var, nodes.TensorOp, listed.TensorList


def loaded() -> bool:
    """Whether any tensor value can exist yet (the engine's classes are defined in nodes.py)."""
    return nodes.loaded()


def shape_of(value) -> tuple:
    return nodes.shape_of(value) if loaded() else ()


def rank(value) -> int:
    return len(shape_of(value))


def is_tensor(value) -> bool:
    return loaded() and nodes.is_tensor(value)


def involves(value) -> bool:
    """Holds a declared tensor or a size symbol (sizes are declared by the engine too)."""
    return loaded() and lower.involves(value)


def literal(value) -> bool:
    return loaded() and lower.literal(value)


def symbolic(value) -> bool:
    return loaded() and lower.symbolic(value)


def lowered(value):
    """A value at literal sizes as its components (expr/tensor/lower.py); without the engine, itself."""
    return lower.lowered(value) if loaded() else value


def is_list(value) -> bool:
    return loaded() and listed.is_list(value)


def is_size(value) -> bool:
    """A size symbol (`n: size`): declared through the engine, so none before it is loaded."""
    return loaded() and shapes.is_size(value)


def kept_shape(expr, shape: tuple):
    """expr at least of the shape's rank (expr/tensor/broadcast.py); a scalar shape keeps every expr."""
    return broadcast.kept_shape(expr, shape) if shape else expr


def without_zeros(terms: list) -> list:
    """A sum's terms without its zeros(…) (expr/tensor/broadcast.py); there are none before the engine."""
    return broadcast.without_zeros(terms) if loaded() else terms
