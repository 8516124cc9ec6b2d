"""The interactive gradlang session: read a statement, run it, print, repeat.

`Repl` is the shell proper, independent of any terminal: it takes a complete
piece of input (statements or a `:command`), runs it in the Session and prints
through an Emitter; state is restored if anything fails, `_` is bound to the
last result. Two front ends feed it: `prompt_loop` (prompt_toolkit: history,
bracket continuation, completion, highlighting; input and output injectable
for tests) and `line_loop` (plain line-by-line reading when standard input is
not a terminal, so the REPL can be scripted).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from gradlang.shell import help as helptext
from gradlang.errors import GradlangError
from gradlang.render.emit import FORMATS, Emitter
from gradlang.render.plain import to_plain

PROMPT = "gradlang> "
CONTINUATION = "........ "
_WORD = re.compile(r"(:?[A-Za-z_][A-Za-z0-9_]*|:)$")


def _version() -> str:
    from gradlang import __version__

    return __version__


def banner() -> str:
    return f"gradlang {_version()} — :help for help, :quit or Ctrl-D to leave"


def open_brackets(text: str) -> int:
    """How many ( and [ are still open, ignoring comments (negative if over-closed)."""
    depth = 0
    for line in text.split("\n"):
        for char in line.split("#", 1)[0]:
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
    return depth


def is_complete(text: str) -> bool:
    """A command, or statements whose brackets are all closed, can be run."""
    return text.lstrip().startswith(":") or open_brackets(text) <= 0


def history_path() -> Path:
    """GRADLANG_HISTORY, else gradlang/history in the user's data directory."""
    if os.environ.get("GRADLANG_HISTORY"):
        return Path(os.environ["GRADLANG_HISTORY"])
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "gradlang" / "history"


class Repl:
    """Runs one complete input at a time; never lets an error end the session."""

    def __init__(self, session=None, fmt: str = "pretty", out=None, err=None, console=None):
        from gradlang.core.session import Session

        self.session = session if session is not None else Session()
        self.emitter = Emitter(fmt, out or sys.stdout, err or sys.stderr, console=console)
        self.running = True
        self.accepted: list[str] = []  # source that ran without error, for :export

    # --- input ----------------------------------------------------------------

    def execute(self, text: str) -> bool:
        """Run statements or a :command; False once the user asked to leave."""
        stripped = text.strip()
        if stripped.startswith(":"):
            self.command(stripped)
        elif stripped:
            self.run_source(text, "<stdin>")
        return self.running

    def run_source(self, source: str, filename: str, transcript: bool = False) -> bool:
        """Run statements, printing each result; on any failure restore the state."""
        state = self.session.snapshot()
        last = None
        self.emitter.transcript = transcript
        try:
            for result in self.session.iter_run(source, filename):
                self.emitter.result(result)
                last = result
        except GradlangError as error:
            return self._failed(state, self.emitter.error, error)
        except KeyboardInterrupt:
            return self._failed(state, self.emitter.note, "interrupted (nothing was changed)")
        except Exception as error:  # noqa: BLE001 - a bug: reported, the session lives on
            return self._failed(state, self.emitter.internal_error, error)
        finally:
            self.emitter.transcript = False
        if last is not None:
            self.session.bind("_", last.value)
        self.accepted.append(source)
        return True

    def _failed(self, state, report, what) -> bool:
        self.session.restore(state)
        report(what)
        return False

    # --- commands -------------------------------------------------------------

    def command(self, text: str) -> None:
        name, _, argument = text[1:].partition(" ")
        handler = getattr(self, "cmd_" + name, None)
        if handler is None:
            matches = [c for c in helptext.COMMANDS if c.startswith(name)] if name else []
            handler = getattr(self, "cmd_" + matches[0]) if len(matches) == 1 else None
        if handler is None:
            self.emitter.note(f"unknown command ':{name}' (try :help)")
            return
        handler(argument.strip())

    def cmd_help(self, argument: str) -> None:
        if argument:
            self.emitter.note(helptext.topic_help(argument, self.session.user_names()))
        else:
            self.emitter.note(helptext.general_help())

    def cmd_vars(self, argument: str) -> None:
        names = self.session.user_names()
        if not names:
            self.emitter.note("no names defined yet")
        for name, value in names.items():
            self.emitter.note(describe_binding(name, value))

    def cmd_reset(self, argument: str) -> None:
        from gradlang.core.session import Session

        self.session = Session(time_limit=self.session.time_limit)
        self.accepted = []
        self.emitter.note("every definition forgotten")

    def cmd_load(self, argument: str) -> None:
        if not argument:
            self.emitter.note("usage: :load FILE")
            return
        try:
            source = Path(argument).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self.emitter.note(f"cannot read '{argument}': {getattr(error, 'strerror', None) or error}")
            return
        self.run_source(source, argument, transcript=True)

    def cmd_format(self, argument: str) -> None:
        if not argument:
            self.emitter.note(f"output format: {self.emitter.fmt} (one of {', '.join(FORMATS)})")
        elif argument in FORMATS:
            self.emitter.fmt = argument
            self.emitter.note(f"output format: {argument}")
        else:
            self.emitter.note(f"unknown format '{argument}': choose one of {', '.join(FORMATS)}")

    def cmd_export(self, argument: str) -> None:
        """:export TARGET [FILE]: this session's functions as a Python module."""
        from gradlang.errors import GradlangError
        from gradlang.export import export_program

        target, _, path = argument.partition(" ")
        if target not in ("jax", "torch", "tf", "numpy"):
            self.emitter.note("usage: :export jax|torch|tf|numpy [FILE]")
            return
        try:
            module = export_program(self.session, target, "\n".join(self.accepted) or None)
        except GradlangError as error:
            self.emitter.error(error)
            return
        if not path.strip():
            self.emitter.note(module.rstrip("\n"))
            return
        try:
            Path(path.strip()).expanduser().write_text(module, encoding="utf-8")
        except OSError as error:
            self.emitter.note(f"cannot write '{path.strip()}': {error.strerror or error}")
            return
        self.emitter.note(f"wrote {path.strip()}")

    def cmd_quit(self, argument: str) -> None:
        self.running = False

    cmd_exit = cmd_quit
    cmd_q = cmd_quit

    # --- completion -----------------------------------------------------------

    def names(self) -> list[str]:
        """Every name Tab can complete: builtins, constants, keywords, user names."""
        from gradlang.core.builtins import CONSTANTS, TABLE

        names = set(TABLE) | set(CONSTANTS) | set(helptext.KEYWORDS) | set(self.session.user_names())
        return sorted(names)


def describe_binding(name: str, value) -> str:
    """One line for :vars: a function's definition, or name = value."""
    source = getattr(value, "source", None)
    if source is not None and hasattr(value, "params"):
        return source
    try:
        return f"{name} = {to_plain(value)}"
    except Exception:  # noqa: BLE001 - a value the printer cannot show must not end the session
        return f"{name} = {value!r}"


# --- front ends ---------------------------------------------------------------


def line_loop(repl: Repl, stream) -> int:
    """Read standard input line by line (not a terminal), continuing open brackets."""
    buffer = ""
    while repl.running:
        try:
            line = stream.readline()
            if not line:
                break
            buffer += line
            if is_complete(buffer):
                text, buffer = buffer, ""
                repl.execute(text)
        except KeyboardInterrupt:
            buffer = ""
            repl.emitter.note("interrupted")
    if buffer.strip():
        repl.execute(buffer)
    return 0


def prompt_loop(repl: Repl, input=None, output=None, history=None, show_banner: bool = True) -> int:
    """The prompt_toolkit REPL; `input`/`output` are injectable (pipe input in tests)."""
    prompt = make_prompt_session(repl, input=input, output=output, history=history)
    if show_banner:
        repl.emitter.note(banner())
    while repl.running:
        try:
            text = prompt.prompt(PROMPT)
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        try:
            repl.execute(text)
        except KeyboardInterrupt:
            repl.emitter.note("interrupted")
    return 0


def make_prompt_session(repl: Repl, input=None, output=None, history=None):
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.lexers import PygmentsLexer

    from gradlang.shell.lexer import GradlangLexer

    bindings = KeyBindings()

    @bindings.add("enter")
    @bindings.add("c-j")
    def _enter(event):
        buffer = event.current_buffer
        if is_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    return PromptSession(
        input=input,
        output=output,
        history=history if history is not None else _file_history(),
        completer=GradlangCompleter(repl),
        lexer=PygmentsLexer(GradlangLexer),
        key_bindings=bindings,
        multiline=True,
        prompt_continuation=lambda width, line_number, soft_wrap: CONTINUATION[:width].rjust(width),
        complete_while_typing=False,
        enable_history_search=False,
    )


def _file_history():
    """History kept across sessions; in memory if the data directory is not writable."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


def _completer_base():
    from prompt_toolkit.completion import Completer

    return Completer


class GradlangCompleter(_completer_base()):
    """Tab completes builtins, keywords, the user's names and :commands."""

    def __init__(self, repl: Repl):
        self.repl = repl

    def get_completions(self, document, complete_event):
        from prompt_toolkit.completion import Completion

        match = _WORD.search(document.text_before_cursor)
        if not match:
            return
        word = match.group(1)
        if word.startswith(":"):
            if document.text_before_cursor.strip() != word:
                return
            candidates = [":" + c for c in helptext.COMMANDS]
        else:
            candidates = self.repl.names()
        for name in candidates:
            if name.startswith(word) and name != word:
                yield Completion(name, start_position=-len(word))


def start(session=None, fmt: str | None = None) -> int:
    """Start the REPL on the process's standard streams."""
    from gradlang.shell.cli import default_format

    repl = Repl(session, fmt or default_format(sys.stdout))
    if sys.stdin.isatty():
        return prompt_loop(repl)
    return line_loop(repl, sys.stdin)
