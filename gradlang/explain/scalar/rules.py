"""The rule table: one small function per SymPy class, each returning a step.

Every rule mirrors the `_eval_derivative` of its class in SymPy (or in
gradlang.functions), building the result from the children's frozen results
with the same operations, so that the root result is exactly what `diff`
returns. Rules also *name* what they see: a quotient is a Mul with a
reciprocal; a primitive (sigmoid, softplus, relu, ...) goes by its record's name.
A class without a rule is differentiated by SymPy and says so.
"""

from __future__ import annotations

import sympy as sp

from gradlang.derive.derivatives import derivative
from gradlang.expr import primitives
from gradlang.expr.domain import Written
from gradlang.expr.functions import Maximum, Minimum, Where
from gradlang.expr.stopgrad import StopGradient
from gradlang.explain.formula import Math
from gradlang.explain.note import Note, note as words
from gradlang.explain.text import plain
from gradlang.expr.walk import dag_atoms

_U = sp.Symbol("u")
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

# The vector functions' rules (their records' words), with the formulas apart for LaTeX.
VECTOR_RULES = {
    "logsumexp": words("the gradient of ", Math("logsumexp(v)", r"\operatorname{logsumexp}(v)"), " is ",
                       Math("softmax(v)", r"\operatorname{softmax}(v)")),
    "softmax": words("with ", Math("s = softmax(v)", r"s = \operatorname{softmax}(v)"), ", ",
                     Math("d s[k] / d v[j] = s[k]*(1 - s[j])", r"\partial s_{k} / \partial v_{j} = s_{k} (1 - s_{j})"),
                     " if ", Math("j = k", "j = k"), ", else ", Math("-s[k]*s[j]", r"-s_{k} s_{j}")),
    "norm": words("the gradient of ", Math("norm(v)", r"\|v\|"), " is ", Math("v/norm(v)", r"v / \|v\|")),
}

# --- leaves -------------------------------------------------------------


def constant(expr, ctx):
    """Anything that does not depend on the variable has derivative 0 (and says why)."""
    note = words(ctx.symbol, " does not appear") if dag_atoms(expr, sp.Symbol) else ""
    return ctx.make("constant", expr, sp.S.Zero, note=note)


def rule_symbol(expr, ctx):
    """d/dx x = 1 (another symbol never reaches here: it is a constant)."""
    return ctx.make("variable", expr, sp.S.One)


def rule_placeholder(expr, ctx):
    """A frozen stop_gradient (or piecewise-constant function): derivative 0."""
    stopped = ctx.stopped(expr)
    if stopped is None:
        return rule_symbol(expr, ctx)
    if isinstance(stopped, StopGradient):
        argument = stopped.args[0]
        lost = derivative(argument, ctx.symbol)
        note = words(argument, " is treated as a constant, so its derivative ", lost, " does not flow back")
        return ctx.make("stop_gradient", expr, sp.S.Zero, note=note, blocked=lost)
    name = plain(stopped.func(*[_U] * len(stopped.args))).split("(")[0]
    note = f"{name} is constant between its jumps, so its derivative is 0"
    return ctx.make("piecewise constant", expr, sp.S.Zero, note=note)


# --- sums and products --------------------------------------------------


def rule_add(expr, ctx):
    """Sum rule (also sums, means and dot products of vectors): Add.diff."""
    subs = [ctx.derive(a) for a in expr.args]
    return ctx.make("sum", expr, sp.Add(*[d.raw for d in subs]), subs)


def _leibniz(args, derivs):
    """Mul's derivative as SymPy computes it (first-order Leibniz rule); a factor whose derivative
    is 0 gives no term (0*inf would be nan, as in the derivative engine, derive/derivatives.py)."""
    terms = []
    for i, d in enumerate(derivs):
        if d is sp.S.Zero:
            continue
        factors = list(args[:i]) + [d] + list(args[i + 1:])
        terms.append(1 * sp.Mul(*factors))
    return sp.Add(*terms)


def _is_reciprocal(factor) -> bool:
    return factor.is_Pow and factor.exp.is_negative is True


def rule_mul(expr, ctx):
    """Constant multiple, product or quotient rule (a/b is a*b^(-1) in SymPy)."""
    subs = [ctx.derive(a) for a in expr.args]
    raw = _leibniz(expr.args, [d.raw for d in subs])
    varying = [(a, d) for a, d in zip(expr.args, subs) if ctx.involves(a)]
    shown = [d for _, d in varying]
    if len(varying) == 1:
        return ctx.make("constant multiple", expr, raw, shown)
    factors = [a for a, _ in varying]
    if any(_is_reciprocal(a) for a in factors) and not all(_is_reciprocal(a) for a in factors):
        u = sp.Mul(*[a for a in factors if not _is_reciprocal(a)])
        v = sp.Mul(*[a.base ** -a.exp for a in factors if _is_reciprocal(a)])
        note = Math("(u/v)' = (u'·v - u·v')/v^2", "(u/v)' = (u' v - u v')/v^{2}")
        return ctx.make("quotient", expr, raw, shown, note=note, given=(("u", u), ("v", v)))
    if len(factors) == 2:
        note = Math("(u·v)' = u'·v + u·v'", "(u v)' = u' v + u v'")
        return ctx.make("product", expr, raw, shown, note=note, given=(("u", factors[0]), ("v", factors[1])))
    note = Math("(u₁·u₂·…)' = Σₖ u₁·…·uₖ'·…", r"(u_{1} u_{2} \cdots)' = \sum_{k} u_{1} \cdots u_{k}' \cdots")
    given = tuple((f"u{str(k).translate(_SUBSCRIPTS)}", a) for k, a in enumerate(factors, 1))
    return ctx.make("product", expr, raw, shown, note=note, given=given)


# --- powers -------------------------------------------------------------


def _power_name(expr) -> str:
    return "sqrt" if expr.exp == sp.S.Half else "power"


def rule_pow(expr, ctx):
    """Power rule, a^u, or u^v with both varying: Pow._eval_derivative."""
    base, exponent = expr.args
    dbase, dexp = ctx.derive(base), ctx.derive(exponent)
    raw = expr * (dexp.raw * sp.log(base) + dbase.raw * exponent / base)
    if ctx.involves(base) and ctx.involves(exponent):
        note = Math("d(u^v) = u^v*(v'*log(u) + v*u'/u)", r"d(u^{v}) = u^{v} (v' \log u + v u'/u)")
        return ctx.make("general power", expr, raw, (dbase, dexp), note=note)
    if ctx.involves(exponent):
        return _outer(ctx, "exponential", expr, raw, exponent, dexp)
    return _outer(ctx, _power_name(expr), expr, raw, base, dbase)


def _outer(ctx, name, expr, raw, inner, dinner, note=""):
    """The elementary rule itself when the argument is the variable, else the chain rule."""
    if inner == ctx.symbol:
        return ctx.make(name, expr, raw, (dinner,), note=note)
    given = (("u", inner),)
    if not note and name in ("power", "sqrt"):
        note, given = Math("(u^n)' = n·u^(n-1)·u'", "(u^{n})' = n u^{n-1} u'"), given + (("n", expr.exp),)
    return ctx.make("chain", expr, raw, (dinner,), note=note, outer=name, given=given)


# --- functions ----------------------------------------------------------


def _function_name(expr) -> str:
    """The gradlang name of a primitive (its record's), else SymPy's in lower case."""
    record = primitives.by_class(type(expr))
    return record.name if record is not None else type(expr).__name__.lower()


def _formula(expr) -> Note:
    """f'(u) = …, computed by the function's own derivative."""
    generic = expr.func(*[_U] * len(expr.args))
    if not isinstance(generic, expr.func):
        return Note()
    name = _function_name(expr)
    return words(Math(f"{name}'(u) = ", rf"\operatorname{{{name}}}'(u) = "), generic.fdiff(1))


def rule_function(expr, ctx):
    """f(u)' = f'(u)*u' for every elementwise function: Function._eval_derivative."""
    subs, terms = [], []
    for i, arg in enumerate(expr.args, start=1):
        d = ctx.derive(arg)
        if d.raw.is_zero:
            continue
        subs.append(d)
        terms.append(expr.fdiff(i) * d.raw)
    raw = sp.Add(*terms)
    if len(expr.args) != 1:
        record = primitives.by_class(type(expr))
        return ctx.make(_function_name(expr), expr, raw, subs, note=VECTOR_RULES.get(record.name, record.rule) if record else "")
    dinner = subs[0] if subs else ctx.derive(expr.args[0])
    return _outer(ctx, _function_name(expr), expr, raw, expr.args[0], dinner, _formula(expr))


def rule_abs(expr, ctx):
    """|u|' = sign(u)*u' (0 at 0), for every u: gradlang's values are real, as in its own diff (RealAbs)."""
    arg = expr.args[0]
    d = ctx.derive(arg)
    raw = d.raw * sp.sign(arg)
    return _outer(ctx, "abs", expr, raw, arg, d, words(Math("abs'(u) = sign(u)", r"|u|' = \operatorname{sign}(u)"), ", 0 at 0"))


def rule_extremum(expr, ctx):
    """max/min of several arguments: tied arguments share the gradient equally."""
    subs, terms = [], []
    for k, arg in enumerate(expr.args):
        d = ctx.derive(arg)
        if d.raw != 0:
            terms.append(expr.share_class(sp.Integer(k), *expr.args) * d.raw)
        if ctx.involves(arg):
            subs.append(d)
    name = "max" if isinstance(expr, Maximum) else "min"
    note = ("ties share its gradient equally: "  # short, so the note fits 100 columns at any depth
            "1/t to each of t tied arguments, else 0")
    return ctx.make(name, expr, sp.Add(*terms), subs, note=note)


def rule_where(expr, ctx):
    """where(c, a, b)' = where(c, a', b'): the condition is not differentiated."""
    condition, a, b = expr.args
    da, db = ctx.derive(a), ctx.derive(b)
    note = words("the condition ", ctx.thaw(condition), " is not differentiated")
    return ctx.make("where", expr, Where(condition, da.raw, db.raw), (da, db), note=note)


def rule_written(expr, ctx):
    """A form kept as the user wrote it (gradlang.expr.domain) is differentiated as its argument."""
    return ctx.derive(expr.args[0])


def by_sympy(expr, ctx):
    """No rule of ours applies: SymPy differentiates, and the step says so."""
    note = "by SymPy's differentiation (no step-by-step rule for this form)"
    return ctx.make("sympy", expr, sp.diff(expr, ctx.symbol), note=note)


RULES = {
    sp.Symbol: rule_symbol,
    sp.Dummy: rule_placeholder,
    sp.Add: rule_add,
    sp.Mul: rule_mul,
    sp.Pow: rule_pow,
    sp.Abs: rule_abs,
    Maximum: rule_extremum,
    Minimum: rule_extremum,
    Where: rule_where,
    Written: rule_written,
}


def _generic(cls) -> bool:
    """A function whose derivative SymPy takes by the plain chain rule."""
    return issubclass(cls, sp.Function) and cls._eval_derivative is sp.Function._eval_derivative


def rule_for(expr):
    """The rule for an expression's class (elementwise functions share one)."""
    rule = RULES.get(expr.func)
    if rule is not None:
        return rule
    return rule_function if _generic(expr.func) else by_sympy
