"""Vector-level derivations: a gradient or Jacobian derived once, with the identity a teacher states.

`vector_derivation(request)` tries the identities of identities.py in turn
(log-softmax, logsumexp, softmax's Jacobian, a sum of an elementwise
function, a linear function, a norm, a scaled or squared scalar), each
chained through a named inner map (inner.py). The derivative it states is
instantiated into components and checked against the request's own result
(numerically at two exact points, stops evaluated as the identity); when no
identity applies or the check fails, explain falls back to the scalar
derivations. Names it introduces (s, δ, A) never collide with a builtin or
a name the expression already uses.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr import primitives
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.values import elements, is_scalar, shape_of, to_symbolic
from gradlang.explain.formula import Let, Math, VectorDerivation, VectorLine, formula, math, symbols_of
from gradlang.explain.vector.inner import Inner
from gradlang.explain.vector.lift import whole_name
from gradlang.expr.walk import tree_size

_CORE = {"stop_gradient", "sg", "diff", "grad", "jacobian", "hessian", "unstopped", "blocked", "pi", "e"}
_POINTS = 2          # exact points the stated derivative is checked at
_TOLERANCE = 1e-9
_LARGEST = 3_000     # tree nodes of an expression worth matching against the identities
SHORT = 90           # characters of instantiated components worth stating at a line's end


class Build:
    """What a vector derivation is built with: the variables, the names taken, the lines so far."""

    def __init__(self, request):
        self.request = request
        self.expr = to_symbolic(request.expr)
        self.wrt = to_symbolic(request.wrt) if request.wrt is not None else request.specs[0][0]
        self.xs = elements(self.wrt)
        self.shape = shape_of(self.wrt)
        self.name = whole_name(self.xs) or "x"
        self.taken = _names_in(self.expr) | primitives.names() | _CORE
        self.lets: list = []
        self.lines: list = []
        self.values: dict = {}      # a let symbol → the value it stands for
        self.adjoints: list = []
        self.removes: list = []     # (stop, formula of the term it removes), for the ledger
        self.names: dict = {}       # a stop → the name the derivation gives it
        self.display: dict = {}     # a subexpression → the let name it is shown by

    def fresh(self, *preferred) -> str:
        """The first preferred name not already used; then s₂-style numbering."""
        for name in preferred:
            if name not in self.taken:
                self.taken.add(name)
                return name
        return self.fresh(*[f"{preferred[0]}{k}" for k in range(2, 10)])

    def let(self, name, value_formula, note: str = "") -> None:
        self.lets.append(Let(name, value_formula, note))

    def line(self, lhs, *rhs, rule) -> None:
        rule = formula(rule) if isinstance(rule, str) else tuple(rule)
        self.lines.append(VectorLine(tuple(lhs), tuple(tuple(r) for r in rhs), rule))

    def vector_let(self, preferred: tuple, items: list) -> list:
        """A name for a vector value: its component symbols, remembered for the check."""
        name = self.fresh(*preferred)
        symbols = symbols_of(name, len(items))
        self.values.update(zip(symbols, items))
        self.display.update(zip(items, symbols))
        return symbols

    def scalar_let(self, preferred: tuple, value) -> sp.Symbol:
        symbol = sp.Symbol(self.fresh(*preferred), real=True)
        self.values[symbol] = value
        self.display[value] = symbol
        return symbol

    def variable(self):
        """The variable as one symbol, for formulas: x (a declared vector shows as its name)."""
        return sp.Symbol(self.name, real=True)

    def finish(self, identity: str, result) -> VectorDerivation | None:
        """The derivation, if the stated result equals the request's (else None: fall back)."""
        derivation = VectorDerivation(identity, tuple(self.lets), tuple(self.lines), result, tuple(self.adjoints),
                                      tuple(self.names.items()), tuple(self.display.items()), tuple(self.values.items()),
                                      tuple(self.removes))
        return derivation if agrees(derivation.instantiated(), self.request.result) else None


def _names_in(expr) -> set:
    """Names a derivation must not reuse: every symbol and every vector's base name."""
    names = set()
    for symbol in expr.free_symbols if isinstance(expr, sp.Basic) else ():
        names.add(symbol.name)
        names.add(symbol.name.split("[")[0])
    return names


def _point(symbols, seed: int) -> dict:
    ordered = sorted(symbols, key=lambda s: s.name)
    return {s: sp.Rational(3 + 2 * i + seed, 7 + i + 3 * seed) * (-1) ** (i + seed) for i, s in enumerate(ordered)}


def agrees(stated, expected) -> bool:
    """Equal at _POINTS exact points (stops as the identity), evaluated to 30 digits."""
    a, b = elements(to_symbolic(stated)), elements(to_symbolic(expected))
    if len(a) != len(b):
        return False
    pairs = [(unstopped(u), unstopped(v)) for u, v in zip(a, b)]
    symbols = set().union(*(sp.Tuple(u, v).free_symbols for u, v in pairs))
    for seed in range(_POINTS):
        point = _point(symbols, seed)
        for u, v in pairs:
            x, y = sp.N(u.xreplace(point), 30), sp.N(v.xreplace(point), 30)
            if not (x.is_number and y.is_number) or abs(complex(x) - complex(y)) > _TOLERANCE * (1 + abs(complex(y))):
                return False
    return True


def vector_derivation(request, lessons: bool = False) -> VectorDerivation | None:
    """The vector-form derivation of a grad or jacobian request (or a first diff a scalar identity
    covers), or None: the scalar derivations then. With lessons, only by the identities a gradient by a
    list of scalars keeps (identities.LESSONS)."""
    from gradlang.explain.vector.identities import IDENTITIES, LESSONS, SCALAR_IDENTITIES

    if getattr(request, "whole", None) is not None:
        return None  # a selection of components (grad(e, x)[1]): those are derived one by one
    if request.operation == "diff" and [n for _, n in request.specs] == [1] and is_scalar(to_symbolic(request.expr)):
        identities = SCALAR_IDENTITIES
    elif request.operation in ("grad", "jacobian") and not is_scalar(to_symbolic(request.wrt)):
        identities = LESSONS if lessons else IDENTITIES
    else:
        return None
    if tree_size(elements(to_symbolic(request.expr)), _LARGEST + 1) > _LARGEST:
        return None
    for identity in identities:
        try:
            derived = identity(Build(request))
        except Exception:  # noqa: BLE001 -- any surprise in matching means: no identity, use the scalar path
            derived = None  # (the statement's time limit is a BaseException and still stops it)
        if derived is not None:
            return derived
    return None


def chain_line(build: Build, inner: Inner, g: list, g_formula: tuple, lhs: tuple):
    """Jᵀg in the variable's shape, with the line that states it (none for J = I)."""
    result = inner.chain(g, build.shape)
    if inner.kind in ("identity", "shift"):
        return result
    instantiated = [formula(result)] if len(str(result)) <= SHORT else []
    lhs = formula(f"∇_{build.name}", *_without_nabla(lhs))
    if inner.kind == "linear":
        build.line(lhs, formula("(", *g_formula, ")·", coefficients(inner), "ᵀ"), *instantiated,
                   rule="linear map: ∇_W f(W·a) = ∇ᵥf·aᵀ")
        return result
    gradient = sp.ImmutableDenseNDimArray(list(inner.coefficients), build.shape)
    build.line(lhs, formula(*g_formula, "·", gradient), *instantiated, rule="chain: ∇f(δ) = f'(δ)·∇δ, δ affine")
    return result


def coefficients(inner: Inner):
    """The a of v = W·a: a declared vector by its name, else its components."""
    name = whole_name(list(inner.coefficients))
    return sp.Symbol(name, real=True) if name else sp.ImmutableDenseNDimArray(list(inner.coefficients))


def _without_nabla(lhs) -> tuple:
    """∇ f as f (with its leading space), so that a subscript can be put on the ∇."""
    first = lhs[0]
    if isinstance(first, Math) and first.plain.startswith("∇"):
        return (math(first.plain[1:]),) + tuple(lhs[1:])
    return tuple(lhs)
