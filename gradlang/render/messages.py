"""The texts every shell prints the same way: an error, the note on an internal error, user text made safe.

The CLI, the REPL and the notebook each show errors, and the Emitter shows
warnings and transcripts; they all take their text from here, so there is one
"this is a bug" note and one rule for control characters.
"""

from __future__ import annotations

import os

from gradlang.errors import BUG_NOTE as INTERNAL_NOTE, GradlangError, Interrupted


def error_text(error: GradlangError) -> str:
    """An error as every shell prints it: the caret display, plus the bug note for an internal error."""
    text = safe_text(error.format())
    if error.kind == "InternalError":
        text += "\n" + INTERNAL_NOTE + debug_traceback(error)
    return text


def interrupted_text(stop: KeyboardInterrupt, consequence: str = "") -> str:
    """Ctrl-C as every shell says it: where the script was, when a statement was running, and what it left."""
    text = "interrupted"
    if isinstance(stop, Interrupted):
        statement = safe_text(stop.statement.strip())
        shown = statement if len(statement) <= 60 else statement[:59] + "…"
        text = f"{stop.where()}: interrupted while running {shown}"
    return f"{text} ({consequence})" if consequence else text


def debug_traceback(error: BaseException) -> str:
    """With GRADLANG_DEBUG=1, the traceback of what went wrong inside gradlang; else nothing.

    The Session re-raises errors `from None` to hide its own frames from users,
    which clears `__cause__` but keeps `__context__`: either leads to the original.
    """
    if os.environ.get("GRADLANG_DEBUG") != "1":
        return ""
    import traceback  # here: a run that shows no internal error never needs it (start-up, issue #41)

    origin = error.__cause__ or error.__context__ or error
    return "\n" + "".join(traceback.format_exception(type(origin), origin, origin.__traceback__)).rstrip("\n")


# Control characters would act on the terminal (retitle it, clear it, move the
# cursor) instead of being shown. Each becomes one visible character of the same
# width, so a caret under a source line still points at the right place: C0
# controls and DEL their Unicode "control pictures" (ESC shows as ␛), C1 controls
# and the line separators the parser does not count as lines U+FFFD.
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n"}
_PICTURES[0x7F] = "\u2421"
_PICTURES.update({code: "\ufffd" for code in range(0x80, 0xA0)})
_PICTURES.update({0x2028: "\ufffd", 0x2029: "\ufffd"})
# Format characters (Unicode category Cf) are invisible but act: a right-to-left override (U+202E)
# reverses what follows on the terminal (a message could read as another), a zero-width joiner (U+200D)
# hides between letters, so `a\u200db` looks like `ab`. They too become U+FFFD. The ranges are Unicode 15's
# (tests/cli/test_output_holes.py checks them against the running Python's unicodedata).
FORMAT_CHARACTERS = (
    (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891),
    (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)
_PICTURES.update({code: "\ufffd" for first, last in FORMAT_CHARACTERS for code in range(first, last + 1)})


def safe_text(text: str) -> str:
    """`text` with every control character but tab and newline shown as a visible character."""
    return text.translate(_PICTURES)
