"""Squared errors in the form a teacher writes them: a stopped target (TD), a squared norm (VQ-VAE).

Two identities of issue 14's table, beside those of identities.py:

- **a stopped target**: L = k·δⁿ with δ = y − q, where the target y holds a
  stop and q is the part that depends on the variable, linearly. Then
  ∇L = k·n·δⁿ⁻¹·∇δ = −k·n·δⁿ⁻¹·∇q: semi-gradient TD (DQN), where δ is the TD
  error, y = r + γ·sg(max q(s₂)) the target and ∇q = eₐ s₁ᵀ for a linear
  Q-function q(s) = W·s. The adjoint arriving at each stop of the target is
  k·n·δⁿ⁻¹ times its coefficient in δ (γ·δ for TD).
- **a squared norm**: f = β‖u‖² = β Σⱼ uⱼ², so ∇ᵤf = 2β·u; chained through
  u = W·a − sg(e) it gives 2β·u·aᵀ, VQ-VAE's commitment loss
  2β(z_e − e)xᵀ.

Like every identity, the stated result is instantiated and checked equal to
grad at exact points (vector.Build.finish) before it is used.
"""

from __future__ import annotations

import sympy as sp

from gradlang.expr.values import from_elements, is_scalar
from gradlang.explain.formula import basis, formula, math
from gradlang.explain.vector.inner import Inner, inner_map, outside
from gradlang.explain.vector.lift import HOLE, ordered, stops_in, template
from gradlang.explain.vector.derivation import SHORT
from gradlang.explain.vector.text import stop_note, vector_formula
from gradlang.expr.walk import dag_has


def _split_target(base, xs):
    """(q, y, sign): δ = y − q (sign −1, so ∇δ = −∇q) or δ = q − y (sign 1), where y, the target,
    holds a stop the variable reaches and q is the rest; None when there is no stopped target."""
    live = [t for t in base.args if outside(t, xs)]
    rest = sp.Add(*[t for t in base.args if not outside(t, xs)])
    if not live or rest == 0 or not any(dag_has(s.args[0], *xs) for s in stops_in(rest)):
        return None
    live = sp.Add(*live)
    if live.could_extract_minus_sign():
        return -live, rest, -1
    return live, -rest, 1


def _name(build, preferred: tuple, value) -> sp.Symbol:
    """A let name that stands for value in the check but is not substituted for it in what is shown."""
    symbol = sp.Symbol(build.fresh(*preferred), real=True)
    build.values[symbol] = value
    return symbol


def _outer_product(build, gradient: list):
    """∇q of a linear q in the variable's shape, and as eᵢ·aᵀ when only row i of a matrix is non-zero."""
    value = from_elements(build.shape, gradient)
    if len(build.shape) != 2:
        return value, None
    rows, columns = build.shape
    nonzero = [i for i in range(rows) if any(gradient[i * columns + j] != 0 for j in range(columns))]
    if len(nonzero) != 1:
        return value, None
    i = nonzero[0]
    a = sp.ImmutableDenseNDimArray(gradient[i * columns:(i + 1) * columns])
    return value, formula(basis(i), "·", a, "ᵀ")


def _target_stops(build, y) -> list:
    return [stop for stop in stops_in(y) if dag_has(stop.args[0], *build.xs)]


def _target_adjoints(build, base, y, g) -> None:
    """At each stop of the target: the adjoint arriving, ∂L/∂m = g·∂δ/∂m (γ·δ for TD), and what it removes."""
    for stop in _target_stops(build, y):
        c = sp.Dummy("c", real=True)
        slope = sp.diff(base.xreplace({stop: c}), c)
        if slope.free_symbols:
            continue
        adjoint = sp.expand(g * slope)
        build.adjoints.append((stop, formula(g, "·∂δ/∂", stop, " = ", adjoint)))
        build.removes.append((stop, formula(adjoint, "·∇", stop.args[0])))


def _target_lets(build, base, split) -> tuple:
    """let q = …, y = …, δ = y − q; returns the three names (δ, q, y)."""
    q, y, sign = split
    q_name, y_name = _name(build, ("q", "p"), q), _name(build, ("y", "t"), y)
    delta = build.scalar_let(("δ", "d"), base)
    build.let(q_name, formula(q), "the prediction")
    build.let(y_name, formula(y), "the target: stopped, ∇y ≔ 0")
    build.let(delta, formula(y_name, " − ", q_name) if sign < 0 else formula(q_name, " − ", y_name))
    return delta, q_name, y_name


def stopped_target(build):
    """∇(k·δⁿ) = k·n·δⁿ⁻¹·∇δ with δ = y − q, y a stopped target, q linear: −k·n·δⁿ⁻¹·∇q (semi-gradient TD)."""
    k, p = build.expr.as_coeff_Mul() if is_scalar(build.expr) else (None, None)
    if p is None or not p.is_Pow or not p.exp.is_number or not p.base.is_Add:
        return None
    split = _split_target(p.base, build.xs)
    inner = split and inner_map([split[0]], build.xs, build.shape)
    if not inner or inner.kind != "affine":
        return None
    sign, (delta, q, y) = split[2], _target_lets(build, p.base, split)
    g, loss = k * p.exp * delta ** (p.exp - 1), k * delta ** p.exp
    build.line(formula("∇(", loss, ")"), formula(g, "·∇", delta), rule="chain (power): ∇(k·δⁿ) = k·n·δⁿ⁻¹·∇δ")
    cut = Inner("affine", stops=tuple(_target_stops(build, split[1])))
    build.line(formula("∇", delta), formula("∇", *((y, " − ∇", q, " = −∇", q) if sign < 0 else (q, " − ∇", y, " = ∇", q))),
               rule=formula("the target is stopped", *stop_note(cut)))
    gradient, outer = _outer_product(build, list(inner.coefficients))
    build.line(formula("∇", q), formula(gradient), *([outer] if outer else []),
               rule=formula("linear: q is a component of W·a, ∇_W (W·a)ᵢ = eᵢ·aᵀ" if outer else "linear"))
    result = from_elements(build.shape, [sign * g * c for c in inner.coefficients])
    count = len(build.lines)
    build.line(formula(f"∇_{build.name}(", loss, ")"), formula(sign * g, "·∇", q),
               *([formula(sign * g, "·", *outer)] if outer else []),
               *([formula(result)] if len(str(result)) <= SHORT else []), rule=f"({count - 2}), ({count - 1}), ({count})")
    _target_adjoints(build, p.base, split[1], g)
    return build.finish("TD error with a stopped target", result)


def squared_norm(build, f):
    """∇ β‖u‖² = 2β·u, for f = Σⱼ β·uⱼ² (β a number) and u a named inner vector."""
    from gradlang.explain.vector.identities import Outer

    if not f.is_Add or len(f.args) < 2:
        return None
    found = template(list(f.args))
    beta = found and sp.simplify(found[0] / HOLE ** 2)
    if not found or beta.has(HOLE) or not beta.is_number or beta == 0:
        return None
    items = ordered(found[1])
    inner = inner_map(items, build.xs, build.shape)
    if not inner or inner.kind == "affine" or len(items) != len(f.args):
        return None
    u = _vector(build, inner, items)
    scale = formula("β") if beta != 1 else formula()
    if beta != 1:
        build.let(math("β"), formula(beta))
    g = [2 * beta * uj for uj in u[1]]
    lhs = formula("∇ ", *scale, "‖", u[0], "‖²")
    build.line(lhs, formula("2", *scale, "·", u[0]), *([formula(2 * beta * u[0])] if beta != 1 else []),
               rule=formula("∇ β‖u‖² = 2β·u", *stop_note(inner)))
    return Outer(g, formula("2", *scale, "·", u[0]), lhs, inner, "squared norm")


def _vector(build, inner: Inner, items: list) -> tuple:
    """(u, [u[0], u[1], …]): the variable itself, or a let-named inner vector u = W·a − sg(e)."""
    if inner.kind == "identity":
        return build.variable(), list(build.xs)
    u = sp.Symbol(build.fresh("u", "v", "r"), real=True)
    build.let(math(u.name), vector_formula(build, inner, items))
    symbols = [sp.Symbol(f"{u.name}[{j}]", real=True) for j in range(len(items))]
    build.values.update(zip(symbols, items))
    build.display.update(zip(items, symbols))
    return u, symbols
