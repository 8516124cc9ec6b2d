"""Benchmark of a compiled evaluation through the language (issues 11 and 13).

    python benchmarks/bench_eval.py [--points N] [--depth D] [--repeat R]

Times `Session.eval("diff(f(t), t) at t = linspace(-3, 3, N)")` for f an
8-deep `sin` composition defined in the program, beside the hand-written
NumPy loop that computes the same derivative (forward sweep, multiplying the
cosines), and prints both and their ratio. The first call (which compiles the
derivative with lambdify) and the best of the following calls are reported;
the two results are checked to agree before any time is printed. Nothing is
rendered: `Session.eval` returns the value, and text is made only when a
shell asks for it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradlang import Session  # noqa: E402


def program(depth: int) -> str:
    """The definition of f(t) = sin(sin(…sin(t)…)), `depth` deep."""
    return "f(t) = " + "sin(" * depth + "t" + ")" * depth


def by_hand(t: np.ndarray, depth: int) -> np.ndarray:
    """d/dt of the composition: the product of cos at every inner value."""
    u = t
    derivative = np.ones_like(t)
    for _ in range(depth):
        derivative *= np.cos(u)
        u = np.sin(u)
    return derivative


def timed(call, repeat: int) -> tuple[float, list[float], object]:
    """(first time, later times, first result)."""
    start = time.perf_counter()
    result = call()
    first = time.perf_counter() - start
    later = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        later.append(time.perf_counter() - start)
    return first, later, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    session = Session(time_limit=None)
    session.run(program(args.depth))
    source = f"diff(f(t), t) at t = linspace(-3, 3, {args.points})"
    ours_first, ours, value = timed(lambda: session.eval(source), args.repeat)

    t = np.linspace(-3, 3, args.points)
    hand_first, hand, expected = timed(lambda: by_hand(t, args.depth), args.repeat)
    np.testing.assert_allclose(np.asarray(value, dtype=float), expected, rtol=1e-12, atol=1e-12)

    best_ours, best_hand = min(ours), min(hand)
    print(f"Session.eval({source!r}), f {args.depth}-deep sin, {args.points} points")
    print(f"  gradlang Session.eval : first {ours_first:.3f} s, best of {args.repeat} {best_ours:.3f} s")
    print(f"  hand-written NumPy    : first {hand_first:.3f} s, best of {args.repeat} {best_hand:.3f} s")
    print(f"  ratio (best/best)     : {best_ours / best_hand:.2f}x   (target: within 1.5x)")
    print(f"  ratio (first/best)    : {ours_first / best_hand:.2f}x")


if __name__ == "__main__":
    main()
