"""Writing results and errors to streams in one of the four formats.

The CLI and the REPL both hand every Result and error to an `Emitter`, so the
two shells print alike. In *transcript* mode (running a file) pretty output
shows each statement above its result and LaTeX output becomes a fragment of
display equations with the statement as a comment, ready for lecture notes;
otherwise (`-e`, the REPL) only the results are shown. Results go to `out`,
errors and warnings to `err`, and with JSON an error object goes to `out` too.
"""

from __future__ import annotations

import os
import traceback

from gradlang.render import json as json_render

FORMATS = ("pretty", "plain", "latex", "json")
REPORT_URL = "https://github.com/gradlang/gradlang/issues"


def _explain_renderer(name: str):
    """A renderer of the explain package (to_plain, to_latex), imported when a derivation is shown."""
    from gradlang import explain

    return getattr(explain, name)


def make_console(out, width: int | None = None):
    """A rich console on `out`; colour only on a terminal and without NO_COLOR."""
    from rich.console import Console  # rich loads only when pretty output is asked for

    return Console(file=out, width=width, highlight=False, markup=False, emoji=False, soft_wrap=False)


class Emitter:
    """Renders Results and errors to an output and an error stream."""

    def __init__(self, fmt: str, out, err, transcript: bool = False, console=None):
        self.fmt = fmt
        self.out = out
        self.err = err
        self.transcript = transcript
        self._console = console
        self.filename: str | None = None
        self.plot_dir: str | None = None
        self._cells = 0

    @property
    def console(self):
        """The rich console, made on first use."""
        if self._console is None:
            self._console = make_console(self.out)
        return self._console

    # --- results --------------------------------------------------------------

    def result(self, result) -> None:
        """Print one result as it comes, then its warnings on the error stream."""
        getattr(self, "_result_" + self.fmt)(result)
        if self.fmt != "json":
            for attachment in getattr(result, "attachments", ()) or ():
                self._attachment(attachment)
        self._flush()
        self._save_images(result)
        for warning in getattr(result, "warnings", ()) or ():
            self.warning(warning, result)

    def _attachment(self, attachment) -> None:
        """A gradcheck report or a plot, after the value (comments in plain, to stay valid source)."""
        if self.fmt == "pretty":
            self.console.print(attachment.to_rich())
        elif self.fmt == "latex":
            self._write(attachment.to_latex() + "\n")
        else:
            self._write("".join(f"# {line}\n" for line in attachment.to_plain().splitlines()))

    def _save_images(self, result) -> None:
        """With --plot-dir, each plot is also written as a PNG."""
        if not self.plot_dir:
            return
        from pathlib import Path

        from gradlang.errors import GradlangError

        images = [a for a in getattr(result, "attachments", ()) or () if hasattr(a, "to_png")]
        for number, image in enumerate(images, start=1):
            path = Path(self.plot_dir) / f"plot-line{result.line}-{number}.png"
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                image.to_png(path)
            except GradlangError as error:
                self.warning(error.message, result)
                return
            except OSError as error:
                self.warning(f"cannot write {path}: {error.strerror or error}", result)
                return
            self.err.write(f"wrote {path}\n")

    def _result_plain(self, result) -> None:
        # Derivations are not values: as comments, the output stays valid source.
        for step in result.steps:
            text = _explain_renderer("to_plain")(step)
            self._write("".join(f"# {line}\n" for line in text.splitlines()))
        self._write(result.text + "\n")

    def _result_latex(self, result) -> None:
        if self.transcript:
            comment = "".join(f"% {line}\n" for line in result.source.splitlines())
            self._write(f"{self._separator()}% line {result.line}:\n{comment}")
        for step in result.steps:
            self._write(_explain_renderer("to_latex")(step) + "\n")
        self._write(f"\\[\n{result.latex}\n\\]\n" if self.transcript else result.latex + "\n")

    def _result_json(self, result) -> None:
        self._write(json_render.dumps(json_render.result_to_json(result)) + "\n")

    def _result_pretty(self, result) -> None:
        if self.transcript and self._cells:
            self.console.print()
        self._cells += 1
        from gradlang.render import pretty

        width = self.console.width
        self.console.print(pretty.result_renderable(result, width, with_source=self.transcript))

    def _separator(self) -> str:
        self._cells += 1
        return "\n" if self._cells > 1 else ""

    # --- messages -------------------------------------------------------------

    def warning(self, text: str, result=None) -> None:
        where = ""
        if result is not None:
            where = f"{self.filename}:{result.line}: " if self.filename else f"line {result.line}: "
        self.err.write(f"{where}warning: {text}\n")
        self.err.flush()

    def error(self, error) -> None:
        """A GradlangError: kind, message, place, source line, caret."""
        self._flush()
        text = error.format()
        if error.kind == "InternalError":
            text += "\n" + _bug_note() + _debug_traceback(error.__cause__)
        self.err.write(text + "\n")
        self.err.flush()
        if self.fmt == "json":
            self._write(json_render.dumps(json_render.error_to_json(error)) + "\n")
            self._flush()

    def internal_error(self, exc: BaseException) -> None:
        """Any other exception is a bug in gradlang: say so, no traceback unless debugging."""
        self._flush()
        text = f"InternalError: {type(exc).__name__}: {exc}\n{_bug_note()}\n{_debug_traceback(exc)}"
        self.err.write(text)
        self.err.flush()
        if self.fmt == "json":
            data = {"kind": "error", "error": "InternalError", "message": str(exc), "line": None, "column": None}
            self._write(json_render.dumps(data) + "\n")
            self._flush()

    def note(self, text: str, style: str | None = None) -> None:
        """A message for the user (REPL feedback) on the output stream."""
        if self.fmt == "pretty":
            from rich.text import Text

            self.console.print(Text(text, style=style or ""))
        else:
            self._write(text + "\n")
        self._flush()

    # --- streams --------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.out.write(text)

    def _flush(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass


def _bug_note() -> str:
    return (
        "This is a bug in gradlang, not in your program. Please report it, with the program "
        f"that caused it, at {REPORT_URL} (set GRADLANG_DEBUG=1 to see the traceback)."
    )


def _debug_traceback(exc: BaseException | None) -> str:
    """The traceback of a bug, only when GRADLANG_DEBUG=1."""
    if exc is None or os.environ.get("GRADLANG_DEBUG") != "1":
        return ""
    return "\n" + "".join(traceback.format_exception(exc))
