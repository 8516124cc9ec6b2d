"""Numbers from SymPy values: NumPy code, one line per distinct operation of the DAG.

One compiled function per (expressions, symbols), cached. Floating point
follows IEEE 754 (inf, nan) as NumPy does. gradlang's own functions get NumPy
implementations here: stop_gradient is the identity, max/min reduce over all
their arguments, their shares split ties equally, where selects (so no NaN
leaks from the branch not taken), round halves to even.
"""

from __future__ import annotations

import functools
from collections import OrderedDict

import numpy as np
import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from .dag.names import named_subexpressions


def _reduce(function, args):
    return functools.reduce(function, args)


def _share(pick, k, *args):
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in args])
    extremum = pick(np.stack(arrays), axis=0)
    tied = sum((a == extremum).astype(float) for a in arrays)
    return np.where(arrays[int(k)] == extremum, 1.0 / np.maximum(tied, 1.0), 0.0)


HELPERS = {
    "_gl_max": lambda *args: _reduce(np.maximum, args),
    "_gl_min": lambda *args: _reduce(np.minimum, args),
    "_gl_max_share": lambda k, *args: _share(np.max, k, *args),
    "_gl_min_share": lambda k, *args: _share(np.min, k, *args),
    "_gl_relu": lambda u: np.maximum(u, 0.0),
    "_gl_round": np.round,
}


class _Printer(NumPyPrinter):
    """NumPy code for gradlang's SymPy functions."""

    def _call(self, name, args):
        return f"{name}({', '.join(self._print(a) for a in args)})"

    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_StopGradient(self, expr):
        return f"({self._print(expr.args[0])})"

    def _print_Maximum(self, expr):
        return self._call("_gl_max", expr.args)

    def _print_Minimum(self, expr):
        return self._call("_gl_min", expr.args)

    def _print_MaxShare(self, expr):
        return self._call("_gl_max_share", expr.args)

    def _print_MinShare(self, expr):
        return self._call("_gl_min_share", expr.args)

    def _print_Relu(self, expr):
        return self._call("_gl_relu", expr.args)

    def _print_Round(self, expr):
        return self._call("_gl_round", expr.args)

    def _print_Where(self, expr):
        return self._call("numpy.where", expr.args)


_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 256


def function_source(exprs, symbols) -> str:
    """Python source of `_f(_a0, _a1, ...)` returning the list of exprs, one line per distinct operation.

    The common subexpressions come from the DAG (gradlang.dag.names), so the
    code is as large as the DAG, never as the tree; sums, products and
    one-argument functions are printed directly (SymPy's printer costs about a
    millisecond a line, minutes for a big gradient), in the printer's order of
    terms and factors (so the floats round as before), the rest by the printer.
    """
    arguments = {s: sp.Symbol(f"_a{j}") for j, s in enumerate(symbols)}
    named, reduced = named_subexpressions(list(exprs), min_size=1, shared_only=False, rename=arguments,
                                          symbols=lambda i: sp.Symbol(f"_t{i}"))
    code = _Coder(_Printer({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True}))
    lines = [f"def _f({', '.join(str(a) for a in arguments.values())}):"]
    lines += [f"    {t} = {code.node(e)}" for t, e in named]
    lines.append(f"    return [{', '.join(code.node(e) for e in reduced)}]")
    return "\n".join(lines) + "\n"


class _Coder:
    """Code of one node whose args are atoms (names and numbers)."""

    def __init__(self, printer: _Printer):
        self.printer = printer
        self.templates: dict = {}

    def atom(self, atom) -> str:
        text = self.printer.doprint(atom)
        return text if atom.is_Symbol else f"({text})"

    def node(self, expr) -> str:
        if expr.is_Atom:
            return self.atom(expr)
        if isinstance(expr, sp.Add) and all(a.is_Atom for a in expr.args):
            return " + ".join(self.atom(a) for a in self.printer._as_ordered_terms(expr, order=None))
        if isinstance(expr, sp.Mul) and all(a.is_Atom for a in expr.args):
            return " * ".join(self.atom(a) for a in expr.as_ordered_factors())
        template = self._template(expr)
        if template is not None:
            return template.replace(_SLOT_CODE, self.atom(expr.args[0]))
        return self.printer.doprint(expr)

    def _template(self, expr):
        """`numpy.tanh(#)` for a one-argument function class, printed once per class."""
        cls = type(expr)
        if cls not in self.templates:
            self.templates[cls] = None
            if isinstance(expr, sp.Function) and len(expr.args) == 1 and expr.args[0].is_Atom:
                text = self.printer.doprint(cls(_SLOT))
                self.templates[cls] = text if text.count(_SLOT_CODE) == 1 else None
        return self.templates[cls]


_SLOT = sp.Symbol("_slot_")
_SLOT_CODE = "_slot_"


def compile_function(exprs: tuple, symbols: tuple):
    """A NumPy function of `symbols` returning the list of `exprs`, cached."""
    key = (exprs, symbols)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    namespace = {"numpy": np, **HELPERS}
    exec(compile(function_source(exprs, symbols), "<gradlang>", "exec"), namespace)
    function = namespace["_f"]
    _CACHE[key] = function
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return function


def evaluate(exprs: list, symbols: list, values: list) -> list[np.ndarray]:
    """Evaluate scalar expressions at NumPy values (broadcast together), IEEE semantics."""
    function = compile_function(tuple(exprs), tuple(symbols))
    arrays = [np.asarray(v, dtype=float) for v in values]
    with np.errstate(all="ignore"):
        outputs = function(*arrays)
    shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
    return [np.broadcast_to(np.asarray(o, dtype=float), shape) for o in outputs]


def to_sympy_number(x: float) -> sp.Expr:
    """A float64 as a SymPy number (inf and nan included; a complex number is nan, as in NumPy's real functions)."""
    if np.iscomplexobj(x):
        x = np.real(x) if np.imag(x) == 0 else np.nan
    x = float(x)
    if np.isnan(x):
        return sp.nan
    if np.isinf(x):
        return sp.oo if x > 0 else -sp.oo
    return sp.Float(x)
