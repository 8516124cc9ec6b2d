"""The registry of primitives: every table that lists functions is derived from it, and each rule is right.

A name in the lexer, the completion list, the builtin table, the NumPy
printer or an export prelude without a registry record fails here, and so
does a record missing from any of them or from docs/language.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from gradlang.core import builtins
from gradlang.export.prelude import HEADS, PRELUDES, tensor_helpers
from gradlang.expr import primitives
from gradlang.expr.numeric import evaluate
from gradlang.shell import lexer
from gradlang.shell.repl import Repl

DOCS = Path(__file__).resolve().parents[2] / "docs" / "language.md"
RECORDS = primitives.records()
CLASSED = [r for r in RECORDS if r.cls is not None]
U = sp.Symbol("u", real=True)

# Builtins that act on whole values and are not primitives (no derivative rule, no NumPy or export spelling).
OPERATIONS = {
    "unstopped", "blocked", "diff", "grad", "jacobian", "hessian", "backward",
    "sum", "mean", "prod", "dot", "len", "reduce_sum", "reduce_mean",
    "transpose", "linspace", "simplify", "expand", "factor", "N", "gradcheck", "plot", "components", "ones", "zeros",
    # section 6 compositions (core/builtins_vectors.py) and data (core/loading.py)
    "outer", "diag", "eye", "onehot", "argmax", "argmin", "normalize", "cosine", "huber", "log_softmax",
    "trace", "det", "logdet", "inv", "load", "all", "any",
    # section 3b joins (core/builtins_joins.py) and shapes (core/builtins_shapes.py)
    "concat", "stack", "broadcast_to", "expand_dims", "squeeze",
    # section 3b products and shapes (core/builtins_products.py)
    "einsum", "reshape", "take", "scatter_add",
}


def test_the_builtin_table_is_the_records_and_the_operations():
    assert set(builtins.TABLE) - OPERATIONS == primitives.names()
    assert not OPERATIONS & primitives.names()


def test_the_lexer_words_are_the_builtin_table():
    assert set(lexer.CORE) | set(lexer.BUILTINS) == set(builtins.TABLE)
    assert set(lexer.CONSTANTS) == set(builtins.CONSTANTS)


def test_completion_offers_every_builtin():
    assert set(builtins.TABLE) <= set(Repl().names())


def test_every_prelude_helper_belongs_to_a_record():
    for target, prelude in PRELUDES.items():
        defined = set(re.findall(r"^def (\w+)\(", prelude, re.M))
        head = set(re.findall(r"^def (\w+)\(", HEADS[target], re.M))
        from_records = {r.export[target].spelling for r in RECORDS if r.export and r.export[target].helper}
        # a helper for the whole-array spelling (numpy's _softmax_last) is written in the same record's code
        from_records |= {r.export[target].whole for r in RECORDS if r.export and r.export[target].helper
                         and re.fullmatch(r"_\w+", r.export[target].whole)}
        # and the helpers the tensor nodes' spellings call (TensorRule.export: _gl_logdet, _gl_max_shares)
        from_records |= {name for code in tensor_helpers(target) for name in re.findall(r"^def (\w+)\(", code, re.M)}
        assert defined == head | from_records, target
        assert head <= {"_t", "_share", "_stack", "_stacked", "_grad", "_onehot"}, target  # _onehot: adjoint.py


@pytest.mark.parametrize("record", CLASSED, ids=lambda r: r.name)
def test_every_class_has_numpy_and_every_export_target(record):
    assert record.numpy is not None
    assert set(record.export) == set(primitives.TARGETS)


def test_docs_list_every_registered_name():
    section = DOCS.read_text().split("## 6. Builtins", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([A-Za-z_]\w*)", section))
    assert primitives.names() <= listed, primitives.names() - listed
    assert set(builtins.TABLE) <= listed, set(builtins.TABLE) - listed


def test_one_set_of_constant_classes():
    from gradlang.derive import derivatives as derive
    from gradlang.derive.dag import rules

    assert derive._CONSTANT_CLASSES == rules.CUT_CLASSES == primitives.constant_classes()
    for cls in primitives.constant_classes():
        assert primitives.by_class(cls).zero_derivative


@pytest.mark.parametrize(
    "record", [r for r in CLASSED if r.partial is not None and r.arity == (1, 1) and r.cls.__module__.startswith("sympy")],
    ids=lambda r: r.name,
)
def test_the_rule_of_a_sympy_function_is_sympys(record):
    node = record.cls(U)
    assert sp.simplify(record.partial(primitives.SYMPY, node, 0) - node.fdiff(1)) == 0


def _sample(record) -> list:
    """A point inside the function's domain for each argument (a component's first argument is its index)."""
    if record.apply == "share" or record.form == "component":
        return [0, 0.31, 0.57, -0.23]
    if record.arity[1] is None or record.apply in ("reduction", "rows"):
        return [0.31, 0.57, -0.23]
    return [0.31, 0.57, -0.23][: record.arity[0]]


def test_float32s_derivative_is_one_a_convention_no_finite_difference_sees():
    """float32(u) is a staircase of float32's spacing; its derivative is 1 by convention (LANGUAGE.md 3b), as JAX's
    convert_element_type: a step much wider than the spacing sees a slope near 1, a finer one sees 0 or a jump."""
    record = primitives.lookup("float32")
    a = sp.Symbol("a0", real=True)
    assert record.partial(primitives.SYMPY, record.cls(a), 0) == 1
    up, down = (evaluate([record.cls(a)], [a], [0.31 + s * 1e-2])[0] for s in (1, -1))
    assert np.isclose(float(up - down) / 2e-2, 1.0, rtol=1e-5)


@pytest.mark.parametrize("record", [r for r in CLASSED if r.partial is not None and r.name != "float32"],
                         ids=lambda r: r.name)
def test_every_partial_matches_finite_differences(record):
    point = _sample(record)
    indexed = record.apply == "share" or record.form == "component"
    symbols = list(sp.symbols(f"a0:{len(point)}", real=True))
    node = record.cls(*([sp.Integer(point[0])] + symbols[1:] if indexed else symbols))
    for k in range(1 if indexed else 0, len(point)):
        partial = record.partial(primitives.SYMPY, node, k)
        (analytic,) = evaluate([partial], symbols, point)
        h = 1e-6
        up, down = (evaluate([node], symbols, [p + (s * h if i == k else 0) for i, p in enumerate(point)])[0]
                    for s in (1, -1))
        assert np.isclose(float(analytic), float(up - down) / (2 * h), rtol=1e-6, atol=1e-8), (record.name, k)


def test_every_kink_names_how_it_is_read():
    for record in RECORDS:
        if record.kink is not None:
            assert record.kink.kind in ("point", "tie", "boundary")
            assert record.kink.kind != "point" or record.kink.hit is not None
