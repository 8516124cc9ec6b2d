"""From MODULE:NAME to the text of a gradlang program: the steps both frameworks share.

The example arguments come from --shapes (drawn at a fixed seed) or from the
user's own function (--example-args MODULE:FUNCTION, returning a tuple of
positional arguments or a dict by parameter name). The tracer
(trace_jax.py, trace_torch.py) writes the declarations and bindings; this
module writes the header (what was traced, how names map), the loss, and the
statements that run: the loss and its gradient by every declared leaf at the
traced point, or `explain grad(loss, …)` for the leaves asked for.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from gradlang.frameworks import shapes_arg
from gradlang.frameworks.loading import called, fenced, framework, load
from gradlang.frameworks.loops import note_loops
from gradlang.frameworks.program import Line, TranslateError, Value, Writer, array_text
from gradlang.frameworks.verify import verify


@dataclass
class Leaf:
    """One leaf of the example arguments: its key path, gradlang name, value, and whether it is traced."""

    path: str
    name: str
    value: object
    shape: tuple
    is_float: bool

    @classmethod
    def of(cls, path: str, value, taken: set) -> "Leaf":
        array = np.asarray(value)
        is_float = np.issubdtype(array.dtype, np.floating)
        name = shapes_arg.gradlang_name(path, taken) if is_float else path
        return cls(path, name, array.astype(np.float64) if is_float else value, tuple(array.shape), is_float)

    @property
    def comment(self) -> str:
        return "" if self.name == self.path else f"{self.path}"

    def point(self) -> str:
        """The value at the traced point as a gradlang literal (axes of length 1 dropped)."""
        array = np.asarray(self.value, dtype=np.float64)
        return array_text(array.reshape(tuple(d for d in array.shape if d != 1)).tolist())


def key_name(entry) -> str:
    """One step of a pytree key path (a dict key, an attribute, an index) as text."""
    for attribute in ("key", "name", "idx"):
        if hasattr(entry, attribute):
            return str(getattr(entry, attribute))
    return str(entry)


def scalar(point, name: str) -> float:
    """The loss at the traced point, which must be one number."""
    array = np.asarray(point)
    if array.size != 1:
        raise TranslateError(f"{name} returns shape {array.shape}: gradlang translates a function returning one loss "
                             "(a scalar)")
    return float(array.reshape(()))


@dataclass
class Traced:
    """What a tracer gives back: the loss as a Value, its value at the point, the declared leaves, and the
    framework's own loss and gradient by each of them there (to check the program against)."""

    loss: Value
    value: float
    leaves: list
    gradients: list


def translate(kind: str, spec: str, shapes: str | None = None, example_args: str | None = None,
              explain_wrt: tuple = (), progress=None) -> str:
    """The gradlang program of the JAX function or PyTorch module `spec` (MODULE:NAME) at the example point.

    `progress(text)`, when given, is told each step as it starts (the CLI shows it on a terminal's stderr:
    tracing a large model and checking its program can take a while)."""
    progress = progress or (lambda text: None)
    module = framework(kind)
    if kind == "jax":  # before the user's module and example arguments are made: their arrays are float64 too
        module.config.update("jax_enable_x64", True)
    progress(f"tracing {spec} with {'jax.make_jaxpr' if kind == 'jax' else 'torch.export.export'}")
    with fenced(module if kind == "torch" else None, shapes_arg.SEED):
        writer, loss, traced = _traced(kind, spec, shapes, example_args)
    tail = _tail(loss, traced.leaves, writer)
    program = writer.text(tail)
    name = "JAX" if kind == "jax" else "PyTorch"
    progress(f"checking the translation ({writer.bindings + 1} bound statements) against {name} at the traced point")
    verify(program, writer, [traced.value, *traced.gradients], spec, name)
    return writer.text(_explained(loss, traced.leaves, explain_wrt)) if explain_wrt else program


def _traced(kind: str, spec: str, shapes: str | None, example_args: str | None):
    """The user's function traced into a Writer: (writer, the loss's name, what the tracer gives back)."""
    flag = f"--from-{kind}"
    target = load(spec, flag)
    writer = Writer()
    function, names, label = _callable(kind, target, spec, writer)
    args, names = _arguments(function, names, shapes, example_args, flag)
    shapes_arg.check_size(shapes_arg.shapes_in(args), flag)
    loss = shapes_arg.gradlang_name(label, writer.taken)
    traced = _tracer(kind)(function, args, names, writer, label)
    note_loops(writer)
    writer.final(loss, traced.loss, f"the value of {spec} (the framework gives {traced.value!r} at the point)")
    writer.header[:0] = _header(kind, spec, traced.leaves, writer.stops)
    if any("float32(" in line.text for line in writer.body):
        writer.note("float32 casts are kept as float32(…), derivative 1; the framework's backward rounds what "
                    "crosses them to float32, so the loss and gradients are checked to float32's precision (1e-6)")
    return writer, loss, traced


def _callable(kind: str, target, spec: str, writer: Writer):
    """The function to trace, the names of its positional parameters, and a name for the loss."""
    if kind == "torch":
        from gradlang.frameworks.trace_torch import module_of

        return module_of(target, spec, writer)
    if not callable(target):
        raise TranslateError(f"--from-jax: {spec} is not a function")
    return target, _parameters(target, spec), spec.rpartition(":")[2].rpartition(".")[2]


def _parameters(function, spec: str) -> list:
    """The names of the positional parameters; a `*args` parameter last, as `*args`."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise TranslateError(f"cannot read the parameters of {spec}") from None
    return positional(signature)


def positional(signature) -> list:
    """The positional parameters' names (self left out), then `*NAME` for a parameter taking the rest."""
    names = [p.name for p in signature.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"]
    rest = [p.name for p in signature.parameters.values() if p.kind == p.VAR_POSITIONAL]
    return names + [f"*{name}" for name in rest]


def _tracer(kind: str):
    if kind == "jax":
        from gradlang.frameworks.trace_jax import trace
    else:
        from gradlang.frameworks.trace_torch import trace
    return trace


def _arguments(function, names: list, shapes: str | None, example_args: str | None, flag: str) -> tuple:
    """The example arguments in the order of the parameters, and the parameters' names (a *args one numbered)."""
    if (shapes is None) == (example_args is None):
        raise TranslateError(f"{flag} needs example arguments: --shapes 'x=3 W=2,3' or --example-args MODULE:FUNCTION")
    if shapes is not None:
        given = shapes_arg.example(shapes_arg.parse(shapes))
    else:
        made = load(example_args, "--example-args")
        given = called(f"--example-args {example_args}", made) if callable(made) else made
    fixed = [n for n in names if not n.startswith("*")]
    rest = next((n[1:] for n in names if n.startswith("*")), None)
    if isinstance(given, dict):
        return _by_name(given, fixed, rest, flag)
    values = tuple(given) if isinstance(given, (tuple, list)) else (given,)
    if len(values) > len(fixed) and rest is None:
        raise TranslateError(f"{flag}: {len(values)} example arguments for {len(fixed)} parameter(s) "
                             f"({', '.join(fixed) or 'none'})")
    return values, fixed + [f"{rest}_{i}" for i in range(len(values) - len(fixed))]


def _by_name(given: dict, fixed: list, rest: str | None, flag: str) -> tuple:
    """Arguments given by name; names that are no parameter go to a *args parameter, in the order given."""
    unknown = [key for key in given if key not in fixed]
    if unknown and rest is None:
        raise TranslateError(f"{flag}: the function has no parameter {unknown[0]} (its parameters: "
                             f"{', '.join(fixed) or 'none'})")
    missing = [n for n in fixed if n not in given]
    if missing:
        raise TranslateError(f"{flag}: no example value for the parameter {missing[0]}")
    return tuple(given[n] for n in fixed + unknown), fixed + unknown


def _header(kind: str, spec: str, leaves: list, stops: int) -> list:
    """The first comments: what was traced and how, how many stops were kept, how the leaves are named."""
    how = "jax.make_jaxpr" if kind == "jax" else "torch.export.export (no decompositions)"
    mapping = "; ".join(f"{leaf.path} -> {leaf.name}" for leaf in leaves if leaf.path != leaf.name)
    text = f"{spec} traced with {how} in float64; {stops} stop(s) kept"
    return [Line("", text), *([Line("", f"names: {mapping}")] if mapping else [])]


def _explained(loss: str, leaves: list, explain_wrt: tuple) -> list:
    """The statements that run with --explain-wrt: explain the gradient by each leaf asked for."""
    chosen = [leaf for leaf in leaves if any(leaf.path == p or leaf.path.startswith(p + ".") for p in explain_wrt)]
    if not chosen:
        raise TranslateError(f"--explain-wrt {' '.join(explain_wrt)}: no such leaf (the leaves: "
                             f"{', '.join(leaf.path for leaf in leaves)})")
    return [Line(f"explain grad({loss}, {leaf.name})", kind="explain") for leaf in chosen]


def _tail(loss: str, leaves: list, writer: Writer) -> list:
    """The statements that run: the traced point, the loss there and its gradient by each leaf."""
    drawn = [Leaf(name, name, value, tuple(np.shape(value)), True) for name, value in writer.draws]
    named = [(leaf, shapes_arg.gradlang_name(f"{leaf.name}_at", writer.taken)) for leaf in [*leaves, *drawn]]
    lines = [Line("", "the traced point" + (" (and the random draws' values there)" if drawn else "")),
             *(Line(f"{at} = {leaf.point()}", kind="assignment", name=at) for leaf, at in named)]
    point = writer.point = ", ".join(f"{leaf.name} = {at}" for leaf, at in named)
    lines += [Line("", "the loss and its gradient by each leaf there"), Line(f"{loss} at {point}", kind="show")]
    if not leaves:
        return lines
    wrt = leaves[0].name if len(leaves) == 1 else "[" + ", ".join(leaf.name for leaf in leaves) + "]"
    return lines + [Line(f"grad({loss}, {wrt}) at {point}", kind="show")]  # every leaf in one reverse pass
