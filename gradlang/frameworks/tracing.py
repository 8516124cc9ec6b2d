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
from gradlang.frameworks.loading import called, framework, load
from gradlang.frameworks.program import Line, TranslateError, Value, Writer, array_text


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
    """What a tracer gives back: the loss as a Value, its value at the point, and the declared leaves."""

    loss: Value
    value: float
    leaves: list


def translate(kind: str, spec: str, shapes: str | None = None, example_args: str | None = None,
              explain_wrt: tuple = ()) -> str:
    """The gradlang program of the JAX function or PyTorch module `spec` (MODULE:NAME) at the example point."""
    framework(kind)
    flag = f"--from-{kind}"
    target = load(spec, flag)
    writer = Writer()
    function, names, label = _callable(kind, target, spec, writer)
    args = _arguments(function, names, shapes, example_args, flag)
    loss = shapes_arg.gradlang_name(label, writer.taken)
    traced = _tracer(kind)(function, args, names, writer, label)
    writer.final(loss, traced.loss, f"the value of {spec} (the framework gives {traced.value!r} at the point)")
    writer.header.insert(0, _header(kind, spec, traced.leaves, writer.stops))
    return writer.text(_tail(loss, traced.leaves, explain_wrt, writer.taken))


def _callable(kind: str, target, spec: str, writer: Writer):
    """The function to trace, the names of its positional parameters, and a name for the loss."""
    if kind == "torch":
        from gradlang.frameworks.trace_torch import module_of

        return module_of(target, spec, writer)
    if not callable(target):
        raise TranslateError(f"--from-jax: {spec} is not a function")
    return target, _parameters(target, spec), spec.rpartition(":")[2].rpartition(".")[2]


def _parameters(function, spec: str) -> list:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise TranslateError(f"cannot read the parameters of {spec}") from None
    return [p.name for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _tracer(kind: str):
    if kind == "jax":
        from gradlang.frameworks.trace_jax import trace
    else:
        from gradlang.frameworks.trace_torch import trace
    return trace


def _arguments(function, names: list, shapes: str | None, example_args: str | None, flag: str) -> tuple:
    """The example arguments, in the order of the parameters."""
    if (shapes is None) == (example_args is None):
        raise TranslateError(f"{flag} needs example arguments: --shapes 'x=3 W=2,3' or --example-args MODULE:FUNCTION")
    if shapes is not None:
        given = shapes_arg.example(shapes_arg.parse(shapes))
    else:
        made = load(example_args, "--example-args")
        given = called(f"--example-args {example_args}", made) if callable(made) else made
    if isinstance(given, dict):
        unknown = [key for key in given if key not in names]
        if unknown:
            raise TranslateError(f"{flag}: the function has no parameter {unknown[0]} (its parameters: "
                                 f"{', '.join(names) or 'none'})")
        missing = [n for n in names if n not in given]
        if missing:
            raise TranslateError(f"{flag}: no example value for the parameter {missing[0]}")
        return tuple(given[n] for n in names)
    return tuple(given) if isinstance(given, (tuple, list)) else (given,)


def _header(kind: str, spec: str, leaves: list, stops: int) -> Line:
    """The first comment: what was traced and how, how many stops were kept, how the leaves are named."""
    how = "jax.make_jaxpr" if kind == "jax" else "torch.export.export (no decompositions)"
    mapping = "; ".join(f"{leaf.path} -> {leaf.name}" for leaf in leaves if leaf.path != leaf.name)
    text = f"{spec} traced with {how} in float64; {stops} stop(s) kept"
    return Line("", text + (f"\n# names: {mapping}" if mapping else ""))


def _tail(loss: str, leaves: list, explain_wrt: tuple, taken: set) -> list:
    """The statements that run: the loss and its gradients at the traced point, or explain for the leaves asked."""
    if explain_wrt:
        chosen = [leaf for leaf in leaves if any(leaf.path == p or leaf.path.startswith(p + ".") for p in explain_wrt)]
        if not chosen:
            raise TranslateError(f"--explain-wrt {' '.join(explain_wrt)}: no such leaf (the leaves: "
                                 f"{', '.join(leaf.path for leaf in leaves)})")
        return [Line(f"explain grad({loss}, {leaf.name})") for leaf in chosen]
    named = [(leaf, shapes_arg.gradlang_name(f"{leaf.name}_at", taken)) for leaf in leaves]
    lines = [Line("", "the traced point"), *(Line(f"{at} = {leaf.point()}") for leaf, at in named)]
    point = ", ".join(f"{leaf.name} = {at}" for leaf, at in named)
    lines += [Line("", "the loss and its gradient by each leaf there"), Line(f"{loss} at {point}")]
    return lines + [Line(f"grad({loss}, {leaf.name}) at {point}") for leaf in leaves]
