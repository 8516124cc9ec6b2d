"""The ledger's removed terms written out (issue 40): a term of two lines is a formula in the derivation's names,
not the rule ā·∂v/∂W1; the printed formula, read back with the derivation's let lines, is the term the stop
removes, grad(unstopped(L)) − grad(L) by JAX at a random point; and a true gradient that is 0 says so and why.

The programs are tests/explain/ledger_programs/*.grad (new users' TD3, DiCE and layer norm with stopped
statistics), which tests/explain/every_program.py also derives in every format within 25 lines of 100 columns.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradlang.core.session import Session
from gradlang.explain.explanation import Explanation
from gradlang.render import to_json, to_latex, to_plain

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

PROGRAMS = Path(__file__).resolve().parent / "ledger_programs"
RNG = np.random.default_rng(20261129)


def _explained(name: str):
    source = (PROGRAMS / f"{name}.grad").read_text()
    return source, [r for r in Session().run(source) if r is not None and r.kind == "explain"][-1]


def _lines(result) -> list[str]:
    return [line[2:] for line in to_plain(result).splitlines() if line.startswith("# ")]


def _printed_term(lines: list[str], lead: str, tail: str = "") -> str:
    """The formula after `lead` on its ledger line, with the lines it continues on (indented further)."""
    at = next(k for k, line in enumerate(lines) if line.startswith(lead))
    text = lines[at][len(lead):]
    for line in lines[at + 1:]:
        if not line.startswith("      "):
            break
        text += " " + line.strip()
    return text[: -len(tail)] if tail and text.endswith(tail) else text


def _lets(lines: list[str]) -> list[str]:
    """The derivation's let lines as gradlang assignments (`let  a = …`, `     u = …`)."""
    out = []
    for line in lines:
        if line.startswith("let  ") or (out and line.startswith("     ") and " = " in line and not line[5] == " "):
            out.append(line[5:].split("  (")[0].strip())
        elif out:
            break
    return out


def _read_back(source: str, lines: list[str], term: str, point: dict) -> np.ndarray:
    """The printed term evaluated by gradlang at the point: the program's declarations, the let lines, the term."""
    declared = [line for line in source.splitlines() if ":" in line and "=" not in line and not line.startswith("#")]
    at = ", ".join(f"{name} = {np.asarray(value).tolist()}" for name, value in point.items())
    program = "\n".join([*declared, *_lets(lines), f"term__ = {term}", f"term__ at {at}"])
    return np.asarray(Session().run(program)[-1].value, dtype=float)


def _removed_by_jax(loss, variable: str, point: dict) -> np.ndarray:
    """grad(unstopped(L)) − grad(L) by JAX: loss(stop, **point) with stop the identity, then lax.stop_gradient."""
    arrays = {k: jnp.asarray(v, dtype=jnp.float64) for k, v in point.items()}

    def by(stop):
        return jax.grad(lambda v: loss(stop, **{**arrays, variable: v}))(arrays[variable])

    return np.asarray(by(lambda v: v) - by(jax.lax.stop_gradient))


def _td3_loss(stop, s, W1, W2, Wa, r, gamma):
    a = jnp.tanh(Wa @ s)
    target = r + gamma * stop(jnp.minimum(jnp.sum(W1 @ a), jnp.sum(W2 @ a)))
    return (jnp.sum(W1 @ s) - target) ** 2 + (jnp.sum(W2 @ s) - target) ** 2


def test_td3s_removed_term_is_a_formula_in_the_derivations_names():
    """TD3's removed term was the rule `ā·∂v/∂W1` (120 columns spelled out, over the 72 it had); it is
    gamma*u2*(sign(…) + 1)*outer(ones(n), a) in the lets' names, and it reads back to JAX's removed term."""
    source, result = _explained("td3_twin_critics")
    lines = _lines(result)
    lead = "   blocking: removes q₁ = "
    term = _printed_term(lines, lead)
    assert "ā" not in term and term == "gamma*u2*(sign(sum(W2 @ a) - sum(W1 @ a)) + 1)*outer(ones(n), a)"
    for twin in (0.5, -0.5):  # the min takes q1, then q2 (the term is 0 there: the stop cuts q2's path)
        W1 = RNG.uniform(-1, 1, (3, 3))
        point = {"s": RNG.uniform(0.2, 1, 3), "W1": W1, "W2": W1 + twin, "Wa": RNG.uniform(0.2, 1, (3, 3)),
                 "r": RNG.uniform(-1, 1), "gamma": 0.9}
        expected = _removed_by_jax(_td3_loss, "W1", point)
        assert np.allclose(_read_back(source, lines, term, point), expected, atol=1e-9)
        assert (np.abs(expected).max() > 0.01) == (twin > 0)


def _dice_loss(stop, theta, x, R):
    logp = jnp.dot(theta, x) - jnp.log(jnp.sum(jnp.exp(theta)))
    return -jnp.exp(logp - stop(logp)) * R


def test_dices_invented_term_is_tidied_in_the_derivations_names_on_two_lines():
    """DiCE's invented term spelled u out as exp(log(sum(exp(theta)))) and was given by its rule; it is written
    in the user's magic, broken before its second term, and −r₁ reads back to JAX's grad(L) − grad(unstopped(L))."""
    source, result = _explained("dice_magic_box")
    lines = _lines(result)
    lead, tail = "   inventing: adds −r₁ = ", ", a gradient the function lacks"
    term = _printed_term(lines, lead, tail)
    assert term == "R*magic*exp(theta)/sum(exp(theta)) - R*magic*x"
    assert "exp(log(" not in to_plain(result).split("stop sg(logp)")[1]
    assert max(len(line) for line in lines) <= 98
    point = {"theta": RNG.uniform(-1, 1, 4), "x": RNG.uniform(-1, 1, 4), "R": RNG.uniform(0.5, 2)}
    expected = -_removed_by_jax(_dice_loss, "theta", point)
    assert np.abs(expected).max() > 0.01
    assert np.allclose(_read_back(source, lines, term, point), expected, atol=1e-9)


def test_dices_true_gradient_is_said_to_be_zero_and_why():
    """magic = exp(logp − sg(logp)) is 1: the true gradient is 0 (JAX agrees), and the identity says so, with
    why (g + r₁ cancels once the stop is its value) and what follows (all of g is invented)."""
    _, result = _explained("dice_magic_box")
    lines = _lines(result)
    assert "true = kept + removed: grad(unstopped(L), theta) = g + r₁ = 0 (g = grad(L, theta))" in lines
    assert "   0 at every point: g + r₁ cancels term by term once each stop is its argument's value" in lines
    assert "   so all of g is what the stop invents: g = −r₁" in lines
    point = {"theta": RNG.uniform(-1, 1, 4), "x": RNG.uniform(-1, 1, 4), "R": RNG.uniform(0.5, 2)}
    true = jax.grad(lambda t: _dice_loss(lambda v: v, t, jnp.asarray(point["x"]), point["R"]))(jnp.asarray(point["theta"]))
    assert np.allclose(np.asarray(true), 0, atol=1e-12)
    latex = to_latex(result)
    assert r"= g + r_{1} = 0" in latex and "$g = -r_{1}$" in latex
    step = next(s for s in result.steps if isinstance(s, Explanation))
    assert "g + r₁ = 0" in " ".join(" ".join(said) for said in to_json(step)["ledger"])


def test_a_true_gradient_that_is_not_zero_is_not_said_to_be():
    """TD3 and layer norm: the stops remove a term, the true gradient is not 0, no line says it is."""
    for name in ("td3_twin_critics", "layernorm_stopped_statistics"):
        text = to_plain(_explained(name)[1])
        assert "at every point" not in text and "= 0 (" not in text, text


def _layer_norm_loss(stop, x, g):
    mu = stop(jnp.mean(x))
    sigma = stop(jnp.sqrt(jnp.mean((x - mu) ** 2) + 1e-5))
    return jnp.sum((g * (x - mu) / sigma) ** 2)


def test_layer_norms_two_removed_terms_add_up_to_jaxs():
    """Each removed term written in mu and sigma; the two read back add up to grad(unstopped(L)) − grad(L)."""
    source, result = _explained("layernorm_stopped_statistics")
    lines = _lines(result)
    first = _printed_term(lines, "   blocking: removes r₁ = ")
    second = _printed_term(lines, "   blocking: removes r₂ = ")
    assert "sigma" in second and "mu" in second and "ā" not in first + second
    point = {"x": RNG.uniform(-1, 1, 5), "g": RNG.uniform(-1, 1, 5)}
    total = _read_back(source, lines, f"({first}) + ({second})", point)
    assert np.allclose(total, _removed_by_jax(_layer_norm_loss, "x", point), atol=1e-7)


def test_a_huge_removed_term_is_still_given_by_its_rule():
    """The rule stays for a term past four lines (DreamerV3's twohot term was hundreds of thousands of columns)."""
    from gradlang.explain.ledger.words import _TERM_LINES, _long_term, term_lines

    wide = " + ".join(f"x{k}*sin(y{k})" for k in range(60))
    assert len(term_lines(wide, 72, 92)) > _TERM_LINES
    assert term_lines("a*b + c - d", 72, 92) == ["a*b + c - d"]
    assert term_lines("aaaa + bbbb - cccc", 9, 9) == ["aaaa", "+ bbbb", "- cccc"]
    import sympy as sp

    x = sp.symbols("x0:60", real=True)
    assert _long_term(sum(sp.sin(v) * v for v in x), ()) and not _long_term(x[0] * sp.sin(x[1]), ())


def test_a_coefficient_one_point_zero_is_written_as_a_sign_in_the_derivation_only():
    """Layer norm's 1e-5 makes its integers floats: the derivation wrote x - 1.0*mu and -1.0*u*u1; it writes
    x - mu and -u*u1 in every format, and the value under it, which reads back, still holds its floats."""
    source, result = _explained("layernorm_stopped_statistics")
    plain = to_plain(result)
    derivation = "\n".join(line for line in plain.splitlines() if line.startswith("#"))
    assert "1.0*" not in derivation and "(x - mu)^2" in derivation and "adjoint arriving: -u*u1" in derivation
    assert "2.0*mu" in derivation  # a number of the formula, not a sign
    assert "1.0" not in to_latex(result).split(r"\end{align*}")[0].replace("1e-05", "")
    value = plain.splitlines()[-1]
    assert value == "u*g^2*(2*x - 2.0*mu)"
    lines = _lines(result)
    point = {"x": RNG.uniform(-1, 1, 5), "g": RNG.uniform(-1, 1, 5)}
    kept = _read_back(source, lines, value, point)
    stopped = jax.grad(lambda x: _layer_norm_loss(jax.lax.stop_gradient, x, jnp.asarray(point["g"])))(jnp.asarray(point["x"]))
    assert np.allclose(kept, np.asarray(stopped), atol=1e-7)


def test_a_users_name_for_a_sum_or_product_that_sympy_flattened_is_kept():
    """TD3's target = r + gamma*sg(min(…)) was flattened into (q1(s) - target)^2 and DiCE's magic into
    -R*exp(…)/sum(exp(theta)): the derivations wrote their parts; they are let lines and every line uses
    them (a multiple too: 2*target), and the lines read back to JAX's values."""
    source, result = _explained("td3_twin_critics")
    lines = _lines(result)
    assert lines[0].startswith("grad((sum(W1 @ s) - target)^2 + (sum(W2 @ s) - target)^2, W1):")  # no u1 yet
    assert "     target = gamma*sg(u) + r" in lines and "     u2 = 2*target - u1 - sum(W2 @ s)" in lines
    assert not any("gamma*sg(u) - r" in line or "2*r" in line for line in lines)
    W1 = RNG.uniform(-1, 1, (3, 3))
    point = {"s": RNG.uniform(0.2, 1, 3), "W1": W1, "W2": W1 + 0.5, "Wa": RNG.uniform(0.2, 1, (3, 3)),
             "r": RNG.uniform(-1, 1), "gamma": 0.9}
    kept = jax.grad(lambda w: _td3_loss(jax.lax.stop_gradient, **{**point, "W1": w}))(jnp.asarray(W1))
    last = next(line for line in lines if line.startswith("(3)  ∂L/∂W1 = "))
    assert "(u1 - target)" in last
    assert np.allclose(_read_back(source, lines, last.split(" = ", 1)[1].split("  [")[0].strip(), point), kept)
    _, result = _explained("dice_magic_box")
    lines = _lines(result)
    assert lines[0].startswith("grad(-R*magic, theta):") and any(line.startswith("     magic = ") for line in lines)


def test_a_name_for_a_sum_is_not_forced_where_its_terms_do_not_all_cancel():
    """r alone, or r*x, is never written target - gamma*sg(u): a multiple of the sum is named only when every
    other term of it cancels."""
    import sympy as sp

    from gradlang.explain.layout import named_sums

    r, gamma, c, x, target = sp.symbols("r gamma c x target", real=True)
    names = {r + gamma * c: target}
    assert named_sums(2 * r + 2 * gamma * c - x, names, names) == 2 * target - x
    assert named_sums(r * x + gamma * c, names, names) == r * x + gamma * c
    assert named_sums(x - r - gamma * c, names, names) == x - target
    assert named_sums(sp.tanh(r) + gamma * c, names, names) == sp.tanh(r) + gamma * c
    assert named_sums(r + gamma * c, names, names) == r + gamma * c  # the let's own value stays itself


def test_a_users_product_inside_another_name_is_named_once_and_the_kept_letter_avoids_it():
    """adversarial training: x_norm = x + g/(10*norm(g)) holds the user's g = grad(loss(x), x) as a part of a
    product; g is a let before x_norm (each let written in the names before it, never in its own), and the
    identity's kept part is k, since g is the user's."""
    from tests.explain.every_program import example_gradients

    [source] = [s for n, s in example_gradients() if n == "adversarial_training:19"]
    lines = _lines([r for r in Session().run(source) if r is not None and r.kind == "explain"][-1])
    assert "let  g = -sigmoid(-dot(w, tanh(x)))*w*(1 - tanh(x)^2)" in lines
    assert "     x_norm = g/(10*norm(g)) + x" in lines
    assert "true = kept + removed: grad(unstopped(L), w) = k + r₁ (k = grad(L, w))" in lines
    assert max(len(line) for line in lines) <= 98
