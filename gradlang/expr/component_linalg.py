"""Matrix builtins of the language reference, section 6, at the level of components.

`outer`, `diag`, `eye`, `trace`, `det`, `logdet` and `inv` are compositions:
each result is made of the primitives a value already holds (products, sums,
log), so its derivative and its export need no rule of their own. They are
functions of gradlang values (scalars, `ImmutableDenseNDimArray` vectors,
`ImmutableMatrix` matrices) and raise gradlang errors without a place; the
builtins (core/builtins_vectors.py) give them one. The tensor-level engine
can call them as they are.

Which arithmetic computes a determinant or an inverse depends on the entries:
- all floats: NumPy's LU (as `jnp.linalg.det` / `jnp.linalg.inv`), float in,
  float out;
- integers and rationals: SymPy's fraction-free elimination (DomainMatrix),
  bounded by limits.MAX_INTEGER_BITS and limits.MAX_EXACT_MATRIX_ORDER;
- symbols (and exact irrationals such as sqrt(2)): the cofactor formula
  (Berkowitz), up to limits.MAX_SYMBOLIC_MATRIX_ORDER (it has n! terms).
Errors follow `log(-1)`: an exact singular matrix under `inv` and an exact
det(A) <= 0 under `logdet` are ValueErrors; floats follow IEEE (logdet of a
negative float determinant is nan), except that a float matrix NumPy finds
singular under `inv` is refused, as `numpy.linalg.inv` refuses it.
"""

from __future__ import annotations

import math

import sympy as sp
from sympy.matrices import dotprodsimp
from sympy.polys.matrices import DomainMatrix

from gradlang import limits
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.exact import bits, check_matmul, check_product_bits, to_sympy_number
from gradlang.expr.values import check_count, describe_shape, elements, from_elements, shape_of, to_symbolic
from gradlang.lazy import deferred_module, has_numpy, np

primitives = deferred_module("gradlang.expr.primitives")  # the records on first use (issue #41)


def numeric_kind(items) -> str:
    """"float" (numbers, one a float or an IEEE special), "exact" (integers and rationals) or
    "symbolic" (symbols, or exact numbers such as sqrt(2) and pi, whose arithmetic is SymPy's)."""
    if not all(isinstance(e, sp.Expr) and e.is_number for e in items):
        return "symbolic"
    if any(e.has(sp.Float, sp.oo, -sp.oo, sp.nan, sp.zoo) for e in items):
        return "float"
    return "exact" if all(e.is_Rational for e in items) else "symbolic"


def _floats(matrix) -> np.ndarray:
    return np.array([[float(e) for e in matrix.row(i)] for i in range(matrix.rows)], dtype=float)


def _vector(value, name: str) -> list:
    value = to_symbolic(value)
    if len(shape_of(value)) != 1:
        raise ShapeError(f"{name} takes a vector, not {describe_shape(shape_of(value))}")
    return elements(value)


def square(value, name: str) -> sp.ImmutableMatrix:
    """The value as a square matrix, or a ShapeError naming its shape."""
    value = to_symbolic(value)
    shape = shape_of(value)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ShapeError(f"{name} takes a square matrix, not {describe_shape(shape)}")
    return value


# --- building matrices --------------------------------------------------------


def outer(a, b):
    """outer(a, b)[i, j] = a[i]*b[j], as jnp.outer (vectors only: jnp.outer would flatten a matrix)."""
    left, right = _vector(a, "outer"), _vector(b, "outer")
    check_count(len(left) * len(right))
    check_product_bits(max(map(bits, left)) + max(map(bits, right)), "this outer product")
    return from_elements((len(left), len(right)), [x * y for x in left for y in right])


def matmul(a, b):
    """a @ b of vectors and matrices of components: a matrix, a vector (matrix-vector) or a scalar (vector-vector)."""
    a, b = to_symbolic(a), to_symbolic(b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise ShapeError(f"@ needs vectors or matrices, got {describe_shape(sa)} and {describe_shape(sb)}")
    if sa[-1] != sb[0]:
        raise ShapeError(f"@ cannot multiply {describe_shape(sa)} by {describe_shape(sb)}")
    check_matmul(elements(a), elements(b), sb[0])
    left = sp.ImmutableMatrix(1, sa[0], list(a)) if len(sa) == 1 else a
    right = sp.ImmutableMatrix(sb[0], 1, list(b)) if len(sb) == 1 else b
    product = left * right
    if len(sa) == 1 and len(sb) == 1:
        return product[0, 0]
    if len(sa) == 1 or len(sb) == 1:
        return from_elements((product.shape[0] * product.shape[1],), list(product))
    return product


def diag(value):
    """A vector to the diagonal matrix it fills; a square or rectangular matrix to its diagonal (jnp.diag)."""
    value = to_symbolic(value)
    shape = shape_of(value)
    if len(shape) == 1:
        n = shape[0]
        check_count(n * n)
        items = elements(value)
        return from_elements((n, n), [items[i] if i == j else sp.S.Zero for i in range(n) for j in range(n)])
    if len(shape) == 2:
        return from_elements((min(shape),), [value[i, i] for i in range(min(shape))])
    raise ShapeError("diag takes a vector or a matrix, not a scalar")


def eye_size(n, limit: int = limits.MAX_ELEMENTS) -> int:
    """n as the size of eye(n): an exact positive integer whose n×n components are within `limit`."""
    if not (isinstance(n, sp.Expr) and n.is_Integer and n >= 1):
        raise ValueError(f"eye(n) needs n to be a whole number of at least 1, not {n}: gradlang has no empty matrices")
    size = int(n) if n <= limit else limit + 1  # never square a huge literal
    check_count(size * size, limit)
    return size


def eye(n) -> sp.ImmutableMatrix:
    """The n×n identity matrix; n an exact positive integer."""
    return sp.ImmutableMatrix(sp.eye(eye_size(n)))


# --- reading matrices ---------------------------------------------------------------


def trace(value):
    """The sum of the diagonal of a square matrix."""
    matrix = square(value, "trace")
    return sp.Add(*[matrix[i, i] for i in range(matrix.rows)])


def det(value):
    """The determinant: NumPy's LU for floats, exact elimination for exact numbers, cofactors for symbols."""
    matrix = square(value, "det")
    items = elements(matrix)
    kind = numeric_kind(items)
    if kind == "float":
        if not has_numpy():  # the browser page: the pivots' product, as NumPy's LU gives it
            sign, pivots = _pure_lu_pivots(_float_rows(matrix))
            return to_sympy_number(sign * math.prod(pivots))
        with np.errstate(all="ignore"):
            return to_sympy_number(np.linalg.det(_floats(matrix)))
    if kind == "exact":
        _check_exact_size(matrix, items, "det")
        domain_matrix = DomainMatrix.from_Matrix(matrix)  # fraction-free over ZZ or QQ: 80×80 in 0.3 s
        return domain_matrix.domain.to_sympy(domain_matrix.det())
    _check_symbolic_order(matrix, "det")
    with dotprodsimp(False):  # SymPy expands a 2×2 or 3×3 det otherwise: det(inv(A)) took minutes at 2×2
        return matrix.det(method="berkowitz")  # a polynomial in the entries; never expanded (entries may be sums)


def logdet(value):
    """log(det(A)), never forming a float det(A) (slogdet: a large matrix does not overflow); det(A) <= 0
    is a ValueError (section 6)."""
    matrix = square(value, "logdet")
    if numeric_kind(elements(matrix)) == "float":
        return to_sympy_number(log_det(_floats(matrix) if has_numpy() else _float_rows(matrix)))
    d = det(matrix)
    if isinstance(d, sp.Expr) and d.is_number and d.is_comparable and not d.has(sp.Float) and d <= 0:
        raise ValueError(f"logdet needs det(A) > 0, and det(A) is {d}: its log is not a real number")
    return primitives.lookup("log").build(d)


def log_det(array) -> float:
    """log(det(A)) of a float array as NumPy's slogdet computes it (a list of rows in the browser page, by
    the same LU in Python floats); a sign that is not +1 is a ValueError."""
    if isinstance(array, list):
        sign, pivots = _pure_lu_pivots(array)
        sign, logabs = (0.0, -math.inf) if 0.0 in pivots else (sign * math.prod(math.copysign(1.0, p) for p in pivots),
                                                               math.fsum(math.log(abs(p)) for p in pivots))
    else:
        with np.errstate(all="ignore"):
            sign, logabs = np.linalg.slogdet(array)
    if not sign > 0:
        shown = "0" if sign == 0 else "negative" if sign < 0 else "not a number"
        raise ValueError(f"logdet needs det(A) > 0, and det(A) is {shown} here: its log is not a real number")
    return float(logabs)


def _float_rows(matrix) -> list:
    return [[float(e) for e in matrix.row(i)] for i in range(matrix.rows)]


def _pure_lu_pivots(rows: list) -> tuple:
    """(sign of the row swaps, the pivots) of LU with partial pivoting, as LAPACK's getrf, in Python floats."""
    rows, sign, pivots = [list(r) for r in rows], 1.0, []
    n = len(rows)
    for k in range(n):
        best = max(range(k, n), key=lambda i: abs(rows[i][k]))
        if best != k:
            rows[k], rows[best], sign = rows[best], rows[k], -sign
        pivot = rows[k][k]
        pivots.append(pivot)
        for i in range(k + 1, n):
            factor = rows[i][k] / pivot if pivot != 0 else 0.0
            rows[i] = [a - factor * b for a, b in zip(rows[i], rows[k])]
    return sign, pivots


def inv(value):
    """The inverse: NumPy for floats, exact elimination for exact numbers, adjugate/det for symbols."""
    matrix = square(value, "inv")
    items = elements(matrix)
    kind = numeric_kind(items)
    if kind == "float":
        return _float_inverse(matrix)
    if kind == "exact":
        return _exact_inverse(matrix, items)
    _check_symbolic_order(matrix, "inv")
    d = det(matrix)
    if d == 0:
        raise ValueError("inv of a matrix that is singular for every value of its symbols: its determinant is 0")
    with dotprodsimp(False):  # the cofactors are dets of minors: not expanded either (see det)
        adjugate = matrix.adjugate(method="berkowitz")
    return sp.ImmutableMatrix(matrix.rows, matrix.cols, [e / d for e in adjugate])


def _exact_inverse(matrix, items) -> sp.ImmutableMatrix:
    """adj(A)/det(A) in exact integers or rationals, fraction-free (DomainMatrix.inv_den)."""
    _check_exact_size(matrix, items, "inv", factor=2)
    domain_matrix = DomainMatrix.from_Matrix(matrix)
    if domain_matrix.det() == 0:
        raise ValueError("inv of a singular matrix: its determinant is 0")
    numerators, denominator = domain_matrix.inv_den()
    return sp.ImmutableMatrix(numerators.to_Matrix()) / domain_matrix.domain.to_sympy(denominator)


def _float_inverse(matrix) -> sp.ImmutableMatrix:
    """NumPy's inverse; a matrix holding inf or nan gives nan everywhere (IEEE, as jnp.linalg.inv)."""
    floats = _floats(matrix)
    if not np.all(np.isfinite(floats)):
        return from_elements(floats.shape, [sp.nan] * floats.size)
    try:
        with np.errstate(all="ignore"):
            inverse = np.linalg.inv(floats)
    except np.linalg.LinAlgError:
        raise ValueError("inv of a singular matrix (numpy.linalg.inv refuses it too)") from None
    return from_elements(inverse.shape, [to_sympy_number(x) for x in inverse.ravel()])


def _check_exact_size(matrix, items, name: str, factor: int = 1) -> None:
    """An exact determinant has at most n*(bits of the largest entry) + log2(n!) bits: refuse it early,
    and refuse an order whose elimination would take long (a size, so the answer is the same everywhere)."""
    n = matrix.rows
    if n > limits.MAX_EXACT_MATRIX_ORDER:
        raise LimitError(
            f"{name} of a {n}×{n} matrix of exact numbers is above the limit of {limits.MAX_EXACT_MATRIX_ORDER}×"
            f"{limits.MAX_EXACT_MATRIX_ORDER}; write a float in it (2.0 rather than 2) for floating point"
        )
    size = factor * (n * max(map(bits, items)) + n * n.bit_length())
    check_product_bits(size, f"{name} of this matrix")


class TooManyTerms(LimitError):
    """det, logdet or inv of a matrix of symbols above the order whose formula is written out: an `at` at literal
    sizes that gives it floats then takes the tensor formula by whole-array NumPy (core/evaluate.py)."""


def _check_symbolic_order(matrix, name: str) -> None:
    if matrix.rows > limits.MAX_SYMBOLIC_MATRIX_ORDER:
        raise TooManyTerms(
            f"{name} of a {matrix.rows}×{matrix.rows} matrix of symbols (or of exact irrationals such as sqrt(2)) "
            f"would have {matrix.rows}! terms; "
            f"the limit is {limits.MAX_SYMBOLIC_MATRIX_ORDER}×{limits.MAX_SYMBOLIC_MATRIX_ORDER}: "
            f"give the entries numbers first ({name}(A at A = …))"
        )


__all__ = ["outer", "diag", "eye", "trace", "det", "logdet", "log_det", "inv", "square", "numeric_kind"]
