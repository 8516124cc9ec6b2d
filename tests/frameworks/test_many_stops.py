"""A loss with many stops (#38): it translates and runs with JAX's numbers, or is refused before the work.

3000 stops wrote 6000 statements whose check and run took hours (each binding is inlined into the next and
SymPy flattens the sums, so the work grows faster than the statements). The bound counts statements, not
seconds, so the same model is refused on every machine, at the user's line, before the program is checked.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from gradlang import limits
from gradlang.errors import LimitError
from gradlang.frameworks import tracing, translate
from tests.frameworks.test_hostile_importers import gradlang, numbers, write_module

POINT = np.array([0.2739233746429086, -0.4604265724722594, -0.9180529521276106])  # --shapes x=3 at the seed

JAX_LOOP = """
    import jax
    import jax.numpy as jnp

    def loss(x):
        y = x
        for _ in range({n}):
            y = y + jax.lax.stop_gradient(y) * 1e-3 * x
        return jnp.sum(y)
"""
TORCH_LOOP = """
    import torch

    class Loss(torch.nn.Module):
        def forward(self, x):
            y = x
            for _ in range({n}):
                y = y + y.detach() * 1e-3 * x
            return y.sum()
"""


@pytest.fixture
def user(tmp_path, monkeypatch):
    """The user's folder, current and first on sys.path; its modules forgotten afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if str(tmp_path) in str(getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]


def jax_reference(n: int):
    import jax

    jax.config.update("jax_enable_x64", True)

    def loss(x):
        y = x
        for _ in range(n):
            y = y + jax.lax.stop_gradient(y) * 1e-3 * x
        return y.sum()

    value, gradient = jax.value_and_grad(loss)(POINT)
    return float(value), np.asarray(gradient)


def test_a_loss_with_30_stops_translates_and_runs_with_jaxs_numbers(user):
    write_module(user, "loop30", JAX_LOOP.format(n=30))
    program = translate("jax", "loop30:loss", "x=3")
    assert program.count("stop_gradient(") == 30
    value, gradient = jax_reference(30)
    ours = numbers(program)
    assert ours[0] == pytest.approx(value, rel=1e-12) and np.allclose(ours[1], gradient, rtol=1e-12)


def test_the_bound_counts_statements_exactly_and_refuses_before_the_check(user, monkeypatch):
    """At the bound the program is checked and runs; one statement more is refused without being checked."""
    monkeypatch.setattr(limits, "MAX_TRANSLATED_STATEMENTS", 19)  # n stops of the loop bind 2n - 1 statements
    write_module(user, "loop10", JAX_LOOP.format(n=10))
    write_module(user, "loop11", JAX_LOOP.format(n=11))
    assert numbers(translate("jax", "loop10:loss", "x=3"))[0] == pytest.approx(jax_reference(10)[0], rel=1e-12)
    monkeypatch.setattr(tracing, "verify", lambda *a: pytest.fail("the program was checked past the bound"))
    with pytest.raises(LimitError) as caught:
        translate("jax", "loop11:loss", "x=3")
    assert "more than 19 statements" in caught.value.message and caught.value.span.line == 8


def test_3000_stops_are_a_limit_error_at_the_users_line(user):
    write_module(user, "loop3000", JAX_LOOP.format(n=3000))
    run = gradlang(user, "--from-jax", "loop3000:loss", "--shapes", "x=3")
    bound = limits.MAX_TRANSLATED_STATEMENTS
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(f"loop3000.py:8:17: LimitError: the translation needs more than {bound} statements")
    assert "jax.lax.stop_gradient(y)" in run.stderr and "Traceback" not in run.stderr


def test_many_detaches_of_a_torch_module_are_a_limit_error_at_the_users_line(user):
    pytest.importorskip("torch")  # the README's test command installs no PyTorch; CI does, and requires it
    write_module(user, "tloop", TORCH_LOOP.format(n=150))
    run = gradlang(user, "--from-torch", "tloop:Loss", "--shapes", "x=3")
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("tloop.py:8:13: LimitError: the translation needs more than ")
    assert "Traceback" not in run.stderr


def test_progress_is_shown_only_on_a_terminal(user):
    """Through a pipe stderr is quiet and stdout the program's numbers; same bytes on every run."""
    write_module(user, "loop3", JAX_LOOP.format(n=3))
    first = gradlang(user, "--from-jax", "loop3:loss", "--shapes", "x=3")
    second = gradlang(user, "--from-jax", "loop3:loss", "--shapes", "x=3")
    assert first.returncode == 0 and first.stderr == "" and first.stdout == second.stdout
    assert textwrap.dedent(first.stdout).count("\n") >= 2


def test_40_stops_translate_check_and_run_in_one_command(user):
    # The check left its formulas in SymPy's cache; the command's own run, in a new Session of the same
    # process, rebuilt equal ones that are other objects and compared them path by path: past the 60 s
    # limit at `t61 = stop_gradient(t60)`, where the check took about 1 s (verify.py clears the cache).
    write_module(user, "loop40", JAX_LOOP.format(n=40))
    run = gradlang(user, "--plain", "--from-jax", "loop40:loss", "--shapes", "x=3")
    assert run.returncode == 0, run.stderr
    value, gradient = jax_reference(40)
    printed = run.stdout.strip().split("\n")
    assert float(printed[-2]) == pytest.approx(value, rel=1e-12)
    assert np.allclose(np.array(eval_list(printed[-1])), gradient, rtol=1e-12, atol=0)


def eval_list(text: str) -> list:
    """A printed list of floats, `[1.0, 2.0]`, as numbers (the test reads its own output, not a user's)."""
    return [float(part) for part in text.strip("[]").split(",")]
