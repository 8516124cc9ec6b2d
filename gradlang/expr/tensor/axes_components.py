"""The components of the nodes of axes (expr/tensor/axes.py): the component engine's arrays moved, stretched and
reduced entry by entry in pure Python (the browser page has no NumPy), read by lower.py's `_BUILD`."""

from __future__ import annotations

import itertools

import sympy as sp

from gradlang.expr import primitives
from gradlang.expr.functions import MaxShare
from gradlang.expr.tensor import axes as ax
from gradlang.expr.tensor import shapes
from gradlang.expr.values import elements, from_elements, shape_of, to_symbolic


def _array(value):
    """(entries in row-major order, shape as integers) of a component value (a scalar is shape ())."""
    value = to_symbolic(value)
    return elements(value), tuple(int(n) for n in shape_of(value))


def _value(items: list, shape: tuple):
    return from_elements(shape, items) if shape else items[0]


def _flat(index: tuple, shape: tuple) -> int:
    position = 0
    for i, n in zip(index, shape):
        position = position * n + i
    return position


def _broadcast(node, args, sizes):
    items, inner = _array(args[0])
    outer = tuple(int(a) for a in args[1:])
    lead = len(outer) - len(inner)
    picked = [items[_flat(tuple(0 if n == 1 else i for i, n in zip(index[lead:], inner)), inner)]
              for index in itertools.product(*map(range, outer))]
    return _value(picked, outer)


def _groups(items: list, shape: tuple, axes: tuple) -> tuple:
    """The entries grouped by their index off the axes (each group in row-major order), and the kept shape."""
    kept = tuple(n for k, n in enumerate(shape) if k not in axes)
    groups: dict = {}
    for index in itertools.product(*map(range, shape)):
        key = tuple(i for k, i in enumerate(index) if k not in axes)
        groups.setdefault(key, []).append(items[_flat(index, shape)])
    return [groups[key] for key in itertools.product(*map(range, kept))], kept


def _reduced(combine):
    def build(node, args, sizes):
        items, shape = _array(args[0])
        groups, kept = _groups(items, shape, node.axes)
        return _value([combine(group) for group in groups], kept)

    return build


def _max(group: list):
    return primitives.lookup("max").build(*group)


def _shares(node, args, sizes):
    """In each group, MaxShare of each entry: 1/t on the t entries that attain the group's maximum."""
    items, shape = _array(args[0])
    position = {}
    for index in itertools.product(*map(range, shape)):
        key = tuple(i for k, i in enumerate(index) if k not in node.axes)
        position.setdefault(key, []).append(_flat(index, shape))
    shares = list(items)
    for flats in position.values():
        group = [items[f] for f in flats]
        for k, f in enumerate(flats):
            shares[f] = MaxShare(sp.Integer(k), *group)
    return _value(shares, shape)


def _in_groups(lookup: str):
    """softmax over axes by components: the component engine's softmax of each group, put back in place."""
    def build(node, args, sizes):
        items, shape = _array(args[0])
        position: dict = {}
        for index in itertools.product(*map(range, shape)):
            key = tuple(i for k, i in enumerate(index) if k not in node.axes)
            position.setdefault(key, []).append(_flat(index, shape))
        out = list(items)
        for flats in position.values():
            for f, value in zip(flats, primitives.lookup(lookup).build(*[items[f] for f in flats])):
                out[f] = value
        return _value(out, shape)

    return build


def _logsumexp(group: list):
    return primitives.lookup("logsumexp").build(*group)


def _reshaped(node, args, sizes):
    """expand_dims and squeeze: the same entries in the same order, in the node's shape."""
    items, _ = _array(args[0])
    return _value(items, tuple(int(shapes.valued(n, sizes)) for n in node.shape))


def _permute(node, args, sizes):
    items, shape = _array(args[0])
    outer = tuple(shape[k] for k in node.axes)
    picked = []
    for index in itertools.product(*map(range, outer)):
        source = [0] * len(shape)
        for k, i in zip(node.axes, index):
            source[k] = i
        picked.append(items[_flat(tuple(source), shape)])
    return _value(picked, outer)


def _pick(node, args, sizes):
    """X[i] along an axis: the entries whose index on that axis is i."""
    items, shape = _array(args[0])
    axis, index = int(node.args[1]), args[2]
    if not isinstance(index, sp.Integer):
        from gradlang.expr.tensor.lower import FreeIndex

        raise FreeIndex(f"the index '{index}' needs a number to take components: add it to the at")
    kept = tuple(n for k, n in enumerate(shape) if k != axis)
    picked = [items[_flat(index_, shape)] for index_ in itertools.product(*map(range, shape))
              if index_[axis] == int(index)]
    return _value(picked, kept)


def _arg(pick):
    def build(node, args, sizes):
        items, shape = _array(args[0])
        groups, kept = _groups(items, shape, (int(node.args[1]),))
        return _value([pick(from_elements((len(g),), g)) for g in groups], kept)

    return build


def _arg_builders():
    from gradlang.expr import component_vectors as vectors

    return {ax.ArgMaxAlong: _arg(vectors.argmax), ax.ArgMinAlong: _arg(vectors.argmin)}


COMPONENTS = {
    ax.Pick: _pick,
    ax.BroadcastTo: _broadcast,
    ax.SumAlong: _reduced(lambda group: sp.Add(*group)),
    ax.MaxAlong: _reduced(_max),
    ax.MaxSharesAlong: _shares,
    ax.SoftmaxAlong: _in_groups("softmax"),
    ax.LogSumExpAlong: _reduced(_logsumexp),
    ax.ExpandDims: _reshaped,
    ax.Squeeze: _reshaped,
    ax.Permute: _permute,
    **_arg_builders(),
}
