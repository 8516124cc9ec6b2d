"""What start-up does not import (issue #41): a program without a misspelt name never needs difflib, one
that loads no .npz file never needs zipfile (nor does finding the grammar), and one that takes no derivative
never needs the derivative engines (near names: tests/core/test_spelling.py; .npz: tests/core/test_load.py).
Nor does a program that computes no float need NumPy, nor one that adds only numbers SymPy's Add.flatten (which
imports sympy.tensor.tensor and with it sympy.combinatorics, a sixth of SymPy's own start-up)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAFETY_NET = 300  # seconds: a safety net for a loaded machine, not a timing assertion

PROBE = """
import sys
from gradlang import Session
print(Session().eval({program!r}))
print(sorted(m for m in {modules!r} if m in sys.modules))
"""


def _imported(program: str, modules: tuple) -> list:
    done = subprocess.run([sys.executable, "-c", PROBE.format(program=program, modules=modules)],
                          capture_output=True, text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_one_plus_one_imports_no_difflib_zipfile_or_derivative_engine():
    value, modules = _imported("1 + 1", ("difflib", "gradlang.derive.derivatives", "zipfile"))
    assert value == "2" and modules == "[]"



def test_one_plus_one_imports_no_numpy_nor_sympys_tensor_package():
    value, modules = _imported("1 + 1", ("numpy", "sympy.combinatorics", "sympy.tensor.tensor"))
    assert value == "2" and modules == "[]"


def test_one_plus_one_imports_no_lark_nor_hashlib():
    """The parser ships built (syntax/standalone_parser.py, grammar/build_parser.py): lark, its grammar compiler
    and hashlib (lark hashed the grammar to find its cache of the tables in the temp folder) are not imported,
    by the session nor by the command; nor pickle and base64 (the tables ship as literals)."""
    modules = ("base64", "getpass", "hashlib", "lark", "lark.load_grammar", "pickle")
    value, imported = _imported("1 + 1", modules)
    assert value == "2" and imported == "[]"
    printed, imported = _imported_by_the_command("1 + 1", modules)
    assert printed == "2" and imported == "[]"


def test_one_plus_one_imports_no_logging_and_larks_logger_is_made_on_first_use():
    """lark's run-time logs only while building a grammar (grammar/build_parser.py makes its logger on first
    use): `1 + 1`, by the session and by the command, and a syntax error import no logging; nor traceback (the
    command's GRADLANG_DEBUG=1 traceback of an internal error, render/messages.py)."""
    value, imported = _imported("1 + 1", ("logging", "traceback"))
    assert value == "2" and imported == "[]"
    printed, imported = _imported_by_the_command("1 + 1", ("logging", "traceback"))
    assert printed == "2" and imported == "[]"
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom gradlang import Session\ntry:\n"
                           "    Session().run('1 +* 2')\nexcept Exception as error:\n    print(type(error).__name__)\n"
                           "print('logging' in sys.modules)\nfrom gradlang.syntax import standalone_parser as p\n"
                           "print(p.logger.name, p.logger.level, len(p.logger.handlers))"],
                          capture_output=True, text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert done.stdout.split() == ["SyntaxError", "False", "lark", "50", "1"], done.stderr


RECORDS = ("gradlang.core.definitions", "gradlang.derive.requests")  # FunctionDef, DerivativeRequest and readable()
AT_AND_STOPS = ("gradlang.core.at_plan", "gradlang.core.stop_records")  # at's plans; WrittenStop and Choice


def test_one_plus_one_imports_no_function_derivative_request_stop_record_nor_at_plan():
    """A user function's record (core/definitions.py) comes with the first definition, explain's record of a
    derivative and its readable mode (derive/requests.py) with the first derivative or explain, the records of
    a written stop and a where's cases (core/stop_records.py) with the first met, the plans of `at` statements
    (core/at_plan.py) with the first `at`."""
    value, modules = _imported("1 + 1", RECORDS + AT_AND_STOPS)
    assert value == "2" and modules == "[]"
    printed, modules = _imported_by_the_command("1 + 1", RECORDS + AT_AND_STOPS)
    assert printed == "2" and modules == "[]"


def test_an_at_and_a_stop_still_find_their_plan_and_records():
    """Deferred, not dropped: the stop and the where are recorded (the ledger names the stop), the at planned."""
    value, modules = _imported("x: R\ny = sg(x) * x + where(x > 0, sg(x), x)\ny at x = 2", AT_AND_STOPS)
    assert value == "6" and modules == str(list(AT_AND_STOPS))
    printed, _ = _imported_by_the_command("x: R\nexplain grad(sg(x) * x + where(x > 0, sg(x), x), x)", ())
    assert "# stop sg(x): cuts the path from x" in printed


def test_a_definition_and_an_explain_still_find_their_records():
    value, modules = _imported("f(a, b) = a - b\nf(3, 1)", RECORDS)
    assert value == "2" and modules == "['gradlang.core.definitions']"
    printed, modules = _imported_by_the_command("x: R\nexplain diff(x^2, x)", RECORDS)
    assert "2*x" in printed and modules == "['gradlang.derive.requests']"


def test_a_float_imports_numpy_and_a_symbolic_sum_sympys_add():
    """The lazy imports happen where they are needed: the same values as before."""
    value, modules = _imported("x: R\ny = sin(x) + 1\ny at x = 0.5", ("numpy", "sympy.tensor.tensor"))
    assert value == "1.47942553860420" and modules == "['numpy', 'sympy.tensor.tensor']"


def test_one_plus_one_loads_no_numeric_code_printer_nor_primitive_record_modules():
    """The NumPy code printer (expr/numeric.py) and the primitive records beyond the builtin table's: on the
    first number computed or kink checked; the tensor engine's reductions look their record up when called."""
    value, modules = _imported("1 + 1", ("gradlang.expr.numeric",))
    assert value == "2" and modules == "[]"


def test_a_kink_check_and_a_tensor_max_still_find_their_records():
    """Deferred, not dropped: relu's kink at 0 is still reported, max of a vector still reduces by its record."""
    value, modules = _imported("x: R\nrelu(x) at x = 0", ("gradlang.expr.numeric",))
    assert value == "0" and modules == "['gradlang.expr.numeric']"
    value, _ = _imported("x: R^3\nmax(x) at x = [1, 5, 2]", ())
    assert value == "5"


ENGINE_EXPLAIN_EXPORT_RICH = ("gradlang.core.at", "gradlang.core.tensor_values", "gradlang.expr.tensor.lower",
                              "gradlang.expr.tensor.nodes", "gradlang.explain", "gradlang.export",
                              "gradlang.frameworks", "gradlang.render.implicit", "gradlang.tools.tensor_kinks",
                              "prompt_toolkit", "rich")
# On a builtin's first call: the primitive records (the builtin table is made from core/primitive_entries.py)
# and explain's helpers (core/explaining.py); core/spelling.py's notes on a first name or `at`; the JSON and
# LaTeX printers on the first such result.
FIRST_CALL = ("gradlang.core.explaining", "gradlang.core.spelling", "gradlang.expr.functions",
              "gradlang.expr.primitives", "gradlang.expr.primitives.elementwise", "gradlang.expr.primitives.record",
              "gradlang.render.json", "gradlang.render.latex", "json")


def _imported_by_the_command(program: str, modules: tuple) -> tuple:
    """(what `gradlang --plain -e program` printed, which of `modules` it imported): the command itself, run
    in-process by a probe that reads sys.modules after it."""
    probe = ("import sys\nfrom gradlang.shell.cli import main\n"
             f"code = main(['--plain', '-e', {program!r}])\n"
             f"print(sorted(m for m in {modules!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=SAFETY_NET, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    *printed, modules_seen = done.stdout.strip().splitlines()
    return "\n".join(printed), modules_seen


def test_one_plus_one_imports_no_tensor_engine_explain_export_or_rich():
    """Issue #41: a scalar statement imports what it needs; the tensor engine (expr/tensor/nodes.py's classes,
    core/tensor_values.py, core/at.py), the primitive records, explain (loss_letter.py too), export, the
    framework importers (torch, JAX), rich and prompt_toolkit come on first use."""
    value, modules = _imported("1 + 1", ENGINE_EXPLAIN_EXPORT_RICH + FIRST_CALL)
    assert value == "2" and modules == "[]"
    printed, modules = _imported_by_the_command("1 + 1", ENGINE_EXPLAIN_EXPORT_RICH + FIRST_CALL)
    assert printed == "2" and modules == "[]"


def test_a_scalar_derivative_and_at_import_no_tensor_engine():
    value, modules = _imported("x: R\ndiff(sin(x) * sg(x), x) at x = 0", ENGINE_EXPLAIN_EXPORT_RICH)
    assert value == "0" and modules == "[]"


def test_the_engine_comes_with_the_first_tensor_and_gives_its_values():
    """Deferred, not dropped: a declaration loads the engine, and a builtin registered at start-up (ones, einsum)
    is the engine's on its first call."""
    value, modules = _imported("n: size\nx: R^n\ngrad(sum(exp(x)), x)", ("gradlang.expr.tensor.nodes",))
    assert value == "exp(x)" and modules == "['gradlang.expr.tensor.nodes']"
    value, _ = _imported('einsum("i,i->", [1, 2], [3, 4])', ())
    assert value == "11"
    value, _ = _imported("ones(2) + [1, 2]", ())
    assert value == "[1, 2] + ones(2)"
