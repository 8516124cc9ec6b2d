"""The `gradlang` command: run a script, one line of code, or the REPL.

A thin shell over the one run-and-report loop (`shell_loop`): it reads the
program through `sources` (regular files only, a size limit, UTF-8), hands
each Result to an Emitter as soon as the statement finishes, and prints the
first error with its caret. Exit status: 0 on success, 1 when the program has
an error (or, with --strict, when a gradcheck disagrees), 2 for a usage error
(argparse's own convention).
"""

from __future__ import annotations

import argparse
import io
import os
import sys

from gradlang.render.emit import Emitter
from gradlang.shell.loop import EXIT_ERROR, EXIT_OK, default_format, guarded, run_and_report
from gradlang.shell.streams import OutputError, guarded_streams, say, silence_stdout

EXAMPLES = """\
examples:
  gradlang                                  start the REPL
  gradlang softmax.grad                     run a script, pretty on a terminal
  gradlang --plain softmax.grad             results as gradlang source
  gradlang --annotate softmax.grad          read a script as a lesson: comments as prose
  gradlang --latex notes.grad > notes.tex   a LaTeX fragment for lecture notes
  echo 'diff(x^3, x)' | gradlang -          read the script from standard input
  gradlang -e 'diff(x * stop_gradient(x), x)'
  gradlang -e 'x: R^2' -e 'grad(x[0] * x[1], x)'    several -e run in order, as lines of one program
  gradlang --json -e 'x: R^3; grad(log(sum(exp(x))), x) at x = [1, 3, 3]'
  gradlang -i softmax.grad                  run a script, then explore it in the REPL
  gradlang --export jax softmax.grad > softmax_jax.py
  gradlang --from-jax byol:loss --shapes 'params.W=2,3 x=3' --emit    your JAX loss as a gradlang program
  gradlang --from-torch vq:Quantiser --example-args vq:example --explain-wrt codebook

exit status: 0 success, 1 error in the program (or a gradcheck that disagrees,
with --strict), 2 usage error.
environment: NO_COLOR disables colour; GRADLANG_HISTORY sets the REPL history
file; GRADLANG_DEBUG=1 shows tracebacks of internal errors.
"""



def _version() -> str:
    from gradlang import __version__

    return __version__


class _Parser(argparse.ArgumentParser):
    """argparse's parser; with --json on the command line a usage error is also a JSON error object on
    standard output, so a program reading the JSON lines learns why there are no results."""

    json = False

    def error(self, message: str, kind: str = "UsageError"):
        if self.json:
            _json_error(message, kind)
        super().error(message)


def _json_error(message: str, kind: str = "UsageError") -> None:
    from gradlang.render.json import dumps

    record = {"kind": "error", "error": kind, "message": message, "line": None, "column": None}
    try:
        out = guarded_streams()[0]
        out.write(dumps(record) + "\n")
        out.flush()
    except (BrokenPipeError, OutputError):
        silence_stdout()  # the message on standard error still says what went wrong


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gradlang",
        description="Symbolic derivatives with stop_gradient as a first-class builtin.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", nargs="?", metavar="FILE.grad", help="script to run ('-' reads standard input)")
    parser.add_argument("-e", dest="code", metavar="CODE", action="append",
                        help="run CODE (statements separated by ';' or newlines); several -e run in order")
    parser.add_argument("-i", dest="interactive", metavar="FILE", nargs="?", const="",
                        help="-i FILE runs FILE, then starts the REPL with its definitions (-i alone: --from-*'s)")
    group = parser.add_mutually_exclusive_group()
    for name, text in (
        ("pretty", "Unicode mathematics (default on a terminal)"),
        ("plain", "gradlang source that reads back to the same value (default otherwise)"),
        ("latex", "LaTeX; a script becomes a fragment of display equations"),
        ("json", "one JSON object per result or error, one per line"),
    ):
        group.add_argument(f"--{name}", dest="fmt", action="store_const", const=name, help=text)
    parser.add_argument("--full", action="store_true", help="print large values whole (by default a value of more "
                        "than 1000 components shows its first and last few, as NumPy does)")
    parser.add_argument("--annotate", action="store_true",
                        help="show a script as a lesson: its comments as prose, every statement, each result under it "
                             "(pretty or plain)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a gradcheck disagrees (for CI)")
    parser.add_argument("--explain-depth", type=_depth, default="default", metavar="N",
                        help="levels of substeps explain shows (default 2; 'all' for every step)")
    parser.add_argument("--explain-unfold", action="store_true",
                        help="explain derives builtins (softmax, sigmoid, norm, ...) from their definitions, "
                             "as explain[unfold] does")
    parser.add_argument("--plot-dir", metavar="DIR", help="also write every plot as a PNG into DIR (needs matplotlib)")
    parser.add_argument("--export", metavar="TARGET", help="run FILE (or -e CODE), then print its functions and "
                        "losses as a Python module for TARGET: jax, torch, tf or numpy")
    parser.add_argument("--max-memory", type=_memory, default=None, metavar="SIZE",
                        help="memory the arrays of one statement may need, as estimated from their shapes "
                             "(default 4GiB): a number of bytes, or with KiB, MiB, GiB (or K, M, G, KB, MB, GB)")
    _framework_arguments(parser)
    parser.add_argument("--version", action="version", version=f"gradlang {_version()}")
    return parser


def _framework_arguments(parser: argparse.ArgumentParser) -> None:
    """--from-jax / --from-torch and their options (docs/from-frameworks.md)."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--from-jax", metavar="MODULE:FUNCTION",
                        help="trace your JAX function (jax.make_jaxpr) and run it as a gradlang program")
    source.add_argument("--from-torch", metavar="MODULE:NAME",
                        help="trace your PyTorch module or function (torch.export) and run it as a gradlang program")
    parser.add_argument("--shapes", metavar="SHAPES", help="example arguments by shape: 'x=3 params.W=2,3'")
    parser.add_argument("--example-args", metavar="MODULE:FUNCTION",
                        help="a function of yours returning the example arguments (a tuple, or a dict by name)")
    parser.add_argument("--emit", action="store_true", help="print the translated program instead of running it")
    parser.add_argument("--explain-wrt", metavar="PATH", action="append",
                        help="explain the loss's gradient by the leaves under PATH (params.online); may repeat")


def _check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    _check_framework_usage(parser, args)
    given = [flag for flag, value in (("FILE", args.file), ("-e", args.code), ("-i", args.interactive or None),
                                      ("--from-jax", args.from_jax), ("--from-torch", args.from_torch))
             if value is not None]
    if len(given) > 1:
        parser.error(f"{' and '.join(given)} cannot be used together")
    if args.export:
        from gradlang.export import TARGETS  # the one list of targets; sympy loads only when exporting

        if args.export not in TARGETS:
            parser.error(f"argument --export: invalid choice: '{args.export}' (choose from {', '.join(TARGETS)})")
    if args.export and args.file is None and args.code is None and not (args.from_jax or args.from_torch):
        parser.error("--export needs a FILE or -e CODE to export (or --from-jax / --from-torch)")
    if args.annotate and (args.file is None or args.export):
        parser.error("--annotate needs a FILE to show (and no --export)")
    if args.annotate and args.fmt in ("latex", "json"):
        parser.error(f"--annotate shows a lesson as pretty or plain text, not --{args.fmt}")


def _check_framework_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    traced = args.from_jax or args.from_torch
    if args.interactive == "" and not traced:
        parser.error("-i needs a FILE (or --from-jax / --from-torch)")
    if not traced and (args.shapes or args.example_args or args.emit or args.explain_wrt):
        parser.error("--shapes, --example-args, --emit and --explain-wrt go with --from-jax or --from-torch")
    if traced and args.emit and (args.export or args.interactive is not None):
        parser.error("--emit prints the program; it cannot be used with --export or -i")
    if traced and args.shapes is not None:
        from gradlang.frameworks import shapes_arg
        from gradlang.frameworks.program import TranslateError

        try:
            shapes_arg.parse(args.shapes)
        except TranslateError as error:
            parser.error(error.message)


def _read(parser: argparse.ArgumentParser, path: str) -> str:
    """The text of a script ('-' is standard input); unreadable is a usage error."""
    from gradlang.shell.sources import SourceError, read_file, read_stream

    try:
        if path == "-" and sys.stdin is None:
            raise SourceError("cannot read standard input: it is closed")
        if path == "-":
            return read_stream(sys.stdin.buffer)
        return read_file(path)
    except SourceError as error:
        parser.error(str(error), error.kind)
        raise  # unreachable: parser.error exits


def _code(parser: argparse.ArgumentParser, codes: list[str]) -> str:
    """The program of the -e arguments: one line (or more) each, in order, as perl and sed join theirs."""
    from gradlang.shell.sources import SourceError, from_argument

    try:
        return "\n".join(from_argument(code) for code in codes)
    except SourceError as error:
        parser.error(str(error), error.kind)
        raise  # unreachable: parser.error exits


def _emitter(args, fmt: str, transcript: bool = False) -> Emitter:
    emitter = Emitter(fmt, *guarded_streams(), transcript=transcript, full=args.full)
    emitter.plot_dir = args.plot_dir
    return emitter


class ScriptReporter:
    """Shows a script's results through an emitter and counts the gradchecks that disagree (--strict)."""

    def __init__(self, emitter):
        self.emitter = emitter
        self.disagreements = 0

    def result(self, result) -> None:
        self.emitter.result(result)
        self.disagreements += sum(getattr(a, "passed", True) is False for a in result.attachments)

    def error(self, error) -> None:
        self.emitter.error(error)

    def interrupted(self, stop: KeyboardInterrupt) -> None:
        self.emitter.interrupted(stop)


class _Quiet(ScriptReporter):
    """Runs a script for its definitions only (--export): errors are shown, results are not."""

    def result(self, result) -> None:
        pass


def run_program(session, source: str, filename: str, emitter, strict: bool = False) -> int:
    """Run a whole program, printing as results come; 0 on success, 1 on error, 130 on Ctrl-C."""
    emitter.filename = filename
    reporter = ScriptReporter(emitter)
    status = run_and_report(session, source, filename, reporter)
    if status == EXIT_OK and strict and reporter.disagreements:
        emitter.err.write(f"{filename}: {reporter.disagreements} gradcheck(s) disagree (--strict)\n")
        return EXIT_ERROR
    return status


def export(session, source: str, filename: str, target: str, emitter: Emitter) -> int:
    """Run the script without printing its results, then print it as a Python module."""
    from gradlang.export import export_program

    emitter.filename = filename
    reporter = _Quiet(emitter)
    modules: list[str] = []
    status = run_and_report(session, source, filename, reporter) or guarded(
        reporter, lambda: modules.append(export_program(session, target, source, filename))
    )
    if status == EXIT_OK:
        guarded_streams()[0].write(modules[0])
    return status


def main(argv: list[str] | None = None) -> int:
    if sys.stdout is None:  # `gradlang … >&-`: Python gives no stream at all
        say("gradlang: standard output is closed: there is nowhere to write results")
        return EXIT_ERROR
    if sys.stderr is None:  # `2>&-`: errors go nowhere; the exit status still tells
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    _safe_streams()
    parser = build_parser()
    parser.json = "--json" in (sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    _check_usage(parser, args)
    fmt = args.fmt or default_format(sys.stdout)
    problem = _plot_dir_problem(args.plot_dir)
    if problem is not None:
        return _fail(args, problem)
    try:
        status = _dispatch(parser, args, fmt)
        guarded_streams()[0].flush()
        return status
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, as Unix tools do.
        silence_stdout()
        sys.stderr.close()
        return 0
    except OutputError as error:
        say(f"gradlang: {error}")
        silence_stdout()
        return EXIT_ERROR


def _plot_dir_problem(plot_dir: str | None) -> str | None:
    """Why --plot-dir cannot be used, found before the program runs (not a warning after each plot)."""
    if not plot_dir:
        return None
    if os.path.exists(plot_dir) and not os.path.isdir(plot_dir):
        return f"--plot-dir '{plot_dir}' is not a directory"
    if not _has_matplotlib():
        from gradlang.tools.plot import INSTALL_HINT

        return f"--plot-dir needs matplotlib, which is not installed: {INSTALL_HINT}"
    return None


def _fail(args, message: str) -> int:
    """A problem of the command line found before the program runs: one line on stderr (and JSON), exit 1."""
    say(f"gradlang: {message}")
    if args.fmt == "json":
        _json_error(message)
    return EXIT_ERROR


def _safe_streams() -> None:
    """Whatever the locale, every output is valid UTF-8 (JSON lines above all), never a raw undecodable byte;
    and standard output is written whole or fails (_whole_writes)."""
    sys.stdout = _whole_writes(sys.stdout)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
        except (AttributeError, ValueError):  # a replaced stream (tests, embedding) is the caller's
            pass


def _whole_writes(stream):
    """An unbuffered text stream (PYTHONUNBUFFERED, python -u) with a buffer between it and the file.

    Unbuffered, Python's text stream drops the rest of a short write without a
    word: under `ulimit -f` or on a full disk, `--export numpy > out.py` wrote
    1024 bytes and exited 0. A BufferedWriter writes all or raises; flushed at
    each line, output still comes as it is printed."""
    buffer = getattr(stream, "buffer", None)
    if not isinstance(buffer, io.RawIOBase):
        return stream
    return io.TextIOWrapper(io.BufferedWriter(buffer), encoding=stream.encoding, errors=stream.errors,
                            line_buffering=True)


def _has_matplotlib() -> bool:
    try:
        from matplotlib.figure import Figure  # noqa: F401 - imported to know that it imports
    except ImportError:
        return False
    return True


def _depth(text: str):
    """--explain-depth: a non-negative integer, or 'all' (the session's default when not given)."""
    if text in ("all", "default"):
        return None if text == "all" else text
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of levels or 'all', not {text!r}")
    return int(text)


_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1000, "KIB": 1024, "M": 1024 ** 2, "MB": 1000 ** 2, "MIB": 1024 ** 2,
          "G": 1024 ** 3, "GB": 1000 ** 3, "GIB": 1024 ** 3, "T": 1024 ** 4, "TB": 1000 ** 4, "TIB": 1024 ** 4}


def _memory(text: str) -> int:
    """--max-memory: bytes, or a number with a unit (8GiB, 512M, 1.5GB); K, M, G alone are powers of 1024."""
    number = text.strip().rstrip("bBiIkKmMgGtT ").strip()
    unit = text.strip()[len(number):].strip().upper()
    try:
        size = float(number) * _UNITS[unit]
    except (KeyError, ValueError):
        raise argparse.ArgumentTypeError(f"expected a size such as 8GiB, 512MiB or 1000000, not {text!r}") from None
    if not 0 < size < float(2 ** 62):
        raise argparse.ArgumentTypeError(f"expected a positive size, not {text!r}")
    return int(size)


def _dispatch(parser, args, fmt: str) -> int:
    from gradlang.core.session import Session

    session = Session(explain_depth=args.explain_depth, explain_unfold=args.explain_unfold, max_memory=args.max_memory)
    if args.from_jax or args.from_torch:
        return _from_framework(args, fmt, session)
    if args.code is not None:
        if args.export:
            return export(session, _code(parser, args.code), "<-e>", args.export, _emitter(args, fmt))
        return run_program(session, _code(parser, args.code), "<-e>", _emitter(args, fmt), args.strict)
    if args.file is not None:
        source = _read(parser, args.file)
        filename = "<stdin>" if args.file == "-" else args.file
        if args.export:
            return export(session, source, filename, args.export, _emitter(args, fmt))
        if args.annotate:
            from gradlang.shell.annotate import Annotated

            annotated = Annotated(_emitter(args, fmt, transcript=True), source)
            return annotated.finish(run_program(session, source, filename, annotated, args.strict))
        return run_program(session, source, filename, _emitter(args, fmt, transcript=True), args.strict)
    from gradlang.shell.repl import start

    if sys.stdin is None:
        say("gradlang: standard input is closed: the REPL has nothing to read")
        return EXIT_ERROR
    if args.interactive is not None:
        source = _read(parser, args.interactive)
        run_program(session, source, args.interactive, _emitter(args, fmt, transcript=True))
    return start(session, fmt=args.fmt, streams=guarded_streams())


def _from_framework(args, fmt: str, session) -> int:
    """--from-jax / --from-torch: translate the user's model, then print, export, run or explore the program."""
    from gradlang.frameworks import translate

    kind, spec = ("jax", args.from_jax) if args.from_jax else ("torch", args.from_torch)
    emitter = _emitter(args, fmt, transcript=True)
    programs: list[str] = []
    progress = _progress()
    status = guarded(ScriptReporter(emitter), lambda: programs.append(
        translate(kind, spec, args.shapes, args.example_args, tuple(args.explain_wrt or ()), progress)))
    progress("")
    if status != EXIT_OK:
        return status
    source, filename = programs[0], f"<from-{kind} {spec}>"
    if args.emit:
        guarded_streams()[0].write(source)
        return EXIT_OK
    if args.export:
        return export(session, source, filename, args.export, _emitter(args, fmt))
    status = run_program(session, source, filename, emitter, args.strict)
    if args.interactive is None:
        return status
    from gradlang.shell.repl import start

    return start(session, fmt=args.fmt, streams=guarded_streams())


def _progress():
    """A line of progress on standard error, rewritten in place, when it is a terminal; else nothing.

    stdout never sees it, and a pipe or file never does either: the same program gives the same bytes."""
    try:
        terminal = sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, OSError, ValueError):
        terminal = False

    def show(text: str) -> None:
        if not terminal:
            return
        try:
            sys.stderr.write(f"\r\x1b[K{'gradlang: ' + text + ' ...' if text else ''}")
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
    return show


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
