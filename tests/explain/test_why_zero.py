"""Why zero: every exactly-zero component of an explained gradient says why."""

import re

import pytest

from gradlang import Session
from gradlang.render import to_json, to_plain

ROWS = [
    ("x: R^2\nexplain grad(x[0]^2, x)", "x[1]", "no dependence: x[1] does not appear in the expression"),
    ("x: R^2\nexplain grad(x[0] * sg(x[1]), x)", "x[1]", "stopped: x[1] appears only inside sg(x[1])"),
    ("x: R^2\nexplain grad(x[0] + floor(x[1]), x)", "x[1]",
     "piecewise constant: x[1] enters only through floor(x[1]), whose derivative is 0"),
    ("x: R^2\nexplain grad(x[0] + round(x[1]) * sg(x[1]), x)", "x[1]",
     "piecewise constant: x[1] enters only through round(x[1]), whose derivative is 0 (and inside sg(x[1]))"),
    ("explain diff(sg(x^2) + y, x)", "x", "stopped: x appears only inside sg(x^2)"),
]


@pytest.mark.parametrize("program, variable, reason", ROWS)
def test_zero_component_names_its_reason(program, variable, reason):
    explanation = Session().run(program)[-1].steps[0]
    reasons = [s.get("why_zero") for s in to_json(explanation)["substeps"]]
    assert reason in reasons
    text = to_plain(explanation)
    for name, stop in re.findall(r"^where (\w+) = (.+)$", text, re.M):  # the text names a long stop as its lines do
        reason = reason.replace(stop, name)
    assert f"why zero: {reason}" in text


def test_nonzero_components_have_no_reason():
    explanation = Session().run("x: R^2\nexplain grad(x[0] * x[1], x)")[-1].steps[0]
    assert "why zero" not in to_plain(explanation)
