"""--from-torch: a PyTorch module (or function) exported with torch.export, written as gradlang.

The graph is taken as torch.export.export gives it, without
run_decompositions: decompositions would turn `aten.detach` into an alias
and fx's symbolic_trace drops no_grad regions, and either would lose a stop.
Here `aten.detach` and every output of a `wrap_with_set_grad_enabled(False,
…)` region (a `with torch.no_grad():` block) become stop_gradient, each with
the user's file and line from the node's stack trace. The module's
parameters are declared by their names (online.weight -> online_weight), as
are the float inputs; an integer input (a class label) is fixed at its
value. Each node is run at the example point too, so that a piecewise-constant
result (argmin, an index) is written as its value there.
"""

from __future__ import annotations

import inspect
import operator
import types
import re
from dataclasses import dataclass

import numpy as np

from gradlang.frameworks import ops
from gradlang.frameworks.loading import called, framework
from gradlang.frameworks.program import Origin, TranslateError, Value, Where, Writer, array_text, constant, number, placed
from gradlang.frameworks.torch_inputs import float64, is_number, numbers_fixed, shared, unvalidated
from gradlang.frameworks.torch_items import exported
from gradlang.frameworks.torch_inplace import data_traced, functional, rebind, written, written_without_grad
from gradlang.frameworks.torch_rules import RULES
from gradlang.frameworks.torch_lines import every_frame, region_where
from gradlang.frameworks.torch_lines import where as _where
from gradlang.frameworks.torch_unread import name_unread_stops, outputs_read, reaches, read_by_the_outputs
from gradlang.frameworks.tracing import Leaf, Traced, key_name, positional, scalar

APPLY = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\.apply\(")
WRITERS = ("index_put", "index_put_", "scatter", "scatter_")  # a one-hot at an argmax: torch_onehot.py
COMPARISONS = ("gt", "ge", "lt", "le", "eq", "ne")  # a bool of traced values: fixed, its condition kept aside
CASTS = ("_to_copy", "to")
SHAPE_ONLY = ("zeros_like", "ones_like", "full_like", "empty_like", "new_zeros", "new_ones", "new_full", "new_empty",
              "new_empty_strided", "arange")


def module_of(target, spec: str, writer: Writer):
    """The nn.Module to export (a class is instantiated, a function wrapped), its forward's parameters, a name."""
    torch = framework("torch")
    if isinstance(target, type) and issubclass(target, torch.nn.Module):
        with float64(torch):
            target = called(f"{spec}()", target)
    if isinstance(target, torch.nn.Module):
        module = target.double()
        forward = module.forward
    elif callable(target):
        module, forward = _Wrapped(torch, target), target
    else:
        raise TranslateError(f"--from-torch: {spec} is neither an nn.Module nor a function")
    try:
        names = positional(inspect.signature(forward))
    except (TypeError, ValueError):
        raise TranslateError(f"cannot read the parameters of {spec}'s forward") from None
    return module, names, "loss"


def _Wrapped(torch, function):
    """A module whose forward calls the user's function. torch.export records only frames named `forward`, so
    the function is called through a copy of itself named forward: its operations keep the user's lines."""
    inner = _as_forward(function)

    class Wrapped(torch.nn.Module):
        def forward(self, *args):
            return inner(*args)

    return Wrapped()


def _as_forward(function):
    """The same function (code, globals, defaults, closure) under the name forward; a callable without code as is."""
    code = getattr(function, "__code__", None)
    if code is None or not isinstance(function, types.FunctionType):
        return function
    renamed = types.FunctionType(code.replace(co_name="forward"), function.__globals__, "forward",
                                 function.__defaults__, function.__closure__)
    renamed.__kwdefaults__ = function.__kwdefaults__
    return renamed


def trace(module, args: tuple, names: list, writer: Writer, label: str) -> Traced:
    """Export `module` at the example arguments and translate its graph; declarations go to `writer`."""
    torch = framework("torch")
    numbers = {i: a for i, a in enumerate(args) if is_number(a)}
    for i, a in numbers.items():
        writer.note(f"{names[i]} = {a!r} is a Python number: a constant of the program, as torch.export fixes it")
    names = [n for i, n in enumerate(names) if i not in numbers]
    args = tuple(_tensor(torch, a) for i, a in enumerate(args) if i not in numbers)
    with float64(torch):
        with every_frame(torch), numbers_fixed(module, numbers, len(args) + len(numbers)), unvalidated(torch), \
                data_traced(torch):
            reads = []
            program = called("exporting with torch.export.export", lambda: exported(
                torch, module, args, lambda: torch.export.export(module, args), reads))
        for file, line, value in reads:
            writer.note(f"an integer read out of a tensor at {file}:{line} is {value!r} at the traced point (fixed: "
                        "torch.export cannot trace a position, count or branch read from a tensor)")
        walker = _Walker(torch, writer, program.graph_module)
        leaves = walker.inputs(program, args, names)
        walker.seeded = torch.random.get_rng_state()  # the autograd run draws the same numbers (_autograd)
        graph = program.graph_module.graph
        outs = walker.run(graph, walker.env, walker.at, stopped=False,
                          live=read_by_the_outputs(graph, program.graph_module))
        name_unread_stops(walker.writer, walker.unread, walker.unread_stops, walker.traced, walker.root)
    loss = outs[0] if isinstance(outs, (list, tuple)) else outs
    if isinstance(outs, (list, tuple)) and len(outs) != 1:
        raise TranslateError(f"the module returns {len(outs)} values: gradlang translates a module returning one loss")
    value, point = loss
    number = scalar(point.detach().numpy() if hasattr(point, "detach") else point, label)
    return Traced(value, number, leaves, _autograd(torch, program, walker))


def _autograd(torch, program, walker: "_Walker") -> list:
    """torch.autograd's gradient at the point by each declared leaf, through the exported graph run node by node
    (fx.Interpreter: the operations the program is written from, an autograd.Function as its forward, as the
    program says; no code is generated from the user's names, as program.module() would)."""
    placeholders = [n for n in program.graph_module.graph.nodes if n.op == "placeholder"]
    with float64(torch):
        fresh = {n: _fresh(torch, walker.start[n]) for n in placeholders if n not in walker.same}
        inputs = [fresh[walker.same.get(n, n)] for n in placeholders]
        leaves = [fresh[node] for node in placeholders if node in walker.traced and node not in walker.same]
        for leaf in leaves:
            leaf.requires_grad_(True)

        def differentiate():
            torch.random.set_rng_state(walker.seeded)  # a draw in the forward (torch.randn) as the walk drew it
            # each leaf through a clone: an input the forward writes in place (obs /= 255.0) is no leaf written
            out = torch.fx.Interpreter(program.graph_module).run(
                *[v.clone() if getattr(v, "requires_grad", False) else v for v in inputs])
            loss = out[0] if isinstance(out, (list, tuple)) else out
            return torch.autograd.grad(loss, leaves, allow_unused=True) if leaves else ()

        grads = called("differentiating the module with torch.autograd", differentiate)
    return [np.zeros(tuple(leaf.shape)) if g is None else g.detach().numpy() for g, leaf in zip(grads, leaves)]


def _fresh(torch, value):
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _tensor(torch, value):
    """An example argument as a tensor: floats in float64, integers as they are."""
    tensor = value if isinstance(value, torch.Tensor) else torch.as_tensor(np.asarray(value))
    return tensor.to(torch.float64) if tensor.is_floating_point() else tensor


@dataclass
class _Step:
    """What a rule sees: the node's arguments as Values or Python values, its output's shape(s)."""

    node: object
    walker: "_Walker"
    env: dict
    at: dict

    @property
    def shape(self) -> tuple:
        return tuple(self.at[self.node].shape)

    @property
    def shapes(self) -> list:
        return [tuple(t.shape) for t in self.at[self.node]]

    def shape_of(self, i: int) -> tuple:
        return tuple(self.walker.point(self.node.args[i], self.at).shape)

    def arg(self, i: int, name: str, default):
        given = self.node.args[i] if i < len(self.node.args) else self.node.kwargs.get(name, default)
        return self.walker.value(given, self.env, self.at)

    def tensor(self, i: int) -> Value:
        given = self.arg(i, "", None)
        return given if isinstance(given, Value) else number(given)

    @property
    def is_pair(self) -> bool:
        return isinstance(self.at[self.node], (tuple, list))

    def constant(self, i: int) -> Value:
        return _constant(self.at[self.node][i])

    def labelled(self):
        """The positions a gather reads: the node run again with its input replaced by 0, 1, 2, … (float64)."""
        torch = self.walker.torch
        args = [self.walker.point(a, self.at) for a in self.node.args]
        source = args[0]  # the tensor read (embedding's weight, as every other gather's input, comes first)
        args[0] = torch.arange(source.numel(), dtype=torch.float64).reshape(source.shape)
        kwargs = {k: self.walker.point(v, self.at) for k, v in self.node.kwargs.items()}
        with torch.no_grad():
            return called("reading a gather's positions", lambda: self.node.target(*args, **kwargs)).numpy()

    def is_index(self, i: int) -> bool:
        return not self.walker.point(self.node.args[i], self.at).is_floating_point()

    def one_hot(self, i: int, shape: tuple) -> Value:
        """Class labels as a constant one-hot matrix (or vector) at the logits' shape."""
        labels = self.walker.point(self.node.args[i], self.at).reshape(-1).tolist()
        rows = np.zeros((len(labels), shape[-1]))
        rows[np.arange(len(labels)), labels] = 1.0
        squeezed = rows.reshape(tuple(d for d in rows.shape if d != 1))
        if squeezed.ndim == 1:
            return Value(f"onehot({labels[0]}, {shape[-1]})", shape)
        return Value(array_text(squeezed.tolist()), shape)


class _Walker:
    """Walks an exported graph (and the no_grad regions it inlines), keeping each node's Value and value."""

    def __init__(self, torch, writer: Writer, root):
        self.torch, self.writer, self.root = torch, writer, root
        self.env, self.at, self.traced, self.custom = {}, {}, set(), set()
        self.before = None  # what an in-place operation's tensor held before it wrote it (scatter_ reads it)
        self.picked = set()  # argmax/argmin nodes of traced values: a one-hot written at one follows it
        self.start = {}  # each input's value before the walk (an in-place write changes the walk's own copy)
        self.seeded = None  # the generator's state when the walk starts
        self.same = {}  # a parameter's second exported name -> the placeholder of its first
        self.conditions = {}  # a comparison of traced values (a bool tensor, fixed) -> its condition as a Value
        self.unread = []  # nodes the loss never reads, not translated (torch_unread.py), in the walk's order
        self.unread_stops = []  # (Where, what): a stop the loss never reads, named in a note

    def inputs(self, program, args: tuple, names: list) -> list:
        """Declare the parameters and float inputs; fix everything else at its value."""
        flat = self.torch.utils._pytree.tree_flatten_with_path(args)[0]
        users = iter([(".".join([names[p[0].idx], *(key_name(e) for e in p[1:])]), v) for p, v in flat])
        placeholders = [n for n in program.graph_module.graph.nodes if n.op == "placeholder"]
        leaves, first = [], {}
        for node, spec in zip(placeholders, program.graph_signature.input_specs):
            path, value = self._input(program, spec, users)
            if spec.kind.name == "PARAMETER" and id(value) in first:
                shared(self, node, first[id(value)])
                continue
            first.setdefault(id(value), node)
            self.at[node], self.start[node] = value.detach().clone(), value.detach().clone()  # an in-place write
            if value.is_floating_point() and spec.kind.name in ("PARAMETER", "USER_INPUT"):
                leaf = Leaf.of(path, value.detach().numpy(), self.writer.taken)
                self.env[node] = self.writer.declare(leaf.name, leaf.shape, leaf.comment)
                self.traced.add(node)
                leaves.append(leaf)
            else:
                self.env[node] = _constant(value)
        return leaves

    def _input(self, program, spec, users):
        if spec.kind.name == "USER_INPUT":
            return next(users)
        if spec.kind.name in ("PARAMETER", "BUFFER"):
            return spec.target, program.state_dict[spec.target]
        if spec.kind.name == "CONSTANT_TENSOR":
            return spec.target, program.constants[spec.target]
        raise TranslateError(f"an exported input of kind {spec.kind.name}")

    def point(self, given, at: dict):
        if isinstance(given, (list, tuple)):
            return [self.point(g, at) for g in given]
        return at[given] if hasattr(given, "op") else given

    def value(self, given, env: dict, at: dict):
        if hasattr(given, "op"):
            return env[given]
        if isinstance(given, (list, tuple)):
            return [self.value(g, env, at) for g in given]
        return given

    def run(self, graph, env: dict, at: dict, stopped: bool, live: set):
        """Translate the nodes of `graph` in `live` (those the outputs read); an output not read is None."""
        for node in graph.nodes:
            if node.op == "output":
                return [(self.value(o, env, at), self.point(o, at)) if not hasattr(o, "op") or o in env
                        else (None, None) for o in node.args[0]]
            if node.op == "get_attr":
                env[node] = at[node] = getattr(self.root, node.target)
            elif node.op == "call_function" and node not in live:
                self.unread.append(node)
            elif node.op == "call_function":
                self._placed(node, env, at, live)
        raise TranslateError("the exported graph has no output")

    def _placed(self, node, env: dict, at: dict, live: set) -> None:
        """One node translated; an error without a place gets the node's line."""
        try:
            self._node(node, env, at, live)
        except TranslateError as error:
            where = _where(node)
            raise error if error.span is not None or where.line is None else placed(
                f"{node.target}: {error.message}", where) from None

    def _node(self, node, env: dict, at: dict, live: set) -> None:
        where = _where(node)
        self.writer.places.append((where.file, where.line, where.column, str(node.target)))
        self._custom_function(node, where)
        if node.target is operator.getitem:
            source, i = node.args
            env[node], at[node] = env[source][i], at[source][i]
            if source in self.traced:
                self.traced.add(node)
            return
        if "wrap_with_set_grad_enabled" in str(node.target):
            self._region(node, env, at, live)
            return
        args = [self.point(a, at) for a in node.args]
        kwargs = {k: self.point(v, at) for k, v in node.kwargs.items()}
        index = written(node)
        self.before = args[index].clone() if index is not None and hasattr(args[index], "clone") else None
        with self.torch.no_grad():
            at[node] = called(f"running {node.target} at the example point", lambda: node.target(*args, **kwargs))
        if at[node] is None:  # a check such as _assert_tensor_metadata: no value, nothing to write
            env[node] = None
            return
        env[node] = self._translate(node, env, at, where)
        if written(node) is not None and hasattr(node.args[written(node)], "op"):  # x += y: x is the result now
            rebind(node, _name(node), env, at, self.traced, self.writer)

    def _translate(self, node, env: dict, at: dict, where: Where):
        name = _name(node)
        inputs = [a for a in node.all_input_nodes if a in self.traced or (a in self.picked and name in WRITERS)]
        result = at[node]
        _refuse(name, [result, *(at[a] for a in node.all_input_nodes)], where, bool(inputs))
        if name in ("detach", "item"):  # .item() is a Python number: no gradient flows through it, as .detach()
            self.traced.add(node)
            kept = env[node.args[0]] if name == "detach" else ops.reshape(env[node.args[0]], ())
            return self.writer.stop(kept, where, f".{name}()") if inputs else kept
        if _is_draw(node, name, result, bool(inputs)):
            self.traced.add(node)  # what is computed from it is written from its name, not frozen into numbers
            return self.writer.draw(name.strip("_"), f"torch.{name}", result.detach().numpy(), where)
        if name in SHAPE_ONLY:
            return _constant(result)  # ones_like(x) and friends read x's shape, not its values
        if not inputs and isinstance(result, (list, tuple)):  # broadcast_tensors of constants: a list of them
            return [_constant(part) for part in result]
        if name in CASTS and node.args and node.args[0] in self.conditions and result.is_floating_point():
            return self._mask(node, self.conditions[node.args[0]], at[node], where)
        if not inputs or (hasattr(result, "is_floating_point") and not result.is_floating_point()):
            if inputs and name in COMPARISONS:  # kept beside its value, for a cast to float that reads it
                self.conditions[node] = RULES[name](_Step(node, self, env, at))
            if inputs and name in ("argmax", "argmin"):
                self.picked.add(node)  # a one-hot written at it is onehot(argmin(…)) (torch_onehot.py)
                self.writer.fixed(name, where, f"{name} at {where} is {result.tolist()} at the "
                                               "traced point (piecewise constant: derivative 0)")
            return _constant(result)
        self.traced.add(node)
        rule = RULES.get(functional(name) if written(node) is not None else name)
        if rule is None:
            raise placed(f"no translation for the PyTorch operation {node.target}", where)
        try:
            value = rule(_Step(node, self, env, at))
        except TranslateError as error:
            raise placed(f"{node.target}: {error.message}", where) from None
        if isinstance(value, list):
            return value
        if result.dtype == self.torch.float32:
            value = ops.in_float32(value, name)
        return self.writer.bind(value, len(node.users), origin=Origin(str(node.target), where, _array(result)))

    def _mask(self, node, condition: Value, result, where: Where) -> Value:
        """A comparison of traced values cast to float (FixMatch's max_probs.ge(threshold).float(), IQL's
        (u < 0).float()): where(c, 1.0, 0.0), the same numbers as the mask fixed at the point, and what it
        compares stays in the loss (derivative 0), so a stop it reads keeps its ledger entry."""
        self.traced.add(node)
        value = ops.where(condition, number(1.0), number(0.0), tuple(result.shape))
        if result.dtype == self.torch.float32:
            value = ops.in_float32(value, "where")
        return self.writer.bind(value, len(node.users), origin=Origin(str(node.target), where, _array(result)))

    def _custom_function(self, node, where: Where) -> None:
        """An autograd.Function is exported as its forward: say so once, since its own backward is not read."""
        for name in APPLY.findall(node.meta.get("stack_trace") or ""):
            if name not in self.custom:
                self.custom.add(name)
                self.writer.suspects.append((f"{name}.apply", where))
                self.writer.note(f"{name}.apply (at {where}) is a torch.autograd.Function: its backward is not read, "
                                 "the program differentiates its forward")

    def _region(self, node, env: dict, at: dict, live: set) -> None:
        """A wrap_with_set_grad_enabled region inlined; with grad disabled, each output read is stopped."""
        enabled, submodule, *args = node.args
        body = env[submodule]
        read = outputs_read(node, live)
        inner_env, inner_at = {}, {}
        placeholders = [n for n in body.graph.nodes if n.op == "placeholder"]
        for inner, outer in zip(placeholders, args):
            inner_env[inner], inner_at[inner] = env[outer], at[outer]
            if outer in self.traced:
                self.traced.add(inner)
        outs = self.run(body.graph, inner_env, inner_at, stopped=not enabled,
                        live=read_by_the_outputs(body.graph, body, read))
        pairs = list(zip(placeholders, args))
        kept_leaves = {} if enabled else written_without_grad(self.writer, pairs, body.graph, inner_env, env,
                                                                   self.traced)
        results = []
        for i, ((value, point), out_node) in enumerate(zip(outs, body.graph.find_nodes(op="output")[0].args[0])):
            if read is not None and i not in read:
                if not enabled and reaches(out_node, self.traced, {}):  # an output only unread nodes read
                    self.unread_stops.append((region_where(out_node), "torch.no_grad() region"))
                results.append(None)
                continue
            kept = next((through for outer, through in kept_leaves.items() if at[outer] is point), None)
            if kept is not None:
                value = kept
            elif not enabled and out_node in self.traced:
                value = self.writer.stop(value, region_where(out_node), "torch.no_grad() region")
            results.append(value)
        env[node], at[node] = results, [point for _, point in outs]
        self.traced.add(node)


def _name(node) -> str:
    """An ATen operation's name without its overload (div_ of aten.div_.Tensor)."""
    return str(node.target).split(".")[1] if str(node.target).startswith("aten.") else str(node.target)


def _is_draw(node, name: str, result, traced: bool) -> bool:
    """A random draw (torch.randn, rand_like(x), a distribution's sample): an operation tagged as seeded by the
    generator whose float values depend on no traced value (a *_like reads only its input's shape)."""
    tags = getattr(node.target, "tags", ())
    seeded = any(getattr(tag, "name", "") == "nondeterministic_seeded" for tag in tags)
    floating = hasattr(result, "is_floating_point") and result.is_floating_point()
    return seeded and floating and (not traced or name.endswith("_like"))


def _refuse(name: str, values: list, where: Where, traced: bool) -> None:
    """Complex numbers (an FFT's) have no gradlang spelling."""
    tensors = [v for v in values if hasattr(v, "is_complex")]
    if "fft" in name or any(t.is_complex() for t in tensors):
        raise placed(f"{name}: a complex value: gradlang's values are real numbers (an FFT, a complex dtype cannot be written)", where)


def _array(value):
    """A node's value at the point as a NumPy array (None when it is not one tensor): a copy, since a later
    in-place operation (ReLU(inplace=True)) writes the tensor itself, and the check reads this value after."""
    return value.detach().numpy().copy() if hasattr(value, "detach") else None


def _constant(value) -> Value:
    """A value fixed at the example point: a number, or a tensor written as a literal."""
    array = value.detach().to("cpu").numpy() if hasattr(value, "detach") else np.asarray(value)
    if array.dtype == object:
        raise TranslateError("a value that is not a tensor or a number")
    return constant(array, tuple(array.shape))
