"""JSON lines: the keys, value encoding and error object of LANGUAGE.md section 8."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from gradlang import GradlangError, Session
from gradlang.render.json import dumps, encode_value, to_json

x = sp.Symbol("x", real=True)

ROWS = [
    (sp.Integer(12), 12.0),
    (sp.Rational(1, 2), 0.5),
    (sp.pi, 3.141592653589793),
    (sp.Float(2.5), 2.5),
    (sp.nan, "nan"),
    (sp.oo, "inf"),
    (-sp.oo, "-inf"),
    (x, None),
    (x + 1, None),
    (sp.I, None),
    (sp.true, True),
    (sp.ImmutableDenseNDimArray([1, sp.Rational(1, 2)]), [1.0, 0.5]),
    (sp.ImmutableDenseNDimArray([1, x]), None),
    (sp.ImmutableMatrix([[1, 2], [3, 4]]), [[1.0, 2.0], [3.0, 4.0]]),
    (np.array([1.0, np.nan, np.inf, -np.inf]), [1.0, "nan", "inf", "-inf"]),
    (np.array([[0.5]]), [[0.5]]),
]


@pytest.mark.parametrize("value, expected", ROWS, ids=[str(r[0]).replace("\n", " ") for r in ROWS])
def test_value_encoding(value, expected):
    assert encode_value(value) == expected


def test_result_object_keys_and_line():
    result = Session().run("x: R^2\n\ngrad(x[0]*x[1], x) at x = [2, 3]")[0]
    data = json.loads(dumps(to_json(result)))
    assert {"line", "source", "kind", "text", "latex", "value"} <= set(data)
    assert data["line"] == 3 and data["kind"] == "value" and data["source"] == "grad(x[0]*x[1], x) at x = [2, 3]"
    assert data["value"] == [3.0, 2.0] and data["text"] == "[3, 2]"
    assert data["warnings"] == []


def test_explain_result_has_steps():
    result = Session().run("explain diff(x * stop_gradient(x), x)")[0]
    data = json.loads(dumps(to_json(result)))
    assert data["kind"] == "explain"
    assert isinstance(data["steps"], list) and data["steps"]
    assert {"rule", "expr", "result", "substeps"} <= set(data["steps"][0])


def test_error_object_is_exactly_section_8():
    with pytest.raises(GradlangError) as caught:
        Session().run("y = 1\ndiff(y^2, 3)")
    data = to_json(caught.value)
    assert list(data) == ["kind", "error", "message", "line", "column"]
    assert data["kind"] == "error" and data["error"] == "DiffError" and data["line"] == 2
