"""The command line of --from-jax / --from-torch: emit, run, explain, export, errors placed, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.frameworks.harness import EXAMPLES
from tests.safety import SAFETY_NET

REPO = EXAMPLES.parents[1]
TD = ["--from-jax", "rl_jax:td_loss", "--shapes", "W=2,3 s=3 s2=3"]


def gradlang(*args, env: dict | None = None, stdin: str = "") -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    environment.pop("GRADLANG_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "gradlang", *args], capture_output=True, text=True, cwd=EXAMPLES,
                          env=environment, timeout=SAFETY_NET, input=stdin)


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


def test_emit_prints_a_program_that_gradlang_reads(jax):
    run = gradlang(*TD, "--emit")
    assert run.returncode == 0, run.stderr
    assert "stop_gradient(W @ s2)   # lax.stop_gradient at rl_jax.py:17" in run.stdout
    assert "W: R^(2,3)" in run.stdout


def test_running_prints_the_loss_and_its_gradients(jax):
    run = gradlang("--plain", *TD)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2  # the loss, then its gradient by [W, s, s2] in one statement
    by_w, _, by_s2 = json.loads(lines[1])
    assert by_w[0] == [0.0, 0.0, 0.0] and any(by_w[1])  # only the action's row of W moves
    assert by_s2 == [0.0, 0.0, 0.0]  # s2 only feeds the stopped target


def test_explain_wrt_explains_the_gradient_by_those_leaves(jax):
    args = ["--from-jax", "byol_jax:loss", "--example-args", "byol_jax:example", "--explain-wrt", "params.online"]
    emitted = gradlang(*args, "--emit")
    assert emitted.stdout.splitlines()[-1] == "explain grad(loss, params_online_W)"
    run = gradlang("--plain", *args)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# grad(") and "stop" in run.stdout


def test_explain_wrt_at_larger_literal_sizes_is_the_reverse_pass(jax):
    """Issue #36: at 16×32 the gradient was refused (explain derived it by components, a tree above the limit);
    it is now the reverse pass, as at symbolic sizes."""
    args = ["--from-jax", "byol_jax:batch_loss", "--shapes", "W=16,32 P=16,16 T=16,32 X=8,32", "--explain-wrt", "W"]
    run = gradlang("--plain", *args)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# grad(") and "tensor reverse pass; one stop, irrelevant" in run.stdout
    assert "✓ equals grad" in run.stdout


def test_i_opens_the_repl_with_the_programs_names(jax):
    run = gradlang("--plain", *TD, "-i", stdin="blocked(td_loss, W) at W = W_at, s = s_at, s2 = s2_at\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1].endswith("[0.0, 0.0, 0.0]]")  # the stop removes only the target's row


def test_export_after_translation_is_a_module(jax):
    run = gradlang(*TD, "--export", "jax")
    assert run.returncode == 0, run.stderr
    assert "def td_loss(W, s, s2):" in run.stdout and "jax.lax.stop_gradient" in run.stdout


def test_an_operation_without_translation_is_placed_at_the_users_line(jax):
    run = gradlang("--from-jax", "unsupported_jax:loss", "--shapes", "x=3")
    assert run.returncode == 1
    assert run.stderr.splitlines()[0] == "unsupported_jax.py:12:15: TranslateError: no translation for the JAX " \
                                         "operation cumsum"
    assert "running = jnp.cumsum(y)" in run.stderr and "Traceback" not in run.stderr


def test_a_loop_is_refused_by_name(jax):
    run = gradlang("--json", "--from-jax", "unsupported_jax:looped", "--shapes", "x=3")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    record = json.loads(run.stdout.splitlines()[-1])
    assert record["error"] == "TranslateError" and "while_loop" in record["message"] and record["line"] == 17


@pytest.mark.parametrize("args, words", [
    (["--from-jax", "rl_jax:nothing", "--shapes", "W=2,3"], "rl_jax has no nothing"),
    (["--from-jax", "no_such_module:f", "--shapes", "x=3"], "cannot import no_such_module"),
    (["--from-jax", "rl_jax:td_loss", "--shapes", "W=2,3"], "no example value for the parameter s"),
    (["--from-jax", "rl_jax:td_loss"], "needs example arguments"),
    (["--from-jax", "rl_jax"], "takes MODULE:NAME"),
    (["--from-jax", "unsupported_jax:not_a_loss", "--shapes", "x=3"], "returns shape (3,)"),
])
def test_mistakes_are_one_line_errors(jax, args, words):
    run = gradlang(*args)
    assert run.returncode == 1 and words in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("shapes, words", [("W=2;x", "expected NAME=LENGTHS"), ("x=3 x=4", "x is given twice")])
def test_malformed_shapes_are_usage_errors(shapes, words):
    run = gradlang("--from-jax", "rl_jax:td_loss", "--shapes", shapes)
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_options_of_a_translation_need_one():
    run = gradlang("--emit", "-e", "1")
    assert run.returncode == 2 and "go with --from-jax or --from-torch" in run.stderr


def test_a_missing_framework_names_the_extra_to_install(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n", encoding="utf-8")
    run = gradlang("--from-torch", "byol_torch:BYOL", "--shapes", "x=3",
                   env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"})
    assert run.returncode == 1
    assert run.stderr.strip() == ("TranslateError: --from-torch needs PyTorch, which is not installed: "
                                  "pip install '.[torch]' (or pip install 'gradlang[torch]')")
