"""explain bounds a tensor pass by the distinct subexpressions of what it derives, not its size as a tree (issue 39).

SwAV's two unrolled Sinkhorns over shared logits are a tree of more than 100000 nodes in a few hundred distinct
ones; the tree bound refused them although the tensor pass works per distinct node. The tree bound stays where
trees are walked (a request over scalars, the views by components), and a real bound by distinct nodes remains.
"""

from __future__ import annotations

import pytest

from gradlang import GradlangError, Session, limits
from gradlang.expr.walk import dag_nodes, tree_size
from gradlang.render.plain import to_plain

# each layer uses the one before twice: the loss doubles as a tree with each layer, grows by a few nodes as a DAG
SHARED = ("n: size\nx: R^n\nW: R^(n,n)\nh0 = tanh(W @ x)\n"
          + "".join(f"h{k + 1} = h{k} * h{k} + h{k}\n" for k in range(6)) + "L = sum(h6)\n")


def test_a_tensor_pass_over_a_shared_formula_is_bounded_by_its_distinct_nodes(monkeypatch):
    session = Session()
    session.run(SHARED)
    loss = session.env["L"]
    assert tree_size(loss) > 4 * len(dag_nodes(loss))
    monkeypatch.setattr(limits, "MAX_EXPLAINED_TREE_NODES", len(dag_nodes(loss)))  # below its tree, above its DAG
    explained = session.run("explain grad(L, W)")[-1]
    text = to_plain(explained)
    assert "tensor reverse pass" in text and "✓ equals grad" in text, text  # explain's own check: the same formula


def test_a_formula_past_the_bound_of_distinct_nodes_is_refused(monkeypatch):
    session = Session()
    session.run(SHARED)
    monkeypatch.setattr(limits, "MAX_EXPLAINED_NODES", 10)
    with pytest.raises(GradlangError) as caught:
        session.run("explain grad(L, W)")
    assert caught.value.kind == "LimitError"
    assert caught.value.message.startswith("explain derives an expression of at most 10 distinct subexpressions")
    assert caught.value.line is not None


def test_a_scalar_doubling_chain_keeps_the_tree_bound(monkeypatch):
    monkeypatch.setattr(limits, "MAX_EXPLAINED_TREE_NODES", 20)
    with pytest.raises(GradlangError) as caught:
        Session().run("f0 = x\nf1 = f0*f0 + f0\nf2 = f1*f1 + f1\nf3 = f2*f2 + f2\nexplain diff(f3, x)")
    assert "nodes written out as a tree" in caught.value.message
