"""The `gradlang` command: run a script, one line of code, or the REPL.

A thin shell over `Session.iter_run`: it reads the program, hands each Result
to an Emitter as soon as the statement finishes, and prints the first error
with its caret. Exit status: 0 on success, 1 when the program has an error,
2 for a usage error (argparse's own convention).
"""

from __future__ import annotations

import argparse
import sys

from gradlang.render.emit import Emitter

EXAMPLES = """\
examples:
  gradlang                                  start the REPL
  gradlang softmax.grad                     run a script, pretty on a terminal
  gradlang --plain softmax.grad             results as gradlang source
  gradlang --latex notes.grad > notes.tex   a LaTeX fragment for lecture notes
  echo 'diff(x^3, x)' | gradlang -          read the script from standard input
  gradlang -e 'diff(x * stop_gradient(x), x)'
  gradlang --json -e 'x: R^3; grad(log(sum(exp(x))), x) at x = [1, 3, 3]'
  gradlang -i softmax.grad                  run a script, then explore it in the REPL

exit status: 0 success, 1 error in the program, 2 usage error.
environment: NO_COLOR disables colour; GRADLANG_HISTORY sets the REPL history
file; GRADLANG_DEBUG=1 shows tracebacks of internal errors.
"""


EXPORT_TARGETS = ("jax", "torch", "tf", "numpy")


def _version() -> str:
    from gradlang import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradlang",
        description="Symbolic derivatives with stop_gradient as a first-class builtin.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", nargs="?", metavar="FILE.grad", help="script to run ('-' reads standard input)")
    parser.add_argument("-e", dest="code", metavar="CODE", help="run CODE (statements separated by ';' or newlines)")
    parser.add_argument("-i", dest="interactive", metavar="FILE", help="run FILE, then start the REPL with its definitions")
    group = parser.add_mutually_exclusive_group()
    for name, text in (
        ("pretty", "Unicode mathematics (default on a terminal)"),
        ("plain", "gradlang source that reads back to the same value (default otherwise)"),
        ("latex", "LaTeX; a script becomes a fragment of display equations"),
        ("json", "one JSON object per result or error, one per line"),
    ):
        group.add_argument(f"--{name}", dest="fmt", action="store_const", const=name, help=text)
    parser.add_argument("--plot-dir", metavar="DIR", help="also write every plot as a PNG into DIR (needs matplotlib)")
    parser.add_argument(
        "--export",
        choices=EXPORT_TARGETS,
        metavar="TARGET",
        help="run FILE, then print its functions as a Python module for TARGET: jax, torch, tf or numpy",
    )
    parser.add_argument("--version", action="version", version=f"gradlang {_version()}")
    return parser


def _check_usage(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    given = [flag for flag, value in (("FILE", args.file), ("-e", args.code), ("-i", args.interactive)) if value is not None]
    if len(given) > 1:
        parser.error(f"{' and '.join(given)} cannot be used together")
    if args.export and args.file is None:
        parser.error("--export needs a FILE to export")


def _read(parser: argparse.ArgumentParser, path: str) -> str:
    """The text of a script ('-' is standard input); unreadable is a usage error."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        parser.error(f"cannot read '{path}': {reason}")
        raise  # unreachable: parser.error exits


def default_format(stream) -> str:
    """Pretty on a terminal, plain (re-readable source) in a pipe or file."""
    try:
        return "pretty" if stream.isatty() else "plain"
    except (AttributeError, ValueError):
        return "plain"


def run_program(session, source: str, filename: str, emitter: Emitter) -> int:
    """Run a whole program, printing as results come; 0 on success, 1 on error."""
    from gradlang.errors import GradlangError

    emitter.filename = filename
    try:
        for result in session.iter_run(source, filename):
            emitter.result(result)
    except GradlangError as error:
        emitter.error(error)
        return 1
    except KeyboardInterrupt:
        emitter.err.write("interrupted\n")
        return 130
    except Exception as error:  # noqa: BLE001 - anything else is a bug, reported as one
        emitter.internal_error(error)
        return 1
    return 0


def _emitter(args, fmt: str, transcript: bool = False) -> Emitter:
    emitter = Emitter(fmt, sys.stdout, sys.stderr, transcript=transcript)
    emitter.plot_dir = args.plot_dir
    return emitter


def export(session, source: str, filename: str, target: str, emitter: Emitter) -> int:
    """Run the script without printing its results, then print it as a Python module."""
    from gradlang.errors import GradlangError
    from gradlang.export import export_program

    emitter.filename = filename
    try:
        for _ in session.iter_run(source, filename):
            pass
        module = export_program(session, target, source)
    except GradlangError as error:
        emitter.error(error)
        return 1
    sys.stdout.write(module)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_usage(parser, args)
    fmt = args.fmt or default_format(sys.stdout)
    try:
        return _dispatch(parser, args, fmt)
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, as Unix tools do.
        sys.stderr.close()
        return 0


def _dispatch(parser, args, fmt: str) -> int:
    from gradlang.core.session import Session

    session = Session()
    if args.code is not None:
        return run_program(session, args.code, "<-e>", _emitter(args, fmt))
    if args.file is not None:
        source = _read(parser, args.file)
        filename = "<stdin>" if args.file == "-" else args.file
        if args.export:
            return export(session, source, filename, args.export, _emitter(args, fmt))
        return run_program(session, source, filename, _emitter(args, fmt, transcript=True))
    from gradlang.shell.repl import start

    if args.interactive is not None:
        source = _read(parser, args.interactive)
        run_program(session, source, args.interactive, Emitter(fmt, sys.stdout, sys.stderr, transcript=True))
    return start(session, fmt=args.fmt)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
