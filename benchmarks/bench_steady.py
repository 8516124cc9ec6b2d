"""Steady-state `g at …`: the same statement evaluated again with new arrays (issue #41).

The one-hidden-layer tanh MLP of programs.mlp_files (`g = grad(loss, W1)`),
its gradient statement run once; then, as a loop in a notebook does, new arrays
are bound (`Session.bind`, three points in turn) and the statement
`g at W1 = W1_data, b1 = b1_data, w2 = w2_data, x0 = x0_data, c = 0.1` is run
through `Session.run`, the path users run. Beside it, hand NumPy interleaved call
by call, so a burst of load on the shared cores hits both alike, and JAX:

- `NumPy` — the same gradient written by hand (programs.mlp_by_hand);
- `JAX jit` — `jax.jit(jax.grad(loss))` in float64, compiled before timing, its
  result made ready (`block_until_ready`);
- `bind + run` — the gradlang call with the four `Session.bind`s before it
  (each a float64 copy of the caller's array, as documented);
- `default limit` — the same call in a `Session()` as a user makes it, with
  the default time limit of 60 s (budget.py opens a budget per statement);
  `Session.run` is a session made with `time_limit=None`, as in earlier rounds.

gradlang and hand NumPy take turns going first. The JAX calls are timed in a
loop of their own after them: right after a JAX call its worker threads are
still busy, and on two cores the calls interleaved with them were slowed
(at width 64 gradlang's by about half, hand NumPy's by a third).

Wall seconds per call (perf_counter: a call is far below the CPU clock's
resolution), the median of the calls. The issue asks the steady-state
`g at` <= 2x hand NumPy at width 64 and <= 1.2x at width 1024. The numbers are
checked against the hand-written gradient first (1e-10 relative).

    python benchmarks/bench_steady.py                  # widths 64, 256, 1024
    python benchmarks/bench_steady.py 64 1024 --calls 500
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import programs  # noqa: E402

from gradlang import Session  # noqa: E402

STATEMENT = "g at W1 = W1_data, b1 = b1_data, w2 = w2_data, x0 = x0_data, c = 0.1"
NAMES = ("x0", "W1", "b1", "w2")


def _session(width: int, time_limit: float | None = None) -> Session:
    session = Session(time_limit=time_limit)
    session.run(f"W1: R^({width},{width})\nb1: R^{width}\nw2: R^{width}\nx0: R^{width}\nc: R\n"
                "h = tanh(W1 @ x0 + b1)\nloss = (tanh(dot(w2, h) + c) - 0.3)^2\ng = grad(loss, W1)")
    return session


def _points(width: int, count: int = 3) -> list:
    """`count` points (x0, W1, b1, w2), each a little apart, so every call is given new arrays."""
    base = programs.wide_point(width)
    return [tuple(a * (1 + 0.01 * k) for a in base) for k in range(count)]


def _jax_gradient():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(W1, x0, b1, w2):
        return (jnp.tanh(w2 @ jnp.tanh(W1 @ x0 + b1) + 0.1) - 0.3) ** 2

    function = jax.jit(jax.grad(loss))
    return lambda x0, W1, b1, w2: function(W1, x0, b1, w2).block_until_ready()


def _bind(session: Session, point) -> None:
    for name, array in zip(NAMES, point):
        session.bind(f"{name}_data", array)


def _timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def row(width: int, calls: int, jax_call) -> list:
    session, points = _session(width), _points(width)
    default = _session(width, Session().time_limit)
    for each in (session, default):
        _bind(each, points[0])
        value = each.run(STATEMENT)[0].value  # the first call parses, walks and compiles
        np.testing.assert_allclose(value, programs.mlp_by_hand(*points[0]), rtol=1e-10, atol=1e-300)
    inputs = [tuple(np.asarray(a) for a in point) for point in points]
    if jax_call is not None:
        jax_call(*inputs[0])  # compiled before timing
    times: dict = {"gradlang": [], "default": [], "bind": [], "hand": [], "jax": []}
    for call in range(calls):
        point = points[call % len(points)]
        times["bind"].append(_timed(lambda: _bind(session, point)))
        _bind(default, point)
        contenders = [("gradlang", lambda: session.run(STATEMENT)), ("hand", lambda: programs.mlp_by_hand(*point)),
                      ("default", lambda: default.run(STATEMENT))]
        for name, function in contenders[call % 3:] + contenders[: call % 3]:  # each goes first in turn
            times[name].append(_timed(function))
    for call in range(calls if jax_call is not None else 0):  # apart: its worker threads stay busy after a call
        times["jax"].append(_timed(lambda: jax_call(*points[call % len(points)])))
    np.testing.assert_allclose(session.run(STATEMENT)[0].value, programs.mlp_by_hand(*point), rtol=1e-10, atol=1e-300)
    median = {key: statistics.median(values) if values else float("nan") for key, values in times.items()}
    ours, hand, jit, limited = median["gradlang"], median["hand"], median["jax"], median["default"]
    return [str(width), f"{ours * 1e3:.3f}", f"{limited * 1e3:.3f}", f"{(ours + median['bind']) * 1e3:.3f}",
            f"{hand * 1e3:.3f}", f"{jit * 1e3:.3f}", f"{ours / hand:.2f}", f"{limited / hand:.2f}", f"{ours / jit:.2f}"]


HEADER = ["width", "Session.run ms", "default limit ms", "bind + run ms", "NumPy ms", "JAX jit ms", "run/NumPy",
          "default/NumPy", "run/JAX jit"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("widths", nargs="*", type=int, default=[64, 256, 1024])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--no-jax", action="store_true")
    options = parser.parse_args()
    jax_call = None if options.no_jax else _jax_gradient()
    print(f"Steady-state `g at …` through Session.run, median of {options.calls} interleaved calls\n")
    print("| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER))
    for width in options.widths:
        calls = options.calls if width <= 256 else max(options.calls // 10, 20)
        print("| " + " | ".join(row(width, calls, jax_call)) + " |", flush=True)


if __name__ == "__main__":
    main()
