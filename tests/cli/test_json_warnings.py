"""With --json the warnings live in each result object, once."""

import json
import subprocess
import sys
from tests.safety import SAFETY_NET


def test_json_keeps_warnings_in_the_object_not_on_stderr():
    run = subprocess.run(
        [sys.executable, "-m", "gradlang", "--json", "-e", "diff(abs(t), t) at t = 0"],
        capture_output=True, text=True, timeout=SAFETY_NET,
    )
    (record,) = [json.loads(line) for line in run.stdout.splitlines()]
    assert record["warnings"] and "jump" in record["warnings"][0]
    assert "warning" not in run.stderr


# --- an assignment's warnings (issue #37): it prints no value, but its warnings are shown ---

TYPO = "loss = 1\nx: R^3\ng = grad(los, x)\nm = grad(max(x), x) at x = [1, 3, 3]\ng\n"
SAID = ("did you mean 'loss'?", "has a tie")


def _gradlang(*args):
    return subprocess.run([sys.executable, "-m", "gradlang", *args], capture_output=True, text=True,
                          timeout=SAFETY_NET)


def test_a_script_shows_the_warnings_of_an_assignment_and_prints_only_values():
    run = _gradlang("--plain", "-e", TYPO)
    assert run.returncode == 0 and run.stdout == "[0, 0, 0]\n", run.stdout
    said = " ".join(run.stderr.split())  # wrapped at 80 columns
    assert "<-e>:3: warning: 'los' is not defined" in said and SAID[0] in said
    assert "<-e>:4: warning: max(x[0], x[1], x[2]) has a tie" in said


def test_json_gives_an_assignment_record_carrying_its_warnings():
    run = _gradlang("--json", "-e", TYPO)
    records = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["line"], r["kind"]) for r in records] == [(3, "assignment"), (4, "assignment"), (5, "value")]
    assert set(records[0]) == {"line", "column", "source", "kind", "warnings"}
    assert records[0]["source"] == "g = grad(los, x)" and SAID[0] in records[0]["warnings"][0]
    assert SAID[1] in records[1]["warnings"][0] and records[2]["warnings"] == []
    assert "warning" not in run.stderr


def test_the_repl_and_the_api_see_an_assignments_warnings():
    import io

    from gradlang import Session
    from gradlang.shell.repl import Repl

    out, err = io.StringIO(), io.StringIO()
    repl = Repl(fmt="plain", out=out, err=err)
    for line in TYPO.splitlines()[:-1]:
        repl.execute(line)
    said = " ".join(err.getvalue().split())
    assert out.getvalue() == "" and SAID[0] in said and SAID[1] in said
    results = Session().run(TYPO)
    assert [(r.kind, r.value is None) for r in results] == [("assignment", True), ("assignment", True), ("value", False)]
    assert Session().eval(TYPO[: TYPO.rindex("g\n")]) is None  # eval: the last printed value, of which there is none


def test_an_assignment_without_warnings_gives_no_result():
    from gradlang import Session

    assert Session().run("x: R^3\ng = grad(sum(x^2), x)\n") == []
