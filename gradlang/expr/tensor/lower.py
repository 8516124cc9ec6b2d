"""The view of a tensor formula at literal sizes as its components: `lower`.

A declaration binds one tensor symbol whatever its sizes (section 3a), so
`W: R^(2,3)` gives the formula `W: R^(m,n)` gives. Its components are a view
of that one value, never a second evaluation of the statement:
`components(e, sizes)` rebuilds a tensor formula with every declared tensor
as its array of component symbols (`x[0]`, `W[0, 1]`, the names a literal
declaration gives) and every operation as the component function of
expr/component_*.py, node by node (`_BUILD`). `lowered(value)` is that view
of a value at literal sizes; `literal`, `symbolic` and `involves` say which
values have it. Sizes come from the declaration, or from a point
(`at n = 3`, or the shape of the array given to x).

It sits below derive/ and core/: the scalar engine (derive/dag) and `at`
(core/at.py) read it.
"""

from __future__ import annotations

import itertools

import sympy as sp

from gradlang import limits
from gradlang.errors import FreeIndex, LimitError, ShapeError, ValueError  # noqa: F401  (FreeIndex: lower.FreeIndex)
from gradlang.expr import exact, primitives
from gradlang.expr import component_linalg as linalg
from gradlang.expr import component_vectors as vectors
from gradlang.expr.component_axes import along, check_row_arguments, rows_of, softmax_line
from gradlang.expr.conditions import AllOf, AnyOf
from gradlang.expr.functions import MaxShare
from gradlang.expr.graph import build_dag
from gradlang.expr.tensor import axes_components, cost, joins, products
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor import shapes
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor.nodes import TensorOp, Var
from gradlang.expr.values import elements, elementwise, from_elements, real_symbols, shape_of, to_symbolic
from gradlang.expr.walk import relation

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

    Such a value has no components until a point gives its sizes, so `e at …` takes its sizes from the
    point, never the component engine's reading of x as one scalar given a list."""
    return _flags(value)[1]


def holds_components(value) -> bool:
    """True when a value holds a component symbol such as x[0] (a lowered value, or one written by components)."""
    return _flags(value)[2]


def lowered(value):
    """A value at literal sizes as the component engine holds it (each entry a scalar); others as they are."""
    if isinstance(value, (sp.NDimArray, sp.MatrixBase)):
        if not any(literal(e) for e in elements(value)):
            return value
        return from_elements(tuple(value.shape), [lowered(e) for e in elements(value)])
    if isinstance(value, TensorList):  # grad(L, [W, b]): each entry's components
        return TensorList(*(lowered(e) for e in value.entries))
    return components(value, {}) if literal(value) else value


def _flags(value) -> tuple:
    """(involves a tensor, has a symbolic size, has a component symbol such as x[0]), cached per node by identity (linear in the DAG).

    Two equal expressions built apart would be compared by SymPy as trees,
    once per path to each shared node, so the cache is keyed by id."""
    entry = _INVOLVED.get(id(value))
    if entry is not None and entry[0] is value:  # asked before: several times a statement, a statement run again
        return entry[1:]
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
        value = shapes.valued(size, sizes)
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
    shapes.check_valued(shape, sizes)
    total = cost.count(shape, sizes) or 0
    if total > limits.MAX_ELEMENTS:
        raise LimitError(f"{cost.dimensions(shape, sizes)} is {total} components, above the limit of {limits.MAX_ELEMENTS}")


def declared_components(var: Var, sizes: dict):
    """The component symbols of a tensor at literal sizes, named as a literal declaration names them."""
    shape = literal_shape(var.shape, sizes)
    names = [f"{var.name}[{', '.join(map(str, index))}]" for index in itertools.product(*map(range, shape))]
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


def _reduced(name: str):
    """norm, logsumexp or max of all components: the primitive's own SymPy function, as its builtin applies it.

    Looked up at the call, not when the table is built: the records load on first use (issue #41)."""
    return lambda node, args, sizes: primitives.lookup(name).build(*elements(to_symbolic(args[0])))


def _max_of(node, args, sizes):
    """max of the components; of negated ones, -min of them: the tensor engine writes min(x) as -max(-x),
    the component engine as min(x[0], …), whose name its notes say (a tie of min(x[0], x[1], x[2]))."""
    items = elements(to_symbolic(args[0]))
    if all(isinstance(e, sp.Mul) and e.args[0] is sp.S.NegativeOne for e in items):
        return -primitives.lookup("min").build(*[-e for e in items])
    return primitives.lookup("max").build(*items)


def _softmax(node, args, sizes):
    """softmax of a vector (or each row of a matrix), each component holding its whole row: bounded."""
    value = to_symbolic(args[0])
    check_row_arguments(shape_of(value))
    return rows_of(value, "softmax", softmax_line)


def _transpose(node, args, sizes):
    value = to_symbolic(args[0])
    return value.T if isinstance(value, sp.MatrixBase) else value


def _matmul(node, args, sizes):
    return linalg.matmul(*args)


def _outer(node, args, sizes):
    a, b = (elements(v) for v in args)
    return from_elements((len(a), len(b)), [x * y for x in a for y in b])




def _free(index):
    return FreeIndex(f"the index '{index}' needs a number to take components: add it to the at")


def _entry(node, args, sizes):
    base, *indices = args
    positions = []
    for index in indices:
        if not isinstance(index, sp.Integer):
            raise _free(index)
        positions.append(int(index))
    return base[tuple(positions)] if len(positions) > 1 else base[positions[0]]


def _onehot(node, args, sizes):
    """e_k; of an index tensor k, one e_k per entry along a new last axis (section 3b)."""
    k, n = args
    indices = elements(k) if isinstance(k, (sp.NDimArray, sp.MatrixBase)) else [k]
    entries = []
    for index in indices:
        if not isinstance(index, sp.Integer):
            raise _free(k)
        if not 0 <= int(index) < int(n):
            raise ShapeError(f"index {index} is out of range for length {n}")
        entries += [sp.S.One if i == int(index) else sp.S.Zero for i in range(int(n))]
    return from_elements(tuple(int(s) for s in shape_of(k)) + (int(n),), entries)


def _diag(node, args, sizes):
    if len(shape_of(args[0])) == 2:
        return linalg.diag(args[0])  # a matrix's diagonal
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
    """Of numbers, the component engine's det (exact elimination, NumPy's LU): det(2*eye(100)) is 2^100 at
    any size; of symbols, the expansion below."""
    matrix = args[0]
    n = matrix.shape[0]
    if linalg.numeric_kind(elements(matrix)) != "symbolic":
        return linalg.det(matrix)
    if n > MAX_EXACT_DET:
        raise LimitError(f"det and inv take components up to {MAX_EXACT_DET}×{MAX_EXACT_DET}; give float arrays")
    return _laplace(matrix, tuple(range(n)), tuple(range(n)), {})


def _inverse(node, args, sizes):
    """Of numbers, the component engine's inverse; of symbols, adj(A)/det(A), the cofactors by the same
    expansion."""
    matrix, n = args[0], args[0].shape[0]
    if linalg.numeric_kind(elements(matrix)) != "symbolic":
        return linalg.inv(matrix)
    determinant = _det(node, args, sizes)
    if determinant == 0:
        raise ValueError("a singular matrix has no inverse")
    memo: dict = {}
    everything = tuple(range(n))

    def cofactor(i, j):
        rows, columns = everything[:j] + everything[j + 1:], everything[:i] + everything[i + 1:]
        return (-1) ** (i + j) * _laplace(matrix, rows, columns, memo)

    return sp.ImmutableMatrix(n, n, [cofactor(i, j) / determinant for i in range(n) for j in range(n)])


def _cofactors(node, args, sizes):
    """det(A) A⁻ᵀ as its components: each entry's signed minor by the same expansion, no division by det(A)."""
    matrix, n = args[0], args[0].shape[0]
    if n > MAX_EXACT_DET:
        raise LimitError(f"det and inv take components up to {MAX_EXACT_DET}×{MAX_EXACT_DET}; give float arrays")
    memo: dict = {}
    everything = tuple(range(n))
    return sp.ImmutableMatrix(n, n, [(-1) ** (i + j) * _laplace(matrix, everything[:i] + everything[i + 1:],
                                                                 everything[:j] + everything[j + 1:], memo)
                                     for i in range(n) for j in range(n)])


def _lines(matrix, axis: int) -> list:
    """The vectors an axis runs along: each column (axis 0) or each row (axis 1), as component vectors."""
    m, n = shape_of(matrix)
    items = elements(matrix)
    if axis == 1:
        return [from_elements((n,), items[i * n : (i + 1) * n]) for i in range(m)]
    return [from_elements((m,), items[j::n]) for j in range(n)]


def _along(name: str):
    """sum, logsumexp, max or softmax along an axis: expr/component_axes.py's, each line put back."""
    return lambda node, args, sizes: along(name, args[0], int(node.args[1]))


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
    t.Transpose: _transpose,
    t.Total: lambda node, args, sizes: sp.Add(*elements(to_symbolic(args[0]))),
    t.ProdOf: lambda node, args, sizes: exact.product(elements(to_symbolic(args[0]))),
    t.NormOf: _reduced("norm"),
    t.SoftmaxOf: _softmax,
    t.LogSumExpOf: _reduced("logsumexp"),
    t.MaxOf: _max_of,
    t.MaxShares: _shares,
    t.ArgMax: lambda node, args, sizes: vectors.argmax(args[0]),
    t.ArgMin: lambda node, args, sizes: vectors.argmin(args[0]),
    t.Trace: lambda node, args, sizes: args[0].trace(),  # SymPy's own, where the component engine has none
    t.Det: _det,
    t.LogDet: lambda node, args, sizes: sp.log(_det(node, args, sizes)),  # log det(A): the same expansion
    t.Inv: _inverse,
    t.Cofactor: _cofactors,
    t.Entry: _entry,
    t.OneHot: _onehot,
    t.Literal: lambda node, args, sizes: from_elements(tuple(int(n) for n in node.shape), list(args[node.first:])),
    t.Diag: _diag,
    t.Eye: _eye,
    t.Ones: _filled,
    t.Zeros: lambda node, args, sizes: _filled(node, args, sizes, sp.S.Zero),
    AllOf: lambda node, args, sizes: AllOf(*elements(args[0])),  # one condition over the components, not one each
    AnyOf: lambda node, args, sizes: AnyOf(*elements(args[0])),
    **joins.COMPONENTS,
    **axes_components.COMPONENTS,
    **products.COMPONENTS,
}


