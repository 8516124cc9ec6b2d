"""The ledger as arithmetic: each removed term named and written in the user's names, a zero shown by the
identity that makes it 0, and the closing identity true gradient = kept + removed.

A removed term is computed with every stop evaluated (ledger/tensor.py), so it spells out each stopped value
in full: layer norm's σ entry wrote sqrt(sum((x - sum(x)/3)^2)/3 + …) three times. A stop has its
argument's value, so writing each stopped value back as its stop (`in_names`) changes no number and lets the
printer show the user's names (mu, sigma). A stop whose adjoint is 0 only by an identity (the stable
softmax's max: −1 + Σₖ sₖ = 0) keeps the form before that identity (`zero_form`), so the entry shows why.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.stopgrad import StopGradient, unstopped
from gradlang.expr.tensor import nodes as t
from gradlang.expr.walk import dag_nodes, rebuild, tree_size

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
NAMED_NODES = 400  # tree nodes of a removed term worth writing back in the stops' names


def subscript(k: int) -> str:
    return str(k).translate(_SUBSCRIPTS)


def in_names(term, expr, display=()):
    """The term with each stopped value of `expr` the user named (display: mu = sg(mean(x))) written as its
    stop (the same value), so the printer shows the user's name: smallest first, so
    sigma = sg(sqrt(mean((x - mu)^2))) is found after mu = sg(mean(x)) has been written back inside it.
    SymPy's subs matches a value inside a multiple (−sum(x)/3 is −mu). A value the derivation already shows
    by a name of its own (the user's p = softmax(z)) stays: it is short, and it is the path kept, not stopped."""
    if not isinstance(term, sp.Basic) or tree_size(term, cap=NAMED_NODES + 1) > NAMED_NODES:
        return term
    shown = {value for value, _ in display}
    stops = sorted((n for n in dag_nodes([expr]) if isinstance(n, StopGradient) and n in shown),
                   key=lambda n: tree_size(n))
    done: list = []
    for stop in stops:
        value = unstopped(stop.args[0])
        for earlier, written in done:  # sigma's value holds mu's, as the term now does
            value = _substituted(value, earlier, written)
        if value.args and value != stop and value not in shown:
            term = _substituted(term, value, stop)
            done.append((value, stop))
    return _tidied(term) if done else term


def _tidied(term):
    """The written-back term tidied once more: sigma·sigma² is sigma³ (a power met only after the names; the
    sqrt the evaluator held as written, so that sqrt(u)² stays itself, is a stop now, and needs no holding)."""
    from gradlang.derive.tensor.rewrite import tidy
    from gradlang.expr.domain import Written

    try:
        term = term.replace(lambda e: isinstance(e, Written) and isinstance(e.args[0], StopGradient),
                            lambda e: e.args[0])
        return tidy(sp.powsimp(term))
    except (TypeError, ValueError, AttributeError):
        return term


def in_builtins(term):
    """The term with the shares of a max or min (the engine's max_share, min_share, which the language does
    not have: LANGUAGE.md section 6) in its builtins, as the language's tie rule (section 5) says them: of
    two, max(a, b) sends a the share (1 + sign(a − b))/2, which is 1, 0, or ½ at a tie, and min(a, b) sends a
    (1 + sign(b − a))/2; of several, the ties over their count, where(a == max(a, b, c), 1, 0)/(where(a ==
    max(a, b, c), 1, 0) + …). The same value at every point, ties included; shown, never differentiated."""
    from gradlang.expr.functions import MaxShare, MinShare

    if not isinstance(term, sp.Basic):
        return term
    shares = [n for n in dag_nodes([term]) if isinstance(n, (MaxShare, MinShare)) and len(n.args) >= 3]
    return rebuild(term, {n: _share(n) for n in shares}) if shares else term


def _share(node):
    """One share in the language's builtins (in_builtins)."""
    from gradlang.expr.functions import Maximum, MaxShare, Minimum, Where

    k, args = int(node.args[0]), node.args[1:]
    if len(args) == 2:
        mine, other = args[k], args[1 - k]
        difference = mine - other if isinstance(node, MaxShare) else other - mine
        return sp.Mul(sp.Add(1, sp.sign(difference), evaluate=False), sp.Pow(2, -1, evaluate=False), evaluate=False)
    extremum = (Maximum if isinstance(node, MaxShare) else Minimum)(*args, evaluate=False)
    tied = [Where(sp.Eq(a, extremum, evaluate=False), 1, 0, evaluate=False) for a in args]
    return sp.Mul(tied[k], sp.Pow(sp.Add(*tied, evaluate=False), -1, evaluate=False), evaluate=False)


def _substituted(term, value, stop):
    try:
        return term.subs(value, stop)
    except (TypeError, ValueError, AttributeError, RecursionError):  # a tensor node SymPy cannot rebuild
        return term


def zero_form(raw, tidy) -> tuple:
    """(form, identities) when the tidy of `raw` is 0 only by identities on softmax (Σₖ sₖ = 1): the form with
    each softmax held as an opaque vector, and the identities the whole tidy used beyond it; else ()."""
    soft = [n for n in dag_nodes([raw]) if isinstance(n, t.SoftmaxOf)] if isinstance(raw, sp.Basic) else []
    if not soft:
        return ()
    held = {n: t.Var(f"s·{k}", t.shape_of(n)) for k, n in enumerate(soft)}
    opaque_used: list = []
    form = tidy(rebuild(raw, held), opaque_used)
    if form == 0:
        return ()
    used: list = []
    if tidy(raw, used) != 0:
        return ()
    return rebuild(form, {v: n for n, v in held.items()}), tuple(i for i in used if i not in opaque_used)
