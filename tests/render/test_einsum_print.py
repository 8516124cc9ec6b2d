"""einsum as section 3b prints it: the call in plain (it reads back), matrix notation in pretty and LaTeX where the
product is one of matrices and vectors, index notation with its sums shown otherwise."""

from __future__ import annotations

import pytest

from gradlang import Session
from tests.render.test_tensor_print import _pretty

pytest.importorskip("rich")

DECLARE = "delta: R^(b,m)\nx: R^(b,n)\nW: R^(m,n)\nd: R^m\nu: R^n\nQ: R^(b,t,k)\nK: R^(b,t,k)\n"

# (expression, plain, pretty, LaTeX)
ROWS = [
    ('einsum("bi,bj->ij", delta, x)', 'einsum("bi,bj->ij", delta, x)', "δᵀ x", r"\delta^{\top} x"),
    ('einsum("ij,i->j", W, d)', 'einsum("ij,i->j", W, d)', "Wᵀ d", r"W^{\top} d"),
    ('einsum("ij,j", W, u)', 'einsum("ij,j->i", W, u)', "W u", "W u"),
    ('einsum("i,j->ij", d, u)', 'einsum("i,j->ij", d, u)', "d uᵀ", r"d u^{\top}"),
    ('einsum("i,i", u, u)', 'einsum("i,i->", u, u)', "uᵀ u", r"u^{\top} u"),
    ('einsum("ij->ji", W)', 'einsum("ij->ji", W)', "Wᵀ", r"W^{\top}"),
    ('einsum("btk,bsk->bts", Q, K)', 'einsum("btk,bsk->bts", Q, K)', "Σ_k Q_{btk} K_{bsk}",
     r"\sum_{k} {Q}_{btk} {K}_{bsk}"),
    ('einsum("bij->", Q)', 'einsum("bij->", Q)', "Σ_{b,i,j} Q_{bij}", r"\sum_{b,i,j} {Q}_{bij}"),
    ('einsum("btk,bsk->sbt", Q, K)', 'einsum("btk,bsk->sbt", Q, K)', "(Σ_k Q_{btk} K_{bsk})_{sbt}",
     r"\left(\sum_{k} {Q}_{btk} {K}_{bsk}\right)_{sbt}"),
    ('einsum("abc->acb", Q)', 'einsum("abc->acb", Q)', "transpose(Q, (0, 2, 1))",
     r"\operatorname{transpose}_{(0, 2, 1)}\left(Q\right)"),
    ("Q @ transpose(K, (0, 2, 1))", 'einsum("aij,akj->aik", Q, K)', "Σ_j Q_{aij} K_{akj}", r"\sum_{j} {Q}_{aij} {K}_{akj}"),
    ('reshape(Q, (b, t*k))', "reshape(Q, (b, k*t))", "reshape(Q, (b, k⋅t))", r"\operatorname{reshape}_{b, k t}\left(Q\right)"),
]


@pytest.mark.parametrize("source, plain, pretty, latex", ROWS, ids=[row[0] for row in ROWS])
def test_an_einsum_prints_in_matrix_or_index_notation(source, plain, pretty, latex):
    session = Session()
    session.run(DECLARE)
    result = session.run(source)[-1]
    assert result.text == plain
    assert _pretty(result) == pretty
    assert result.latex == latex
    again = Session()
    again.run(DECLARE)
    assert again.run(result.text)[-1].value == result.value  # plain reads back


def test_a_sum_in_front_is_bracketed_as_a_factor_or_a_base():
    """Σ would run on over the factors after it; a juxtaposition takes a power as a whole: (δᵀ x)²."""
    session = Session()
    session.run(DECLARE)
    result = session.run('explain grad(sum(einsum("bi,bj->ij", delta, x)^2), x)')[-1]
    assert "grad(sum((δᵀ x)²), x)" in _pretty(result)
    product = session.run('einsum("bij->", Q) * einsum("bij->", K)')[-1]
    assert product.latex == r"\left(\sum_{b,i,j} {K}_{bij}\right) \sum_{b,i,j} {Q}_{bij}"  # SymPy's order
