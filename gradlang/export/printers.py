"""SymPy code printers for the export targets: one class per framework.

Arithmetic is PythonCodePrinter's; every function is printed as its record
in the registry (gradlang/expr/primitives/) spells it for the target: the
framework's function (`jnp.exp`), or a helper of the module's prelude
(`_max`, `_abs`, ...; see prelude.py) where the framework would differentiate
differently from the language reference (docs/language.md), section 5, so the
exported gradient equals gradlang's. Square roots are powers in SymPy and are
spelled by the sqrt record, never as a bare `sqrt(...)`. Numbers that are constant (pi, sqrt(2)) are printed as floats, so
no framework function is ever called on a plain Python number.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from gradlang.errors import ValueError as GradlangValueError
from gradlang.expr import primitives
from gradlang.expr.domain import Written
from gradlang.expr.source import InStoredOrder, operation_name, to_source
from gradlang.expr.tensor.nodes import Var
from gradlang.expr.walk import dag_nodes

def float_literal(x: float) -> str:
    """A float as Python source: repr, except inf and nan, which are not literals."""
    return repr(x) if x == x and abs(x) != float("inf") else f"float('{x}')"


def stacked(printed: list[str], shape: tuple) -> str:
    """Printed components as one value of `shape`: itself for a scalar, `_stack(…)` (of rows) for arrays."""
    if not shape:
        return printed[0]
    if len(shape) == 1:
        return f"_stack({', '.join(printed)})"
    rows = [printed[i * shape[1] : (i + 1) * shape[1]] for i in range(shape[0])]
    return "_stack(" + ", ".join(f"_stack({', '.join(r)})" for r in rows) + ")"


def _shown(expr) -> str:
    text = to_source(expr)  # gradlang's spelling, never SymPy's or a class name
    return text if len(text) <= 80 else text[:77] + "..."


def _sizes(expr) -> list:
    """The symbolic sizes of the tensors in expr (n, h), in the order first met."""
    found: dict = {}
    for node in dag_nodes([expr]):
        if isinstance(node, Var):
            found.update((str(d), None) for d in node.shape if not isinstance(d, (int, sp.Integer)))
    return list(found)


def refusal(expr, target: str) -> str:
    """Why expr is not exported, in gradlang's words: a symbolic size, or an operation with no spelling."""
    sizes = _sizes(expr)
    if sizes:
        return (f"{_shown(expr)} has the symbolic size{'s' if len(sizes) > 1 else ''} {', '.join(sizes)}: the export "
                "writes arrays of literal sizes, so declare them (as in x: R^3)")
    return f"{_shown(expr)} has no {target} equivalent ({operation_name(expr)} is not an operation gradlang exports)"


class ExportPrinter(InStoredOrder, PythonCodePrinter):
    """Common part: arithmetic from PythonCodePrinter, every primitive as its record spells it."""

    target = "numpy"

    def __init__(self, symbol_names: dict):
        super().__init__({"fully_qualified_modules": False, "strict": False})
        self.symbol_names = symbol_names

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Expr) and expr.is_number and not expr.is_Rational and expr.is_comparable:
            return float_literal(float(expr))
        if isinstance(expr, Written):
            return self._print(expr.args[0])  # kept as the user wrote it (gradlang.expr.domain)
        if isinstance(expr, sp.Function):
            return self._print_primitive(expr)
        return super()._print(expr, **kwargs)

    size_symbols: frozenset = frozenset()  # the arguments that are sizes, read from shapes as Python ints (formula.py)

    def _of_sizes(self, expr) -> bool:
        """A number made of sizes only (√d of `d`): a Python int, no tensor of the framework's."""
        return all(s in self.size_symbols or getattr(s, "is_integer", False) and s.is_positive for s in expr.free_symbols)

    def _print_primitive(self, expr) -> str:
        record = primitives.by_class(type(expr))
        if record is None or not record.export:
            raise GradlangValueError(refusal(expr, self.target))
        return record.export[self.target].call(", ".join(self._print(a) for a in expr.args))

    def _print_Symbol(self, expr):
        if expr in self.symbol_names:
            return self.symbol_names[expr]
        raise GradlangValueError(f"the symbol {expr} has no name in the exported module")

    def emptyPrinter(self, expr):
        """Anything without a printing rule is refused by name, never written as a comment or a bare call."""
        raise GradlangValueError(refusal(expr, self.target))

    _print_Dummy = _print_Symbol

    def _print_Float(self, expr):
        return float_literal(float(expr))

    def _print_NaN(self, expr):
        return float_literal(float("nan"))

    def _print_Infinity(self, expr):
        return float_literal(float("inf"))

    def _print_NegativeInfinity(self, expr):
        return float_literal(float("-inf"))

    def _print_Pow(self, expr, rational=False):
        """Powers by PythonCodePrinter, square roots spelled as the sqrt record says for this target."""
        sqrt = primitives.lookup("sqrt").export[self.target]
        if abs(expr.exp) == sp.S.Half and self.target in ("torch", "tf") and self._of_sizes(expr.base):
            return f"({self._print(expr.base)}) ** {float_literal(float(expr.exp))}"  # torch.sqrt(4) is a TypeError
        if expr.exp == sp.S.Half:
            return sqrt.call(self._print(expr.base))
        if expr.exp == -sp.S.Half:
            return f"1/{sqrt.call(self._print(expr.base))}"
        return self._hprint_Pow(expr, rational=rational)

    def _print_Relational(self, expr):
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    def _print_Add(self, expr, order=None):
        """SymPy's term order, or the stored order when the terms cannot be ordered (a nan inside, such as min(a, nan))."""
        try:
            return super()._print_Add(expr, order=order)
        except TypeError:
            return super()._print_Add(expr, order="none")


class NumpyPrinter(ExportPrinter):
    target = "numpy"


class JaxPrinter(ExportPrinter):
    target = "jax"


class TorchPrinter(ExportPrinter):
    target = "torch"


class TfPrinter(ExportPrinter):
    target = "tf"


PRINTERS = {"numpy": NumpyPrinter, "jax": JaxPrinter, "torch": TorchPrinter, "tf": TfPrinter}
