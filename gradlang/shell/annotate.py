"""`gradlang --annotate FILE`: a script read as a lesson, its comments shown as prose.

The gallery's lessons live in comments, which a transcript would drop. Here
the whole script is shown in order: each run of comment lines as prose (the
`#` removed), every statement with its line number in the transcript's gutter
(`12 ┃`), and each result under its statement (`→`), as the transcript shows
it. `Annotated` wraps the script's Emitter as the run loop's reporter, and
before each result or error shows the lines of the script that lead up to it.
"""

from __future__ import annotations

from gradlang.render.messages import safe_text

PROSE_STYLE = "italic"
GUTTER_STYLE = "dim"


class Annotated:
    """A reporter that interleaves a script's lines with what its statements print."""

    def __init__(self, emitter, source: str):
        self.emitter = emitter
        self.lines = safe_text(source).split("\n")
        self.shown = 0  # lines of the script shown so far
        self.width = len(str(len(self.lines)))
        self.plain = emitter.fmt != "pretty"
        self.emitter.transcript = not self.plain
        self._last: str | None = None  # the kind of block shown last: prose, code, result or blank

    @property
    def err(self):
        return self.emitter.err

    @property
    def filename(self):
        return self.emitter.filename

    @filename.setter
    def filename(self, name) -> None:
        self.emitter.filename = name

    # --- the reporter -----------------------------------------------------------

    def result(self, result) -> None:
        if result.kind == "assignment":  # its lines are shown as code in their turn; only its warnings come here
            self.emitter.result(result)
            return
        self._show_until(result.line - 1)
        self._separate("result")
        if self.plain:
            self._code_lines(result.line, result.source.split("\n"))
            self.emitter.out = _Indented(self.emitter.out, " " * self.width + " → ", " " * (self.width + 3))
            try:
                self.emitter.result(result)
            finally:
                self.emitter.out = self.emitter.out.stream
        else:
            self.emitter._cells = 0  # the blank lines between cells are placed here, around the prose
            self.emitter.result(result)
        self.shown = max(self.shown, result.line + result.source.count("\n"))

    def error(self, error) -> None:
        if error.line is not None:
            self._show_until(error.line - 1)
        self.emitter.error(error)

    def interrupted(self, stop: KeyboardInterrupt) -> None:
        self.emitter.interrupted(stop)

    def finish(self, status: int) -> int:
        """After the run: the rest of the script (its closing comments) when it succeeded."""
        if status == 0:
            self._show_until(len(self.lines))
        return status

    # --- the script's lines -------------------------------------------------------

    def _show_until(self, last: int) -> None:
        """Show the lines after those shown, up to line `last`: comments as prose, code in the gutter."""
        while self.shown < last:
            number = self.shown + 1
            text = self.lines[self.shown]
            stripped = text.strip()
            if stripped.startswith("#"):
                self._separate("prose")
                self._write_line(stripped[2:] if stripped[1:2] == " " else stripped[1:], PROSE_STYLE)
            elif stripped:
                self._separate("code")
                self._code_lines(number, [text])
            elif self._last is not None:
                self._last = "blank"
            self.shown = number

    def _separate(self, kind: str) -> None:
        """A blank line between blocks of different kinds, and between results."""
        if self._last not in (None, kind) or (kind == "result" and self._last == "result"):
            self._write_line("", None)
        self._last = kind

    def _code_lines(self, number: int, lines: list[str]) -> None:
        width = self.width if self.plain else len(str(number))  # the pretty transcript does not pad numbers
        for k, line in enumerate(lines):
            gutter = (str(number) if k == 0 else "").rjust(width)
            self._write_line(f"{gutter} ┃ {line}", GUTTER_STYLE)

    def _write_line(self, text: str, style) -> None:
        if self.plain:
            self.emitter.out.write(text + "\n")
            return
        from rich.text import Text

        self.emitter.console.print(Text(text, style=style or ""))


class _Indented:
    """A stream that writes under a statement: the first line after `first`, the rest after `rest`.

    Plain output marks derivations and attachments as `# ` comments, to stay
    valid source; under a statement of a lesson they read as text, unmarked.
    """

    def __init__(self, stream, first: str, rest: str):
        self.stream = stream
        self.prefix = first
        self.rest = rest
        self.at_start = True

    def write(self, text: str) -> int:
        for piece in text.splitlines(keepends=True):
            if self.at_start:
                self.stream.write(self.prefix)
                self.prefix = self.rest
                piece = piece[2:] if piece.startswith("# ") else piece
            self.stream.write(piece)
            self.at_start = piece.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()
