"""plot: the Unicode chart's shape on known functions, the PNG's size and pixels, the other renderings."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
import sympy as sp

from gradlang import GradlangError, Session
from gradlang.tools.plot import MissingExtraError, Plot, make_plot
from gradlang.render import to_json, to_latex, to_plain, to_rich
from gradlang.render.chart import CHART_ROWS, CHART_WIDTH, MARKERS, OVERLAP
from gradlang.tools.plot import y_limits
from gradlang.render.image import png_bytes, write_png

T = sp.Symbol("t", real=True)


def plot_of(source: str) -> Plot:
    """The Plot attached to the last result of a program."""
    (plot,) = Session().run(source)[-1].attachments
    assert isinstance(plot, Plot)
    return plot


def grid(chart: str) -> list[str]:
    """The plotting area of a chart: the text right of the y axis, one string per row."""
    rows = chart.splitlines()[:CHART_ROWS]
    assert all(("┤" in row) or ("│" in row) for row in rows)
    return [row.replace("┤", "│").split("│", 1)[1] for row in rows]


def marked(row: str, markers: str = MARKERS + OVERLAP) -> list[int]:
    return [column for column, char in enumerate(row) if char in markers]


# --- the Unicode chart ---------------------------------------------------------------


def test_a_straight_line_rises_from_bottom_left_to_top_right():
    cells = grid(to_plain(plot_of("plot(t, t, 0, 1)")))
    columns = max(max(marked(row), default=0) for row in cells) + 1
    for number, row in enumerate(cells):
        expected = (CHART_ROWS - 1 - number) / (CHART_ROWS - 1) * (columns - 1)
        assert marked(row), f"row {number} is empty"
        assert all(abs(column - expected) <= 2 for column in marked(row)), (number, row)
    assert marked(cells[0])[-1] == columns - 1 and marked(cells[-1])[0] == 0


def test_a_parabola_has_its_minimum_in_the_middle_of_the_bottom_row_and_is_symmetric():
    cells = grid(to_plain(plot_of("plot(t^2, t, -1, 1)")))
    columns = max(marked(cells[0])) + 1
    bottom = marked(cells[-1])
    half_width = np.sqrt(0.5 / (CHART_ROWS - 1)) * (columns - 1) / 2 + 1  # where t^2 is within half a row of 0
    assert bottom and all(abs(c - (columns - 1) / 2) <= half_width for c in bottom)
    assert marked(cells[0])[0] == 0 and marked(cells[0])[-1] == columns - 1
    for row in cells:
        left = {c for c in marked(row) if c < (columns - 1) / 2}
        right = {columns - 1 - c for c in marked(row) if c > (columns - 1) / 2}
        assert left and all(min(abs(c - m) for m in right) <= 1 for c in left)


def test_the_chart_has_a_fixed_width_ticks_an_axis_and_a_legend_per_series():
    chart = to_plain(plot_of("plot(sin(t), cos(t), t, 0, 6.28)"))
    lines = chart.splitlines()
    assert max(len(line) for line in lines) <= CHART_WIDTH
    assert len(lines) == CHART_ROWS + 3 + 3  # grid, x axis, x ticks, x name, legend: two series and the overlap
    assert lines[0].split("┤")[0].strip() == "1" and lines[CHART_ROWS - 1].split("┤")[0].strip() == "-1"
    assert lines[CHART_ROWS].lstrip().startswith("└") and lines[CHART_ROWS].count("┬") == 5
    assert lines[CHART_ROWS + 1].split() == ["0", "1.57", "3.14", "4.71", "6.28"]
    assert lines[CHART_ROWS + 2].strip() == "t"
    assert lines[-3:-1] == [f"  {MARKERS[0]} sin(t)", f"  {MARKERS[1]} cos(t)"]
    body = "".join(grid(chart))
    assert body.count(MARKERS[0]) > 40 and body.count(MARKERS[1]) > 40


def test_sin_peaks_at_the_top_a_quarter_of_the_way_and_cos_starts_there():
    cells = grid(to_plain(plot_of("plot(sin(t), cos(t), t, 0, 6.28)")))
    columns = len(cells[CHART_ROWS // 2].rstrip("┈ ")) or 1
    sine_top = [c for c, ch in enumerate(cells[0]) if ch in MARKERS[0] + OVERLAP]
    cosine_top = [c for c, ch in enumerate(cells[0]) if ch in MARKERS[1] + OVERLAP]
    assert sine_top and abs(np.mean(sine_top) - (columns - 1) / 4) <= 3
    assert 0 in cosine_top


def test_stops_are_written_sg_in_the_legend():
    chart = to_plain(plot_of("plot(t*stop_gradient(t), diff(t*stop_gradient(t), t), t, -1, 1)"))
    legend = chart.splitlines()[-3:]
    assert f"  {MARKERS[0]} t*sg(t)" in legend and f"  {MARKERS[1]} diff(t*sg(t), t)" in legend
    assert "stop_gradient" not in chart


def test_identical_series_are_drawn_as_overlap_and_the_legend_says_so():
    chart = to_plain(plot_of("plot(t, 1*t, t, 0, 1)"))
    body = "".join(grid(chart))
    assert OVERLAP in body and MARKERS[0] not in body and MARKERS[1] not in body
    assert chart.splitlines()[-1].strip() == f"{OVERLAP} several series in one cell"


def test_undefined_values_leave_gaps_not_errors():
    plot = plot_of("plot(log(t), t, -1, 1)")
    cells = grid(to_plain(plot))
    columns = max(max(marked(row), default=0) for row in cells) + 1
    assert all(c >= columns // 2 for row in cells for c in marked(row))
    assert to_json(plot)["series"][0]["y"][0] == "nan"


def test_a_zero_line_is_drawn_when_zero_is_inside_the_range():
    assert "┈" in to_plain(plot_of("plot(t, t, -1, 1)"))
    assert "┈" not in to_plain(plot_of("plot(t, t, 1, 2)"))


def test_a_spike_does_not_flatten_the_rest_of_the_chart():
    ys = np.array([np.concatenate([np.linspace(0, 1, 399), [1e9]])])
    low, high = y_limits(ys)
    assert low > -1 and high < 2


def test_rich_text_is_the_plain_chart_in_colour():
    plot = plot_of("plot(sin(t), cos(t), t, 0, 3)")
    text = to_rich(plot)
    assert text.plain == to_plain(plot)
    assert {str(span.style) for span in text.spans} >= {"cyan", "magenta"}


# --- LaTeX, JSON, errors -----------------------------------------------------------------


def test_latex_names_the_expressions_with_sg_for_stops():
    latex = to_latex(plot_of("plot(t*sg(t), t, 0, 1)"))
    assert r"\operatorname{sg}" in latex and r"t \in [0, 1]" in latex


def test_json_carries_the_grid_and_the_values():
    data = to_json(plot_of("plot(t^2, 2*t, t, 0, 2)"))
    assert data["kind"] == "plot" and data["variable"] == "t" and data["interval"] == [0.0, 2.0]
    assert len(data["x"]) == 400 and data["x"][0] == 0.0 and data["x"][-1] == 2.0
    assert [s["label"] for s in data["series"]] == ["t^2", "2*t"]
    assert data["series"][0]["y"][-1] == 4.0 and data["series"][1]["y"][-1] == 4.0


def test_values_come_from_the_compiled_path_with_stops_as_identity():
    plot = make_plot([3 * T], ["3*t"], T, 0.0, 1.0, points=5)
    assert plot.xs.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert np.allclose(plot.ys[0], 3 * plot.xs)
    surrogate = plot_of("plot(diff(t*sg(t), t), t, 0, 1)")
    assert np.allclose(surrogate.ys[0], surrogate.xs)


@pytest.mark.parametrize(
    "source, kind, words",
    [
        ("plot(t + x, t, 0, 1)", "ValueError", "also depends on x"),
        ("plot(t, t, 1, 0)", "ValueError", "a < b"),
        ("plot(t, t, 0, inf)", "ValueError", None),
    ],
)
def test_bad_plots_are_gradlang_errors(source, kind, words):
    with pytest.raises(GradlangError) as caught:
        Session().run(source)
    assert caught.value.kind == kind and caught.value.line == 1
    if words:
        assert words in caught.value.message


# --- PNG ---------------------------------------------------------------------------------


def _pixels(source):
    return pytest.importorskip("matplotlib.image").imread(source, format="png")


def test_png_has_the_size_asked_for_and_shows_each_curve(tmp_path):
    pytest.importorskip("matplotlib")
    plot = plot_of("plot(relu(t), diff(relu(t), t), t, -2, 2)")
    path = write_png(plot, tmp_path / "relu.png", 640, 480)
    assert path.exists() and path.stat().st_size > 5000
    pixels = _pixels(path)
    assert pixels.shape[:2] == (480, 640)
    rgb = pixels[..., :3]
    assert (rgb.min(axis=2) < 0.9).mean() > 0.01, "the image is blank"
    blue = np.abs(rgb - np.array([0x1F, 0x77, 0xB4]) / 255).max(axis=2) < 0.1   # first series
    orange = np.abs(rgb - np.array([0xFF, 0x7F, 0x0E]) / 255).max(axis=2) < 0.1  # second series
    assert blue.sum() > 500 and orange.sum() > 200


def test_png_bytes_are_a_png_for_notebooks():
    pytest.importorskip("matplotlib")
    data = png_bytes(plot_of("plot(t, t, 0, 1)"))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert _pixels(io.BytesIO(data)).shape[:2] == (500, 800)


def test_without_matplotlib_png_says_how_to_install_it(monkeypatch, tmp_path):
    plot = plot_of("plot(t, t, 0, 1)")
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(MissingExtraError) as caught:
        write_png(plot, tmp_path / "x.png")
    assert "pip install matplotlib" in caught.value.message and caught.value.kind == "ValueError"
    with pytest.raises(MissingExtraError):
        png_bytes(plot)
    assert not (tmp_path / "x.png").exists()


# --- jumps and poles break the line -------------------------------------------------------


def _gaps(plot) -> list[float]:
    """The x positions of the gaps (NaN samples) of a one-series plot."""
    return [float(x) for x, y in zip(plot.xs, plot.ys[0]) if np.isnan(y)]


def test_a_pole_breaks_the_line_instead_of_a_stroke_through_it():
    t = sp.Symbol("t")
    plot = make_plot([1 / t], None, t, -1, 1)
    gaps = _gaps(plot)
    assert any(abs(x) < 0.003 for x in gaps)  # the pole at 0 is between two samples: a gap there
    # no drawn segment joins a negative value to a positive one across 0
    finite = [(x, y) for x, y in zip(plot.xs, plot.ys[0])]
    for (x0, y0), (x1, y1) in zip(finite, finite[1:]):
        assert not (np.isfinite(y0) and np.isfinite(y1) and y0 < -10 and y1 > 10), (x0, x1)


def test_a_jump_breaks_the_line_and_smooth_curves_do_not():
    t = sp.Symbol("t")
    assert len(_gaps(make_plot([sp.sign(t)], None, t, -1, 1))) == 1
    for smooth in (sp.sin(3 * t), sp.Abs(t), sp.exp(4 * t), t**3):
        plot = make_plot([smooth], None, t, -1, 1)
        assert _gaps(plot) == [] and len(plot.xs) == 400


def test_a_break_in_one_series_keeps_the_others_whole():
    t = sp.Symbol("t")
    plot = make_plot([sp.sign(t), t], None, t, -1, 1)
    assert np.isnan(plot.ys[0]).sum() == 1 and np.isfinite(plot.ys[1]).all()
    inserted = np.flatnonzero(np.isnan(plot.ys[0]))[0]
    assert plot.ys[1][inserted] == pytest.approx(plot.xs[inserted])  # the probe's true value
    assert np.all(np.diff(plot.xs) > 0)
