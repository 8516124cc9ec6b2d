"""The judge of the tensor-engine fuzzer: each statement at symbolic size against two oracles.

A program (tensor_programs.py) gives a scalar S, a vector V of length n and a
matrix M of shape m×n. Its statements (value, unstopped, grad by x, W, A and
a, grad of sum(V) + mean(M) by b, hessian, diff, blocked, jacobian) run in a session where `m, n` are sizes
(the tensor engine), at a float point. The oracle is the component engine
running the same statement with every size, and the index k, replaced by its
number; where the component engine cannot run it (argmax, onehot, rows, axis
forms are the tensor engine's only), JAX float64 reading the same tree,
`jax.lax.stop_gradient` for the stops. Three more checks ride along on each
derivative: its plain text read back gives the same numbers (the printer
writes gradlang source), `components(e at m = …, n = …)` gives them too, and
the exact point gives what the component engine gives there.

Verdicts: "ok"; "refused" (a refusal section 3a documents: literal sizes
needed, a rank-three derivative); "documented-error" (exact division by zero
and the other ValueErrors sections 6 and 7 document, where the oracle has a
number: the component engine's algebra can cancel what the formula divides); "both-error" (both engines raise the same
kind of GradlangError); "ieee" (apart only where one side is nan or inf, or an
error where the oracle is not finite: IEEE in one engine, an exact error in
the other, as tests/fuzz/differential.py classes them); "convention?" (only
JAX could judge, the program has a kink, and they differ: section 5 decides
abs'(0) and ties otherwise than JAX does; listed for a reader to confirm);
"slow-exact" (an exact point stopped by the time limit: the component
engine's exact arithmetic, which the exact path is); "bug" (an
InternalError, an error without a line, a Python exception, any other
difference, or a statement stopped by the session's time limit).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import sympy as sp

from gradlang import GradlangError, Session
from tests.component_session import ComponentSession
from tests.tensor import tensor_programs as tp

RTOL = 1e-9
TIME_LIMIT = 120.0  # a safety net against a hang, not a measurement
# argmax and argmin take numbers only (section 6): components of a formula holding one are refused
REFUSALS = ("literal size", "rank three", "symbolic size", "declare literal", "needs numbers: it is piecewise constant")
DOCUMENTED = ("division by zero", "singular matrix", "is not a real number", "undefined at this point")  # section 7
SIZES = [(2, 3), (3, 2), (1, 3), (2, 1), (3, 3)]


@dataclass
class Finding:
    verdict: str
    statement: str
    detail: str = ""

    def __str__(self) -> str:
        return f"[{self.verdict}] {self.statement}\n    {self.detail}"


@dataclass
class Program:
    seed: int
    S: tuple
    V: tuple
    M: tuple
    m: int
    n: int
    k: int
    point: dict  # name -> nested lists of floats (x, y, u, W, A) or a float (a, b)
    exact: dict  # the same names, small integers


def make(seed: int, depth: int = 3) -> Program:
    """The program of one seed: its trees, sizes and points."""
    rng = random.Random(seed)
    m, n = rng.choice(SIZES)
    trees = [tp.draw(rng, shape, depth) for shape in ("S", "n", "mn")]
    return Program(seed, *trees, m, n, rng.randrange(min(m, n)), _point(rng, m, n, _float), _point(rng, m, n, _int))


def _float(rng):
    return round(rng.uniform(-2.0, 2.0), 2)


def _int(rng):
    return rng.randint(-2, 2)


def _point(rng, m: int, n: int, number) -> dict:
    shapes = {"x": (n,), "y": (n,), "u": (m,), "W": (m, n), "A": (n, n), "a": (), "b": ()}
    point = {name: np.array([number(rng) for _ in range(int(np.prod(s)))]).reshape(s) for name, s in shapes.items()}
    if rng.random() < 0.3 and n > 1:  # a tie for max, argmax, relu kinks
        point["x"][1] = point["x"][0]
    return {name: value.tolist() for name, value in point.items()}


def at_text(point: dict, k: int | None) -> str:
    """The point as an at; the index k is given only at symbolic size (the literal program has its number)."""
    return ", ".join(f"{name} = {value}" for name, value in point.items()) + ("" if k is None else f", k = {k}")


def statements(p: Program):
    """(gradlang text, JAX computation) for every statement of the program."""
    S, V, M = tp.text(p.S), tp.text(p.V), tp.text(p.M)
    f, fu = _jax_scalar(p.S, True), _jax_scalar(p.S, False)
    g = jax.grad
    return [
        (S, lambda e: f(e)),
        (f"unstopped({S})", lambda e: fu(e)),
        (f"grad({S}, x)", lambda e: g(lambda x: f({**e, "x": x}))(e["x"])),
        (f"grad({S}, W)", lambda e: g(lambda w: f({**e, "W": w}))(e["W"])),
        (f"grad({S}, A)", lambda e: g(lambda w: f({**e, "A": w}))(e["A"])),
        (f"grad({S}, a)", lambda e: g(lambda a: f({**e, "a": a}))(e["a"])),  # reverse by a broadcast scalar
        (f"grad(sum({V}) + mean({M}), b)", lambda e: g(lambda b: jnp.sum(tp.jax_of(p.V, {**e, "b": b}))
                                                      + jnp.mean(tp.jax_of(p.M, {**e, "b": b})))(e["b"])),
        (f"diff({S}, a)", lambda e: g(lambda a: f({**e, "a": a}))(e["a"])),
        (f"diff({S}, a, a)", lambda e: g(g(lambda a: f({**e, "a": a})))(e["a"])),
        (f"hessian({S}, x)", lambda e: jax.hessian(lambda x: f({**e, "x": x}))(e["x"])),
        (f"blocked({S}, x)", lambda e: g(lambda x: fu({**e, "x": x}))(e["x"]) - g(lambda x: f({**e, "x": x}))(e["x"])),
        (f"blocked({S}, a)", lambda e: g(lambda a: fu({**e, "a": a}))(e["a"]) - g(lambda a: f({**e, "a": a}))(e["a"])),
        (V, lambda e: tp.jax_of(p.V, e)),
        (f"jacobian({V}, x)", lambda e: jax.jacrev(lambda x: tp.jax_of(p.V, {**e, "x": x}))(e["x"])),
        (M, lambda e: tp.jax_of(p.M, e)),
    ]


def _jax_scalar(tree, stops: bool):
    if stops:
        return lambda env: tp.jax_of(tree, env)
    return lambda env: tp.jax_of(tree, {**env, "sg": lambda v: v})


def sessions(p: Program):
    """(tensor session, component session) with the program's declarations."""
    tensor, component = Session(time_limit=TIME_LIMIT), ComponentSession(time_limit=TIME_LIMIT)
    tensor.run(tp.DECLARATIONS)
    component.run(tp.LITERAL.format(m=p.m, n=p.n))
    return tensor, component


def literal(statement: str, p: Program) -> str:
    """The statement at literal sizes: every size and the index k replaced by its number."""
    for name, number in (("m", p.m), ("n", p.n), ("k", p.k)):
        statement = re.sub(rf"\b{name}\b", str(number), statement)
    return statement


def run(session: Session, source: str):
    """The statement's value as floats, or the exception it raised."""
    try:
        return floats(session.eval(source))
    except Exception as error:  # noqa: BLE001 - every failure is judged
        return error


def floats(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    if hasattr(value, "tolist"):
        value = value.tolist()
    return np.array(_float_items(value), dtype=np.float64)


def _float_items(value):
    if isinstance(value, (list, tuple)):
        return [_float_items(v) for v in value]
    return float(value)


def jax_numbers(compute, p: Program, point: dict) -> np.ndarray:
    env = {name: jnp.asarray(value, dtype=jnp.float64) for name, value in point.items()}
    env.update(m=p.m, n=p.n, k=p.k)
    try:
        with np.errstate(all="ignore"):
            return np.asarray(compute(env), dtype=np.float64)
    except Exception:  # noqa: BLE001 - JAX cannot compute it (a shape it refuses): no oracle
        return None


def close(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal within RTOL of the larger magnitude in the array (at least 1); nan matches nan, inf the same inf."""
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        finite = np.isfinite(a) & np.isfinite(b)
        same = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
        scale = max(1.0, float(np.max(np.abs(np.where(finite, a, 0)), initial=0)),
                    float(np.max(np.abs(np.where(finite, b, 0)), initial=0)))
        near = finite & (np.abs(np.where(finite, a - b, 0)) <= RTOL * scale)
        return bool(np.all(same | near))


def apart_only_where_not_finite(a: np.ndarray, b: np.ndarray) -> bool:
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.shape != b.shape:
        return False
    both = np.isfinite(a) & np.isfinite(b)
    return not bool(np.all(both)) and close(np.where(both, a, 0), np.where(both, b, 0))


def internal(error) -> str | None:
    """What is wrong with an error a user would see, or None for a proper GradlangError."""
    if not isinstance(error, GradlangError):
        return f"Python exception {type(error).__name__}: {error}"
    if error.kind == "InternalError":
        return error.message
    if error.line is None or error.column is None:
        return f"{error.kind} without a position: {error.message}"
    if "took longer than" in error.message:
        return f"stopped by the time limit: {error.message}"
    return None


def refusal(error) -> bool:
    return error.kind in ("ShapeError", "DiffError", "ValueError") and any(r in error.message for r in REFUSALS)


KINKS = {"abs", "relu", "max2", "min0", "max1", "min1", "max_ax1", "min_ax0"}  # section 5's conventions, where JAX differs at a kink


def verdict(got, oracle, jax_value, text: str, kinks: bool = False) -> Finding:
    """The verdict on one statement: `got` the tensor engine's, `oracle` the component engine's.

    Where only JAX can judge and the program has a kink (`kinks`), a difference is
    "convention?": JAX's abs'(0) is 1 and its max gives a tie to one argument, section
    5's are 0 and an equal share; the long run lists them for a reader to confirm."""
    if isinstance(got, Exception):
        return _verdict_on_error(got, oracle, jax_value, text)
    reference = oracle if not isinstance(oracle, Exception) else jax_value
    if close(got, reference):
        return Finding("ok", text)
    if isinstance(oracle, Exception) and jax_value is None:
        return Finding("no-oracle", text, f"component: {oracle}")
    if apart_only_where_not_finite(got, reference):
        return Finding("ieee", text, f"tensor {got.tolist()} oracle {reference.tolist()}")
    if kinks and isinstance(oracle, Exception):
        return Finding("convention?", text, f"tensor {got.tolist()} jax {_shown(jax_value)}")
    return Finding("bug", text, f"tensor {got.tolist()}\n    oracle {_shown(oracle)}\n    jax {_shown(jax_value)}")


def _verdict_on_error(error, oracle, jax_value, text: str) -> Finding:
    wrong = internal(error)
    if wrong is not None:
        return Finding("bug", text, wrong)
    if refusal(error):
        return Finding("refused", text, error.message)
    if error.kind == "ValueError" and any(d in error.message for d in DOCUMENTED):
        return Finding("documented-error", text, error.message)
    if isinstance(oracle, GradlangError) and oracle.kind == error.kind:
        return Finding("both-error", text, error.message)
    reference = oracle if not isinstance(oracle, Exception) else jax_value
    if reference is not None and not np.all(np.isfinite(reference)):
        return Finding("ieee", text, f"{error.kind}: {error.message}; oracle {reference.tolist()}")
    return Finding("bug", text, f"{error.kind}: {error.message}\n    oracle {_shown(oracle)}\n    jax {_shown(jax_value)}")


def _shown(value) -> str:
    return value.tolist() if isinstance(value, np.ndarray) else str(value)


def symbolic_checks(tensor: Session, text: str, got, p: Program) -> list:
    """The statement without a point: it prints, its plain text reads back, its components agree."""
    try:
        (result,) = tensor.run(text)
        plain, _ = result.text, result.latex
    except Exception as error:  # noqa: BLE001
        wrong = internal(error)
        return [] if wrong is None else [Finding("bug", text + "  (no point)", wrong)]
    findings = []
    if isinstance(got, np.ndarray) and "\n" not in plain:
        back = run(tensor, f"({plain}) at {at_text(p.point, p.k)}")
        findings.append(_same(back, got, f"read back: {plain}"))
    if isinstance(got, np.ndarray):
        what, components = f"components({text} at m = …, n = …)", _components_at(tensor, text, p)
        findings.append(Finding("ieee", what, "a nan reaches a condition, which SymPy's substitution cannot compare")
                        if components is NAN_CONDITION else _same(components, got, what))
    return findings


def _same(value, expected, what: str) -> Finding:
    if isinstance(value, Exception):
        wrong = internal(value)
        if wrong is None and refusal(value):
            return Finding("refused", what, value.message)
        return Finding("bug", what, wrong or f"{value.kind}: {value.message}")
    if close(value, expected) or apart_only_where_not_finite(value, expected):
        return Finding("ok", what)
    return Finding("bug", what, f"{value.tolist()} but the statement at the point gave {expected.tolist()}")


NAN_CONDITION = RuntimeError("a nan in a condition")  # the judge's reading fails, not gradlang (0/0 > y)


def _components_at(tensor: Session, text: str, p: Program):
    """components(e at m, n, k) with the point's numbers put in by SymPy, as floats."""
    try:
        value = tensor.eval(f"components({text} at m = {p.m}, n = {p.n}, k = {p.k})")
    except Exception as error:  # noqa: BLE001
        return error
    names = {}
    for name, given in p.point.items():
        array = np.asarray(given, dtype=float)
        if array.ndim == 0:
            names[name] = float(array)
        for index in np.ndindex(array.shape):
            names[f"{name}[{', '.join(map(str, index))}]"] = float(array[index])
    items = np.array(value.tolist() if hasattr(value, "tolist") else value, dtype=object)

    def number(entry):
        entry = sp.sympify(entry)
        return float(entry.xreplace({s: sp.Float(names[s.name]) for s in entry.free_symbols if s.name in names}).evalf())

    try:
        return np.vectorize(number, otypes=[float])(items)
    except (TypeError, ValueError) as error:
        if "NaN comparison" in str(error):
            return NAN_CONDITION
        return RuntimeError(f"components not numbers at the point: {error}")


DERIVATIVES = ("grad(", "diff(", "hessian(", "jacobian(", "blocked(")
EXACT = ("grad(",)  # the statements also taken at an exact point (exact arithmetic is slow; one kind is enough)


def run_program(p: Program, symbolic: bool = True) -> list:
    """Every statement of the program at its float point, with the checks that ride along."""
    tensor, component = sessions(p)
    findings = []
    for text, compute in statements(p):
        at = at_text(p.point, p.k)
        got = run(tensor, f"{text} at {at}")
        oracle = run(component, f"{literal(text, p)} at {at_text(p.point, None)}")
        jax_value = jax_numbers(compute, p, p.point) if isinstance(oracle, Exception) or not close(got, oracle) else None
        findings.append(verdict(got, oracle, jax_value, f"{text} at {at}", _kinked(p)))
        if symbolic and text.startswith(DERIVATIVES):
            findings += symbolic_checks(tensor, text, got, p)
        if text.startswith(EXACT) and not text.endswith(", b)"):  # exact arithmetic is slow: not every grad
            findings.append(_exact(tensor, component, text, p))
    return findings


def _exact(tensor: Session, component: Session, text: str, p: Program) -> Finding:
    """At an exact point the tensor engine rebuilds the formula with components: the component engine's numbers."""
    at = at_text(p.exact, p.k)
    got = run(tensor, f"{text} at {at}")
    if isinstance(got, GradlangError) and "took longer than" in got.message:
        # the component engine's exact arithmetic: grad(sum(softmax(softmax(z))), z) at [-1, 0, 2] takes 30 s there too
        return Finding("slow-exact", f"{text} at {at}  (exact)", got.message)
    oracle = run(component, f"{literal(text, p)} at {at_text(p.exact, None)}")
    compute = dict(statements(p))[text]
    jax_value = jax_numbers(compute, p, p.exact) if isinstance(oracle, Exception) else None
    return verdict(got, oracle, jax_value, f"{text} at {at}  (exact)", _kinked(p))


def _kinked(p: Program) -> bool:
    return any(tp.uses(tree, KINKS) for tree in (p.S, p.V, p.M))


def run_hostile(source: str) -> Finding:
    """A hostile program: a proper GradlangError, or results that print; nothing else."""
    session = Session(time_limit=TIME_LIMIT)
    try:
        for result in session.iter_run(source):
            result.text, result.latex
    except Exception as error:  # noqa: BLE001 - every failure is judged
        wrong = internal(error)
        return Finding("error" if wrong is None else "bug", source, wrong or f"{error.kind}: {error.message}")
    return Finding("ok", source)


def describe(p: Program) -> str:
    return (f"seed {p.seed}: m = {p.m}, n = {p.n}, k = {p.k}\n  S = {tp.text(p.S)}\n  V = {tp.text(p.V)}\n"
            f"  M = {tp.text(p.M)}\n  at {at_text(p.point, p.k)}")
