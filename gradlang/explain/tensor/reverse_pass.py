"""explain of a gradient at symbolic size: the tensor-level reverse pass, one line per operation.

Each line is the adjoint of one subexpression the gradient flows through, `∂L/∂u = …`, tidied by the
bounded rewrites, with the rule of the operation that sent it (`matmul: Ā = Ȳ Bᵀ`, `softmax: z̄ = s ⊙ (s̄ −
⟨s̄, s⟩)`, as the operation's record says it: record.TensorRule's `said`). Lines for plain arithmetic that
only passes the adjoint on (a sum, a sign) are left out, and a constant factor is folded into the adjoint
below it (folds.py); the last line is the gradient itself. The records are explain's own
(formula.VectorDerivation), so every output form renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.derive.tensor.reverse import sent, trace
from gradlang.derive.tensor.rewrite import DISTRIBUTED, RULES, Tidier, normal_form, tidy
from gradlang.expr.tensor.broadcast import full
from gradlang.expr.tensor.listed import TensorList
from gradlang.expr.tensor.nodes import Var, rank, shape_of
from gradlang.expr.source import operation_name, to_source
from gradlang.expr import primitives
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import dag_atoms, rebuild, rebuild_all, tree_size
from gradlang.expr.tensor import nodes as t
from gradlang.explain.formula import Let, Math, VectorDerivation, VectorLine, formula, text_box
from gradlang.explain.layout import long_stop, shorten
from gradlang.explain.ledger.components import outermost_stops, removed_value
from gradlang.explain.tensor.constants import constant_lets, constant_names
from gradlang.explain.tensor.bookkeeping import bookkeeping, ruler, through_units
from gradlang.explain.tensor.folds import FoldedAbove, constant, scaled
from gradlang.explain.tensor.lets import forward_names, read_lets, tidied_names
from gradlang.explain.tensor.names import repeated_parts, user_names, wall_names
from gradlang.explain.tensor.merging import merged
from gradlang.explain.tensor.normalisation import folded_line, shown_sites
from gradlang.explain.ledger.words import GROUPED, phrase
from gradlang.explain.ledger.written import regrouped
from gradlang.explain.ledger.tensor import tensor_ledger
from gradlang.explain.loss_letter import LETTER, AdjointName, adjoint_of, loss_of, spelled

SUMMARY = "tensor reverse pass"
MAX_LINES = 16  # a derivation longer than this shows its last lines (the ones nearest the variable)
_CUT = r"every path from the variable to {L} passes through a stop"  # {L}: the loss's letter (loss_letter.py)
_ABSENT = "the variable does not appear in {L}"
_REWRITES = {r.identity: r for r in (*RULES, DISTRIBUTED)}
NAMED_LINES = 6  # a pass through the user's named bindings longer than this shows the lines of tensors only
LINE_CHARACTERS = 96  # an instantiated rule is shown before its tidied form when the line fits in this many
PRINTED_NODES = 8 * LINE_CHARACTERS  # a formula of more tree nodes prints wider than a line (a node: ≥ ⅗ character)

def _bar(name: str) -> str:
    return rf"\bar{{{name}}}"


_ARITHMETIC = {
    sp.Add: ("sum rule: ū = ȳ", rf"{_bar('u')} = {_bar('y')}"),
    sp.Mul: ("product rule: ū = ȳ ⊙ v", rf"{_bar('u')} = {_bar('y')} \odot v"),
    sp.Pow: ("power rule: ū = ȳ ⊙ p u^(p−1)", rf"{_bar('u')} = {_bar('y')} \odot p u^{{p-1}}"),
}


def _rule(user, used=()) -> tuple:
    """The rule that sent the adjoint down from `user` (the node above), then the identities that
    tidied it, as a formula in both spellings."""
    if isinstance(user, t.TensorOp):
        rule = primitives.tensor_rules().get(type(user))
        plain, latex = rule.said if rule is not None and rule.said else (operation_name(user),) * 2
    elif isinstance(user, sp.Function):
        name = user.func.__name__.lower()
        plain, latex = f"{name}: ū = ȳ ⊙ f′(u)", rf"{_bar('u')} = {_bar('y')} \odot f'(u)"
    else:
        plain, latex = _ARITHMETIC.get(type(user), ("chain rule", ""))
    head = plain.split(":")[0]
    latex = text_box(head) + (f": {latex}" if latex and ":" in plain else "")
    if used:
        plain += "; then " + ", ".join(r.identity for r in used)
        latex += r"\); then " + ", ".join(_spoken(r) for r in used) + r" \("  # text between: the line can break
    return (Math(plain, latex),)


def _spoken(rewrite) -> str:
    """An identity in LaTeX text: its mathematics in \\( \\), its words as words (a \\text box cannot break)."""
    if rewrite.latex.startswith(r"\text{"):
        return rewrite.identity
    return rf"\({rewrite.latex}\)"


def _lhs(node, wrt, names=None, loss: str = LETTER) -> tuple:
    """∂L/∂u, with u in brackets unless it is a name or a call; L the loss's letter."""
    if node == wrt or isinstance(wrt, tuple) and node in wrt:
        return (AdjointName(node.name, shape_of(node), loss),)  # each printer spells the name: delta, δ, \delta
    if names and node in names:
        return (AdjointName(names[node].name, shape_of(node), loss),)
    simple = isinstance(node, (sp.Symbol, sp.Function)) and not (isinstance(node, t.TensorOp) and node.spelling.infix)
    return formula(adjoint_of(loss), node) if simple else formula(adjoint_of(loss), "(", node, ")")


def _said(text: str, loss: str) -> Math:
    """A sentence about the loss ({L}), its words as LaTeX text and the letter as math."""
    plain, after = text.split("{L}")
    return Math(text.format(L=loss), rf"\text{{{plain}}}" + spelled(loss, "{L}").latex + (rf"\text{{{after}}}" if after else ""))


def tensor_derivation(expr, wrt, result, names=None, loss: str = LETTER) -> VectorDerivation:
    """The reverse pass of grad(expr, wrt) as numbered lines, output to variable.

    Each line is one node's adjoint: the rule of the node above it instantiated
    with that node's adjoint, then the tidied form and the identities of the
    rewrites that gave it. The adjoint of a node the user named (names: value → Symbol, z1 = W @ x1) is written
    ∂L/∂z1 in the lines below it (L: the loss's letter), so ∂L/∂W reads outer(∂L/∂z1, x1) as a teacher writes
    δ xᵀ. Lines left out: _silent's (a constant factor folded below: folds.py), those inside a normalisation
    (one step: normalisation.py); a long pass keeps named and tensor lines, merging a step into the next (merging.py)."""
    names = names or {}
    variables = wrt if isinstance(wrt, tuple) else (wrt,)
    tidied, bars, lines = {}, {}, []
    uses, tidier = _uses(expr), Tidier()
    folded, hidden = shown_sites(expr, uses)
    traced = trace(expr, wrt, tidier)
    folds = FoldedAbove([node for node, _ in traced], uses, lambda n: n in variables or n in names)
    for node, adjoint in traced:
        tidied[node] = tidier(adjoint)
        if node in names:
            bars[node] = AdjointName(names[node].name, shape_of(node), loss)
        if node == expr or not (node in variables or node.args) or node in hidden or node in folds.folded:
            continue
        arriving = through_units([(user, k) for user, k in uses.get(node, ()) if user in tidied], uses, tidied, names)
        if any(site.node in tidied for site in folded.get(node, ())):
            lines.append((node, folded_line(_lhs(node, wrt, names, loss), folded[node], arriving, tidied, bars, uses)))
        elif not _silent(node, arriving, tidied, names, variables):
            top, factor = folds.above.get(node, (node, sp.S.One))  # a line folded into this one: its rule, scaled
            if top is not node:
                arriving = through_units([(u, k) for u, k in uses.get(top, ()) if u in tidied], uses, tidied, names)
            above = ruler(arriving[-1][0], uses, tidied, names, variables)
            line, shown = _line(node, wrt, arriving, tidied, bars, names, tidier, above, factor, loss)
            lines.append((node, line))
            if shown is not None and node not in bars:  # the lines below read this one as it was written
                bars[node] = shown
    lines = _closing(_within_budget(lines, variables, names) + _unreached(expr, variables, tidied, result, loss),
                     variables)
    derived = tuple(full(tidied.get(v, sp.S.Zero), shape_of(v)) for v in variables)
    derived = derived if isinstance(wrt, tuple) else derived[0] if wrt in tidied else result
    return VectorDerivation("the reverse pass at the tensor level, one adjoint rule per operation",
                            (), tuple(lines), derived)


def _silent(node, arriving, tidied, names, variables) -> bool:
    """A line left out: a constant adjoint, or one that says nothing the line below does not (a sum passing the
    adjoint on, a constant factor, a reshape, a reciprocal); never the variable's, a named node's only when
    constant."""
    return node not in variables and (constant(tidied[node]) or node not in names and (
        _passes_on(arriving, tidied, tidied[node]) or scaled(node, arriving)
        or bookkeeping(node, arriving, names, variables) or _reciprocal(node)))


def _line(node, wrt, arriving, tidied, bars, names, tidier, above, factor=sp.S.One, loss: str = LETTER) -> tuple:
    """One node's line: the users' rules with their adjoints (by name where named), times the constant factor
    of a line folded into it (folds.py), then the tidied form, and the rule of `above` (the user above it, or
    the operation above an unshown reshape); with the adjoint as the line writes it when it reads a name (else
    None), for the lines below to read in the same names. A line whose tidied form fits reads the lines above
    in names only where the user named them (as it did)."""
    if _fit(node, tidied[node], sp.S.Zero, names) and not any(isinstance(bars.get(u), AdjointName) for u, _ in arriving):
        bars = {u: b for u, b in bars.items() if isinstance(b, AdjointName)}  # short enough said as it tidies
    raw = factor * sp.Add(*[sent(user, bars.get(user, tidied[user]), k) for user, k in arriving])
    by_name = any(user in bars for user, _ in arriving)
    used: list = []
    shown = tidier(raw, used)
    changed = _reads_differently(*rebuild_all([raw, shown], names))
    used = [_REWRITES[i] for i in used if not _REWRITES[i].algebra] if changed else []
    if by_name:
        rhs = (shown,) + ((tidied[node],) if _fit(node, shown, tidied[node], names) and tidied[node] != shown else ())
    else:
        rhs = (raw, tidied[node]) if changed and _fit(node, raw, tidied[node], names) else (tidied[node],)
    line = VectorLine(_lhs(node, wrt, names, loss), tuple(formula(r) for r in rhs), _rule(above, used))
    return line, shown if by_name else None


def _unreached(expr, variables, tidied, result, loss: str = LETTER) -> list:
    """The line of each variable the pass never reached: cut by stops, or absent from L."""
    return [(v, VectorLine(_lhs(v, v, loss=loss), (formula(full(sp.S.Zero, shape_of(v)) if len(variables) > 1 else result),),
                           (_said(_CUT if v in dag_atoms(expr, sp.Symbol) else _ABSENT, loss),)))
            for v in variables if v not in tidied]


def _reciprocal(node) -> bool:
    """1/u: SymPy's spelling of a division, not a step a reader takes (∂L/∂u follows)."""
    return isinstance(node, sp.Pow) and node.args[1] == -1


def _within_budget(lines: list, variables: tuple, names) -> list:
    """The lines; when the user named intermediates and there are more than NAMED_LINES (or any pass has
    more than MAX_LINES), only those of named and tensor-valued nodes; at most the last MAX_LINES."""
    if len(lines) > MAX_LINES or (names and len(lines) > NAMED_LINES):
        lines = [(node, line) for node, line in lines if node in variables or node in names or rank(node) > 0]
        lines = merged(lines, variables, names)
    if len(lines) <= MAX_LINES:
        return lines
    room = MAX_LINES - sum(node in variables for node, _ in lines)  # every listed variable keeps its line
    others = set([k for k, (node, _) in enumerate(lines) if node not in variables][-room:] if room > 0 else [])
    return [pair for k, pair in enumerate(lines) if pair[0] in variables or k in others]


def _closing(lines: list, variables: tuple) -> list:
    """The lines, the variables' own last and in the order listed: grad(L, [W, b]) closes with ∂L/∂W, then
    ∂L/∂b, one line per listed variable (no line below uses a variable's adjoint, so the pass reads the same).
    A variable listed twice (grad(L, [W, W])) has one line: the pass computes ∂L/∂W once; the value lists
    it twice, as jax.grad with argnums=(0, 0) does (docs/explain.md)."""
    own = {node: line for node, line in lines if node in variables}
    listed = dict.fromkeys(variables)
    return [line for node, line in lines if node not in variables] + [own[v] for v in listed if v in own]


def _passes_on(arriving, tidied, adjoint) -> bool:
    """One user, a sum, whose adjoint arrives unchanged: nothing to show."""
    return len(arriving) == 1 and isinstance(arriving[0][0], sp.Add) and tidied[arriving[0][0]] == adjoint


def _fit(node, raw, tidied, named) -> bool:
    """The instantiated rule is worth a step of its own when the line, it and its tidied form, reads in one line."""
    return _width(node, named) + _width(raw, named) + _width(tidied, named) + 12 <= LINE_CHARACTERS


def _width(expr, named) -> int:
    """Characters of a formula as the lines show it: the user's names for their bindings, a letter for a stop;
    past PRINTED_NODES tree nodes, more than a line (counted, not printed: a LayerNorm head's raw adjoints
    print to tens of thousands of characters, and printing them took most of its 40 s)."""
    shown = rebuild(expr, named)
    stops = {s: _stand_in("c", s) for s in outermost_stops([shown]) if long_stop(s)}  # a letter, as layout names it
    adjoints = {a: _stand_in(f"d{a._loss}d{a.name}", a) for a in dag_atoms(shown, AdjointName)}  # ∂L/∂z as it prints
    shown = rebuild(shown, {**stops, **adjoints})
    if tree_size(shown, cap=PRINTED_NODES + 1) > PRINTED_NODES:
        return LINE_CHARACTERS + 1
    return len(to_source(shown, sg=True))


def _reads_differently(raw, shown) -> bool:
    """Do the two formulas print differently? Two different formulas print differently, so only small ones
    are printed to compare (a formula past PRINTED_NODES tree nodes costs its whole tree to print)."""
    if raw == shown:
        return False
    if tree_size([raw, shown], cap=2 * PRINTED_NODES + 1) > 2 * PRINTED_NODES:
        return True
    return to_source(raw) != to_source(shown)


def _stand_in(name: str, part):
    """A name of the part's shape to measure a line by: a scalar Symbol in place of a matrix would make
    `c @ v` a scalar times a vector, which the spelling refuses (the InfoNCE gradient's ShapeError)."""
    return Var(name, shape_of(part)) if shape_of(part) else sp.Symbol(name, real=True)


def _uses(expr) -> dict:
    """For each subexpression, the (user, argument position) pairs that use it, output first."""
    dag = build_dag([expr])
    uses: dict = {}
    for i in reversed(range(len(dag.nodes))):
        for k, child in enumerate(dag.children[i]):
            uses.setdefault(dag.nodes[child], []).append((dag.nodes[i], k))
    return uses


def tensor_explanation(request, depth=None, names=()):
    """The Explanation of a grad of a tensor formula, at any size: the reverse pass as its
    derivation (no component steps), one ledger entry per stop, and the result it derives.

    names are (value, name) pairs: the user's own bindings (z1 = W @ x1) that the
    lines show by their names, each introduced by a let line; when none occurs,
    the tensor parts used more than once are named (explain/tensor/names.py)."""
    named: list = []
    loss = loss_of(request)  # the loss's letter, chosen once for the request (explain/loss_letter.py)
    expr = normal_form(request.expr, named)
    users = user_names(expr, names)
    shown = users or repeated_parts(expr, _taken(expr, names, (), loss))
    aliases = tidied_names(users)
    derivation = tensor_derivation(expr, request.wrt, request.result, dict(shown), loss)
    if named:
        derivation = replace(derivation, lines=(_named(expr, named, loss), *derivation.lines))
    derivation = as_written(derivation, expr)
    entries = tensor_ledger(expr, request.wrt, derivation.result)
    compact = len(regrouped(entries, getattr(request, "written", None))) > GROUPED  # no adjoint arriving said
    measured = _measured(derivation, () if compact else entries, expr)
    constants = constant_names([[expr], *measured], _taken(expr, names, shown, loss))  # data: a name and a shape
    shown = shown + constants
    walls = wall_names(measured, _taken(expr, names, shown, loss), _adjoints(derivation), shown + aliases)
    whole = next((str(name) for value, name in names if value in (request.expr, expr)), "")
    request = replace(request, named=whole) if whole else request  # the title's loss by its name when long
    context = _Context(request, depth, derivation, entries, constants, users, aliases, expr)
    explanation = _explained(context, _in_order(shown + walls))
    unread = _unread(walls, explanation)
    if not unread:
        return explanation
    return _explained(context, _in_order(shown + tuple(w for w in walls if w not in unread)))


@dataclass(frozen=True)
class _Context:
    """What the pass's Explanation is made of besides its names: the derivation, its ledger, the data arrays
    named by shape (constants), the user's bindings and their tidied forms (aliases), the formula."""
    request: object
    depth: object
    derivation: object
    entries: tuple
    constants: tuple
    users: tuple
    aliases: tuple
    expr: object


def _explained(context: _Context, shown):
    """The Explanation of the pass with its names (shown: (value, name) pairs): a let line for each a printed
    line reads (explain/tensor/lets.read_lets), the data arrays said by name and shape, first."""
    from gradlang.explain.explanation import Explanation, said

    request, wrt, constants = context.request, context.request.wrt, context.constants
    summary = "; ".join(p for p in (SUMMARY, phrase(context.entries)) if p)
    removed = [removed_value(e) for e in context.entries if e.verdict in ("blocking", "inventing")]
    aliases = context.aliases + forward_names(context.expr, shown, shown + context.aliases)
    display = shown + tuple((value, name) for value, name in aliases if value not in dict(shown))
    first = {}  # a name given to two forms of one part (tensor/names.wall_names) has one let, its first
    for value, name in shown:
        first.setdefault(name, value)
    lets = tuple(Let(name, formula(shorten(value, {v: n for v, n in display if n != name and v != value})))
                 for value, name in shown if (value, name) not in constants and first[name] == value)
    derived, blocked = _gathered(context.derivation.result, removed, wrt)
    own = frozenset(str(name) for _, name in context.users)
    derivation = replace(context.derivation, result=derived, display=display, lets=lets, own=own)
    explanation = read_lets(said(Explanation(request, summary, (), (), blocked, context.entries, depth=context.depth,
                                             derived=derived if isinstance(wrt, tuple) else full(derived, shape_of(wrt)),
                                             vector=derivation)), context.users, wrt)
    vector = explanation.vector
    return replace(explanation, vector=replace(vector, lets=constant_lets(constants) + tuple(vector.lets)))


def _unread(walls: tuple, explanation) -> set:
    """The wall names no printed formula holds: a name chosen to shorten a ledger entry's adjoint that stays too
    long even so (the ledger writes it ā, a formula of so many characters) is a let line no line reads."""
    from gradlang.expr.walk import dag_nodes

    vector = explanation.vector
    printed = [p for line in vector.lines for p in (*line.lhs, *(part for side in line.rhs for part in side))]
    printed += [vector.result, explanation.request.expr, *(v for v, n in vector.display if (v, n) not in walls)]
    printed += [p for sentence in explanation.sentences for n in sentence for p in n.parts]
    printed += [p for n in explanation.identity for p in getattr(n, "parts", ())]
    read = set(dag_nodes([p for p in printed if isinstance(p, sp.Basic)]))
    kept = {(v, n) for v, n in walls if v in read}
    while True:  # a kept name's let reads the names inside its value
        inside = set(dag_nodes([v for v, _ in kept])) - {v for v, _ in kept}
        more = {(v, n) for v, n in walls if v in inside} - kept
        if not more:
            return set(walls) - kept
        kept |= more


def _in_order(shown) -> tuple:
    """The names in an order a reader can follow: each let after the lets its value uses (a wall's δ is
    chosen first but may hold a part named after it: δ = (sign(u - x[2]) + 1)/2 before u = max(x[0], x[1])).
    Which named value holds which is read off one DAG of them all (I-JEPA's lets share most of their parts:
    a walk per pair took minutes)."""
    holds = _named_inside([value for value, _ in shown])
    remaining, ordered = list(shown), []
    while remaining:
        values = {value for value, _ in remaining}
        free = next((k for k, (value, _) in enumerate(remaining) if not (holds[value] & values) - {value}), 0)
        ordered.append(remaining.pop(free))
    return tuple(ordered)


def _named_inside(values: list) -> dict:
    """{value: the values of the list it holds (itself too)}, one pass over their DAG."""
    dag = build_dag(values)
    wanted = set(values)
    inside: list = []
    for node, kids in zip(dag.nodes, dag.children):
        held = frozenset().union(*(inside[k] for k in kids))
        inside.append(held | {node} if node in wanted else held)
    return {node: inside[k] for k, node in enumerate(dag.nodes) if node in wanted}


def as_written(derivation, expr):
    """The derivation with each stop as the formula writes it: the rewrites tidy inside a stop too
    (sg(x - p w (1 − tanh²x)) as sg(p w (tanh²x − 1) + x)), which the stop's letter would not match."""
    back = _written_stops(expr)
    if not back:
        return derivation
    again = lambda part: rebuild(part, back) if isinstance(part, sp.Basic) else part  # noqa: E731
    lines = tuple(replace(line, lhs=tuple(map(again, line.lhs)), rhs=tuple(tuple(map(again, side)) for side in line.rhs))
                  for line in derivation.lines)
    result = tuple(map(again, derivation.result)) if isinstance(derivation.result, tuple) else again(derivation.result)
    return replace(derivation, lines=lines, result=result)


def _written_stops(expr) -> dict:
    """{the stop as the rewrites tidy it: the stop as written}, for the stops the rewrites change."""
    written = {tidy(stop): stop for stop in outermost_stops([expr])}
    return {tidied: stop for tidied, stop in written.items() if tidied != stop}


def _measured(derivation, entries, expr) -> list:
    """What a reader reads on one line each: a pass line's sides, a ledger entry's adjoint (after its words;
    none in a compact ledger, which leaves the adjoints to JSON),
    the form that shows an adjoint is 0 where the entry shows one (`s[0]*sum(s) - s[0] = 0  (Σₖ sₖ = 1)`)."""
    lines = [[*(p.plain if isinstance(p, Math) else p for p in line.lhs),  # ∂L/∂( and ) take columns too
              *(p for side in line.rhs for p in side if isinstance(p, sp.Basic))] for line in derivation.lines]
    back = _written_stops(expr)
    lines += [["stop c: cuts the path from x; adjoint arriving: ", rebuild(_arriving(e), back)]
              for e in entries if e.verdict != "irrelevant"]
    return lines


def _arriving(entry):
    """The adjoint arriving at a stop as its ledger line writes it: the untidied form that shows it is 0, else
    its value."""
    from gradlang.explain.ledger.components import adjoint_value

    zero_form = getattr(entry, "zero_form", None)
    shown = zero_form[0] if zero_form else None
    return shown if isinstance(shown, sp.Basic) else adjoint_value(entry)


def _adjoints(derivation) -> set:
    """The adjoints the pass computed: each line's last side."""
    return {side[0] for line in derivation.lines for side in line.rhs[-1:] if len(side) == 1}


def _taken(expr, names, shown, loss: str = LETTER) -> set:
    """Every name a new one must not be: the session's (names.bound: all it has bound, a declared z not in
    the formula too), the formula's, those already shown, a stop's letter, the loss's (L and the one chosen)."""
    return ({n.name for _, n in (*names, *shown)} | {s.name for s in dag_atoms(expr, sp.Symbol)}
            | {"c", "m", LETTER, loss} | set(getattr(names, "bound", ())))


def _gathered(derived, removed: list, wrt) -> tuple:
    """(the derived gradient, what the stops removed) in the shape of the result: for a grad by a list of
    scalars a vector, for a list that holds a tensor a list of gradients (each of its variable's shape)."""
    if not isinstance(wrt, tuple):
        return derived, (tidy(sp.Add(*removed)) if removed else sp.S.Zero)
    if not any(shape_of(v) for v in wrt):  # a grad by a list of scalars: one formula per scalar, as a list
        return sp.Array(derived), sum(removed, sp.Array([0] * len(wrt))).applyfunc(tidy)
    totals = [sp.Add(*(r.entries[k] for r in removed)) for k in range(len(wrt))]
    return TensorList(*derived), TensorList(*(full(tidy(total), shape_of(v)) for total, v in zip(totals, wrt)))


def _named(expr, used, loss: str = LETTER) -> VectorLine:
    """The first line when the expression spells out a builtin: L = the expression with it named."""
    rule = Math("; ".join(r.identity for r in used), r",\ ".join(r.latex for r in used))
    return VectorLine((spelled(loss, "{L}"),), (formula(expr),), (rule,))
