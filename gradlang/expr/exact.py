"""Exact arithmetic within bounds: integers and rationals may not grow without end.

Python integers grow until memory runs out, and SymPy evaluates integer powers
and products eagerly, so `3^(3^(3^(3^7)))` or `prod([a, a, …])` with a 30 000
digit `a` would never finish. Every exact power, product and matrix product
the evaluator or a substitution builds goes through these checks, which
estimate the size from the operands' bit lengths and raise a LimitError
before the number is computed. A power that involves a float and a huge
exponent (`2.0^(10^30000)`) is computed in IEEE double precision instead,
as NumPy would: inf, 0 or 1 at once, rather than SymPy's arbitrary-precision
exponent.
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang import limits
from gradlang.errors import LimitError, ValueError
from gradlang.expr.walk import tree_size

HUGE_EXPONENT = 2**20  # above this, a float power is computed in IEEE (SymPy's exponentiation is too slow)
SHARED_BASE = 2_000  # tree nodes above which a power is built as it stands (SymPy's Pow asks assumptions of the tree)


def bits(value) -> int:
    """The bit length of an exact number (0 for anything else)."""
    if isinstance(value, sp.Rational):
        return max(abs(value.p).bit_length(), abs(value.q).bit_length())
    return 0


def _too_big(size: int, what: str = "an exact number"):
    return LimitError(
        f"{what} of about {size} bits, above the limit of {limits.MAX_INTEGER_BITS}; "
        "write a float (2.0 rather than 2) for an approximation"
    )


def checked(value):
    """Bound the size of exact integers and rationals, which Python would grow without end."""
    size = bits(value)
    if size > limits.MAX_INTEGER_BITS:
        raise _too_big(size)
    return value


def power(base, exponent):
    if _is_real_number(base) and _is_real_number(exponent) and (_inexact(base) or _inexact(exponent)):
        ieee = _ieee_power(base, exponent)
        if abs(exponent) > HUGE_EXPONENT or ieee.is_infinite:  # 1e308^pi overflows float64: inf, as NumPy
            return ieee
    if base.is_Rational and exponent.is_Rational:
        magnitude = max(math.log2(abs(base.p) or 1), math.log2(base.q))
        if magnitude > 0 and abs(exponent) * magnitude > limits.MAX_INTEGER_BITS:
            raise LimitError(
                f"this exact power would need more than {limits.MAX_INTEGER_BITS} bits; "
                "write the base as a float (2.0 rather than 2) for an approximation"
            )
        if base.is_zero and exponent.is_negative:
            raise ValueError("division by zero (0 to a negative power)")
    if (base.is_Float or exponent.is_Float) and base.is_zero and exponent.is_extended_negative:  # cheap test first: is_zero of a shared sum walks its tree
        return sp.oo  # IEEE 754: 0.0^(-1) is inf (SymPy would give complex infinity)
    if not base.is_Atom and tree_size(base, cap=SHARED_BASE + 1) > SHARED_BASE:
        return sp.Pow(base, exponent, evaluate=False)  # a_k^2 of a self-composition: Add._eval_power walks its tree
    return checked(sp.Pow(base, exponent))


def product(factors: list):
    """sp.Mul of the factors, refused before it is computed when its exact numbers would be too big."""
    check_product_bits(sum(bits(f) for f in factors))
    return float_zero_kept(checked(sp.Mul(*factors)), factors)


def float_zero_kept(result, factors: list):
    """A product that SymPy made the exact 0 from a float zero (0.0*z) is the float 0.0.

    SymPy's Mul takes `0.0*z` to the Integer 0, so `y/(0.0*z)` would be an exact
    division by zero (an error) and `log(0.0*z)` exact `log(0)`, where IEEE and
    `y/0.0` give inf and -inf. A float in a value keeps it floating (LANGUAGE.md §2)."""
    if result is sp.S.Zero and any(isinstance(f, sp.Expr) and f.is_Float for f in factors):
        return sp.Float(0.0)
    return result


def check_product_bits(size: int, what: str = "this product") -> None:
    """A product's exact part has at most the sum of its factors' bit lengths: refuse it early."""
    if size > limits.MAX_INTEGER_BITS:
        raise _too_big(size, f"{what} would be an exact number")


def check_matmul(left_items: list, right_items: list, inner: int) -> None:
    """Each entry of A @ B sums `inner` products of an entry of A and one of B.

    SymPy builds each of those products as an expression (about 40 µs apiece),
    so a product of two 300×300 matrices of symbols, 27 million of them, never
    finished: their count is bounded (limits.MAX_MATMUL_PRODUCTS)."""
    if not left_items or not right_items:
        return
    products = len(left_items) * len(right_items) // max(int(inner), 1)
    if products > limits.MAX_MATMUL_PRODUCTS:
        raise LimitError(f"this matrix product would build {products} products of entries, above the limit of "
                         f"{limits.MAX_MATMUL_PRODUCTS}; give the matrices numbers with `at` to multiply them numerically")
    size = max(map(bits, left_items)) + max(map(bits, right_items)) + int(inner).bit_length()
    check_product_bits(size, "this matrix product")


def check_sizes(items: list) -> None:
    """Every exact number in a statement's value is within the limit (so it can be printed)."""
    from gradlang.expr.walk import dag_atoms

    for item in items:
        checked(item)
    compound = [e for e in items if isinstance(e, sp.Basic) and e.args]  # atoms were checked just now
    for number in dag_atoms(compound, sp.Rational) if compound else ():
        checked(number)


def combine(node, args):
    """Rebuild a node from new arguments, with exact powers and products bounded (and the
    real domain kept, expr/domain.py)."""
    from gradlang.expr.domain import kept

    if isinstance(node, sp.Pow):
        return kept(power, list(args))
    if isinstance(node, sp.Mul):
        return kept(lambda *factors: product(list(factors)), list(args))
    from gradlang.expr.walk import build

    return checked(build(node, args))


def _inexact(value) -> bool:
    """A float, or a number with a float in it (1e3*pi stays a product in SymPy)."""
    return value.is_Float or (not value.is_Atom and value.has(sp.Float))


def _is_real_number(value) -> bool:
    return isinstance(value, sp.Expr) and value.is_number and (value.is_comparable or value in (sp.oo, -sp.oo))


def _as_float(value) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer beyond float64's range
        return math.inf if value > 0 else -math.inf


def _ieee_power(base, exponent):
    """base^exponent in float64, as NumPy computes it (overflow is inf, a non-real result nan)."""
    b, e = _as_float(base), _as_float(exponent)
    if b < 0 and not exponent.is_Integer and not math.isinf(e):
        return sp.nan  # a negative base to a fractional power is not real
    sign = -1.0 if b < 0 and exponent.is_Integer and exponent.p % 2 == 1 else 1.0
    try:
        result = sign * abs(b) ** e
    except OverflowError:
        result = sign * math.inf
    except ZeroDivisionError:  # 0.0 to a negative power
        result = sign * math.inf
    return to_sympy_number(result)


def to_sympy_number(x: float) -> sp.Expr:
    """A float64 (a Python or NumPy float) as a SymPy number, inf and nan included."""
    x = float(x)
    if math.isnan(x):
        return sp.nan
    if math.isinf(x):
        return sp.oo if x > 0 else -sp.oo
    return sp.Float(x)
