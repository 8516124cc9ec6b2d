"""The vector identities a teacher states, one function each.

A scalar identity looks at f in e = c·f (c free of the variable: a number,
or a stopped advantage) and returns an `Outer`: g = ∇ᵥf as components, the
formula of g (e₀ − s, softmax, u/2), the inner vector v and its inner map.
`scalar` then scales by c, chains through the inner map (vector.chain_line)
and instantiates. The Jacobian identities (softmax, elementwise) stand
alone. Each adds its own instantiated lines to the Build.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradlang.expr.primitives.vectors import LogSumExp, Norm, Softmax
from gradlang.expr.stopgrad import StopGradient
from gradlang.expr.values import elements, from_elements, is_scalar
from gradlang.expr.walk import dag_has
from gradlang.explain.formula import Math, basis, formula, math, sub
from gradlang.explain.vector.inner import Inner, inner_map, outside
from gradlang.explain.vector.lift import HOLE, logsumexp_form, ordered, softmax_form, stops_in, template
from gradlang.explain.vector.derivation import SHORT, chain_line
from gradlang.explain.vector.weighted import weighted_sum
from gradlang.explain.vector.crossentropy import sigmoid_cross_entropy
from gradlang.explain.vector.squares import squared_norm, stopped_target
from gradlang.explain.vector.text import component, stop_note, vector_formula, whole_form


@dataclass(frozen=True)
class Outer:
    """g = ∇ᵥf (components, formula), what f is called (lhs), the inner map of v."""

    g: list
    g_formula: tuple
    lhs: tuple
    inner: Inner
    identity: str


def _softmax_let(build, args, inner) -> list:
    """let s = softmax(v): the component symbols s[0], …"""
    s = build.vector_let(("s", "p", "q"), [Softmax(sp.Integer(k), *args) for k in range(len(args))])
    note = f"= softmax({build.name}): a shift does not change softmax"
    name = s[0].name.split("[")[0]
    build.let(math(name), formula("softmax(", *vector_formula(build, inner, args), ")"),
              note if inner.kind == "shift" else "")
    return s


def _softmax_setup(build, expr):
    """(k, args, inner map, the let-named s, its name) for a component sₖ of a softmax of x or x − m, else None."""
    form = softmax_form(expr)
    inner = form and inner_map(form[1], build.xs, build.shape)
    if not inner or inner.kind == "affine":
        return None
    k, args = form
    s = _softmax_let(build, args, inner)
    return k, args, inner, s, s[0].name.split("[")[0]


def log_softmax(build, f):
    """∇ log sₖ = eₖ − s; written out as log(exp(vₖ)/Σ exp(v)), first log(a/b) = log a − log b."""
    setup = _softmax_setup(build, f.args[0]) if isinstance(f, sp.log) else None
    if setup is None:
        return None
    k, args, inner, s, name = setup
    g = [sp.S(int(j == k)) - s[j] for j in range(len(s))]
    lhs, g_formula = formula(f"∇ log {name}{sub(k)}"), formula(basis(k), f" − {name}")
    if isinstance(f.args[0], Softmax):
        build.line(lhs, g_formula, rule=formula("∇ log softmax(v)ₖ = eₖ − softmax(v)"))
        return Outer(g, g_formula, lhs, inner, "log-softmax identity")
    build.display[f.args[0]] = s[k]
    vk, sums = component(build, inner, args, k), formula("log Σₖ exp(", *vector_formula(build, inner, args, "ₖ"), ")")
    first = formula("(", *vk, ")") if inner.kind == "shift" else vk
    build.line(formula(f"log {name}{sub(k)}"), formula(*first, " − ", *sums), rule=formula("log(a/b) = log a − log b"))
    build.line(formula("∇(", *vk, ")"), formula(basis(k)), rule=formula("linear", *stop_note(inner)))
    build.line(formula("∇ ", *sums), formula(name), rule=formula("∇ logsumexp = softmax"))
    count = len(build.lines)
    build.line(lhs, g_formula, rule=f"({count - 1}) − ({count})")
    _adjoint(build, inner, g_formula, formula(f"−1 + Σₖ {name}ₖ"))
    return Outer(g, g_formula, lhs, inner, "log-softmax identity")


def _adjoint(build, inner, g_formula, total) -> None:
    """For v = x − m: the adjoint arriving at m is −1ᵀg (every vⱼ moves by −1 with m)."""
    if inner.kind != "shift" or len(inner.stops) != 1 or inner.shift != -inner.stops[0]:
        return
    build.adjoints.append((inner.stops[0], formula("−1ᵀ(", *g_formula, ") = ", *total)))


def logsumexp(build, f):
    """∇ logsumexp(v) = softmax(v)."""
    args = logsumexp_form(f)
    inner = args and inner_map(args, build.xs, build.shape)
    if not inner or inner.kind == "affine":
        return None
    g = [Softmax(sp.Integer(k), *args) for k in range(len(args))]
    if inner.kind == "identity" and not isinstance(f, LogSumExp):
        build.display[f] = LogSumExp(build.variable(), evaluate=False)
    lhs = formula("∇ ", f) if len(str(f)) < 40 else formula("∇ logsumexp")
    g_formula = formula("softmax(", *vector_formula(build, inner, args), ")")
    build.line(lhs, g_formula, rule=formula("∇ logsumexp(v) = softmax(v)", *stop_note(inner)))
    return Outer(g, g_formula, lhs, inner, "logsumexp identity")


def softmax_component(build, f):
    """∇ sₖ = sₖ(eₖ − s)."""
    setup = _softmax_setup(build, f)
    if setup is None:
        return None
    k, args, inner, s, name = setup
    g = [s[k] * (sp.S(int(j == k)) - s[j]) for j in range(len(s))]
    lhs, g_formula = formula(f"∇ {name}{sub(k)}"), formula(f"{name}{sub(k)}(", basis(k), f" − {name})")
    build.line(lhs, g_formula, rule=formula("softmax: ∂sₖ/∂vⱼ = sₖ(δₖⱼ − sⱼ)", *stop_note(inner)))
    return Outer(g, g_formula, lhs, inner, "softmax identity")


def norm(build, f):
    """∇‖v‖ = v/‖v‖."""
    if not isinstance(f, Norm):
        return None
    inner = inner_map(list(f.args), build.xs, build.shape)
    if not inner or inner.kind == "affine":
        return None
    g = [a / f for a in f.args]
    v = vector_formula(build, inner, list(f.args))
    g_formula = formula(*v, "/‖", *v, "‖")
    build.line(formula("∇‖", *v, "‖"), g_formula, rule=formula("∇‖v‖ = v/‖v‖", *stop_note(inner)))
    return Outer(g, g_formula, formula("∇‖", *v, "‖"), inner, "norm identity")


def elementwise_sum(build, f):
    """∇ Σⱼ h(vⱼ) = h'(v), elementwise (sum, mean and squared errors of a vector)."""
    if not f.is_Add or len(f.args) < 2:
        return None
    found = template(list(f.args))
    if found is None or found[0] == HOLE:
        return None
    h, items = found
    inner = _with_stops_of(h, inner_map(_in_order(items, build), build.xs, build.shape), build)
    if not inner or inner.kind == "affine" or len(items) != len(f.args):
        return None
    items = _in_order(items, build)
    u = build.variable() if inner.kind == "identity" else sp.Symbol(build.fresh("u", "v", "r"), real=True)
    if inner.kind != "identity":
        build.let(math(u.name), vector_formula(build, inner, items))
    hprime = sp.diff(h, HOLE)
    parts = [u.name + f"[{j}]" for j in range(len(items))]
    symbols = [sp.Symbol(p, real=True) for p in parts] if inner.kind != "identity" else list(build.xs)
    if inner.kind != "identity":
        build.values.update(zip(symbols, items))
        build.display.update(zip(items, symbols))
    g = [hprime.xreplace({HOLE: sym}) for sym in symbols]
    lhs = formula("∇ Σⱼ ", h.xreplace({HOLE: sp.Symbol(u.name + "ⱼ", real=True)}))
    build.line(lhs, formula(hprime.xreplace({HOLE: u})), rule=formula("∇ sum(h(v)) = h'(v), elementwise", *stop_note(inner)))
    return Outer(g, formula(hprime.xreplace({HOLE: u})), lhs, inner, "sum of an elementwise function")


def _with_stops_of(h, inner, build):
    """The inner map, noting also the stops inside h that the variable reaches (exp(x − m): m)."""
    if inner is None:
        return None
    cut = tuple(s for s in stops_in(h) if dag_has(s.args[0], *build.xs) and s not in inner.stops)
    return replace(inner, stops=inner.stops + cut)


def _in_order(items, build) -> list:
    """Terms of a sum in the order of the variable's rows (SymPy sorts a sum its own way)."""
    return ordered(list(items))


def power(build, f):
    """∇(k·δⁿ) = k·n·δⁿ⁻¹·∇δ for δ affine in the variable (a squared TD error)."""
    k, p = f.as_coeff_Mul()
    if not p.is_Pow or not p.exp.is_number or not p.base.is_Add or not outside(p.base, build.xs):
        return None
    inner = inner_map([p.base], build.xs, build.shape)
    if inner is None or inner.kind != "affine":
        return None
    delta = build.scalar_let(("δ", "d"), p.base)
    build.let(delta, formula(p.base))
    g = [k * p.exp * delta ** (p.exp - 1)]
    lhs = formula("∇(", k * delta ** p.exp, ")")
    build.line(lhs, formula(g[0], "·∇", delta), rule="chain (power): ∇(k·δⁿ) = k·n·δⁿ⁻¹·∇δ")
    gradient = sp.ImmutableDenseNDimArray(list(inner.coefficients), build.shape)
    build.line(formula("∇", delta), formula(gradient), rule=formula("linear", *stop_note(inner)))
    return Outer(g, formula(g[0]), lhs, inner, "power rule on a named error δ")


def linear(build, f):
    """∇ dot(w, x) = w: a function whose gradient does not depend on the variable."""
    inner = inner_map([f], build.xs, build.shape)
    if inner is None or inner.kind != "affine" or any(c == 0 for c in inner.coefficients):
        return None  # a zero component is a lesson of its own (why zero: the scalar derivations say it)
    w = sp.ImmutableDenseNDimArray(list(inner.coefficients), build.shape)
    lhs = formula("∇(", f, ")") if len(str(f)) < 40 else formula("∇f")
    build.line(lhs, formula(_whole_or(w)), rule=formula("linear: ∇ dot(w, x) = w", *stop_note(inner)))
    return Outer([sp.S.One], formula("1"), lhs, Inner("affine", coefficients=(), stops=inner.stops), "linear function")


def _whole_or(value):
    """A vector of components e[0], e[1], … written e (whole_form), else as it is."""
    whole = whole_form(elements(value))
    return whole if whole is not None and len(elements(value)) > 1 else value


SCALARS = (log_softmax, logsumexp, softmax_component, norm, squared_norm, elementwise_sum, power, linear)


def _split(expr, xs):
    """e = c·f with c free of the variable outside stops and not a bare number (c = 1 if none)."""
    if not expr.is_Mul:
        return sp.S.One, expr
    constant = [a for a in expr.args if not a.is_number and not outside(a, xs)]
    rest = [a for a in expr.args if a not in constant]
    return sp.Mul(*constant), sp.Mul(*rest)


def scalar(build):
    """grad of a scalar: the identity for f, scaled by c, chained through v, instantiated."""
    if not is_scalar(build.expr):
        return None
    c, f = _split(build.expr, build.xs)
    outer = next((o for o in (identity(build, f) for identity in SCALARS) if o is not None), None)
    if outer is None:
        return None
    g, g_formula, lhs = outer.g, outer.g_formula, outer.lhs
    if c != 1:
        g, g_formula, lhs = _scaled(build, c, outer)
    if outer.identity == "linear function":
        result = from_elements(build.shape, [gi * w for gi in g for w in _coefficients(build, f)])
        return build.finish(outer.identity, result)
    result = chain_line(build, outer.inner, g, g_formula, lhs)
    if outer.identity != "logsumexp identity" or outer.inner.kind not in ("identity", "shift"):
        _instantiate(build, lhs, g_formula, result)
    return build.finish(outer.identity, result)


def _coefficients(build, f) -> list:
    return list(inner_map([f], build.xs, build.shape).coefficients)


def _scaled(build, c, outer):
    """∇(c·f) = c·∇f, naming c when it holds a stop (REINFORCE's advantage A)."""
    if isinstance(c, StopGradient):
        name = build.names[c] = sp.Symbol(build.fresh("A", "a", "k"), real=True)
        build.values[name] = c
    elif stops_in(c):
        name = build.scalar_let(("A", "a", "k"), c)
        build.let(name, formula(c), "stopped: the gradient treats it as a constant")
    else:
        name = c
    g = [name * gi for gi in outer.g]
    g_formula = formula(name, "·(", *outer.g_formula, ")")
    lhs = formula("∇(", name, "·", *_strip_nabla(outer.lhs), ")")
    build.line(lhs, g_formula, rule="constant multiple: ∇(c·f) = c·∇f")
    return g, g_formula, lhs


def _strip_nabla(lhs) -> tuple:
    first = lhs[0]
    if isinstance(first, Math) and first.plain.startswith("∇"):
        return (math(first.plain[1:].lstrip(), first.latex.replace(r"\nabla", "", 1).lstrip()),) + tuple(lhs[1:])
    return tuple(lhs)


def _instantiate(build, lhs, g_formula, result) -> None:
    """The components, once, at the end of the line that states g (or on a line of their own)."""
    if len(str(result)) > SHORT or not build.lines:
        return
    last = build.lines[-1]
    if last.rhs and last.rhs[-1] == formula(result):
        return
    build.lines[-1] = replace(last, rhs=last.rhs + (formula(result),))


def softmax_jacobian(build):
    """∂s/∂v = diag(s) − s sᵀ, i.e. ∂sᵢ/∂vⱼ = sᵢ(δᵢⱼ − sⱼ)."""
    outputs = elements(build.expr)
    forms = [softmax_form(o) for o in outputs] if not is_scalar(build.expr) else [None]
    if any(f is None for f in forms) or [f[0] for f in forms] != list(range(len(forms))):
        return None
    args = forms[0][1]
    inner = inner_map(args, build.xs, build.shape) if all(f[1] == args for f in forms) else None
    if inner is None or inner.kind not in ("identity", "shift"):
        return None
    s = _softmax_let(build, args, inner)
    name = s[0].name.split("[")[0]
    n = len(s)
    jacobian = sp.ImmutableMatrix(n, n, lambda i, j: s[i] * (sp.S(int(i == j)) - s[j]))
    build.display[build.expr] = sp.Symbol(name, real=True)
    rhs = [formula(f"diag({name}) − {name} {name}ᵀ")] + ([formula(jacobian)] if len(str(jacobian)) <= SHORT else [])
    build.line(formula(f"∂{name}/∂{build.name}"), *rhs,
               rule=formula(f"softmax Jacobian: ∂{name}ᵢ/∂{build.name}ⱼ = {name}ᵢ(δᵢⱼ − {name}ⱼ)", *stop_note(inner)))
    return build.finish("softmax Jacobian", jacobian)


def elementwise_jacobian(build):
    """∂f(v)/∂x = diag(f'(v)) for an elementwise function of v = x (or x − m)."""
    if is_scalar(build.expr):
        return None
    found = template(elements(build.expr))
    if found is None:
        return None
    h, items = found
    inner = _with_stops_of(h, inner_map(items, build.xs, build.shape), build)
    if h == HOLE or inner is None or inner.kind not in ("identity", "shift"):
        return None
    v = sp.Symbol(build.name, real=True)
    hprime = sp.diff(h, HOLE)
    jacobian = sp.ImmutableMatrix(len(items), len(items), lambda i, j: hprime.xreplace({HOLE: items[i]}) if i == j else 0)
    rhs = [formula("diag(", hprime.xreplace({HOLE: v}), ")")] + ([formula(jacobian)] if len(str(jacobian)) <= SHORT else [])
    build.line(formula("∂", h.xreplace({HOLE: v}), f"/∂{build.name}"), *rhs,
               rule=formula("elementwise: ∂f(v)/∂v = diag(f'(v))", *stop_note(inner)))
    return build.finish("elementwise Jacobian", jacobian)


IDENTITIES = (softmax_jacobian, elementwise_jacobian, weighted_sum, stopped_target, scalar)
# the lessons a grad by a list of scalars keeps (EM's weighted means, the TD target); the tensor pass takes the rest
LESSONS = (weighted_sum, stopped_target)
SCALAR_IDENTITIES = (sigmoid_cross_entropy,)
