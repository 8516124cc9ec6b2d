"""Equal formulas built apart are compared over their DAG, not as trees (expr/equal.py, #41).

MoCo v3's gradient (five batch norms) took over a minute of CPU in a second Session of the same process,
0.3 s in the first: the tensor rewrites' caches of facts (tree size, count_ops, cancel) were lru_caches, and
a key equal to one kept from the earlier session, but built apart, was compared by SymPy's __eq__ as a tree.
The measure here is the parts SymPy reads to compare (_hashable_content calls), never a time.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from sympy.core.cache import clear_cache

from gradlang import Session, remembered
from gradlang.derive.tensor import work
from gradlang.expr import equal
from gradlang.expr.equal import same
from gradlang.expr.tensor.nodes import Var

X = sp.Symbol("x", real=True)
F = sp.Function("f")  # one class: f built twice is two classes, which SymPy compares by name


@pytest.fixture
def reads(monkeypatch):
    """How many nodes SymPy reads the contents of (each comparison of two nodes reads both)."""
    count = [0]

    def counting(original):
        def counted(self):
            count[0] += 1
            return original(self)
        return counted

    monkeypatch.setattr(sp.Basic, "_hashable_content", counting(sp.Basic._hashable_content))
    monkeypatch.setattr(sp.Expr, "_hashable_content", counting(sp.Expr._hashable_content))
    equal.forget()
    return count


def chain(depth: int):
    """sin(e) + cos(e), nested: `depth` + 2 distinct parts a level, 2^depth times as many as a tree."""
    e = X
    for _ in range(depth):
        e = sp.sin(e) + sp.cos(e)
    return e


def built_apart(build):
    """Two equal formulas that share no part: SymPy's own cache let the first go before the second was built."""
    first = build()
    clear_cache()
    return first, build()


@pytest.mark.parametrize("a, b", [
    (X + 2, X + 2.0), (X + 2, X + 2), (sp.Integer(2), sp.Float(2.0)), (sp.sin(X), sp.cos(X)),
    (Var("w", (3,)), Var("w", (4,))), (Var("w", (3,)) * X, Var("w", (3,)) * X),
    (sp.Tuple(X, 1), sp.Tuple(X, 1)), (sp.exp(X + 1), sp.exp(X + 1.0)),
])
def test_same_is_sympy_equality(a, b):
    assert same(a, b) == (a == b)


def test_two_equal_formulas_built_apart_are_compared_once_per_part(reads):
    a, b = built_apart(lambda: chain(18))
    assert a is not b and a.args[0] is not b.args[0]
    reads[0] = 0
    assert same(a, b)
    assert reads[0] <= 10 * 18  # SymPy's a == b reads 2^18 parts of each
    assert not same(a, chain(17)) and not same(a, sp.sin(chain(17)) + sp.cos(chain(17)) + 1)


def deep_chain(depth: int):
    """f(e)*(f(e) + x), nested `depth` times without SymPy's evaluation: deeper than Python's recursion limit
    allows a recursive walk, 2^depth times as large as a tree."""
    f, e = F, X
    for _ in range(depth):
        e = sp.Mul(f(e), sp.Add(f(e), X, evaluate=False), evaluate=False)
        hash(e)  # as SymPy's cache hashes each part when it is built: a recursive hash of the whole would not end
    return e


def test_a_formula_deeper_than_the_recursion_limit_is_compared_over_its_dag_too(reads):
    """Hostile seed 9535's 30 nested softmaxes: `same` hit RecursionError on a deep gradient and fell back to
    SymPy's a == b, a walk of the tree, so a cache lookup that met an equal copy kept from an earlier program
    ran into the 120 s limit."""
    a, b = built_apart(lambda: deep_chain(3000))
    reads[0] = 0
    assert same(a, b)
    assert reads[0] <= 10 * 3000
    assert not same(a, deep_chain(2999)) and not same(a, b.func(*b.args[:-1], X, evaluate=False))


def test_a_fact_of_a_formula_is_found_for_an_equal_copy_at_the_cost_of_its_dag(reads):
    a, b = built_apart(lambda: chain(18))
    assert work.tree_size(a) == 2 ** 20 - 3
    reads[0] = 0
    assert work.tree_size(b) == 2 ** 20 - 3
    assert reads[0] <= 10 * 18


PROGRAM = """x: R^(4,3)
W1: R^(5,3)
W2: R^(3,5)
h0 = x
""" + "".join(f"""a{k} = relu(h{k - 1}) @ transpose({w})
c{k} = a{k} - outer(ones(4), mean(a{k}, 0))
h{k} = c{k} / outer(ones(4), sqrt(mean(c{k} * c{k}, 0) + 1e-05))
""" for k, w in ((1, "W1"), (2, "W2"), (3, "W1"))) + """L = sum(h3 * h3) + sum(h3)
grad(L, [W1, W2, x]) at x = [[0.1, -0.1, 0.6], [0.1, -0.5, 0.4], [1.3, 0.9, -0.7], [-1.3, -0.6, 0.04]], W1 = [[-2.3, -0.2, -1.2], [0.3, -0.4, 0.9], [0.8, 0.1, -0.4], [-1.1, 0.5, 1.4], [0.2, -0.9, 0.6]], W2 = [[0.7, -0.3, 0.2, 1.1, -0.5], [0.4, 0.9, -1.0, 0.3, 0.6], [-0.8, 0.2, 0.5, -0.6, 1.2]]
"""


def test_a_program_run_again_in_a_new_session_does_no_more_work_than_the_first(reads):
    """Three batch norms, as a notebook runs them twice: 2.9 million parts read the second time, 7 thousand
    the first, before the caches compared over the DAG (at five batch norms, 45 s of CPU)."""
    clear_cache()
    first = Session().run(PROGRAM)[-1].value
    done_first, reads[0] = reads[0], 0
    clear_cache()  # as after a thousand other formulas: every part of the second run is built apart
    second = Session().run(PROGRAM)[-1].value
    assert reads[0] <= 2 * done_first
    for mine, theirs in zip(first, second):
        assert np.array_equal(mine, theirs)


def nested(depth: int) -> str:
    """f_k = sin(f_(k-1)) + cos(f_(k-1)): each level reads the one below twice, 2^depth times as large as a tree."""
    return "x: R\nf0 = x\n" + "".join(f"f{k} = sin(f{k - 1}) + cos(f{k - 1})\n" for k in range(1, depth + 1))


def jax_derivative(depth: int, at: float) -> float:
    import jax

    jax.config.update("jax_enable_x64", True)

    def h(x):
        for _ in range(depth):
            x = jax.numpy.sin(x) + jax.numpy.cos(x)
        return 1 / x

    return float(jax.grad(h)(at))


def test_a_statement_meets_no_formula_an_earlier_program_left_in_sympys_cache(reads):
    """Hostile seed 9535 after 234 other programs in one process: SymPy's cache of sums (an LRU of 1,000) had
    let the oldest go, its cache of powers still held a power of one of them, and the new gradient, building
    that sum again apart, compared the two as trees: past the 120 s limit, 0.13 s alone. core/session.py
    empties SymPy's cache when a session starts once a constructor's cache is half full. Here the other
    programs are one list of 1,200 sums of sines, which fills the caches of sums and functions, not powers."""
    depth = 16
    program = nested(depth) + f"h = 1/f{depth}\ndiff(h, x) at x = 0.5\n"
    clear_cache()
    first = Session().run(program)[-1].value
    done_first = reads[0]
    Session().run("x: R\nv = [" + ", ".join(f"sin(x + {k}) + cos(x + {k})" for k in range(1, 1201)) + "]")
    equal.forget()
    remembered.forget()
    reads[0] = 0
    second = Session().run(program)[-1].value
    assert reads[0] <= 2 * done_first  # without: f16 and its parts compared as trees, 7.7 million parts read
    assert float(second) == float(first)
    assert float(first) == pytest.approx(jax_derivative(depth, 0.5), rel=1e-12)
