"""Writing results and errors to streams in one of the four formats.

The CLI and the REPL both hand every Result and error to an `Emitter`, so the
two shells print alike. In *transcript* mode (running a file) pretty output
shows each statement above its result and LaTeX output becomes a fragment of
display equations with the statement as a comment, ready for lecture notes;
otherwise (`-e`, the REPL) only the results are shown. Results go to `out`,
errors and warnings to `err`, and with JSON an error object goes to `out` too.

The Emitter owns no formatting of its own: each Result goes to the format's
printer (`to_plain`, `to_latex`, `to_rich`, `to_json`), with `full` set when
the user asked for large values to be printed whole (`--full`, `:full on`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import textwrap

from gradlang.errors import GradlangError, Span, Warning
from gradlang.expr.names_shown import names_shown
from gradlang.lazy import deferred_module
from gradlang.render.messages import error_text, interrupted_text, safe_text
from gradlang.render.plain import to_plain

# The JSON and LaTeX printers (json, latex.py's patterns) on the first --json or --latex result (issue #41).
json_render = deferred_module("gradlang.render.json")
to_latex, value_shown = deferred_module("gradlang.render.latex").names("to_latex", "value_shown")

FORMATS = ("pretty", "plain", "latex", "json")


def make_console(out, width: int | None = None):
    """A rich console on `out`; colour only on a terminal and without NO_COLOR."""
    from rich.console import Console  # rich loads only when pretty output is asked for

    return Console(file=out, width=width, highlight=False, markup=False, emoji=False, soft_wrap=False)


class Emitter:
    """Renders Results and errors to an output and an error stream."""

    def __init__(self, fmt: str, out, err, transcript: bool = False, console=None, full: bool = False):
        self.fmt = fmt
        self.full = full
        self.out = out
        self.err = err
        self.transcript = transcript
        self._console = console
        self.filename: str | None = None
        self.plot_dir: str | None = None
        self._cells = 0
        self._images: dict[int, int] = {}  # line -> plots written for it so far, for unique names
        self._said: set = set()  # convention paragraphs already given in this run

    @property
    def console(self):
        """The rich console, made on first use."""
        if self._console is None:
            self._console = make_console(self.out)
        return self._console

    # --- results --------------------------------------------------------------

    def result(self, result) -> None:
        """Print one result as it comes, then (but for JSON, which holds them) its warnings on the error stream."""
        if self.fmt != "json":
            result = _safe_source(result)
        try:
            if result.kind != "assignment" or self.fmt == "json":  # an assignment prints only its warnings
                getattr(self, "_result_" + self.fmt)(result)
        except GradlangError as error:  # a value too large to print even with its shared parts named
            raise error.located(_span(result)) from None
        self._flush()
        self._save_images(result)
        if self.fmt == "json":
            return  # the JSON object carries its warnings; saying them on stderr too repeats them
        for warning in result.warnings:
            self.warning(warning, result)

    def _save_images(self, result) -> None:
        """With --plot-dir, each plot is also written as a PNG: plot-lineN-K.png, K counting the line's plots."""
        if not self.plot_dir:
            return
        from pathlib import Path

        from gradlang.render.image import write_png
        from gradlang.tools.plot import Plot

        for image in [a for a in result.attachments if isinstance(a, Plot)]:
            number = self._images[result.line] = self._images.get(result.line, 0) + 1
            path = Path(self.plot_dir) / f"plot-line{result.line}-{number}.png"
            try:
                write_new_file(path, lambda handle, image=image: write_png(image, handle))
            except OSError as error:
                self.warning(f"cannot write {path}: {error.strerror or error}", result)
                return
            self.err.write(safe_text(f"wrote {path}\n"))

    def _result_plain(self, result) -> None:
        # Derivations and attachments are not values: as comments, the output stays valid source.
        self._write(to_plain(result, self.full))

    def _result_latex(self, result) -> None:
        if self.transcript:
            comment = "".join(f"% {line}\n" for line in result.source.splitlines())
            self._write(f"{self._separator()}% line {result.line}:\n{comment}")
        with names_shown(result.bound):  # pi[2] beside a name pi2 keeps its brackets
            parts = [to_latex(step) for step in result.steps]
            value = to_latex(value_shown(result, self.full), self.full)  # with the derivation's names, as to_latex
        parts.append(f"\\[\n{value}\n\\]" if self.transcript else value)
        parts.extend(to_latex(attachment) for attachment in result.attachments)
        self._write("".join(part + "\n" for part in parts))

    def _result_json(self, result) -> None:
        self._write(json_render.dumps(json_render.to_json(result, self.full)) + "\n")

    def _result_pretty(self, result) -> None:
        if self.transcript and self._cells:
            self.console.print()
        self._cells += 1
        from gradlang.render.pretty import to_rich

        with names_shown(result.bound):  # rich lays the text out when printed
            self.console.print(to_rich(result, self.console.width, self.full, source=self.transcript))

    def _separator(self) -> str:
        self._cells += 1
        return "\n" if self._cells > 1 else ""

    # --- messages -------------------------------------------------------------

    def warning(self, text: str, result=None) -> None:
        where = ""
        if result is not None:
            where = f"{self.filename}:{result.line}: " if self.filename else f"line {result.line}: "
        width = self._err_width()
        short, detail = (text.short, text.detail) if isinstance(text, Warning) else (text, "")
        lines = textwrap.wrap(safe_text(f"{where}warning: {short}"), width, subsequent_indent="  ")
        if detail and detail not in self._said:
            self._said.add(detail)
            lines += textwrap.wrap(detail, width, initial_indent="  ", subsequent_indent="  ")
        self.err.write("".join(line + "\n" for line in lines))
        self.err.flush()

    def _err_width(self) -> int:
        """The terminal's width when errors go to one; 80 otherwise, so files get the same bytes everywhere."""
        isatty = getattr(self.err, "isatty", None)
        if isatty is not None and isatty():
            return max(40, shutil.get_terminal_size().columns)
        return 80

    def error(self, error) -> None:
        """A GradlangError: kind, message, place, source line, caret (and the bug note for an internal one)."""
        self._flush()
        self.err.write(error_text(error) + "\n")
        self.err.flush()
        if self.fmt == "json":
            self._write(json_render.dumps(json_render.to_json(error)) + "\n")
            self._flush()

    def interrupted(self, stop: KeyboardInterrupt) -> None:
        self.err.write(interrupted_text(stop) + "\n")
        self.err.flush()

    def note(self, text: str, style: str | None = None) -> None:
        """A message for the user (REPL feedback) on the output stream."""
        if self.fmt == "pretty":
            from rich.text import Text

            self.console.print(Text(safe_text(text), style=style or ""))
        else:
            self._write(safe_text(text) + "\n")
        self._flush()

    # --- streams --------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.out.write(text)

    def _flush(self) -> None:
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass


def _span(result) -> Span:
    """Where a result's statement stands, for an error met while printing it."""
    lines = result.source.splitlines() or [""]
    end_column = len(lines[-1]) + (result.column if len(lines) == 1 else 1)
    return Span(result.line, result.column, result.line + len(lines) - 1, end_column)


def _safe_source(result):
    """The result with its source made safe for a terminal (control characters visible, not obeyed)."""
    source = getattr(result, "source", None)
    if isinstance(source, str) and safe_text(source) != source:
        return dataclasses.replace(result, source=safe_text(source))
    return result


def write_new_file(path, write) -> None:
    """Call write(file) on a fresh file, then move it to `path`.

    The file is created under a random name with O_EXCL (mkstemp) and renamed
    over `path`: a symlink planted at `path` is replaced, never followed, so a
    predictable name cannot be used to overwrite another file.
    """
    directory = os.path.dirname(os.fspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".gradlang-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.chmod(temporary, 0o644 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
