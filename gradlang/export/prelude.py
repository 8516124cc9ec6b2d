'''The head of each exported module: imports, shared support, and the primitives' helpers.

The head of each target is fixed (imports, float64, `_share` for the tie
shares, `_stack`, `_onehot` for the gradient of an index (adjoint.py), and for PyTorch and TensorFlow `_t` and `_grad`). The
helpers after it come from the registry of primitives (gradlang/expr/primitives/):
a primitive whose framework function would differentiate differently from
the language reference (docs/language.md), section 5, exports as a helper
written in its record, chosen so that the framework's gradient equals
gradlang's (checked in tests/tools/test_export.py):

- `_max` / `_min` reduce over all arguments at once with the framework's
  reduction (jnp.max, torch.amax, tf.reduce_max), whose gradient shares a tie
  equally; the pairwise jnp.maximum / torch.maximum / tf.maximum do not.
- `_abs` has derivative sign(u), 0 at 0 (JAX's jnp.abs gives 1 there).
- `_relu`, `_round`, `_where` and the shares use the framework's primitive,
  which already agrees with gradlang.

A module keeps only the helpers its functions call, directly or through
another helper (`used_helpers`): a reader of `f(x) = x^2` exported should not
wade through a hundred lines of code that never runs.
'''

from __future__ import annotations

import ast

from gradlang.expr import primitives

NUMPY = '''import numpy as np


def _share(pick, k, args):
    stacked = np.stack(np.broadcast_arrays(*args)).astype(float)
    tied = stacked == pick(stacked, axis=0)
    return np.where(tied[k], 1.0 / np.maximum(tied.sum(axis=0), 1), 0.0)


def _stack(*items):
    return np.stack(np.broadcast_arrays(*[np.asarray(i, dtype=float) for i in items]))


def _onehot(like, index):
    """1 at like[index] (a component, or a whole row), 0 elsewhere: where an index's gradient goes."""
    out = np.zeros(np.shape(like))
    out[index] = 1.0
    return out
'''

JAX = '''import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)  # gradlang computes in float64


def _share(pick, k, args):
    stacked = jnp.stack(jnp.broadcast_arrays(*args))
    tied = stacked == pick(stacked, axis=0)
    return jax.lax.stop_gradient(jnp.where(tied[k], 1.0 / jnp.maximum(tied.sum(axis=0), 1), 0.0))


def _stack(*items):
    return jnp.stack(jnp.broadcast_arrays(*items))


def _onehot(like, index):
    """1 at like[index] (a component, or a whole row), 0 elsewhere: where an index's gradient goes."""
    return jnp.zeros(jnp.shape(like)).at[index].set(1.0)
'''

TORCH = '''import torch


def _t(u):
    return torch.as_tensor(u, dtype=torch.float64)


def _share(pick, k, args):
    stacked = torch.stack(torch.broadcast_tensors(*[_t(a).detach() for a in args]))
    tied = (stacked == pick(stacked, dim=0)).to(torch.float64)
    return torch.where(tied[k] > 0, 1.0 / torch.clamp(tied.sum(dim=0), min=1.0), torch.zeros_like(tied[k]))


def _stack(*items):
    return torch.stack(torch.broadcast_tensors(*[_t(i) for i in items]))


def _onehot(like, index):
    """1 at like[index] (a component, or a whole row), 0 elsewhere: where an index's gradient goes."""
    out = torch.zeros(_t(like).shape, dtype=torch.float64)
    out[index] = 1.0
    return out


def _grad(function, *args):
    """The gradient of a scalar function with respect to each argument (zeros where unused)."""
    args = [_t(a).detach().requires_grad_(True) for a in args]
    value = _t(function(*args))
    # a value stopped all through (b = sg(J)) has no graph: its gradient is zero, as gradlang says
    grads = torch.autograd.grad(value, args, allow_unused=True) if value.requires_grad else [None] * len(args)
    grads = [torch.zeros_like(a) if g is None else g for a, g in zip(args, grads)]
    return grads[0] if len(grads) == 1 else tuple(grads)
'''

TF = '''import functools

import tensorflow as tf


def _t(u):
    """float64, exactly: tf.cast would first make a Python float a float32 (0.1 off by 1.5e-9)."""
    return tf.cast(tf.convert_to_tensor(u, dtype_hint=tf.float64), tf.float64)


def _stacked(args):
    args = [_t(a) for a in args]
    shape = functools.reduce(tf.broadcast_dynamic_shape, [tf.shape(a) for a in args])
    return tf.stack([tf.broadcast_to(a, shape) for a in args])


def _share(pick, k, args):
    stacked = tf.stop_gradient(_stacked(args))
    tied = tf.cast(tf.equal(stacked, pick(stacked, axis=0)), tf.float64)
    return tf.where(tied[k] > 0, 1.0 / tf.maximum(tf.reduce_sum(tied, axis=0), 1.0), tf.zeros_like(tied[k]))


def _stack(*items):
    return _stacked(items)


def _onehot(like, index):
    """1 at like[index] (a component, or a whole row), 0 elsewhere: where an index's gradient goes."""
    shape = tf.shape(like)
    index = [i % shape[k] for k, i in enumerate(index)]  # tensor_scatter_nd counts from the start only
    return tf.tensor_scatter_nd_update(tf.zeros(shape, tf.float64), [index], [tf.ones(shape[len(index):], tf.float64)])


def _grad(function, *args):
    """The gradient of a scalar function with respect to each argument (zeros where unused)."""
    args = [tf.Variable(_t(a)) for a in args]
    with tf.GradientTape() as tape:
        value = function(*args)
    grads = tape.gradient(value, args, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return grads[0] if len(grads) == 1 else tuple(grads)
'''

HEADS = {"numpy": NUMPY, "jax": JAX, "torch": TORCH, "tf": TF}


def record_helpers(target: str) -> list[str]:
    """The helper code the records of the registry need for a target, in registration order."""
    return [r.export[target].helper for r in primitives.records() if r.export and r.export[target].helper]


def tensor_helpers(target: str) -> list[str]:
    """The helper code the tensor nodes' spellings call in `target` (`_gl_logdet`, `_gl_max_shares`), from their
    records (TensorRule.export), each once: a formula at a symbolic size is printed with them (formula.py)."""
    found: dict = {}
    for rule in primitives.tensor_rules().values():
        spelled = rule.export.get(target)
        if spelled is not None and spelled.helper:
            found.setdefault(spelled.helper, None)
    return list(found)


def prelude(target: str) -> str:
    """The whole head of a module exported for `target`."""
    return "\n\n".join([HEADS[target].rstrip() + "\n", *record_helpers(target), *tensor_helpers(target)])


PRELUDES = {target: prelude(target) for target in HEADS}


def used_helpers(prelude_text: str, code: str) -> str:
    """`prelude_text` without the functions that `code` never calls (directly or through a kept one)
    and the imports nothing kept reads.

    A dropped statement takes the blank lines before it, so what is kept
    reads exactly as written.
    """
    tree = ast.parse(prelude_text)
    kept = _needed(tree, _names(ast.parse(code)))
    lines, dropped, end = prelude_text.split("\n"), set(), 0
    for node in tree.body:
        if node not in kept:
            dropped.update(range(end, node.end_lineno))
        end = node.end_lineno
    return "\n".join(line for k, line in enumerate(lines) if k not in dropped).lstrip("\n")


def _needed(tree, used: set) -> list:
    """The top-level statements kept: functions reached from `used`, other statements, and the imports they read."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    wanted, todo = set(), list(used & set(functions))
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(_names(functions[name]) & set(functions))
    kept = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.Import, ast.ImportFrom)) or
            isinstance(n, ast.FunctionDef) and n.name in wanted]
    read = used.union(*[_names(node) for node in kept])
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and _bound(n) & read]
    return kept + imports


def _bound(node) -> set[str]:
    """The names an import statement binds (`import jax.numpy as jnp` binds jnp)."""
    return {alias.asname or alias.name.split(".")[0] for alias in node.names}


def _names(tree) -> set[str]:
    """Every bare name a piece of code reads."""
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
