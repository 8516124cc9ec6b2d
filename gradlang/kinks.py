"""Kink warnings: an evaluation that lands where the derivative is a convention.

At a tie of max/min, the kink of abs/relu, a jump of sign/floor/ceil/round or
the boundary of a where, the derivative is not determined by the function:
gradlang follows the language reference (docs/language.md), section 5 and the frameworks disagree among
themselves. This module finds such points and says so, naming gradlang's
convention and what TensorFlow, JAX and PyTorch give there.

The expression DAG is walked once (iteratively, each distinct subexpression
once); every candidate node contributes the arguments it needs, and all of
them are evaluated together in one compiled NumPy call (float64, as the
frameworks see it). So a tie is an exact floating-point tie.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import sympy as sp
from sympy.core.relational import Relational

from .functions import Maximum, MaxShare, Minimum, MinShare, Relu, Round, Where
from .numeric import evaluate
from .stopgrad import StopGradient
from .walk import dag_atoms

_MAX_TEXT = 60

# What each framework gives at the kink (checked against JAX 0.10 by running it,
# against PyTorch's derivatives.yaml and TensorFlow's math_grad.py).
_EXTREMUM_FRAMEWORKS = {
    "max": (
        "TensorFlow: tf.reduce_max shares equally, tf.maximum(a, b) gives all to a; "
        "JAX: jnp.max shares equally, jnp.maximum / lax.max give 1/2 to each side of every pair "
        "(so nested pairs share unequally); "
        "PyTorch: torch.amax and torch.max(x) share equally, torch.maximum gives 1/2 to each side, "
        "torch.max(x, dim) gives all to one index"
    ),
    "min": (
        "TensorFlow: tf.reduce_min shares equally, tf.minimum(a, b) gives all to a; "
        "JAX: jnp.min shares equally, jnp.minimum / lax.min give 1/2 to each side of every pair "
        "(so nested pairs share unequally); "
        "PyTorch: torch.amin and torch.min(x) share equally, torch.minimum gives 1/2 to each side, "
        "torch.min(x, dim) gives all to one index"
    ),
}


@dataclass(frozen=True)
class _Check:
    """One candidate kink: what to evaluate, when it is hit, and what to say."""

    key: tuple
    exprs: tuple
    hit: Callable  # list of arrays -> boolean array
    describe: Callable  # list of floats (at the first hit) -> message


# --- public API -----------------------------------------------------------------


def kink_warnings(exprs, mapping: dict) -> list[str]:
    """Messages for every kink of `exprs` (scalar SymPy expressions) hit at the point `mapping`."""
    symbols, values = _numeric_mapping(mapping)
    return [message for message, _, _ in _run(exprs, symbols, values)]


def kink_warnings_batch(exprs, symbols, arrays) -> list[str]:
    """Messages for kinks hit anywhere in an elementwise evaluation, with how many points hit each."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    out = []
    for message, count, total in _run(exprs, list(symbols), arrays):
        out.append(f"at {count} of {total} points: {message}")
    return out


# --- the walk ----------------------------------------------------------------------


def _numeric_mapping(mapping: dict):
    symbols, values = [], []
    for symbol, value in mapping.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue  # a symbolic value: the symbol stays unknown
        symbols.append(symbol)
        values.append(number)
    return symbols, values


def _run(exprs, symbols: list, values: list):
    checks = [c for c in _candidates(exprs) if _known(c.exprs, symbols)]
    if not checks:
        return []
    needed = list(dict.fromkeys(e for c in checks for e in c.exprs))
    results = dict(zip(needed, evaluate(needed, symbols, values)))
    shape = np.broadcast_shapes(*[np.shape(v) for v in values]) if values else ()
    total = int(np.prod(shape)) if shape else 1
    found: dict = {}
    for check in checks:
        if check.key in found:
            continue
        arrays = [np.broadcast_to(results[e], shape) for e in check.exprs]
        mask = np.broadcast_to(check.hit(arrays), shape)
        if mask.any():
            first = np.argwhere(mask)[0] if shape else ()
            point = [float(a[tuple(first)]) for a in arrays]
            found[check.key] = (check.describe(point), int(mask.sum()), total)
    return list(found.values())


def _known(exprs, symbols) -> bool:
    known = set(symbols)
    return all(dag_atoms(e, sp.Symbol) <= known for e in exprs)


def _candidates(exprs) -> list[_Check]:
    """Walk the DAG iteratively, visiting each distinct subexpression once (per stopped-ness)."""
    seen, checks, stopped_only = set(), {}, {}
    stack = [(e, False) for e in exprs if isinstance(e, sp.Basic)]
    while stack:
        node, stopped = stack.pop()
        if (node, stopped) in seen:
            continue
        seen.add((node, stopped))
        rule = _RULES.get(node.func)
        check = rule(node) if rule is not None else None
        if check is not None:
            checks.setdefault(check.key, check)
            stopped_only[check.key] = stopped_only.get(check.key, True) and stopped
        inner = stopped or isinstance(node, StopGradient)
        stack.extend((a, inner) for a in node.args if isinstance(a, sp.Basic))
    return [_noted(c) if stopped_only[k] else c for k, c in checks.items()]


def _noted(check: _Check) -> _Check:
    """A kink met only inside stop_gradient cannot change the gradient; say so."""
    return replace(check, describe=lambda p: check.describe(p) + _STOPPED_NOTE)


_STOPPED_NOTE = " Here it is inside stop_gradient, so the gradient does not depend on the convention."


# --- one rule per class ------------------------------------------------------------


def _show(expr) -> str:
    try:
        from .render.plain import to_plain

        text = to_plain(expr)
    except Exception:  # noqa: BLE001 - the renderer is optional here; fall back to SymPy's text
        text = str(expr)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


def _extremum_check(name: str, args: tuple) -> _Check:
    pick = np.max if name == "max" else np.min

    def hit(arrays):
        stacked = np.stack(arrays)
        with np.errstate(invalid="ignore"):
            return (stacked == pick(stacked, axis=0)).sum(axis=0) >= 2

    def describe(point):
        extremum = pick(point)
        tied = [i for i, v in enumerate(point) if v == extremum]
        shown = ", ".join(_show(args[i]) for i in tied)
        share = f"1/{len(tied)}"
        return (
            f"{name}({_show_args(args)}) has a tie: {len(tied)} of its {len(args)} arguments ({shown}) "
            f"attain the {'maximum' if name == 'max' else 'minimum'} {_num(extremum)}. "
            f"gradlang shares the gradient equally ({share} each, section 5). {_EXTREMUM_FRAMEWORKS[name]}."
        )

    return _Check((name, args), tuple(args), hit, describe)


def _show_args(args) -> str:
    return _show(sp.Tuple(*args))[1:-1] if len(args) > 1 else _show(args[0])


def _maximum(node):
    return _extremum_check("max", node.args)


def _minimum(node):
    return _extremum_check("min", node.args)


def _max_share(node):
    return _extremum_check("max", node.args[1:])


def _min_share(node):
    return _extremum_check("min", node.args[1:])


def _abs(node):
    u = node.args[0]
    return _Check(
        ("abs", u),
        (u,),
        lambda a: a[0] == 0,
        lambda p: (
            f"abs({_show(u)}) is at its kink ({_show(u)} = 0). gradlang's derivative is sign(u) = 0 there "
            "(section 5), as TensorFlow (tf.abs) and PyTorch (torch.abs) give; JAX (jnp.abs, lax.abs) gives 1."
        ),
    )


def _relu_message(u) -> Callable:
    return lambda p: (
        f"relu({_show(u)}) is at its kink ({_show(u)} = 0). gradlang's derivative is 0 there (section 5), "
        "as TensorFlow (tf.nn.relu), JAX (jax.nn.relu) and PyTorch (torch.relu) also give; "
        "jnp.maximum(u, 0) in JAX and torch.maximum(u, 0) give 1/2, tf.maximum(u, 0) gives 1."
    )


def _relu(node):
    u = node.args[0]
    return _Check(("relu", u), (u,), lambda a: a[0] == 0, _relu_message(u))


def _where(node):
    condition = node.args[0]
    if not isinstance(condition, Relational):
        return None
    lhs, rhs = condition.lhs, condition.rhs
    if isinstance(condition, sp.StrictGreaterThan) and rhs == 0 and node.args[1:] == (sp.S.One, sp.S.Zero):
        return _Check(("relu", lhs), (lhs,), lambda a: a[0] == 0, _relu_message(lhs))  # relu's derivative
    return _Check(
        ("where", condition),
        (lhs, rhs),
        lambda a: a[0] == a[1],
        lambda p: (
            f"where({_show(condition)}, …) is on the boundary of its condition (both sides are {_num(p[0])}). "
            "gradlang differentiates only the branch the condition selects, as tf.where, jnp.where and "
            "torch.where do, so the derivative may jump here."
        ),
    )


def _jump(name: str, is_jump: Callable, extra: str):
    def rule(node):
        u = node.args[0]
        return _Check(
            (name, u),
            (u,),
            lambda a: is_jump(a[0]),
            lambda p: (
                f"{name}({_show(u)}) is at a jump ({_show(u)} = {_num(p[0])}). gradlang's derivative is 0 "
                f"(section 5){extra}; TensorFlow, JAX and PyTorch also give 0. "
                "A finite difference across the jump is not 0."
            ),
        )

    return rule


def _is_half_integer(a):
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & (a - np.floor(a) == 0.5)


def _is_integer(a):
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & (a == np.floor(a))


_RULES = {
    Maximum: _maximum,
    Minimum: _minimum,
    MaxShare: _max_share,
    MinShare: _min_share,
    sp.Abs: _abs,
    Relu: _relu,
    Where: _where,
    sp.sign: _jump("sign", lambda a: a == 0, "; sign(u) is also the derivative gradlang uses for abs(u)"),
    sp.floor: _jump("floor", _is_integer, ""),
    sp.ceiling: _jump("ceil", _is_integer, ""),
    Round: _jump("round", _is_half_integer, ", and halves round to even as in NumPy, tf.round, jnp.round, torch.round"),
}
