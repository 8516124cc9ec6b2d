"""The checking tools of the language reference, section 12, as builtins: gradcheck and plot.

Registered in the builtin table like the others (builtins.py imports this
module); the tools themselves live in gradlang/tools/.
"""

from __future__ import annotations

from gradlang.core.builtin_table import Call, _plain, _span, builtin
from gradlang.core.substitute import substitute
from gradlang.errors import ShapeError, ValueError
from gradlang.expr.values import describe_shape, is_scalar, shape_of, to_symbolic


def _derive():
    """derive/derivatives.py, imported on the first derivative or check: a program that takes none (`1 + 1`)
    does not load the reverse-accumulation engine (issue #41)."""
    from gradlang.derive import derivatives

    return derivatives


def _gradcheck(call: Call, pairs: list, batch: list):
    """gradcheck(e, x) at …: the surrogate gradient against frozen finite differences."""
    from gradlang.tools.gradcheck import gradcheck

    if batch:
        raise ValueError("gradcheck checks one point: give each symbol one value, not a list")
    expr, wrt = call.args
    report = gradcheck(to_symbolic(expr), _derive().check_variables(to_symbolic(wrt), "gradcheck"), pairs)
    substitute(expr, pairs, [], call.services.notes)  # only for its warnings about kinks at the point
    call.services.attach(report)
    return report.value


@builtin("gradcheck", 2, 2, "check grad(e, x) against finite differences with stops frozen",
         "gradcheck(x*sg(x), x) at x = 2.0", "tools", at=_gradcheck)
def _gradcheck_without_point(call: Call):
    raise ValueError("gradcheck needs a point: write gradcheck(e, x) at x = …")


@builtin("plot", 4, None, "plot expressions of t on [a, b]: plot(e1, e2, …, t, a, b)", "plot(relu(t), diff(relu(t), t), t, -2, 2)", "tools")
def _plot(call: Call):
    from gradlang.tools.plot import make_plot

    *exprs, t, a, b = call.args
    *expr_nodes, t_node, a_node, b_node = call.nodes
    t = _derive().check_symbol(t, "plot") if is_scalar(t) else None
    if t is None:
        raise ValueError("plot(e1, …, t, a, b) needs a scalar symbol t").located(_span(t_node))
    for value, node in ((a, a_node), (b, b_node)):
        if not (is_scalar(value) and value.is_number and value.is_comparable):
            raise ValueError("plot needs numbers for the ends of the interval").located(_span(node))
    for value, node in zip(exprs, expr_nodes):
        if not is_scalar(value):
            raise ShapeError(f"plot draws scalar expressions, not {describe_shape(shape_of(value))}").located(_span(node))
    labels = [call.services.source_text(node) or _plain(value) for node, value in zip(expr_nodes, exprs)]
    figure = make_plot(list(exprs), labels, t, float(a), float(b))
    call.services.attach(figure)
    return figure.value


