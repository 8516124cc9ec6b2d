"""`at` for the tensor engine: sizes from the point, then numbers by whole-array NumPy or by components.

The components are the view of expr/tensor/lower.py (`components(e, sizes)`).
Sizes come from the `at` itself (`at n = 3`) or from the shapes of the arrays
given to the tensors (`at x = [1, 2, 3]`).
"""

from __future__ import annotations

import sympy as sp

from gradlang.core.literal_sizes import picks_at
from gradlang.core.point_indices import check_indices, check_ranges, indices_first
from gradlang.errors import ShapeError, ValueError
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.lower import FreeIndex, components, declared_components, literal, literal_shape, symbolic  # noqa: F401
from gradlang.expr.tensor.nodes import Var
from gradlang.lazy import has_numpy, np
from gradlang.syntax.lowered import written_names
from gradlang.expr.values import is_condition, elements, from_elements, shape_of


def sizes_from(value: Var, given, sizes: dict) -> None:
    """Learn the sizes of a tensor's shape from the array given to it (a mismatch is a ShapeError)."""
    given_shape = shape_of(given)
    if len(given_shape) != len(value.shape):
        raise ShapeError(f"'{value.name}' is {shapes.describe(value.shape)} but is given {shapes.describe(given_shape)}")
    for size, length in zip(value.shape, given_shape):
        known = sizes.get(size, size)
        if isinstance(known, (int, sp.Integer)) and int(known) != length:
            raise ShapeError(
                f"'{value.name}' is {shapes.describe(value.shape)} with {size} = {known}, "
                f"but is given {shapes.describe(given_shape)}"
            )
        sizes[size] = length


def binds_tensor(evaluator, bindings, frame) -> bool:
    """Does an at give a value to a declared tensor or a size? (Then its expression is the tensor engine's.)"""
    for binding in bindings:
        bound = evaluator.lookup(binding.target.name, frame)
        if isinstance(bound, Var) or shapes.is_size(bound):
            return True
    return False


def at_literal_sizes(evaluator, inner, bindings, frame) -> bool:
    """Is this `at` at literal sizes: does it give numbers to a tensor of literal size, or read a name
    bound at literal sizes, with no symbolic size anywhere? Then the component engine gives the numbers
    (evaluate.py, `_twin`), exactly its numbers and its IEEE and exactness rules; whole-array NumPy
    evaluates the formulas whose sizes the point itself gives (x: R^n at x = [1.0, 2.0]). A symbolic
    size beside (x: R^n; v: R^2) makes it the tensor engine's at, which takes v's components too: the
    component engine would read x as one scalar given a list of points."""
    targets = [evaluator.lookup(b.target.name, frame) for b in bindings]
    written = [evaluator.lookup(name, frame) for name in written_names(inner)]
    if any(symbolic(v) for v in targets + written):
        return False
    if any(isinstance(v, Var) and literal(v) for v in targets):
        return True
    return any(isinstance(value, sp.Basic) and literal(value) for value in written)


def symbolic_at(evaluator, value, bindings, frame) -> bool:
    """Does this at hold a symbolic size, in its value or a tensor it gives? (Then even the component
    engine's evaluator takes it by tensor_at.at: explain's value at a point is the plain at's.)"""
    return symbolic(value) or any(symbolic(evaluator.lookup(b.target.name, frame)) for b in bindings)


def at(evaluator, value, bindings, frame):
    """`e at …` for a formula of the tensor engine: sizes from the point, then the component engine's at."""
    from gradlang.core.substitute import substitute

    sizes, arrays, scalar_bindings = {}, {}, []
    for binding in bindings:
        target, value_node = binding.target, binding.value
        bound = evaluator.lookup(target.name, frame)
        if not (isinstance(bound, Var) or shapes.is_size(bound)) or (target.indices and literal(bound)):
            scalar_bindings.append(binding)  # a component of v: R^2 (v[0] = 1) is a scalar symbol of it
            continue
        given = evaluator.evaluate(value_node, frame)
        try:
            _bind_tensor(bound, target, given, sizes, arrays)
        except (ShapeError, ValueError) as error:
            raise error.located(binding.span)
    pairs, batch = evaluator._bindings(scalar_bindings, frame)
    check_indices(value, pairs)
    check_ranges(value, pairs, sizes)
    floats = _whole_array_point(value, arrays, pairs, batch, sizes)
    if floats is not None:
        from gradlang.expr.tensor import numbers  # NumPy's: a page without NumPy takes the component path

        result = numbers.as_value(numbers.evaluate(value, floats, _known_sizes(value, sizes)))
        if is_condition(value) and isinstance(result, sp.Float):  # all(x > 0): true or false, not 1.0
            return sp.true if result else sp.false
        return result
    value, pairs = indices_first(picks_at(value, arrays, pairs), pairs)
    converted = _each_component(value, sizes)
    for var, given in arrays.items():
        pairs.extend(zip(elements(declared_components(var, sizes)), elements(given)))
    return substitute(converted, pairs, batch, evaluator.notes)


def _each_component(value, sizes: dict):
    """components(value, sizes); of a list (grad(a*b, [a, b]), [1, 2], a value by components), of each entry."""
    if isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        return from_elements(shape_of(value), [components(e, sizes) for e in elements(value)])
    return components(value, sizes)


def _whole_array_point(value, arrays: dict, pairs: list, batch: list, sizes: dict):
    """The point as floats when whole-array NumPy can evaluate the formula there, else None.

    That is when the tensors are given floating-point arrays (exact numbers keep
    the exact component path: exact in, exact out) and every symbol has a value."""
    if batch or not arrays or not has_numpy() or isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        return None  # a list is no tensor formula: its entries are taken by components
    point = {}
    for var, given in arrays.items():
        if not isinstance(given, np.ndarray):
            items = elements(given)
            if not all(isinstance(e, sp.Float) for e in items):
                return None
            given = np.array([float(e) for e in items]).reshape(shape_of(given))
        point[var] = given
    for symbol, number in pairs:
        if not (isinstance(number, sp.Expr) and number.is_number and number.is_comparable):
            return None
        point[symbol] = float(number)
    known = _known_sizes(value, sizes)
    return point if all(s in point or s in known for s in value.free_symbols) else None


def _known_sizes(value, sizes: dict) -> dict:
    return {size: n for size, n in sizes.items() if isinstance(size, sp.Symbol)}


def _bind_tensor(bound, target, given, sizes: dict, arrays: dict) -> None:
    if target.indices:
        raise ShapeError(f"at a symbolic size, give all of '{bound}' or its size, not one component")
    if isinstance(bound, Var):
        sizes_from(bound, given, sizes)
        arrays[bound] = given
        return
    if not (isinstance(given, sp.Integer) and given >= 1):
        raise ValueError(f"the size '{bound}' must be given a whole number of at least 1")
    known = sizes.get(bound)
    if known is not None and known != int(given):
        raise ShapeError(f"the size '{bound}' is {known} from an array, but is given {given}")
    sizes[bound] = int(given)
