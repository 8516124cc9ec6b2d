"""Export of grammar-fuzzed programs: a module that imports, or a clean error placed in the program (issue 16).

The well-typed programs of tests/fuzz/test_grammar_fuzz.py (functions `h(x) = …`,
bindings `z = …` over declared symbols, extreme numbers) are run, and whatever
the session holds afterwards is exported. Either the module compiles, defines
only functions at module level and imports, or the export stops with a
GradlangError that is not an InternalError and, when it has a place, shows
it with a caret. A long run:
    GRADLANG_FUZZ=2000 python -m pytest tests/tools/test_export_fuzz.py
"""

from __future__ import annotations

import importlib.util

from hypothesis import HealthCheck, given, settings

from gradlang import GradlangError, Session
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


def _imported(code: str, folder, name: str) -> None:
    path = folder / f"{name}.py"
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


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
    _imported(code, folder, "fuzzed_export")


def test_fuzzed_programs_export_or_refuse_cleanly(tmp_path_factory):
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=DERANDOMIZE, suppress_health_check=list(HealthCheck))
    @given(_typed_programs())
    def check(source):
        check_export(source, tmp_path_factory.mktemp("fuzz"))

    check()
