"""Numbers from SymPy values: lambdify to NumPy, with common-subexpression elimination.

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

from gradlang.expr.graph import build_dag


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


def dag_cse(exprs, symbols) -> tuple[list, list, list]:
    """Common subexpressions from the DAG: (argument names, assignments, outputs).

    Every distinct compound subexpression becomes one assignment, computed once,
    so the code is as large as the DAG, never as the tree (SymPy's own `cse`
    walks the tree, which is exponential for expressions that share deeply).
    """
    dag = build_dag(list(exprs))
    arguments = [sp.Symbol(f"_a{j}") for j in range(len(symbols))]
    given = dict(zip(symbols, arguments))
    names: list = []
    assignments: list = []
    for i, (node, kids) in enumerate(zip(dag.nodes, dag.children)):
        if node in given:
            names.append(given[node])
        elif not kids or isinstance(node, _INLINE):
            names.append(node)
        else:
            name = sp.Symbol(f"_t{i}")
            args = [names[k] for k in kids]
            assignments.append((name, node.func(*args, evaluate=False) if _UNEVALUATED(node) else node.func(*args)))
            names.append(name)
    return arguments, assignments, [names[r] for r in dag.roots]


_INLINE = (sp.Number, sp.NumberSymbol)


def _UNEVALUATED(node) -> bool:
    """Add, Mul and Pow rebuilt from stand-in names must not be re-canonicalised."""
    return isinstance(node, (sp.Add, sp.Mul, sp.Pow))


def compile_function(exprs: tuple, symbols: tuple):
    """A NumPy function of `symbols` returning the list of `exprs`, cached."""
    key = (exprs, symbols)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    arguments, assignments, outputs = dag_cse(exprs, symbols)
    function = sp.lambdify(
        arguments,
        outputs,
        modules=[HELPERS, "numpy"],
        printer=_Printer,
        cse=lambda reduced: (assignments, reduced),
        dummify=False,
    )
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
    """A float64 as a SymPy number (inf and nan included)."""
    x = float(x)
    if np.isnan(x):
        return sp.nan
    if np.isinf(x):
        return sp.oo if x > 0 else -sp.oo
    return sp.Float(x)
