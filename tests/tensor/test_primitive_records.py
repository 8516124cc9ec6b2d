"""Every primitive is one record, and every record is complete: adding a primitive means writing one record.

A tensor operation (each `TensorOp` of expr/tensor/) is its node class, which
holds its shape and `Spelling`, and its `TensorRule` in a record of
expr/primitives/, which holds its adjoint and its tangent (or says it is a
constant to differentiation), the whole-array NumPy helper its spelling
calls, if any, and its spelling in each framework for --export of a formula
(`export`: jnp.matmul, torch.logsumexp, …, with the helpers those call). A function of the language is its `Primitive`
record: its numbers on the browser page (`pure`, or `NotOnPage` with a
reason), its definition for explain[unfold] where it is a smooth function of
gradlang's own, its rule on a whole array for vectorised export. The tables
other modules read (forward.rules(), adjoints.rules(), numbers.HELPERS,
numeric's page helpers, unfold.DEFINITIONS) are built from the records; this test walks every node
and every record and names whatever is missing, so a forgotten entry fails
here, not as an InternalError in the browser.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest
import sympy as sp

from gradlang.errors import GradlangError
from gradlang.expr import numeric, primitives, pure_numeric
from gradlang.expr.primitives import NotOnPage
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.joins import JoinSpelling
from gradlang.expr.tensor.product_spelling import EinsumSpelling
from gradlang.expr.tensor.spelling import ListSpelling, Spelling


def _components_table() -> dict:
    """The per-node `components` rule (lowering to components: the page's route to a tensor's numbers).

    It lives in expr/tensor/lower.py, the view."""
    from gradlang.expr.tensor.lower import _BUILD

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
        if not isinstance(rule.spelling, (Spelling, ListSpelling, JoinSpelling, EinsumSpelling)):
            missing.append(f"{cls.__name__}: spelling")
        if rule.constant and (rule.adjoint is not None or rule.tangent is not None):
            missing.append(f"{cls.__name__}: a constant with a rule")
        for part in ("adjoint", "tangent"):
            if not rule.constant and not callable(getattr(rule, part)):
                missing.append(f"{cls.__name__}: {part}")
        if cls not in components:
            missing.append(f"{cls.__name__}: components")
        helper = rule.spelling.helper() if hasattr(rule.spelling, "helper") else None
        if helper is not None and not callable(rule.numpy):
            missing.append(f"{cls.__name__}: numpy ({helper})")
        missing += [f"{cls.__name__}: {what}" for what in missing_in_export(rule, rules)]
    return missing


FRAMEWORKS = ("jax", "torch", "tf")


def missing_in_export(rule, rules: dict) -> list:
    """What a node lacks for --export of a formula (export/formula.py): a spelling in each framework, and the
    code of every helper a spelling calls, written by some record for that framework (prelude.py)."""
    missing = []
    for target in FRAMEWORKS:
        spelled = rule.export.get(target)
        if spelled is None or not spelled.spelling:
            missing.append(f"export {target}")
        elif isinstance(spelled.spelling, str):
            written = "".join(r.export[target].helper for r in rules.values() if target in r.export)
            missing += [f"export {target} ({name})" for name in re.findall(r"\b_gl_\w+", spelled.spelling)
                        if f"def {name}(" not in written]
    if rule.spelling.helper() == "_gl_logdet" and "def _gl_logdet(" not in getattr(rule.export.get("numpy"), "helper", ""):
        missing.append("export numpy (_gl_logdet)")  # NumPy's other helpers are numbers.py's own (formula.helpers)
    return missing


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
    rules[t.SoftmaxOf] = dataclasses.replace(rules[t.SoftmaxOf], numpy=None)  # its NumPy spelling would be a NameError
    rules[t.Outer] = dataclasses.replace(rules[t.Outer], export={k: v for k, v in rules[t.Outer].export.items() if k != "tf"})
    shares = rules[t.MaxShares].export  # --export jax would call a helper no record writes
    rules[t.MaxShares] = dataclasses.replace(rules[t.MaxShares], export={**shares, "jax": dataclasses.replace(shares["jax"], helper="")})
    rules[t.MaxSharesAxis] = dataclasses.replace(rules[t.MaxSharesAxis], export={
        **rules[t.MaxSharesAxis].export, "jax": dataclasses.replace(shares["jax"], spelling="_gl_max_shares({0}, {i1})", helper="")})
    del rules[t.Det]
    components = {cls: rule for cls, rule in _components_table().items() if cls is not t.Trace}
    assert missing_in_nodes(node_classes(), rules, components) == [
        "Det: no record", "Dot: adjoint", "Eye: adjoint", "Eye: tangent", "Inv: tangent",
        "MaxShares: export jax (_gl_max_shares)", "MaxSharesAxis: export jax (_gl_max_shares)", "Outer: export tf",
        "SoftmaxOf: numpy (_gl_softmax_vector)", "Trace: components"]
    records = {r.name: r for r in primitives.records()}
    broken = [dataclasses.replace(records["softmax"], pure=None), dataclasses.replace(records["sigmoid"], unfold=()),
              dataclasses.replace(records["norm"], whole_adjoint=None), dataclasses.replace(records["exp"], numpy="exq")]
    assert missing_in_records(broken) == ["softmax: pure", "sigmoid: unfold", "norm: whole_adjoint",
                                          "exp: pure_numeric.exq"]


def test_the_tables_are_read_from_the_records():
    from gradlang.derive.tensor import adjoints, forward
    from gradlang.explain.scalar.unfold import DEFINITIONS
    from gradlang.expr.tensor import numbers

    rules = primitives.tensor_rules()
    assert forward.rules() == {cls: r.tangent for cls, r in rules.items() if not r.constant}
    assert {cls: r.adjoint for cls, r in rules.items() if not r.constant} == {
        cls: rule for cls, rule in adjoints.rules().items() if cls not in adjoints.constant_nodes()}
    assert set(adjoints.constant_nodes()) == {cls for cls, r in rules.items() if r.constant}
    assert DEFINITIONS == {r.cls: r.unfold for r in primitives.records() if r.unfold}
    assert numbers.HELPERS == {r.spelling.helper(): r.numpy for r in rules.values() if r.numpy is not None}
    assert all(numeric.HELPERS[name] is helper for name, helper in numbers.HELPERS.items())
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


# One program through every tensor node: its formula, and its gradients by the vector and by the matrix.
EVERY_NODE = """x: R^n
A: R^(n,n)
f = max(x) + logsumexp(x) + norm(x) + sum(softmax(x) * x) + prod(x) + x[0] + A[1] @ x + A[:, 2] @ x + sum(A, 0) @ x
f = f + sum(logsumexp(A, 1)) + sum(softmax(A, 0) * A) + sum(max(A, axis=1)) + trace(A) + det(A) + logdet(A) + sum(inv(A))
f = f + dot(x, x) + sum(outer(x, x)) + sum(transpose(A) @ x) + sum(diag(x) @ x) + sum(diag(A)) + sum(eye(n) @ x)
f = f + sum(onehot(argmax(x), n) * x) + x[argmin(x)] + sum([x[0], 2.0] * [x[1], 3.0]) + sum(ones(n) * x) + sum(zeros(n) + x)
f = f + sum(concat([x, x[0:2]]) * concat([x, x[1:3]])) + sum(stack([x, 2*x], 1) @ [1.0, 2.0]) + sum(A[:, 1:3] @ x[0:2])
T = expand_dims(A, 0) * expand_dims(x, (1, 2))
f = f + sum(max(T, axis=(1, 2)) * x) + sum(transpose(T, (0, 2, 1)) * T) + sum(squeeze(broadcast_to(sum(T, axis=2, keepdims=true), (1, n, n, 1)), (0, 3)))
f = f + sum(softmax(T, axis=(1, 2)) * T) + sum(logsumexp(T, axis=-1) * A) + sum(log_softmax(T, 0))
f = f + sum(argmax(T, axis=1) + argmin(T, axis=2)) + sum(broadcast_to(x, (2, n))) + sum(T[0] * T[:, 1] * T[..., 2]) + sum(T[:, :, 1:3] * T[..., 0:2])
f = f + einsum("ij,j->", A, x) + sum(reshape(A, (n*n,)) * reshape(outer(x, x), (n*n,))) + sum(take(x, [2, 0, 2], 0)^2)
f
grad(f, x)
grad(f, A)
"""
POINT = " at x = [0.5, -1.0, 2.0], A = [[2.0, 0.5, 0.1], [0.3, 1.5, 0.2], [0.1, 0.4, 3.0]]"
AT_A_POINT = "\n".join(line + POINT if line == "f" or line.startswith("grad") else line for line in EVERY_NODE.splitlines())


def test_the_page_program_goes_through_every_node():
    from gradlang import Session
    from gradlang.expr.graph import build_dag

    found = set()
    for result in Session().iter_run(EVERY_NODE):
        if result.kind == "value":
            found |= {type(n) for n in build_dag([result.value]).nodes}
    assert sorted(cls.__name__ for cls in set(t.OPS) - found) == [], "add a term with each to EVERY_NODE"


def test_every_tensor_node_has_its_numbers_on_the_page():
    """The page has no NumPy: a tensor's numbers there come from its components and the records' `pure`
    helpers. The program through every node gives, in a browser-like interpreter, NumPy's numbers."""
    import subprocess
    import sys
    from pathlib import Path

    from gradlang import Session
    from gradlang.render.json import to_json
    from tests.safety import SAFETY_NET

    body = ("import json, sys\nsys.modules['numpy'] = None  # import numpy -> ImportError, as in the page\n"
            "from gradlang import Session\nfrom gradlang.render.json import to_json\n"
            f"for r in Session().iter_run({AT_A_POINT!r}):\n    print(json.dumps(to_json(r)))\n")
    done = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, timeout=SAFETY_NET,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    page = [json.loads(line) for line in done.stdout.splitlines()]
    want = [json.loads(json.dumps(to_json(r))) for r in Session().iter_run(AT_A_POINT)]
    assert [r.get("kind") for r in page] == [r.get("kind") for r in want]
    assert all(r.get("kind") != "error" for r in page), page
    assert _numbers(page) and all(math.isclose(a, b, rel_tol=1e-12) for a, b in zip(_numbers(page), _numbers(want)))
    assert len(_numbers(page)) == len(_numbers(want)) == 1 + 3 + 9


def _numbers(results: list) -> list:
    """Every float printed in the results' values, in order."""
    return [float(n) for r in results if r.get("kind") == "value"
            for n in re.findall(r"-?\d+\.\d+(?:e[-+]?\d+)?", json.dumps(r.get("value")))]
