"""Components and `at` for the tensor engine: a formula at literal sizes, as the component engine holds it.

`components(e, sizes)` rebuilds a tensor formula with every declared tensor
as its array of component symbols (`x[0]`, `W[0, 1]`, the names a literal
declaration gives) and every operation as the component engine's own
builtin, so the two engines can be compared entry by entry, and so `e at …`
with numbers gives exactly the numbers a literal declaration would.
Sizes come from the `at` itself (`at n = 3`) or from the shapes of the arrays
given to the tensors (`at x = [1, 2, 3]`).
"""

from __future__ import annotations

import sympy as sp

from gradlang import limits
from gradlang.core import builtins
from gradlang.core.literal_sizes import literal, picks_at, symbolic
from gradlang.core.point_indices import check_indices, check_ranges, indices_first
from gradlang.core.services import Services
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.conditions import AllOf, AnyOf
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import relation
from gradlang.expr.functions import MaxShare
from gradlang.expr.tensor import cost
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.nodes import Var
from gradlang.lazy import has_numpy, np
from gradlang.syntax.lowered import written_names
from gradlang.expr.values import is_condition, elements, elementwise, from_elements, real_symbols, shape_of


def components(expr, sizes: dict):
    """The value of a tensor formula at literal sizes, in the component engine's representation.

    Each node's size is checked from its shape before its components are built
    (eye(n) at n = 100000 would build 10^10 of them before any later check)."""
    dag = build_dag([expr])
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        _check_count(node, sizes)
        built.append(_component(node, [built[k] for k in kids], sizes))
    return built[dag.roots[0]]


def literal_shape(shape: tuple, sizes: dict) -> tuple:
    """A shape with every size replaced by its value; a size without one is a ValueError."""
    result = []
    for size in shape:
        value = sizes.get(size, size)
        if not isinstance(value, (int, sp.Integer)):
            raise ValueError(f"the size '{size}' needs a value: add `{size} = 3` (or give an array) to the at")
        result.append(int(value))
    count = 1
    for n in result:
        count *= n
    if count > limits.MAX_ELEMENTS:
        raise LimitError(f"{count} components is above the limit of {limits.MAX_ELEMENTS}")
    return tuple(result)


def _check_count(node, sizes: dict) -> None:
    shape = t.shape_of(node) if isinstance(node, (Var, t.TensorOp)) else ()
    total = cost.count(shape, sizes) or 0
    if total > limits.MAX_ELEMENTS:
        raise LimitError(f"{cost.dimensions(shape, sizes)} is {total} components, above the limit of {limits.MAX_ELEMENTS}")


def declared_components(var: Var, sizes: dict):
    """The component symbols of a tensor at literal sizes, named as a literal declaration names them."""
    shape = literal_shape(var.shape, sizes)
    if len(shape) == 1:
        names = [f"{var.name}[{i}]" for i in range(shape[0])]
    else:
        names = [f"{var.name}[{i}, {j}]" for i in range(shape[0]) for j in range(shape[1])]
    return from_elements(shape, real_symbols(names))


def _component(node, args: list, sizes: dict):
    if isinstance(node, Var):
        return declared_components(node, sizes)
    if shapes.is_size(node):
        return sp.Integer(literal_shape((node,), sizes)[0])
    if not node.args:
        return node
    build = _BUILD.get(type(node))
    if build is not None:
        return build(node, args, sizes)
    if not isinstance(node, sp.Basic) or isinstance(node, sp.Tuple):
        return node
    if isinstance(node, sp.core.relational.Relational):  # built as the evaluator builds a comparison
        return elementwise(lambda a, b: relation(node.func, a, b), *args)
    return elementwise(lambda *parts: node.func(*parts), *args)


def _builtin(name: str, *args):
    """The component engine's builtin `name` applied to component values."""
    entry = builtins.lookup(name)
    if entry is None:
        raise ShapeError(f"{name} has no form at literal sizes")
    call = builtins.Call(name, list(args), [None] * len(args), None, Services([], []))
    return entry.function(call)


def _matmul(node, args, sizes):
    from gradlang.core.evaluate import _matmul as component_matmul

    return component_matmul(*args)


def _outer(node, args, sizes):
    a, b = (elements(v) for v in args)
    return from_elements((len(a), len(b)), [x * y for x in a for y in b])


class FreeIndex(ValueError):
    """Components of a value that picks one by an index left symbolic (x[k], onehot(k, 3)): there are none
    until the index is given, so an `at` at literal sizes hands such a value to the tensor engine."""


def _free(index):
    return FreeIndex(f"the index '{index}' needs a number to take components: add it to the at")


def _entry(node, args, sizes):
    base, *indices = args
    positions = []
    for index in indices:
        if not isinstance(index, sp.Integer):
            raise _free(index)
        positions.append(int(index))
    return base[tuple(positions)] if len(positions) == 2 else base[positions[0]]


def _onehot(node, args, sizes):
    k, n = args
    if not isinstance(k, sp.Integer):
        raise _free(k)
    if not 0 <= int(k) < int(n):
        raise ShapeError(f"index {k} is out of range for length {n}")
    return from_elements((int(n),), [sp.S.One if i == int(k) else sp.S.Zero for i in range(int(n))])


def _diag(node, args, sizes):
    if len(shape_of(args[0])) == 2:
        return _builtin("diag", args[0])  # a matrix's diagonal
    items = elements(args[0])
    n = len(items)
    return from_elements((n, n), [items[i] if i == j else sp.S.Zero for i in range(n) for j in range(n)])


def _filled(node, args, sizes, value=sp.S.One):
    shape = tuple(int(a) for a in args)
    count = 1
    for n in shape:
        count *= n
    return from_elements(shape, [value] * count)


def _eye(node, args, sizes):
    n = int(args[0])
    return from_elements((n, n), [sp.S.One if i == j else sp.S.Zero for i in range(n) for j in range(n)])


def _shares(node, args, sizes):
    items = elements(args[0])
    return from_elements(shape_of(args[0]), [MaxShare(sp.Integer(k), *items) for k in range(len(items))])


MAX_EXACT_DET = 8  # Laplace expansion over column subsets: n 2^n products


def _laplace(matrix, rows: tuple, columns: tuple, memo: dict):
    """det of the minor on these rows and columns, expanded along its first row (memoised by minor).

    SymPy's own det and inv test entries for zero, which with exp and log in them can take minutes;
    the expansion does no test and no simplification, so an exact point costs what the formula does."""
    if not rows:
        return sp.S.One
    key = (rows, columns)
    if key not in memo:
        first, rest = rows[0], rows[1:]
        memo[key] = sp.Add(*[(-1) ** k * matrix[first, c] * _laplace(matrix, rest, columns[:k] + columns[k + 1:], memo)
                             for k, c in enumerate(columns)])
    return memo[key]


def _det(node, args, sizes):
    matrix = args[0]
    n = matrix.shape[0]
    if n > MAX_EXACT_DET:
        raise LimitError(f"det and inv take components up to {MAX_EXACT_DET}×{MAX_EXACT_DET}; give float arrays")
    return _laplace(matrix, tuple(range(n)), tuple(range(n)), {})


def _inverse(node, args, sizes):
    """adj(A)/det(A), the cofactors by the same expansion."""
    matrix, n = args[0], args[0].shape[0]
    determinant = _det(node, args, sizes)
    if determinant == 0:
        raise ValueError("a singular matrix has no inverse")
    memo: dict = {}
    everything = tuple(range(n))

    def cofactor(i, j):
        rows, columns = everything[:j] + everything[j + 1:], everything[:i] + everything[i + 1:]
        return (-1) ** (i + j) * _laplace(matrix, rows, columns, memo)

    return sp.ImmutableMatrix(n, n, [cofactor(i, j) / determinant for i in range(n) for j in range(n)])


def _lines(matrix, axis: int) -> list:
    """The vectors an axis runs along: each column (axis 0) or each row (axis 1), as component vectors."""
    m, n = shape_of(matrix)
    items = elements(matrix)
    if axis == 1:
        return [from_elements((n,), items[i * n : (i + 1) * n]) for i in range(m)]
    return [from_elements((m,), items[j::n]) for j in range(n)]


def _along(name: str):
    """sum, logsumexp or softmax along an axis: the component engine's builtin on each line, put back."""

    def build(node, args, sizes):
        matrix, axis = args[0], int(node.args[1])
        parts = [_builtin(name, line) for line in _lines(matrix, axis)]
        if name != "softmax":
            return from_elements((len(parts),), parts)
        rows = [elements(part) for part in parts]
        if axis == 0:
            rows = [list(row) for row in zip(*rows)]
        return from_elements(shape_of(matrix), [item for row in rows for item in row])

    return build


def _shares_along(node, args, sizes):
    """max_shares(M, axis): in each line, 1/t on the t entries attaining its maximum, as MaxShare says."""
    matrix, axis = args[0], int(node.args[1])
    lines = [elements(line) for line in _lines(matrix, axis)]
    shares = [[MaxShare(sp.Integer(k), *items) for k in range(len(items))] for items in lines]
    if axis == 0:
        shares = [list(row) for row in zip(*shares)]
    return from_elements(shape_of(matrix), [item for row in shares for item in row])


def _line(node, args, sizes):
    """M[i] (a Row) or a Column: one line of the component matrix."""
    matrix, index = args
    if not isinstance(index, sp.Integer):
        raise _free(index)
    return _lines(matrix, 1 if isinstance(node, t.Row) else 0)[int(index)]


_BUILD = {
    t.SumAxis: _along("sum"),
    t.LogSumExpAxis: _along("logsumexp"),
    t.SoftmaxAxis: _along("softmax"),
    t.MaxAxis: _along("max"),
    t.MaxSharesAxis: _shares_along,
    t.Row: _line,
    t.Column: _line,
    t.MatMul: _matmul,
    t.Dot: _matmul,
    t.Outer: _outer,
    t.Transpose: lambda node, args, sizes: _builtin("transpose", args[0]),
    t.Total: lambda node, args, sizes: _builtin("sum", args[0]),
    t.ProdOf: lambda node, args, sizes: _builtin("prod", args[0]),
    t.NormOf: lambda node, args, sizes: _builtin("norm", args[0]),
    t.SoftmaxOf: lambda node, args, sizes: _builtin("softmax", args[0]),
    t.LogSumExpOf: lambda node, args, sizes: _builtin("logsumexp", args[0]),
    t.MaxOf: lambda node, args, sizes: _builtin("max", args[0]),
    t.MaxShares: _shares,
    t.ArgMax: lambda node, args, sizes: _builtin("argmax", args[0]),
    t.ArgMin: lambda node, args, sizes: _builtin("argmin", args[0]),
    t.Trace: lambda node, args, sizes: args[0].trace(),  # SymPy's own, where the component engine has none
    t.Det: _det,
    t.LogDet: lambda node, args, sizes: sp.log(_det(node, args, sizes)),  # log det(A): the same expansion
    t.Inv: _inverse,
    t.Entry: _entry,
    t.OneHot: _onehot,
    t.Literal: lambda node, args, sizes: from_elements(tuple(int(n) for n in node.shape), list(args[2:])),
    t.Diag: _diag,
    t.Eye: _eye,
    t.Ones: _filled,
    t.Zeros: lambda node, args, sizes: _filled(node, args, sizes, sp.S.Zero),
    AllOf: lambda node, args, sizes: AllOf(*elements(args[0])),  # one condition over the components, not one each
    AnyOf: lambda node, args, sizes: AnyOf(*elements(args[0])),
}


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
