"""lax.scan unrolled at its traced length (rlax's multistep returns, Dreamer's imagination): one step per slice.

A scan's body is a jaxpr of (consts, carry, x_t) -> (carry, y_t). It is walked
once per step, in the scan's order (reverse=True runs from the last slice), its
inputs the caller's Values: the constants, the carry the previous step gave,
and row t of each scanned array (`r_t[3]`, `xs[3, :]`). The steps' outputs are
stacked as the scan stacks them: scalars into a vector `y_0 * onehot(0, T) + …`
(a sum explain derives at the tensor level; `[y_0, …]` it would read entry by
entry), vectors into `stack([…], 0)`. A comment in the program says the scan was unrolled, where,
and at which length: the program is the scan at that length, as jax.grad
differentiates it there.
"""

from __future__ import annotations

import numpy as np

from gradlang.frameworks import ops
from gradlang.frameworks.program import PRODUCT, SUM, Line, TranslateError, Value, Where, wrap


def unrolled(walker, eqn, ins: list, where: Where) -> list:
    """The scan's outputs (final carry, then stacked ys) as (Value, value at the point) pairs."""
    params = eqn.params
    body, consts = params["jaxpr"].jaxpr, params["jaxpr"].consts
    n_consts, n_carry, length = params["num_consts"], params["num_carry"], params["length"]
    steps = range(length - 1, -1, -1) if params["reverse"] else range(length)
    live = [walker.is_live(v) for v in eqn.invars]
    ins = _named(walker.writer, body, ins, n_consts, n_carry, length)
    carry, carry_live = ins[n_consts:n_consts + n_carry], live[n_consts:n_consts + n_carry]
    walker.writer.body.append(Line("", f"lax.scan at {where} unrolled at its traced length: {length} step(s)"
                                       f"{' from the last' if params['reverse'] else ''}"))
    ys, ys_live = [], []
    for t in steps:
        xs = [_row(value, point, t) for value, point in ins[n_consts + n_carry:]]
        outs, out_live = walker.body(body, consts, [*ins[:n_consts], *carry, *xs],
                                     [*live[:n_consts], *carry_live, *live[n_consts + n_carry:]], where, f"step {t}")
        carry = [(walker.writer.bind(v, 2), p) for v, p in outs[:n_carry]]
        carry_live = out_live[:n_carry]
        ys.append(outs[n_carry:])
        ys_live.append(out_live[n_carry:])
    if params["reverse"]:
        ys.reverse()
    stacked = [_stacked([step[k] for step in ys], walker.writer) for k in range(len(body.outvars) - n_carry)]
    return [*carry, *stacked], [*carry_live, *(any(flags) for flags in zip(*ys_live))]


def _named(writer, body, ins: list, n_consts: int, n_carry: int, length: int) -> list:
    """The constants and scanned arrays every step reads, each bound to a name when more than one step reads
    it: rlax's V-trace scans its td_errors, a formula of the critic, and each step reads a row of it; written
    inline, each row would repeat the whole formula (`(min(1.0, t16) * (…))[3]`, `(…)[2]`, …)."""
    reads = {}
    for eqn in body.eqns:
        for var in eqn.invars:
            reads[id(var)] = reads.get(id(var), 0) + 1
    for var in body.outvars:
        reads[id(var)] = reads.get(id(var), 0) + 1
    named = list(ins)
    for k in [*range(n_consts), *range(n_consts + n_carry, len(ins))]:
        value, point = ins[k]
        named[k] = (writer.bind(value, reads.get(id(body.invars[k]), 0) * length), point)
    return named


def _row(value: Value, point, t: int) -> tuple:
    """Row t of a scanned array: its Value (v[t], M[t, :]) and its value at the point."""
    array = np.asarray(point)
    return ops.index(value, 0, t, tuple(array.shape[1:])), array[t]


def _stacked(parts: list, writer) -> tuple:
    """The steps' outputs stacked along a new first axis, as the scan returns them."""
    values, points = [v for v, _ in parts], [np.asarray(p) for _, p in parts]
    shape = (len(parts), *points[0].shape)
    sizes = tuple(d for d in points[0].shape if d != 1)
    if len(sizes) > 1:
        raise TranslateError(f"a scan whose steps each give shape {points[0].shape}: stacked, more than two axes")
    named = [writer.bind(ops.reshape(v, points[0].shape) if v.sizes else (v.scalar or v), 1) for v in values]
    if not sizes:  # y_0 * onehot(0, T) + …: a vector explain derives at the tensor level ([y_0, …] it reads by entries)
        text = " + ".join(f"{wrap(v, PRODUCT)} * onehot({t}, {len(named)})" for t, v in enumerate(named))
        return Value(text, shape, SUM), np.stack(points)
    return Value("stack([" + ", ".join(v.text for v in named) + "], 0)", shape), np.stack(points)
