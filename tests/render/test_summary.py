"""Large values print summarised as NumPy does; `full` prints them whole; JSON keeps every number."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import sympy as sp
from rich.console import Console

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich
from gradlang.render.emit import Emitter
from gradlang.render.shown import EDGE, THRESHOLD

MILLION = np.linspace(-3.0, 3.0, 1_000_000)


def test_a_million_numbers_print_their_edges_and_their_length():
    edges = [repr(float(v)) for v in (*MILLION[:3], *MILLION[-3:])]
    expected = "[" + ", ".join(edges[:3]) + ", …, " + ", ".join(edges[3:]) + "]  # R^1000000, summarised"
    assert to_plain(MILLION) == expected


def test_full_prints_every_number_and_reads_back():
    values = np.arange(THRESHOLD + 1, dtype=float)
    text = to_plain(values, full=True)
    assert "…" not in text
    np.testing.assert_array_equal(Session().eval(text), values)


def test_at_the_threshold_nothing_is_left_out():
    assert "…" not in to_plain(np.zeros(THRESHOLD))
    assert "…" in to_plain(np.zeros(THRESHOLD + 1))


@pytest.mark.parametrize("fmt", ["latex", "pretty"])
def test_the_other_text_formats_summarise_too(fmt):
    text = to_latex(MILLION) if fmt == "latex" else to_rich(MILLION).plain
    mark, size = (r"\cdots", r"\mathbb{R}^{1000000}") if fmt == "latex" else ("⋯", "ℝ¹⁰⁰⁰⁰⁰⁰")
    assert mark in text and size in text and "3.0" in text
    assert len(text) < 300


def test_a_large_symbolic_matrix_prints_summarised_quickly():
    W = sp.ImmutableMatrix(300, 300, [sp.Symbol(f"W[{i}, {j}]", real=True) for i in range(300) for j in range(300)])
    art = to_rich(W, width=100).plain  # summarised, never laid out whole (that took minutes)
    rows = art.splitlines()
    assert "W₂₉₉,₂₉₉" in art and "⋱" in art and "ℝ³⁰⁰ˣ³⁰⁰" in art
    assert len(rows) == 2 * (2 * EDGE + 1) - 1
    plain = to_plain(W)
    assert plain.startswith("[[W[0, 0], W[0, 1], W[0, 2], …, W[0, 297]") and ", …, [W[297, 0]" in plain
    assert plain.endswith("  # R^(300,300), summarised")
    assert r"\vdots" in to_latex(W) and r"\ddots" in to_latex(W)


def test_json_keeps_every_number_and_summarises_only_the_text():
    result = Session().run("linspace(0, 1, 2000)")[-1]
    data = json.loads(json.dumps(to_json(result)))
    assert len(data["value"]) == 2000 and data["value"][-1] == 1.0
    assert "…" in data["text"] and r"\cdots" in data["latex"]
    assert "…" not in to_json(result, full=True)["text"]


@pytest.mark.parametrize("full", [False, True])
def test_the_emitter_passes_full_on(full):
    out = io.StringIO()
    Emitter("plain", out, io.StringIO(), full=full).result(Session().run("linspace(0, 1, 1001)")[-1])
    assert ("…" in out.getvalue()) != full


def test_eval_renders_nothing():
    """Text is made on demand: a result run through the API has none until it is asked for."""
    result = Session().run("t: R\nsin(t) at t = linspace(-3, 3, 100000)")[-1]
    assert "text" not in vars(result) and "latex" not in vars(result)
    assert result.text.endswith("# R^100000, summarised") and "text" in vars(result)


def test_pretty_header_cut_at_the_width_ends_in_an_ellipsis():
    out = io.StringIO()
    console = Console(file=out, width=40, color_system=None)
    source = "x: R\n" + "x + " * 30 + "1"
    emitter = Emitter("pretty", out, io.StringIO(), transcript=True, console=console)
    for result in Session().iter_run(source):
        emitter.result(result)
    header = out.getvalue().splitlines()[0]
    assert len(header) == 40 and header.endswith("…")
