"""The Pygments lexer: token kinds for gradlang source, and its builtin list matches the table."""

from __future__ import annotations

from pygments.token import Comment, Keyword, Name, Number, Operator

from gradlang.shell.lexer import BUILTINS, CORE, GradlangLexer


def tokens(source: str) -> dict[str, object]:
    return {value: kind for kind, value in GradlangLexer().get_tokens(source) if value.strip()}


def test_token_kinds():
    kinds = tokens("x: R^3  # a vector\nexplain diff(x[0] * stop_gradient(x[1]), x[0]) at x = [1.5, 2e-3, 3]")
    assert kinds["R"] is Keyword.Type
    assert kinds["# a vector"] is Comment.Single
    assert kinds["explain"] is Keyword and kinds["at"] is Keyword
    assert kinds["stop_gradient"] is Name.Builtin.Pseudo and kinds["diff"] is Name.Builtin.Pseudo
    assert kinds["1.5"] is Number.Float and kinds["2e-3"] is Number.Float and kinds["3"] is Number.Integer
    assert kinds["*"] is Operator


def test_builtin_names_match_the_builtin_table():
    from gradlang.core.builtins import TABLE

    assert set(CORE) | set(BUILTINS) == set(TABLE)


def test_lexer_is_found_by_name_when_installed():
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        assert get_lexer_by_name("gradlang").name == "gradlang"
    except ClassNotFound:  # the entry point exists only once the package is installed
        pass
