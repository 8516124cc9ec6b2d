"""Every primitive is one record, and every record is complete: adding a primitive means writing one record.

A tensor operation (each `TensorOp` of expr/tensor/) is its node class, which
holds its shape and `Spelling`, and its `TensorRule` in a record of
expr/primitives/, which holds its adjoint and its tangent (or says it is a
constant to differentiation). A function of the language is its `Primitive`
record: its numbers on the browser page (`pure`, or `NotOnPage` with a
reason), its definition for explain[unfold] where it is a smooth function of
gradlang's own, its rule on a whole array for vectorised export. The tables
other modules read (forward.rules(), adjoints.rules(), numeric's page helpers,
unfold.DEFINITIONS) are built from the records; this test walks every node
and every record and names whatever is missing, so a forgotten entry fails
here, not as an InternalError in the browser.
"""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
import sympy as sp

from gradlang.errors import GradlangError
from gradlang.expr import numeric, primitives, pure_numeric
from gradlang.expr.primitives import NotOnPage
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.spelling import ListSpelling, Spelling


def _components_table() -> dict:
    """The per-node `components` rule (lowering to components: the page's route to a tensor's numbers).

    It is moving from core/tensor_at.py to expr/tensor/lower.py; either home is read."""
    try:
        from gradlang.expr.tensor.lower import _BUILD
    except ImportError:
        from gradlang.core.tensor_at import _BUILD
    return _BUILD


def node_classes() -> set:
    """Every concrete TensorOp class: the leaves below TensorOp (ScalarOp, ArgExtreme, _AlongAxis are bases).

    Leaves, not classes with a spelling, so a new node without one is found (and named) too."""
    found, todo = set(), [t.TensorOp]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("gradlang.expr.tensor."):
                todo.append(sub)
                if not sub.__subclasses__():
                    found.add(sub)
    return found


def missing_in_nodes(classes, rules: dict, components: dict) -> list:
    """'Node: what' for each node class whose record lacks an entry."""
    missing = []
    for cls in sorted(classes, key=lambda c: c.__name__):
        rule = rules.get(cls)
        if rule is None:
            missing.append(f"{cls.__name__}: no record")
            continue
        if not isinstance(rule.spelling, (Spelling, ListSpelling)):
            missing.append(f"{cls.__name__}: spelling")
        if rule.constant and (rule.adjoint is not None or rule.tangent is not None):
            missing.append(f"{cls.__name__}: a constant with a rule")
        for part in ("adjoint", "tangent"):
            if not rule.constant and not callable(getattr(rule, part)):
                missing.append(f"{cls.__name__}: {part}")
        if cls not in components:
            missing.append(f"{cls.__name__}: components")
        missing += [f"{cls.__name__}: numpy helper {name}" for name in _numpy_helpers(rule.spelling)
                    if name not in numeric.HELPERS]
    return missing


def _numpy_helpers(spelling) -> list:
    """The `_gl_` helpers a node's NumPy spelling calls (expr/tensor/numbers.py defines them)."""
    import gradlang.expr.tensor.numbers  # noqa: F401 - adds the tensor helpers to numeric.HELPERS

    return re.findall(r"_gl_\w+", getattr(spelling, "numpy_template", ""))


def unfoldable(record) -> bool:
    """A smooth function of gradlang's own class: kept whole in derivatives by its own rule, so explain[unfold]
    must be able to open it. SymPy's own functions are primitives already; the non-smooth ones (relu, max,
    where, round, stop_gradient) are defined by their conventions (section 5)."""
    return (record.cls is not None and record.cls.__module__.startswith("gradlang.")
            and not record.zero_derivative and record.kink is None)


def missing_in_records(records) -> list:
    """'name: what' for each function of the language whose record lacks an entry."""
    missing = []
    for record in records:
        if callable(record.numpy) and not (callable(record.pure) or isinstance(record.pure, NotOnPage)):
            missing.append(f"{record.name}: pure")
        if isinstance(record.numpy, str) and "{args}" not in record.numpy and not hasattr(pure_numeric, record.numpy):
            missing.append(f"{record.name}: pure_numeric.{record.numpy}")
        if unfoldable(record) and not (len(record.unfold) == 2 and callable(record.unfold[0])):
            missing.append(f"{record.name}: unfold")
        if any(spelled.whole for spelled in record.export.values()) and not callable(record.whole_adjoint):
            missing.append(f"{record.name}: whole_adjoint")
    return missing


def test_every_tensor_node_is_one_complete_record():
    assert missing_in_nodes(node_classes(), primitives.tensor_rules(), _components_table()) == []


def test_every_function_of_the_language_is_one_complete_record():
    assert missing_in_records(primitives.records()) == []


def test_the_walk_finds_every_node():
    assert node_classes() == set(t.OPS)
    assert {t.Det, t.Inv, t.LogDet, t.Trace, t.Literal, t.MaxSharesAxis} <= node_classes()


def test_the_check_names_each_entry_that_is_missing():
    rules = dict(primitives.tensor_rules())
    rules[t.Inv] = dataclasses.replace(rules[t.Inv], tangent=None)  # forward mode would refuse inv
    rules[t.Dot] = dataclasses.replace(rules[t.Dot], adjoint=None)  # reverse mode would pass nothing through dot
    rules[t.Eye] = dataclasses.replace(rules[t.Eye], constant=False)  # eye would need rules it cannot have
    del rules[t.Det]
    components = {cls: rule for cls, rule in _components_table().items() if cls is not t.Trace}
    assert missing_in_nodes(node_classes(), rules, components) == [
        "Det: no record", "Dot: adjoint", "Eye: adjoint", "Eye: tangent", "Inv: tangent", "Trace: components"]
    records = {r.name: r for r in primitives.records()}
    broken = [dataclasses.replace(records["softmax"], pure=None), dataclasses.replace(records["sigmoid"], unfold=()),
              dataclasses.replace(records["norm"], whole_adjoint=None), dataclasses.replace(records["exp"], numpy="exq")]
    assert missing_in_records(broken) == ["softmax: pure", "sigmoid: unfold", "norm: whole_adjoint",
                                          "exp: pure_numeric.exq"]


def test_the_tables_are_read_from_the_records():
    from gradlang.derive.tensor import adjoints, forward
    from gradlang.explain.scalar.unfold import DEFINITIONS

    rules = primitives.tensor_rules()
    assert forward.rules() == {cls: r.tangent for cls, r in rules.items() if not r.constant}
    assert {cls: r.adjoint for cls, r in rules.items() if not r.constant} == {
        cls: rule for cls, rule in adjoints.rules().items() if cls not in adjoints.constant_nodes()}
    assert set(adjoints.constant_nodes()) == {cls for cls, r in rules.items() if r.constant}
    assert DEFINITIONS == {r.cls: r.unfold for r in primitives.records() if r.unfold}
    pure = numeric.pure_helpers()
    assert {name: pure[name] for name in pure if name != "_gl_sum"} == {
        f"_gl_{r.name}": r.pure for r in primitives.records() if callable(r.numpy)}


POINTS = {"call": (0.3,), "vector": (0.3, -0.7, 1.1), "component": (1, 0.3, -0.7, 1.1)}


@pytest.mark.parametrize("record", [r for r in primitives.records() if r.unfold], ids=lambda r: r.name)
def test_each_unfold_definition_is_the_function(record):
    args = [sp.Integer(a) if isinstance(a, int) else sp.Float(a) for a in POINTS[record.form]]
    assert math.isclose(float(sp.N(record.unfold[0](*args), 30)), float(sp.N(record.cls(*args), 30)), rel_tol=1e-14)


ARGUMENTS = {"elementwise": "call", "extremum": "vector", "reduction": "vector", "share": "component", "rows": "component"}


@pytest.mark.parametrize("record", [r for r in primitives.records() if callable(r.pure)], ids=lambda r: r.name)
def test_each_page_helper_gives_numpys_number(record):
    args = POINTS[ARGUMENTS[record.apply]]
    want = float(record.numpy(*args))
    assert math.isclose(float(record.pure(*[pure_numeric.Float(a) for a in args])), want, rel_tol=1e-14)


def test_a_primitive_not_on_the_page_is_refused_as_a_gradlang_error(monkeypatch):
    """The marker is a real refusal: the page's helper raises a GradlangError with the record's reason."""
    softmax = primitives.lookup("softmax")
    away = dataclasses.replace(softmax, pure=NotOnPage("softmax needs NumPy here"))
    monkeypatch.setattr(primitives, "_RECORDS", [away if r is softmax else r for r in primitives._RECORDS])
    helper = numeric.pure_helpers()["_gl_softmax"]
    with pytest.raises(GradlangError, match="softmax needs NumPy here"):
        helper(0, 1.0, 2.0)
