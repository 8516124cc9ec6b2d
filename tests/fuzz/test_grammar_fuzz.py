"""Grammar fuzzing: every program the grammar accepts ends in results or a clean error (issue 16).

hypothesis draws programs from grammar/gradlang.lark itself (names from the
builtins, the constants and a few variables; numbers from a pool of ordinary
and extreme values), runs each through a `Session`, and writes every result
and every error in all four output formats with the shells' `Emitter`. No
program may end in an InternalError, nothing written may contain a
Python traceback, and no Python warning (NumPy's RuntimeWarning, say) may escape.

A modest number of examples runs with the suite. A long run:
    GRADLANG_FUZZ=20000 python -m pytest tests/fuzz/test_grammar_fuzz.py -x
Every bug found becomes a row of tests/core/test_hostile.py.
"""

from __future__ import annotations

import functools
import io
import os
import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradlang import GradlangError, Session
from gradlang.core import builtins
from gradlang.render.emit import FORMATS, Emitter

hypothesis_lark = pytest.importorskip("hypothesis.extra.lark")

EXAMPLES = int(os.environ.get("GRADLANG_FUZZ", "40"))
# The suite draws the same programs on every run, so a CI run is reproducible; GRADLANG_FUZZ=N draws N
# fresh random programs (the long runs of benchmarks/FUZZ.md), where new findings come from.
DERANDOMIZE = "GRADLANG_FUZZ" not in os.environ
TIME_LIMIT = 10.0  # seconds per statement: a LimitError is a clean end, an InternalError is not

PRELUDE = "v: R^3\nW: R^(2,2)\nf(a) = a^2 + sg(a)\ng(a, b) = max(a, b) * sg(b)\n"
VARIABLES = ["x", "y", "v", "W", "f", "g", "t", "R"]
NUMBERS = ["0", "1", "2", "3", "0.5", "2.5", "1e308", "1e-320", "10", "100", "0.0", "1.0", "7", "1e3", ".5", "3."]


def _programs():
    from lark import Lark

    from gradlang.syntax.parse import _grammar_text

    names = st.one_of(
        st.sampled_from(VARIABLES),
        st.sampled_from(sorted(builtins.TABLE)),
        st.sampled_from(sorted(builtins.CONSTANTS)),
    )
    grammar = Lark(_grammar_text(), parser="lalr")
    explicit = {
        "NAME": names,
        "NUMBER": st.sampled_from(NUMBERS),
        "_NL": st.just("\n"),
        "WS": st.just(" "),
        "COMMENT": st.just(" "),
        "STRING": st.sampled_from(['"w.npy"', '"f.npz"', '"x.csv"', '""', '"W"']),  # never a path of the machine
    }
    declared_real = functools.partial(re.sub, r"(:\s*)[A-Za-z_]\w*", r"\1R")  # `x: sin` only tests one message
    return hypothesis_lark.from_lark(grammar, explicit=explicit).map(lambda body: PRELUDE + declared_real(body))


def _calls(inner):
    """A call of any builtin with an allowed number of arguments (up to 3)."""
    entries = sorted(builtins.TABLE.values(), key=lambda e: e.name)

    @st.composite
    def call(draw):
        entry = draw(st.sampled_from(entries))
        most = min(entry.max_args if entry.max_args is not None else 3, 3)
        count = draw(st.integers(entry.min_args, max(entry.min_args, most)))
        return f"{entry.name}({', '.join(draw(inner) for _ in range(count))})"

    return call()


def _typed_programs():
    """Programs the grammar accepts and that mostly type-check: right arities, declared shapes."""
    # slices and the new builtins' usual arguments (axes 0 and 1, sizes, a class index) are leaves too
    leaves = st.sampled_from(["x", "y", "v", "W", "v[0]", "W[1, 0]", "W[:, 1]", "W[0, :]", "pi", "inf", "nan",
                              "f(x)", "g(x, y)", "eye(2)", "onehot(1, 3)"] + NUMBERS)
    expressions = st.recursive(
        leaves,
        lambda inner: st.one_of(
            _calls(inner),
            st.builds(lambda a, op, b: f"({a} {op} {b})", inner, st.sampled_from(["+", "-", "*", "/", "^", "@"]), inner),
            st.builds(lambda a: f"-{a}", inner),
            st.builds(lambda a, b: f"[{a}, {b}]", inner, inner),
            st.builds(lambda a, c, b: f"where({a} {c} {b}, {a}, {b})", inner, st.sampled_from(["<", "==", ">="]), inner),
        ),
        max_leaves=10,
    )
    points = st.sampled_from(["x = 0.5", "x = 0", "y = -1.5", "x = inf", "v = [1, 2, 3]", "x = [0.5, 1]",
                              "W = [[1, 2], [3, 4]]", "v[1] = 2.0", "x = nan", "y = 1e308"])
    at_clause = st.lists(points, max_size=2, unique=True).map(lambda p: f" at {', '.join(p)}" if p else "")
    statement = st.one_of(
        st.builds(lambda e, a: e + a, expressions, at_clause),
        st.builds(lambda e, a: "explain " + e + a, expressions, at_clause),
        st.builds(lambda e: "h(x) = " + e, expressions),
        st.builds(lambda e: "z = " + e, expressions),
    )
    return st.lists(statement, min_size=1, max_size=4).map(lambda body: PRELUDE + "\n".join(body))


# The pretty printer shifts stopped text into Unicode's private planes to colour it
# (render/pretty.py); a character left there is garbage on the user's screen.
MARKED = re.compile("[\U000F0000-\U0010FFFF]")


def run_in_every_format(source: str) -> dict[str, str]:
    """Run `source` once and write its results (or its error) in each format; the text written per format."""
    results, error = [], None
    with warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        try:
            for result in Session(time_limit=TIME_LIMIT).iter_run(source, "<fuzz>"):
                results.append(result)
        except GradlangError as caught:
            error = caught
    shown = [w for w in caught_warnings if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    # Python prints such a warning on the user's terminal, with a file path inside gradlang or NumPy
    assert not shown, f"{source!r} let a Python warning through: {shown[0].filename}:{shown[0].lineno}: {shown[0].message}"
    written = {}
    for fmt in FORMATS:
        out, err = io.StringIO(), io.StringIO()
        emitter = Emitter(fmt, out, err, transcript=True)
        emitter.filename = "<fuzz>"
        for result in results:
            emitter.result(result)
        if error is not None:
            emitter.error(error)
        written[fmt] = out.getvalue() + err.getvalue()
    if error is not None and error.kind == "InternalError":
        raise AssertionError(f"InternalError for {source!r}:\n{error.format()}") from error
    return written


def check_program(source: str) -> None:
    for fmt, text in run_in_every_format(source).items():
        assert "Traceback (most recent call last)" not in text, f"{fmt} output of {source!r} has a traceback"
        assert "InternalError" not in text, f"{fmt} output of {source!r}:\n{text}"
        assert not MARKED.search(text), f"{fmt} output of {source!r} shows the pretty printer's private marks"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=DERANDOMIZE,
    suppress_health_check=list(HealthCheck),
)
@given(_programs())
def test_grammar_generated_programs_never_fail_inside_gradlang(source):
    check_program(source)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=DERANDOMIZE,
    suppress_health_check=list(HealthCheck),
)
@given(_typed_programs())
def test_well_typed_programs_never_fail_inside_gradlang(source):
    check_program(source)


@pytest.mark.parametrize("source", [
    PRELUDE + "f(v) @ W",
    PRELUDE + "grad(g(x, y), [x, y]) at x = 1, y = 1",
    PRELUDE + "explain diff(f(x) * sin(x), x)",
    PRELUDE + "plot(f(t), t, 0, 1)",
    PRELUDE + "gradcheck(f(x) * x, x) at x = 0.5",
])
def test_the_harness_writes_every_format(source):
    written = run_in_every_format(source)
    assert set(written) == set(FORMATS)
    assert all(text.strip() for text in written.values())
