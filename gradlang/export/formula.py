"""A binding's tensor formula as code, where the array reader (vectorised.py) cannot read its statement.

The session holds the binding's one value: a formula over declared tensors
whose sizes may be names (`jacobian(softmax(W @ x), x)` is
`(diag(s) - outer(s, s)) @ W` with `s = softmax(W @ x)`, `hessian(sum(x^3), x)`
is `3 diag(2 x)`). At a symbolic size it has no components to unroll, so it is
printed one line per node of its DAG, with its sizes read from the arguments'
shapes:

- each tensor node in the target's own operations: for NumPy its own NumPy
  spelling, as gradlang computes its numbers (expr/tensor/numbers.py), with
  the few helpers NumPy has no single function for written into the module
  (`helpers()`: the source of numbers.py's own); for JAX, PyTorch and
  TensorFlow as its record spells it (`TensorRule.export`: jnp.matmul,
  torch.logsumexp, tf.linalg.slogdet, ..., and the helpers those call, which
  prelude.py writes);
- every other function as the export printers spell it (printers.py:
  stop_gradient as jax.lax.stop_gradient, .detach(), tf.stop_gradient; max
  and min sharing a tie), so the framework's gradient of the function is
  gradlang's.

A node a target does not spell is refused in gradlang's words, naming it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap

import sympy as sp

from gradlang.errors import ShapeError, ValueError
from gradlang.expr import primitives
from gradlang.expr.masking import mask_untaken
from gradlang.expr.numeric import dag_cse
from gradlang.expr.source import operation_name, to_source
from gradlang.expr.tensor.nodes import TensorOp, Var, shape_of
from gradlang.expr.tensor.numbers import stable_logdet
from gradlang.expr.tensor.shapes import is_size
from gradlang.export.masks import masked_formula
from gradlang.export.printers import ExportPrinter

# NumPy has no single function for these: each is written into the module as the source of numbers.py's
# helper of that name (logdet is not: its helper reads gradlang's own errors; its record writes one, prelude.py)
_WRITTEN = ("_gl_softmax_vector", "_gl_logsumexp_vector", "_gl_softmax_axis", "_gl_logsumexp_axis",
            "_gl_onehot_vector", "_gl_max_shares_vector", "_gl_max_shares_axis", "_gl_max_shares_along", "_gl_cofactor",
            "_gl_softmax_along", "_gl_logsumexp_along")


@functools.cache
def helpers() -> str:
    """The helpers' text for the module, read on first use (the page never asks)."""
    return "".join("\n\n\n" + _helper_source(name) for name in _WRITTEN) + "\n"


def _helper_source(name: str) -> str:
    """The helper's own Python source without its docstring, renamed to the name the generated lines call:
    one definition, so the exported module computes what gradlang computes."""
    from gradlang.expr.tensor import numbers

    function = numbers.HELPERS[name]
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    if isinstance(definition.body[0], ast.Expr) and isinstance(getattr(definition.body[0], "value", None), ast.Constant):
        definition.body = definition.body[1:]
    definition.name = name
    return ast.unparse(definition)


def formula_body(value, params: list, target: str, table) -> str:
    """The lines of a function computing `value` from its parameters (gradlang name, shape), or a refusal."""
    symbols = [s for s in sorted(value.free_symbols, key=lambda s: s.name) if not is_size(s)]
    sizes = _sizes(value, params)
    computed = stable_logdet(value) if target == "numpy" else masked_formula(stable_logdet(value))  # masks.py
    arguments, assignments, outputs = dag_cse(mask_untaken((computed,)), tuple(symbols + list(sizes)))
    printer = FormulaPrinter(target, dict(zip(arguments, [table[s.name] for s in symbols] + list(sizes.values()))))
    printer.size_symbols = frozenset(arguments[len(symbols):])
    for temp, _ in assignments:
        printer.symbol_names[temp] = "_gl_f" + temp.name[2:]
    lines = "".join(f"    {printer.symbol_names[temp]} = {printer.doprint(expr)}\n" for temp, expr in assignments)
    shape = ", ".join(_dim(d, sizes) for d in shape_of(value))
    returned = RETURNED[target][0 if shape else 1].format(result=printer.doprint(outputs[0]), shape=shape)
    return _check(params, table) + lines + f"    return {returned}\n"


# The function's value: broadcast to the formula's shape (a scalar 0 stands for zeros of it), or a float scalar.
RETURNED = {
    "numpy": ("np.broadcast_to({result}, ({shape},)).copy()", "np.asarray({result}, dtype=float)"),
    "jax": ("jnp.broadcast_to({result}, ({shape},))", "jnp.asarray({result}, dtype=float)"),
    "torch": ("torch.broadcast_to(_t({result}), ({shape},))", "_t({result})"),
    "tf": ("tf.broadcast_to(_t({result}), ({shape},))", "_t({result})"),
}


_FIELD = re.compile(r"\{(\d+|i\d+|rest|rest_int|all)\}")
# An index or axis computed at run time as the framework's integer (a traced one, in JAX)
_INTEGER = {"jax": "jnp.asarray({0}).astype(int)", "torch": "int({0})", "tf": "int({0})"}


class FormulaPrinter(ExportPrinter):
    """The export printer of a target, with each tensor node spelled as its record says (TensorRule.export)."""

    def __init__(self, target: str, symbol_names: dict):
        super().__init__(symbol_names)
        self.target = target

    def _print(self, expr, **kwargs):
        if isinstance(expr, TensorOp):
            return self._print_tensor(expr)
        return super()._print(expr, **kwargs)

    def _print_tensor(self, node) -> str:
        if self.target == "numpy":  # the node's own NumPy spelling, as gradlang computes its numbers (numbers.py)
            return node.spelling.numpy(node, self).replace("numpy.", "np.")
        rule = primitives.tensor_rules().get(type(node))
        spelled = rule.export.get(self.target) if rule is not None else None
        if spelled is None or not spelled.spelling:
            raise ValueError(f"{operation_name(node)} has no {self.target} spelling: --export {self.target} "
                             "cannot write this formula")
        template = spelled.spelling(node) if callable(spelled.spelling) else spelled.spelling
        args = [self._print(a) for a in node.args]

        def integer(k: int) -> str:
            return str(int(node.args[k])) if node.args[k].is_Integer else _INTEGER[self.target].format(args[k])

        def field(match) -> str:
            name = match.group(1)
            if name == "all":
                return ", ".join(args)
            if name == "rest":
                return ", ".join(args[1:])
            if name == "rest_int":
                return ", ".join(integer(k) for k in range(1, len(args)))
            return integer(int(name[1:])) if name.startswith("i") else args[int(name)]

        return _FIELD.sub(field, template)


def _sizes(value, params: list) -> dict:
    """Each size symbol of the formula -> the code that reads it from an argument's shape (`x.shape[0]`)."""
    wanted = [s for s in sorted(value.free_symbols | _shape_symbols(value), key=lambda s: s.name) if is_size(s)]
    found = {}
    for size in wanted:
        where = next(((p, k) for p, shape in params for k, d in enumerate(shape) if d == size), None)
        if where is None:
            raise ShapeError(f"{_shown(value)} has the size {size}, which no argument's shape holds: the exported "
                             "function could not read it from its arguments")
        found[size] = f"{where[0]}.shape[{where[1]}]"
    return found


def _shown(value) -> str:
    text = to_source(value)  # gradlang's spelling, never SymPy's
    return text if len(text) <= 80 else text[:77] + "..."


def _shape_symbols(value) -> set:
    return {d for v in value.atoms(Var) for d in v.shape if isinstance(d, sp.Symbol)}


def _literal(d) -> bool:
    """A size the program fixes: a Python int (units.py's shapes) or a SymPy Integer; else a name (n)."""
    return isinstance(d, int) or getattr(d, "is_Integer", False)


def _dim(d, sizes: dict) -> str:
    return str(int(d)) if _literal(d) else sizes[d]


def _check(params: list, table) -> str:
    """One call of _gl_check_shapes: each array argument's shape, sizes shared by their names."""
    arrays = [(table[p], shape) for p, shape in params if shape]
    if not arrays:
        return ""
    patterns = ", ".join(f"{p!r}: ({', '.join(str(int(d)) if _literal(d) else repr(str(d)) for d in shape)},)"
                         for p, shape in arrays)
    given = ", ".join(f"{p!r}: {p}" for p, _ in arrays)
    return f"    _gl_check_shapes({{{given}}}, {{{patterns}}}, {{}})\n"
