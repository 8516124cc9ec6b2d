"""The vector identities of the tensor rewrites, one function of one node each (rewrite.py registers them).

Each rule recognises its left side by node classes and returns the right side
it states in its docstring, or None. Rules that call SymPy's tree walks
(factor_terms, cancel, count_ops) do so only on formulas small as trees, and
pay for the walk and the terms it creates from the running tidy's budget of
work (work.py: `affordable`), so the work is bounded by a count of nodes and
terms, never by time: the result is the same on every machine.
"""

from __future__ import annotations

import functools

import sympy as sp

from gradlang.derive.tensor.work import POLYNOMIAL_WEIGHT, affordable, ops, small
from gradlang.expr.equal import formula_cache
from gradlang.expr.functions import Where
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import rank, shape_of

MAX_EXPAND_OPS = 200  # distribute a product only when it is this small


@formula_cache(1 << 10)
def _factor_terms(expr):
    """SymPy's factor_terms, once per formula: the passes of a tidy and the lines of a derivation meet the same sums."""
    return sp.factor_terms(expr)


@formula_cache(1 << 10)
def _cancelled(expr):
    """expr cancelled and factored, once per formula (a derivation's lines share their scalar factors).

    Cancel and factor see the formula as a rational function: every function or tensor node (a sum,
    a dot, sqrt's argument's sums) is one variable to them, named by its place (`<0>`, `<1>`, … which no program can name). Given the
    nodes themselves, SymPy expands inside their arguments (sum((x − μ)²) multiplied out), which
    costs most of the time of a layer norm's gradient and only ever makes the formula longer."""
    masks: dict = {}
    masked = _masked(expr, masks)
    if not masked.has(sp.Add):
        return expr  # a product of powers of variables is in lowest terms already
    result = sp.factor(sp.cancel(masked))
    return result.xreplace({symbol: node for node, symbol in masks.items()})


def _masked(expr, masks: dict):
    """expr with its sums, products, integer powers and numbers kept and every other node a fresh
    symbol, a root b^(1/q) too (SymPy rationalises roots of sums, multiplying n^(13/2) into a layer
    norm); `masks` maps each node to its symbol (one per distinct node, numbered in the order met)."""
    if expr.is_Atom and not isinstance(expr, t.TensorOp):
        return expr
    if isinstance(expr, sp.Pow) and expr.exp.is_Rational and not expr.exp.is_Integer:
        # b^(p/q) = (b^(1/q))^p: the root is the variable, so b^(1/2) b^(-1/2) still cancels
        return _mask(expr.base ** sp.Rational(1, expr.exp.q), masks) ** expr.exp.p
    if isinstance(expr, (sp.Add, sp.Mul)) or (isinstance(expr, sp.Pow) and expr.exp.is_Integer):
        return expr.func(*[_masked(arg, masks) for arg in expr.args])
    return _mask(expr, masks)


def _mask(node, masks: dict):
    if node not in masks:
        masks[node] = sp.Symbol(f"<{len(masks)}>")
    return masks[node]


LINEAR = (t.MatMul, t.Outer, t.Dot, t.Transpose, t.Total, t.SumAxis, t.Row, t.Column, t.Entry)


def scalar_out(node):
    """A linear map of c·u is c times the map of u (c a scalar factor)."""
    if not isinstance(node, LINEAR):
        return None
    for k, arg in enumerate(node.args):
        if isinstance(arg, sp.Mul):
            scalars = [f for f in arg.args if rank(f) == 0]
            if scalars and len(scalars) < len(arg.args):
                rest = sp.Mul(*[f for f in arg.args if rank(f) > 0])
                args = list(node.args)
                args[k] = rest
                return sp.Mul(*scalars) * node.func(*args)
    return None


def dot_basis(node):
    """⟨e_k, v⟩ = v_k."""
    if isinstance(node, t.Dot):
        a, b = node.args
        if isinstance(a, t.OneHot):
            return t.Entry(b, a.args[0])
        if isinstance(b, t.OneHot):
            return t.Entry(a, b.args[0])
    return None


def dot_self(node):
    """⟨u, u⟩ = ‖u‖², so ⟨z, z⟩/‖z‖ is ‖z‖."""
    if isinstance(node, t.Dot) and node.args[0] == node.args[1]:
        return t.NormOf(node.args[0]) ** 2
    return None


def dot_ones(node):
    """⟨𝟙, v⟩ = Σ v."""
    if isinstance(node, t.Dot):
        a, b = node.args
        if isinstance(a, t.Ones):
            return t.Total(b)
        if isinstance(b, t.Ones):
            return t.Total(a)
    return None


def sums_to_one(node):
    """Σₖ sₖ = 1 for s = softmax(z), and Σ e_k = 1."""
    if isinstance(node, t.Total) and isinstance(node.args[0], (t.OneHot, t.SoftmaxOf)):
        return sp.S.One
    return None


def sum_of_ones(node):
    """Σ 𝟙 = n."""
    if isinstance(node, t.Total) and isinstance(node.args[0], t.Ones):
        return sp.Mul(*node.args[0].args)
    return None


def total_of_constant(node):
    """Σ of a list of numbers is its sum: Σ [0, 1, 0] = 1."""
    if isinstance(node, t.Total) and isinstance(node.args[0], t.Literal):
        return sp.Add(*node.args[0].entries)
    return None


def dot_of_sum(node):
    """⟨a + b, v⟩ = ⟨a, v⟩ + ⟨b, v⟩, a scalar term c giving c Σ v: so ⟨e_k/s_k − 1, s⟩ = 1 − Σₖ sₖ can meet Σₖ sₖ = 1."""
    if not isinstance(node, t.Dot):
        return None
    for k, (a, b) in enumerate((node.args, node.args[::-1])):
        if isinstance(a, sp.Add) and small(a):
            return sp.Add(*[t.Dot(term, b) if rank(term) == 1 else term * t.Total(b) for term in a.args])
    return None


def dot_quotient(node):
    """⟨u ⊘ s, s⟩ = Σ u: what the softmax rule sends back through a log (soft-label cross-entropy)."""
    if not isinstance(node, t.Dot):
        return None
    for a, b in (node.args, node.args[::-1]):
        factors = sp.Mul.make_args(a)
        if sp.Pow(b, -1) in factors:
            rest = [f for f in factors if f != sp.Pow(b, -1)]
            return t.Total(sp.Mul(*rest)) if any(rank(f) == 1 for f in rest) else sp.Mul(*rest) * sp.Mul(*shape_of(b))
    return None


def softmax_quotient(node):
    """exp(u) ⊘ Σ exp(u) = softmax(u): the softmax written out, as log Σ exp and stable softmaxes give it."""
    if not isinstance(node, sp.Mul):
        return None
    exps = [f for f in node.args if isinstance(f, sp.exp) and rank(f) == 1]
    for e in exps:
        total = sp.Pow(t.Total(e), -1)
        if total in node.args:
            rest = [f for f in node.args if f is not e and f != total]
            return sp.Mul(*rest) * t.SoftmaxOf(e.args[0])
    return None


def hadamard_basis(node):
    """e_k ⊙ v = v_k e_k for a vector v."""
    if not isinstance(node, sp.Mul):
        return None
    hots = [f for f in node.args if isinstance(f, t.OneHot)]
    others = [f for f in node.args if not isinstance(f, t.OneHot)]
    vectors = [f for f in others if rank(f) == 1]
    if len(hots) != 1 or not vectors:
        return None
    k = hots[0].args[0]
    scalars = [f for f in others if rank(f) == 0]
    entries = [t.Entry(v, k) for v in vectors]
    return sp.Mul(*scalars, *entries, hots[0])


def _is_ones(factor) -> bool:
    """𝟙 or 𝟙 𝟙ᵀ: a factor of ones, the identity of the elementwise product."""
    if isinstance(factor, t.Ones):
        return True
    return isinstance(factor, t.Outer) and all(isinstance(a, t.Ones) for a in factor.args)


def ones_factor(node):
    """𝟙 ⊙ v = v where v has the shape already."""
    if not isinstance(node, sp.Mul):
        return None
    ones = [f for f in node.args if _is_ones(f)]
    shaped = [f for f in node.args if not _is_ones(f) and rank(f) > 0]
    if ones and shaped:
        return sp.Mul(*[f for f in node.args if not _is_ones(f)])
    return None


def ones(node):
    """c ⊙ 𝟙 stays; A I = A and I A = A; 𝟙ᵀ diag(v) = v = diag(v) 𝟙 (a hessian's ledger term, higher.py);
    a Total of a scalar times ones (𝟙 or 𝟙 𝟙ᵀ) is its size times it."""
    if isinstance(node, t.MatMul):
        a, b = node.args
        if isinstance(b, t.Eye):
            return a
        if isinstance(a, t.Eye):
            return b
        for ones_, diag in ((a, b), (b, a)):
            if isinstance(ones_, t.Ones) and rank(ones_) == 1 and isinstance(diag, t.Diag):
                return diag.args[0]
    if isinstance(node, t.Total):
        factors = sp.Mul.make_args(node.args[0])
        ones = [f for f in factors if _is_ones(f)]
        rest = [f for f in factors if not _is_ones(f)]
        if ones and all(rank(f) == 0 for f in rest):
            return sp.Mul(*rest, *shape_of(ones[0]))
    return None


def total_of_sum(node):
    """Σ(u + c) splits over its terms, so Σ softmax and Σ e_k can meet their rules."""
    if isinstance(node, t.Total) and isinstance(node.args[0], sp.Add):
        n = sp.Mul(*shape_of(node.args[0]))
        return sp.Add(*[t.Total(term) if rank(term) else n * term for term in node.args[0].args])
    return None


def common_factor(node):
    """A sum inside a linear map shows its common factor: outer(2 W x − 2 y, x) = 2 outer(W x − y, x)."""
    if not isinstance(node, LINEAR):
        return None
    for k, arg in enumerate(node.args):
        if isinstance(arg, sp.Add) and affordable(arg):
            factored = _factor_terms(arg)
            if isinstance(factored, sp.Mul) and factored != arg:
                args = list(node.args)
                args[k] = factored
                return node.func(*args)
    return None


def numeric_factor(node):
    """A tensor sum whose terms share a number shows it: −2 y + 2 t = 2 (t − y)."""
    if not isinstance(node, sp.Add) or rank(node) == 0 or not _shares_a_number(node) or not affordable(node):
        return None
    factored = _factor_terms(node)
    if isinstance(factored, sp.Mul) and factored.args[0].is_Number and factored != node:
        return factored
    return None


def _shares_a_number(node) -> bool:
    """Could the terms share a number (SymPy's factor_terms is slow on a large sum that has none)?

    All negative, or rational coefficients with a common factor other than 1, or one float coefficient
    in every term: factor_terms takes no gcd of floats (2.0 x + 4.0 y stays). Any float used
    to count as sharing, so one 0.5 in a program sent every sum through factor_terms (issue #41)."""
    coefficients = [term.as_coeff_Mul()[0] for term in node.args]
    if all(c.is_negative for c in coefficients):
        return True
    if all(c.is_Rational for c in coefficients):
        return functools.reduce(sp.gcd, coefficients) != 1
    return len(set(coefficients)) == 1  # floats: factor_terms takes out only one they all have (1.0 too)


def scalar_coefficient(node):
    """The scalar factors of a product cancelled together: σ(1 − σ)(−y/σ + (1 − y)/(1 − σ)) = σ − y."""
    if not isinstance(node, sp.Mul):
        return None
    scalars = [f for f in node.args if rank(f) == 0]
    before = sp.Mul(*scalars)
    if len(scalars) < 2 or not small(before) or ops(before) > MAX_EXPAND_OPS:
        return None
    if not affordable(before, POLYNOMIAL_WEIGHT):
        return None
    after = _cancelled(before)
    if ops(after) >= ops(before):
        return None
    return after * sp.Mul(*[f for f in node.args if rank(f) > 0])


def elementwise_cancel(node):
    """An elementwise product cancelled as scalars are (⊙ is commutative): σ ⊙ (1 − σ) ⊙ (y/σ − (1 − y)/(1 − σ)) = y − σ."""
    if not isinstance(node, sp.Mul) or rank(node) == 0:
        return None
    if not any(isinstance(f, sp.Add) or (isinstance(f, sp.Pow) and isinstance(f.base, sp.Add)) for f in node.args):
        return None
    if not small(node) or ops(node) > MAX_EXPAND_OPS or not affordable(node, POLYNOMIAL_WEIGHT):
        return None
    if any(isinstance(n, t.TensorOp) for n in sp.preorder_traversal(node)):
        return None  # only elementwise functions of tensors: e_k, a dot or a matrix product are no scalars
    after = _cancelled(node)
    return after if ops(after) < ops(node) else None


def transpose_product(node):
    """(A B)ᵀ = Bᵀ Aᵀ, so transposes sit on the names: (Wᵀ A)ᵀ = Aᵀ W."""
    if isinstance(node, t.Transpose) and isinstance(node.args[0], t.MatMul):
        a, b = node.args[0].args
        return t.MatMul(t.Transpose(b), t.Transpose(a))
    return None


def collect_right(node):
    """A W + B W = (A + B) W: products that share their right factor, collected."""
    if not isinstance(node, sp.Add):
        return None
    groups: dict = {}
    for term in node.args:
        if isinstance(term, t.MatMul):
            groups.setdefault(term.args[1], []).append(term)
    for right, terms in groups.items():
        if len(terms) > 1:
            rest = [term for term in node.args if term not in terms]
            return sp.Add(t.MatMul(sp.Add(*[term.args[0] for term in terms]), right), *rest)
    return None


def diag_sum(node):
    """a diag(u) + b diag(v) = diag(a u + b v): diag is linear, so diag(2 v) − diag(v) is diag(v)."""
    if not isinstance(node, sp.Add):
        return None
    parts = [(c, d) for c, d in (term.as_coeff_Mul() for term in node.args) if isinstance(d, t.Diag)]
    if len(parts) < 2:
        return None
    rest = [term for term in node.args if term.as_coeff_Mul()[1] not in {d for _, d in parts}]
    return sp.Add(t.Diag(sp.Add(*[c * d.args[0] for c, d in parts])), *rest)


def entry_inside(node):
    """(f(u, c))_k = f(u_k, c) for an elementwise f of vectors: (1/s)_k = 1/s_k, so s_k/s_k can cancel."""
    if not (isinstance(node, t.Entry) and len(node.args) == 2):
        return None
    base, k = node.args
    if isinstance(base, (t.TensorOp, sp.Symbol)) or rank(base) != 1 or not isinstance(base, (sp.Pow, sp.Mul, sp.Add)):
        return None
    return base.func(*[t.Entry(a, k) if rank(a) == 1 else a for a in base.args])


def total_of_product(node):
    """Σ(c u ⊙ v) = c ⟨u, v⟩ for two vectors u and v."""
    if not (isinstance(node, t.Total) and isinstance(node.args[0], sp.Mul)):
        return None
    factors = node.args[0].args
    vectors = [f for f in factors if rank(f) == 1]
    if len(vectors) != 2 or any(rank(f) > 1 for f in factors):
        return None
    return sp.Mul(*[f for f in factors if rank(f) == 0]) * t.Dot(*vectors)


def where_branches(node):
    """a ⊙ where(c, 1, 0) + b ⊙ where(c, 0, 1) = where(c, a, b): a where's derivative, its two branches in one where."""
    if not isinstance(node, sp.Add):
        return None
    branches: dict = {}
    for term in node.args:
        for factor in sp.Mul.make_args(term):
            if isinstance(factor, Where) and {factor.args[1], factor.args[2]} == {sp.S.One, sp.S.Zero}:
                rest = sp.Mul(*[f for f in sp.Mul.make_args(term) if f is not factor])
                branches.setdefault(factor.args[0], {}).setdefault(factor.args[1] == 1, []).append((term, rest))
                break
    for condition, sides in branches.items():
        if len(sides.get(True, ())) == 1 and len(sides.get(False, ())) == 1:
            (taken_term, taken), (other_term, other) = sides[True][0], sides[False][0]
            rest = [term for term in node.args if term is not taken_term and term is not other_term]
            return sp.Add(Where(condition, taken, other), *rest)
    return None
