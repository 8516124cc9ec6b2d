"""--plot-dir, --export and the attachments (gradcheck tables, plots) in every format."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from test_cli import gradlang  # pytest puts this folder on sys.path (no __init__.py here)

TOOLS = """\
x: R^2
loss(v) = v[0] * sg(v[1]) + v[1]^2
gradcheck(loss(x), x) at x = [1.0, 2.0]
plot(relu(t), diff(relu(t), t), t, -1, 1)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "tools.grad"
    path.write_text(TOOLS, encoding="utf-8")
    return path


def test_plain_shows_the_gradcheck_table_and_the_chart_as_comments(script):
    run = gradlang("--plain", str(script), cwd=script.parent)
    assert run.returncode == 0, run.stderr
    comments = [line for line in run.stdout.splitlines() if line.startswith("#")]
    assert any("gradcheck" in line for line in comments)
    assert any("relu(t)" in line for line in comments)  # the chart's legend
    values = [line for line in run.stdout.splitlines() if not line.startswith("#")]
    assert values[1] == "[relu(t), where(t > 0, 1, 0)]"


def test_json_carries_attachments(script):
    run = gradlang("--json", str(script), cwd=script.parent)
    records = [json.loads(line) for line in run.stdout.splitlines()]
    assert [len(r.get("attachments", [])) for r in records] == [1, 1]


def test_plot_dir_writes_a_png(script, tmp_path):
    pytest.importorskip("matplotlib")
    run = gradlang("--plain", "--plot-dir", str(tmp_path / "plots"), str(script), cwd=script.parent)
    assert run.returncode == 0, run.stderr
    image = tmp_path / "plots" / "plot-line4-1.png"
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("target, primitive", [("jax", "jax.lax.stop_gradient"), ("torch", ".detach()"),
                                               ("tf", "tf.stop_gradient"), ("numpy", "def loss")])
def test_export_prints_a_python_module(script, target, primitive):
    run = gradlang("--export", target, str(script), cwd=script.parent)
    assert run.returncode == 0, run.stderr
    ast.parse(run.stdout)
    assert "def loss" in run.stdout and primitive in run.stdout


def test_export_takes_code_from_e(tmp_path):
    run = gradlang("--export", "numpy", "-e", "y: R; f(v) = v^2 * y; loss = f(3) - y", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "def f(v, *, y):" in run.stdout and "def loss(y):" in run.stdout


def test_export_needs_a_program(tmp_path):
    run = gradlang("--export", "jax", cwd=tmp_path)
    assert run.returncode == 2 and "--export needs a FILE or -e CODE" in run.stderr


def test_max_memory_refuses_above_it_and_names_the_estimate_and_the_flag(tmp_path):
    """Arrays are bounded by their memory, from their shapes; --max-memory raises (or lowers) the bound."""
    from tests.cli.test_cli import gradlang

    program = "x: R^n\nsum(outer(x, x)) at x = linspace(0, 1, 100)"
    refused = gradlang("--plain", "--max-memory", "50KiB", "-e", program, cwd=tmp_path)
    assert refused.returncode == 1 and refused.stdout == ""
    first = refused.stderr.splitlines()[0]
    assert "LimitError:" in first and "needs about" in first and "above the limit of 51200 bytes" in first
    assert "raise it with --max-memory" in first
    allowed = gradlang("--plain", "--max-memory", "1MiB", "-e", program, cwd=tmp_path)
    assert allowed.returncode == 0 and abs(float(allowed.stdout) - 2500) < 1e-9
    wrong = gradlang("--max-memory", "lots", "-e", "1", cwd=tmp_path)
    assert wrong.returncode == 2 and "expected a size such as 8GiB" in wrong.stderr
