"""torch.cat and torch.einsum written with the language's own concat and einsum (section 3b).

A translated Value's gradlang text has the framework's shape with every axis of length 1 dropped
(program.Value.sizes); these rules move the framework's axes and subscripts to that shape, so DINO's
`torch.cat(crops)` reads `concat([x1, x2, …], 0)` and MoCo v3's `torch.einsum('nc,mc->nm', [q, k])` reads
`einsum("nc,mc->nm", q, k)`.
"""

from __future__ import annotations

from gradlang.frameworks import ops
from gradlang.frameworks.program import ATOM, TranslateError, Value, fill, wrap


def gradlang_axis(shape: tuple, axis: int) -> int:
    """The position of the framework's `axis` among the axes gradlang keeps (those longer than 1)."""
    return sum(1 for d in shape[:axis] if d != 1)


def cat(step):
    """cat(tensors, dim): concat along the kept axis; a part of length 1 there gets its axis back (expand_dims)."""
    shape = step.shape
    axis = step.arg(1, "dim", 0) % len(shape)
    if shape[axis] == 1:  # one part of length 1 along the axis: the part itself
        parts = [p for p in step.arg(0, "tensors", []) if isinstance(p, Value)]
        return Value(fill(parts[0]).text, shape, parts[0].prec)
    where = gradlang_axis(shape, axis)
    texts = []
    for i, part in enumerate(step.arg(0, "tensors", [])):
        if not isinstance(part, Value):
            raise TranslateError("a concatenation of a value that is not a tensor")
        if part.shape[axis] == 0:  # an empty part (torch.cat skips it)
            continue
        text = fill(part).text
        texts.append(f"expand_dims({text}, {where})" if part.shape[axis] == 1 else text)
    return Value(f"concat([{', '.join(texts)}], {where})", shape)


def einsum(step):
    """einsum(equation, tensors): the same subscripts with the letters of axes of length 1 left out."""
    equation = str(step.arg(0, "equation", "")).replace(" ", "")
    operands = step.arg(1, "tensors", [])
    if "..." in equation or "->" not in equation:
        raise TranslateError(f"einsum {equation!r}: only explicit subscripts with '->' are written")
    return einsum_text(equation, operands, step.shape)


def einsum_text(equation: str, operands: list, shape: tuple) -> Value:
    """einsum of explicit subscripts, the letters of axes of length 1 left out (torch.bmm's "bij,bjk->bik")."""
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or not all(isinstance(o, Value) for o in operands):
        raise TranslateError(f"einsum {equation!r} of {len(operands)} operand(s)")
    kept = [_kept(term, operand.shape) for term, operand in zip(terms, operands)]
    out = _kept(output, shape)
    texts = ", ".join(fill(o).text for o in operands)
    return Value(f'einsum("{",".join(kept)}->{out}", {texts})', shape)


def _kept(term: str, shape: tuple) -> str:
    """The subscript letters of the axes longer than 1."""
    return "".join(letter for letter, d in zip(term, shape) if d != 1)


def pieces(step):
    """chunk, split, split_with_sizes, unbind: the parts along one axis, each a range of it (`X[0:2, :]`)."""
    a = step.tensor(0)
    name = str(step.node.target).split(".")[1]
    axis = step.arg(1 if name == "unbind" else 2, "dim", 0) % len(a.shape)
    parts, start = [], 0
    for shape in step.shapes:
        end = start + (1 if name == "unbind" else shape[axis])
        parts.append(_range(a, axis, start, end, tuple(shape)))
        start = end
    return parts


def _range(a: Value, axis: int, start: int, end: int, shape: tuple) -> Value:
    """The positions start..end-1 of `a` along the framework's `axis`, written as a range of gradlang's axis."""
    if (start, end) == (0, a.shape[axis]):
        return Value(a.text, shape, a.prec, a.scalar, number=a.number)
    if end - start == 1:
        return ops.reshape(ops.index(a, axis, start, shape), shape)
    x = fill(a)
    where = gradlang_axis(a.shape, axis)  # the axes after it are left out of the index (NumPy's X[:, :, 0:2])
    return Value(f"{wrap(x, ATOM)}[{':, ' * where}{start}:{end}]", shape)
