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

import re
import sys

from gradlang.shell import help as helptext
from gradlang.render.emit import FORMATS, Emitter
from gradlang.render.messages import interrupted_text
from gradlang.render.plain import to_plain
from gradlang.shell.loop import EXIT_ERROR, EXIT_OK, default_format, guarded, run_and_report
from gradlang.shell.history import file_history, history_path  # noqa: F401 - history_path is part of the REPL's API
from gradlang.shell.piped import is_complete, line_loop  # noqa: F401 - both are part of the REPL's API
from gradlang.shell.sources import SourceError, read_file, write_file
from gradlang.errors import LimitError
from gradlang.expr.tensor.nodes import Var
from gradlang.shell.typed import DROPPED, TypedLineGuard, dropped_message

PROMPT = "gradlang> "
CONTINUATION = "........ "
_WORD = re.compile(r"(:?[A-Za-z_][A-Za-z0-9_]*|:)$")
_HELP_ON = re.compile(r"^(?:help\(\s*([A-Za-z_:][A-Za-z0-9_]*)\s*\)|\?\s*([A-Za-z_:][A-Za-z0-9_]*)|([A-Za-z_:][A-Za-z0-9_]*)\s*\?)$")
_LEAVE = ("exit", "quit", "exit()", "quit()")
_HELP = ("help", "help()", "?")
VARS_WIDTH = 72  # :vars shows a value's first characters, then how big it is


def _version() -> str:
    from gradlang import __version__

    return __version__


def banner() -> str:
    return f"gradlang {_version()} — :help for help, :quit or Ctrl-D to leave"


class Repl:
    """Runs one complete input at a time; never lets an error end the session."""

    def __init__(self, session=None, fmt: str = "pretty", out=None, err=None, console=None):
        from gradlang.core.session import Session

        self.session = session if session is not None else Session()
        self.emitter = Emitter(fmt, out or sys.stdout, err or sys.stderr, console=console)
        self.running = True
        self.failures = 0  # inputs that ended in an error: a piped REPL exits 1 if there were any
        self.accepted: list[str] = []  # source that ran without error, for :export

    # --- input ----------------------------------------------------------------

    def execute(self, text: str) -> bool:
        """Run statements or a :command; False once the user asked to leave."""
        stripped = text.strip()
        if stripped.startswith(":"):
            self.command(stripped)
        elif not self._python_habit(stripped) and stripped:
            self.run_source(text, "<stdin>")
        return self.running

    def _python_habit(self, text: str) -> bool:
        """exit, quit, help, help(grad), ?grad and grad? do what a Python user expects (unless they are user names)."""
        if text in self.session.user_names():
            return False
        if text in _LEAVE:
            self.cmd_quit("")
            return True
        if text in _HELP:
            self.cmd_help("")
            return True
        match = _HELP_ON.match(text)
        if match:
            self.cmd_help(next(name for name in match.groups() if name))
            return True
        return False

    def run_source(self, source: str, filename: str, transcript: bool = False) -> bool:
        """Run statements, printing each result; on any failure restore the state."""
        reporter = _ReplReporter(self.emitter)
        state = self.session.snapshot()
        self.emitter.transcript = transcript
        try:
            status = run_and_report(self.session, source, filename, reporter)
        finally:
            self.emitter.transcript = False
        if status != EXIT_OK:
            self.session.restore(state)
            self.failures += status == EXIT_ERROR  # Ctrl-C is the user's choice, not a failure
            return False
        if reporter.last is not None:
            self.session.bind("_", reporter.last.value)
        self.accepted.append(source)
        return True

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
            self.emitter.note(helptext.general_help(self._width()))

    def _width(self) -> int:
        """Where help text wraps: the console's width when pretty, else 80 columns."""
        return self.emitter.console.width if self.emitter.fmt == "pretty" else 80

    def cmd_vars(self, argument: str) -> None:
        names = self.session.user_names()
        if not names:
            self.emitter.note("no names defined yet")
        for name, value in names.items():
            self.emitter.note(describe_binding(name, value))

    def cmd_reset(self, argument: str) -> None:
        from gradlang.core.session import Session

        self.session = Session(time_limit=self.session.time_limit, max_memory=self.session.max_memory)
        self.accepted = []
        self.emitter.note("every definition forgotten")

    def cmd_load(self, argument: str) -> None:
        if not argument:
            self.emitter.note("usage: :load FILE")
            return
        try:
            source = read_file(argument)
        except SourceError as error:
            self.emitter.note(str(error))
            self.failures += 1
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

    def cmd_full(self, argument: str) -> None:
        """:full on|off: large values printed whole, or their first and last few components."""
        if argument in ("on", "off"):
            self.emitter.full = argument == "on"
        elif argument:
            self.emitter.note("usage: :full on|off")
            return
        self.emitter.note(f"full printing: {'on' if self.emitter.full else 'off'}")

    def cmd_export(self, argument: str) -> None:
        """:export TARGET [FILE]: this session's functions as a Python module."""
        from gradlang.export import TARGETS, export_program

        target, _, path = argument.partition(" ")
        if target not in TARGETS:
            self.emitter.note(f"usage: :export {'|'.join(TARGETS)} [FILE]")
            return
        modules: list[str] = []
        source = "\n".join(self.accepted) or None
        if guarded(self.emitter, lambda: modules.append(export_program(self.session, target, source))) != EXIT_OK:
            self.failures += 1
            return
        if not path.strip():
            self.emitter.note(modules[0].rstrip("\n"))
            return
        try:
            write_file(path.strip(), modules[0])
        except SourceError as error:
            self.emitter.note(str(error))
            self.failures += 1
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


class _ReplReporter:
    """The REPL's side of the run loop: results through the emitter, the last one kept for `_`."""

    def __init__(self, emitter: Emitter):
        self.emitter = emitter
        self.last = None

    def result(self, result) -> None:
        self.emitter.result(result)
        if result.kind != "assignment":  # `_` is the last value printed
            self.last = result

    def error(self, error) -> None:
        self.emitter.error(error)

    def interrupted(self, stop: KeyboardInterrupt) -> None:
        self.emitter.note(interrupted_text(stop, "nothing was changed"))


def describe_binding(name: str, value) -> str:
    """One line for :vars: a function's definition, or name = value, cut short when long."""
    source = getattr(value, "source", None)
    if source is not None and hasattr(value, "params"):
        return _summary(source)
    if isinstance(value, Var):  # a declared vector or matrix: its declaration (x: R^3, W: R^(m,n))
        sizes = ",".join(str(n) for n in value.shape)
        return f"{name}: R^{sizes if len(value.shape) == 1 else f'({sizes})'}"
    try:
        text = f"{name} = {to_plain(value)}"
    except Exception:  # noqa: BLE001 - a value the printer cannot show must not end the session
        text = f"{name} = {value!r}"
    return _summary(" ".join(text.split()), getattr(value, "shape", None))


def _summary(text: str, shape=None) -> str:
    """The text if short, else its start, an ellipsis and how big the whole is."""
    if len(text) <= VARS_WIDTH:
        return text
    size = "×".join(str(n) for n in shape) if shape else f"{len(text)} characters"
    return f"{text[: VARS_WIDTH - 12].rstrip()} … ({size})"


# --- front ends ---------------------------------------------------------------


def prompt_loop(repl: Repl, input=None, output=None, history=None, show_banner: bool = True) -> int:
    """The prompt_toolkit REPL; `input`/`output` are injectable (pipe input in tests)."""
    history, note = (history, None) if history is not None else file_history()
    guard = TypedLineGuard()
    prompt = make_prompt_session(repl, input=input, output=output, history=history, guard=guard)
    if show_banner:
        repl.emitter.note(banner())
    if note:
        repl.emitter.note(note)
    while repl.running:
        try:
            text = prompt.prompt(PROMPT)
        except KeyboardInterrupt:
            guard.over = False
            continue
        except EOFError:
            break
        if text == DROPPED:
            repl.emitter.error(LimitError(dropped_message(guard.limit)))
            repl.failures += 1
            continue
        try:
            repl.execute(text)
        except KeyboardInterrupt:
            repl.emitter.note("interrupted")
    return 0


def make_prompt_session(repl: Repl, input=None, output=None, history=None, guard=None):
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.lexers import PygmentsLexer

    from gradlang.shell.lexer import GradlangLexer

    bindings = KeyBindings()

    @bindings.add("enter")
    @bindings.add("c-j")
    def _enter(event):
        if guard is not None and guard.enter(event):
            return
        buffer = event.current_buffer
        # Enter on an empty line runs an unfinished statement too, so an unclosed bracket is reported.
        if is_complete(buffer.text) or not buffer.document.current_line.strip():
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    if guard is not None:
        guard.add_to(bindings)

    return PromptSession(
        input=input,
        output=output,
        history=history if history is not None else file_history()[0],
        completer=GradlangCompleter(repl),
        lexer=PygmentsLexer(GradlangLexer),
        key_bindings=bindings,
        multiline=True,
        prompt_continuation=lambda width, line_number, soft_wrap: CONTINUATION[:width].rjust(width),
        complete_while_typing=False,
        enable_history_search=False,
        enable_suspend=True,  # Ctrl-Z suspends to the shell, as in Python's REPL (no-op where there is no job control)
    )


def _completer_base():
    from prompt_toolkit.completion import Completer

    return Completer


class GradlangCompleter(_completer_base()):
    """Tab completes builtins, keywords, the user's names and :commands."""

    def __init__(self, repl: Repl):
        self.repl = repl

    def get_completions(self, document, complete_event):
        from prompt_toolkit.completion import Completion

        before = document.text_before_cursor
        if before.lstrip().startswith(":load "):
            yield from self._files(document, complete_event)
            return
        choices = _argument_choices(before)
        if choices is not None:  # :format p<Tab>: the command's own words, not the language's names
            word = before.split(" ", 1)[1].lstrip()
            yield from (Completion(c, start_position=-len(word)) for c in choices if c.startswith(word) and c != word)
            return
        option = helptext.explain_completions(before)
        if option is not None:  # explain[depth=…: the options first (a bracket may also be a vector, so names too)
            yield from (Completion(c, start_position=-len(option[0])) for c in option[1] if c.startswith(option[0]))
            if "=" in before[before.rindex("["):].split(",")[-1]:
                return
        match = _WORD.search(before)
        if not match:
            return
        word = match.group(1)
        if word.startswith(":"):
            if before.strip() != word:
                return
            candidates = [":" + c for c in helptext.COMMANDS]
        else:
            candidates = self.repl.names()
        for name in candidates:
            if name.startswith(word) and name != word:
                yield Completion(name, start_position=-len(word))

    def _files(self, document, complete_event):
        """After :load, file names (folders and .grad files first among what matches)."""
        from prompt_toolkit.completion import PathCompleter
        from prompt_toolkit.document import Document

        argument = document.text_before_cursor.lstrip()[len(":load "):].lstrip()
        yield from PathCompleter(expanduser=True).get_completions(Document(argument), complete_event)


def _argument_choices(before: str):
    """The words a :command takes as its argument (formats, on/off, export targets), once one is being typed."""
    command, space, argument = before.lstrip().partition(" ")
    if not space or " " in argument.lstrip():
        return None
    if command == ":format":
        return FORMATS
    if command == ":full":
        return ("on", "off")
    if command == ":export":
        from gradlang.export import TARGETS

        return tuple(TARGETS)
    return None


def start(session=None, fmt: str | None = None, streams: tuple | None = None) -> int:
    """Start the REPL on the process's standard streams (or `streams`, standard output and error wrapped)."""
    out, err = streams or (None, None)
    repl = Repl(session, fmt or default_format(sys.stdout), out=out, err=err)
    if sys.stdin.isatty():
        return prompt_loop(repl)
    return line_loop(repl, getattr(sys.stdin, "buffer", sys.stdin))
