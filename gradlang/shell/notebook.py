"""IPython and Jupyter: `%load_ext gradlang`, then `%%gradlang` cells and `%gradlang` lines.

Every cell of one IPython shell runs in the same `Session`, so names declared
in one cell are known in the next. Like the CLI and the REPL this is a thin
shell over `Session.iter_run`: each Result is shown as it comes, as a display
bundle that carries plain gradlang text beside the richer form (LaTeX for
values and derivations, a PNG for plots), so a terminal IPython, a notebook
and nbconvert each pick what they can show. A failing cell raises
`CellError`, which IPython shows in the same caret format as the command line
(through `_render_traceback_`, never as a Python traceback) and counts as a
failed cell, so "run all" stops there; the session keeps the bindings it had
before the failing statement.
"""

from __future__ import annotations

import weakref

import sympy as sp

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display

from gradlang.tools.plot import INSTALL_HINT, MissingExtraError, Plot
from gradlang.render.image import png_bytes
from gradlang.render.latex import to_latex
from gradlang.render.plain import to_plain
from gradlang.core.session import Result, Session
from gradlang.render.messages import error_text, interrupted_text, safe_text
from gradlang.shell.loop import EXIT_OK, run_and_report

_SESSIONS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class CellError(Exception):
    """A gradlang cell failed: IPython marks the cell failed and shows only this text."""

    def _render_traceback_(self) -> list[str]:
        return str(self).splitlines()


def load_ipython_extension(ipython) -> None:
    """Register the %%gradlang / %gradlang magics (called by `%load_ext gradlang`)."""
    ipython.register_magics(GradlangMagics)
    register_formatters(ipython)


def register_formatters(ipython) -> None:
    """Python API values show as gradlang shows them: sg(…) in LaTeX, gradlang source as text.

    `Session.eval` returns SymPy values, whose own LaTeX would spell a stop
    StopGradient; `Result` carries `_repr_latex_` already, and gets its plain
    text here instead of the dataclass repr.
    """
    formatters = ipython.display_formatter.formatters
    for kind in (sp.Basic, sp.MatrixBase, sp.NDimArray):
        formatters["text/latex"].for_type(kind, _sympy_latex)
    formatters["text/plain"].for_type(Result, lambda result, printer, cycle: printer.text(result.text))


def session_for(shell) -> Session:
    """The Session that the magics of `shell` share, created on first use."""
    if shell not in _SESSIONS:
        _SESSIONS[shell] = Session()
    return _SESSIONS[shell]


def reset_session(shell) -> Session:
    """Forget every binding: a fresh Session for `shell`."""
    _SESSIONS[shell] = Session()
    return _SESSIONS[shell]


@magics_class
class GradlangMagics(Magics):
    """`%%gradlang [--reset]` runs a cell of gradlang; `%gradlang CODE` runs one line."""

    @line_cell_magic
    def gradlang(self, line: str, cell: str | None = None) -> None:
        if cell is None:
            run_and_display(session_for(self.shell), line)
            return
        options = line.split()
        if any(option != "--reset" for option in options):
            raise CellError(safe_text(f"%%gradlang takes only the option --reset, not {line.strip()!r}"))
        session = reset_session(self.shell) if options else session_for(self.shell)
        # A blank first line stands for the %%gradlang line, so error lines match the cell as shown.
        run_and_display(session, "\n" + cell)


class _Display:
    """The notebook's side of the run loop: each result displayed, the error kept to raise."""

    def __init__(self):
        self.failure: str | None = None

    def result(self, result) -> None:
        display_result(result)

    def error(self, error) -> None:
        self.failure = error_text(error)

    def interrupted(self, stop: KeyboardInterrupt) -> None:
        self.failure = interrupted_text(stop, "the statement that was running changed nothing")


def run_and_display(session: Session, source: str) -> None:
    """Run `source`, displaying each Result as it finishes; an error ends the run and fails the cell."""
    shown = _Display()
    if run_and_report(session, source, "<cell>", shown) != EXIT_OK:
        raise CellError(shown.failure)


def display_result(result) -> None:
    """Derivations, then the value, then attachments (plots, reports), then warnings."""
    for step in result.steps:
        display(explanation_bundle(step), raw=True)
    if result.kind != "assignment":  # an assignment shows only its warnings
        display(value_bundle(result), raw=True)
    for attachment in result.attachments:
        display(attachment_bundle(attachment), raw=True)
    for warning in result.warnings:
        display(warning_bundle(warning), raw=True)


# --- display bundles ------------------------------------------------------------


def _sympy_latex(value) -> str:
    return f"$\\displaystyle {to_latex(value)}$"


def value_bundle(result) -> dict:
    return {"text/plain": result.text, "text/latex": result._repr_latex_()}


def explanation_bundle(step) -> dict:
    """A derivation as display mathematics: align* becomes aligned inside $$, which MathJax and KaTeX both read."""
    latex = to_latex(step)
    latex = latex.replace(r"\begin{align*}", r"$$\begin{aligned}").replace(r"\end{align*}", r"\end{aligned}$$")
    return {"text/plain": to_plain(step), "text/latex": latex}


def attachment_bundle(attachment) -> dict:
    """A plot as a PNG (its text chart without matplotlib); any other attachment as LaTeX."""
    plain = to_plain(attachment)
    if not isinstance(attachment, Plot):
        return {"text/plain": plain, "text/latex": f"$${to_latex(attachment)}$$"}
    try:
        return {"text/plain": plain, "image/png": png_bytes(attachment)}
    except MissingExtraError:
        note = f"plot images need matplotlib: `{INSTALL_HINT}`"
        return {"text/plain": f"{plain}\n({note})", "text/markdown": f"```\n{plain}\n```\n\n*{note}*"}


def warning_bundle(text: str) -> dict:
    return {"text/plain": f"warning: {text}", "text/markdown": f"> **warning:** {_markdown_escape(text)}"}


def _markdown_escape(text: str) -> str:
    for char in "\\`*_[]<>#|":
        text = text.replace(char, "\\" + char)
    return text
