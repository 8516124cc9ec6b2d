"""explain(request): every component derivation of one derivative call.

Components whose derivations are identical are grouped under one step; the
summary line and what the stops blocked (the language reference (docs/language.md), section 4, `blocked`)
come with them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.derive import derivatives as derive
from gradlang.expr.bounded import generators, tidy
from gradlang.expr.values import elementwise, elements, from_elements, shape_of, to_symbolic
from gradlang.explain.scalar.components import component_steps
from gradlang.explain.ledger.components import ledger
from gradlang.explain.ledger.closing import closing
from gradlang.explain.ledger.written import with_written
from gradlang.explain.ledger.higher import telescoped
from gradlang.explain.ledger.words import GROUPED, lines as stop_sentences, phrase, verdict
from gradlang.explain.scalar.summary import summarize
from gradlang.explain.scalar.why import why_zero
from gradlang.explain.vector.derivation import vector_derivation
from gradlang.explain.text import plain
from gradlang.explain.scalar.unfold import unfolded_request

DEFAULT_DEPTH = 2    # levels of substeps shown below each component (None: all); issue 14: little by default
SIMPLER_NODES = 200  # tree nodes of a result explain tries to simplify for the reader
SIMPLER_GENERATORS = 12  # and generators (bounded.generators): simplify's cancel multiplies out over each one


@dataclass(frozen=True)
class Explanation:
    """The explanation of one diff/grad/jacobian/hessian/blocked call.

    steps holds one root Step per distinct component derivation and
    components, at the same index, the labels of the components it gives
    (e.g. ("∂/∂x[0]",)); blocked is the part of the true derivative the
    stops removed, in the shape of the derivative; ledger has one
    ledger.StopEntry per stop (the path it cuts, the adjoint arriving, what
    it removes, its verdict); depth limits how many levels of substeps
    renderers show (None: all); simplified[i] is a simpler form of
    steps[i].result found by a size-bounded simplify, or None; derived is
    the derivative as the derivation found it, in the derivative's shape (None
    when it cannot be assembled); check is the closing comparison of derived
    with the engine's derivative (core/explain_check.py fills it in).
    """

    request: object
    summary: str
    steps: tuple
    components: tuple
    blocked: object
    ledger: tuple = ()
    depth: int | None = None
    simplified: tuple = ()
    derived: object = None
    check: object = None
    vector: object = None   # a formula.VectorDerivation when the derivative was derived in vector form
    why: tuple = ()         # at the index of each step, why its component is exactly 0 (a note.Note), or None
    sentences: tuple = ()   # (head, verdict) Notes saying what each stop (or group of stops) does; said()
    verdicts: tuple = ()    # at the index of each ledger entry, its verdict in words (a Note), for JSON
    identity: tuple = ()    # the ledger's last line, true = kept + removed, and what its terms are (Notes)


def _group(pairs) -> tuple[tuple, tuple]:
    """Identical derivations shown once, with all the components they give."""
    groups: dict = {}
    for label, step in pairs:
        groups.setdefault(step, []).append(label)
    return tuple(groups), tuple(tuple(labels) for labels in groups.values())


def _take(request):
    """The derivative the request takes, as a function of the expression."""
    from gradlang.expr.tensor.nodes import rank

    if request.operation == "diff":
        return lambda e: derive.diff(e, list(request.specs))
    if request.operation == "grad" and isinstance(request.wrt, tuple) and any(rank(v) for v in request.wrt):
        from gradlang.derive.tensor.reverse import grads
        from gradlang.expr.tensor.listed import TensorList

        return lambda e: TensorList(*grads(e, list(request.wrt)))  # grad(L, [W, b]): one reverse pass
    operation = {"grad": derive.grad, "jacobian": derive.jacobian, "hessian": derive.hessian,
                 "blocked": derive.derivative_like}[request.operation]
    return lambda e: operation(e, to_symbolic(request.wrt))


def engine_derivative(request, expr=None):
    """What the engine's diff/grad/jacobian/hessian gives for the request (of `expr` instead, when given).

    For blocked, the derivative it compares: the derivation derives that, not the blocked part.
    """
    if expr is None and request.operation != "blocked":
        return request.result
    return _take(request)(to_symbolic(request.expr if expr is None else expr))


def blocked_part(request):
    """What the stops removed, in the shape of the derivative (derive.blocked, bounded by size).

    Simplified only when small (SIMPLER_NODES): sp.simplify on the full
    bound of `blocked` took minutes for the EM M-step's eight stops.
    """
    courtesy = lambda value: elementwise(lambda e: tidy(e, limit=SIMPLER_NODES), value)  # noqa: E731
    return derive.blocked(to_symbolic(request.expr), to_symbolic(request.wrt), courtesy, _take(request))


def explain(request, depth: int | None = DEFAULT_DEPTH, unfold: bool = False, entries=None) -> Explanation:
    """The step-by-step explanation of a derivative call recorded inside `explain`.

    A gradient or Jacobian that a vector identity covers is derived once in
    vector form (vector/derivation.py); anything else component by component. With
    unfold, the builtins are first replaced by their definitions (scalar/unfold.py)
    and derived component by component: the vector identities are the
    builtins' own rules, which unfolding asks not to use. entries, when given, is the ledger at the
    tensor level (one entry per stop the user wrote, which the components would split).
    """
    if unfold:
        request = unfolded_request(request)
    entries = ledger(request) if entries is None or unfold else entries
    vector = None if unfold else vector_derivation(request)
    if vector is not None and depth is not None:
        summary = "; ".join(p for p in (vector.identity, phrase(entries)) if p)
        return said(Explanation(request, summary, (), (), blocked_part(request), entries, depth, (),
                                vector.instantiated(), vector=vector))
    pairs = component_steps(request)
    steps, components = _group(pairs)
    simplified = tuple(simpler(step.result) for step in steps)
    summary = summarize(steps, entries)
    if vector is not None:  # every step asked for: the vector derivation, then the components
        summary = "; ".join(p for p in (vector.identity, summary) if p)
    return said(Explanation(request, summary, steps, components, blocked_part(request), entries,
                            depth, simplified, assembled(request, [step for _, step in pairs]), vector=vector,
                            why=tuple(why_zero(s.expr, s.variable) if s.result == 0 else None for s in steps)))


def said(explanation: Explanation) -> Explanation:
    """The explanation with its ledger in words (ledger/words.py), composed once here and never by a printer."""
    explanation = telescoped(with_written(explanation, phrase), phrase)  # in the order listed: higher.py
    sentences = stop_sentences(explanation)
    compact = len(explanation.ledger) > GROUPED  # an entry's one line holds more than its verdict
    verdicts = tuple(verdict(e, explanation.request) if compact or e.same else sentence[-1]
                     for e, sentence in zip(explanation.ledger, sentences))  # JSON's words: the ledger's verdicts,
    # in full where a compact line says them briefly
    identity = closing(explanation) if explanation.ledger else ()
    return replace(explanation, sentences=sentences, verdicts=verdicts, identity=identity)


def assembled(request, roots: list):
    """The derivative the component derivations give, in the engine's shape (None if they do not fit it).

    A derivative of order n lists n steps per component (the chain of orders)
    and a Hessian lists the first derivatives before the second: the last
    derivation of each component is the one that gives it.
    """
    engine = engine_derivative(request)
    count = len(elements(engine)) if shape_of(engine) else 1
    if request.operation == "diff":
        order = sum(n for _, n in request.specs)
        if order == 0:
            return engine  # diff(e, x, 0) is e itself: nothing was derived
        roots = roots[order - 1::order]
    results = [step.result for step in roots[len(roots) - count:]]
    if len(results) != count:
        return None
    return from_elements(shape_of(engine), results) if shape_of(engine) else results[0]


def simpler(result):
    """A shorter equal form of a result (log cos x gives -tan(x)), or None; bounded by size.

    sinh and cosh are held as they are: simplify's trigsimp writes them with i and factors over the Gaussian
    integers, 2.6 s of CPU for atan(x)·cosh(x + 2)·log(1 + x²)'s derivative (48 nodes) for no shorter form.
    A result over more than SIMPLER_GENERATORS generators is not tried: the FGSM attack's removed terms
    (61 nodes over 13: tanh, sigmoid, sign, stops) took 0.35 s each and gave nothing shorter."""
    if isinstance(result, sp.Basic) and generators(result) > SIMPLER_GENERATORS:
        return None
    held = {f: sp.Dummy(real=True) for f in result.atoms(sp.sinh, sp.cosh)} if isinstance(result, sp.Basic) else {}
    simplified = tidy(result.xreplace(held), limit=SIMPLER_NODES).xreplace({d: f for f, d in held.items()}) \
        if held else tidy(result, limit=SIMPLER_NODES)
    if simplified == result:
        return None
    forms = [f for f in (simplified, tidy(simplified, sp.factor, SIMPLER_NODES)) if not _raised(f, result)]
    shortest = min(forms, key=lambda e: len(plain(e)), default=None)
    return shortest if shortest is not None and len(plain(shortest)) < len(plain(result)) else None


def _raised(form, result) -> bool:
    """Does the form raise to a power of the variables where the result did not? simplify combines
    log(u)·v + … into log(u^v·…): shorter, never what a reader calls simpler (three factors' product rule)."""
    def variable_powers(e):
        return {p for p in e.atoms(sp.Pow) if p.exp.free_symbols} if isinstance(e, sp.Basic) else set()
    return bool(variable_powers(form) - variable_powers(result))
