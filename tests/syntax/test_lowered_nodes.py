"""The lowered form's nodes are plain frozen classes, not dataclasses (issue #41: creating them as
dataclasses was about 10 ms of every start-up), and keep what the dataclasses gave: fields in the order
written, defaults, keyword-only place, frozen, compared by identity, the same repr, remembered by identity."""

from __future__ import annotations

import dataclasses

import pytest

from gradlang import remembered
from gradlang.errors import Span
from gradlang.syntax import lowered as lo
from gradlang.syntax.lower import read

PLACE = lo.Place(Span(1, 1, 1, 2), 0, 1)


def test_node_classes_are_not_dataclasses_made_at_import():
    assert not any(dataclasses.is_dataclass(kind) for kind in lo.Node.__subclasses__())
    assert len(lo.Node.__subclasses__()) >= 26  # every node kind of the lowered form, Range (ranges) included


def test_fields_defaults_and_keywords():
    call = lo.Call("f", (lo.Name("x", place=PLACE),), place=PLACE)
    assert (call.name, call.name_span, call.place) == ("f", None, PLACE)
    target = lo.Target(name="x", place=PLACE)
    assert target.indices == ()
    assert [part.name for part in call.parts()] == ["x"]
    with pytest.raises(TypeError):
        lo.Name(place=PLACE)
    with pytest.raises(TypeError):
        lo.Name("x", "y", place=PLACE)
    with pytest.raises(TypeError):
        lo.Name("x", size=3, place=PLACE)
    with pytest.raises(TypeError):
        lo.Name("x")  # place is keyword-only and required


def test_frozen_and_compared_by_identity():
    a, b = lo.Name("x", place=PLACE), lo.Name("x", place=PLACE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "y"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del a.name
    assert a != b and a == a and len({a, b}) == 2


def test_repr_is_the_dataclass_one_without_places():
    call = lo.Call("f", (lo.Number("2", place=PLACE),), name_span=Span(1, 1, 1, 2), place=PLACE)
    assert repr(call) == "Call(name='f', args=(Number(literal='2'),))"
    program = read("y = x at x = 2\n")
    assert repr(program) == ("Program(statements=(Assignment(target=Name(name='y'), value=At(body=Name(name='x'), "
                             "bindings=(Binding(target=Target(name='x', indices=()), value=Number(literal='2')),))),))")


def test_nodes_are_remembered_by_identity():
    node = lo.Name("x", place=PLACE)
    calls = []
    for _ in range(2):
        remembered.remembered("test node", node, lambda n: calls.append(n) or 1)
    assert calls == [node]
