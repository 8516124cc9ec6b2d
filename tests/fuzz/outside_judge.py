"""The outside fuzzer's judge: each statement at symbolic sizes, at literal sizes, against JAX float64.

Verdicts: "ok"; "refused" (a GradlangError of a documented kind, not InternalError, where the
other side has a number: listed apart, not a bug); "ieee" (JAX not finite there); "wrong" (a
number apart from JAX's by more than 1e-9 relative); "disagree" (literal and symbolic sizes give
different numbers, or one refuses what the other computes; listed apart); "plain" (the
plain text read back in a fresh session gives other numbers, or does not read back); "internal"
(an InternalError, an error without a position, a Python exception).
"""

from __future__ import annotations

import random
import re

import jax
import jax.numpy as jnp
import numpy as np

from gradlang import GradlangError, Session
from tests.fuzz import outside_programs as op
from tests.tensor.tensor_judge import Finding  # one finding record for both fuzzers

RTOL = 1e-9
TIME_LIMIT = 120.0  # a safety net against a hang, not a measurement



def make(seed: int, depth: int = 3) -> op.Program:
    rng = random.Random(seed)
    count = rng.choice([1, 2, 2, 3])
    names = ["p", "q", "r"][:count]
    sizes = {name: rng.choice([1, 2, 3, 3, 4]) for name in names}
    d0 = "p"
    d1 = "q" if count >= 2 else rng.choice([2, "p", 3])
    if count == 3:  # the third size: a second vector length (rank three is not in the language yet)
        shapes_extra = {"z": ("r",)}
    else:
        shapes_extra = {}
    shapes = {"a": (), "b": (), "x": (d0,), "y": (d0,), "v": (d1,), "c": (3,), "W": (d1, d0), "A": (d0, d0), **shapes_extra}
    user = sorted(rng.sample(sorted(op.USER), rng.randrange(0, 4)))
    program = op.Program(seed, sizes, shapes, [op.USER[name][0] for name in user])
    drawer = op.Drawer(rng, shapes, user)
    values = {**sizes}
    exact = rng.random() < 0.2  # an exact point (integers): the tensor engine's exact path
    for name, shape in shapes.items():
        dims = tuple(values[d] if isinstance(d, str) else d for d in shape)
        numbers = [rng.randint(-2, 2) if exact else round(rng.uniform(-1.5, 1.5), 4) for _ in range(int(np.prod(dims)))]
        program.point[name] = np.array(numbers, dtype=object).reshape(dims).tolist()
    program.given_sizes = rng.random() < 0.3  # `at p = 3, …` beside the arrays
    smallest = min(v for shape in shapes.values() for v in (values.get(d, d) for d in shape))
    program.indices = {"i": rng.randrange(smallest), "j": rng.randrange(smallest)}
    program.statements = _statements(drawer, depth)
    return program


def _statements(drawer, depth):
    """The program's statements: a scalar L, a vector V and a matrix M in the forms of section 5."""
    L, f = drawer.draw((), depth)
    V, g = drawer.draw(drawer.shapes["x"], depth)
    M, h = drawer.draw(drawer.shapes["W"], depth - 1)
    grad, un = jax.grad, lambda fn: (lambda env: fn({**env, "sg": op._identity}))
    if op.has_derivative(L):  # unstopped(L) is L's value; blocked(L, x) has no JAX twin (literal vs symbolic only)
        un = lambda fn: None if fn is not f else f  # noqa: E731

    def by(fn, name):
        return lambda env: grad(lambda value: fn({**env, name: value}))(env[name])
    return [
        (L, f), (f"unstopped({L})", un(f)), (f"grad({L}, x)", by(f, "x")), (f"grad({L}, W)", by(f, "W")),
(f"diff({L}, a)", by(f, "a")),
        (f"sum(grad({L}, x) * x) + diff({L}, b) * b", lambda env: jnp.sum(by(f, "x")(env) * env["x"])
         + by(f, "b")(env) * env["b"]),
        (f"grad({L}, W)[:, j]", lambda env: by(f, "W")(env)[:, env["j"]]),
        (f"grad({L}, x)[-1]", lambda env: by(f, "x")(env)[-1]),
        (f"blocked({L}, x)", lambda env: by(un(f), "x")(env) - by(f, "x")(env) if un(f) is not f else None),
        (f"hessian({L}, x)", lambda env: jax.hessian(lambda value: f({**env, "x": value}))(env["x"])),
        (V, g), (f"jacobian({V}, x)", lambda env: jax.jacrev(lambda value: g({**env, "x": value}))(env["x"])),
        (f"jacobian({V}, y)", lambda env: jax.jacrev(lambda value: g({**env, "y": value}))(env["y"])),
        (M, h), (f"grad(sum({M} * W), W)", by(lambda env: jnp.sum(h(env) * env["W"]), "W")),
    ]


def declarations(p: op.Program, literal: bool) -> str:
    lines = [] if literal else [", ".join(p.sizes) + ": size"]
    for name, shape in p.shapes.items():
        if shape:
            dims = [str(p.sizes[d]) if literal and isinstance(d, str) else str(d) for d in shape]
            lines.append(f"{name}: R^{dims[0]}" if len(dims) == 1 else f"{name}: R^({', '.join(dims)})")
    return "\n".join(lines)


def literal(p: op.Program, text: str) -> str:
    for name, number in {**p.sizes, **p.indices}.items():
        text = re.sub(rf"\b{name}\b", str(number), text)
    return text


def at_text(p: op.Program, indices: bool) -> str:
    given = {**p.point, **(p.indices if indices else {}), **(p.sizes if indices and p.given_sizes else {})}
    return ", ".join(f"{name} = {value}" for name, value in given.items())


def session(p: op.Program, literal_sizes: bool, definitions: bool = True) -> Session:
    s = Session(time_limit=TIME_LIMIT)
    s.run(declarations(p, literal_sizes))
    for definition in p.definitions if definitions else []:
        s.run(literal(p, definition) if literal_sizes else definition)
    return s


def run(s: Session, source: str):
    try:
        value = s.eval(source)
        if isinstance(value, list):
            value = [np.asarray(_floats(v)) for v in value]
            return np.concatenate([v.ravel() for v in value]) if value else np.zeros(0)
        return np.asarray(_floats(value), dtype=np.float64)
    except Exception as error:  # noqa: BLE001 - every failure is judged
        return error


def _floats(value):
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_floats(v) for v in value]
    return float(value)


def oracle(p: op.Program, compute):
    env = {name: jnp.asarray(np.asarray(value, dtype=float), dtype=jnp.float64) for name, value in p.point.items()}
    env.update(p.sizes, **p.indices, sg=jax.lax.stop_gradient)
    try:
        value = compute(env)
        return RuntimeError("no JAX twin") if value is None else np.asarray(value, dtype=np.float64)
    except Exception as error:  # noqa: BLE001 - JAX refuses it: no oracle
        return error


def close(a, b) -> bool:
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.size != b.size:
        return False
    a, b = a.ravel(), b.ravel()
    with np.errstate(all="ignore"):
        same = (np.isnan(a) & np.isnan(b)) | (a == b)
        scale = max(1.0, float(np.max(np.abs(np.nan_to_num(a)), initial=0)), float(np.max(np.abs(np.nan_to_num(b)), initial=0)))
        return bool(np.all(same | (np.abs(a - b) <= RTOL * scale)))


def internal(error) -> str | None:
    if not isinstance(error, GradlangError):
        return f"Python exception {type(error).__name__}: {error}"
    if error.kind == "InternalError" or error.line is None or error.column is None:
        return f"{error.kind}: {error.message}"
    if "took longer than" in error.message:
        return f"time limit: {error.message}"
    return None


def judge(p: op.Program, plain: bool = True) -> list:
    """Every statement at symbolic sizes, at literal sizes and against JAX; its plain text read back."""
    symbolic, literal_session = session(p, False), session(p, True)
    findings = []
    for text, compute in p.statements:
        sym = run(symbolic, f"{text} at {at_text(p, True)}")
        lit = run(literal_session, f"{literal(p, text)} at {at_text(p, False)}")
        expected = oracle(p, compute)
        findings += _verdicts(text, sym, lit, expected)
        if plain and isinstance(sym, np.ndarray):
            findings.append(_plain(p, symbolic, text, sym))
        if text.startswith(EXPLAINED) and isinstance(sym, np.ndarray):
            findings += [_explained(s, source, sym) for s, source in (
                (symbolic, f"{text} at {at_text(p, True)}"), (literal_session, f"{literal(p, text)} at {at_text(p, False)}"))]
    return findings


EXPLAINED = ("grad(", "jacobian(", "hessian(")  # explain … at: its value is the statement's


def _explained(s: Session, source: str, value) -> Finding:
    try:
        (result,) = s.run(f"explain {source}")
        got = np.asarray(_floats(result.value), dtype=np.float64)
    except Exception as error:  # noqa: BLE001
        wrong = internal(error)
        return Finding("internal" if wrong else "refused", "explain " + source, wrong or f"{error.kind}: {error.message}")
    if close(got, value):
        return Finding("ok", "explain")
    return Finding("explain", "explain " + source, f"explain gives {got.tolist()}, the statement {value.tolist()}")


def _verdicts(text, sym, lit, expected) -> list:
    found = [_against_jax(f"{text}  [{side}]", got, expected) for side, got in (("symbolic", sym), ("literal", lit))]
    if isinstance(sym, np.ndarray) and isinstance(lit, np.ndarray) and not close(sym, lit):
        found.append(Finding("disagree", text, f"symbolic {sym.tolist()} literal {lit.tolist()}"))
    elif isinstance(sym, np.ndarray) != isinstance(lit, np.ndarray):
        error = lit if isinstance(sym, np.ndarray) else sym
        side = "literal" if isinstance(sym, np.ndarray) else "symbolic"
        if internal(error) is None:
            found.append(Finding("disagree", text, f"only the {side} program refuses: {error.kind}: {error.message}"))
    return found


def _against_jax(text, got, expected) -> Finding:
    if isinstance(got, Exception):
        wrong = internal(got)
        if wrong is not None:
            return Finding("internal", text, wrong)
        if isinstance(expected, np.ndarray) and not np.all(np.isfinite(expected)):
            return Finding("ieee", text, f"{got.kind}: {got.message}")
        return Finding("refused", text, f"{got.kind}: {got.message.splitlines()[0]}")
    if not isinstance(expected, np.ndarray):
        return Finding("no-oracle", text, str(expected)[:200])
    if close(got, expected):
        return Finding("ok", text)
    if not (np.all(np.isfinite(expected)) and np.all(np.isfinite(got))):
        return Finding("ieee", text, f"got {got.tolist()} jax {expected.tolist()}")
    return Finding("wrong", text, f"got {got.tolist()}\n    jax {expected.tolist()}")


def _plain(p: op.Program, symbolic: Session, text: str, value) -> Finding:
    """The statement's plain text, read back in a fresh session with the declarations only, at the point."""
    try:
        (result,) = symbolic.run(text)
        plain = result.text
    except Exception as error:  # noqa: BLE001
        wrong = internal(error)
        return Finding("internal" if wrong else "refused", text + "  (no point)", wrong or error.message)
    fresh = session(p, False, definitions=False)
    *names, last = plain.splitlines()  # a repeated subexpression is named once: `t1 = …` lines, then the value
    try:
        fresh.run("\n".join(names))
    except Exception as error:  # noqa: BLE001
        return Finding("plain", text, f"{plain}\n    its names do not read back: {error}")
    back = run(fresh, f"({last}) at {at_text(p, True)}")
    if isinstance(back, Exception):
        return Finding("plain", text, f"{plain}\n    reads back as {type(back).__name__}: {back}")
    if close(back, value):
        return Finding("ok", text + "  (plain)")
    return Finding("plain", text, f"{plain}\n    reads back {back.tolist()} but gave {value.tolist()}")


def describe(p: op.Program) -> str:
    lines = [f"seed {p.seed}: sizes {p.sizes}, indices {p.indices}", declarations(p, False), *p.definitions,
             f"at {at_text(p, True)}"]
    return "\n  ".join(lines)
