"""LaTeX that compiles (issue 40): A⁻ᵀ as one superscript, a dollar in a note escaped, and the new
derivations of the issue (InfoNCE, a grad by a list of tensors, the checks at a symbolic size) compiled
where pdflatex is installed."""

from __future__ import annotations

import shutil

import pytest

from gradlang.core.session import Session
from gradlang.explain.formula import Math, latex_chars, latex_math
from gradlang.explain.note import note
from gradlang.render import to_latex
from gradlang.render.notes import latex_note
from tests.explain.test_latex_compiles import _compile

INVERSE = "n: size\nA: R^(n,n)\nx: R^n\n"


def _latex(source: str) -> str:
    results = [r for r in Session().run(source) if r is not None]
    return "\n".join(to_latex(step) for r in results for step in r.steps) or to_latex(results[-1])


def test_an_inverse_transposed_is_one_superscript():
    assert to_latex(Session().run(INVERSE + "transpose(inv(A))")[-1]) == r"A^{-\top}"
    assert to_latex(Session().run(INVERSE + "inv(transpose(A))")[-1]) == r"A^{-\top}"
    assert to_latex(Session().run(INVERSE + "B: R^(n,n)\ntranspose(inv(A + B))")[-1]) == r"\left(A + B\right)^{-\top}"
    text = _latex(INVERSE + "explain grad(log(det(A)) + dot(x, inv(A) @ x), A)")
    assert r"A^{-\top}" in text and r"^{-1}^{\top}" not in text and r"}^{\top}^" not in text
    assert latex_chars("A⁻ᵀ Ȳ A⁻ᵀ") == r"A^{-\top}  A^{-\top}" and latex_chars("A⁻¹") == "A^{-1}"
    assert latex_math("A⁻ᵀ") == r"A^{-\top}"


def test_a_power_under_a_transpose_mark_is_braced():
    # outer(1, x^2) is 1 (x²)ᵀ: written x^{2}^{\top}, a double superscript pdflatex refuses (a hessian's ledger)
    assert to_latex(Session().run("x: R^3\nouter(ones(3), x^2)")[-1]) == r"\mathbf 1 {x^{2}}^{\top}"
    assert to_latex(Session().run("x: R^3\nouter(x, x)")[-1]) == r"x x^{\top}"


def test_a_dollar_in_a_note_is_escaped_in_words_and_in_formulas():
    written = latex_note(note("costs $5 for ", Math("p$", "p$")), str)
    assert written == r"costs \$5 for $p\$$"


DERIVATIONS = {
    "infonce": "k, d, n: size\nX: R^(k,n)\nW: R^(d,n)\nx: R^n\ntau: R\n"
               "explain grad(-log(softmax(sg(X @ transpose(W)) @ (W @ x) / tau)[0]), W)",
    "by_list_symbolic": "m, n: size\nW: R^(m,n)\nb: R^m\nc: R\nx: R^n\n"
                        "explain grad(sum(tanh(W @ x + sg(b))^2)*c, [W, b, c])",
    "by_list_literal": "W: R^(2,3)\nb: R^2\nx: R^3\nexplain grad(sum(tanh(W @ x + sg(b))^2), [W, b])",
    "by_list_point": "W: R^(2,3)\nb: R^2\nc: R\nx: R^3\nexplain grad(sum(tanh(W @ x + sg(b))^2)*c, [W, b, c]) "
                     "at W = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], b = [1, 2], c = 3, x = [1, 1, 1]",
    "inverse": INVERSE + "explain grad(log(det(A)) + dot(x, inv(A) @ x), A)",
    "numeric_check": "n: size\nx: R^n\nexplain jacobian(2 * softmax(x - sg(max(x))) + x, x)",
}


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("name", sorted(DERIVATIONS))
def test_the_derivations_of_issue_40_compile(name, tmp_path):
    _compile(_latex(DERIVATIONS[name]), tmp_path)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_a_note_with_a_dollar_compiles(tmp_path):
    body = r"\begin{align*}x &= 1 \\ \intertext{" + latex_note(note("costs $5 for ", Math("p$", "p$")), str) + r"}\end{align*}"
    _compile(body, tmp_path)
