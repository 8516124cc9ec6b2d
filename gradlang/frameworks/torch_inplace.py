"""In-place PyTorch operations (`x += y`, `Q /= Q.sum(0)`, `div_`, `clamp_`, `ReLU(inplace=True)`) made functional.

torch.export keeps `aten.div_` and friends in the graph it gives without
decompositions. Its own functionalisation (`ExportedProgram.run_decompositions`)
would remove them, but it also inlines every `with torch.no_grad():` region
without a trace of it (torch 2.13), and a region is a stop: so the graph is
read as exported, and an in-place operation is written as its functional
twin (`div_` as `div`), whose result is the new value of the tensor it wrote.

Which nodes a write changes is read from the tensors themselves: the walker
runs every node at the example point on real tensors, so an in-place result
*is* the tensor it wrote (the same object), and a view shares its storage.
Every node that is that object takes the new value; another view of the same
storage read after the write (the base of `advantages[t] = …`) takes it at the
entries the write reached, found from the storage positions of both tensors.
Through a detached alias (`buf.data.mul_(…)`) the base gets no gradient.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import numpy as np

from gradlang.frameworks import ops
from gradlang.frameworks.program import TranslateError, Value, Writer, constant, fill
from gradlang.frameworks.torch_lines import own_line, region_where, where


def written(node) -> int | None:
    """The position of the argument an in-place operation writes (0 for relu_, div_, add_), else None."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return None
    for i, argument in enumerate(schema.arguments):
        info = argument.alias_info
        if info is not None and info.is_write and not argument.kwarg_only:
            return i
    return None


def functional(name: str) -> str:
    """The functional twin of an in-place operation's name: relu_ -> relu, div_ -> div, copy_ -> copy."""
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def rebind(node, name: str, env: dict, at: dict, traced: set, writer: Writer) -> None:
    """After `node` (the in-place operation `name`) wrote its tensor: every node that is the same tensor reads
    the new value, and so does every other view of its storage read later (the base of `advantages[t] = …`),
    at the entries the write reached. Through a detached alias (`buffer.data.mul_(…)`) the base takes the new
    value without its gradient: a constant base reads its new numbers, a traced one old + sg(new - old)."""
    tensor = at[node.args[written(node)]]
    for other in [n for n in at if at[n] is tensor]:
        env[other] = env[node]
        if node in traced:
            traced.add(other)
    detached = _through_detach(node.args[written(node)], at)
    for other in _views_read_later(node, tensor, at):
        if detached and other not in traced:  # its new numbers, a constant (torch records no history through .data)
            array = at[other].detach().numpy()
            env[other] = constant(array, tuple(array.shape))
            continue
        new = writer.bind(_through_view(name, env[other], env[node], at[other], tensor), force=True)
        if new is env[other]:
            continue
        if detached:
            step = writer.stop(ops.binary("-", new, env[other], new.shape), where(node), f"in-place {name} "
                               "through .data (or .detach())")
            new = writer.bind(ops.binary("+", env[other], step, new.shape), force=True)
        elif node in traced and other.op == "placeholder" and other not in traced:
            raise TranslateError(f"an in-place {name} writes a value with a gradient into a view of a constant "
                                 f"input ({other.name}); write it out of place (x = x.op(…))")
        env[other] = new
        traced.update([other] if node in traced else [])


def _through_detach(arg, at: dict) -> bool:
    """Whether the written tensor is a view taken through a detach (`.data` is traced as detach): up its chain
    of views (the nodes sharing its storage), one is a detach."""
    storage = _storage(at.get(arg))
    while hasattr(arg, "op") and arg.op == "call_function" and _storage(at.get(arg)) == storage:
        if "detach" in str(arg.target) or "alias" in str(arg.target):
            return True
        arg = arg.args[0] if arg.args else None
    return False


def _views_read_later(node, tensor, at: dict) -> list:
    """The other nodes whose values share the written tensor's storage and are read after the write."""
    storage = _storage(tensor)
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    here = order.get(node, -1)
    return [other for other, value in at.items() if storage is not None and value is not tensor
            and _storage(value) == storage and any(order.get(user, -1) > here for user in other.users)]


def _through_view(name: str, old: Value, new: Value, view, tensor) -> Value:
    """The value of `view` (another view of the written storage) after the write: each of its entries the
    write reached reads the written tensor's entry there, the others their old value. Written as a pick from
    concat([old, new]) flattened: the positions are the storage's, constants of the traced point."""
    if view.dtype != tensor.dtype:
        raise TranslateError(f"an in-place {name} writes a tensor that another view of a different dtype "
                             "reads after the write; write it out of place (x = x.op(…))")
    where, written_at = _positions(view), _positions(tensor)
    if not np.isin(where, written_at).any():
        return old  # a view of other entries (advantages[0] after advantages[1] = …)
    if np.array_equal(where, written_at):
        return ops.reshape(new, tuple(view.shape))  # the same entries (a buffer under `.data`)
    slot = {int(p): k for k, p in enumerate(written_at.reshape(-1))}
    picks = [view.numel() + slot[int(p)] if int(p) in slot else i for i, p in enumerate(where.reshape(-1))]
    return ops.picked(_flat_concat(old, new), picks, tuple(view.shape))


def _positions(value):
    """The storage position of every entry of a tensor (its strides and offset applied to 0, 1, 2, …)."""
    import torch

    size = value.untyped_storage().nbytes() // value.element_size()
    return torch.arange(size).as_strided(value.shape, value.stride(), value.storage_offset()).numpy()


def _flat_concat(a: Value, b: Value) -> Value:
    """concat([a flattened, b flattened], 0): the entries a pick reads after a write through a view."""
    parts = []
    for part in (a, b):
        n = int(np.prod(part.shape)) if part.shape else 1
        text = fill(ops.reshape(part, (n,))).text
        parts.append((f"expand_dims({text}, 0)" if n == 1 else text, n))
    return Value(f"concat([{', '.join(t for t, _ in parts)}], 0)", (sum(n for _, n in parts),))


def written_without_grad(writer: Writer, pairs: list, graph, inner_env: dict, env: dict, traced: set) -> dict:
    """The traced inputs a no_grad region wrote in place (SwAV's prototypes, `weight.copy_(normalize(weight.data))`),
    each as `old + stop_gradient(new - old)`, by the outer node: torch's later reads are the same tensor at its
    new value, differentiated as the tensor itself (derivative 1 by the leaf, not 0 as a stopped new value).
    `pairs` are the region's (placeholder, outer node); the outer node reads the same from here on. A constant
    (a buffer) written there is its new value, as before."""
    found = {}
    for inner, outer in pairs:
        old, new = env[outer], inner_env[inner]
        write = next((n for n in graph.nodes if written(n) is not None and inner_env.get(n) is new), None)
        if outer not in traced or new is old or write is None:
            continue
        step = writer.stop(ops.binary("-", new, old, old.shape), region_where(write),
                           f"{_written_as(write)} in a torch.no_grad() region")
        found[outer] = env[outer] = writer.bind(ops.binary("+", old, step, old.shape), force=True)
    return found


def _written_as(write) -> str:
    """How the source wrote an in-place write: `t.data = v` is traced as copy_ (data_traced), but the reader
    wrote an assignment, so the stop's comment names the assignment (MoCo v3's momentum update)."""
    if re.search(r"\.data\s*=(?!=)", own_line(write)):
        return "an assignment to .data"
    target = str(write.target)
    return f"in-place {target.split('.')[1] if '.' in target else target}"


def _storage(value):
    """The address of a tensor's storage (None for anything else): views of one tensor share it."""
    try:
        address = value.untyped_storage().data_ptr() if hasattr(value, "untyped_storage") else None
    except RuntimeError:  # a tensor without storage
        return None
    return address or None  # empty tensors share the address 0


@contextmanager
def data_traced(torch):
    """While exporting, `t.data` reads as `t.detach()` and `t.data = v` writes as `t.copy_(v)` without a gradient.

    Both are what `.data` means (the same storage, no autograd history), but non-strict torch.export cannot
    trace the attribute itself: MoCo v3's momentum update (`param_m.data = param_m.data * m + …`) and SwAV's
    prototypes normalised in place (`w = weight.data.clone()`) left a fake tensor among its constants."""
    before = torch.Tensor.data

    def written_data(tensor, value):
        with torch.no_grad():
            tensor.copy_(value)

    torch.Tensor.data = property(lambda tensor: tensor.detach(), written_data)
    try:
        yield
    finally:
        torch.Tensor.data = before
