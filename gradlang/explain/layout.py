"""From step records to what a reader sees: folded, numbered, deduplicated, depth-limited.

All four renderers draw the same `Node` trees, so they cannot disagree:
trivial steps (d/dx x = 1, d/dx c = 0) are folded into their parent, a
sub-derivation met before is shown once and referred to by its number, and
below the depth limit steps are counted, not shown. Long stopped
subexpressions get short names (`m` for a stopped max, else `c`; `m₁`, `c₂`, …)
listed once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.expr.functions import Maximum, Minimum
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.values import elements, is_scalar, to_symbolic
from gradlang.explain.ledger.arithmetic import in_builtins
from gradlang.explain.ledger.components import outermost_stops
from gradlang.explain.ledger.written import named_stops
from gradlang.explain.own_lets import said_in_own_lets
from gradlang.explain.vector.lift import whole_name
from gradlang.explain.scalar.steps import Step, is_trivial, walk
from gradlang.explain.text import plain
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import dag_atoms, dag_has, dag_nodes, tree_size

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_LONG = 12
# rules that pass a zero from a stop up unchanged (folded when the stop was shown)
_THROUGH = {"stop_gradient", "sum", "constant multiple", "product", "chain"}  # characters of a stopped expression worth naming


@dataclass(frozen=True)
class Node:
    """One shown step: its number ("1.2"), nesting level, and what is left out."""

    number: str
    level: int
    step: Step
    children: tuple = ()
    see: str = ""      # the number of the identical step shown before
    alike: bool = False  # see names a step by another variable: the same rules, the same result
    stopped: str = ""  # zero only through stops already shown: the number of the first one
    hidden: int = 0    # steps below the depth limit


def visible(step: Step) -> list:
    """The substeps worth a line of their own."""
    return [s for s in step.substeps if not is_trivial(s)]


def _count(step: Step) -> int:
    return sum(1 + _count(s) for s in visible(step))


class _Numberer:
    def __init__(self, depth):
        self.depth = depth
        self.seen: dict = {}

    def node(self, step: Step, number: str, level: int) -> Node:
        key = (step.expr, step.variable)
        subs = visible(step)
        if subs and key in self.seen:
            return Node(number, level, step, see=self.seen[key])
        if (subs or step.rule == "stop_gradient") and _alike(step) in self.seen:  # a Hessian's d/db after its d/da
            self.seen.setdefault(key, number)
            return Node(number, level, step, see=self.seen[_alike(step)], alike=True)
        self.seen.setdefault(key, number)
        self.seen.setdefault(_alike(step), number)
        stop = self._shown_stop(step)
        if subs and stop:
            return Node(number, level, step, stopped=stop)
        if self.depth is not None and level >= self.depth:
            return Node(number, level, step, hidden=_count(step))
        children = tuple(self.node(s, f"{number}.{i}", level + 1) for i, s in enumerate(subs, 1))
        return Node(number, level, step, children)


    def _shown_stop(self, step: Step) -> str:
        """For a zero step whose only dependence is through stops already shown, the first one."""
        if step.result != 0 or step.rule == "stop_gradient":
            return ""
        stops = [s for s in walk(step) if s.rule == "stop_gradient"]
        if not stops or any(not is_trivial(s) and s.rule not in _THROUGH for s in walk(step)):
            return ""
        numbers = [self.seen.get((s.expr, s.variable)) for s in stops]
        return numbers[0] if all(numbers) else ""


def _alike(step: Step) -> tuple:
    """What a step by another variable must share to be shown by reference: the rule, expression and result of
    every step of its visible walk (exp(a + b + c) by a and by b: the chain rule to exp(a + b + c), then the sum
    rule to 1); the walk is not repeated, the reader is sent to it. A stop met again is 0 by the same words."""
    if step.rule == "stop_gradient":
        return ("stop", step.expr)
    return ("alike", tuple((s.rule, s.expr, s.result) for s in walk(step) if s is step or not is_trivial(s)))


def layout(explanation, depth: int | None = None) -> list[tuple[tuple, Node]]:
    """(component labels, root Node) for every distinct component derivation."""
    depth = explanation.depth if depth is None else depth
    numberer = _Numberer(depth)
    return [(labels, numberer.node(step, str(i), 0))
            for i, (labels, step) in enumerate(zip(explanation.components, explanation.steps), 1)]


def more_line(explanation) -> str:
    """How much the depth limit hides, and how to see it ("" when nothing is hidden)."""
    hidden = sum(n.hidden for _, root in layout(explanation) for n in walk_nodes(root))
    if not hidden:
        return ""
    depth = explanation.depth
    return (f"{hidden} more step{'s' if hidden > 1 else ''} below depth {depth}: "
            f"explain[depth={depth + 1}] (or depth=all) shows them")


def walk_nodes(node: Node):
    """A shown node and every node below it, parents first."""
    yield node
    for child in node.children:
        yield from walk_nodes(child)


def long_stop(stop, names: dict | None = None) -> bool:
    """A stop worth a letter in a derivation: its argument is not a bare name, and it is long as the
    derivation writes it (`names`: the user's names for parts, so sg(pi[0]) is short where pi = softmax(x));
    a short stop is written as itself, sg(1 - b), however many times it is met. A stop of more than twice
    _LONG tree nodes is long without printing it (a node prints as at least half a column): MoCo v3's
    stopped keys are trees of millions of nodes, small as DAGs."""
    if stop.args[0].is_Atom:
        return False
    shown = shorten(stop, names) if names else stop
    return tree_size(shown, cap=2 * _LONG + 1) > 2 * _LONG or len(plain(shown)) > _LONG


def abbreviations(explanation) -> dict:
    """Short names for long stopped subexpressions: {StopGradient(...): Symbol}.

    A stopped max or min is called m, any other stopped value c (m₁, m₂, …
    when there are several); never sg, which is the builtin's name, and
    never a name the expression already uses.
    """
    stops, taken = set(), set()
    vector = explanation.vector
    display = dict(vector.display) if vector is not None else {}
    for e in elements(to_symbolic(explanation.request.expr)):
        found = outermost_stops([e]) if vector is not None else dag_atoms(e, StopGradient)
        stops |= {s for s in found if long_stop(s, display)}
        taken |= {str(s) for s in dag_atoms(e, sp.Symbol)}
    for root in explanation.steps:
        for step in walk(root):
            stops |= {s for s in dag_atoms(step.expr, StopGradient) if long_stop(s, display)}
    chosen = dict(vector.names) if vector is not None else {}
    shown = {value for value, _ in (vector.display if vector is not None else ())}
    stops -= set(chosen) | shown | {s for s in stops if s.args[0] in shown}  # sg(z_e): the user's name says it
    stops -= set(named_stops(explanation.request)) if vector is None else set()  # sg(x_fgsm[0]): by the Form
    ordered = sorted(stops, key=lambda s: (len(plain(s)), plain(s)))
    letters = [_letter(s) for s in ordered]
    names = dict(chosen)
    for stop, letter in zip(ordered, letters):
        alone = letters.count(letter) == 1 and letter not in taken
        number = sum(1 for other in names.values() if other.name.startswith(letter)) + 1
        names[stop] = _shaped(stop, letter if alone else letter + str(number).translate(_SUBSCRIPTS))
    return {**names, **_tidied_aliases(names, vector)}  # a legend lists each name once: the first


def _tidied_aliases(names: dict, vector) -> dict:
    """At the tensor level, each named stop as the rewrites tidy it too: the ledger's adjoint holds
    sg(p w (tanh²x − 1) + x) where the formula wrote sg(x − p w (1 − tanh²x)), the same stop, one letter."""
    if vector is None or "at the tensor level" not in vector.identity:
        return {}
    from gradlang.derive.tensor.rewrite import tidy

    aliases = {tidy(stop): name for stop, name in names.items() if isinstance(stop, StopGradient)}
    return {tidied: name for tidied, name in aliases.items() if tidied not in names}


def _shaped(stop, name: str):
    """The name of a stopped value: a tensor symbol of its shape for a tensor (so printers still know shapes)."""
    from gradlang.expr.tensor.nodes import Var, shape_of

    shape = shape_of(stop)
    return Var(name, shape) if shape else sp.Symbol(name, real=True)


def whole_vectors(explanation) -> dict:
    """Applications to a whole declared vector, to be shown as such: softmax(x)[0], max(x), not [x[0], …].

    Only the vector differentiated by is known to be whole (its declared
    length is the request's). A builtin of one vector argument never
    survives evaluation, so the display form (evaluate=False) is unambiguous.
    """
    request = explanation.request
    wrt = to_symbolic(request.wrt) if request.wrt is not None else None
    xs = tuple(elements(wrt)) if wrt is not None and not is_scalar(wrt) else ()
    name = whole_name(list(xs))
    if name is None:
        return {}
    whole = sp.Symbol(name, real=True)
    mapping = {wrt: whole}
    shown = elements(to_symbolic(request.expr))
    if explanation.vector is not None:
        shown += elements(to_symbolic(explanation.vector.result))
    for e in shown:
        for node in dag_nodes([e]):
            if isinstance(node, sp.Function) and node.args[-len(xs):] == xs and len(node.args) <= len(xs) + 1:
                mapping[node] = node.func(*node.args[:-len(xs)], whole, evaluate=False)
    return mapping


def _letter(stop) -> str:
    return "m" if isinstance(stop.args[0], (Maximum, Minimum)) else "c"


def shorten(value, names: dict):
    """A value with the named subexpressions replaced by their names (xreplace's result, found over the DAG:
    a pass's lines share their parts); a named product also where SymPy flattened it into a longer one, so
    the user's softmax t6 = t5/sum(t5) is t6 in 0.99*t6 (DreamerV3's KL balance), which SymPy holds as
    0.99*t5*sum(t5)^-1."""
    if not names or not isinstance(value, sp.Basic):
        return value
    if value in names:
        return names[value]
    dag, built = named_forms([value], names)
    return built[dag.roots[0]]


def named_forms(values: list, names: dict) -> tuple:
    """(the DAG of the values, each node's form with the names): a named product's factors are in the DAG
    too, so a product that holds them all (a node after them) is written with the product's name."""
    products = sorted(((value, name) for value, name in names.items() if isinstance(value, sp.Mul)),
                      key=lambda pair: -len(pair[0].args))  # the largest first: t13 = t12/sum(t12) before t12
    factors = [a for value, _ in products for a in value.args]
    dag = build_dag([*factors, *values])  # the factors first, so each is written before a product holds it
    dag = replace(dag, roots=dag.roots[len(factors):] + dag.roots[:len(factors)])  # the values' roots first
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        if node in names:
            built.append(names[node])
            continue
        args = [built[k] for k in kids]
        new = node if all(a is b for a, b in zip(args, node.args)) else node.func(*args)
        built.append(_factored(new, products, dag, built) if products and isinstance(new, sp.Mul) else new)
    return dag, built


def _factored(product, products: list, dag, built: list):
    """The product with the first named product whose factors (as the names write them) are some of its
    own written by its name; a factor's power counts as that many factors (DiCE's magic = u/sum(exp(theta))
    in R*u*exp(theta)/sum(exp(theta))^2 is R*magic*exp(theta)/sum(exp(theta)))."""
    powers = _powers(product.args)
    for value, name in products:
        at = [dag.index[a] for a in value.args]
        if max(at) >= len(built):
            continue
        left = _divided(powers, _powers(built[k] for k in at))
        if left is not None and left:
            rest = sp.Mul(*(base ** power for base, power in left.items()))
            return sp.Mul(_factored(rest, products, dag, built) if isinstance(rest, sp.Mul) else rest, name)
    return product


def _powers(factors) -> dict:
    """A product's factors as {base: power}: a power's base and exponent, any other factor to the power 1
    (exp(u) is not E^u: two exponentials stay two factors)."""
    powers: dict = {}
    for factor in factors:
        base, power = factor.args if isinstance(factor, sp.Pow) else (factor, sp.S.One)
        powers[base] = powers.get(base, 0) + power
    return powers


def _divided(powers: dict, part: dict):
    """powers less part, when every power of part is in powers (a number's the same way up and no larger);
    else None."""
    left = dict(powers)
    for base, power in part.items():
        have = left.get(base)
        if have is None or not (have == power or power.is_Number and have.is_Number and have * power > 0
                                and abs(have) > abs(power)):
            return None
        left[base] = have - power
    return {base: power for base, power in left.items() if power != 0}


def named_sums(value, sums: dict, names: dict):
    """The value with each of the user's names for a sum (or product) that the formula flattened into a
    larger one (`sums`, explain/tensor/names.user_names) written as its name there, by SymPy's subs, in a
    value small enough for it: TD3's target = r + gamma*sg(u) in (u1 - target)^2. names: all the names
    the value is written in (the sum is found as the value now writes it)."""
    if not sums or not isinstance(value, sp.Basic) or tree_size(value, cap=_SUBS_NODES + 1) > _SUBS_NODES:
        return value
    for key, name in sums.items():
        key = key.xreplace({k: n for k, n in names.items() if k != key})  # as the value now writes it
        if isinstance(key, (sp.Add, sp.Mul)) and key != value and (
                dag_has(value, *key.args) or isinstance(key, sp.Add) and dag_has(value, *(-key).args)):
            value = _substituted(value, key, name)
    return value


_SUBS_NODES = 200  # tree nodes of a value worth searching for a named sum inside its sums


def _substituted(value, key, name):
    """value with the sum `key` written as its name; a multiple of it too (2*gamma*sg(u) + 2*r - u1 as
    2*target - u1): a term of the sum that is a name stands for the name less the other terms, kept only when
    they all cancel and the value is shorter for it (so r elsewhere, r*x, is never written target - gamma*sg(u))."""
    try:
        value = value.subs(key, name)
        atom = next((term for term in key.args if term.is_Symbol), None) if isinstance(key, sp.Add) else None
        if atom is None or not dag_has(value, atom):
            return value
        rest = key - atom
        trial = value.xreplace({atom: name - rest})
        left = any(dag_has(trial, term, -term) for term in sp.Add.make_args(rest))
        return value if left or tree_size(trial) >= tree_size(value) else trial
    except (TypeError, ValueError, AttributeError, RecursionError):  # a tensor node SymPy cannot rebuild
        return value


class Form:
    """How the explanation writes a value: long stops by their names, the vector derivation's
    parts by its let names, whole vectors by theirs (the names found once, for every line), the shares of a
    max or min in the language's builtins (ledger/arithmetic.in_builtins)."""

    def __init__(self, explanation):
        # a derivation by components writes a stop of the user's name by it (a tensor pass's lets name it)
        self.users = named_stops(explanation.request) if explanation.vector is None else {}
        vector = explanation.vector
        self._display = vector.display if vector is not None else ()
        self._sums = flattened(explanation.request.expr, self._display)
        own = vector.own if vector is not None else frozenset()
        self.own = {value: name for value, name in self._display if str(name) in own}
        self.own_sums = {value: name for value, name in self._sums if str(name) in own}
        self.whole = whole_vectors(explanation)
        self.written: dict = {}  # a stop's tidied spelling: the stop as written, where no letter names it
        self._named(abbreviations(explanation))
        # a stop that only the lets of the user's own bindings read is written there as the user wrote it
        # (double DQN's target = r + 0.99*sg(dot(best, T @ s2))), not by a letter of its own
        unread = said_in_own_lets(self, explanation)
        if unread:
            self._unlettered(unread, explanation.request.expr)

    def _unlettered(self, stops: set, expr) -> None:
        """The names without the letters of these stops; each other spelling of such a stop (the ledger's adjoint
        holds its tidied form) written as the formula writes the stop."""
        letters = {self.names[stop] for stop in stops}
        dropped = {stop: name for stop, name in self.names.items() if name in letters}
        formula = set(outermost_stops([expr]))
        said = {name: stop for stop, name in dropped.items() if stop in formula}
        self.written = {stop: said[name] for stop, name in dropped.items() if stop not in formula and name in said}
        self._named({stop: name for stop, name in self.names.items() if name not in letters})

    def _named(self, names: dict) -> None:
        """The stops' names, and the display names and sums as they read with them."""
        self.names = names
        self.display = {shorten(value, names): name for value, name in self._display}
        self.sums = {shorten(value, names): name for value, name in self._sums}
        # a let's value holds its stops in the let names (q = h + sg(round(h) − h)): each named stop so spelled too
        self.spelled = _spelled_stops(names, dict(self._display))

    def __call__(self, value, display: bool = True, stops: bool = True):
        """The value in this form; without display, a let's own value (δ = r − q, not δ = δ);
        without stops, a named stop's own value (for the legend)."""
        shortened = shorten(value, {**self.written, **self.users, **self.names, **self.spelled}) if stops else value  # sg(x_fgsm)
        shortened = named_sums(shorten(shortened, self.display) if display else shortened, self.sums, self.display)
        return in_builtins(plain_signs(shorten(shortened, self.whole)))

    def titled(self, value):
        """The value in the user's names alone, as a title writes it: the title stands above every let line
        and legend, so it reads no letter they introduce (not grad(sum(c + x), x) before c = sg(round(x) − x),
        nor jacobian(s, x) before s = softmax(x)); a stop is written out, a binding of the user's by its name."""
        shortened = named_sums(shorten(shorten(value, self.users), self.own), self.own_sums, self.own)
        return in_builtins(plain_signs(shorten(shortened, self.whole)))


def _spelled_stops(names: dict, display: dict) -> dict:
    """Each named stop as the let names spell it, where that differs (sg(round(h) − h) for sg(round(W x) − W x)),
    so a let line that holds it writes the stop's letter, not the stop again beside the letter's own line."""
    stops = [stop for stop in names if isinstance(stop, StopGradient)]
    if not display or not stops:
        return {}
    dag, built = named_forms(stops, display)  # one walk: the stops share their parts
    spelled = {}
    for stop, root in zip(stops, dag.roots):
        written = built[root]
        if isinstance(written, StopGradient) and written != stop and written not in names:
            spelled.setdefault(written, names[stop])
    return spelled


def flattened(expr, display) -> tuple:
    """The (value, name) pairs of the display that are parts of the formula's larger sums or products, where
    SymPy flattened them (tensor/names.user_names took them; adversarial training's g is also a part of its
    own in norm(g)): only these are looked for inside sums; a let that is only ever a part of the formula
    (δ = pi - y) or a wall's name keeps the lines as the pass wrote them (2*pi - 2*y = 2*δ)."""
    from gradlang.explain.tensor.names import flattened_into

    if not display or not isinstance(expr, sp.Basic):
        return ()
    from gradlang.expr.floated import Forms

    nodes = set(dag_nodes([expr]))
    flat = [node for node in nodes if isinstance(node, (sp.Add, sp.Mul))]
    form = Forms() if dag_has(expr, sp.Float) else None  # the parts as a formula with a float holds them
    return tuple((value, name) for value, name in display if flattened_into(value, flat, form))


def plain_signs(value):
    """The value with each coefficient 1.0 or -1.0 of a product written as a sign: x - mu, not x - 1.0*mu.
    A formula with a float in it has its integers as floats (core/floats.py: layer norm's 1e-5 made every
    x - mu x - 1.0*mu); a derivation's line reads back to the same numbers either way (docs/decisions.md).
    Other floats stay (2.0*mu, x + 1.0): they are numbers of the formula, not signs."""
    from gradlang.expr.graph import build_dag
    from gradlang.expr.walk import build

    if not isinstance(value, sp.Basic):
        return value
    dag = build_dag([value])
    if not any(_signed_one(node) for node in dag.nodes):
        return value
    built: list = []
    for node, kids in zip(dag.nodes, dag.children):
        args = [built[k] for k in kids]
        if _signed_one(node):
            built.append(sp.Mul(int(node.args[0]), *args[1:]))
        elif kids and any(a is not b for a, b in zip(args, node.args)):
            built.append(build(node, args))
        else:
            built.append(node)
    return built[dag.roots[0]]


def _signed_one(node) -> bool:
    return isinstance(node, sp.Mul) and node.args[0].is_Float and abs(float(node.args[0])) == 1.0
