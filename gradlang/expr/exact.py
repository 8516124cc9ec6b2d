"""Exact arithmetic within bounds: integers and rationals may not grow without end.

Python integers grow until memory runs out, and SymPy evaluates integer powers
eagerly, so `3^(3^(3^(3^7)))` would never finish. Every exact power and product
the evaluator or a substitution builds goes through these checks, which raise a
LimitError before the number is computed.
"""

from __future__ import annotations

import math

import sympy as sp

from gradlang import limits
from gradlang.errors import LimitError, ValueError


def checked(value):
    """Bound the size of exact integers and rationals, which Python would grow without end."""
    if isinstance(value, sp.Rational):
        bits = max(abs(value.p).bit_length(), abs(value.q).bit_length())
        if bits > limits.MAX_INTEGER_BITS:
            raise LimitError(f"an exact number of {bits} bits is above the limit of {limits.MAX_INTEGER_BITS}")
    return value


def power(base, exponent):
    if base.is_Rational and exponent.is_Rational:
        magnitude = max(math.log2(abs(base.p) or 1), math.log2(base.q))
        if magnitude > 0 and abs(exponent) * magnitude > limits.MAX_INTEGER_BITS:
            raise LimitError(
                f"this exact power would need more than {limits.MAX_INTEGER_BITS} bits; "
                "write the base as a float (2.0 rather than 2) for an approximation"
            )
        if base.is_zero and exponent.is_negative:
            raise ValueError("division by zero (0 to a negative power)")
    if base.is_zero and exponent.is_extended_negative and (base.is_Float or exponent.is_Float):
        return sp.oo  # IEEE 754: 0.0^(-1) is inf (SymPy would give complex infinity)
    return checked(sp.Pow(base, exponent))


def combine(node, args):
    """Rebuild a node from new arguments, with exact powers and products bounded."""
    if isinstance(node, sp.Pow):
        return power(*args)
    return checked(node.func(*args))
