"""`e at …` of a tensor formula: one `at`, whatever its sizes are spelled.

A statement's value is one tensor formula over declared tensors whose sizes
are numbers (`x: R^3`) or names (`x: R^n`); its numbers at a point are a
function of that formula and the point alone (docs/decisions.md, "A
formula's numbers do not depend on how its sizes are spelled"):

- sizes come from the declaration, or from the point (`at n = 3`, or the
  shape of the array given to x);
- float arrays (and real numbers for the scalars) with no symbol left: the
  formula compiled to whole-array NumPy (expr/tensor/numbers.py), IEEE 754
  float64, at every size;
- exact numbers, or symbols left: the formula lowered to its components
  (expr/tensor/lower.py), then substituted (core/substitute.py): exact in,
  exact out;
- no NumPy (the browser page): lowered, then substitute's pure-Python path.

The notes the point earns are the same whatever the sizes are spelled: a
name the formula lacks, and at a float point the kinks it sits on, found by
whole-array NumPy over the formula's kink nodes (tools/tensor_kinks.py) and
said as the components say them; an exact point's are substitute's, as it
gives its numbers. The numbers never depend on them.
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang.core import at_plan
from gradlang.core.bindings import _component, _target_index
from gradlang.core.literal_sizes import picks_at
from gradlang.core.point_indices import check_indices, check_ranges, indices_first
from gradlang.core.substitute import substitute
from gradlang.errors import GradlangError, ShapeError, ValueError
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.lower import components, declared_components, literal, lowered
from gradlang.expr.tensor.nodes import Var
from gradlang.lazy import has_numpy, np
from gradlang.remembered import remembered
from gradlang.tools.tensor_kinks import kink_notes
from gradlang.expr.walk import dag_atoms
from gradlang.expr.values import is_condition, is_scalar, elements, from_elements, shape_of, to_symbolic

REMEMBERED_COMPONENTS = 128  # components given, up to which a value's lowering is remembered for the next at


def sizes_from(value: Var, given, sizes: dict) -> None:
    """Learn the sizes of a tensor's shape from the array given to it (a mismatch is a ShapeError)."""
    given_shape = shape_of(given)
    if len(given_shape) != len(value.shape):
        raise ShapeError(f"'{value.name}' is {shapes.describe(value.shape)} but is given {shapes.describe(given_shape)}")
    for size, length in zip(value.shape, given_shape):
        known = sizes.get(size, size)
        if isinstance(known, (int, sp.Integer)) and int(known) != length:
            learnt = " " if size.is_Integer else f" with {size} = {known}, "  # a literal size needs no naming
            raise ShapeError(f"'{value.name}' is {shapes.describe(value.shape)}{learnt}"
                             f"but is given {shapes.describe(given_shape)}")
        sizes[size] = length


def binds_tensor(evaluator, bindings, frame) -> bool:
    """Does an at give a value to a declared tensor or a size? (Then its expression is the tensor engine's.)"""
    for binding in bindings:
        bound = evaluator.lookup(binding.target.name, frame)
        if isinstance(bound, Var) or shapes.is_size(bound):
            return True
    return False


def at(evaluator, value, bindings, frame, inner=None, node=None):
    """`value at bindings` for a formula of the tensor engine (see the module docstring).

    `inner`, the expression as written, names the bindings a literal-size formula lacks; `node`, the At
    statement at top level, is given a plan of this run for the next (core/at_plan.py)."""
    sizes, arrays, scalar_bindings = _tensors_given(evaluator, bindings, frame)
    pairs, batch = evaluator._bindings(scalar_bindings, frame)
    check_indices(value, pairs)
    check_ranges(value, pairs, sizes)
    if inner is not None:
        evaluator._check_names(value, inner, _not_sizes(evaluator, bindings, frame), frame)
    floats = _whole_array_point(value, arrays, pairs, batch, sizes)
    if floats is not None:
        result = _numbers(value, floats, sizes)
        if node is not None:
            at_plan.learn(evaluator, node, value, floats, _known_sizes(sizes))
        if inner is not None and evaluator.notes is not None:
            evaluator.notes.extend(n for n in kink_notes(value, floats, _known_sizes(sizes)) if n not in evaluator.notes)
        return result
    converted, pairs = _lowered_point(value, arrays, pairs, sizes)
    return substitute(converted, pairs, batch, evaluator.notes, written_out=True)


def at_each(evaluator, values: list, bindings, frame) -> list:
    """`[a, b, …] at bindings` (grad by a list of tensors): each entry at the same point.

    At a float point the entries are numbers of one NumPy function (numbers.evaluate_each), so the
    forward pass they share is computed once and the arrays are bound once; else each entry as `at`."""
    sizes, arrays, scalar_bindings = _tensors_given(evaluator, bindings, frame)
    pairs, batch = evaluator._bindings(scalar_bindings, frame)
    points = []
    for value in values:
        check_indices(value, pairs)
        check_ranges(value, pairs, sizes)
        points.append(_whole_array_point(value, arrays, pairs, batch, sizes))
    if not values or any(point is None for point in points):
        return [at(evaluator, value, bindings, frame) for value in values]
    from gradlang.expr.tensor import numbers  # NumPy's: a page without NumPy never comes here

    floats = {symbol: number for point in points for symbol, number in point.items()}
    arrays = numbers.evaluate_each(values, floats, _known_sizes(sizes))
    return [_result(value, numbers.as_value(array)) for value, array in zip(values, arrays)]


def _tensors_given(evaluator, bindings, frame) -> tuple:
    """(sizes learnt, {tensor: array given}, the bindings of scalars and of single components)."""
    sizes, arrays, scalar_bindings = {}, {}, []
    for binding in bindings:
        target = binding.target
        bound = evaluator.lookup(target.name, frame)
        if target.indices and isinstance(bound, Var) and bound in arrays:  # x = [1, 2], x[0] = 7: x[0] is 7
            try:
                arrays[bound] = _with_component(bound, target, arrays[bound], evaluator.evaluate(binding.value, frame), sizes)
            except GradlangError as error:
                raise error.located(binding.span)
        elif not (isinstance(bound, Var) or shapes.is_size(bound)) or (target.indices and literal(bound)):
            scalar_bindings.append(binding)  # a component of v: R^2 (v[0] = 1) is a scalar symbol of it
        else:
            try:
                _bind_tensor(bound, target, evaluator.evaluate(binding.value, frame), sizes, arrays)
            except (ShapeError, ValueError) as error:
                raise error.located(binding.span)
    return sizes, arrays, scalar_bindings


def _with_component(var: Var, target, array, number, sizes: dict):
    """The array given to a tensor with one component given anew by a later binding of the same at
    (x = [1, 2], x[0] = 7), at a literal size or one the array gave."""
    indices = [_target_index(t) for t in target.indices]
    _component(declared_components(var, sizes), target.name, indices)  # the index checks of any component binding
    if not is_scalar(number):
        raise ValueError(f"'{target.name}[…]' is one component: give it one number")
    items = list(elements(to_symbolic(array)))
    columns = shape_of(array)[1] if len(indices) == 2 else 1
    items[indices[0] * columns + (indices[1] if len(indices) == 2 else 0)] = number
    return from_elements(shape_of(array), items)


def _numbers(value, floats: dict, sizes: dict):
    """The formula at float arrays by whole-array NumPy; a condition (all(x > 0)) is true or false."""
    from gradlang.expr.tensor import numbers  # NumPy's: a page without NumPy never comes here

    return _result(value, numbers.as_value(numbers.evaluate(value, floats, _known_sizes(sizes))))


def _result(value, result):
    """A condition's number (all(x > 0)) as true or false; any other as it is."""
    if is_condition(value) and isinstance(result, sp.Float):
        return sp.true if result else sp.false
    return result


def _lowered_point(value, arrays: dict, pairs: list, sizes: dict) -> tuple:
    """(the value as its components, the point as (component symbol, number) pairs)."""
    value, pairs = indices_first(picks_at(value, arrays, pairs, sizes), pairs)
    if _given_count(arrays) > REMEMBERED_COMPONENTS:  # a large lowering is not kept alive (remembered.py)
        converted = _each_component(value, sizes)
    else:
        converted = remembered("components", value, lambda v: _each_component(v, sizes), _sizes_key(sizes))
    for var, given in arrays.items():
        pairs.extend(zip(elements(declared_components(var, sizes)), elements(given)))
    return converted, pairs


def _not_sizes(evaluator, bindings, frame) -> list:
    """The bindings of an at but those of sizes (`at n = 3`): a size is no symbol of the formula, yet it is used."""
    return [b for b in bindings if not shapes.is_size(evaluator.lookup(b.target.name, frame))]


def _given_count(arrays: dict) -> int:
    """The components the point gives to tensors."""
    return sum(math.prod(shape_of(given)) for given in arrays.values())


def _each_component(value, sizes: dict):
    """components(value, sizes); of a list (grad(a*b, [a, b]), [1, 2], a value by components), of each entry."""
    if isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        return from_elements(shape_of(value), [components(e, sizes) for e in elements(value)])
    return components(value, sizes)


def _whole_array_point(value, arrays: dict, pairs: list, batch: list, sizes: dict):
    """The point as floats when whole-array NumPy evaluates the formula there, else None.

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
        if not _real_number(number):
            return None
        point[symbol] = float(number)
    known = _known_sizes(sizes)
    return point if all(s in point or s in known for s in remembered("symbols", value, _symbols)) else None


def _symbols(value) -> frozenset:
    """The symbols of a formula, by a DAG walk (one visit a node), once per value (remembered.py)."""
    return frozenset(s for atom in dag_atoms(value, sp.Symbol) for s in atom.free_symbols)


def _real_number(number) -> bool:
    """A real number, a float can stand for (a Float or Rational answers at once; is_comparable evaluates)."""
    if isinstance(number, (sp.Float, sp.Rational)):
        return True
    return isinstance(number, sp.Expr) and number.is_number and number.is_comparable


def _sizes_key(sizes: dict) -> tuple:
    """The sizes of a point as plain data, in the order of their names: a key of what depends on them."""
    return tuple(sorted((str(size), int(n)) for size, n in sizes.items()))


def _known_sizes(sizes: dict) -> dict:
    return {size: n for size, n in sizes.items() if isinstance(size, sp.Symbol)}


def _bind_tensor(bound, target, given, sizes: dict, arrays: dict) -> None:
    given = _constant_array(given)
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


def _constant_array(given):
    """What a binding gives a tensor: a constant of the formula at literal sizes (ones(3), 2*eye(2)) as the
    array of numbers it stands for, exact where it is exact; anything else as it is."""
    if literal(given) and not any(isinstance(s, Var) for s in given.free_symbols):
        return lowered(given)
    return given
