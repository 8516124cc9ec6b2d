"""A ledger of every stop: the path it cuts, the adjoint arriving, what it removes, a verdict.

The true derivative of e = F(x, sg(u)) is F_x + F_c·u' (c standing for the
stopped value); the surrogate keeps only F_x. So for each outermost stop the
ledger records the adjoint arriving at it, a = ∂F/∂c (what reverse mode
would send into the cut edge), and the term the stop removes, a·u', with the
stops evaluated as `blocked` does; the removed terms of all stops add up to
`blocked`. The verdict says in words which of four situations it is:

- irrelevant: no variable reaches the stopped value (VQ-VAE's sg(e) w.r.t. W);
- neutral: the path exists but the removed term is 0 (the stable softmax's
  max: −1 + Σₖ sₖ = 0 arrives), so the stop blocks nothing;
- blocking: it removes a non-zero term (x·sg(x) loses x);
- inventing: the removed term only cancels gradient the surrogate has and the
  function lacks (x + sg(round(x) − x): the surrogate gets 1, round has 0).

Every simplification here is bounded by size (bounded.py), never by time.
Stops nested inside another stop are never reached by the backward pass and
have no entry. For a hessian or a diff of order two or more the entries are
only the stops and their paths here: what each removes from that derivative
is higher.py's, once the entries are in the order the ledger lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.derive import derivatives as derive
from gradlang.expr.bounded import generators, tidy
from gradlang.expr.primitives.vectors import LogSumExp, Softmax
from gradlang.expr.stopgrad import StopGradient, unstopped
from gradlang.expr.values import elements, from_elements, is_scalar, shape_of, to_symbolic
from gradlang.expr.graph import build_dag
from gradlang.expr.walk import dag_has, rebuild, tree_size
from gradlang.explain.ledger import random_points

LEDGER_SIMPLIFY_NODES = 200  # tree nodes of an adjoint or removed term worth simplifying
LEDGER_TERM_WORK = 150  # nodes times generators of one term worth simplifying (bounded.py: simplify's cost)
LEDGER_WORK = 1_000  # nodes times generators simplified in one ledger, all its stops' terms together
VERDICTS = ("irrelevant", "neutral", "blocking", "inventing")


@dataclass(frozen=True)
class StopEntry:
    """One stop of an explained derivative, as the ledger records it.

    stop is the stop_gradient(u) application; reaching the variables its
    argument depends on (the path x → u → stop it cuts); adjoint, one per
    output component, is ∂e/∂(stopped value), simplified, with the stop
    itself standing for the value; removed[i][j] is the term of ∂e_i/∂x_j the
    stop removes (stops evaluated); kept[i][j] the surrogate's derivative.
    """

    stop: sp.Expr
    reaching: tuple
    adjoint: tuple
    removed: tuple
    kept: tuple
    verdict: str
    shape: tuple = ()
    level: str = "components"  # "tensor": adjoint and removed are one formula each (ledger/tensor.py)
    evidence: str = ""         # how a verdict the rewrites could not decide was decided: "at 8 random points"
    zero_form: tuple = ()      # (form, identities): a 0 adjoint before the identities that make it 0 (arithmetic.py)
    written: str = ""          # the stop as the user wrote it, when the formula has it as several stops or none
    parts: tuple = ()          # the formula's stops of one written stop (written.py), when several
    constant: bool = False     # a stop written on a constant (sg(2)): the formula holds the constant
    untaken: str = ""          # why the value never reaches a written stop (a where's fixed condition)
    same: tuple = ()           # (verdict, name) of the written stop whose value (one node) this one repeats
    inside: str = ""           # the written stop this one is inside (MoCo's momentum update under no_grad)
    shown: object = None       # the removed term as the derivation writes it (ledger/tensor.py), or None
    order: int = 1             # the order of the derivative explained: from 2 on, higher.py's telescoped terms


def variables_of(request) -> list:
    """The variables a request differentiates by (first order, each once)."""
    if request.operation == "diff":
        seen: list = []
        for symbol, _ in request.specs:
            if symbol not in seen:
                seen.append(symbol)
        return seen
    wrt = to_symbolic(request.wrt)
    return [wrt] if is_scalar(wrt) else elements(wrt)


def outermost_stops(outputs) -> list:
    """The stops reached from the outputs without passing through a stop, in the order the expression is
    built: those the backward pass meets. A stop used both inside another stop and outside it (layer norm's
    mu = sg(mean(x)) in x - mu and in sigma = sg(std(x - mu))) is met, so it is one of them."""
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    dag = build_dag(outputs)
    met = outside_stops(dag)
    return [n for i, n in enumerate(dag.nodes) if i in met and isinstance(n, StopGradient)]


def outside_stops(dag) -> set:
    """The nodes (their indices) reached from the roots without passing through a stop, the stops met
    included: inside a stop no tangent or adjoint flows."""
    met, todo = set(), list(dag.roots)
    while todo:
        i = todo.pop()
        if i in met:
            continue
        met.add(i)
        if not isinstance(dag.nodes[i], StopGradient):
            todo.extend(dag.children[i])
    return met


def ledger(request) -> tuple:
    """One StopEntry per outermost stop of the differentiated expression."""
    expr = to_symbolic(request.expr)
    outputs = elements(expr) if not is_scalar(expr) else [expr]
    variables = variables_of(request)
    shape = _derivative_shape(expr, request, variables)
    work = Work(LEDGER_WORK)
    if order_of(request) >= 2:  # what each removes is found in the ledger's order (higher.py)
        return tuple(reached(stop, variables) for stop in outermost_stops(outputs))
    return tuple(replace(_entry(stop, outputs, variables, work), shape=shape) for stop in outermost_stops(outputs))


def order_of(request) -> int:
    """The order of the derivative a request takes: 2 for a hessian, the orders added up for a diff."""
    if request.operation == "hessian":
        return 2
    if request.operation == "diff":
        return sum(int(n) for _, n in request.specs)
    return 1


def reached(stop, variables, level: str = "components") -> StopEntry:
    """The entry of a stop of a derivative of order two or more before its term is found (higher.py): the
    variables its argument depends on, irrelevant when none does."""
    argument = unstopped(stop.args[0])
    reaching = tuple(v for v in variables if dag_has(argument, v))
    return StopEntry(stop, reaching, (), (), (), "neutral" if reaching else "irrelevant", level=level, order=2)


def _derivative_shape(expr, request, variables) -> tuple:
    """The shape of the first derivative: that of blocked (grad: the variables'; jacobian: a matrix)."""
    wrt_shape = () if request.operation == "diff" else shape_of(to_symbolic(request.wrt))
    if is_scalar(expr):
        return wrt_shape
    outputs = len(elements(expr))
    return (outputs,) if not wrt_shape else (outputs, len(variables))


def _entry(stop, outputs, variables, work) -> StopEntry:
    argument = unstopped(stop.args[0])
    reaching = tuple(v for v in variables if dag_has(argument, v))
    if not reaching:
        return StopEntry(stop, (), (), (), (), "irrelevant")
    c = sp.Dummy("c", real=True)
    adjoint = tidy_all([derive.derivative(rebuild(o, {stop: c}), c) for o in outputs], work)
    adjoint = tuple(rebuild(a, {c: stop}) for a in adjoint)
    slopes = [derive.derivative(argument, v) for v in variables]
    removed = tidy_all([unstopped(a) * s for a in adjoint for s in slopes], work)
    removed = tuple(removed[k:k + len(slopes)] for k in range(0, len(removed), len(slopes)))
    kept = tuple(tuple(derive.derivative(o, v) for v in variables) for o in outputs)
    verdict, evidence = terms_verdict(removed, kept)
    return StopEntry(stop, reaching, adjoint, removed, kept, verdict, evidence=evidence)


class Work:
    """A ledger's budget of simplification, in nodes times generators (a count, never seconds)."""

    def __init__(self, units: int):
        self.left = units


def tidy_all(terms: list, work: Work) -> tuple:
    """The terms simplified, each when small (LEDGER_SIMPLIFY_NODES). A term that may be 0 always is: that it
    is 0 is the entry's lesson (−1 + Σₖ sₖ = 0). The others, clearly not 0 at a point, are simplified for the
    reader's sake only: each when small in work too (LEDGER_TERM_WORK), and all of them only when the
    ledger's work left pays for them, else all as they are, so the components of one term read alike.
    SymPy's simplify takes about a millisecond per node times generator (EM's 16 removed terms, 87 nodes
    over 5 generators, took 2.5 s of CPU and changed no verdict)."""
    courtesy = [_clearly_non_zero(e) if isinstance(e, sp.Basic) and e.args else False for e in terms]
    costs = [_cost(e) if c else 0 for e, c in zip(terms, courtesy)]
    total = sum(c for c in costs if c <= LEDGER_TERM_WORK)
    paid = total <= work.left
    work.left -= total if paid else 0
    return tuple(tidy(e, limit=LEDGER_SIMPLIFY_NODES) if not c or (paid and cost <= LEDGER_TERM_WORK) else e
                 for e, c, cost in zip(terms, courtesy, costs))


def _cost(expr) -> int:
    """Nodes times generators, the work of simplifying expr (0 for a number or a symbol)."""
    if not isinstance(expr, sp.Basic) or not expr.args:
        return 0
    return tree_size(expr, cap=LEDGER_SIMPLIFY_NODES + 1) * generators(expr)


def is_zero(expr):
    """True, False, or None (undecided): simplified when small, else evaluated at a test point.

    A large term that is clearly non-zero at one point is non-zero; one that
    evaluates to about 0 there stays undecided (it may be 0 everywhere).
    """
    if expr == 0:
        return True
    if _clearly_non_zero(expr):
        return False  # no simplification makes it 0: asked first, it spares the simplify of every removed term
    if tree_size(expr) <= LEDGER_SIMPLIFY_NODES:
        if tidy(expr) == 0 or _softmax_unfolded(expr) == 0:
            return True
        if tree_size(expr) <= LEDGER_SIMPLIFY_NODES // 4:
            return False  # small enough that SymPy's simplify decides
    return None


def _clearly_non_zero(expr) -> bool:
    """True when the term is finite and clearly not 0 at one fixed test point (30 digits): then it is not 0
    everywhere, whatever simplify would say, and costs a numeric evaluation instead of a simplification."""
    point = {s: sp.Rational(3 + 2 * i, 7 + i) for i, s in enumerate(sorted(expr.free_symbols, key=str))}
    try:
        value = sp.N(expr.xreplace(point), 30)
        return bool(value.is_number and value.is_finite and abs(value) > 1e-12)
    except (TypeError, ValueError):  # a number where SymPy wants a symbol (x[0]: the vector x at a number)
        return False


def _softmax_unfolded(expr):
    """expr simplified with softmax and logsumexp written as their definitions, when it has them.

    Σₖ softmaxₖ(v) − 1 is 0 only by softmax's definition, which simplify does
    not see through; nothing else is rewritten (tanh into exp would make
    simplify slow for no gain).
    """
    vectors = (Softmax, LogSumExp)
    if not dag_has(expr, *vectors):
        return None
    return tidy(expr.rewrite(vectors, sp.exp))


def terms_verdict(removed, kept) -> tuple[str, str]:
    """(verdict, evidence): a term the bounded simplification cannot decide is decided at random points."""
    pairs = [(r, k) for row_r, row_k in zip(removed, kept) for r, k in zip(row_r, row_k) if r != 0]
    zeros = [is_zero(r) for r, _ in pairs]
    evidence = ""
    for k, (r, _) in enumerate(pairs):
        if zeros[k] is None:
            points = random_points.zero_at(r, [kept_one for _, kept_one in pairs])
            zeros[k] = bool(points)  # no point gave numbers: not shown to be 0
            evidence = f"at {points} random points" if points else evidence
    if all(zeros):
        return "neutral", evidence
    pairs = [p for p, z in zip(pairs, zeros) if not z]
    return ("inventing" if all(_cancels(r, k) for r, k in pairs) else "blocking"), ""


def _cancels(removed, kept) -> bool:
    """True when every term of −removed is a term of the surrogate's derivative.

    Then the true derivative (kept + removed) lacks those terms: the stop did
    not take a gradient away, it gave the surrogate one the function has not
    (the straight-through estimator).
    """
    kept = unstopped(kept)
    if tree_size(kept) > LEDGER_SIMPLIFY_NODES or tree_size(removed) > LEDGER_SIMPLIFY_NODES:
        return False
    terms = set(sp.Add.make_args(sp.expand(kept)))
    return all(t in terms for t in sp.Add.make_args(sp.expand(-removed)))


def adjoint_value(entry):
    """The adjoint as one value: a scalar for a scalar expression, else a vector."""
    if len(entry.adjoint) == 1:
        return entry.adjoint[0]
    return from_elements((len(entry.adjoint),), list(entry.adjoint))


def removed_value(entry):
    """The removed terms in the shape of the derivative (as blocked has it)."""
    if entry.level == "tensor":
        return entry.removed[0][0]
    return from_elements(entry.shape, [r for row in entry.removed for r in row])


def unwritten(value, entries) -> bool:
    """A term of the tensor-level ledger that is named, not computed: ledger/jacobian.py and ledger/tensor.py
    hold it as NaN (a rank-three tensor at a symbolic size, a form with no tensor-level rule), which JSON
    must not print as the number nan."""
    return value is sp.S.NaN and any(e.level == "tensor" for e in entries)


def written(value, show, entries):
    """A ledger value as `show` writes it, or None (JSON's null) for a term that is not written (unwritten)."""
    return None if unwritten(value, entries) else show(value)
