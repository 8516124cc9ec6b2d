"""Values that hold floats, settled in float64 over the DAG.

A value with a float in it is a floating-point value (LANGUAGE.md section 2),
so its constant parts are machine floats: every distinct constant
subexpression is computed once, in float64, by the same compiled NumPy code as
`at` (IEEE 754: inf and nan as NumPy gives them), and the parts that still
hold symbols are rebuilt around those numbers. SymPy's `evalf` would instead
walk the value as a tree in mpmath, once per path to each shared node.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.domain import held_special
from gradlang.expr.graph import build_dag, tree_sizes
from gradlang.expr.values import is_condition
from gradlang.expr.engine import TensorOp
from gradlang.expr.walk import build

SMALL_TREE = 600  # a result this small as a tree is rebuilt with SymPy's evaluation (its usual form)


def fold_floats(items: list) -> list:
    """The items with each constant part a Float (exact integers kept as exponents and indices)."""
    dag = build_dag(items)
    constant = _constant_nodes(dag)
    numbers = _float_values(dag, constant)
    sizes = tree_sizes(dag, cap=SMALL_TREE + 1)
    small = sum(sizes[r] for r in dag.roots) <= SMALL_TREE
    built: list = []
    for i, (node, kids) in enumerate(zip(dag.nodes, dag.children)):
        if i in numbers:
            built.append(numbers[i])
        elif not kids:
            built.append(node)
        else:
            # a held inf or nan beside symbols stays held: folded, sign(a*inf) would be sign(a)
            args = [dag.nodes[k] if held_special(dag.nodes[k]) else _arg(node, position, built[k], dag.nodes[k])
                    for position, k in enumerate(kids)]
            built.append(_make(node, args, small))
    return [built[r] for r in dag.roots]


def _constant_nodes(dag) -> list[bool]:
    """Whether each node is a real number expression without symbols (conditions excluded)."""
    constant: list[bool] = []
    for node, kids in zip(dag.nodes, dag.children):
        if is_condition(node) or not isinstance(node, sp.Expr) or isinstance(node, TensorOp):
            constant.append(False)  # onehot(1, 3) is a constant vector, not a number to fold
        elif not kids:
            constant.append(node.is_number)
        else:
            constant.append(all(constant[k] for k in kids))
    return constant


def _float_values(dag, constant) -> dict:
    """index -> Float for every constant node whose value is used (maximal ones computed in float64)."""
    used_by_symbolic = set(dag.roots)
    for i, kids in enumerate(dag.children):
        if not constant[i]:
            used_by_symbolic.update(kids)
    wanted = [i for i in sorted(used_by_symbolic) if constant[i]]
    imaginary = _imaginary_nodes(dag)
    compound = [i for i in wanted if dag.children[i] and not imaginary[i]]
    values = {i: _atom_float(dag.nodes[i]) if not imaginary[i] else sp.nan for i in wanted if not dag.children[i]}
    values.update({i: sp.nan for i in wanted if imaginary[i]})
    if compound:
        from gradlang.expr.numeric import evaluate, to_sympy_number  # the code printer costs 40 ms at start-up

        outputs = evaluate([dag.nodes[i] for i in compound], [], [])
        values.update({i: to_sympy_number(o) for i, o in zip(compound, outputs)})
    return values


def _imaginary_nodes(dag) -> list[bool]:
    """Whether each node holds I: sqrt(-4.0) is 2.0*I to SymPy, nan to NumPy's real functions."""
    imaginary: list[bool] = []
    for node, kids in zip(dag.nodes, dag.children):
        imaginary.append(node is sp.I or any(imaginary[k] for k in kids))
    return imaginary


def _atom_float(atom) -> sp.Expr:
    from gradlang.expr.numeric import to_sympy_number

    if atom.is_Float or atom in (sp.oo, -sp.oo, sp.nan):
        return atom
    if atom is sp.zoo:
        return sp.nan
    return to_sympy_number(float(atom))


def _arg(node, position: int, value, original):
    """Integer exponents and integer arguments of functions stay exact (x**2, max_share(0, ...)); so do the
    integer arguments of a tensor node, indices and sizes such as x[p - 1] and onehot(p - 1, p), whose
    `p - 1` would otherwise be rebuilt as p - 1.0, an index that does not read back."""
    if original.is_Integer and not isinstance(node, (sp.Add, sp.Mul)):
        return original
    if isinstance(node, TensorOp) and original.is_integer:  # Entry, OneHot, Row: ScalarOps are TensorOps
        return original
    if isinstance(node, sp.Pow) and position == 1 and original.is_Rational:
        return original
    return value


def _make(node, args, small: bool):
    """The node with new args: evaluated (the usual form) when small, as built when big."""
    if all(a is b for a, b in zip(args, node.args)):
        return node
    if small:
        return build(node, args)
    if isinstance(node, (sp.Add, sp.Mul, sp.Pow)):
        return node.func(*args, evaluate=False)
    try:
        return node.func(*args, evaluate=False)
    except TypeError:
        return node.func(*args)
