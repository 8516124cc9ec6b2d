"""lessons.json for the page: the gallery's lessons (examples/*.grad) and the wheels to install.

Usage: python lessons.py EXAMPLES_DIR WHEELS_DIR > lessons.json. A lesson's
title is its first comment line; the stable-softmax lesson comes first, as the
page opens with it.
"""

import json
import sys
from pathlib import Path

FIRST = "stable_softmax"


def lesson(path: Path) -> dict:
    source = path.read_text(encoding="utf-8")
    first = source.splitlines()[0] if source else ""
    title = first.lstrip("# ").split(" — ", 1)[-1] if first.startswith("#") else path.stem
    return {"name": path.stem, "title": title, "source": source}


def words() -> dict:
    """The highlighter's words, from the lexer the REPL uses (gradlang/shell/lexer.py)."""
    from gradlang.shell import lexer

    return {"core": list(lexer.CORE), "builtins": list(lexer.BUILTINS), "constants": list(lexer.CONSTANTS)}


def main() -> None:
    examples, wheels = Path(sys.argv[1]), Path(sys.argv[2])
    paths = sorted(examples.glob("*.grad"), key=lambda p: (p.stem != FIRST, p.stem))
    json.dump({"lessons": [lesson(p) for p in paths], "wheels": sorted(w.name for w in wheels.glob("*.whl")),
               "words": words()},
              sys.stdout, indent=1, ensure_ascii=False)


main()
