"""explain backward(e, x): the forward and backward tables of reverse mode, in every format."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "x: R^2\nexplain backward(x[0] * sg(x[1]) + x[1]^2, x)"


@pytest.fixture(scope="module")
def result():
    return Session().run(PROGRAM)[-1]


def test_value_is_the_gradient(result):
    assert result.text == "[stop_gradient(x[1]), 2*x[1]]"
    assert Session().eval("x: R^2\nbackward(x[0] * sg(x[1]) + x[1]^2, x)") == Session().eval(
        "x: R^2\ngrad(x[0] * sg(x[1]) + x[1]^2, x)"
    )


def test_plain_has_both_tables_and_the_cut(result):
    text = to_plain(result.steps[0])
    assert "forward:" in text and "backward:" in text
    assert "v4 = stop_gradient(v1)" in text and "cut: no gradient flows back" in text
    assert "d/dx[0] = v̄3 = stop_gradient(x[1])" in text


def test_latex_rich_and_json(result):
    view = result.steps[0]
    assert r"\operatorname{sg}" in to_latex(view) and r"\bar{v}" in to_latex(view)
    console = Console(width=100, color_system=None, record=True)
    console.print(to_rich(view))
    assert "cut: no gradient flows back" in console.export_text()
    data = to_json(view)
    assert data["rule"] == "backward"
    assert [row["stopped"] for row in data["forward"]].count(True) == 1


def test_cli_json_lists_the_tables_as_steps():
    output = subprocess.run(
        [sys.executable, "-m", "gradlang", "--json", "-e", "explain backward(x * sg(x), x)"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout
    record = json.loads(output.splitlines()[0])
    assert record["kind"] == "explain" and record["steps"][0]["rule"] == "backward"
