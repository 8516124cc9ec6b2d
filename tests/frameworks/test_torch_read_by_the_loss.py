"""--from-torch writes what the loss reads (issue #39): torch.export drops an unread softmax but keeps an unread
`.detach()` (and an unread no_grad region), which, written, was a stop with no ledger entry. Nodes the loss never
reads are left out, as the JAX importer leaves them out (test_jax_read_by_the_loss.py), and a stop left out is
named in a header note with its line. Each gradient is checked against torch.autograd in float64."""

from __future__ import annotations

import re

import pytest

from gradlang import Session
from gradlang.render.plain import to_plain
from tests.frameworks.harness import in_examples, run, worst
from tests.frameworks.test_training_patterns import autograd, line_of, shaped

torch = pytest.importorskip("torch")

SPEC, SHAPES = "training_torch:UnreadDetach", "x=3"


def test_an_unread_detach_is_left_out_and_named():
    program, ours = run("torch", SPEC, shapes=SHAPES)
    assert worst(ours, autograd(SPEC, shaped(SHAPES))) < 1e-9, program
    written = [line for line in program.splitlines() if "= stop_gradient(" in line]
    used = line_of("training_torch", "baseline = h.detach()")
    assert len(written) == 1 and f"training_torch.py:{used}" in written[0], program
    note = next(line for line in program.splitlines() if "is left out" in line)
    unread, region = line_of("training_torch", "logged = F.softmax(h.detach()"), line_of("training_torch", "peak = h.max()") - 1  # the with line
    assert f"training_torch.py:{unread}" in note and f"training_torch.py:{region}" in note, note
    assert f"training_torch.py:{used}" not in note, note
    assert "softmax" not in program.split("\n\n", 1)[1], program  # nothing of the unread softmax is written


def test_every_stop_the_program_writes_has_its_ledger_entry():
    from gradlang.frameworks import translate

    with in_examples():
        program = translate("torch", SPEC, shapes=SHAPES, explain_wrt=("net.weight",))
    text = "\n".join(to_plain(step) for step in Session().run(program)[-1].steps)
    assert "✓ equals grad" in text, text
    assert len(re.findall(r"^stop ", text, re.M)) == program.count("= stop_gradient(") == 1, text
