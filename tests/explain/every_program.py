"""Every derivation program of tests/ and examples/: the ones written with explain, and each gradient
statement of the examples explained as a user would after running the example before it.

Shared by tests/explain/test_every_program_derives.py (every format, no error) and the check at every
size (tests/explain/test_check_at_every_size.py).
"""

from __future__ import annotations

from pathlib import Path

from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import read

ROOT = Path(__file__).resolve().parents[2]
_DERIVATIVES = ("grad", "jacobian", "hessian", "diff", "blocked", "backward")


def table_programs() -> list[tuple[str, str]]:
    """(name, program) for every row of the derivation tables of tests/explain, at 3 and at n."""
    from tests.explain.test_forward_pass import TABLE as JACOBIANS, _program as jacobian_program
    from tests.explain.test_latex_compiles import DERIVATIONS
    from tests.explain.test_latex_marks import DERIVATIONS as ISSUE_40
    from tests.explain.test_scalar_list_pass import DECLARED as BY_LIST, TABLE as LISTS
    from tests.explain.test_tensor_derivations import TABLE, _program

    programs = [(f"{row[0]}@{size}", _program(size, row[1])) for row in TABLE for size in (3, "n")]
    programs += [(f"jacobian:{row[0]}@{size}", jacobian_program(size, row[1])) for row in JACOBIANS for size in (3, "n")]
    programs += [(f"list:{row[0]}", BY_LIST + f"explain {row[1]}") for row in LISTS]
    programs += [(f"latex:{name}", source) for name, source in DERIVATIONS.items()]
    programs += [(f"issue40:{name}", source) for name, source in ISSUE_40.items()]
    return programs


def file_programs() -> list[tuple[str, str]]:
    """(name, program) for every .grad file of examples/ and tests/ that explains something."""
    files = sorted(ROOT.glob("examples/*.grad")) + sorted(ROOT.glob("tests/**/*.grad"))
    return [(path.name, path.read_text()) for path in files if "explain" in path.read_text()]


def example_gradients() -> list[tuple[str, str]]:
    """(name, program) for each derivative statement of an example: the example up to it, then the
    derivative call explained (`g = grad(L, W)` gives `explain grad(L, W)`)."""
    out = []
    for path in sorted(ROOT.glob("examples/*.grad")):
        source = path.read_text()
        for statement in read(source).statements:
            call = _derivative_call(statement)
            if call is None:
                continue
            before = source[: statement.place.start]
            out.append((f"{path.stem}:{statement.place.span.line}", f"{before}\nexplain {call.text(source)}\n"))
    return out


def _derivative_call(statement):
    """The outermost derivative call of a statement that shows or binds a value, else None."""
    if isinstance(statement, lo.Show):
        value = statement.value
    elif isinstance(statement, lo.Assignment):
        value = statement.value
    else:
        return None
    if isinstance(value, lo.At):
        value = value.body
    return value if isinstance(value, lo.Call) and value.name in _DERIVATIVES else None


def every_program() -> list[tuple[str, str]]:
    return table_programs() + file_programs() + example_gradients()
