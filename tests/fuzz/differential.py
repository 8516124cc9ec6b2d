"""Run one random program through gradlang and JAX, statement by statement, and judge.

Every program yields these statements about its scalar expression E and vector
expression V: the value, `unstopped`, `diff` by y (orders 1-3 and mixed with z),
`grad` by v and by W, `hessian` by v, `blocked` by y and by v, and the value and
`jacobian` of V. Each is compared with raw JAX and with the doc reading
(fuzz_programs.Reading). The verdicts:

- "ok": agrees with raw JAX (float64, rtol 1e-6);
- "convention": agrees with the doc reading only (a documented convention,
  including that -0.0 is 0.0 in gradlang, and that a hessian entry is a number
  where either order of JAX's differentiation gives one);
- "ieee-algebra": gradlang finite (or an overflowed inf) where JAX is not, all
  else agreeing (never inf for -inf): SymPy's
  algebra cancels u/u, u-u or sqrt(u)^2 before any number is seen, and `where`
  never lets the branch it does not take poison a derivative (docs/decisions.md);
- "overflow": at a point beyond 1e150, apart only where one side overflowed
  (equal formulas overflow in different places);
- "rounding": at such a point, apart by far less than float64's rounding at
  that magnitude (JAX's 1/3 + g - g with g near 1e299 is 0; SymPy's is 1/3);
  at any point, apart by less than 16 eps times the square of the largest
  number JAX's computation held (intermediates.py);
- "documented-error": an error the reference documents (exact division by zero, an exact zero
  vector under normalize or cosine);
- "bug": anything else, including an InternalError, an undocumented error, or a
  statement slower than SLOW seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import sympy as sp

from fuzz_programs import Reading, VEC3, at, source
from intermediates import largest_intermediate
from gradlang import GradlangError, Session
from tests.safety import SAFETY_NET

SLOW = 20.0
RTOL = 1e-6
# normalize and cosine of an exact zero vector (`W - W` cancels before any number is seen) are ValueErrors
# as log(-1) is (docs/decisions.md, domain errors follow log(-1)); JAX's 0/0 is nan
DOCUMENTED_ERRORS = ("division by zero", "is not a real number", "undefined at this point", "log(0) is undefined",
                     "zero vector is undefined (its norm is 0)")


@dataclass
class Finding:
    verdict: str
    statement: str
    gradlang: object
    jax: object
    doc: object
    seconds: float = 0.0

    def __str__(self) -> str:
        return f"[{self.verdict}] {self.statement}\n  gradlang: {self.gradlang}\n  jax: {self.jax}\n  doc: {self.doc}"


def _statements(scalar: str, vector: str):
    """(gradlang text, JAX computation of a Reading and the scalar/vector functions)."""
    g, h = jax.grad, jax.hessian
    return [
        (scalar, lambda F, V, Fu: F),
        (f"unstopped({scalar})", lambda F, V, Fu: Fu),
        (f"diff({scalar}, y)", lambda F, V, Fu: g(F, 0)),
        (f"diff({scalar}, y, 2)", lambda F, V, Fu: g(g(F, 0), 0)),
        (f"diff({scalar}, y, 3)", lambda F, V, Fu: g(g(g(F, 0), 0), 0)),
        (f"diff({scalar}, y, z)", lambda F, V, Fu: g(g(F, 0), 1)),
        (f"grad({scalar}, v)", lambda F, V, Fu: g(F, 2)),
        (f"grad({scalar}, W)", lambda F, V, Fu: g(F, 3)),
        (f"hessian({scalar}, v)", _hessian),
        (f"blocked({scalar}, y)", lambda F, V, Fu: _minus(g(Fu, 0), g(F, 0))),
        (f"blocked({scalar}, v)", lambda F, V, Fu: _minus(g(Fu, 2), g(F, 2))),
        (vector, lambda F, V, Fu: V),
        (f"jacobian({vector}, v)", lambda F, V, Fu: jax.jacrev(V, 2)),
    ]


def _hessian(F, V, Fu):
    return jax.hessian(F, 2)


def _hessian_either_order(F, V, Fu):
    """The doc reading of `hessian`: an entry that some order of JAX's differentiation gives as a number.

    jax.hessian (forward over reverse) multiplies an infinite local derivative
    by a tangent that is a numeric 0 (v is one array), so hessian(exp(v[1]))
    at exp(v[1]) = inf has nan at [1, 0] and [1, 2]; reverse over reverse puts
    the nan at [0, 1] and [2, 1] instead. The second partial is symmetric and
    exactly 0 there: gradlang's (docs/decisions.md).
    """
    forward, reverse = jax.hessian(F, 2), jax.jacrev(jax.grad(F, 2), 2)

    def either(*args):
        a, b = forward(*args), reverse(*args)
        a = jnp.where(jnp.isnan(a), b, a)
        return jnp.where(jnp.isnan(a), a.T, a)
    return either


_hessian.doc = _hessian_either_order


def _minus(a, b):
    return lambda *args: a(*args) - b(*args)


def _jax_numbers(compute, reading_doc: bool, body, scalar, vector, point) -> np.ndarray:
    function, args = _jax_call(compute, reading_doc, body, scalar, vector, point)
    with np.errstate(all="ignore"):
        return np.asarray(function(*args), dtype=np.float64)


def _jax_largest(compute, body, scalar, vector, point) -> float:
    """The largest intermediate of raw JAX's computation of the statement (intermediates.py)."""
    function, args = _jax_call(compute, False, body, scalar, vector, point)
    with np.errstate(all="ignore"):
        return largest_intermediate(function, *args)


def _jax_call(compute, reading_doc: bool, body, scalar, vector, point):
    """(JAX function of y, z, v, W for the statement, the point as float64 arguments)."""
    if reading_doc:
        compute = getattr(compute, "doc", compute)
    F = Reading(reading_doc, body=body).function(scalar)
    V = Reading(reading_doc, body=body).function(vector)
    Fu = Reading(reading_doc, stops=False, body=body).function(scalar)
    args = (jnp.float64(point["y"]), jnp.float64(point["z"]), jnp.asarray(point["v"], dtype=jnp.float64),
            jnp.asarray(point["W"], dtype=jnp.float64))
    if reading_doc:  # gradlang's numbers have one zero (SymPy's floats have no -0.0): x + 0.0 is +0.0
        args = tuple(a + 0.0 for a in args)
    return compute(F, V, Fu), args


def _numbers(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    if hasattr(value, "tolist"):
        value = value.tolist()
    return np.array(_floats(value), dtype=np.float64)


def _floats(value):
    if isinstance(value, (list, tuple)):
        return [_floats(v) for v in value]
    return float(sp.sympify(value)) if not isinstance(value, float) else value


def close(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal within RTOL of the larger magnitude (at least 1); nan matches nan, inf the same inf."""
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        return _close(a, b)


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    same_special = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    finite = np.isfinite(a) & np.isfinite(b)
    scale = np.maximum(1.0, np.maximum(np.abs(np.where(finite, a, 0)), np.abs(np.where(finite, b, 0))))
    near = finite & (np.abs(np.where(finite, a - b, 0)) <= RTOL * scale)
    return bool(np.all(same_special | near))


def _masked_by_algebra(got: np.ndarray, raw: np.ndarray) -> bool:
    """Agreeing wherever JAX is finite, and finite at some places where JAX is not.

    JAX's reverse mode multiplies a zero cotangent by an infinite or NaN local
    derivative (0 * nan = nan leaks into every row of a jacobian); SymPy cancels
    u - u and u/u before any number is seen; `where` selects after multiplying.
    """
    if got.shape != raw.shape:
        return False
    finite = np.isfinite(raw)
    if np.all(finite) or np.any(~np.isfinite(got) & finite):
        return False
    # Where neither is finite: the same special, or JAX's nan (0*inf) where gradlang overflowed; never inf for -inf.
    both = ~finite & ~np.isfinite(got) & ~np.isnan(raw)
    return close(np.where(both, got, 0), np.where(both, raw, 0)) and close(np.where(finite, got, 0), np.where(finite, raw, 0))


def judge(text: str, got, seconds: float, raw: np.ndarray, doc, huge: float = 0.0, largest=None,
          slow: float | None = SLOW) -> Finding:
    """The verdict on one statement; `doc()` computes the doc reading, only when raw JAX disagrees, and
    `largest()` the largest intermediate of JAX's computation (intermediates.py), only when nothing else fits.
    With `slow` None, time is no verdict (the normal suite: a loaded machine is not a bug)."""
    if slow is not None and seconds > slow:
        return Finding("bug", f"{text}  (took {seconds:.1f} s)", got, raw, None, seconds)
    if isinstance(got, Exception):
        message = str(got)
        documented = isinstance(got, GradlangError) and type(got).__name__ != "InternalError" and any(
            m in message for m in DOCUMENTED_ERRORS)
        return Finding("documented-error" if documented else "bug", text, message, raw, None, seconds)
    if close(got, raw):
        return Finding("ok", text, got, raw, None, seconds)
    doc = doc()
    if close(got, doc):
        return Finding("convention", text, got, raw, doc, seconds)
    if _masked_by_algebra(got, raw) or _masked_by_algebra(got, doc):
        return Finding("ieee-algebra", text, got, raw, doc, seconds)
    if huge and _apart_only_where_not_finite(got, raw, one_row=text.startswith(_ONE_SCALAR)):
        return Finding("overflow", text, got, raw, doc, seconds)
    if huge and _within_rounding(got, raw, huge):
        return Finding("rounding", text, got, raw, doc, seconds)
    if largest is not None and _within_rounding_of_intermediates(got, raw, largest()):
        return Finding("rounding", text, got, raw, doc, seconds)
    return Finding("bug", text, got, raw, doc, seconds)


ULPS = 16  # float64 rounding allowed at the square of the largest intermediate, in units of eps


def _within_rounding_of_intermediates(got: np.ndarray, raw: np.ndarray, largest: float) -> bool:
    """Apart by less than ULPS * eps * S^2, S the largest number JAX's computation held.

    A first or second derivative through a product of two such numbers (W^T W v,
    then its square in a hessian) carries an absolute error near eps * S^2 on
    either side: hessian(sum(softmax(W^T W v)), v) is exactly 0, and both sides
    give noise near 1e-5 when S is 7e5 (seed 111). At an ordinary point, S near
    1e3, this allows 4e-9, below RTOL: nothing changes there."""
    tolerance = ULPS * np.finfo(np.float64).eps * largest * largest
    return bool(np.isfinite(tolerance)) and _apart_by_at_most(got, raw, tolerance)


def _within_rounding(got: np.ndarray, raw: np.ndarray, huge: float) -> bool:
    """At a point of magnitude `huge`, float64 JAX carries an absolute rounding error near
    1e-16 times its largest intermediate (1/3 + g - g is 0 when g is 1e299), and a product of two
    entries (W^T W, a square) reaches huge^2: hessian(dot(v - v[2], W^T W v)) with W[1, 2] = 1e150
    is 9.62e152 exactly and 0 in JAX, whose 1e300 + 4.81e152 - 1e300 lost it. So: apart only by far
    less than that, and non-finite only where JAX is (an overflowed inf where JAX has nan, never
    inf for -inf)."""
    scale = min(huge * max(huge, 1.0), np.finfo(np.float64).max)
    return _apart_by_at_most(got, raw, 1e-12 * scale)


def _apart_by_at_most(got: np.ndarray, raw: np.ndarray, tolerance: float) -> bool:
    """Finite entries within `tolerance`; non-finite only where JAX is (an overflowed inf for its nan, never inf for -inf)."""
    if got.shape != raw.shape or np.any(~np.isfinite(got) & np.isfinite(raw)):
        return False
    finite = np.isfinite(raw)
    both = ~finite & ~np.isfinite(got) & ~np.isnan(raw)
    with np.errstate(all="ignore"):
        near = np.abs(np.where(finite, got - raw, 0)) <= tolerance
    return bool(np.all(near)) and close(np.where(both, got, 0), np.where(both, raw, 0))


_ONE_SCALAR = ("grad(", "blocked(", "diff(")  # statements whose whole result is the derivative of one scalar


def _apart_only_where_not_finite(got: np.ndarray, raw: np.ndarray, one_row: bool = False) -> bool:
    """At a point near 1e±300, two equal formulas overflow in different places: they
    must agree on every row (a jacobian's component, a hessian's partial, the whole
    of a grad: `one_row`) finite on both sides.

    A row with an overflow on either side is not compared: the overflowed
    intermediate also picks min's, max's and where's branch for the rest of the
    row (jacobian(min(softmax(v), W^T W v), v) at 1e300: SymPy's expanded
    W[0, 1]^2*v[1] is inf*0 = nan where JAX's W^T (W v) is -inf, so min takes
    the other argument and the row's finite entries differ)."""
    if got.shape != raw.shape:
        return False
    both = np.isfinite(got) & np.isfinite(raw)
    if one_row:
        both &= bool(np.all(both))
    elif got.ndim >= 1:
        both &= np.all(both.reshape(got.shape[0], -1), axis=1).reshape((-1,) + (1,) * (got.ndim - 1))
    return close(np.where(both, got, 0), np.where(both, raw, 0))


def run_program(program, slow: float | None = SLOW) -> list[Finding]:
    """Every statement of one random program, judged against JAX (and, unless `slow` is None, the clock)."""
    body, scalar, vector, point = program
    session = Session(time_limit=SAFETY_NET if slow is None else slow + 5)
    session.run("v: R^3; W: R^(2,3)" + (f"\nf(u) = {source(body)}" if body is not None else ""))
    findings = []
    for text, compute in _statements(source(scalar), source(vector)):
        statement = f"{text} at {at(point)}"
        start = time.perf_counter()
        try:
            got = _numbers(session.eval(statement))
        except Exception as error:  # noqa: BLE001 - every failure is a finding
            got = error
        seconds = time.perf_counter() - start
        raw = _jax_numbers(compute, False, body, scalar, vector, point)
        doc = lambda compute=compute: _jax_numbers(compute, True, body, scalar, vector, point)  # noqa: E731
        largest = lambda compute=compute: _jax_largest(compute, body, scalar, vector, point)  # noqa: E731
        finding = judge(statement, got, seconds, raw, doc, huge=_huge(point), largest=largest, slow=slow)
        if body is not None:
            finding.statement = f"f(u) = {source(body)}; {finding.statement}"
        findings.append(finding)
    return findings


def _huge(point) -> float:
    """The largest magnitude in the point from 1e150 up (squares overflow to 1e300, fourth powers to inf), else 0."""
    largest = float(np.max(np.abs(np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in point.values()]))))
    return largest if largest >= 1e150 else 0.0


def describe(program) -> str:
    body, scalar, vector, point = program
    head = f"f(u) = {source(body)}\n" if body is not None else ""
    return f"{head}{source(scalar)}\n{source(vector)}\nat {at(point)}"


__all__ = ["Finding", "run_program", "describe", "judge", "close", "VEC3"]
