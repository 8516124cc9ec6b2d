"""Numbers of a tensor formula by whole-array NumPy: one `@`, one `np.exp` over an array.

The formula is compiled once by the same code generator as every other
gradlang value (numeric.py: one line per distinct node, IEEE 754 floats),
with each tensor operation written as its `_numpycode` spelling says, and
the helpers of those NumPy has no single function for, which their records
hold (expr/primitives/, `TensorRule.numpy`). softmax and
logsumexp shift by the maximum as the component engine's do (and as
jax.nn does), so a large input does not overflow; `log(det(A))` (logdet) is
NumPy's slogdet, so a large matrix does not overflow either (section 6).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from gradlang import limits
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr import numeric, primitives
from gradlang.expr.graph import build_dag
from gradlang.expr.tensor import cost
from gradlang.expr.tensor.linalg import LogDet
from gradlang.expr.tensor.nodes import Det, Diag, MatMul, Outer, shape_of
from gradlang.expr.tensor.shapes import valued
from gradlang.expr.walk import rebuilt
from gradlang.remembered import remembered


def stable_logdet(expr):
    """The formula with each log(det(A)) written by hand as LogDet(A): no overflow (section 6); what an
    exported module computes too (export/formula.py)."""
    return rebuilt(expr, (Det,), _logdet_node)


def _for_numpy(expr):
    """The formula as NumPy should compute it here: stable_logdet's, and each scalar times an outer product
    applied to a factor (_scaled_factor), each diag(v) + A added in A's diagonal (_diagonal_added)."""
    return rebuilt(expr, (Det, Outer, Diag), lambda node: _lean(_logdet_node(node)))


def _logdet_node(node):
    return LogDet(node.args[0].args[0]) if isinstance(node, sp.log) and isinstance(node.args[0], Det) else node


def _lean(node):
    return _scaled_factor(node) if isinstance(node, sp.Mul) else _diagonal_added(node) if isinstance(node, sp.Add) else node


class _PlusDiagonal(sp.Function):
    """A + diag(v) as NumPy computes it here: v added to A's diagonal, no n×n diag(v) made or read.

    Only in the code this module generates (never a value a user sees): written
    into A where A is a temporary only it reads (numeric.IN_PLACE_CALLS)."""

    nargs = 2
    is_real = True
    own_shape = True  # A's (nodes.shape_of): v is a vector, not broadcast against A

    @property
    def shape(self) -> tuple:
        return shape_of(self.args[0])

    def _numpycode(self, printer):
        return f"_gl_plus_diagonal({printer._print(self.args[0])}, {printer._print(self.args[1])})"


def _plus_diagonal(a, v):
    """A copy of the square matrix `a` with the vector `v` added to its diagonal."""
    return _plus_diagonal_into(np.array(a, dtype=np.float64), v)


def _plus_diagonal_into(a, v):
    """`a` with `v` added to its diagonal, in its own buffer when that is a writeable float64 array."""
    if type(a) is not np.ndarray or not a.flags.writeable or a.dtype != np.float64:
        return _plus_diagonal(a, v)
    index = np.arange(a.shape[0])
    a[index, index] += v
    return a


def _diagonal_added(node):
    """diag(v) + A (A a matrix of the same shape) as _PlusDiagonal(A, v)."""
    for term in node.args:
        if isinstance(term, Diag) and len(shape_of(term.args[0])) == 1:
            rest = sp.Add(*[a for a in node.args if a is not term])
            if shape_of(rest) == shape_of(term):
                return _PlusDiagonal(rest, term.args[0])
    return node


def _scaled_factor(node):
    """c*outer(u, v) as outer(c*u, v): the scalar multiplies n numbers, not n×m, and no n×m array is made twice.

    The same numbers up to rounding of one product (c·u_i·v_j is associated differently, within 1 ulp)."""
    tensors = [a for a in node.args if shape_of(a) != ()]
    if len(tensors) != 1 or not isinstance(tensors[0], Outer):
        return node
    scalar = sp.Mul(*[a for a in node.args if a is not tensors[0]])
    u, v = tensors[0].args
    return Outer(scalar * u, v)


def _helpers() -> dict:
    """The helpers the nodes' NumPy spellings call (`_gl_softmax_vector`), each from its node's record (TensorRule.numpy)."""
    return {rule.spelling.helper(): rule.numpy for rule in primitives.tensor_rules().values() if rule.numpy is not None}


HELPERS = _helpers()
numeric.HELPERS.update(HELPERS)
numeric.HELPERS.update(_gl_plus_diagonal=_plus_diagonal, _gl_plus_diagonal_into=_plus_diagonal_into)
numeric.IN_PLACE_CALLS[_PlusDiagonal] = "_gl_plus_diagonal_into"
numeric.FRESH.extend((Outer, MatMul))  # np.outer and np.matmul give new arrays: a temporary of theirs may be written into


def evaluate(expr, values: dict, sizes: dict):
    """The formula at float arrays: `values` maps each Var and scalar symbol to a number or an array.

    Its memory and multiply-adds are checked from the shapes first (cost.py):
    a formula too large is a LimitError before NumPy allocates anything."""
    return evaluate_each((expr,), values, sizes)[0]


def evaluate_each(exprs, values: dict, sizes: dict) -> list:
    """Each formula at the same float arrays, by one compiled function: what they share (a 3-layer MLP's
    forward pass, by every parameter's gradient) is computed once, as one reverse pass would."""
    symbols = sorted(values, key=lambda s: s.name) + sorted(sizes, key=lambda s: s.name)
    for expr in exprs:
        _checked_cost(expr, sizes)
    compiled = Compiled(tuple(exprs), symbols, sizes, len(values))
    return compiled.each([_argument(values[s]) for s in symbols[: len(values)]])


class Compiled:
    """The formulas' NumPy function (one, so what they share is computed once) for one order of their symbols
    and one set of sizes, and what a call needs beside the numbers of the point: the sizes as arguments and the
    results' shapes. A statement run again at new arrays of the same shapes (core/at_plan.py) keeps it and
    calls it alone (issue #41)."""

    def __init__(self, exprs, symbols: list, sizes: dict, count: int):
        exprs = exprs if isinstance(exprs, tuple) else (exprs,)
        self._use(numeric.compile_function(tuple(remembered("for numpy", e, _for_numpy) for e in exprs),
                                           tuple(symbols)))
        self.sizes = [int(sizes[s]) for s in symbols[count:]]
        self.shapes = [tuple(int(valued(s, sizes)) for s in shape_of(e)) for e in exprs]
        self.specializing = False

    def _use(self, function) -> None:
        """Call `function` under NumPy's errstate(all="ignore") (IEEE values, no warnings): _quietly."""
        self.function = function
        self.quiet = _quietly(function)

    def specialize(self) -> None:
        """Write the function, at its next call, for arguments of that call's shapes and dtypes
        (numeric.specialized): a plan's, whose calls are all given arrays of the shapes it was made at
        (core/at_plan.py)."""
        self.specializing = True

    def __call__(self, arguments: list):
        """The first formula's result, a new float64 array of its shape (a plan compiles one formula)."""
        return self.each(arguments)[0]

    def each(self, arguments: list) -> list:
        """Each formula's result, a new float64 array of its shape: `arguments` are the point's numbers
        (float64 arrays and floats) in the order of the symbols. A float goes in as NumPy's float64, whose
        overflow is inf as an array's is: Python's `1e300**3` raises OverflowError (fuzz.py seed 5001)."""
        arguments = [np.float64(a) if type(a) is float else a for a in arguments]
        return self.outputs(arguments + self.sizes if self.sizes else arguments)

    def outputs(self, arguments: list) -> list:
        """each() for arguments in the function's own form: float64 arrays and NumPy floats, then the sizes
        (a plan makes its literals and sizes once, core/at_plan.py)."""
        try:
            outputs = self._specialized(arguments) if self.specializing else self.quiet(*arguments)
        except np.linalg.LinAlgError:  # section 6: a singular matrix under inv is a ValueError, as log(-1) is
            raise ValueError("a singular matrix has no inverse: inv (and logdet's gradient) need an invertible one") from None
        except IndexError:  # an index NumPy computes (x[argmax(u)]): no earlier check could see it
            raise ShapeError("an index is out of range for its vector or matrix at this point") from None
        if len(outputs) == 1:
            return [_owned(outputs[0], self.shapes[0], arguments, outputs)]
        return [_owned(output, shape, arguments, outputs) for output, shape in zip(outputs, self.shapes)]

    def _specialized(self, arguments: list) -> list:
        """The outputs at `arguments`, made on the way to the function written for their shapes, used from now."""
        with np.errstate(all="ignore"):
            function, outputs = numeric.specialized(self.function, arguments)
        self._use(function)
        self.specializing = False
        return outputs


def _quietly(function):
    """`function` under errstate(all="ignore"), as np.errstate's decorator calls it, for less: the decorator
    makes NumPy's error state anew at each call (about 0.6 us, a tenth of a width-64 gradient's arithmetic: a
    statement run again in a loop is a call, issue #41), where this makes it once per state it is called in
    (the caller's bufsize and error call are kept, as the decorator keeps them). NumPy's own names for the
    state (numpy._core.umath, NumPy 2); without them, the decorator."""
    try:
        from numpy._core.umath import _extobj_contextvar as state, _make_extobj as made
    except ImportError:
        return np.errstate(all="ignore")(function)
    get, set_, reset = state.get, state.set, state.reset
    last = [(None, None)]  # (the caller's state, it with every error ignored): one pair, for threads

    def quietly(*arguments):
        caller, ignoring = last[0]
        if caller is not get():
            caller, ignoring = last[0] = (get(), made(all="ignore"))
        token = set_(ignoring)
        try:
            return function(*arguments)
        finally:
            reset(token)

    return quietly


_FLOAT64 = np.dtype(np.float64)  # NumPy's float64 arrays share it: `is` answers most results at once


def _owned(output, shape: tuple, arguments: list, outputs):
    """The output as a float64 array of the formula's shape that nothing else holds (an argument, another
    output): one already new is kept, so a large result is not copied."""
    if type(output) is not np.ndarray or output.dtype is not _FLOAT64 and output.dtype != np.float64:
        output = numeric._real(output)  # a float64 array
    if output.shape == shape and output.base is None and output.flags.owndata and _new(output, arguments) \
            and (len(outputs) == 1 or sum(output is o for o in outputs) == 1):
        return output
    return np.broadcast_to(output, shape).copy()


def _new(output, arguments: list) -> bool:
    """The output is none of the arguments (a formula that is one of its tensors, x at x = xd, gives a copy)."""
    for argument in arguments:
        if output is argument:
            return False
    return True


def _checked_cost(expr, sizes: dict) -> None:
    """cost.check of the formula at these sizes; that it passes is remembered per formula and sizes.

    A refusal is not: the check runs again to raise a new error, since an error takes the place of its statement."""
    known = tuple(sorted(((s.name, int(n)) for s, n in sizes.items()), key=lambda pair: pair[0]))
    bounds = (limits.max_memory(), limits.MAX_NUMERIC_PRODUCTS)  # a user may raise them between calls
    if not remembered("cost", expr, lambda e: _fits(e, sizes), known, bounds):
        cost.check(build_dag([expr]).nodes, sizes)


def _fits(expr, sizes: dict) -> bool:
    """Whether cost.check lets the formula be evaluated at these sizes."""
    try:
        cost.check(build_dag([expr]).nodes, sizes)
    except LimitError:
        return False
    return True


def _argument(value):
    if isinstance(value, np.ndarray):
        return np.asarray(value, dtype=float)  # no copy of a float64 array: nothing writes into it
    return float(value)


def as_value(array: np.ndarray):
    """A NumPy result as a gradlang value: a Float for a scalar, the array for a vector or matrix."""
    if array.shape == ():
        return sp.Float(float(array))
    return array
