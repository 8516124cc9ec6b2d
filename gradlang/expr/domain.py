"""Keeping the real domain of what the user wrote: SymPy may not rewrite it wider.

SymPy simplifies as it builds, with identities of the complex numbers:
`sqrt(y)^2`, `sqrt(y)*sqrt(y)` and `exp(log(y))` become `y`, `sin(asin(y))`
becomes `y`, `abs(sqrt(y))` becomes `sqrt(abs(y))`. Over the reals each
rewritten form is defined where the written one is not (y < 0, |y| > 1), and
there NumPy and JAX, computing what was written, give nan (issue 12, program 10).

gradlang keeps the form instead: an operation whose operands carry a
restricted function at their top (a fractional power, a log, asin, acos) and
whose SymPy result lost every trace of that restriction is built again with
the restricted piece wrapped in `Written`, a function SymPy cannot see into.
It prints, evaluates and exports as its argument, and its derivative is 1, so
`sqrt(y)^2` reads as written, is nan at y = -4 and its derivative
`sqrt(y)/sqrt(y)` is nan there too, as in JAX (docs/decisions.md). An
operation that loses nothing is built as before, at the cost of a look at the
top two levels of its operands.

The same holding keeps a variable beside an IEEE infinity or nan. A real
SymPy symbol is finite, so SymPy builds `E + (-oo)` as `-oo` and `y*nan` as
`nan`: the variable is gone before any derivative is taken, where JAX's
derivative of `E - inf` is E's. When an operation meets such a constant among
its operands' terms and factors beside a variable and SymPy's result has fewer
terms or factors than it would with the constant held, the constant is held in
`Written` (which keeps an infinity or nan as it is and claims nothing of it),
so `E - inf` keeps E, is -inf (nan where E is inf) and differentiates as E.
A sum or product in which SymPy then cancels held infinities
(`(y + inf) - (z + inf)`, `y*inf*0.0`) gets IEEE's nan added.
"""

from __future__ import annotations

import sympy as sp

from gradlang.errors import ValueError
from gradlang.expr.exact import float_zero_kept
from gradlang.expr.values import elements, elementwise
from gradlang.expr.walk import dag_has, dag_nodes, rebuild
from gradlang.lazy import np


class Written(sp.Function):
    """u as the user wrote it: SymPy's rewrites stop at it (see the module docstring)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if not (isinstance(u, sp.Expr) and u.is_number) or non_finite(u):
            return None  # an infinity or nan stays held: nothing beside it is absorbed
        real = u.is_extended_real
        if real or u is sp.nan:
            return u
        if real is False:
            if u.has(sp.Float):
                return sp.nan  # IEEE: a non-real float value is nan, as NumPy gives
            from gradlang.expr.source import to_source

            raise ValueError(f"{to_source(u)} is not a real number (it is met on the way to the result)")
        return None

    def fdiff(self, argindex=1):
        return sp.S.One

    def _sympystr(self, printer):
        """str() of a value shows the form as written (a held -oo is -oo, not Written(-oo))."""
        return printer._print(self.args[0])

    @property
    def precedence(self):
        """The argument's, so printers parenthesize as they would the argument (a square root is a call)."""
        from sympy.printing.precedence import PRECEDENCE, precedence

        u = self.args[0]
        return PRECEDENCE["Func"] if isinstance(u, sp.Pow) and u.exp is sp.S.Half else precedence(u)

    def _eval_is_extended_real(self):
        return self._claim("is_extended_real")

    def _eval_is_nonnegative(self):
        return self._claim("is_nonnegative")

    def _eval_is_positive(self):
        return self._claim("is_positive")

    def _claim(self, assumption: str):
        """The argument's assumption; none of a held infinity or nan, or SymPy would absorb beside it."""
        u = self.args[0]
        return None if non_finite(u) else getattr(u, assumption)


NON_FINITE = (sp.S.Infinity, sp.S.NegativeInfinity, sp.S.NaN)
_NON_FINITE_IDS = frozenset(map(id, NON_FINITE))  # singletons: compared by identity, as fast as kept() needs


def non_finite(e) -> bool:
    """e is SymPy's oo, -oo or nan."""
    return id(e) in _NON_FINITE_IDS


def kept(build, operands: list):
    """build(*operands), with restricted pieces and the infinities beside a variable held where SymPy would lose them.

    Operands and result are gradlang values (scalars, vectors, matrices)."""
    result = _domain_kept(build, operands)
    if _beside_variable(operands):
        held = [elementwise(_hold_constants, o) for o in operands]
        attempt = _domain_kept(build, held)
        if _width(attempt) > _width(result):  # SymPy absorbed terms or factors into the constant
            result, operands = attempt, held
        elif not _has_variable(result):  # y*inf*0.0 is nan to SymPy: y*nan keeps y for the derivative
            cancelled = _ieee_cancelled(attempt, held)
            if cancelled is not attempt and _has_variable(cancelled):
                return cancelled
    return _ieee_cancelled(result, operands)


def _has_variable(value) -> bool:
    items = [e for e in _items(value) if isinstance(e, sp.Basic)]
    return bool(items) and dag_has(items, sp.Symbol)


def held_if_dropped(function, args: list, result):
    """function(*args) again with the arguments' infinities held, where SymPy's result dropped them all.

    A function sees through a bare infinity SymPy calls positive: sign(a*inf) is
    sign(a), 0 at a = 0 where IEEE's sign(0*inf) is nan. With the infinity held
    (it claims no sign) the result keeps it, and a = 0 gives nan."""
    if not _beside_variable(args) or _has_special(result):
        return result
    attempt = function(*[elementwise(_hold_constants, a) for a in args])
    return attempt if _has_special(attempt) else result


def _has_special(value) -> bool:
    """An infinity or nan anywhere in a value, held or not."""
    items = [e for e in _items(value) if isinstance(e, sp.Basic)]
    return bool(items) and any(non_finite(n) or held_special(n) for n in dag_nodes(items))


def held_special(node) -> bool:
    """A Written infinity or nan: it claims no sign, so SymPy cannot absorb it."""
    return node.func is Written and non_finite(node.args[0])


def _width(value) -> int:
    """How many factors of terms a value's components have, numbers included."""
    return sum(len(sp.Mul.make_args(t)) for e in _items(value) for t in sp.Add.make_args(e))


def _specials(e, held: bool = True) -> list:
    """The infinities and nans among a scalar's terms' factors (held in Written too, if `held`)."""
    if non_finite(e):
        return [e]
    if not isinstance(e, sp.Expr) or e.is_Atom:
        return []
    special = lambda f: non_finite(f) or (held and held_special(f))
    return [f for t in sp.Add.make_args(e) for f in sp.Mul.make_args(t) if special(f)]


def _beside_variable(operands) -> bool:
    """An infinity or nan where SymPy's building may absorb a variable (E + (-oo) is -oo, y*nan is nan)."""
    items = [e for o in operands for e in _items(o)]
    return any(_specials(e, held=False) for e in items) and dag_has(items, sp.Symbol)


def _hold_constants(e):
    """e with its infinities and nans wrapped in Written (once: one already held stays as it is)."""
    if not isinstance(e, sp.Basic):
        return e
    held = {w: w for w in dag_nodes(e) if isinstance(w, Written)}
    return rebuild(e, {**{c: Written(c) for c in NON_FINITE}, **held})


def _ieee_cancelled(result, operands):
    """result + nan where a sum or product cancelled held infinities (inf - inf, inf*0.0 are nan in IEEE).

    Only for a scalar that is SymPy's sum, difference, product or quotient of the
    operands' components (`+`, `-`, `*`, `/`, `sum`, `prod`): a function of a held
    inf may be finite (inf^0 is 1)."""
    if not (isinstance(result, sp.Expr) and not result.is_Matrix):
        return result
    items = [e for o in operands for e in _items(o)]
    held = {f for e in items for f in _specials(e) if isinstance(f, Written)}
    if not held or held <= {n for n in dag_nodes(result) if isinstance(n, Written)}:
        return result  # every held special is still somewhere in the result: nothing cancelled
    sums, products = _sums_and_products(items)
    if result in sums:
        return result + Written(sp.nan)
    if result in products:
        return _variable_factors(items, divided=result is not products[0]) * Written(sp.nan)
    return result


def _sums_and_products(items: list) -> tuple[list, list]:
    """What `+` (and `-`), and `*` (and `/`, for two operands) of the items give: where a held inf or nan can cancel."""
    sums, products = [sp.Add(*items)], [float_zero_kept(sp.Mul(*items), items)]  # y*inf*0.0 as `*` builds it
    if len(items) == 2:
        sums.append(items[0] - items[1])
        products.append(items[0] / items[1])
    return sums, products


def _variable_factors(items: list, divided: bool):
    """The factors of a product that hold a variable, so a cancelled product is y*nan, not nan:
    its derivative by y is nan, as JAX's inf*0.0, where a bare nan's is 0 (`y*inf*0.0`)."""
    factors = [[f for f in sp.Mul.make_args(e) if f.free_symbols] for e in items]
    if divided:
        factors[1] = [1 / f for f in factors[1]]
    return sp.Mul(*[f for group in factors for f in group])


def _domain_kept(build, operands: list):
    """build(*operands), with restricted pieces of the operands held where SymPy would lose them."""
    result = _built(build, operands)
    wanted = _keys(operands)
    if not wanted:
        return result
    lost = _lost(wanted, result)
    if not lost:
        return result
    if NON_REAL in lost:
        return _non_real(operands)
    operands = list(operands)
    for i, operand in enumerate(operands):
        held = _hold(operand, lost)
        if held is operand:
            continue
        operands[i] = held
        attempt = build(*operands)
        if not _lost(lost, attempt):
            return attempt
    return result  # 0*sqrt(y) and the like: nothing to hold on to (a cancellation, docs/decisions.md)


def _built(build, operands: list):
    """build(*operands); unevaluated where SymPy's own evaluation compares a nan and raises.

    `(7 - v[0])^(nan*y - 5.0)`: Pow's evaluation factors the exponent and sorts
    its terms, comparing nan ("Invalid NaN comparison", grammar fuzzer, typed
    seed 409). Unevaluated, the power is computed by NumPy as IEEE says."""
    try:
        return build(*operands)
    except TypeError as error:
        if "NaN" not in str(error):
            raise
        with sp.evaluate(False):
            return build(*operands)


def _non_real(operands):
    """A non-real number that SymPy multiplied away (sqrt(-1)*sqrt(-1) is -1): nan in floats, else an error."""
    items = [e for operand in operands for e in _items(operand)]
    if any(e.has(sp.Float) for e in items):
        return sp.nan
    from gradlang.expr.source import to_source

    number = next(e for e in items if e.has(sp.I))
    raise ValueError(f"{to_source(number)} is not a real number (it is met on the way to the result)")


def _items(value) -> list:
    """The SymPy components of a value (NumPy arrays hold only numbers: none)."""
    if isinstance(value, sp.Expr) and not value.is_Matrix:
        return [value]  # a scalar, the common case: kept() asks for every operation built
    if isinstance(value, np.ndarray):
        return []
    return [e for e in elements(value) if isinstance(e, sp.Expr)]


def _pieces(value) -> list:
    """The factors of the terms of each component: the only places where SymPy's building merges or rewrites."""
    return [f for e in _items(value) if not (e.is_Symbol or e.is_Number) for term in sp.Add.make_args(e) for f in sp.Mul.make_args(term)]


NON_REAL = ("real", sp.I)


def _key(node):
    """The domain a node restricts its argument to, or None: (kind, argument)."""
    if node is sp.I:
        return NON_REAL
    if isinstance(node, Written):
        return _key(node.args[0])
    if isinstance(node, sp.Pow):
        exponent = node.exp
        if exponent.is_Integer or (exponent.is_Float and float(exponent).is_integer()):
            return None
        return None if node.base.is_Number and node.base > 0 else ("nonnegative", node.base)
    if isinstance(node, sp.log):
        return ("nonnegative", node.args[0])
    if isinstance(node, (sp.asin, sp.acos)):
        return ("unit", node.args[0])
    return None


def _keys(operands) -> set:
    return {k for operand in operands for piece in _pieces(operand) if (k := _key(piece)) is not None}


def _lost(wanted: set, result) -> set:
    """The wanted domains of which the result keeps no trace (and that are not already implied)."""
    missing = wanted - _keys([result])
    if missing:
        missing -= {_key(n) for n in dag_nodes(_items(result))}
    return {k for k in missing if not _harmless(k)}


def _harmless(key) -> bool:
    """Losing the restriction changes nothing where the argument is known to be in the domain."""
    kind, argument = key
    if key == NON_REAL:
        return False
    if kind == "nonnegative":
        return bool(argument.is_nonnegative)
    return bool((argument - 1).is_nonpositive and (argument + 1).is_nonnegative)


def _hold(operand, lost: set):
    """The operand with its top-level pieces of a lost domain wrapped in Written."""
    pieces = [p for p in _pieces(operand) if _key(p) in lost and not isinstance(p, Written)]
    if not pieces:
        return operand
    mapping = {p: Written(p) for p in pieces}
    return elementwise(lambda e: rebuild(e, mapping) if isinstance(e, sp.Basic) else e, operand)


def check_real(dag) -> None:
    """A ValueError naming the first exact non-real number among a DAG's nodes (gradlang's exact numbers are real).

    SymPy keeps a non-real number inside a function whose realness it cannot
    decide (`max(2*sqrt(-1), 1)`, a min_share), so asking whether the whole
    result is real misses it; every such number starts at one of a few origins
    (I, a negative base to a fractional power, asin or acos beyond ±1), and the
    message names the largest sum, product or power of numbers around it."""
    holds: list[bool] = []  # the node is or has a non-real origin
    number: list[bool] = []  # no symbol in it (bottom-up: SymPy's is_number walks the tree each time)
    plain: list[bool] = []  # an origin, a real number, or a sum, product or power of such
    found = None
    for node, kids in zip(dag.nodes, dag.children):
        origin = _non_real_origin(node)
        holds.append(origin or any(holds[k] for k in kids))
        number.append(all(number[k] for k in kids) if kids else bool(getattr(node, "is_number", False)))
        arithmetic = isinstance(node, (sp.Add, sp.Mul, sp.Pow)) and all(plain[k] for k in kids)
        plain.append(origin or arithmetic or (number[-1] and not holds[-1]))
        if holds[-1] and plain[-1]:
            found = node
    if found is not None:
        from gradlang.expr.source import to_source

        raise ValueError(f"{to_source(found)} is not a real number (it is met on the way to the result)")


def _non_real_origin(node) -> bool:
    """Where an exact number stops being real: sqrt(-1), (-1)^(1/3), asin(2)."""
    if node is sp.I:
        return True
    if isinstance(node, sp.Pow):
        return node.base.is_Rational and node.base.is_negative and node.exp.is_Rational and not node.exp.is_Integer
    if isinstance(node, (sp.asin, sp.acos)):
        return node.args[0].is_Rational and abs(node.args[0]) > 1
    return False
