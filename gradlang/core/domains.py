"""Warnings for SymPy's rewrites that widen an expression's real domain.

SymPy simplifies as it builds: `sqrt(y)^2` becomes `y` and `exp(log(y))` becomes
`y`. Over the complex numbers that is an identity; over the reals the rewritten
form is also defined where the written one is not (y < 0), so there gradlang
gives a number where NumPy and JAX, evaluating the written form, give nan.
gradlang keeps SymPy's form, which derivations and simplification rely on, and
says so with a warning (docs/decisions.md, "Domain-widening rewrites").
"""

from __future__ import annotations

import sympy as sp


def to_plain(expr) -> str:
    """A short gradlang-like spelling for a warning (the printers live in a higher layer)."""
    return str(expr).replace("**", "^")


def power_note(base, exponent, result) -> str | None:
    """A warning when base^exponent lost the domain of a fractional power in base."""
    if not (isinstance(base, sp.Pow) and isinstance(exponent, sp.Expr)):
        return None
    inner, fraction = base.args
    if fraction.is_integer is not False or inner.is_nonnegative or result.has(base):
        return None
    return _note(f"({to_plain(base)})^{to_plain(exponent)}", result, inner)


def exp_note(argument, result) -> str | None:
    """A warning when exp(log(u)) became u (or a power of u)."""
    logs = [f for f in sp.Mul.make_args(argument) if isinstance(f, sp.log)] if isinstance(argument, sp.Expr) else []
    if not logs or logs[0].args[0].is_positive or result.has(logs[0]):
        return None
    return _note(f"exp({to_plain(argument)})", result, logs[0].args[0])


def _note(written: str, result, inner) -> str:
    return (f"SymPy rewrote {written} as {to_plain(result)}, which is also defined where {to_plain(inner)} < 0; "
            "there gradlang gives a number where NumPy and JAX give nan")
