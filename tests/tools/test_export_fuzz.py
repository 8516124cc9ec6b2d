"""Export of grammar-fuzzed programs: a module that imports, or a clean error placed in the program (issue 16).

The well-typed programs of tests/fuzz/test_grammar_fuzz.py (functions `h(x) = …`,
bindings `z = …` over declared symbols, extreme numbers) are run, and whatever
the session holds afterwards is exported. Either the module compiles, defines
only functions at module level and imports, or the export stops with a
GradlangError that is not an InternalError and, when it has a place, shows
it with a caret. Every exported function takes as many positional arguments
as the gradlang function has parameters, and one without keywords, called
with Python floats, gives what gradlang's own call gives (a module that
imports can still refuse the calls it was written for). A long run:
    GRADLANG_FUZZ=2000 python -m pytest tests/tools/test_export_fuzz.py
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradlang import GradlangError, Session
from gradlang.core.evaluate import FunctionDef
from gradlang.export import export_program
from tests.fuzz.test_grammar_fuzz import DERANDOMIZE, EXAMPLES, TIME_LIMIT, _typed_programs
from tests.tools.test_export import assert_only_definitions


def _session_of(source: str) -> Session:
    """The session after the program, up to its first error (as a script leaves it)."""
    session = Session(time_limit=TIME_LIMIT)
    try:
        session.run(source, "<fuzz>")
    except GradlangError:
        pass
    return session


def _imported(code: str, folder, name: str):
    path = folder / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ARGUMENTS = [(0.5, -1.5, 0.25), (0.0, 0.0, 0.0)]  # scalars to call with; 0.0 meets divisions and logs at poles


def _gradlang_call(session: Session, name: str, args: tuple):
    """gradlang's own value of name(args) as a float, or None when it is not a plain number."""
    try:
        value = session.eval(f"{name}({', '.join(map(repr, args))})")
        return float(value)
    except (GradlangError, TypeError, ValueError):
        return None


def check_calls(session: Session, module, points=ARGUMENTS) -> None:
    """Each function: gradlang's arity; without keywords, gradlang's numbers at Python floats."""
    for name, definition in session.user_names().items():
        if not isinstance(definition, FunctionDef) or not hasattr(module, name):
            continue  # a renamed name (`float_`) is checked by tests/tools/test_export.py
        parameters = list(inspect.signature(getattr(module, name)).parameters.values())
        positional = [p for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD]
        assert len(positional) == len(definition.params), f"{name}: {len(positional)} arguments"
        if len(positional) < len(parameters):
            continue  # keywords (W, y): their values would have to be chosen to fit the body
        for point in points:
            _check_call(session, getattr(module, name), name, point[: len(positional)])


def _check_call(session: Session, function, name: str, args: tuple) -> None:
    expected = _gradlang_call(session, name, args)
    if expected is None:
        return  # an error, or not a number (a vector, a symbol): gradlang's call is the oracle
    got = float(np.asarray(function(*args)))
    same = got == expected or (math.isnan(got) and math.isnan(expected))
    assert same or math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12), f"{name}{args}: {got} != {expected}"


def check_export(source: str, folder) -> None:
    session = _session_of(source)
    try:
        code = export_program(session, "numpy", source, "<fuzz>")
    except GradlangError as error:
        assert error.kind != "InternalError", f"{source!r}:\n{error.format()}"
        assert error.message.startswith("cannot export "), error.message
        if error.span is not None:
            assert error.source_line is not None and "^" in error.format(), error.format()
        return
    assert_only_definitions(code)
    check_calls(session, _imported(code, folder, "fuzzed_export"))


def test_fuzzed_programs_export_or_refuse_cleanly(tmp_path_factory):
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=DERANDOMIZE, suppress_health_check=list(HealthCheck))
    @given(_typed_programs())
    def check(source):
        check_export(source, tmp_path_factory.mktemp("fuzz"))

    check()


# --- scalar functions called as a user calls them (issue 29) ---------------------------------------

LIST_REDUCTIONS = ["sum", "mean", "max", "min", "norm", "logsumexp", "prod"]


def _scalar_bodies():
    """Bodies over scalar parameters a and b: lists of them given to reductions, divisions, poles."""
    leaves = st.sampled_from(["a", "b", "0", "1", "2.5"])

    def grow(inner):
        items = st.lists(inner, min_size=1, max_size=3).map(", ".join)
        return st.one_of(
            st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from(["+", "-", "*", "/", "^"]), inner),
            st.builds(lambda f, a: f"{f}({a})", st.sampled_from(["exp", "log", "sqrt", "abs", "relu", "sg"]), inner),
            st.builds(lambda f, a: f"{f}([{a}])", st.sampled_from(LIST_REDUCTIONS), items),
            st.builds(lambda a, k: f"softmax([{a}, 1])[{k}]", inner, st.sampled_from(["0", "1"])),
        )

    return st.recursive(leaves, grow, max_leaves=6)


def test_scalar_functions_export_and_give_gradlangs_numbers(tmp_path_factory):
    """`k(a, b) = …` exported, called with Python floats (zeros included): gradlang's numbers, never a refusal."""
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=DERANDOMIZE, suppress_health_check=list(HealthCheck))
    @given(_scalar_bodies(), st.sampled_from(["k(a, b)", "k(a)", "len(a, b)"]))
    def check(body, head):
        if "b" not in head:
            body = re.sub(r"\bb\b", "a", body)
        source = f"{head} = {body}"
        session = _session_of(source)
        try:
            code = export_program(session, "numpy", source, "<fuzz>")
        except GradlangError as error:  # a refusal only where gradlang's own call fails too (log(0) is exact)
            assert error.kind != "InternalError", error.format()
            call = f"{head.split('(')[0]}({', '.join(['0.5', '-1.5'][: head.count(',') + 1])})"
            with pytest.raises(GradlangError):
                session.eval(call)
            return
        module = _imported(code, tmp_path_factory.mktemp("scalar"), "scalar_export")
        check_calls(session, module, [(0.5, -1.5), (0.0, 0.0), (2.0, 3.0)])

    check()
