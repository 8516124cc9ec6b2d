"""One set of names (issue 40): a derivation's title is written in the user's names, never in a letter a later
line introduces; a let line holds a named stop by its letter, so the stop is said once; the value under the
derivations writes a part the user bound by the user's name.

The sweep over every program of tests/ and examples/ is tests/explain/test_every_letter_introduced.py (it reads
the titles too); these tests pin the exact text of the programs that showed each finding.
"""

from __future__ import annotations

from gradlang.core.session import Session
from gradlang.render import to_latex, to_plain

STE = ("n: size\nx: R^n\nW: R^(n, n)\nh = W @ x\nq = h + stop_gradient(round(h) - h)\nloss = sum(q^2)\n"
       "explain grad(loss, W)\n")


def _explained(source: str) -> list[str]:
    """The plain lines of the program's last result, without the CLI's `# `."""
    return [line.removeprefix("# ") for line in to_plain(Session().run(source)[-1]).splitlines()]


def test_a_title_writes_a_stop_out_not_the_letter_the_let_block_gives_it():
    """`grad(sum(c + x), x)` stood above `let c = sg(round(x) - x)`."""
    lines = _explained("n: size\nx: R^n\nexplain grad(sum(x + stop_gradient(round(x) - x)), x)")
    assert lines[0] == "grad(sum(x + sg(round(x) - x)), x): tensor reverse pass; one stop, inventing"
    assert lines[1] == "let  c = sg(round(x) - x)                                 (stopped: its gradient is taken as 0)"


def test_a_title_writes_a_part_out_not_the_letter_the_let_block_gives_it():
    """`jacobian(2*s + x, x)` stood above `let s = softmax(x)`, and `grad(c*sum(h^2), [W, b, c])` above
    `let h = tanh(W @ x + sg(b))`: the title writes the user's formula."""
    lines = _explained("n: size\nx: R^n\nexplain jacobian(2*softmax(x) + x, x)")
    assert lines[0] == "jacobian(x + 2*softmax(x), x): tensor forward pass"
    assert lines[1] == "let  s = softmax(x)"
    lines = _explained("m, n: size\nW: R^(m,n)\nb: R^m\nc: R\nx: R^n\n"
                       "explain grad(sum(tanh(W @ x + sg(b))^2)*c, [W, b, c])")
    assert lines[0] == "grad(c*sum(tanh(W @ x + sg(b))^2), [W, b, c]): tensor reverse pass; one stop, blocking"
    assert lines[1] == "let  h = tanh(W @ x + sg(b))"


def test_a_title_keeps_the_users_own_names():
    """A binding of the user's is the user's name, in the title as in the lines: q, not h + sg(round(h) - h)."""
    assert _explained(STE)[0] == "grad(sum(q^2), W): tensor reverse pass; one stop, inventing"


def test_a_let_line_holds_a_named_stop_by_its_letter():
    """The straight-through estimator's let block said the stop twice: `c = sg(round(h) - h)` and then
    `q = h + sg(round(h) - h)` beside it; q's let now reads c, and the stop is written once in the block."""
    lines = _explained(STE)
    block = lines[1:4]
    assert block == ["let  h = W @ x",
                     "     c = sg(round(h) - h)                                 (stopped: its gradient is taken as 0)",
                     "     q = c + h"]
    assert sum("sg(" in line for line in block) == 1


H = "n: size\nx: R^n\nW: R^(n,n)\nh = W @ x\n"


def test_the_value_under_several_derivations_keeps_the_users_name():
    """Under two derivations (or one whose result the value is not), the value printer named W @ x `z` where
    the user wrote h = W @ x, which both derivations above had shown as h; it writes h, in every format."""
    lines = _explained(H + "explain grad(sum(relu(h)^2), W) + grad(sum(tanh(h)), W)")
    assert lines[-1] == "2*outer(relu(h)*where(h > 0, 1, 0), x) + outer(1 - tanh(h)^2, x)"
    assert not any(line.startswith("z = ") for line in lines)
    assert _explained(H + "explain 2*grad(sum(relu(h)^2), W)")[-1] == "4*outer(relu(h)*where(h > 0, 1, 0), x)"
    latex = to_latex(Session().run(H + "explain grad(sum(relu(h)^2), W) + grad(sum(tanh(h)), W)")[-1])
    assert latex.endswith(r"\left(1 - \tanh^{2}{\left(h \right)}\right) x^{\top}") and "z =" not in latex


def test_a_value_at_a_point_under_a_derivation_is_its_numbers():
    """Numbers hold no part the user named: the value prints as any value does."""
    lines = _explained(H + "explain grad(sum(relu(h)^2), W) at W = eye(3), x = [1, 2, 3]")
    assert lines[-1] == "[[2, 4, 6], [4, 8, 12], [6, 12, 18]]"


def test_a_title_too_long_in_the_users_names_writes_the_call_as_the_user_wrote_it():
    """EM's M-step wrote its title with r[0], w[0] (the weights' letters the let block gives as rᵢ, wᵢ); in the
    user's names it is eight lines of stops, so it writes what the user wrote: Q(mu1, mu2)."""
    from pathlib import Path

    source = (Path(__file__).resolve().parents[2] / "examples" / "em_gaussian_mixture.grad").read_text()
    lines = _explained(source + "\nexplain grad(Q(mu1, mu2), [mu1, mu2])\n")
    assert lines[0] == ("grad(Q(mu1, mu2), [mu1, mu2]): stopped weights (the weights held fixed); "
                        "two stops: two blocking")


def test_a_title_that_cannot_break_writes_the_loss_by_its_name():
    """I-JEPA's title, written in the user's names, was one line of 121 columns: a formula that is not a sum
    has no place to break, so past 80 characters the title writes the loss by its name; a sum still breaks."""
    smooth = "where(abs(W @ x - y) <= 1.0, 0.5*(W @ x - y)^2, abs(W @ x - y) - 0.5)"
    source = f"n: size\nx: R^n\ny: R^n\nW: R^(n,n)\nloss = 0.03125*sum({smooth})\nexplain grad(loss, W)"
    assert _explained(source)[0].startswith("grad(loss, W): tensor reverse pass")
    short = _explained("n: size\nx: R^n\nW: R^(n,n)\nloss = sum(exp(W @ x))\nexplain grad(loss, W)")
    assert short[0].startswith("grad(sum(exp(W @ x)), W):")
