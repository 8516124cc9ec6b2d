"""Names for a derivation's lines: the user's bindings, and the repeated tensor parts a teacher would name.

`z1 = W @ x1` in the program is shown as z1, its adjoint as ∂L/∂z1. When the
program named nothing, a tensor part the expression uses more than once (`P @ x`
in a cosine loss) gets a textbook letter, as the value printer names it: `z`
for a linear map, `s` softmax, `p` sigmoid, `h` tanh, `u` anything else,
numbered when a letter repeats, and never a name the expression or the session
already uses.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.graph import build_dag
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import Var, rank, shape_of

_LETTERS = ((t.MatMul, "z"), (t.SoftmaxOf, "s"))
_FUNCTIONS = {"sigmoid": "p", "tanh": "h"}


def user_names(expr, names) -> tuple:
    """The user's bindings (value, name) that occur inside the expression (not the whole of it)."""
    inside = set(build_dag([expr]).nodes)
    return tuple((value, name) for value, name in names if value in inside and value != expr)


def repeated_parts(expr, taken: set) -> tuple:
    """(value, name) for each tensor part used more than once, outermost last; none when the user named parts."""
    dag = build_dag([expr])
    used = set(taken) | {s.name for s in dag.nodes if isinstance(s, sp.Symbol)}
    return lettered([node for node, users in zip(dag.nodes, dag.parents()) if len(set(users)) > 1], used)


def lettered(nodes, used: set) -> tuple:
    """(value, name) for each of the nodes a reader would name, in order, each a fresh textbook letter."""
    used, chosen = set(used), []
    for node in nodes:
        if _worth(node):
            name = _fresh(_letter(node), used)
            used.add(name)
            chosen.append((node, Var(name, shape_of(node))))
    return tuple(chosen)


def _worth(node) -> bool:
    """A composite tensor a reader would name: not a name, a constant, a stop or a mark over a name."""
    if not isinstance(node, sp.Expr) or isinstance(node, (sp.Symbol, StopGradient, t.Literal)) or not node.args:
        return False
    if isinstance(node, (t.OneHot, t.Eye, t.Ones, t.Zeros, t.Transpose, t.Entry)):
        return False
    return rank(node) > 0 and not (isinstance(node, sp.Mul) and len(node.args) == 2 and node.args[0] == -1)


def _letter(node) -> str:
    for cls, letter in _LETTERS:
        if isinstance(node, cls):
            return letter
    return _FUNCTIONS.get(type(node).__name__.lower(), "u")


def _fresh(letter: str, used: set) -> str:
    if letter not in used:
        return letter
    return next(f"{letter}{k}" for k in range(1, 1000) if f"{letter}{k}" not in used)


# --- walls: a derivation's long lines, shortened by naming what they repeat --------------------------

WIDTH = 88        # characters of gradlang text a line's formulas may take (the rule and `(n)  ` beside them)
MOST_NAMES = 6    # names a derivation introduces for its walls (each is a let line)
_SHORTEST = 10    # characters of a part worth a name


def wall_names(lines: list, taken: set, adjoints=(), known=(), width: int = WIDTH) -> tuple:
    """(value, name) for the parts that make a wall, in the order a reader meets them: while a line is
    wider than `width`, the part it repeats (or another line repeats) that shortens the lines most gets a
    textbook letter (δ for an adjoint the pass sends on, else as `lettered` names it).

    lines are the derivation's lines, each a list of SymPy values printed side by side; a named part's
    own let line is measured too, so a name never hides a wall in its let. `adjoints` are the values the
    pass computed as adjoints; `known` the (value, name) pairs the lines already show by name.
    Deterministic: ties go to the part printed first in source order."""
    used, chosen, names = set(taken), [], dict(known)
    adjoints, spell = set(adjoints), _Spelling()
    for _ in range(MOST_NAMES):
        shown = [[_shorter(v, names) for v in line] for line in lines]
        shown += [[_shorter(value, {k: n for k, n in names.items() if k != value})] for value, _ in chosen]
        wide = [line for line in shown if sum(spell(v) for v in line) > width]
        if not wide:
            break
        part = _best_part(shown, wide, spell)
        if part is None:
            break
        value = _raw_part(part, [*lines, *([v] for v, _ in chosen)], names)
        letter = "δ" if value in adjoints else _letter(value)
        name = _fresh(letter, used)
        used.add(name)
        names[value] = Var(name, shape_of(value)) if shape_of(value) else sp.Symbol(name, real=True)
        chosen.append((value, names[value]))
    return tuple(chosen)


class _Spelling:
    """Characters of a value as the lines print it: a long stop by its letter (layout.py names it), each
    value spelled once, and each part of it once (_Remembering): the parts of a wide line are all spelled
    to choose a name, and a LayerNorm head's lines hold thousands of them, each printed again inside every
    part that holds it (28 s of its 40)."""

    def __init__(self):
        self.known: dict = {}
        self.printer = _remembering()

    def text(self, value) -> str:
        from gradlang.explain.layout import long_stop
        from gradlang.explain.ledger.components import outermost_stops

        if not isinstance(value, sp.Basic):
            return str(value)
        if value not in self.known:
            stops = {s: Var("c1", shape_of(s)) if shape_of(s) else sp.Symbol("c1", real=True)
                     for s in outermost_stops([value]) if long_stop(s)}
            self.known[value] = self.printer.doprint(value.xreplace(stops))
        return self.known[value]

    def __call__(self, value) -> int:
        return len(self.text(value))


def _remembering():
    """gradlang's source printer (to_source's) that prints each formula once: a formula's text depends on it
    alone (its parent adds any parentheses), and equal formulas are the same formula (SymPy 1.14 tells
    2.0*x from 2*x), so a part is looked up, not printed again."""
    from gradlang.expr.source import SourcePrinter

    class _Remembering(SourcePrinter):
        def __init__(self, settings):
            super().__init__(settings)
            self.printed: dict = {}

        def _print(self, expr, **kwargs):
            if kwargs or not isinstance(expr, sp.Basic):
                return super()._print(expr, **kwargs)
            if expr not in self.printed:
                self.printed[expr] = super()._print(expr)
            return self.printed[expr]

    return _Remembering({"order": None, "sg": True})


def _shorter(value, names: dict):
    """The value with the names put in, per distinct node (xreplace walks it as a tree, issue 39)."""
    from gradlang.expr.walk import rebuild

    return rebuild(value, names) if names and isinstance(value, sp.Basic) else value


def _raw_part(part, lines: list, names: dict):
    """The value the lines hold whose spelling with the names is `part`. The part with its names expanded is
    not always that value: SymPy rebuilds 2*delta as 2*pi - 2*pi2, which no line holds, so a name keyed by it
    would never show (and the wall would be named again and again).

    Each distinct part is tried once, in the order a tree walk meets it: a part met again (and all under it)
    did not match the first time. A tree walk tried each shared part at every use: DreamerV3's twohot critic
    spent 11 of its explain's 21 s of CPU here."""
    seen: set = set()
    for line in lines:
        for value in line:
            for node in _distinct_preorder(value, seen):
                if _shorter(node, names) == part:
                    return node
    return _expanded(part, names)


def _distinct_preorder(value, seen: set):
    """The parts of value in preorder (sp.preorder_traversal's order), each part not in `seen` once, and
    nothing under a part already seen."""
    stack = [value] if isinstance(value, sp.Basic) else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        stack.extend(a for a in reversed(node.args) if isinstance(a, sp.Basic))


def _expanded(part, names: dict):
    """The part with the names inside it replaced by what they stand for (the names nest)."""
    back = {name: value for value, name in names.items()}
    return part.xreplace(back) if back else part


def _best_part(shown: list, wide: list, spell):
    """The composite part whose naming saves the most characters: repeated anywhere and found in a wide line;
    else the longest part of a wide line that leaves it a reasonable line of its own."""
    counts: dict = {}
    for line in shown:
        for value in line:
            for node in sp.preorder_traversal(value) if isinstance(value, sp.Basic) else ():
                counts[node] = counts.get(node, 0) + 1
    inside = {node for line in wide for v in line if isinstance(v, sp.Basic) for node in sp.preorder_traversal(v)}
    candidates = [node for node in inside if _nameable(node) and spell(node) >= _SHORTEST]
    if not candidates:
        return None
    whole = {v for line in shown for v in line}  # a whole line named would only move the wall to its let
    saving = lambda n: ((counts[n] - 1) * spell(n), -spell(n) if n in whole else spell(n), spell.text(n))  # noqa: E731
    best = max(candidates, key=saving)
    return best if counts[best] > 1 or best not in whole else None


def _nameable(node) -> bool:
    """A composite value a reader would call by a letter: not a name, a number, a stop or a bare mark."""
    if not isinstance(node, sp.Expr) or node.is_Atom or not node.args or isinstance(node, StopGradient):
        return False
    if isinstance(node, (t.OneHot, t.Eye, t.Ones, t.Zeros, t.Literal)):
        return False
    return not (isinstance(node, sp.Mul) and len(node.args) == 2 and node.args[0] == -1)
