"""The `gradlang` command's entry (the console script and `python -m gradlang`): cli.main, then the exit.

The collection the interpreter runs as it exits walks every object SymPy made at import: about 0.1 s of CPU,
a quarter of `python -c "import sympy"`'s whole process (issue #41). The command freezes the objects alive
after `main` (`gc.freeze()`: out of the collector's reach) and the process exits; standard streams are flushed
by the interpreter as before. `main` itself, called in processes that go on (tests, programs), freezes nothing.
"""

from __future__ import annotations

import gc

from gradlang.shell.cli import main


def command() -> int:
    """Run the command; its exit status."""
    status = main()
    gc.freeze()
    return status
