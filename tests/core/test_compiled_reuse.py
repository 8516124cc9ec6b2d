"""A statement run again reuses what it read and compiled (issue #41), and gives the numbers a fresh session gives.

`g at W = …` in a loop is not parsed, walked or compiled again (gradlang/remembered.py,
syntax/lower.py's read): these tests hold that the reuse never changes a number, and that
what was remembered of a value is not read once a name is bound anew (a tensor redeclared at
another shape, a definition changed, a size given anew).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.errors import LimitError

MLP = "W: R^({n},{n})\nb: R^{n}\nx: R^{n}\nL = (tanh(sum(tanh(W @ x + b))) - 0.3)^2\ng = grad(L, W)"
AT = "g at W = Wd, b = bd, x = xd"


def _by_hand(W, b, x):
    """The gradient of L by W in NumPy (the backward pass)."""
    h = np.tanh(W @ x + b)
    out = np.tanh(h.sum())
    return np.outer(2 * (out - 0.3) * (1 - out**2) * (1 - h**2), x)


def _point(rng, n):
    return {"Wd": rng.normal(size=(n, n)) / np.sqrt(n), "bd": rng.normal(size=n), "xd": rng.normal(size=n)}


def _fresh(program: str, point: dict, statement: str = AT):
    session = Session()
    session.run(program)
    for name, array in point.items():
        session.bind(name, array)
    return session.eval(statement)


def test_a_statement_run_again_gives_a_fresh_sessions_numbers():
    rng = np.random.default_rng(41)
    program = MLP.format(n=5)
    session = Session()
    session.run(program)
    for _ in range(4):
        point = _point(rng, 5)
        for name, array in point.items():
            session.bind(name, array)
        value = session.eval(AT)
        np.testing.assert_array_equal(value, _fresh(program, point))
        np.testing.assert_allclose(value, _by_hand(point["Wd"], point["bd"], point["xd"]), rtol=1e-12, atol=1e-15)


def test_a_tensor_redeclared_at_another_shape_is_not_given_the_old_compiled_statement():
    rng = np.random.default_rng(7)
    session = Session()
    session.run(MLP.format(n=3))
    small = _point(rng, 3)
    for name, array in small.items():
        session.bind(name, array)
    session.eval(AT)
    session.run(MLP.format(n=4))  # W, b, x and g bound anew
    large = _point(rng, 4)
    for name, array in large.items():
        session.bind(name, array)
    value = session.eval(AT)
    assert value.shape == (4, 4)
    np.testing.assert_array_equal(value, _fresh(MLP.format(n=4), large))


def test_a_changed_definition_changes_the_numbers():
    rng = np.random.default_rng(3)
    point = _point(rng, 3)
    first = "W: R^(3,3)\nb: R^3\nx: R^3\nf(v) = tanh(v)\ng = grad(sum(f(W @ x + b)), W)"
    second = "f(v) = sin(v)\ng = grad(sum(f(W @ x + b)), W)"
    session = Session()
    session.run(first)
    for name, array in point.items():
        session.bind(name, array)
    before = session.eval(AT)
    session.run(second)
    after = session.eval(AT)
    W, b, x = point["Wd"], point["bd"], point["xd"]
    np.testing.assert_allclose(before, np.outer(1 - np.tanh(W @ x + b) ** 2, x), rtol=1e-12)
    np.testing.assert_allclose(after, np.outer(np.cos(W @ x + b), x), rtol=1e-12)
    np.testing.assert_array_equal(after, _fresh(first + "\n" + second, point))


def test_symbolic_sizes_given_anew_are_checked_and_computed_anew():
    session = Session()
    session.run("n: size\nx: R^n\ns = sum(exp(x))")
    for n in (3, 5, 3):
        grid = np.linspace(0, 1, n)
        session.bind("xd", grid)
        assert float(session.eval("s at x = xd")) == pytest.approx(np.exp(grid).sum(), rel=1e-15)
    assert float(session.eval("s at x = xd")) == float(_fresh("n: size\nx: R^n\ns = sum(exp(x))", {"xd": grid},
                                                              "s at x = xd"))


def test_a_refusal_is_raised_each_time_at_its_own_statement():
    """What the cost check refused is refused again, placed at the statement that asks (not the first one)."""
    from gradlang import limits

    session = Session()
    session.run("n: size\nx: R^n")
    session.bind("xd", np.zeros(3000))
    saved = limits.MAX_MEMORY_BYTES
    limits.MAX_MEMORY_BYTES = 1_000_000
    try:
        spans = []
        for program in ("outer(x, x) at x = xd", "1\nouter(x, x) at x = xd"):
            with pytest.raises(LimitError) as caught:
                session.run(program)
            spans.append(caught.value.span.line)
    finally:
        limits.MAX_MEMORY_BYTES = saved
    assert spans == [1, 2]


def test_a_statement_run_again_is_not_parsed_walked_or_compiled_again(monkeypatch):
    """The second run of the same `at` text reads no text, walks no DAG and generates no code (issue #41)."""
    from gradlang.expr import graph, numeric
    from gradlang.syntax import lower

    session = Session()
    session.run(MLP.format(n=4))
    for name, array in _point(np.random.default_rng(1), 4).items():
        session.bind(name, array)
    session.eval(AT)
    counts = {"parse": 0, "walk": 0, "compile": 0}

    def counted(kind, function):
        def wrapper(*args, **kwargs):
            counts[kind] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(lower, "parse", counted("parse", lower.parse))
    monkeypatch.setattr(graph, "_visit", counted("walk", graph._visit))
    monkeypatch.setattr(numeric, "dag_cse", counted("compile", numeric.dag_cse))
    session.bind("Wd", np.eye(4))
    session.eval(AT)
    assert counts == {"parse": 0, "walk": 0, "compile": 0}


def test_a_text_read_before_is_read_again_under_a_lower_limit(monkeypatch):
    """The programs kept by their text are kept with the limits they were read under."""
    from gradlang import limits

    session = Session()
    assert [r.value for r in session.run("1\n2\n3")] == [1, 2, 3]
    monkeypatch.setattr(limits, "MAX_STATEMENTS", 2)
    with pytest.raises(LimitError, match="more than 2 statements"):
        session.run("1\n2\n3")


def test_a_faulty_statement_read_twice_is_raised_twice_at_its_place():
    """A program with a statement its syntax refuses is not kept: each run raises a new error at line 2."""
    from gradlang import GradlangError

    session = Session()
    errors = []
    for _ in range(2):
        with pytest.raises(GradlangError) as caught:
            session.run("1\nf(x, x) = x")
        errors.append(caught.value)
    assert errors[0] is not errors[1]
    assert [(e.span.line, e.source_line) for e in errors] == [(2, "f(x, x) = x")] * 2


def test_sessions_in_threads_share_what_is_kept_and_get_their_own_numbers():
    """The kept programs and facts are shared by every session; sessions in threads each get their point's numbers."""
    import threading

    from tests.safety import SAFETY_NET

    rng = np.random.default_rng(11)
    points = [_point(rng, 3) for _ in range(4)]
    program = MLP.format(n=3)
    expected = [_fresh(program, point) for point in points]
    found: dict = {}

    def work(k: int) -> None:
        session = Session()
        session.run(program)
        for name, array in points[k].items():
            session.bind(name, array)
        found[k] = [session.eval(AT) for _ in range(10)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(SAFETY_NET)
    for k in range(4):
        for value in found[k]:
            np.testing.assert_array_equal(value, expected[k])


def test_many_literals_do_not_push_out_what_is_kept_of_the_formula(monkeypatch):
    """A point written as 576 numbers is read again on each run; the gradient's facts stay kept (remembered.py
    bounds each kind of fact apart), so the second run walks the gradient's DAG no more than the first run's
    reading of the literals does."""
    from gradlang.expr import graph

    rng = np.random.default_rng(5)
    W = rng.normal(size=(24, 24)).round(3)
    written = "[" + ", ".join("[" + ", ".join(f"{v:.3f}" for v in row) + "]" for row in W) + "]"
    session = Session()
    session.run("W: R^(24,24)\nx: R^24\ng = grad(sum(tanh(W @ x)), W)")
    session.bind("xd", np.linspace(-1, 1, 24))
    statement = f"g at W = {written}, x = xd"
    first = session.eval(statement)
    walks = []
    monkeypatch.setattr(graph, "_visit", lambda *args, _visit=graph._visit: walks.append(args[0]) or _visit(*args))
    again = session.eval(statement)
    np.testing.assert_array_equal(first, again)
    assert not any(root is session.env["g"] for root in walks)
    x = np.linspace(-1, 1, 24)
    np.testing.assert_allclose(again, np.outer(1 - np.tanh(W @ x) ** 2, x), rtol=1e-12)


def test_a_statement_run_again_walks_no_syntax_tree(monkeypatch):
    """What an `at` reads of its written expression (whether it may be a list, its index names, the nodes'
    fields) is read once per statement: the second run walks none of it (issue #41)."""
    from gradlang.syntax import lowered

    session = Session()
    session.run(MLP.format(n=4))
    for name, array in _point(np.random.default_rng(3), 4).items():
        session.bind(name, array)
    first = session.eval(AT)
    walks = [0]
    original = lowered.walk

    def counted(node):
        walks[0] += 1
        return original(node)

    monkeypatch.setattr(lowered, "walk", counted)
    np.testing.assert_array_equal(session.eval(AT), first)
    assert walks[0] == 0


def test_a_name_bound_anew_to_a_list_is_seen_by_the_same_statement():
    """Only what is written is remembered of a statement; a name it reads is looked up at every run, so `g`
    bound to a list of gradients between two runs of `g at …` gives the list's numbers."""
    rng = np.random.default_rng(5)
    session = Session()
    session.run(MLP.format(n=3))
    point = _point(rng, 3)
    for name, array in point.items():
        session.bind(name, array)
    single = session.eval(AT)
    session.run("g = grad(L, [W, b])")
    listed = session.eval(AT)
    np.testing.assert_allclose(listed[0], single, rtol=1e-12, atol=1e-15)
    h = np.tanh(point["Wd"] @ point["xd"] + point["bd"])
    out = np.tanh(h.sum())
    np.testing.assert_allclose(listed[1], 2 * (out - 0.3) * (1 - out**2) * (1 - h**2), rtol=1e-12, atol=1e-15)
