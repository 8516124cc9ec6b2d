"""examples/stop_gradient_tour.ipynb executes cleanly and shows what its text promises.

The notebook runs twice: cell by cell in an in-process IPython shell (fast, needs
only IPython), and as Jupyter runs it, in a real kernel through nbclient (when
nbclient and ipykernel are installed). Both runs are checked for the same
outputs, so the tour cannot rot silently.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import pytest
from tests.safety import SAFETY_NET

pytest.importorskip("IPython")
nbformat = pytest.importorskip("nbformat")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "stop_gradient_tour.ipynb"
ZERO_MATRIX = "[[0, 0, 0], [0, 0, 0], [0, 0, 0]]"


def read_notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


def code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def check_outputs(cells: list[list[dict]], stderr: str) -> None:
    """`cells`: per code cell, its display bundles (mime type -> data); `stderr`: all the error text."""
    assert "Error" not in stderr and "Traceback" not in stderr, stderr
    bundles = [bundle for cell in cells for bundle in cell]
    plain = [bundle.get("text/plain", "") for bundle in bundles]
    assert plain.count(ZERO_MATRIX) == 2  # the Jacobians agree; the softmax's stop blocks nothing
    ste = plain.index("3.0")  # round_ste(2.7), then its derivation, the surrogate 1 and blocked -1
    assert plain[ste + 2 : ste + 4] == ["1", "-1"]
    assert "[0.4223187982515182, 0.4999886502751978, 0.5]" in plain  # the stable softmax at 1000
    assert any(text.endswith("nan]") for text in plain)  # the plain one overflows
    assert "0" in plain  # the EM identity
    assert r"\operatorname{sg}" in cells[-1][0]["text/latex"]  # the Python API's Result
    assert sum(r"\operatorname{sg}" in bundle.get("text/latex", "") for bundle in bundles) >= 5
    pngs = [bundle["image/png"] for bundle in bundles if "image/png" in bundle]
    assert len(pngs) == 4
    for png in pngs:
        check_png(png)


def check_png(data) -> None:
    matplotlib_image = pytest.importorskip("matplotlib.image")
    raw = base64.b64decode(data) if isinstance(data, str) else data
    pixels = matplotlib_image.imread(io.BytesIO(raw), format="png")
    assert pixels.shape[:2] == (500, 800)
    assert (pixels[..., :3].min(axis=2) < 0.9).mean() > 0.01


def test_the_tour_runs_in_an_ipython_shell():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from gradlang.shell import notebook

    shell = InteractiveShell.instance()
    notebook.reset_session(shell)
    cells, stderr = [], ""
    for cell in code_cells(read_notebook()):
        with capture_output() as captured:
            outcome = shell.run_cell(cell.source)
        assert outcome.success, (cell.source, outcome.error_in_exec)
        bundles = [output.data for output in captured.outputs]
        if outcome.result is not None:
            bundles.append(shell.display_formatter.format(outcome.result)[0])
        cells.append(bundles)
        stderr += captured.stderr
    check_outputs(cells, stderr)


def test_the_tour_runs_in_a_jupyter_kernel(monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nb = read_notebook()
    client = nbclient.NotebookClient(nb, timeout=SAFETY_NET, kernel_name="python3", resources={"metadata": {"path": str(REPO)}})
    client.execute()
    cells, stderr = [], ""
    for cell in code_cells(nb):
        assert not [o for o in cell.outputs if o.output_type == "error"]
        stderr += "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr")
        cells.append([o.data for o in cell.outputs if "data" in o])
    check_outputs(cells, stderr)


def test_the_stored_tour_was_saved_executed():
    """Readers of the repository see the outputs: every code cell but the first was saved with them."""
    cells = code_cells(read_notebook())
    assert cells[0].source.strip() == "%load_ext gradlang"
    assert all(cell.outputs for cell in cells[1:])
    assert not [o for cell in cells for o in cell.outputs if o.output_type == "error"]
