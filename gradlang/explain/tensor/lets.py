"""The let block of a tensor pass: the names a printed line reads, and the user's names as the rewrites tidy them.

A pass names the user's bindings (t30 = einsum(…), z1 = W @ x1) and the parts it names itself (δ, u). The
let block introduces only those a reader meets: a name a pass line or the value reads, then each name those
lets read in turn. A stop is a constant to the pass: a stop the user bound (t36 = sg(…)) is named, and what
its argument reads is not spelled out in the block (the program's own lines say it), unless a line reads it
too. So BYOL's stopped target network, or the lambda return inside DreamerV3's sg(adv), is one let each, not
the forty bindings inside them. The ledger may write a stopped value with the user's names (they are the
program's); a name the pass made up is introduced wherever it is read, the ledger too.

The lines hold the adjoints as the bounded rewrites tidy them, and the rewrites tidy the forward values inside
too (BYOL's normalised layer (h − mean)·rsqrt(var + ε) with its coefficients folded): the user's binding is
found there by its tidied form as well, so a line reads t17, not t17's formula under a made-up letter.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from gradlang.derive.tensor.rewrite import Tidier
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.walk import dag_nodes


def tidied_names(users) -> tuple:
    """(the value as the rewrites tidy it, the user's name) for each binding the rewrites change: the lines'
    adjoints hold the tidied form (one Tidier: the bindings share their parts, each tidied once)."""
    tidy, taken = Tidier(), {value for value, _ in users}
    aliases: dict = {}
    for value, name in users:
        tidied = tidy(value)
        if tidied != value and tidied not in taken:
            aliases.setdefault(tidied, name)
    return tuple(aliases.items())


def forward_names(expr, named, known=()) -> tuple:
    """(a part of the formula, the name of its tidied form) for each part the lines write raw (a line's left
    side is the formula's own node: ∂L/∂max(sum(t18^2, 1), 1e-12)) whose tidied form has a name (u, a wall's)."""
    values, tidy = dict(named), Tidier()
    taken = set(values) | {value for value, _ in known}
    aliases: dict = {}
    for node in dag_nodes([expr]):
        if node.args and node not in taken and not isinstance(node, sp.Symbol):
            name = values.get(tidy(node))
            if name is not None:
                aliases.setdefault(node, name)
    return tuple(aliases.items())


def read_lets(explanation, users, wrt) -> object:
    """The explanation with the let lines a printed line reads (see the module's docstring); the display
    names stay all, so every line prints as before."""
    from gradlang.explain.layout import Form

    vector = explanation.vector
    if vector is None or not vector.lets:
        return explanation
    form, lets = Form(explanation), {_spelled(let.name): let for let in vector.lets}
    own = {_spelled(name): value for value, name in users}
    made = set(lets) - set(own)
    read = set()
    for value in _printed_by_pass(explanation):
        read |= _names(form(value), lets)
    for value, stopped in _printed_by_ledger(explanation, set(own)):
        read |= _names(form(value), made if stopped else lets)
    variables = set(wrt) if isinstance(wrt, tuple) else {wrt}
    queue = sorted(read)
    while queue:
        name = queue.pop()
        constant = name in own and not _reaches(own[name], variables)  # a stop, or a value of stops and data
        found = set().union(*(_names(p, made if constant else lets) for p in lets[name].value if isinstance(p, sp.Basic)))
        queue += sorted(found - read)
        read |= found
    kept = _in_order([let for let in vector.lets if _spelled(let.name) in read])
    return replace(explanation, vector=replace(vector, lets=kept)) if kept != vector.lets else explanation


def _reaches(value, variables: set) -> bool:
    """Does a path from a variable reach the value, other than through a stop?"""
    stack, seen = [value], set()
    while stack:
        node = stack.pop()
        if node in variables:
            return True
        if node in seen or isinstance(node, StopGradient) or not isinstance(node, sp.Basic):
            continue
        seen.add(node)
        stack.extend(node.args)
    return False


def _in_order(lets: list) -> tuple:
    """The lets in their order, each moved after the lets it reads: a binding may read a name the pass made up
    for a part of it (t36 = t9*outer(1/sqrt(u1), ones(3)) once u1 = max(u3, 1e-12) is named), which then comes
    just before it."""
    by_name = {_spelled(let.name): let for let in lets}
    ordered: dict = {}

    def put(let, open_: set) -> None:
        name = _spelled(let.name)
        if name in ordered or name in open_:  # placed, or a cycle: as it comes
            return
        reads = set().union(*(_names(p, set(by_name) - {name}) for p in let.value if isinstance(p, sp.Basic)))
        for other in lets:
            if _spelled(other.name) in reads:
                put(other, open_ | {name})
        ordered[name] = let

    for let in lets:
        put(let, set())
    return tuple(ordered.values())


def _printed_by_pass(explanation) -> list:
    """The values the pass prints: its lines' sides and the value under it."""
    vector = explanation.vector
    sides = [p for line in vector.lines for p in (*line.lhs, *(q for side in line.rhs for q in side))]
    return [p for p in (*sides, explanation.derived) if isinstance(p, sp.Basic)]


def _printed_by_ledger(explanation, own: set) -> list:
    """(value, stopped) for each value the ledger reads, each sentence's and the closing identity's; stopped
    when it is what a stop stops, written after "sg(" (the stop's insides, which a line does not read). A
    stop's own name in its head, `t5 = sg(…)`, is said there: not read; nor a compact entry's `stop t33` or `the same
    stop as t33`, the user's own name for a stop (own: the program binds it, as MoCo v3's `stop t21`)."""
    notes = [*(n for sentence in explanation.sentences for n in sentence), *explanation.identity]
    found = []
    for parts in (getattr(n, "parts", ()) for n in notes):
        spelled = [getattr(p, "plain", None) for p in parts]
        for k, part in enumerate(parts):
            if k > 0 and parts[k - 1] in ("stop ", ": the same stop as ") and _spelled(part) in own:
                continue
            if isinstance(part, sp.Basic) and spelled[k + 1:k + 3] != [" = ", "sg("]:
                found.append((part, k > 0 and spelled[k - 1] == "sg("))
    return found


def _names(value, among) -> set:
    """The names among `among` that the value, as printed, holds."""
    if not isinstance(value, sp.Basic):
        return set()
    return {_spelled(n) for n in dag_nodes([value]) if isinstance(n, sp.Symbol) and _spelled(n) in among}


def _spelled(name) -> str:
    return getattr(name, "name", None) or str(name)
