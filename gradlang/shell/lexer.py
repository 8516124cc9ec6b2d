"""A Pygments lexer for gradlang, for the REPL's highlighting and for documentation.

Registered under the `pygments.lexers` entry point, so `pygmentize -l gradlang`
and Sphinx code blocks marked `gradlang` work once the package is installed.
Its words are the builtin table's (builtins.py, whose functions come from the
registry of primitives), so a new primitive is highlighted without an edit here.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

from gradlang.core import builtins

CORE = tuple(name for name, entry in builtins.TABLE.items() if entry.core)
BUILTINS = tuple(name for name, entry in builtins.TABLE.items() if not entry.core)
CONSTANTS = tuple(builtins.CONSTANTS)
KEYWORDS = ("at", "explain")


class GradlangLexer(RegexLexer):
    """gradlang source: declarations, definitions, derivatives and stop_gradient."""

    name = "gradlang"
    aliases = ["gradlang", "grad"]
    filenames = ["*.grad"]
    mimetypes = ["text/x-gradlang"]
    url = "https://github.com/gradlang/gradlang"

    tokens = {
        "root": [
            (r"[ \t\f\r]+", Whitespace),
            (r"\n", Whitespace),
            (r"#.*$", Comment.Single),
            (r"^(:)([a-z]+)", bygroups(Punctuation, Keyword.Pseudo)),  # REPL commands
            (r"\b([A-Za-z_]\w*)(\s*)(:)(\s*)(R)\b", bygroups(Name.Variable, Whitespace, Punctuation, Whitespace, Keyword.Type)),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (words(CORE, suffix=r"\b"), Name.Builtin.Pseudo),
            (words(BUILTINS, suffix=r"\b"), Name.Builtin),
            (words(CONSTANTS, suffix=r"\b"), Name.Constant),
            (r"[A-Za-z_]\w*(?=\s*\()", Name.Function),
            (r"[A-Za-z_]\w*", Name),
            (r"(\d+\.\d*|\.\d+|\d+)[eE][+-]?\d+", Number.Float),
            (r"\d+\.\d*|\.\d+", Number.Float),
            (r"\d+", Number.Integer),
            (r"<=|>=|==|!=|\*\*|[-+*/@^<>=]", Operator),
            (r'"[^"\n#;()\[\]]*"', String),  # a file name, as the grammar's STRING: load("w.npy")
            (r"[()\[\],;:]", Punctuation),
            (r".", Text),
        ]
    }
