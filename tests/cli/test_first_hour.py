"""What a newcomer trips over on the command line (issue 15) and files and terminals (issue 16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import REPO, gradlang  # pytest puts this folder on sys.path (no __init__.py here)
from tests.safety import SAFETY_NET

BROKEN_SESSION = (
    "import sys; import gradlang.core.session as s\n"
    "def boom(self, source, filename=None):\n"
    "    raise RuntimeError('boom')\n"
    "    yield\n"
    "s.Session.iter_run = boom\n"
    "from gradlang.shell.cli import main; sys.exit(main(sys.argv[1:]))\n"
)


def broken_gradlang(*args, env=None, cwd) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    environment.pop("GRADLANG_DEBUG", None) if not env or "GRADLANG_DEBUG" not in env else None
    return subprocess.run([sys.executable, "-c", BROKEN_SESSION, *args], capture_output=True, text=True,
                          cwd=cwd, env=environment, timeout=SAFETY_NET)


# --- internal errors -----------------------------------------------------------------


def test_an_internal_error_says_report_it_to_the_maintainers_without_a_traceback(tmp_path):
    run = broken_gradlang("-e", "1", cwd=tmp_path)
    assert run.returncode == 1
    assert "InternalError: RuntimeError: boom" in run.stderr and "report it to the maintainers" in run.stderr
    assert "Traceback" not in run.stderr


def test_gradlang_debug_shows_the_traceback_of_an_internal_error(tmp_path):
    run = broken_gradlang("-e", "1", env={"GRADLANG_DEBUG": "1"}, cwd=tmp_path)
    assert "Traceback (most recent call last)" in run.stderr and "RuntimeError: boom" in run.stderr


def test_debug_shows_the_cause_of_an_error_the_session_wrapped(tmp_path, monkeypatch):
    from gradlang.errors import InternalError
    from gradlang.render.messages import error_text

    def wrapped():
        try:
            raise KeyError("inner")
        except KeyError as exc:
            error = InternalError("gradlang failed on this statement")
            try:
                raise error from exc
            except InternalError:
                raise error from None  # as Session.iter_run re-raises

    monkeypatch.setenv("GRADLANG_DEBUG", "1")
    with pytest.raises(InternalError) as caught:
        wrapped()
    assert "KeyError: 'inner'" in error_text(caught.value)


def test_repl_does_not_import_cli():
    code = "import sys, gradlang.shell.repl; sys.exit('gradlang.shell.cli' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=SAFETY_NET)
    assert run.returncode == 0


def test_one_internal_error_text_in_every_shell():
    """The note on an internal error is written in one place, not once per shell."""
    holders = [path.relative_to(REPO).as_posix() for path in (REPO / "gradlang").rglob("*.py")
               if "please report" in path.read_text(encoding="utf-8").lower()]
    assert len(holders) == 1, holders


# --- files --------------------------------------------------------------------------


@pytest.mark.parametrize("path, reason", [("/dev/zero", "not a regular file"), (".", "it is a directory")])
def test_a_device_or_a_directory_is_refused_before_reading(tmp_path, path, reason):
    run = gradlang(path, cwd=tmp_path)
    assert run.returncode == 2 and reason in run.stderr and "Traceback" not in run.stderr


def test_a_program_over_the_size_limit_is_refused(tmp_path):
    from gradlang.shell.sources import MAX_SOURCE_BYTES

    (tmp_path / "big.grad").write_bytes(b"1\n" * (MAX_SOURCE_BYTES // 2 + 1))
    run = gradlang("big.grad", cwd=tmp_path)
    assert run.returncode == 2 and "the limit for a program" in run.stderr
    run = gradlang("-", stdin="1\n" * (MAX_SOURCE_BYTES // 2 + 1), cwd=tmp_path)
    assert run.returncode == 2 and "the limit for a program" in run.stderr


def test_a_byte_order_mark_is_accepted(tmp_path):
    (tmp_path / "bom.grad").write_bytes(b"\xef\xbb\xbfx: R\ndiff(x^2, x)\n")
    run = gradlang("--plain", "bom.grad", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == "2*x\n"


def _raw(args, stdin: bytes, cwd, env=None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "gradlang", *args], input=stdin, capture_output=True,
                          cwd=cwd, env=environment, timeout=SAFETY_NET)


@pytest.mark.parametrize("locale_env", [{}, {"PYTHONIOENCODING": "utf-8"}, {"LC_ALL": "C", "PYTHONUTF8": "0"}])
def test_non_utf8_standard_input_is_a_clean_error(tmp_path, locale_env):
    run = _raw(["--json", "-"], b"1 + \xff\n", tmp_path, locale_env)
    assert run.returncode == 2 and b"not UTF-8" in run.stderr and b"Traceback" not in run.stderr
    run.stdout.decode("utf-8")
    run.stderr.decode("utf-8")


def test_non_utf8_in_e_is_a_clean_error_and_every_output_is_utf8(tmp_path):
    run = subprocess.run([sys.executable, "-m", "gradlang", "--json", "-e", os.fsdecode(b"1 + \xff")],
                         capture_output=True, cwd=tmp_path, timeout=SAFETY_NET,
                         env={**os.environ, "PYTHONPATH": str(REPO), "LC_ALL": "C", "PYTHONUTF8": "0"})
    assert run.returncode == 2 and b"not valid UTF-8" in run.stderr and b"Traceback" not in run.stderr
    run.stderr.decode("utf-8")


def test_a_json_error_line_is_valid_utf8(tmp_path):
    (tmp_path / "bad.grad").write_bytes("y = é +\n".encode())
    run = _raw(["--json", "bad.grad"], b"", tmp_path, {"LC_ALL": "C", "PYTHONUTF8": "0"})
    assert run.returncode == 1
    (line,) = run.stdout.decode("utf-8").splitlines()
    assert json.loads(line)["kind"] == "error"


# --- terminals ------------------------------------------------------------------------


ESCAPES = "y = 1 \x1b]0;PWNED\x07 + \x1b[2J\n"


@pytest.mark.parametrize("fmt", ["--plain", "--pretty", "--latex", "--json"])
def test_control_characters_in_user_text_are_never_written_raw(tmp_path, fmt):
    (tmp_path / "evil.grad").write_text(ESCAPES, encoding="utf-8")
    run = gradlang(fmt, "evil.grad", cwd=tmp_path)
    assert run.returncode == 1
    assert "\x1b" not in run.stdout + run.stderr and "\x07" not in run.stdout + run.stderr
    assert "␛]0;PWNED␇" in run.stderr


def test_the_caret_stays_under_the_place_after_a_control_character(tmp_path):
    run = gradlang("--plain", "-e", "\x07 1 +", cwd=tmp_path)
    lines = run.stderr.splitlines()
    assert lines[1] == "    ␇ 1 +" and lines[2].index("^") == lines[1].index("␇")


def test_control_characters_in_a_transcript_source_are_shown_escaped(tmp_path):
    (tmp_path / "c.grad").write_text("1 + 1 # \x1b[31mred\n", encoding="utf-8")
    run = gradlang("--pretty", "c.grad", cwd=tmp_path)
    assert run.returncode == 0 and "\x1b" not in run.stdout


# --- plots ----------------------------------------------------------------------------


def test_three_plots_on_one_line_leave_three_files(tmp_path):
    pytest.importorskip("matplotlib")
    run = gradlang("--plain", "--plot-dir", "d", "-e", "plot(t, t, 0, 1); plot(t^2, t, 0, 1); plot(t^3, t, 0, 1)",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [f"plot-line1-{k}.png" for k in (1, 2, 3)]


def test_a_symlink_at_the_plot_name_is_replaced_not_followed(tmp_path):
    pytest.importorskip("matplotlib")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "plot-line1-1.png").symlink_to("../victim.txt")
    run = gradlang("--plain", "--plot-dir", "d", "-e", "plot(t, t, 0, 1)", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert victim.read_text() == "precious"
    image = tmp_path / "d" / "plot-line1-1.png"
    assert not image.is_symlink() and image.read_bytes()[:4] == b"\x89PNG"


def test_plot_dir_without_matplotlib_is_an_error(tmp_path):
    blocker = tmp_path / "block" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('not installed')\n")
    run = gradlang("--plain", "--plot-dir", "d", "-e", "plot(t, t, 0, 1)", cwd=tmp_path,
                   env={"PYTHONPATH": os.pathsep.join([str(blocker.parent), str(REPO)])})
    assert run.returncode == 1 and "pip install matplotlib" in run.stderr and "gradlang[plot]" not in run.stderr


# --- strict, annotate -------------------------------------------------------------------


DISAGREES = "x: R\ngradcheck(relu(x), x) at x = 0\n"  # the convention relu'(0) = 0 against a central difference


def test_strict_makes_a_disagreeing_gradcheck_exit_1(tmp_path):
    assert gradlang("--plain", "-e", DISAGREES, cwd=tmp_path).returncode == 0
    run = gradlang("--plain", "--strict", "-e", DISAGREES, cwd=tmp_path)
    assert run.returncode == 1 and "disagree" in run.stderr
    assert gradlang("--strict", "-e", "x: R\ngradcheck(x^2, x) at x = 2", cwd=tmp_path).returncode == 0


GOLDEN = Path(__file__).parent / "golden" / "straight_through.annotated.txt"


def test_annotate_shows_a_lesson_with_its_comments_as_prose(tmp_path):
    run = gradlang("--annotate", "--plain", str(REPO / "examples" / "straight_through.grad"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    if os.environ.get("GRADLANG_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(run.stdout, encoding="utf-8")
    assert run.stdout == GOLDEN.read_text(encoding="utf-8")


@pytest.mark.parametrize("example", sorted((REPO / "examples").glob("*.grad")), ids=lambda p: p.stem)
@pytest.mark.parametrize("fmt", ["--plain", "--pretty"])
def test_every_example_reads_as_a_lesson(tmp_path, example, fmt):
    run = gradlang("--annotate", fmt, str(example), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    source = example.read_text(encoding="utf-8")
    first_comment = next(line for line in source.splitlines() if line.startswith("#"))
    assert first_comment.lstrip("# ") in run.stdout and "\n#" not in run.stdout  # comments as prose
    assert "┃" in run.stdout and "→" in run.stdout


def test_annotate_needs_a_text_format_and_a_file(tmp_path):
    assert gradlang("--annotate", "--json", "x.grad", cwd=tmp_path).returncode == 2
    assert gradlang("--annotate", "-e", "1", cwd=tmp_path).returncode == 2


# --- the documentation of the command line ----------------------------------------------------


def test_docs_cli_lists_every_flag():
    from gradlang.shell.cli import build_parser

    usage = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for action in build_parser()._actions:
        for flag in action.option_strings:
            assert flag in usage, flag


# --- at inside a call -------------------------------------------------------------------


@pytest.mark.parametrize("code, shown", [("N(x^2 at x = 3)", "9.0"), ("f(u) = u^2; f(x at x = 2)", "4"),
                                         ("N(x*y at x = 3, y = 0.5)", "1.5")])
def test_a_sole_call_argument_may_carry_its_own_at(tmp_path, code, shown):
    run = gradlang("--plain", "-e", code, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == shown + "\n", run.stderr


def test_the_readme_transcript_is_the_real_output(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("```\n6 ┃ simplify") + 4
    shown = readme[start: readme.index("```", start)]
    run = gradlang("--pretty", str(REPO / "examples" / "stable_softmax.grad"), cwd=tmp_path)
    assert run.stdout.startswith(shown), run.stdout[: len(shown) + 200]


# --- Ctrl-C -------------------------------------------------------------------------


def test_ctrl_c_in_a_script_names_the_statement_that_was_running(monkeypatch):
    """The KeyboardInterrupt is raised where Ctrl-C lands, inside the third statement; the message says so."""
    import io

    from gradlang.core.session import Session
    from gradlang.render.emit import Emitter
    from gradlang.shell.cli import run_program

    shown = Session._show

    def slow_third_line(self, statement, source):
        if statement.span.line == 3:
            raise KeyboardInterrupt
        return shown(self, statement, source)

    monkeypatch.setattr(Session, "_show", slow_third_line)
    out, err = io.StringIO(), io.StringIO()
    status = run_program(Session(), "x: R\ndiff(x^2, x)\nexpand((x + 1)^40)\nx\n", "long.grad", Emitter("plain", out, err))
    assert status == 130 and out.getvalue() == "2*x\n"
    assert err.getvalue() == "long.grad:3: interrupted while running expand((x + 1)^40)\n"


# --- no library warning reaches the user -----------------------------------------------


@pytest.mark.parametrize("program", ["x: R^2; x < 1", "x: R^(2,2); where(x < 1, x, 0)"])
def test_no_library_warning_reaches_the_user(tmp_path, program):
    run = gradlang("--pretty", "-e", program, cwd=tmp_path, env={"PYTHONWARNINGS": "always"})
    assert run.returncode == 0 and run.stderr == "", run.stderr


def test_a_library_warning_met_while_printing_is_dropped(monkeypatch):
    """Whatever a library says through `warnings` while a program runs or prints stays with gradlang's developers."""
    import io
    import warnings

    from gradlang.core.session import Session
    from gradlang.render.emit import Emitter
    from gradlang.shell.cli import run_program

    printed = Emitter.result

    def noisy(self, result):
        warnings.warn("from deep inside a library", DeprecationWarning)
        printed(self, result)

    monkeypatch.setattr(Emitter, "result", noisy)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert run_program(Session(), "1 + 1", "w.grad", Emitter("plain", io.StringIO(), io.StringIO())) == 0
    assert seen == []
