"""--from-jax: a JAX function traced with jax.make_jaxpr at example arguments, written as gradlang.

The function is traced in float64 at the example point. Its float leaves are
the program's declarations, named by their key paths (params.online.W ->
params_online_W); other leaves (an int label, a bool flag) are fixed at their
values, as a static argument is. The jaxpr is walked once: every equation is
evaluated at the point (so a piecewise-constant integer result such as an
argmax is written as its value there) and translated by its rule
(jax_rules.py); jit / pjit bodies are inlined, and so are custom_jvp and
custom_vjp bodies, whose custom rule gives way to the derivative of the
primal (a comment says so). What the loss never reads is left out first, as
jit leaves it out; every stop_gradient the loss reads is kept, with the user's
file and line from the equation's source_info, and one it never reads is named
in a note with its line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gradlang.frameworks import jax_scan, ops
from gradlang.frameworks.jax_rules import RULES
from gradlang.frameworks.loading import called, framework
from gradlang.frameworks.program import (Origin, TranslateError, Value, Where, Writer, constant, placed,
                                         shown_path)
from gradlang.frameworks.tracing import Leaf, Traced, key_name, scalar

CALLS = ("jit", "pjit", "closed_call", "core_call", "remat", "remat2", "checkpoint", "custom_jvp_call", "custom_vjp_call",
         "custom_vjp_call_jaxpr", "custom_lin")


@dataclass
class Step:
    """What a rule sees: the equation, its inputs as Values and at the point, and where it was written."""

    eqn: object
    ins: list
    points: list
    where: Where


def trace(function, args: tuple, names: list, writer: Writer, name: str) -> Traced:
    """Trace `function(*args)` at the example point; declarations and bindings go to `writer`."""
    jax = framework("jax")
    jax.config.update("jax_enable_x64", True)
    leaves = called("reading the example arguments", lambda: _leaves(jax, args, names, writer))
    floats = [leaf for leaf in leaves if leaf.is_float]
    treedef = jax.tree_util.tree_structure(args)

    def flat(*values):
        replaced = iter(values)
        return function(*jax.tree_util.tree_unflatten(treedef, [next(replaced) if leaf.is_float else leaf.value
                                                                 for leaf in leaves]))

    points = [leaf.value for leaf in floats]
    closed = called(f"tracing {name} with jax.make_jaxpr", lambda: jax.make_jaxpr(flat)(*points))
    jaxpr = _read_by_the_loss(closed.jaxpr, writer)
    env = {var: writer.declare(leaf.name, leaf.shape, leaf.comment) for var, leaf in zip(jaxpr.invars, floats)}
    at = dict(zip(jaxpr.invars, points))
    walker = _Walker(writer, _uses(jaxpr), set(jaxpr.invars))
    walker.consts(jaxpr.constvars, closed.consts, env, at)
    outs = walker.run(jaxpr, env, at, None)
    if len(outs) != 1:
        raise TranslateError(f"{name} returns {len(outs)} values: gradlang translates a function returning one loss")
    value = scalar(outs[0][1], name)
    return Traced(outs[0][0], value, floats, _gradients(jax, closed, points, name))


def _read_by_the_loss(jaxpr, writer: Writer):
    """The jaxpr without the equations whose results the loss never reads (dead code, as jit leaves it out).

    make_jaxpr records everything the function ran: Dopamine's network returns its probabilities beside the
    logits the loss reads, and jax.nn.softmax's stop_gradient of the maximum comes with them. Written, such a
    stop is one the ledger cannot place (no path of the loss meets it), and the program would compute what
    nothing reads. JAX's own dead-code elimination (the one jit runs, through calls, scans and custom rules)
    leaves them out; a stop left out is named in a note with its line, so no stop of the source goes unsaid.
    Every input is kept (a leaf the loss does not read still has its gradient, zero)."""
    from jax.interpreters import partial_eval

    kept, _ = partial_eval.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=True)
    dropped = _stop_places(jaxpr)
    for place in _stop_places(kept):
        if place in dropped:
            dropped.remove(place)
    if dropped:
        places = ", ".join(dict.fromkeys(str(where) for where in dropped))
        writer.note(f"the stop_gradient at {places} is left out: the loss never reads its value (what no "
                    "result of the loss reads is not part of the program, as jit leaves it out)")
    return kept


def _stop_places(jaxpr, outer: Where | None = None) -> list:
    """Where each stop_gradient equation of the jaxpr and of the bodies it calls is written, in order."""
    from jax.extend.core import jaxprs_in_params

    found = []
    for eqn in jaxpr.eqns:
        where = _where(eqn, outer)
        if eqn.primitive.name == "stop_gradient":
            found.append(where)
        inside = replace(where, note=f"{where.note + ', ' if where.note else ''}inside "
                                     f"{eqn.params.get('name') or eqn.primitive.name}")
        for body in jaxprs_in_params(eqn.params):
            found += _stop_places(body, inside)
    return found


def _gradients(jax, closed, points: list, name: str) -> list:
    """JAX's own gradient (jax.grad, float64) by each float leaf at the point, of the jaxpr as the program reads
    it: a custom derivative rule is replaced by the derivative of its primal, as the program does (and says)."""
    if not points:
        return []

    def primal(*values):
        return _evaluated(closed.jaxpr, closed.consts, values)[0]

    grads = called(f"differentiating {name} with jax.grad",
                   lambda: jax.grad(primal, argnums=tuple(range(len(points))))(*points))
    return [np.asarray(g, dtype=np.float64) for g in grads]


def _evaluated(jaxpr, consts, values) -> list:
    """jax.core.eval_jaxpr, with every call's body (a custom rule's primal too) run in place of the call."""
    env = dict(zip(jaxpr.constvars, consts)) | dict(zip(jaxpr.invars, values))
    for eqn in jaxpr.eqns:
        ins = [v.val if _is_literal(v) else env[v] for v in eqn.invars]
        if eqn.primitive.name in CALLS:
            body, body_consts = _body(eqn)
            outs = _evaluated(body, body_consts, ins[len(ins) - len(body.invars):])
        else:
            outs = eqn.primitive.bind(*ins, **eqn.primitive.get_bind_params(eqn.params))
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update((var, out) for var, out in zip(eqn.outvars, outs) if type(var).__name__ != "DropVar")
    return [v.val if _is_literal(v) else env[v] for v in jaxpr.outvars]


def _leaves(jax, args: tuple, names: list, writer: Writer) -> list:
    """The example arguments' leaves, named by their key paths (params.online.W)."""
    found = []
    for path, value in jax.tree_util.tree_flatten_with_path(args)[0]:
        parts = [names[path[0].idx] if i == 0 else key_name(entry) for i, entry in enumerate(path)]
        if jax.dtypes.issubdtype(getattr(value, "dtype", np.float64), jax.dtypes.prng_key):
            found.append(Leaf(".".join(parts), ".".join(parts), value, tuple(value.shape), False))  # a key: data
        elif type(value) in (bool, int, float):  # a Python number (DreamerV3's `free`, read by an `if`): constant
            found.append(Leaf(".".join(parts), ".".join(parts), value, (), False))
            writer.note(f"{'.'.join(parts)} = {value!r} is a Python number: a constant of the program, as "
                        "jax.grad of the arrays sees it")
        else:
            found.append(Leaf.of(".".join(parts), value, writer.taken))
    return found


def _uses(jaxpr) -> dict:
    """How often each variable is read in this jaxpr (its equations and its outputs)."""
    count: dict = {}
    for eqn in jaxpr.eqns:
        for var in eqn.invars:
            if not _is_literal(var):
                count[var] = count.get(var, 0) + 1
    for var in jaxpr.outvars:
        if not _is_literal(var):
            count[var] = count.get(var, 0) + 1
    return count


def _is_literal(var) -> bool:
    return hasattr(var, "val") and not hasattr(var, "suffix") and type(var).__name__ == "Literal"


def _kind(var) -> str:
    """'float', 'complex', 'key' (a PRNG key) or 'other' (integer, boolean): what a variable holds."""
    from jax import dtypes

    dtype = var.aval.dtype
    if dtypes.issubdtype(dtype, dtypes.prng_key):
        return "key"
    if dtypes.issubdtype(dtype, np.complexfloating):
        return "complex"
    return "float" if dtypes.issubdtype(dtype, np.floating) else "other"


def _is_float(var) -> bool:
    return _kind(var) == "float"


class _Walker:
    """Walks one jaxpr (and the bodies it inlines), keeping each variable's Value and value at the point."""

    def __init__(self, writer: Writer, uses: dict, live: set):
        self.writer, self.uses = writer, uses
        self.live = live  # the variables that depend on a declared leaf; the others are data at the point

    def consts(self, constvars, consts, env: dict, at: dict) -> None:
        for var, value in zip(constvars, consts):
            if _kind(var) == "key":  # a typed key closed over (jax.random.key(0), a key argument): data, never written
                at[var], env[var] = value, Value("a_PRNG_key", tuple(var.aval.shape))
                continue
            array = np.asarray(value)
            at[var] = array
            env[var] = _constant(array, tuple(array.shape))

    def read(self, var, env: dict, at: dict) -> tuple:
        if _is_literal(var):
            value = np.asarray(var.val)
            if value.dtype.kind == "f" and np.isnan(value).any():  # jnp.var's nan for ddof >= n: a case not taken
                return Value("nan", tuple(value.shape), number=float("nan")), value
            return _constant(value, tuple(np.shape(var.val))), value
        return env[var], at[var]

    def run(self, jaxpr, env: dict, at: dict, outer: Where | None) -> list:
        for eqn in jaxpr.eqns:
            if all(type(v).__name__ == "DropVar" for v in eqn.outvars):
                continue  # a result nothing reads (jaxprs keep a few): it changes nothing
            where = _where(eqn, outer)
            self.writer.places.append((where.file, where.line, where.column, eqn.primitive.name))
            try:
                self._step(eqn, env, at, where)
            except TranslateError as error:
                raise error if error.span is not None or where.line is None else placed(
                    f"{eqn.primitive.name}: {error.message}", where) from None
        return [self.read(v, env, at) for v in jaxpr.outvars]

    def _step(self, eqn, env: dict, at: dict, where: Where) -> None:
        """One equation: refused, data at the point, a call inlined, or translated by its rule."""
        ins = [self.read(v, env, at) for v in eqn.invars]
        _refuse(eqn, where)
        if any(v in self.live for v in eqn.invars if not _is_literal(v)):
            self.live.update(eqn.outvars)
        elif _is_data(eqn) or _is_scalar_constant(eqn):
            return self._data(eqn, ins, env, at, where)
        if eqn.primitive.name in CALLS:
            return self._inline(eqn, ins, env, at, where)
        if eqn.primitive.name == "scan":
            outs, live = jax_scan.unrolled(self, eqn, ins, where)
            for var, (value, point), flag in zip(eqn.outvars, outs, live):
                env[var], at[var] = value, point
                if flag:
                    self.live.add(var)
            return None
        return self._equation(eqn, ins, env, at, where)

    def _data(self, eqn, ins: list, env: dict, at: dict, where: Where) -> None:
        """An equation of data only (a PRNG key's, or one with no rule, none of it depending on a leaf): its value
        at the point, a constant of the program. A key is never written; a float drawn from a key
        (jax.random.normal(key, …)) is a random draw: a named data input, its traced value in the point."""
        results = called(f"evaluating {eqn.primitive.name} at the traced point", lambda: _evaluate(eqn, ins))
        results = results if eqn.primitive.multiple_results else [results]
        drawn = any(_kind(v) == "key" for v in eqn.invars if not _is_literal(v))
        for var, result in zip(eqn.outvars, results):
            at[var] = result
            if _kind(var) == "key":
                env[var] = Value("a_PRNG_key", tuple(var.aval.shape))
            elif drawn and _kind(var) == "float":
                function = str(eqn.params.get("name") or eqn.primitive.name).strip("_")
                env[var] = self.writer.draw(function, f"jax.random.{function}", np.asarray(result, np.float64), where)
            else:
                env[var] = _constant(np.asarray(result), tuple(np.shape(result)))

    def _equation(self, eqn, ins: list, env: dict, at: dict, where: Where) -> None:
        values = [v for v, _ in ins]
        points = [p for _, p in ins]
        name = eqn.primitive.name
        if len(eqn.outvars) != 1 or (eqn.primitive.multiple_results and name not in RULES) or (
                name not in RULES and name != "stop_gradient" and _is_float(eqn.outvars[0])):
            raise placed(f"no translation for the JAX operation {name}", where)
        result = called(f"evaluating {eqn.primitive.name} at the traced point",
                        lambda: eqn.primitive.bind(*points, **eqn.params))
        result = np.asarray(result[0] if eqn.primitive.multiple_results else result)  # a sort of one array
        (out,) = eqn.outvars
        at[out] = result
        env[out] = self._translate(eqn, Step(eqn, values, points, where), result)


    def _translate(self, eqn, step: Step, result) -> Value:
        name = eqn.primitive.name
        out = eqn.outvars[0]
        if name == "stop_gradient":
            return self.writer.stop(step.ins[0], step.where, "lax.stop_gradient")
        if not _is_float(out) and not (name in ("gt", "ge", "lt", "le", "eq", "ne") and _is_float(eqn.invars[0])):
            return self._at_point(step, result, tuple(out.aval.shape))
        rule = RULES.get(name)
        if rule is None:
            raise placed(f"no translation for the JAX operation {name}", step.where)
        try:
            value = rule(step)
        except TranslateError as error:
            raise placed(f"{name}: {error.message}", step.where) from None
        if str(out.aval.dtype) == "float32":
            value = ops.in_float32(value, name)
        return self.writer.bind(value, self.uses.get(out, 1), origin=Origin(name, step.where, result))

    def _at_point(self, step: Step, result, shape: tuple) -> Value:
        """An integer or boolean result, piecewise constant: its value at the traced point. An argmax keeps its
        source, so that a one-hot of it (jax.nn.one_hot(jnp.argmax(y, -1), n)) is written onehot(argmax(y))."""
        name, where = step.eqn.primitive.name, step.where
        if name in ("argmax", "argmin"):
            self.writer.fixed(name, where, f"{name} at {where} is {result.tolist()} at the traced "
                                           "point (piecewise constant: derivative 0)")
        value = _constant(result.astype(np.float64), shape)
        if name == "argmax" and len(step.eqn.params["axes"]) == 1:
            return replace(value, argmax=(step.ins[0], step.eqn.params["axes"][0]))
        marked = [(k, v.argmax) for k, v in enumerate(step.ins) if v.argmax is not None]
        if not marked:
            return value
        k, (source, axis) = marked[0]
        if name in ("broadcast_in_dim", "reshape", "expand_dims", "squeeze"):
            return replace(value, argmax=(source, axis))
        other = np.asarray(step.points[1 - k]) if name == "eq" and len(step.points) == 2 else None
        if other is not None and tuple(source.shape) == shape and axis == len(shape) - 1 and np.array_equal(
                np.broadcast_to(other, shape), np.broadcast_to(np.arange(shape[-1]), shape)):
            return ops.onehot_of_argmax(self.writer.bind(source, 2), axis, shape)
        return value

    def _inline(self, eqn, ins: list, env: dict, at: dict, where: Where) -> None:
        """A call's body, translated in place: its inputs are the caller's Values."""
        body, consts = _body(eqn)
        name = eqn.params.get("name") or _function_name(body, eqn.primitive.name)
        if eqn.primitive.name.startswith("custom"):
            self.writer.suspects.append((f"{name}'s custom derivative rule", where))
            self.writer.note(f"{name} (at {where}) has a custom derivative rule ({eqn.primitive.name}); "
                             "it is replaced here by the derivative of its primal")
        live = [self.is_live(v) for v in eqn.invars[len(eqn.invars) - len(body.invars):]]
        outs, _ = self.body(body, consts, ins[len(ins) - len(body.invars):], live, where, f"inside {name}")
        for var, (value, point) in zip(eqn.outvars, outs):
            env[var], at[var] = self.writer.bind(value, self.uses.get(var, 1)), point

    def is_live(self, var) -> bool:
        """Whether a variable depends on a declared leaf (a literal never does)."""
        return not _is_literal(var) and var in self.live

    def body(self, body, consts, ins: list, live: list, where: Where, note: str) -> tuple:
        """A called jaxpr walked with the caller's Values as its inputs: its outputs (Value, value at the point)
        and whether each depends on a leaf. Its lines are the user's, noted as inside the call."""
        inner = Where(where.file, where.line, where.column, where.end_column,
                      note if not where.note else f"{where.note}, {note}")
        inner_uses = _uses(body)
        walker = _Walker(self.writer, inner_uses, {var for var, flag in zip(body.invars, live) if flag})
        inner_env, inner_at = {}, {}
        walker.consts(body.constvars, consts, inner_env, inner_at)
        for var, (value, point) in zip(body.invars, ins):
            inner_env[var] = self.writer.bind(value, inner_uses.get(var, 0))
            inner_at[var] = point
        outs = walker.run(body, inner_env, inner_at, inner)
        return outs, [walker.is_live(v) for v in body.outvars]


def _refuse(eqn, where: Where) -> None:
    """Complex numbers (an fft) and a while loop have no gradlang spelling: refused at the line."""
    name = eqn.primitive.name
    if name in CALLS:
        return
    if name == "while":
        raise placed("while: a lax.while_loop runs as long as a value says, so its length is no constant of the "
                     "program (jax.grad cannot differentiate it either); a lax.scan or fori_loop of fixed length is "
                     "unrolled", where)
    if any(_kind(v) == "complex" for v in [*eqn.invars, *eqn.outvars]) or "fft" in name:
        raise placed(f"{name}: a complex value: gradlang's values are real numbers (an FFT, a complex dtype cannot be written)",
                     where)


def _is_data(eqn) -> bool:
    """An equation none of whose inputs depends on a leaf, that is a PRNG key's or has no rule: data at the point."""
    touches_key = any(_kind(v) == "key" for v in [*eqn.invars, *eqn.outvars])
    return touches_key or (eqn.primitive.name not in RULES and eqn.primitive.name not in CALLS
                           and eqn.primitive.name != "stop_gradient")


def _is_scalar_constant(eqn) -> bool:
    """An equation of constants only (no leaf reaches it) whose results are single numbers: its value at the point
    (jnp.var's `n - ddof > 0` inside its jit is True, and select_n takes the case it picks)."""
    return eqn.primitive.name not in CALLS and all(
        int(np.prod(getattr(v.aval, "shape", ()) or (1,))) == 1 for v in eqn.outvars)


def _evaluate(eqn, ins: list):
    """The equation run on its inputs' values at the point."""
    points = [p for _, p in ins]
    return eqn.primitive.bind(*points, **eqn.params)


def _body(eqn):
    """The jaxpr a call runs, and its constants."""
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        body = eqn.params.get(key)
        if body is not None:
            if hasattr(body, "consts"):
                return body.jaxpr, body.consts
            return body, ()
    raise TranslateError(f"the call {eqn.primitive.name} has no body to inline")


def _function_name(body, fallback: str) -> str:
    """The name of the function a call's body was traced from (relu for jax.nn.relu's custom_jvp)."""
    info = getattr(body, "debug_info", None)
    source = getattr(info, "func_src_info", None) or ""
    return source.split(" ")[0] or fallback


def _where(eqn, outer: Where | None) -> Where:
    """The user's file and line of an equation; inside a library's jit, the line in the user's code that called it."""
    from jax._src import source_info_util

    frame = source_info_util.user_frame(eqn.source_info.traceback)
    if frame is None:
        return outer or Where(note="no source line recorded")
    return Where(shown_path(frame.file_name), frame.start_line, frame.start_column + 1, frame.end_column + 1,
                 outer.note if outer else "")


def _constant(array, shape: tuple) -> Value:
    return constant(np.asarray(array), shape)
