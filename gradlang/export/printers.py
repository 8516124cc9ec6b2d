"""SymPy code printers for the export targets: one class per framework.

Printers dispatch by class (`_print_<Class>`). Every gradlang function that a
framework would differentiate differently from the language reference (docs/language.md), section 5 is
printed as a call to a small helper defined in the module's prelude
(`_max`, `_abs`, ...; see prelude.py), so the exported gradient equals
gradlang's. Numbers that are constant (pi, sqrt(2)) are printed as floats, so
no framework function is ever called on a plain Python number.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from gradlang.errors import ValueError as GradlangValueError

# SymPy function name -> the framework's name, per target
_NUMPY_NAMES = {
    "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan",
    "asin": "arcsin", "acos": "arccos", "atan": "arctan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "sign": "sign", "floor": "floor", "ceiling": "ceil",
}
_TORCH_NAMES = {**_NUMPY_NAMES, "asin": "asin", "acos": "acos", "atan": "atan"}
_TF_NAMES = {
    **_TORCH_NAMES, "log": "math.log", "ceiling": "math.ceil", "sign": "math.sign",
}


class ExportPrinter(PythonCodePrinter):
    """Common part: arithmetic from PythonCodePrinter, functions through the target's namespace."""

    namespace = "np"
    names = _NUMPY_NAMES

    def __init__(self, symbol_names: dict):
        super().__init__({"fully_qualified_modules": False, "strict": False})
        self.symbol_names = symbol_names

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Expr) and expr.is_number and not expr.is_Rational and expr.is_comparable:
            return repr(float(expr))
        return super()._print(expr, **kwargs)

    def _print_Symbol(self, expr):
        if expr in self.symbol_names:
            return self.symbol_names[expr]
        raise GradlangValueError(f"cannot export the symbol {expr}")

    _print_Dummy = _print_Symbol

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Function(self, expr):
        name = self.names.get(type(expr).__name__)
        if name is None:
            raise GradlangValueError(f"{type(expr).__name__} cannot be exported")
        return self._call(f"{self.namespace}.{name}", expr.args)

    def _call(self, name: str, args) -> str:
        return f"{name}({', '.join(self._print(a) for a in args)})"

    def _print_Pow(self, expr, rational=False):
        return self._hprint_Pow(expr, rational=rational, sqrt=f"{self.namespace}.sqrt")

    def _print_Relational(self, expr):
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    # gradlang's functions: helpers of the prelude, same names for every target
    def _print_StopGradient(self, expr):
        return self._call("_stop_gradient", expr.args)

    def _print_Maximum(self, expr):
        return self._call("_max", expr.args)

    def _print_Minimum(self, expr):
        return self._call("_min", expr.args)

    def _print_MaxShare(self, expr):
        return self._call("_max_share", expr.args)

    def _print_MinShare(self, expr):
        return self._call("_min_share", expr.args)

    def _print_Relu(self, expr):
        return self._call("_relu", expr.args)

    def _print_Round(self, expr):
        return self._call("_round", expr.args)

    def _print_Abs(self, expr):
        return self._call("_abs", expr.args)

    def _print_Where(self, expr):
        return self._call("_where", expr.args)


class NumpyPrinter(ExportPrinter):
    namespace = "np"

    def _print_StopGradient(self, expr):
        return f"({self._print(expr.args[0])})"  # values only: the identity


class JaxPrinter(ExportPrinter):
    namespace = "jnp"

    def _print_StopGradient(self, expr):
        return self._call("jax.lax.stop_gradient", expr.args)


class TorchPrinter(ExportPrinter):
    namespace = "torch"
    names = _TORCH_NAMES

    def _print_StopGradient(self, expr):
        return f"({self._print(expr.args[0])}).detach()"


class TfPrinter(ExportPrinter):
    namespace = "tf"
    names = _TF_NAMES

    def _print_StopGradient(self, expr):
        return self._call("tf.stop_gradient", expr.args)


for _cls in (ExportPrinter,):
    for _name in _NUMPY_NAMES:
        # PythonCodePrinter defines _print_exp etc. (math.exp); route them through _print_Function
        setattr(_cls, f"_print_{_name}", ExportPrinter._print_Function)

PRINTERS = {"numpy": NumpyPrinter, "jax": JaxPrinter, "torch": TorchPrinter, "tf": TfPrinter}
