"""Names for a derivation's lines: the user's bindings, and the repeated tensor parts a teacher would name.

`z1 = W @ x1` in the program is shown as z1, its adjoint as ∂L/∂z1. When the
program named nothing, a tensor part the expression uses more than once (`P @ x`
in a cosine loss) gets a textbook letter, as the value printer names it: `z`
for a linear map, `s` softmax, `p` sigmoid, `h` tanh, `u` anything else,
numbered when a letter repeats, and never a name the expression or the session
already uses.
"""

from __future__ import annotations

from collections import Counter

import sympy as sp

from gradlang.expr.floated import Forms
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import rebuild
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import Var, rank, shape_of

_LETTERS = ((t.MatMul, "z"), (t.SoftmaxOf, "s"))
_FUNCTIONS = {"sigmoid": "p", "tanh": "h"}


def user_names(expr, names) -> tuple:
    """The user's bindings (value, name) that occur inside the expression (not the whole of it), each as the
    expression holds it, one name per value. A value with a float in it is folded (core/floats.py): DreamerV3's
    KL balance `log(0.99*t6 + 0.0025)` holds t5 = exp(t3 - bc(t4)) as exp(t3 - 1.0*bc(t4)), and t6 = t5/sum(t5)
    inside SymPy's flat product 0.99*t5*sum(t5)^-1; such a binding is found by its numbers as floats, a product
    by its factors (shown by its name where they are: layout.shorten). A sum also counts where SymPy flattened
    it into a larger one (TD3's target = r + gamma*sg(u) in (q1(s) - target)^2: the printers write it back,
    explain/layout.named_sums). A value bound twice (a traced `t4 = t3 - 0.0`, a second policy pass over the
    same observations) is shown by its last name, as the lines show it, so no let line repeats another's
    formula under a name no line uses."""
    dag = build_dag([expr])
    inside = set(dag.nodes)
    flat = [node for node in inside if isinstance(node, (sp.Add, sp.Mul))]
    found = None
    last: dict = {}
    for value, name in names:
        node = value if value in inside else None
        if node is None:
            found = found or _Floated(dag, [v for v, _ in names])
            node = found(value)
        if node is None and flattened_into(value, flat, found.form if found else None):
            node = value
        if node is not None and node != expr:
            last[node] = name
    return tuple(last.items())


class _Floated:
    """The expression's parts by their form with their exact numbers as floats (expr/floated.py)."""

    def __init__(self, dag, values: list):
        self.form = Forms()
        self.nodes: dict = {}
        for node in dag.nodes:
            self.nodes.setdefault(self.form(node), node)
        self.products = [(node, Counter(self.form(a) for a in node.args)) for node in dag.nodes
                         if isinstance(node, sp.Mul)]

    def __call__(self, value):
        """The part of the expression that is `value` with its numbers as floats: a node, or the product of
        some factors of one of its products; None if there is none."""
        if not isinstance(value, sp.Basic):
            return None
        formed = self.form(value)
        if formed in self.nodes:
            return self.nodes[formed]
        if not isinstance(formed, sp.Mul):
            return None
        wanted = Counter(formed.args)
        for node, factors in self.products:
            if sum(wanted.values()) < len(node.args) and all(factors[f] >= n for f, n in wanted.items()):
                taken, left = [], Counter(wanted)
                for arg in node.args:
                    if left[self.form(arg)] > 0:
                        left[self.form(arg)] -= 1
                        taken.append(arg)
                return sp.Mul(*taken)
        return None


def flattened_into(value, flat, form=None) -> bool:
    """A sum (or product) of composite parts whose parts (a sum's, or their negatives) are some of the parts
    of a larger sum (product) of the expression: SymPy flattened it there (DiCE's magic = exp(u)/sum(exp(theta))
    in -R*magic). With `form` (expr/floated.Forms, for a formula with a float in it) the parts are compared
    by their forms: double DQN's target = r + 0.99*sg(…) is -1.0*r - 0.99*sg(…) inside x - target."""
    if not isinstance(value, (sp.Add, sp.Mul)) or all(part.is_Atom for part in value.args):
        return False
    form = form or (lambda part: part)
    mine = {form(part) for part in _parts(value)}
    negated = {form(part) for part in (-value).args} if isinstance(value, sp.Add) and isinstance(-value, sp.Add) else mine
    for node in flat:
        if type(node) is type(value) and len(_parts(node)) > len(mine):
            theirs = {form(part) for part in _parts(node)}
            if mine <= theirs or negated <= theirs:
                return True
    return False


def _parts(node) -> set:
    """A sum's terms; a product's factors but its number (-g/10 holds g = -sigmoid(…)*w: SymPy's subs finds it)."""
    return set(node.args) if isinstance(node, sp.Add) else {a for a in node.args if not a.is_Number}


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

    lines are the derivation's lines, each a list of SymPy values printed side by side; every let line is
    measured too, the user's (VQ-VAE's D = sum((expand_dims(Z, 3) … − E …)^2, axis=4), 111 columns) as
    each part named here, so a name never hides a wall in its let. `adjoints` are the values the
    pass computed as adjoints; `known` the (value, name) pairs the lines already show by name.
    Deterministic: ties go to the part printed first in source order. Every walk is over the lines' DAG,
    each distinct part once (_Shown): the lines of a pass share their parts, and walking them as trees per
    candidate cost MoCo v3's explain 54 of its 68 s of CPU."""
    used, chosen, names = set(taken), [], dict(known)
    lets = [value for value, _ in known if not isinstance(value, t.Literal)]  # a constant's let says its shape
    adjoints, spell = set(adjoints), _Spelling()
    for _ in range(MOST_NAMES):
        view = _Shown([*lines, *([v] for v in lets)], names, lets)
        wide = [k for k, line in enumerate(view.lines) if sum(spell(v) for v in line) > width]
        if not wide:
            break
        part = _best_part(view, wide, spell)
        if part is None:
            break
        value = view.raw(part, names)
        twin = _twin(value, part, view, lets, names)
        if twin is not None:  # a let's value in another form that reads alike: its name, no second let
            names[value] = twin
        else:
            letter = "δ" if value in adjoints else _letter(value)
            name = _fresh(letter, used)
            used.add(name)
            names[value] = Var(name, shape_of(value)) if shape_of(value) else sp.Symbol(name, real=True)
        chosen.append((value, names[value]))
        lets.append(value)
        # the same part held in another form the names print alike (SimSiam's 0.25*sum as a float's -1.0*…):
        # one name for both, one let (its first), so no let repeats another's formula under a second letter
        chosen += [(other, names[value]) for other in view.order if other != value and view.of[other] == part]
        names.update((other, names[value]) for other, _ in chosen if other not in names)
    return tuple(chosen)


def _twin(value, part, view, lets: list, names: dict):
    """The name of a let's value that reads as `value` does once both are written with the names (part: the
    value so written), else None: the logits inside a cross-entropy's adjoint are the user's t65 = einsum(…)
    with their numbers tidied otherwise (0.25*outer(…) for 1.0*outer(…, 0.25*…)), and a line reads t65, not a
    second letter for the same formula."""
    for other in lets:
        if other != value and other in names and other.args and shape_of(other) == shape_of(value):
            if other.func(*[view.of.get(a, a) for a in other.args]) == part:
                return names[other]
    return None


class _Shown:
    """The lines as printed with the names, each distinct part rebuilt once (a DAG walk, not xreplace's
    tree walk): `lines` the shown lines (a named part's own let line shows it spelled out, its name kept
    for the parts inside it), `of` each raw part's shown form, `order` the raw parts in the order a
    preorder walk of the lines first meets them."""

    def __init__(self, raw_lines: list, names: dict, lets: set):
        from gradlang.explain.layout import named_forms

        values = [v for line in raw_lines for v in line if isinstance(v, sp.Basic)]
        dag, built = named_forms(values, names)
        self.of = dict(zip(dag.nodes, built))
        self.order = _preorder(dag, len(values))
        self.lines = [[self._shown(v, names, k >= len(raw_lines) - len(lets)) for v in line]
                      for k, line in enumerate(raw_lines)]

    def _shown(self, value, names: dict, own_let: bool):
        """A value as its line prints it; a let's own value spelled out (its parts by their names)."""
        if not isinstance(value, sp.Basic):
            return value
        if own_let and value in names and value.args:
            return value.func(*[self.of[a] for a in value.args])
        return self.of[value]

    def raw(self, part, names: dict):
        """The value the lines hold whose spelling with the names is `part`. The part with its names
        expanded is not always that value: SymPy rebuilds 2*delta as 2*pi - 2*pi2, which no line holds, so a
        name keyed by it would never show (and the wall would be named again and again)."""
        found = next((node for node in self.order if self.of[node] == part), None)
        return found if found is not None else _expanded(part, names)


def _preorder(dag, roots: int) -> list:
    """The distinct nodes of a DAG in the order a preorder walk of its first roots first meets each."""
    seen, order = set(), []
    stack = list(reversed(dag.roots[:roots]))
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        order.append(dag.nodes[i])
        stack.extend(reversed(dag.children[i]))
    return order


class _Spelling:
    """Characters of a value as the lines print it: a long stop by its letter (layout.py names it), each
    value spelled once, and each part of it once (_Remembering): the parts of a wide line are all spelled
    to choose a name, and a LayerNorm head's lines hold thousands of them, each printed again inside every
    part that holds it (28 s of its 40)."""

    def __init__(self):
        self.known: dict = {}
        self.long: dict = {}  # stop -> is it long (layout.long_stop), asked once per stop
        self.printer = _remembering()

    def text(self, value) -> str:
        from gradlang.explain.layout import long_stop
        from gradlang.explain.ledger.components import outermost_stops

        if not isinstance(value, sp.Basic):
            return str(value)
        if value not in self.known:
            stops = {s: Var("c1", shape_of(s)) if shape_of(s) else sp.Symbol("c1", real=True)
                     for s in outermost_stops([value]) if self._long(s, long_stop)}
            self.known[value] = self.printer.doprint(rebuild(value, stops))
        return self.known[value]

    def _long(self, stop, long_stop) -> bool:
        if stop not in self.long:
            self.long[stop] = long_stop(stop)
        return self.long[stop]

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


def _expanded(part, names: dict):
    """The part with the names inside it replaced by what they stand for (the names nest)."""
    back = {name: value for value, name in names.items()}
    return rebuild(part, back) if back else part


def _best_part(view, wide: list, spell):
    """The composite part whose naming saves the most characters: repeated anywhere and found in a wide line;
    else the longest part of a wide line that leaves it a reasonable line of its own. A part's count is how
    often the lines print it (its uses as a tree), found on the DAG."""
    shown = [v for line in view.lines for v in line if isinstance(v, sp.Basic)]
    dag = build_dag(shown)
    counts = _printed_counts(dag)
    inside = build_dag([v for k in wide for v in view.lines[k] if isinstance(v, sp.Basic)]).nodes
    candidates = [node for node in inside if _nameable(node) and spell(node) >= _SHORTEST]
    if not candidates:
        return None
    count = lambda n: counts[dag.index[n]]  # noqa: E731
    whole = set(shown)  # a whole line named would only move the wall to its let
    saving = lambda n: ((count(n) - 1) * spell(n), -spell(n) if n in whole else spell(n), spell.text(n))  # noqa: E731
    best = max(candidates, key=saving)
    return best if count(best) > 1 or best not in whole else None


def _printed_counts(dag) -> list:
    """How many times each node is printed when the roots are printed as trees: a root once per time it is
    a root, a node as often as its users are printed, times its uses in each."""
    counts = [0] * len(dag.nodes)
    for r in dag.roots:
        counts[r] += 1
    for i in reversed(range(len(dag.nodes))):
        for k in dag.children[i]:
            counts[k] += counts[i]
    return counts


def _nameable(node) -> bool:
    """A composite value a reader would call by a letter: not a name, a number, a stop or a bare mark."""
    if not isinstance(node, sp.Expr) or node.is_Atom or not node.args or isinstance(node, StopGradient):
        return False
    if isinstance(node, (t.OneHot, t.Eye, t.Ones, t.Zeros, t.Literal)):
        return False
    return not (isinstance(node, sp.Mul) and len(node.args) == 2 and node.args[0] == -1)
