"""The Python API speaks gradlang and leaves Python's names alone."""

import builtins

from gradlang import Session


def test_str_of_a_value_reads_as_gradlang():
    value = Session().eval("x*sg(x) + sigmoid(x) + max(x, 1) + softmax([x, 1])[0]")
    text = str(value)
    assert "stop_gradient(x)" in text and "StopGradient" not in text
    assert "max(x, 1)" in text and "softmax([x, 1])[0]" in text
    assert repr(value) == text  # what Jupyter's text/plain shows


def test_star_import_does_not_shadow_python_exceptions():
    namespace: dict = {}
    exec("from gradlang import *", namespace)
    for name in ("ValueError", "NameError", "SyntaxError"):
        assert namespace.get(name, getattr(builtins, name)) is getattr(builtins, name)
    assert "Session" in namespace and "GradlangError" in namespace

