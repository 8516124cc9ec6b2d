"""The bounded rewrites that turn a raw adjoint into the form a teacher writes.

Each rule is a function of one node that returns a simpler equal node, or
None, registered in RULES with the identity a derivation names it by. `tidy` applies them bottom-up over the DAG, each node at most
`MAX_PASSES` times, so the work is bounded by the size of the formula and the
result is the same on every run. The identities:

    scalars out of linear maps   outer(c u, v) = c outer(u, v), A (c x) = c A x, (c A)ᵀ = c Aᵀ
    basis vectors                ⟨e_k, v⟩ = v_k,   e_k ⊙ v = v_k e_k,   Σ e_k = 1,   (f(u))_k = f(u_k)
    softmax sums to one          Σ softmax(z) = 1,  ⟨𝟙, v⟩ = Σ v,  Σ (u ⊙ v) = ⟨u, v⟩,  ⟨u ⊘ s, s⟩ = Σ u
    ones                         Σ (c 𝟙) = n c,  A I = A,  I A = A
    products                     (A B)ᵀ = Bᵀ Aᵀ,  A W + B W = (A + B) W
    distribute where it cancels  s ⊙ (1 − e_k/s_k) = s − e_k  (kept only when the result is smaller)
    where's two branches         a ⊙ where(c, 1, 0) + b ⊙ where(c, 0, 1) = where(c, a, b)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import sympy as sp

from gradlang.expr.functions import Where
from gradlang.expr.tensor import nodes as t
from gradlang.expr.tensor.nodes import rank, shape_of

MAX_PASSES = 6
MAX_EXPAND_OPS = 200  # distribute a product only when it is this small
MAX_TREE = 2000  # SymPy's factor_terms and count_ops walk a formula as a tree: a shared part at every use


@functools.lru_cache(maxsize=1 << 14)
def tree_size(expr) -> int:
    """Nodes of the formula written out as a tree, counted over its DAG (linear in the DAG's size)."""
    return 1 + sum(tree_size(a) for a in expr.args)


def _small(expr) -> bool:
    """Small enough, as a tree, for SymPy's tree walks: an adjoint through nested softmaxes doubles at each one."""
    return tree_size(expr) <= MAX_TREE
LINEAR = (t.MatMul, t.Outer, t.Dot, t.Transpose, t.Total, t.SumAxis, t.Row, t.Column, t.Entry)


def _scalar_out(node):
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


def _dot_basis(node):
    """⟨e_k, v⟩ = v_k."""
    if isinstance(node, t.Dot):
        a, b = node.args
        if isinstance(a, t.OneHot):
            return t.Entry(b, a.args[0])
        if isinstance(b, t.OneHot):
            return t.Entry(a, b.args[0])
    return None


def _dot_ones(node):
    """⟨𝟙, v⟩ = Σ v."""
    if isinstance(node, t.Dot):
        a, b = node.args
        if isinstance(a, t.Ones):
            return t.Total(b)
        if isinstance(b, t.Ones):
            return t.Total(a)
    return None


def _sums_to_one(node):
    """Σₖ sₖ = 1 for s = softmax(z), and Σ e_k = 1."""
    if isinstance(node, t.Total) and isinstance(node.args[0], (t.OneHot, t.SoftmaxOf)):
        return sp.S.One
    return None


def _sum_of_ones(node):
    """Σ 𝟙 = n."""
    if isinstance(node, t.Total) and isinstance(node.args[0], t.Ones):
        return sp.Mul(*node.args[0].args)
    return None


def _total_of_constant(node):
    """Σ of a list of numbers is its sum: Σ [0, 1, 0] = 1."""
    if isinstance(node, t.Total) and isinstance(node.args[0], t.Literal):
        return sp.Add(*node.args[0].args[2:])
    return None


def _dot_of_sum(node):
    """⟨a + b, v⟩ = ⟨a, v⟩ + ⟨b, v⟩, a scalar term c giving c Σ v: so ⟨e_k/s_k − 1, s⟩ = 1 − Σₖ sₖ can meet Σₖ sₖ = 1."""
    if not isinstance(node, t.Dot):
        return None
    for k, (a, b) in enumerate((node.args, node.args[::-1])):
        if isinstance(a, sp.Add) and _small(a):
            return sp.Add(*[t.Dot(term, b) if rank(term) == 1 else term * t.Total(b) for term in a.args])
    return None


def _dot_quotient(node):
    """⟨u ⊘ s, s⟩ = Σ u: what the softmax rule sends back through a log (soft-label cross-entropy)."""
    if not isinstance(node, t.Dot):
        return None
    for a, b in (node.args, node.args[::-1]):
        factors = sp.Mul.make_args(a)
        if sp.Pow(b, -1) in factors:
            rest = [f for f in factors if f != sp.Pow(b, -1)]
            return t.Total(sp.Mul(*rest)) if any(rank(f) == 1 for f in rest) else sp.Mul(*rest) * sp.Mul(*shape_of(b))
    return None


def _softmax_quotient(node):
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


def _hadamard_basis(node):
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


def _ones_factor(node):
    """𝟙 ⊙ v = v where v has the shape already."""
    if not isinstance(node, sp.Mul):
        return None
    ones = [f for f in node.args if _is_ones(f)]
    shaped = [f for f in node.args if not _is_ones(f) and rank(f) > 0]
    if ones and shaped:
        return sp.Mul(*[f for f in node.args if not _is_ones(f)])
    return None


def _ones(node):
    """c ⊙ 𝟙 stays; A I = A and I A = A; a Total of a scalar times ones is n times it."""
    if isinstance(node, t.MatMul):
        a, b = node.args
        if isinstance(b, t.Eye):
            return a
        if isinstance(a, t.Eye):
            return b
    if isinstance(node, t.Total) and isinstance(node.args[0], sp.Mul):
        ones = [f for f in node.args[0].args if isinstance(f, t.Ones)]
        rest = [f for f in node.args[0].args if not isinstance(f, t.Ones)]
        if ones and all(rank(f) == 0 for f in rest):
            return sp.Mul(*rest, *ones[0].args)
    return None


def _total_of_sum(node):
    """Σ(u + c) splits over its terms, so Σ softmax and Σ e_k can meet their rules."""
    if isinstance(node, t.Total) and isinstance(node.args[0], sp.Add):
        n = sp.Mul(*shape_of(node.args[0]))
        return sp.Add(*[t.Total(term) if rank(term) else n * term for term in node.args[0].args])
    return None


def _common_factor(node):
    """A sum inside a linear map shows its common factor: outer(2 W x − 2 y, x) = 2 outer(W x − y, x)."""
    if not isinstance(node, LINEAR):
        return None
    for k, arg in enumerate(node.args):
        if isinstance(arg, sp.Add) and _small(arg):
            factored = sp.factor_terms(arg)
            if isinstance(factored, sp.Mul) and factored != arg:
                args = list(node.args)
                args[k] = factored
                return node.func(*args)
    return None


def _numeric_factor(node):
    """A tensor sum whose terms share a number shows it: −2 y + 2 t = 2 (t − y)."""
    if not isinstance(node, sp.Add) or rank(node) == 0 or not _small(node):
        return None
    factored = sp.factor_terms(node)
    if isinstance(factored, sp.Mul) and factored.args[0].is_Number and factored != node:
        return factored
    return None


def _scalar_coefficient(node):
    """The scalar factors of a product cancelled together: σ(1 − σ)(−y/σ + (1 − y)/(1 − σ)) = σ − y."""
    if not isinstance(node, sp.Mul):
        return None
    scalars = [f for f in node.args if rank(f) == 0]
    if len(scalars) < 2 or not _small(sp.Mul(*scalars)) or sp.count_ops(sp.Mul(*scalars)) > MAX_EXPAND_OPS:
        return None
    before = sp.Mul(*scalars)
    after = sp.factor(sp.cancel(before))
    if sp.count_ops(after) >= sp.count_ops(before):
        return None
    return after * sp.Mul(*[f for f in node.args if rank(f) > 0])


def _transpose_product(node):
    """(A B)ᵀ = Bᵀ Aᵀ, so transposes sit on the names: (Wᵀ A)ᵀ = Aᵀ W."""
    if isinstance(node, t.Transpose) and isinstance(node.args[0], t.MatMul):
        a, b = node.args[0].args
        return t.MatMul(t.Transpose(b), t.Transpose(a))
    return None


def _collect_right(node):
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


def _diag_sum(node):
    """a diag(u) + b diag(v) = diag(a u + b v): diag is linear, so diag(2 v) − diag(v) is diag(v)."""
    if not isinstance(node, sp.Add):
        return None
    parts = [(c, d) for c, d in (term.as_coeff_Mul() for term in node.args) if isinstance(d, t.Diag)]
    if len(parts) < 2:
        return None
    rest = [term for term in node.args if term.as_coeff_Mul()[1] not in {d for _, d in parts}]
    return sp.Add(t.Diag(sp.Add(*[c * d.args[0] for c, d in parts])), *rest)


def _entry_inside(node):
    """(f(u, c))_k = f(u_k, c) for an elementwise f of vectors: (1/s)_k = 1/s_k, so s_k/s_k can cancel."""
    if not (isinstance(node, t.Entry) and len(node.args) == 2):
        return None
    base, k = node.args
    if isinstance(base, (t.TensorOp, sp.Symbol)) or rank(base) != 1 or not isinstance(base, (sp.Pow, sp.Mul, sp.Add)):
        return None
    return base.func(*[t.Entry(a, k) if rank(a) == 1 else a for a in base.args])


def _total_of_product(node):
    """Σ(c u ⊙ v) = c ⟨u, v⟩ for two vectors u and v."""
    if not (isinstance(node, t.Total) and isinstance(node.args[0], sp.Mul)):
        return None
    factors = node.args[0].args
    vectors = [f for f in factors if rank(f) == 1]
    if len(vectors) != 2 or any(rank(f) > 1 for f in factors):
        return None
    return sp.Mul(*[f for f in factors if rank(f) == 0]) * t.Dot(*vectors)


def _where_branches(node):
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


@dataclass(frozen=True)
class Rewrite:
    """One identity of the registry: `rule(node)` gives a simpler equal node, or None; `identity`
    is how a derivation names it when it is used (explain/tensor/reverse_pass.py)."""

    rule: Callable
    identity: str
    latex: str
    algebra: bool = False  # plain algebra (a number or scalar factored out): done, not named in a derivation


# The registry, in the order the rules are tried at each node. docs/explain.md says how to add one.
RULES = (
    Rewrite(_numeric_factor, "numbers factored out", r"\text{numbers factored out}", algebra=True),
    Rewrite(_scalar_out, "A (c x) = c A x", r"A (c x) = c A x", algebra=True),
    Rewrite(_ones_factor, "𝟙 ⊙ v = v", r"\mathbf{1} \odot v = v"),
    Rewrite(_transpose_product, "(A B)ᵀ = Bᵀ Aᵀ", r"(A B)^\top = B^\top A^\top"),
    Rewrite(_collect_right, "A W + B W = (A + B) W", r"A W + B W = (A + B) W"),
    Rewrite(_diag_sum, "a diag(u) + b diag(v) = diag(a u + b v)", r"a \operatorname{diag}(u) + b \operatorname{diag}(v) = \operatorname{diag}(a u + b v)"),
    Rewrite(_common_factor, "common factor out of a linear map", r"\text{common factor out of a linear map}", algebra=True),
    Rewrite(_dot_basis, "⟨eₖ, v⟩ = vₖ", r"\langle e_k, v \rangle = v_k"),
    Rewrite(_dot_ones, "⟨𝟙, v⟩ = Σ v", r"\langle \mathbf{1}, v \rangle = \textstyle\sum v"),
    Rewrite(_sums_to_one, "Σₖ sₖ = 1", r"\textstyle\sum_k s_k = 1"),
    Rewrite(_sum_of_ones, "Σ 𝟙 = n", r"\textstyle\sum \mathbf{1} = n"),
    Rewrite(_softmax_quotient, "exp(u) ⊘ Σ exp(u) = softmax(u)", r"e^{u} \oslash \textstyle\sum e^{u} = \operatorname{softmax}(u)"),
    Rewrite(_total_of_constant, "Σ of a list of numbers is their sum", r"\text{the sum of a list of numbers}"),
    Rewrite(_dot_of_sum, "⟨a + b, v⟩ = ⟨a, v⟩ + ⟨b, v⟩", r"\langle a + b, v \rangle = \langle a, v \rangle + \langle b, v \rangle"),
    Rewrite(_dot_quotient, "⟨u ⊘ s, s⟩ = Σ u", r"\langle u \oslash s, s \rangle = \textstyle\sum u"),
    Rewrite(_hadamard_basis, "eₖ ⊙ v = vₖ eₖ", r"e_k \odot v = v_k e_k"),
    Rewrite(_ones, "A I = A, Σ(c 𝟙) = n c", r"A I = A,\ \textstyle\sum(c \mathbf{1}) = n c"),
    Rewrite(_total_of_sum, "Σ(u + v) = Σ u + Σ v", r"\textstyle\sum(u + v) = \sum u + \sum v"),
    Rewrite(_scalar_coefficient, "scalar factors cancelled", r"\text{scalar factors cancelled}"),
    Rewrite(_where_branches, "a ⊙ where(c, 1, 0) + b ⊙ where(c, 0, 1) = where(c, a, b)", r"a \odot [c] + b \odot [\lnot c] = \text{where}(c, a, b)"),
    Rewrite(_entry_inside, "(f(u))ₖ = f(uₖ)", r"(f(u))_k = f(u_k)"),
    Rewrite(_total_of_product, "Σ(u ⊙ v) = ⟨u, v⟩", r"\textstyle\sum(u \odot v) = \langle u, v \rangle"),
)
DISTRIBUTED = Rewrite(None, "products distributed where terms cancel", r"\text{products distributed where terms cancel}",
                      algebra=True)


def _step(node, used: list | None):
    for rewrite in RULES:
        result = rewrite.rule(node)
        if result is not None and result != node:
            if used is not None and rewrite.identity not in used:
                used.append(rewrite.identity)
            return result
    return None


FORWARD = (RULES[[r.rule for r in RULES].index(_softmax_quotient)],)


def normal_form(expr, used: list | None = None):
    """The expression with the builtins it spells out named (exp(u) ⊘ Σ exp(u) = softmax(u)), so the
    reverse pass takes the builtin's rule: the same function, read as a teacher reads it."""
    memo: dict = {}

    def walk(node):
        if node in memo or not isinstance(node, sp.Basic) or not node.args or isinstance(node, sp.Symbol):
            return memo.get(node, node)
        args = [walk(a) for a in node.args]
        new = node.func(*args) if any(a is not b for a, b in zip(args, node.args)) else node
        for rewrite in FORWARD:
            changed = rewrite.rule(new)
            if changed is not None and changed != new:
                new = changed
                if used is not None and rewrite not in used:
                    used.append(rewrite)
        memo[node] = new
        return new

    try:
        return walk(expr)
    except RecursionError:
        return expr


def tidy(expr, used: list | None = None):
    """expr with the rewrites applied bottom-up, then products distributed where that cancels terms.

    `used`, when given, receives the identity of each rewrite that changed something, in order."""
    memo: dict = {}
    try:
        result = _tidy(expr, memo, used)
        return _distribute(result, memo, {}, used)
    except RecursionError:
        return expr


def _tidy(expr, memo: dict, used: list | None = None):
    if expr in memo:
        return memo[expr]
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, sp.Symbol):
        return expr
    args = [_tidy(a, memo, used) for a in expr.args]
    node = expr.func(*args) if any(a is not b for a, b in zip(args, expr.args)) else expr
    for _ in range(MAX_PASSES):
        stepped = _step(node, used)
        if stepped is None:
            break
        node = _tidy(stepped, memo, used) if stepped.args and stepped != node else stepped
    memo[expr] = node
    return node


def _distribute(expr, memo: dict, done: dict, used: list | None = None):
    """Distribute a product over its sums when the result, tidied, is smaller (s ⊙ (1 − e_k/s_k) = s − e_k)."""
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, sp.Symbol):
        return expr
    if expr not in done:
        done[expr] = _distributed(expr, memo, done, used)
    return done[expr]


def _distributed(expr, memo: dict, done: dict, used: list | None):
    args = [_distribute(a, memo, done, used) for a in expr.args]
    node = expr.func(*args) if any(a is not b for a, b in zip(args, expr.args)) else expr
    if isinstance(node, sp.Mul) and rank(node) > 0 and any(isinstance(f, sp.Add) for f in node.args):
        if _small(node) and sp.count_ops(node) <= MAX_EXPAND_OPS:
            tried: list = []
            spread = _tidy(sp.expand_mul(node), memo, tried)
            if sp.count_ops(spread) < sp.count_ops(node):
                if used is not None:
                    used.extend(i for i in [DISTRIBUTED.identity, *tried] if i not in used)
                return spread
    return node
