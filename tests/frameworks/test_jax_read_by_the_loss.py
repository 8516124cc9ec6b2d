"""--from-jax writes what the loss reads, at the tensor level (issue #39: Dopamine's C51, rlax's V-trace).

- Code whose results the loss never reads is left out, as jit leaves it out (JAX's dce_jaxpr): a stop in it is
  named in a header note with its line, and the program's stops are the ones the ledger covers.
- A vector's entry joined to a vector is its slice `v[i:i+1]` (a scalar `s * onehot(0, 1)`, a number `[c]`), so
  the join stays one node of the formula and explain derives it at the tensor level.
- A scan's scanned formula is bound once, each step reading a row of the name.
Each gradient is checked against jax.grad in float64.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradlang import Session
from gradlang.render.plain import to_plain
from tests.frameworks.harness import point, run, user_attribute, worst
from tests.frameworks.test_training_patterns import line_of

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def jax_numbers(spec: str, shapes: str) -> list:
    args = tuple(point(shapes).values())
    value, grads = jax.value_and_grad(user_attribute(spec), argnums=tuple(range(len(args))))(*args)
    return [np.asarray(value), *(np.asarray(g) for g in grads)]


def explained(spec: str, shapes: str, wrt: str) -> tuple:
    """The program with --explain-wrt, and its explanation in plain text."""
    from tests.frameworks.harness import in_examples
    from gradlang.frameworks import translate

    with in_examples():
        program = translate("jax", spec, shapes=shapes, explain_wrt=(wrt,))
    result = Session().run(program)[-1]
    return program, "\n".join(to_plain(step) for step in result.steps)


def test_what_the_loss_never_reads_is_left_out_and_its_stops_named():
    spec, shapes = "training_jax:unread_outputs", "params=3,4 x=3"
    program, ours = run("jax", spec, shapes=shapes)
    assert worst(ours, jax_numbers(spec, shapes)) < 1e-12, program
    written = [line for line in program.splitlines() if "= stop_gradient(" in line]
    assert len(written) == 1 and "inside log_softmax" in written[0], program  # the loss's own stop only
    softmax, stop = line_of("training_jax", "jax.nn.softmax(logits)"), line_of("training_jax", "baseline =")
    note = next(line for line in program.splitlines() if "is left out" in line)
    assert f"training_jax.py:{softmax}, training_jax.py:{stop} is left out" in note, note
    assert "1 stop(s) kept" in program


def test_the_ledger_has_an_entry_for_every_stop_the_program_writes():
    program, text = explained("training_jax:unread_outputs", "params=3,4 x=3", "params")
    assert "✓ equals grad" in text, text
    assert len(re.findall(r"^stop ", text, re.M)) == program.count("= stop_gradient(") == 1, text


def test_an_entry_a_scalar_and_a_number_joined_to_a_vector_stay_one_tensor_node():
    spec, shapes = "training_jax:joined", "x=5"
    program, ours = run("jax", spec, shapes=shapes)
    assert worst(ours, jax_numbers(spec, shapes)) < 1e-12, program
    join = next(line for line in program.splitlines() if "concat(" in line)
    assert re.search(r"t\d+\[4:5\]", join) and "* onehot(0, 1)" in join and "[1.5]" in join, join
    _, text = explained(spec, shapes, "x")
    assert "tensor reverse pass" in text and "[concat]" in text and "✓ equals grad" in text, text


def test_a_scanned_formula_is_written_once_and_read_by_rows():
    spec, shapes = "training_jax:scanned", "v=4 r=4"
    program, ours = run("jax", spec, shapes=shapes)
    assert worst(ours, jax_numbers(spec, shapes)) < 1e-12, program
    body = program.split("\n\n")[2]
    assert body.count("tanh(") == 1, program
    assert len(set(re.findall(r"^t\d+ = (t\d+)\[[0-3]\] \+ ", body, re.M))) == 1, program  # rows of one name
    assert len(re.findall(r"^t\d+ = t\d+\[[0-3]\] \+ ", body, re.M)) == 4, program


def test_the_unrolled_export_masks_components_over_their_dag():
    """The export's masks walk the components as one DAG: a branch sharing its parts (an unrolled scan's steps)
    is masked once per distinct part, where SymPy's tree walks took 33 s at depth 18, doubling with each step."""
    import sympy as sp

    from gradlang.export.masks import masked_components
    from gradlang.expr.functions import Where
    from gradlang.expr.stopgrad import StopGradient
    from gradlang.expr.walk import dag_nodes, rebuild

    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    chain = y
    for _ in range(30):  # 2^30 nodes as a tree, about 150 distinct ones
        chain = sp.Add(sp.tanh(chain), sp.Mul(chain, x, evaluate=False), evaluate=False)
    masked = masked_components([Where(x > 0, chain, -chain), 3 * y])
    assert masked[1] == 3 * y and len(dag_nodes(masked)) < 1000
    condition, taken, other = masked[0].args
    assert condition == (x > 0)
    mask = {s: Where(x > 0, s, StopGradient(s), evaluate=False) for s in (x, y)}
    assert rebuild(chain, mask, lambda node, args: node.func(*args)) == taken  # every symbol masked, as taken
