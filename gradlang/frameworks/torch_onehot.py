"""The hard one-hot of real PyTorch code: ones written into zeros at an argmax (or argmin), as onehot(argmax(…)).

`F.gumbel_softmax(hard=True)` scatters ones at the argmax of its soft sample
(`zeros_like(y).scatter_(dim, y.max(dim, keepdim=True)[1], 1.0)`); a VQ-VAE
writes `one_hot[torch.arange(b), codes] = 1` with `codes = d.argmin(1)`
(`index_put_`). Written as the value at the traced point they would freeze
the codes; written `onehot(argmax(y), n)` (one per row of a batch) they are
the same numbers there and follow y elsewhere. Any other scatter or
index_put depends on positions gradlang cannot name, and is refused (the
walker places the refusal at the user's line, naming the operation).
"""

from __future__ import annotations

import operator

import numpy as np

from gradlang.frameworks import ops
from gradlang.frameworks.program import TranslateError
from gradlang.frameworks.torch_lines import where as place

REFUSED = ("a {op} that is not ones written into zeros at an argmax or argmin along its axis (the hard one-hot of "
           "F.gumbel_softmax(hard=True) is written onehot(argmax(…)); other {op}s are not)")


def scatter(step):
    """scatter(self, dim, index, value or src), also scatter_: ones at an argmax along dim."""
    dim = step.arg(1, "dim", 0) % max(len(step.shape), 1)
    found = arg_source(step.node.args[2], dim, len(step.shape))
    values = step.node.kwargs.get("value", step.node.args[3] if len(step.node.args) > 3 else None)
    if found is None or not _zeros(step) or not _ones(step, values):
        raise TranslateError(REFUSED.format(op="scatter"))
    return _written(step, found, dim)


def index_put(step):
    """index_put(self, indices, values): `v[argmax(y)] = 1`, or `M[arange(b), argmax(y, 1)] = 1`; or a boolean
    mask that selects nothing at the traced point, as td.kl_divergence's `t[(q.probs == 0)] = inf`."""
    indices, values = step.node.args[1], step.node.args[2]
    if _selects_nothing(step, indices):
        return step.walker.env[step.node.args[0]]
    rank = len(step.shape)
    found = arg_source(indices[-1], rank - 1, rank) if indices and len(indices) == rank else None
    rows = [np.asarray(step.walker.point(i, step.at)).reshape(-1) for i in indices[:-1]]
    if rows and not (rank == 2 and np.array_equal(rows[0], np.arange(step.shape[0]))):
        found = None
    if found is None or not _zeros(step) or not _ones(step, values):
        raise TranslateError(REFUSED.format(op="index_put"))
    return _written(step, found, rank - 1)


def _selects_nothing(step, indices) -> bool:
    """One boolean mask, False everywhere at the traced point (a comparison, piecewise constant: the write is
    none near the point, as the program says by a note at the user's line)."""
    if len(indices) != 1 or not hasattr(indices[0], "op"):
        return False
    mask = step.walker.point(indices[0], step.at)
    if getattr(mask, "dtype", None) is None or str(mask.dtype) != "torch.bool" or bool(mask.any()):
        return False
    where = place(step.node)
    step.walker.writer.fixed("index_put", where, f"the mask written through at {where} selects nothing at the "
                                                 "traced point (a comparison: piecewise constant), so the write is none")
    return True


def _written(step, found: tuple, dim: int):
    source, name = found
    y = step.walker.writer.bind(step.walker.env[source], 2)
    return ops.onehot_of_argmax(y, dim, step.shape, name)


def _zeros(step) -> bool:
    """The tensor written holds zeros before the write (an in-place write's tensor as it was)."""
    base = step.walker.before if step.walker.before is not None else step.walker.point(step.node.args[0], step.at)
    return not np.any(np.asarray(base, dtype=np.float64))


def _ones(step, values) -> bool:
    return bool(np.all(np.asarray(step.walker.point(values, step.at), dtype=np.float64) == 1))


def arg_source(index, dim: int, rank: int):
    """(y, 'argmax' or 'argmin') when the index is y's argmax/argmin along `dim` (y.max(dim)[1], y.argmax(dim))."""
    node = index
    if getattr(node, "target", None) is operator.getitem and node.args[1] == 1:
        node = node.args[0]
    name = str(getattr(node, "target", ""))
    kind = next((k for k, prefixes in (("argmax", ("aten.max.dim", "aten.argmax")),
                                       ("argmin", ("aten.min.dim", "aten.argmin"))) if name.startswith(prefixes)), None)
    if kind is None or len(node.args) < 2 or node.args[1] is None:
        return None
    return (node.args[0], kind) if node.args[1] % rank == dim else None
