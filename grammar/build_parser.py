"""Write gradlang/syntax/standalone_parser.py: the LALR parser of grammar/gradlang.lark, built ahead of time.

    python grammar/build_parser.py        # after every change to gradlang.lark

lark's stand-alone generator writes one module holding lark's run-time (lexer, LALR driver, Tree, Token and
the Unexpected* errors) and the built tables, compressed. gradlang imports it instead of lark: building the
tables at start-up, or reading lark's cache of them from the temp folder, and importing lark's grammar
compiler (hashlib, logging's handlers, the Earley parsers) cost 0.07x of `import sympy` (issue #41).
tests/syntax/test_standalone_parser.py fails when the shipped tables are not the grammar's.
The generator numbers its states differently from run to run; the automaton is the same.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRAMMAR = ROOT / "grammar" / "gradlang.lark"
TARGET = ROOT / "gradlang" / "syntax" / "standalone_parser.py"
# The options syntax/parse.py needs: positions on; no None placeholders for [optional] parts (lark's
# default would add them); the post-lexer (brackets' newlines) is given when the parser is loaded.
OPTIONS = ["--propagate_positions", "--compress"]


def main() -> None:
    subprocess.run([sys.executable, "-m", "lark.tools.standalone", *OPTIONS, "-o", str(TARGET), str(GRAMMAR)],
                   check=True)
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
