"""The scalar derivations behind one diff/grad/jacobian/hessian/blocked call.

Each call is a set of components (one per entry of its result); each
component is one scalar derivation, or a chain of them for higher orders.
`component_steps` lists them with a label saying which entry they give.
"""

from __future__ import annotations

from gradlang.expr.values import elements, is_scalar, shape_of, to_symbolic
from gradlang.explain.scalar.engine import derivation
from gradlang.explain.text import plain

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_SUBSCRIPTS = str.maketrans("0123456789,", "₀₁₂₃₄₅₆₇₈₉,")


def _power(n: int) -> str:
    return "" if n == 1 else str(n).translate(_SUPERSCRIPTS)


def subscripted(symbol) -> str:
    """x₀ for the component x[0], W₀,₁ for W[0, 1]; a plain symbol as it is."""
    name = plain(symbol)
    if "[" not in name:
        return name
    base, index = name.rstrip("]").split("[", 1)
    return base + index.replace(" ", "").translate(_SUBSCRIPTS)


def step_operator(variable) -> str:
    """d/dx for a scalar variable, ∂/∂x₀ for a component (a partial derivative)."""
    return f"∂/∂{subscripted(variable)}" if "[" in plain(variable) else f"d/d{plain(variable)}"


def operator_label(applied: list, d: str = "∂") -> str:
    """d/dx, ∂²/∂y∂x, ... for the variables applied so far (first applied rightmost)."""
    runs: list = []
    for symbol in applied:
        if runs and runs[-1][0] == symbol:
            runs[-1][1] += 1
        else:
            runs.append([symbol, 1])
    below = "".join(f"{d}{subscripted(s)}{_power(n)}" for s, n in reversed(runs))
    return f"{d}{_power(len(applied))}/{below}"


def _entry(prefix: str, index, shape) -> str:
    if not shape:
        return prefix
    where = ", ".join(str(i) for i in index) if isinstance(index, tuple) else str(index)
    return f"[{where}] {prefix}"


def _indices(shape):
    if len(shape) == 1:
        return list(range(shape[0]))
    return [(i, j) for i in range(shape[0]) for j in range(shape[1])]


def _chain(expr, symbols, d, prefix=""):
    """Derivations of expr by each symbol in turn, each on the previous result as the reader last saw it:
    the simpler form its step ends with (`= b*c*(a + 1)*exp(a + b + c)*sg(a - b)  [simplified]`, one
    product), not the raw sum of the product rule's terms, whose product rule would be walked once per term."""
    from gradlang.explain.explanation import simpler

    applied: list = []
    for k, symbol in enumerate(symbols):
        step = derivation(expr, symbol)
        applied.append(symbol)
        yield (prefix + operator_label(applied, d)).strip(), step
        expr = (simpler(step.result) or step.result) if k + 1 < len(symbols) else step.result


def _diff(request):
    expr = to_symbolic(request.expr)
    symbols = [s for s, n in request.specs for _ in range(n)]
    d = "d" if len({s for s in symbols}) == 1 else "∂"
    shape = shape_of(expr)
    items = [expr] if not shape else elements(expr)
    indices = [None] if not shape else _indices(shape)
    for index, item in zip(indices, items):
        yield from _chain(item, symbols, d, _entry("", index, shape) + " " if shape else "")


def _first(request):
    """grad, jacobian and blocked: first derivatives of every entry by every variable."""
    expr, wrt = to_symbolic(request.expr), to_symbolic(request.wrt)
    outputs = [expr] if is_scalar(expr) else elements(expr)
    for i, item in enumerate(outputs):
        for symbol in elements(wrt):
            prefix = "" if is_scalar(expr) else f"[{i}] "
            yield from _chain(item, [symbol], "d" if is_scalar(wrt) else "∂", prefix)


def _hessian(request):
    expr, wrt = to_symbolic(request.expr), to_symbolic(request.wrt)
    symbols = elements(wrt)
    firsts = []
    for symbol in symbols:
        step = derivation(expr, symbol)
        firsts.append(step)
        yield operator_label([symbol]), step
    for first, symbol in zip(firsts, symbols):
        for other in symbols:
            yield operator_label([symbol, other]), derivation(first.result, other)


def component_steps(request) -> list[tuple[str, object]]:
    """(label, root Step) for every component derivation of the request, in order."""
    if request.operation == "diff":
        return list(_diff(request))
    if request.operation == "hessian":
        return list(_hessian(request))
    return list(_first(request))
