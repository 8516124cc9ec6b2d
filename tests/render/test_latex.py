"""LaTeX output: a table of notations, and a golden fragment for a whole script."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from golden_util import GOLDEN, check_golden, transcript

from gradlang.expr.functions import Maximum, MaxShare, Relu, Round, Where
from gradlang.render.latex import to_latex
from gradlang.expr.stopgrad import StopGradient

x, y = sp.symbols("x y", real=True)

ROWS = [
    (StopGradient(x), r"\operatorname{sg}\left(x\right)"),
    (x * StopGradient(x * y), r"x \operatorname{sg}\left(x y\right)"),
    (StopGradient(x) ** 2, r"\operatorname{sg}\left(x\right)^{2}"),
    (sp.Symbol("x[0]", real=True), "x_{0}"),
    (sp.Symbol("W[0, 1]", real=True), "W_{0,1}"),
    (sp.Symbol("theta[2]", real=True), r"\theta_{2}"),
    (sp.Symbol("x_1[2]", real=True), "{x_{1}}_{2}"),
    (sp.Symbol("alpha", real=True), r"\alpha"),
    (sp.ImmutableMatrix([[x, 1], [2, y]]), r"\begin{bmatrix}x & 1\\2 & y\end{bmatrix}"),
    (sp.ImmutableDenseNDimArray([x, 1]), r"\begin{bmatrix}x & 1\end{bmatrix}"),
    (Maximum(x, y), r"\max\left(x, y\right)"),
    (MaxShare(0, x, y), r"\operatorname{max\_share}\left(0, x, y\right)"),
    (Relu(x), r"\operatorname{relu}\left(x\right)"),
    (Round(x), r"\operatorname{round}\left(x\right)"),
    (Where(x > 0, x, y), r"\begin{cases} x & \text{if}\ x > 0 \\ y & \text{otherwise} \end{cases}"),
    (sp.Float(0.1), "0.1"),
    (sp.Float(1e-10), r"1 \cdot 10^{-10}"),
    (sp.Float(2.5e300), r"2.5 \cdot 10^{300}"),
    (sp.oo, r"\infty"),
    (-sp.oo, r"-\infty"),
    (sp.nan, r"\text{NaN}"),
    (sp.true, r"\text{true}"),
    (sp.asin(x), r"\arcsin{\left(x \right)}"),
]


@pytest.mark.parametrize("value, expected", ROWS, ids=[r[1] for r in ROWS])
def test_latex_notation(value, expected):
    assert to_latex(value) == expected


def test_numpy_array_latex():
    assert to_latex(np.array([1.0, np.inf])) == r"\begin{bmatrix}1.0 & \infty\end{bmatrix}"
    # as SymPy sets the same matrix of floats: a value prints one way whichever engine computed it
    assert to_latex(np.array([[1.0, 2.0], [3.0, 4.0]])) == r"\begin{bmatrix}1.0 & 2.0\\3.0 & 4.0\end{bmatrix}"
    assert to_latex(np.array([[1.0, 2.0], [3.0, 4.0]])) == to_latex(sp.Matrix([[1.0, 2.0], [3.0, 4.0]]))


def test_golden_latex_fragment_of_a_script():
    source = (GOLDEN / "lecture.grad").read_text(encoding="utf-8")
    check_golden("lecture.tex", transcript(source, "latex"))
