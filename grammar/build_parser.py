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


def main() -> None:
    subprocess.run([sys.executable, "-m", "lark.tools.standalone", *OPTIONS, "-o", str(TARGET), str(GRAMMAR)],
                   check=True)
    first, rest = TARGET.read_text(encoding="utf-8").split("\n", 1)
    assert rest.count(UNUSED_IMPORT) == 1 and "pickle.loads" not in rest, "the generator's template changed"
    rest, loggers = EAGER_LOGGER.subn(LAZY_LOGGER, rest.replace(UNUSED_IMPORT, ""))
    assert loggers == 1 and "\nimport logging\n" not in rest, "the generator's logger changed"
    TARGET.write_text(f"{first}\n{LAZY_ANNOTATIONS}{rest}", encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
