"""The plan of an `at` statement run again at new arrays (core/at_plan.py, issue #41): a call that checks only
what the new arrays need, with the numbers and notes of the whole way, and a miss (the whole way, its own
errors) whenever the session no longer fits the plan."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from gradlang import Session
from gradlang.core import at, at_plan
from gradlang.errors import LimitError, ShapeError

MLP = ("W: R^({n},{n})\nb: R^{n}\nx: R^{n}\nc: R\n"
       "L = (tanh(sum(tanh(W @ x + b)) + c) - 0.3)^2\ng = grad(L, W)")
AT = "g at W = Wd, b = bd, x = xd, c = 0.25"


def _by_hand(W, b, x, c=0.25):
    h = np.tanh(W @ x + b)
    out = np.tanh(h.sum() + c)
    return np.outer(2 * (out - 0.3) * (1 - out**2) * (1 - h**2), x)


def _bound(session: Session, rng, n: int) -> dict:
    point = {"Wd": rng.normal(size=(n, n)), "bd": rng.normal(size=n), "xd": rng.normal(size=n)}
    for name, array in point.items():
        session.bind(name, array)
    return point


def _fresh(program: str, point: dict, statement: str):
    """The statement's result by the whole way: a new session, no plan read."""
    session = Session()
    session.run(program)
    for name, array in point.items():
        session.bind(name, array)
    with mock.patch.object(at_plan, "run", lambda *args: None):
        return session.run(statement)[0]


@pytest.fixture
def whole_ways(monkeypatch):
    """How many times the whole way of core/at.py ran."""
    calls = []
    monkeypatch.setattr(at, "at", lambda *args, _at=at.at, **kw: calls.append(1) or _at(*args, **kw))
    return calls


def test_a_planned_call_gives_the_whole_ways_numbers_to_the_last_digit(whole_ways):
    rng = np.random.default_rng(41)
    session = Session()
    session.run(MLP.format(n=6))
    for _ in range(4):
        point = _bound(session, rng, 6)
        value = session.eval(AT)
        np.testing.assert_array_equal(value, _fresh(MLP.format(n=6), point, AT).value)
        np.testing.assert_allclose(value, _by_hand(point["Wd"], point["bd"], point["xd"]), rtol=1e-12, atol=1e-15)
    assert len(whole_ways) == 1 + 4  # the first call and the fresh sessions'; the three after it are the plan's


def test_a_scalar_given_by_a_name_is_read_at_each_call():
    rng = np.random.default_rng(5)
    session = Session()
    session.run(MLP.format(n=3))
    point = _bound(session, rng, 3)
    statement = "g at W = Wd, b = bd, x = xd, c = c0"
    for c in (0.25, -1.5, 0.25):
        session.run(f"c0 = {c}")
        np.testing.assert_allclose(session.eval(statement), _by_hand(point["Wd"], point["bd"], point["xd"], c),
                                   rtol=1e-12, atol=1e-15)


def test_an_array_of_another_shape_misses_the_plan_and_is_refused_as_before(whole_ways):
    rng = np.random.default_rng(9)
    session = Session()
    session.run(MLP.format(n=3))
    _bound(session, rng, 3)
    session.eval(AT)
    session.bind("xd", rng.normal(size=4))
    with pytest.raises(ShapeError, match="'x' is"):
        session.eval(AT)
    assert len(whole_ways) == 2


def test_a_symbolic_size_given_anew_by_the_arrays_is_computed_at_it():
    rng = np.random.default_rng(2)
    session = Session()
    session.run("n: size\nW: R^(n,n)\nb: R^n\nx: R^n\nc: R\n"
                "L = (tanh(sum(tanh(W @ x + b)) + c) - 0.3)^2\ng = grad(L, W)")
    for n in (3, 5, 3):
        point = _bound(session, rng, n)
        np.testing.assert_allclose(session.eval(AT), _by_hand(point["Wd"], point["bd"], point["xd"]),
                                   rtol=1e-12, atol=1e-15)


def test_a_name_bound_anew_misses_the_plan():
    rng = np.random.default_rng(3)
    session = Session()
    session.run(MLP.format(n=3))
    point = _bound(session, rng, 3)
    session.eval(AT)
    session.run("g = grad(L, b)")
    h = np.tanh(point["Wd"] @ point["xd"] + point["bd"])
    out = np.tanh(h.sum() + 0.25)
    np.testing.assert_allclose(session.eval(AT), 2 * (out - 0.3) * (1 - out**2) * (1 - h**2), rtol=1e-12)


def test_a_lower_memory_limit_misses_the_plan_and_refuses():
    rng = np.random.default_rng(4)
    session = Session()
    session.run(MLP.format(n=40))
    _bound(session, rng, 40)
    session.eval(AT)
    session.max_memory = 1000
    with pytest.raises(LimitError):
        session.eval(AT)


def test_kink_notes_are_found_at_each_calls_numbers():
    session = Session()
    session.run("x: R^3\nL = sum(relu(x))\ng = grad(L, x)")
    statement = "g at x = xd"
    notes = []
    for xd in ([1.0, 0.0, 2.0], [1.0, 3.0, 2.0], [0.0, 1.0, 2.0]):
        session.bind("xd", np.array(xd))
        result = session.run(statement)[0]
        fresh = _fresh("x: R^3\nL = sum(relu(x))\ng = grad(L, x)", {"xd": np.array(xd)}, statement)
        assert result.warnings == fresh.warnings
        np.testing.assert_array_equal(result.value, fresh.value)
        notes.append(len(result.warnings))
    assert notes[0] > 0 and notes[1] == 0 and notes[2] > 0


def test_a_statement_with_a_note_of_its_names_keeps_its_note(whole_ways):
    rng = np.random.default_rng(6)
    session = Session()
    session.run(MLP.format(n=3))
    _bound(session, rng, 3)
    statement = "g at W = Wd, b = bd, x = xd, c = 0.25, q = 1"
    first, second = session.run(statement)[0], session.run(statement)[0]
    assert first.warnings and first.warnings == second.warnings
    assert len(whole_ways) == 2  # a statement with a note is not planned


def test_plans_are_forgotten_on_request():
    at_plan.forget()
    assert not at_plan._PLANS


@pytest.mark.parametrize("program, statement, point", [
    (MLP.format(n=5), AT, {"Wd": (5, 5), "bd": (5,), "xd": (5,)}),
    ("n: size\nx: R^n\nA: R^(n,n)\nL = sum(exp(A @ x) * x) + 2*dot(x, x)\ng = grad(L, x)", "g at x = xd, A = Ad",
     {"xd": (4,), "Ad": (4, 4)}),
    ("z: R^6\nt: R^6\nH = hessian(logsumexp(z) - dot(t, z), z)", "H at z = zd, t = td", {"zd": (6,), "td": (6,)}),
])
def test_the_function_written_for_the_plans_shapes_gives_the_same_bits(program, statement, point):
    """numeric.specialized writes each in-place helper as what it did (a += b, or a + b): the same operations
    on the same operands, so the same bits as the function for any shapes, call after call."""
    rng = np.random.default_rng(11)
    session = Session()
    session.run(program)
    for _ in range(3):
        arrays = {name: rng.normal(size=shape) for name, shape in point.items()}
        for name, array in arrays.items():
            session.bind(name, array)
        np.testing.assert_array_equal(session.eval(statement), _fresh(program, arrays, statement).value)
    session.eval(statement)  # the plan's calls after its first have the function written for the shapes
    node = session._parse(statement).statements[0].value
    plan = next(p for key, p in at_plan._PLANS.items() if p.node is node and key[2] == id(session.env))
    assert "_gl_iadd" not in plan.compiled.function.source and "_gl_imul" not in plan.compiled.function.source


def test_a_helper_called_off_its_own_line_keeps_the_function_as_it_is():
    """numeric.specialized rewrites the lines that are one helper call each; should another call a helper, its
    record of the calls no longer lines up with those lines, and the function is kept as it was."""
    from gradlang.expr import numeric

    source = "def _f(_a0, _a1):\n    _t0 = numpy.tanh(_gl_iadd(_a0, _a1))\n    _t1 = _gl_imul(_t0, _a1)\n    return [_t1]\n"
    namespace = numeric._namespace()
    exec(source, namespace)
    function = namespace["_f"]
    function.source = source
    a, b = np.array([0.5, 1.0]), np.array([2.0, 3.0])
    kept, outputs = numeric.specialized(function, [a.copy(), b])
    assert kept is function
    np.testing.assert_array_equal(outputs[0], np.tanh(a + b) * b)


def test_a_target_bound_anew_to_an_array_misses_the_plan_as_the_whole_way_says():
    """`W = Wd` after the plan: W is an array now, never compared to the planned tensor by NumPy's == (an
    ambiguous truth value, an InternalError); the statement says what the whole way says."""
    rng = np.random.default_rng(8)
    session = Session()
    session.run(MLP.format(n=3))
    point = _bound(session, rng, 3)
    session.eval(AT)
    session.run("W = Wd")
    fresh = Session()
    fresh.run(MLP.format(n=3))
    for name, array in point.items():
        fresh.bind(name, array)
    fresh.run("W = Wd")
    with mock.patch.object(at_plan, "run", lambda *args: None):
        try:
            expected = fresh.run(AT)[0].value
        except Exception as error:  # noqa: BLE001 - the whole way's own answer, whatever it is
            expected = error
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)):
            session.eval(AT)
    else:
        np.testing.assert_array_equal(session.eval(AT), expected)


def test_a_statement_run_again_reads_derives_compiles_and_walks_nothing(monkeypatch):
    """Session.run of the same `g at …` text with new arrays (a loop in a notebook): after the first two runs
    (the whole way, then the plan's first call, which writes its function for the shapes) no reading, no
    evaluator, no whole way, no compiling, no cost check and no DAG walk: counted, each call by name."""
    from gradlang.core import evaluate
    from gradlang.expr import graph, numeric
    from gradlang.expr.tensor import numbers
    from gradlang.syntax import lower

    rng = np.random.default_rng(12)
    session = Session()  # the default time limit: the budget is opened, as a user's session does
    session.run(MLP.format(n=5))
    point = _bound(session, rng, 5)
    session.run(AT)
    session.run(AT)
    calls: list = []

    def counted(owner, name):
        original = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *args, **kw: calls.append(name) or original(*args, **kw))

    for owner, name in ((lower, "parse"), (lower, "program"), (evaluate.Evaluator, "evaluate"), (at, "at"),
                        (numeric, "compile_function"), (numeric, "specialized"), (numbers, "_checked_cost"),
                        (numbers, "build_dag"), (graph, "build_dag")):
        counted(owner, name)
    for _ in range(3):
        point = _bound(session, rng, 5)
        np.testing.assert_allclose(session.run(AT)[0].value, _by_hand(point["Wd"], point["bd"], point["xd"]),
                                   rtol=1e-12, atol=1e-15)
    assert calls == []


def test_two_sessions_of_one_program_keep_a_plan_each(monkeypatch, whole_ways):
    """The two sessions share the remembered gradient (one value); each keeps its own plan, so neither meets
    the other's and compares its tensors by SymPy's equality at every call (the second session of a loop
    took a third longer)."""
    from gradlang.expr.engine import Var

    Var = Var.resolved()  # the class (the engine's name is a deferred)
    rng = np.random.default_rng(13)
    sessions = [Session(), Session()]
    points = []
    for session in sessions:
        session.run(MLP.format(n=4))
        points.append(_bound(session, rng, 4))
        session.run(AT)
        session.run(AT)
    assert sessions[0].env["g"] is sessions[1].env["g"]
    monkeypatch.setattr(Var, "__ne__", lambda *args: pytest.fail("a planned tensor compared by equality"))
    monkeypatch.setattr(Var, "__eq__", lambda *args: pytest.fail("a planned tensor compared by equality"))
    calls = len(whole_ways)
    for session, point in zip(sessions, points):
        np.testing.assert_allclose(session.run(AT)[0].value, _by_hand(point["Wd"], point["bd"], point["xd"]),
                                   rtol=1e-12, atol=1e-15)
    assert len(whole_ways) == calls


def test_a_planned_call_keeps_ieee_values_and_the_hosts_numpy_error_state(whole_ways):
    # The plan's function runs with NumPy's errors ignored (inf, not a FloatingPointError or a warning),
    # its error state made once per state of the caller's (expr/tensor/numbers.py _quietly), and the
    # caller's own state is as it was afterwards.
    session = Session()
    session.run("x: R^3\ny = exp(x)")
    session.bind("xd", np.array([1000.0, 0.0, -1000.0]))
    before = np.geterr()
    try:
        np.seterr(all="raise")
        values = [session.run("y at x = xd")[0].value for _ in range(3)]
        assert np.geterr() == {key: "raise" for key in before}
        with np.errstate(over="warn"):
            values.append(session.run("y at x = xd")[0].value)
            assert np.geterr()["over"] == "warn"
    finally:
        np.seterr(**before)
    assert len(whole_ways) == 1  # the later calls were the plan's
    for value in values:
        assert value.tolist() == [np.inf, 1.0, np.exp(-1000.0)]
