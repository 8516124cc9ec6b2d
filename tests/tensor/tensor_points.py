"""Points that mix literal and symbolic sizes, for the tensor fuzzer: each statement against its literal program.

A program of tensor_judge.make (its trees S, V, M, sizes m, n, index k and
float point) is declared with some sizes literal and the others symbolic
(`n: size; x, y: R^n; u: R^2; W: R^(2,n); A: R^(n,n)`, at least one size a
name), and its statements are given points that bring together what an
outside fuzzer found broken: literal-size tensors given arrays beside
symbolic ones, lists and constants beside symbolic tensors (`[1, 2] at …`,
`grad(S, [a, b]) at …`, a list given to a scalar, `dot(u, [...])` where u
is literal, `components(… at n = 3) at …`), negative indices, and
`explain … at` whose value must be the plain statement's. The oracle is the
same statement in the same program with every size a number (a plain
Session: the component engine's numbers); the verdicts are tensor_judge's.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from gradlang import Session
from tests.tensor import tensor_judge as judge
from tests.tensor import tensor_programs as tp

CHOICES = (("m",), ("n",), ())  # the sizes written as numbers; at least one stays a name


@dataclass
class Mixed:
    program: judge.Program
    literal: tuple  # the names of the sizes written as numbers

    @property
    def sizes(self) -> dict:
        return {"m": self.program.m, "n": self.program.n}


def make(seed: int, depth: int = 2) -> Mixed:
    """The program of one seed, with the sizes its own stream writes as numbers."""
    return Mixed(judge.make(seed, depth), random.Random(seed * 7919 + 1).choice(CHOICES))


def sized(text: str, mixed: Mixed, every: bool = False) -> str:
    """The text with the literal sizes (every size, with `every`) and the index k written as numbers."""
    names = ("m", "n") if every else mixed.literal
    numbers = {**{name: mixed.sizes[name] for name in names}, "k": mixed.program.k}
    for name, number in numbers.items():
        text = re.sub(rf"\b{name}\b", str(number), text)
    return text


def declarations(mixed: Mixed) -> str:
    """tp.DECLARATIONS with the literal sizes as numbers, and only the others declared as sizes."""
    symbolic = [name for name in ("m", "n") if name not in mixed.literal]
    body = sized(tp.DECLARATIONS.split("\n", 1)[1], mixed)
    return (f"{', '.join(symbolic)}: size\n" if symbolic else "") + body


def statements(mixed: Mixed) -> list:
    """(statement at mixed sizes, the same at literal sizes, its JAX computation or None)."""
    p = mixed.program
    S, V, M = tp.text(p.S), tp.text(p.V), tp.text(p.M)
    point = judge.at_text(p.point, None)
    jax = dict(judge.statements(p))
    f, gx = jax[S], jax[f"grad({S}, x)"]
    v, m = (lambda e: tp.jax_of(p.V, e)), (lambda e: tp.jax_of(p.M, e))
    rows = [(S, f), (f"grad({S}, x)", gx), (f"grad({S}, W)", jax[f"grad({S}, W)"]), (V, v), (M, m),
            (f"({V})[-1]", lambda e: v(e)[-1]), (f"({M})[-1, -1]", lambda e: m(e)[-1, -1]),
            (f"({M})[:, -1]", lambda e: m(e)[:, -1]), ("[1, 2]", lambda e: [1.0, 2.0]),
            (f"grad({S}, [a, b])", lambda e: [jax[f"diff({S}, a)"](e), _by_b(f, e)])]
    out = [(f"{text} at {point}", f"{text} at {point}", compute) for text, compute in rows]
    batch = judge.at_text({**p.point, "a": [0.5, -1.5]}, None)
    out.append((f"{S} at {batch}", f"{S} at {batch}", None))  # a list to a scalar beside the tensors
    if "m" in mixed.literal:  # a list of numbers beside a literal-size tensor: a constant of the formula
        numbers = [0.5 + i for i in range(p.m)]
        constant = f"({S}) + dot(u, {numbers})"
        out.append((f"{constant} at {point}", f"{constant} at {point}", lambda e: f(e) + e["u"] @ _array(numbers)))
    given = ", ".join(f"{name} = {mixed.sizes[name]}" for name in ("m", "n") if name not in mixed.literal)
    out.append((f"components(grad({S}, x) at {given}) at {point}", f"components(grad({S}, x)) at {point}", gx))
    return [(sized(a, mixed), sized(b, mixed, every=True), compute) for a, b, compute in out]


def _by_b(f, env):
    import jax

    return jax.grad(lambda b: f({**env, "b": b}))(env["b"])


def _array(numbers: list):
    import jax.numpy as jnp

    return jnp.asarray(numbers, dtype=jnp.float64)


def explained(mixed: Mixed) -> list:
    """The statements `explain … at` is asked for, at mixed sizes: a value, a gradient, a Jacobian."""
    p = mixed.program
    S, V = tp.text(p.S), tp.text(p.V)
    point = judge.at_text(p.point, None)
    return [sized(f"{text} at {point}", mixed) for text in (S, f"grad({S}, x)", f"jacobian({V}, x)")]


def run_mixed(mixed: Mixed) -> list:
    """Every statement at its point, judged against the literal program; explain against the plain value."""
    p = mixed.program
    session, literal = Session(time_limit=judge.TIME_LIMIT), Session(time_limit=judge.TIME_LIMIT)
    session.run(declarations(mixed))
    literal.run(tp.LITERAL.format(m=p.m, n=p.n))
    findings = []
    for text, literal_text, compute in statements(mixed):
        got, oracle = judge.run(session, text), judge.run(literal, literal_text)
        jax_value = None
        if compute is not None and (isinstance(oracle, Exception) or not judge.close(got, oracle)):
            jax_value = judge.jax_numbers(compute, p, p.point)
        findings.append(judge.verdict(got, oracle, jax_value, text, judge._kinked(p)))
    for text in explained(mixed):
        findings.append(_explained(session, text))
    return findings


def _explained(session: Session, text: str) -> judge.Finding:
    """explain at the point: its value is the plain statement's (both may refuse alike)."""
    got, plain = judge.run(session, f"explain {text}"), judge.run(session, text)
    if isinstance(got, Exception) or isinstance(plain, Exception):
        if isinstance(got, Exception) and judge.internal(got) is None and isinstance(plain, Exception):
            return judge.Finding("both-error", f"explain {text}", got.message)
        wrong = judge.internal(got) if isinstance(got, Exception) else None
        return judge.Finding("bug", f"explain {text}", wrong or f"explain {_shown(got)}, plain {_shown(plain)}")
    return judge._same(got, plain, f"explain {text}")


def _shown(value) -> str:
    return getattr(value, "message", None) or judge._shown(value)


def describe(mixed: Mixed) -> str:
    return judge.describe(mixed.program) + f"\n  literal sizes: {', '.join(mixed.literal) or 'none'}"
