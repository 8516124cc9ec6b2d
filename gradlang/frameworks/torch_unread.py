"""What the loss reads in an exported graph: the nodes the walk translates (issue #39).

torch.export leaves unread nodes in its graph: an unread softmax, and a `.detach()` or a no_grad region that
only an unread node reads. Written, such a stop is one the ledger cannot place (no path of the loss meets it),
and the program computes what nothing reads. So the walk translates only the nodes the outputs read (found by
reachability from the output, as fx's eliminate_dead_code would, but that keeps detach and the regions as
impure), and a stop left out is named in a header note with its line, as the JAX importer names one
(trace_jax `_read_by_the_loss`). In-place writes and seeded random draws are kept whether read or not: the
walk runs each node at the example point, and a skipped draw would shift the generator for the draws after it.
"""

from __future__ import annotations

from gradlang.frameworks.torch_inplace import written
from gradlang.frameworks.torch_lines import region_where, where


def read_by_the_outputs(graph, root, outputs_read: set | None = None) -> set:
    """The nodes of `graph` that the outputs (those at the indices in `outputs_read`; all when None) read,
    with what every in-place write and random draw reads."""
    outs = graph.find_nodes(op="output")[0].args[0]
    roots = [o for i, o in enumerate(outs) if hasattr(o, "op") and (outputs_read is None or i in outputs_read)]
    roots += [n for n in graph.nodes if n.op == "call_function" and _must_run(n, root)]
    live, stack = set(), roots
    while stack:
        node = stack.pop()
        if node not in live:
            live.add(node)
            stack.extend(node.all_input_nodes)
    return live


def outputs_read(node, live: set) -> set | None:
    """The indices of a region's outputs that a node in `live` reads (None: read whole, all of them)."""
    read = set()
    for user in node.users:
        if user in live:
            if not (user.op == "call_function" and "getitem" in str(user.target) and isinstance(user.args[1], int)):
                return None
            read.add(user.args[1])
    return read


def _must_run(node, root) -> bool:
    if written(node) is not None:
        return True
    if "wrap_with_set_grad_enabled" in str(node.target):
        body = getattr(root, node.args[1].target, None) if hasattr(node.args[1], "target") else None
        return body is None or any(n.op == "call_function" and _must_run(n, body) for n in body.graph.nodes)
    return any(getattr(tag, "name", "") == "nondeterministic_seeded" for tag in getattr(node.target, "tags", ()))


def reaches(node, traced: set, memo: dict) -> bool:
    """Whether a float value computed from a traced leaf flows into `node` (a stop of it would be a stop)."""
    if node in memo:
        return memo[node]
    memo[node] = False
    value = node.meta.get("val")
    if node in traced:
        memo[node] = True
    elif node.op == "call_function" and not (hasattr(value, "is_floating_point") and not value.is_floating_point()):
        memo[node] = any(reaches(a, traced, memo) for a in node.all_input_nodes)
    return memo[node]


def name_unread_stops(writer, unread: list, stops: list, traced: set, root) -> None:
    """A header note naming each .detach(), .item() and no_grad region the loss never reads, with its line
    (`stops`: the (Where, what) of unread outputs of regions the walk ran): every stop of the source is in the
    program, with its ledger entry, or named here."""
    memo, places = {}, list(stops)
    for node in unread:
        name = str(node.target).split(".")[1] if str(node.target).startswith("aten.") else str(node.target)
        if name in ("detach", "item") and reaches(node.args[0], traced, memo):
            places.append((where(node), f".{name}()"))
        elif "wrap_with_set_grad_enabled" in str(node.target) and not node.args[0] and \
                any(reaches(a, traced, memo) for a in node.args[2:] if hasattr(a, "op")):
            body = getattr(root, node.args[1].target)
            outs = [o for o in body.graph.find_nodes(op="output")[0].args[0] if hasattr(o, "op")]
            places.append((region_where(outs[0]) if outs else where(node), "torch.no_grad() region"))
    if places:
        named = ", ".join(dict.fromkeys(f"{at} ({what})" for at, what in places))
        writer.note(f"the stop_gradient at {named} is left out: the loss never reads its value (what no result "
                    "of the loss reads is not part of the program, as the JAX importer leaves it out)")
