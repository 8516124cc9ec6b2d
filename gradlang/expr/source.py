"""gradlang source text of a value: the inverse of the parser on values.

`to_source(v)` reads back to `v`: `Session().eval(to_source(v))` gives `v` again
(after declaring the vectors whose components appear). The printer is SymPy's
StrPrinter with gradlang's spellings: `^` for powers, `stop_gradient(u)`,
`max`/`min` for the reductions, `abs`, `ceil`, `exp(1)` for E, `inf`/`nan` for
the IEEE specials, and Floats as Python's shortest round-trip `repr`, so that
no digit is lost or invented.

It lives with the expressions because every stage names them in messages and
records (explain's notes, kink warnings, plot legends) and may import expr/;
primitives are spelled as their registry records say. The plain output format
(render/plain.py) is this printer plus gradlang's records and the summaries of
large arrays.
"""

from __future__ import annotations

import math

import sympy as sp
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from gradlang import limits
from gradlang.lazy import deferred_module

primitives = deferred_module("gradlang.expr.primitives")  # the records on first use (issue #41)

# How a condition that SymPy has already decided is written in gradlang:
# the constants `true` and `false` (core/builtins.py) read back to it.
TRUE_SOURCE = "true"
FALSE_SOURCE = "false"


def format_float(value: float) -> str:
    """Python's shortest round-trip repr, with gradlang's names for the specials."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


class InStoredOrder:
    """Mixed in first by every printer: a sum or product SymPy cannot order prints in its stored order.

    SymPy's sort keys end in the numbers themselves, so ordering a held nan beside
    a held inf (expr/domain.py's Written: `inf*(y + nan)`, `factor(inf/(y*nan))`)
    compares the two and raises "Invalid NaN comparison". The node that fails is
    printed again, once, with the order "none"; any other failure is raised.
    """

    def _print(self, expr, **kwargs):
        try:
            return super()._print(expr, **kwargs)
        except TypeError:
            if not isinstance(expr, (sp.Add, sp.Mul)) or self._settings.get("order") == "none":
                raise
            saved = self._settings.get("order")
            self._settings["order"] = "none"
            try:
                return super()._print(expr, **kwargs)
            finally:
                self._settings["order"] = saved


def _has_infix_factor(product) -> bool:
    """A factor written infix at the precedence of `*` (the tensor engine's `@`): it needs parentheses."""
    return any(isinstance(f, sp.Function) and precedence(f) <= PRECEDENCE["Mul"] for f in sp.Mul.make_args(product))


class SourcePrinter(InStoredOrder, StrPrinter):
    """StrPrinter speaking gradlang: `^`, builtin names, exact floats.

    With the setting `sg`, a stop is written by the builtin's alias, `sg(u)`: derivations (explain's records
    and the plain format's comments) call a stop so in every format, as pretty and LaTeX write it, and the
    alias reads back as `stop_gradient` does (docs/decisions.md, "Stops in derivations")."""

    _default_settings = {**StrPrinter._default_settings, "sg": False}

    def _print_StopGradient(self, expr):
        return f"{'sg' if self._settings['sg'] else 'stop_gradient'}({self._print(expr.args[0])})"

    def _print_Add(self, expr, order=None):
        # SymPy orders a sum's terms as polynomial monomials, quadratic in their number: a long sum keeps its stored order.
        return super()._print_Add(expr, order="none" if len(expr.args) > limits.MAX_ORDERED_TERMS else order)

    def _print_Pow(self, expr, rational=False):
        prec = precedence(expr)
        if expr.exp is sp.S.Half:
            return f"sqrt({self._print(expr.base)})"
        if -expr.exp is sp.S.Half:
            return f"1/sqrt({self._print(expr.base)})"
        if expr.exp is sp.S.NegativeOne:
            return f"1/{self.parenthesize(expr.base, prec, strict=False)}"
        base = self.parenthesize(expr.base, prec, strict=False)  # (x^2)^y, not x^2^y
        exponent = self.parenthesize(expr.exp, prec, strict=False)
        return f"{base}^{exponent}"

    def _print_Mul(self, expr):
        coefficient, rest = expr.as_coeff_Mul()
        if coefficient.is_negative and _has_infix_factor(rest):
            # SymPy gives a negated product the precedence of a sum, so it would not wrap `A @ x`:
            # -a*A @ x reads back as (-a*A) @ x. The positive product wraps it; the sign goes in front.
            return "-" + self._print(-expr)
        if coefficient is sp.S.One or not coefficient.is_Rational and not coefficient.is_Float:
            return super()._print_Mul(expr)
        if not any(f.is_Add for f in sp.Mul.make_args(rest)):
            return super()._print_Mul(expr)
        return self._print_scaled_sums(coefficient, rest)

    def _print_scaled_sums(self, coefficient, rest) -> str:
        """A number times a product containing sums, written so that reading it back
        never multiplies the number into a single sum first: SymPy would distribute
        it (0.5*(x + 1) -> 0.5*x + 0.5) and the value read back would differ.
        """
        prec = precedence(sp.Mul(sp.Symbol("a"), sp.Symbol("b")))
        factors = sp.Mul.make_args(rest)
        below = [f for f in factors if f.is_Pow and f.exp.as_coeff_Mul()[0] < 0]
        above = [f for f in factors if f not in below]
        above.sort(key=lambda f: f.is_Add)  # a factor that is not a sum goes first
        numerator = "*".join(self.parenthesize(f, prec, strict=False) for f in above)
        denominator = [self.parenthesize(1 / f, prec, strict=False) for f in below]
        sign = "-" if coefficient < 0 else ""
        magnitude = abs(coefficient)
        wrapped = above[0].is_Add
        if magnitude.is_Rational and magnitude.q != 1 and not wrapped:
            denominator.insert(0, str(magnitude.q))
        body = numerator + (_over(denominator) if denominator else "")
        if wrapped and (len(above) > 1 or denominator):  # a sole sum is already in its parentheses
            body = f"({body})"
        if magnitude.is_Float:
            return f"{sign}{self._print(magnitude)}*{body}"
        scale = f"{magnitude.p}*" if magnitude.p != 1 else ""
        tail = f"/{magnitude.q}" if magnitude.q != 1 and wrapped else ""
        return f"{sign}{scale}{body}{tail}"

    def _print_Float(self, expr):
        return format_float(float(expr))

    def _print_Infinity(self, expr):
        return "inf"

    def _print_NegativeInfinity(self, expr):
        return "-inf"

    def _print_NaN(self, expr):
        return "nan"

    def _print_ComplexInfinity(self, expr):
        # Exact division by zero is an error in gradlang; should SymPy still
        # produce zoo, the nearest gradlang value is an undefined number.
        return "nan"

    def _print_Exp1(self, expr):
        return "exp(1)"

    def _print_ImaginaryUnit(self, expr):
        return "sqrt(-1)"

    def _print_Pi(self, expr):
        return "pi"

    def _print_Symbol(self, expr):
        return expr.name

    _print_Dummy = _print_Symbol

    def _print_Function(self, expr):
        """A primitive by its gradlang name and form (from its record); other functions by SymPy's name."""
        record = primitives.by_class(type(expr))
        if record is None:
            return f"{expr.func.__name__}({self.stringify(expr.args, ', ')})"
        return primitives.spell(record, expr, self)

    def _print_Written(self, expr):
        return self._print(expr.args[0])  # kept as the user wrote it (gradlang.expr.domain)

    def _print_Exp(self, expr):
        return f"exp({self._print(expr.args[0])})"

    _print_exp = _print_Exp

    def _print_log(self, expr):
        return f"log({self.stringify(expr.args, ', ')})"

    def _print_Relational(self, expr):
        ops = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
        op = ops[expr.rel_op]
        lhs = self.parenthesize(expr.lhs, precedence(expr), strict=True)
        rhs = self.parenthesize(expr.rhs, precedence(expr), strict=True)
        return f"{lhs} {op} {rhs}"

    def _print_BooleanTrue(self, expr):
        return TRUE_SOURCE

    def _print_BooleanFalse(self, expr):
        return FALSE_SOURCE

    def _print_NDimArray(self, expr):
        if expr.rank() == 0:
            return self._print(expr[()])
        if expr.rank() == 1:
            return "[" + ", ".join(self._print(e) for e in expr) + "]"
        return self._print(sp.ImmutableMatrix(expr.tomatrix()))

    _print_ImmutableDenseNDimArray = _print_NDimArray
    _print_ImmutableSparseNDimArray = _print_NDimArray

    def _print_MatrixBase(self, expr):
        rows = (", ".join(self._print(e) for e in expr.row(i)) for i in range(expr.rows))
        return "[" + ", ".join(f"[{row}]" for row in rows) + "]"

    _print_ImmutableMatrix = _print_MatrixBase
    _print_ImmutableDenseMatrix = _print_MatrixBase
    _print_MutableDenseMatrix = _print_MatrixBase

    def _print_ListAt(self, value):
        """A list of tensors at a point (grad(L, [W, b]) at …): its entries in brackets, as it reads back."""
        return "[" + ", ".join(self._print(e) for e in value) + "]"

    def _print_ndarray(self, array):
        if array.ndim == 0:
            return format_float(float(array))
        return "[" + ", ".join(self._print_ndarray(a) for a in array) + "]"

    def _print_bool(self, value):
        return TRUE_SOURCE if value else FALSE_SOURCE

    _print_bool_ = _print_bool

    def _print_float(self, value):
        return format_float(float(value))

    _print_floating = _print_float


def _over(denominator: list[str]) -> str:
    return "/" + denominator[0] if len(denominator) == 1 else "/(" + "*".join(denominator) + ")"


_PRINTER = SourcePrinter({"order": None})
_DERIVATION = SourcePrinter({"order": None, "sg": True})


def to_source(value, sg: bool = False) -> str:
    """The value as gradlang source (one line); with sg, its stops as a derivation writes them, `sg(u)`."""
    return (_DERIVATION if sg else _PRINTER).doprint(value)


def operation_name(expr) -> str:
    """The operation at the top of a value as gradlang writes it (`@`, `sum`, `softmax`), for messages that
    must never show a SymPy class name; a tensor operation by its own plain spelling."""
    template = getattr(getattr(type(expr), "spelling", None), "plain_template", None)
    if template is None:
        return to_source(expr).split("(")[0]
    if template.startswith("{0}"):
        return template.split("{1}")[0].removeprefix("{0}").strip() or template
    return template.split("(")[0]


__all__ = ["FALSE_SOURCE", "SourcePrinter", "TRUE_SOURCE", "format_float", "operation_name", "to_source"]
