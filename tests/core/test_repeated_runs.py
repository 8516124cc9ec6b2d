"""A program run a second time costs what it cost the first time (SymPy's cache, core/session.py).

A chain of stops, as --from-jax writes one per `lax.stop_gradient` in a loop, ran in 1 s; run again in
the same process (the importer's check, then its run; the REPL; a notebook) it passed any limit,
because formulas equal to cached ones but not the same objects were compared path by path. The
statement limit (60 s of CPU) is a safety net here, some 30 times what the program needs."""

from __future__ import annotations

import pytest

from gradlang import Session


def _chain(stops: int) -> str:
    lines, previous = ["x: R^3"], "x"
    for k in range(1, 2 * stops, 2):
        lines += [f"t{k} = stop_gradient({previous})", f"t{k + 1} = {previous} + t{k} * 0.001 * x"]
        previous = f"t{k + 1}"
    return "\n".join(lines + [f"loss = sum({previous})", "grad(loss, x) at x = [0.5, -0.25, 1.0]"])


def _expected(stops: int) -> list:
    """d/dx of x + sg(x)·0.001·x, repeated: each step multiplies the adjoint by 1 + 0.001·sg(t)."""
    x = [0.5, -0.25, 1.0]
    value, slope = list(x), [1.0, 1.0, 1.0]
    for _ in range(stops):
        slope = [s + 0.001 * v for s, v in zip(slope, value)]
        value = [v + v * 0.001 * a for v, a in zip(value, x)]
    return slope


def test_a_chain_of_stops_run_twice_in_one_session():
    session, program = Session(), _chain(60)
    for _ in range(2):
        numbers = [float(v) for v in session.run(program)[-1].value]
        assert numbers == pytest.approx(_expected(60), rel=1e-12)


def test_a_chain_of_stops_run_in_a_second_session():
    program = _chain(60)
    first = Session().run(program)[-1].text
    assert Session().run(program)[-1].text == first
