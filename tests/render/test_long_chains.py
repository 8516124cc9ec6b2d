"""A flat chain of a thousand `W @` prints in every format (issue #38, hostile-input probe).

`W @ W @ … @ x` parses flat but is MatMul(MatMul(…), x), nested as deep as the
chain is long, and its gradient nests the other way, transpose(W) @ (… @ ones(3)).
The printers recursed about ten frames per link and passed Python's limit
near 1000 links (300 worked); they now print a chain link by link
(expr/tensor/spelling.py), so a value's printed depth is no longer its nesting.
The plain form reads back to the same value.
"""

from __future__ import annotations

import json

import pytest

from gradlang import Session
from gradlang.render import to_json, to_latex, to_plain, to_rich

LINKS = 1000
DECLARE = "W: R^(3,3); x: R^3\n"
CHAIN = "W @ " * LINKS + "x"


def _result(code: str):
    return Session().run(DECLARE + code)[-1]


def test_a_left_chain_prints_flat_in_every_format():
    result = _result(CHAIN)
    assert to_plain(result) == CHAIN + "\n"
    assert to_latex(result) == "W " * LINKS + "x"
    assert json.loads(json.dumps(to_json(result)))["text"] == CHAIN
    rich = pytest.importorskip("rich.console")
    console = rich.Console(width=100000, record=True, color_system=None)
    console.print(to_rich(result))
    assert console.export_text().strip() == "W " * LINKS + "x"


def test_a_right_chain_prints_nested_in_every_format():
    result = _result(f"grad(sum({CHAIN}), x)")
    inner = LINKS - 2  # (Wᵀ (Wᵀ … (Wᵀ Wᵀ))) 𝟙: the product of the transposes nests to the right
    assert to_plain(result) == ("transpose(W) @ (" * inner + "transpose(W) @ transpose(W)" + ")" * inner
                                + " @ ones(3)\n")
    assert to_latex(result) == (r"W^{\top} \left(" * inner + r"W^{\top} W^{\top}" + r"\right)" * inner
                                + r" \mathbf 1")
    assert to_json(result)["text"] == to_plain(result).rstrip("\n")


def test_the_plain_form_reads_back_to_the_same_value():
    written = Session().eval(DECLARE + CHAIN)
    printed = to_plain(_result(CHAIN)).strip()
    read_back = Session().eval(DECLARE + printed)
    assert read_back == written and to_plain(_result(printed)).strip() == printed
