"""Every tensor node has its reverse-mode rule in exactly one record (expr/primitives/), and reverse mode uses it."""

from __future__ import annotations

import pytest

from gradlang.derive.tensor import adjoints
from gradlang.expr import primitives
from gradlang.expr.primitives import TensorOperation, TensorRule
from gradlang.expr.tensor import axes, nodes as t

# Constants to differentiation: the only nodes whose records may give no adjoint.
CONSTANT = {t.OneHot, t.Eye, t.Ones, t.Zeros, t.MaxShares, t.MaxSharesAxis, t.ArgMax, t.ArgMin,
            axes.MaxSharesAlong, axes.ArgMaxAlong, axes.ArgMinAlong}
# A list (Literal) has an adjoint: its entries may be scalars of tensors ([y[0], 2]); a list of numbers has none to take.


def _node_classes() -> set:
    """Every concrete TensorOp subclass (one with a spelling: ScalarOp, ArgExtreme, _AlongAxis are bases)."""
    found, todo = set(), [t.TensorOp]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("gradlang.expr.tensor.") and hasattr(sub, "spelling"):
                found.add(sub)
    return found


def _uncovered(classes, rules: dict) -> list:
    """The node classes reverse mode cannot pass an adjoint through: no rule, or a constant's where one is due."""
    return sorted((cls.__name__ for cls in classes
                   if cls not in rules or (rules[cls].adjoint is None) != (cls in CONSTANT)))


def test_every_tensor_node_has_a_rule_in_a_record():
    assert _uncovered(_node_classes(), primitives.tensor_rules()) == []


def test_the_check_fails_for_a_node_whose_rule_is_missing_or_dropped():
    rules = dict(primitives.tensor_rules())
    del rules[t.Det]
    rules[t.Inv] = TensorRule(t.Inv)  # an adjoint dropped: inv would silently pass nothing
    assert _uncovered(_node_classes(), rules) == ["Det", "Inv"]


def test_ops_lists_every_node_and_only_nodes_have_rules():
    assert set(t.OPS) == _node_classes()
    assert set(primitives.tensor_rules()) <= set(t.OPS)


def test_reverse_mode_looks_its_rules_up_from_the_records():
    rules = primitives.tensor_rules()
    for cls, rule in rules.items():
        if rule.adjoint is not None:
            assert adjoints.rules()[cls] is rule.adjoint
    assert set(adjoints.constant_nodes()) == CONSTANT


def test_language_primitives_carry_their_own_tensor_rules():
    owners = {rule.node: record.name for record in primitives.records() for rule in record.tensor}
    assert owners == {t.SoftmaxOf: "softmax", t.SoftmaxAxis: "softmax", t.LogSumExpOf: "logsumexp",
                      t.LogSumExpAxis: "logsumexp", t.NormOf: "norm", t.MaxOf: "max", t.MaxAxis: "max",
                      t.MaxShares: "max_share", t.MaxSharesAxis: "max_share"}


def test_a_node_with_two_rules_is_refused(monkeypatch):
    again = TensorOperation("det again", (TensorRule(t.Det, lambda node, ybar, k: ybar),))
    monkeypatch.setattr(primitives, "_OPERATIONS", [*primitives._OPERATIONS, again])
    with pytest.raises(RuntimeError, match="Det has two adjoint rules"):
        primitives.tensor_rules()


def test_explain_words_each_rule_as_its_record_says():
    from gradlang.explain.tensor.reverse_pass import _rule

    x = t.Var("x", (3,))
    for node, cls in ((t.SoftmaxOf(x), t.SoftmaxOf), (t.Det(t.Var("A", (3, 3))), t.Det)):
        plain, latex = primitives.tensor_rules()[cls].said
        shown = _rule(node)[0]
        assert shown.plain == plain and shown.latex.endswith(latex)
