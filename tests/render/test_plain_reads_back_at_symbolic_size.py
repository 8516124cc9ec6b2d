"""Plain output of tensor results at symbolic size is gradlang source that reads back to the same value.

Each row's result is printed plain, read back in a fresh Session with the same declarations (its named
parts `t1 = …` bound first), and both are evaluated at a random point (issue #37: `max_shares(M)` and
`min_share(0, sum(y), 0.5)*ones(n)` were printed, and refused when read back)."""

import numpy as np
import pytest

from gradlang import Session

DECLARE = "m, n: size\nx: R^n\ny: R^n\nW: R^(m,n)\nM: R^(n,n)\na: R\nb: R\n"

ROWS = [
    "grad(min(sum(y), 0.5), y)",
    "grad(max(sum(y), 0.5, a), y)",
    "grad(max(M), M)",
    "grad(max(y), y)",
    "grad(min(W), W)",
    "grad(max(M) * sum(M), M)",
    "3 / (1 + grad(max(x), x))",
    "grad(sum(max(W, 1)), W)",
    "grad(sum(max(y, 0.5)), y)",
    "grad(sum(min(W @ x, a)), W)",
    "jacobian(softmax(W @ x), x)",
    "jacobian(max(x, 0) * a, x)",
    "hessian(logsumexp(x), x)",
    "grad(logsumexp(W @ x) - dot(onehot(1, m), W @ x), W)",
    "grad(norm(M @ x) + trace(M), M)",
    "grad(sum(relu(W @ x) * abs(W @ y)), x)",
    "grad(sum(where(x > 0, x^2, sg(x))), x)",
]


def _point(seed: int) -> str:
    """A random float point with ties in y and M, so the shares of max and min are tested where they split."""
    rng = np.random.default_rng(seed)
    m, n = 2, 3

    def listed(a):
        return str(np.round(a, 3).tolist())

    y = rng.normal(size=n).round(3)
    y[1] = y[0]
    mm = rng.normal(size=(n, n)).round(3)
    mm[2, 2] = mm.max()
    return (f"m = {m}, n = {n}, x = {listed(rng.normal(size=n))}, y = {listed(y)}, "
            f"W = {listed(rng.normal(size=(m, n)))}, M = {listed(mm)}, a = 0.25, b = -0.5")


@pytest.mark.parametrize("source", ROWS)
def test_the_plain_form_reads_back(source):
    text = Session().run(DECLARE + source)[-1].text
    *named, value = text.strip().splitlines()
    again = Session()
    again.run(DECLARE + "\n".join(named) + f"\n_read = {value}")
    first = Session()
    first.run(DECLARE + f"_printed = {source}")
    for seed in range(3):
        point = _point(seed)
        expected = np.asarray(first.eval(f"_printed at {point}"), dtype=float)
        got = np.asarray(again.eval(f"_read at {point}"), dtype=float)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=text)
