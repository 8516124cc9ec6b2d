"""gradcheck: the only fair numeric check of a surrogate gradient.

A gradient with stop_gradient in it is not the derivative of any function a
finite difference could see, so comparing it with finite differences of `e`
(which ignore the stops) reports a mismatch for correct code. The fair check
freezes every stopped subexpression (and every piecewise-constant part, whose
derivative is zero by convention) at its value at the point, then takes
central finite differences of what is left: that function's derivative *is*
the surrogate gradient. Beside it stand the finite differences of
`unstopped(e)`, the true function, so the learner sees what the stops changed.
The report is data; gradlang.render prints it (render/report.py).

Everything is float64 through compiled NumPy code. The step for component i
is h_i = cbrt(eps) * max(1, |x_i|), the usual optimum for central differences
(truncation error ~ h^2, rounding error ~ eps/h). The relative error of a row
is |symbolic - fd| / max(1, |symbolic|, |fd|): relative for large values,
absolute near zero, where a relative error means nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from gradlang.derive.derivatives import freeze, grad
from gradlang import limits
from gradlang.errors import LimitError, ShapeError, ValueError
from gradlang.expr.numeric import evaluate
from gradlang.expr.source import to_source
from gradlang.expr.stopgrad import unstopped
from gradlang.expr.values import elements, is_condition, is_scalar
from gradlang.expr.walk import dag_atoms

EPS = float(np.finfo(np.float64).eps)
STEP_SCALE = EPS ** (1 / 3)
# A true finite difference further than this from the frozen one shows what the stops changed.
BLOCKED_TOLERANCE = 1e-5


@dataclass(frozen=True)
class GradcheckRow:
    """One component of the gradient: its symbolic value and both finite differences."""

    component: str
    symbolic: float
    frozen_fd: float
    true_fd: float
    relative_error: float
    step: float

    @property
    def blocked(self) -> float:
        """What the stops removed, numerically: true minus frozen finite difference."""
        return self.true_fd - self.frozen_fd

    @property
    def stops_changed(self) -> bool:
        return not _close(self.true_fd, self.frozen_fd)


@dataclass(frozen=True)
class GradcheckReport:
    """The outcome of gradcheck(e, x) at a point; `value` is the largest relative error."""

    value: sp.Expr
    rows: tuple
    point: tuple  # (name, float) pairs

    @property
    def passed(self) -> bool:
        return bool(self.value.is_finite) and float(self.value) < 1e-6


# --- the check ----------------------------------------------------------------------


def gradcheck(expr, wrt, pairs) -> GradcheckReport:
    """Compare grad(expr, wrt) at the point `pairs` with frozen and true central finite differences."""
    if not is_scalar(expr):
        raise ShapeError("gradcheck needs a scalar expression")
    if is_condition(expr):
        raise ValueError("gradcheck takes numbers, not a condition")
    variables = elements(wrt)
    mapping = _point(expr, variables, pairs)
    symbols = list(mapping)
    _check_size(expr, len(symbols), len(variables))
    point = np.array([mapping[s] for s in symbols], dtype=float)

    surrogate = [float(v) for v in evaluate(elements(grad(expr, wrt)) if not is_scalar(wrt) else [grad(expr, wrt)], symbols, list(point))]
    frozen_expr, constants, constant_values = _frozen(expr, symbols, point)
    steps = [STEP_SCALE * max(1.0, abs(mapping[v])) for v in variables]
    frozen_fd = _central(frozen_expr, symbols + constants, point, constant_values, variables, steps)
    true_fd = _central(unstopped(expr), symbols, point, [], variables, steps)

    rows = tuple(
        GradcheckRow(str(v), s, f, t, _relative(s, f), h)
        for v, s, f, t, h in zip(variables, surrogate, frozen_fd, true_fd, steps)
    )
    errors = [r.relative_error for r in rows]
    worst = math.nan if any(math.isnan(e) for e in errors) else max(errors, default=0.0)
    return GradcheckReport(_sympy_float(worst), rows, tuple((str(s), float(mapping[s])) for s in symbols))


def _check_size(expr, symbol_count: int, variable_count: int) -> None:
    """Refuse a check whose finite differences would not fit in memory, before computing any.

    The differences evaluate the expression at 2 points per variable in one
    compiled call, which holds one column of those points for every symbol
    and every subexpression.
    """
    from gradlang.expr.walk import dag_nodes

    cells = (len(dag_nodes(expr)) + symbol_count) * 2 * variable_count
    if cells > limits.MAX_GRADCHECK_CELLS:
        raise LimitError(
            f"gradcheck of {variable_count} variables here would evaluate about {cells:.3g} numbers at once, "
            f"above the limit of {limits.MAX_GRADCHECK_CELLS:.3g}; check a few components, as in "
            "gradcheck(e, [x[0], x[1]])"
        )


def _point(expr, variables, pairs) -> dict:
    """The point as symbol -> float, checked: every symbol of expr and every variable has a value."""
    mapping = {}
    for symbol, value in pairs:
        if not (isinstance(value, sp.Expr) and value.is_number and value.is_comparable) and not isinstance(value, (int, float)):
            raise ValueError(f"gradcheck needs a number for {to_source(symbol)}, got {to_source(value)}")
        mapping[symbol] = float(value)
    missing = (dag_atoms(expr, sp.Symbol) | set(variables)) - set(mapping)
    if missing:
        names = ", ".join(sorted(str(s) for s in missing))
        raise ValueError(f"gradcheck needs a value for every symbol; {names} has none (give it in `at`)")
    return mapping


def _frozen(expr, symbols, point):
    """expr with each stopped / piecewise-constant part a placeholder, and the placeholders' values."""
    frozen = freeze(expr)
    constants = list(frozen.thaw_map)
    originals = [unstopped(frozen.thaw_map[c]) for c in constants]
    values = [float(v) for v in evaluate(originals, symbols, list(point))] if constants else []
    return frozen.expr, constants, values


def _central(expr, symbols, point, constant_values, variables, steps) -> list[float]:
    """Central differences of expr along each variable, all 2n points in one compiled call."""
    with np.errstate(all="ignore"):  # at x = inf, inf - inf is nan, as IEEE says; NumPy's warning is not the user's
        n = len(variables)
        grid = np.tile(point, (2 * n, 1)).T  # one column per evaluation point
        index = {s: i for i, s in enumerate(symbols)}
        for k, (v, h) in enumerate(zip(variables, steps)):
            grid[index[v], 2 * k] += h
            grid[index[v], 2 * k + 1] -= h
        columns = list(grid) + [np.full(2 * n, c) for c in constant_values]
        (values,) = evaluate([expr], symbols, columns)
        values = np.broadcast_to(values, (2 * n,))
        # (x + h) - (x - h) is the step actually taken in floating point
        taken = [(point[index[v]] + h) - (point[index[v]] - h) for v, h in zip(variables, steps)]
        return [float((values[2 * k] - values[2 * k + 1]) / taken[k]) for k in range(n)]


def _relative(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return 0.0
    return abs(a - b) / max(1.0, abs(a), abs(b))


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return _relative(a, b) <= BLOCKED_TOLERANCE


def _sympy_float(x: float) -> sp.Expr:
    return sp.nan if math.isnan(x) else (sp.oo if math.isinf(x) else sp.Float(x))
