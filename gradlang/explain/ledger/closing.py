"""The ledger's last line: true gradient = kept + removed, with the terms named.

`grad(unstopped(L), x) = g + r₁ + r₂` in the language's own words: g is what grad gives (the kept part)
and each rᵢ the term one stop removes (its entry names it), so the ledger reads as a sum a reader can check.
When g is 0 at every point although it is not written 0 (an entropy bonus −Σ sg(p) log p: grad gives
p Σ sg(p) − sg(p)), the line says so and why: each stop has its argument's value, and an identity (Σₖ pₖ = 1)
cancels what is left.
"""

from __future__ import annotations

import sympy as sp

from gradlang.explain.formula import Math, latex_math
from gradlang.explain.loss_letter import latex_letter, loss_of
from gradlang.explain.note import Note, note

REMOVING = ("blocking", "inventing")
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_ZERO_NODES = 300  # tree nodes of a gradient worth asking whether it is 0 at every point


def letters(request, shown=()) -> tuple[str, str]:
    """(the kept part's letter, the removed terms' letter): g and r, unless the user's formula has a name
    that a reader would take them for (layer norm's gain g, PPO's ratio r), or the derivation's lets do
    (`shown`, its (value, name) pairs: adversarial training's g = grad(loss(x), x))."""
    from gradlang.expr.values import to_symbolic
    from gradlang.expr.walk import dag_atoms

    expr = to_symbolic(request.expr)
    taken = {s.name.split("[")[0] for s in dag_atoms(expr, sp.Symbol)} if isinstance(expr, sp.Basic) else set()
    taken |= {str(name) for _, name in shown} | {loss_of(request)}
    kept = "J" if request.operation == "jacobian" else next(c for c in ("g", "k", "κ") if c not in taken)
    return kept, next(c for c in ("r", "q", "ρ") if c not in taken)


def removed_names(entries, letter: str = "r") -> list:
    """r₁, r₂, … for the entries that remove a term (blocking or inventing), "" for the others."""
    names, k = [], 0
    for entry in entries:
        k += entry.verdict in REMOVING
        names.append(f"{letter}{str(k).translate(_SUBSCRIPTS)}" if entry.verdict in REMOVING else "")
    return names


_TERMS = 6  # removed terms the identity writes one by one; more as r₁ + r₂ + … + rₖ
_ONE_LINE = 96  # characters of the identity with g's definition on one line (the # and the indent make 100)


def _operation(request) -> str:
    """The call that gives the kept part: grad (also for blocked), jacobian, diff."""
    return "grad" if request.operation in ("grad", "blocked") else request.operation


def closing(explanation) -> tuple:
    """(identity, what its terms are) for the explanation's ledger, e.g.
    grad(unstopped(L), x) = g + r₁ + r₂  /  g = grad(L, x), what grad gives; rᵢ, what stop i removes."""
    request = explanation.request
    display = getattr(getattr(explanation, "vector", None), "display", ()) or ()
    operation, (kept, letter) = _operation(request), letters(request, display)
    names = [n for n in removed_names(explanation.ledger, letter) if n]
    shown = names if len(names) <= _TERMS else [*names[:2], "…", names[-1]]  # each rᵢ is named at its entry
    true_zero = _true_is_zero(explanation, kept, names) if names else ()
    terms = "".join(f" + {n}" for n in shown) + " = 0" * bool(true_zero)
    variable = _by(request)
    if ", " in variable.parts and request.operation != "diff":
        variable = note(Math("[", "["), variable, Math("]", "]"))  # grad(L, [mu1, mu2]), as written
    loss, latex_loss = loss_of(request), latex_letter(loss_of(request))  # the letter the lines write it by
    identity = note("true = kept + removed: ", Math(f"{operation}(unstopped({loss}), ",
                                                    rf"\operatorname{{{operation}}}(\operatorname{{unstopped}}({latex_loss}),\ "),
                    variable, Math(f") = {kept}{terms}", latex_math(f") = {kept}{terms}")))
    kept_is = note(Math(f"{kept} = {operation}({loss}, ", rf"{kept} = \operatorname{{{operation}}}({latex_loss},\ "),
                   variable, Math(")", ")"))
    removed = ("; each ", Math(f"{letter}ᵢ", f"{letter}_i"), " is what its stop removes") if names else (
        "; the stops remove nothing",)
    zero = _zero_everywhere(explanation, kept)
    why = tuple(n for n in (zero, *true_zero) if n)
    one_line = note(identity, " (", kept_is, ")", *(() if names else removed))
    if len(one_line.spelled(str)) <= _ONE_LINE:  # the rᵢ are named where their stops are: one line says it
        return (one_line, *why)
    said = note("where ", kept_is, f" is what {operation} gives", *removed)
    return (identity, said, *why)


def _zero_everywhere(explanation, kept: str) -> Note:
    """"g = 0 at every point: …" when the kept gradient is not written 0 but is 0 at every point."""
    from gradlang.derive.tensor.rewrite import tidy
    from gradlang.expr.stopgrad import unstopped
    from gradlang.expr.tensor.nodes import Zeros
    from gradlang.expr.walk import tree_size

    derived = explanation.derived
    if not isinstance(derived, sp.Expr) or derived == 0 or isinstance(derived, Zeros):
        return note()
    if tree_size(derived, cap=_ZERO_NODES + 1) > _ZERO_NODES:
        return note()
    used: list = []
    value = tidy(unstopped(derived), used)
    if not (value == 0 or isinstance(value, Zeros)):
        return note()
    why = f", and {', '.join(used)}" if used else ""
    return note(f"{kept} = 0 at every point, though not written 0: each stop has its argument's value{why}")


def _by(request) -> Note:
    """What the derivative is taken by, as the call writes it: x, [mu1, mu2], and for a diff its variables
    and orders (diff(L, a, b), diff(L, x, 2)), never a list a diff does not take."""
    from gradlang.explain.ledger.words import over

    if request.operation != "diff":
        return over(request)
    parts: list = []
    for symbol, order in request.specs:
        parts += [", "] * bool(parts) + [symbol] + ([f", {order}"] if order != 1 else [])
    return note(*parts)


def _true_is_zero(explanation, kept: str, names: list) -> tuple:
    """Two lines saying the true gradient is 0 at every point, and why, when the stops' terms cancel what grad
    gives (DiCE's magic box exp(logp − sg(logp)), 1 in value: grad gives the score function, which the
    function, a constant, lacks); else (). Shown by the rewrites (each stop at its argument's value, g + rᵢ
    cancels term by term), else at random points, when a stop is inventing (its term cancels g where it is
    not 0), and the line says which."""
    from gradlang.derive.tensor.rewrite import tidy
    from gradlang.errors import GradlangError
    from gradlang.explain.ledger import random_points
    from gradlang.expr.stopgrad import unstopped
    from gradlang.expr.tensor.nodes import Zeros
    from gradlang.expr.walk import tree_size

    derived, blocked = explanation.derived, explanation.blocked
    if not (isinstance(derived, sp.Expr) and isinstance(blocked, sp.Expr)) or blocked == 0:
        return ()
    if tree_size([derived, blocked], cap=2 * _ZERO_NODES + 1) > 2 * _ZERO_NODES:
        return ()
    try:
        total = tidy(sp.Add(unstopped(derived), blocked))
    except (GradlangError, TypeError, ValueError):  # shapes the sum cannot join: not shown to be 0
        return ()
    if total == 0 or isinstance(total, Zeros):
        where = note("0 at every point: ", _sum(kept, names), " cancels term by term once each stop is its "
                     "argument's value")
    elif _inventing(explanation) and (points := random_points.zero_at(total, [derived])):
        where = note(f"0 at {points} random points (the rewrites do not show it at every point)")
    else:
        return ()
    removed = names[0] if len(names) == 1 else f"({' + '.join(names)})"
    stops = "the stop invents" if len(names) == 1 else "the stops invent"
    return (where, note("so all of ", Math(kept, latex_math(kept)), f" is what {stops}: ",
                        Math(f"{kept} = −{removed}", latex_math(f"{kept} = -{removed}"))))


def _inventing(explanation) -> bool:
    """A stop invents (so the true gradient may be 0 where the rewrites cannot show it), and the random
    points can be drawn (NumPy: not in the browser page)."""
    from gradlang.lazy import has_numpy

    return any(e.verdict == "inventing" for e in explanation.ledger) and has_numpy()


def _sum(kept: str, names: list):
    text = " + ".join([kept, *names])
    return Math(text, latex_math(text))
