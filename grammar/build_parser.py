"""Write gradlang/syntax/standalone_parser.py: the LALR parser of grammar/gradlang.lark, built ahead of time.

    python grammar/build_parser.py        # after every change to gradlang.lark

lark's stand-alone generator writes one module holding lark's run-time (lexer, LALR driver, Tree, Token and
the Unexpected* errors) and the built tables, as Python literals. gradlang imports it instead of lark: building the
tables at start-up, or reading lark's cache of them from the temp folder, and importing lark's grammar
compiler (hashlib, logging's handlers, the Earley parsers) cost 0.07x of `import sympy` (issue #41).
tests/syntax/test_standalone_parser.py fails when the shipped tables are not the grammar's.
The generator numbers its states differently from run to run; the automaton is the same.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRAMMAR = ROOT / "grammar" / "gradlang.lark"
TARGET = ROOT / "gradlang" / "syntax" / "standalone_parser.py"
# The options syntax/parse.py needs: positions on; no None placeholders for [optional] parts (lark's
# default would add them); the post-lexer (brackets' newlines) is given when the parser is loaded. Not
# --compress: the tables as literals load without pickle, zlib and base64 (2 ms of every start).
OPTIONS = ["--propagate_positions"]


# Added under the generator's first line: annotations kept as text, not evaluated when lark's classes are
# made (a millisecond of every start; lark reads none of them at run time, tests/syntax compares the trees).
LAZY_ANNOTATIONS = "from __future__ import annotations\n"
# Taken out: the generator's template imports these for compressed tables; without --compress only lark's
# cache and Lark.save/load use pickle, which gradlang never calls (tests/cli/test_startup_imports.py).
UNUSED_IMPORT = "import pickle, zlib, base64\n"
# lark's logger, made with the logging module on its first use: lark's run-time logs only while building
# a grammar or a lexer's collisions, which the shipped tables never do (logging is 2 ms of every start).
EAGER_LOGGER = re.compile(r'import logging\n(.*?)logger: logging\.Logger = logging\.getLogger\("lark"\)\n'
                          r'logger\.addHandler\(logging\.StreamHandler\(\)\)\n(.*?)logger\.setLevel\(logging\.CRITICAL\)\n',
                          re.DOTALL)
LAZY_LOGGER = '''\\1\\2class _LazyLogger:
    """lark's logger ("lark", level CRITICAL, one StreamHandler), made on first use (grammar/build_parser.py)."""

    def __getattr__(self, name):
        import logging

        global logger
        logger = logging.getLogger("lark")
        if not logger.handlers:
            logger.addHandler(logging.StreamHandler())
        logger.setLevel(logging.CRITICAL)
        return getattr(logger, name)


logger = _LazyLogger()
'''

# lark's contextual lexer builds a lexer for each parser state (72, shared by the set of terminals they
# accept) when the parser is made: 1.4 ms of every start, and a program meets a few states. The rewrite
# builds each on its state's first token, shared as before (tests/syntax/test_standalone_parser.py compares
# the trees and the errors; tests/syntax/test_lazy_lexers.py the lexers).
EAGER_LEXERS = """\
        lexer_by_tokens: Dict[FrozenSet[str], AbstractBasicLexer] = {}
        self.lexers = {}
        for state, accepts in states.items():
            key = frozenset(accepts)
            try:
                lexer = lexer_by_tokens[key]
            except KeyError:
                accepts = set(accepts) | set(conf.ignore) | set(always_accept)
                lexer_conf = copy(trad_conf)
                lexer_conf.terminals = [terminals_by_name[n] for n in accepts if n in terminals_by_name]
                lexer = self.BasicLexer(lexer_conf, comparator)
                lexer_by_tokens[key] = lexer

            self.lexers[state] = lexer
"""
LAZY_LEXERS = """\
        state_conf = copy(trad_conf)  ##  each state's lexer is configured as before the root lexer's change below

        def build(accepts: Collection[str]) -> AbstractBasicLexer:
            accepts = set(accepts) | set(conf.ignore) | set(always_accept)
            lexer_conf = copy(state_conf)
            lexer_conf.terminals = [terminals_by_name[n] for n in accepts if n in terminals_by_name]
            return self.BasicLexer(lexer_conf, comparator)

        self.lexers = _LexersByState(states, build)
"""
CONTEXTUAL_LEXER = "\nclass ContextualLexer(Lexer):\n"
LEXERS_BY_STATE = '''
class _LexersByState(dict):
    """The contextual lexer of each parser state, built on the state's first token and shared by the states
    that accept the same terminals (grammar/build_parser.py): building all of them is 1.4 ms of every start."""

    def __init__(self, states, build) -> None:
        super().__init__()
        self._states = states
        self._build = build
        self._by_tokens = {}

    def __missing__(self, state):
        accepts = self._states[state]  ##  an unknown state is a KeyError, as in lark
        key = frozenset(accepts)
        lexer = self._by_tokens.get(key)
        if lexer is None:
            lexer = self._by_tokens[key] = self._build(accepts)
        self[state] = lexer
        return lexer

'''


def lazy_lexers(text: str) -> str:
    """`text` (the generated module) with the contextual lexers built on first use."""
    assert text.count(EAGER_LEXERS) == 1 and text.count(CONTEXTUAL_LEXER) == 1, "the generator's lexer changed"
    return text.replace(EAGER_LEXERS, LAZY_LEXERS).replace(CONTEXTUAL_LEXER, LEXERS_BY_STATE + CONTEXTUAL_LEXER)


def main() -> None:
    subprocess.run([sys.executable, "-m", "lark.tools.standalone", *OPTIONS, "-o", str(TARGET), str(GRAMMAR)],
                   check=True)
    first, rest = TARGET.read_text(encoding="utf-8").split("\n", 1)
    assert rest.count(UNUSED_IMPORT) == 1 and "pickle.loads" not in rest, "the generator's template changed"
    rest, loggers = EAGER_LOGGER.subn(LAZY_LOGGER, rest.replace(UNUSED_IMPORT, ""))
    assert loggers == 1 and "\nimport logging\n" not in rest, "the generator's logger changed"
    rest = lazy_lexers(rest)
    TARGET.write_text(f"{first}\n{LAZY_ANNOTATIONS}{rest}", encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
