"""A Pygments lexer for gradlang, for the REPL's highlighting and for documentation.

Registered under the `pygments.lexers` entry point, so `pygmentize -l gradlang`
and Sphinx code blocks marked `gradlang` work once the package is installed.
The lexer is deliberately free of gradlang imports (Pygments loads it on its
own); the builtin names below are checked against the builtin table by a test.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, Text, Whitespace

CORE = ("stop_gradient", "sg", "unstopped", "blocked", "diff", "grad", "jacobian", "hessian")

BUILTINS = (
    "exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "sigmoid", "relu", "softplus", "abs", "sign", "floor", "ceil", "round",
    "sum", "mean", "prod", "norm", "logsumexp", "dot", "len", "max", "min",
    "softmax", "transpose", "where", "linspace", "simplify", "expand", "factor", "N",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "max_share", "min_share",
    "gradcheck", "plot", "backward",
)  # fmt: skip

CONSTANTS = ("pi", "inf", "nan")
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
            (r"[()\[\],;:]", Punctuation),
            (r".", Text),
        ]
    }
