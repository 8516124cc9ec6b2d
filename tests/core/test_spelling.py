"""A likely typo is said out loud: a teaching tool must not hide a silent 0."""

import pytest

from gradlang import Session
from gradlang.core.spelling import near_name


def _warnings(program: str) -> list[str]:
    results = Session().run(program)
    return [w for result in results for w in result.warnings]


def test_misspelled_binding_is_named_with_the_near_name():
    (warning,) = _warnings("loss = x^2*sg(x)\ndiff(los, x)")
    assert "'los' is not defined" in warning and "did you mean 'loss'" in warning


def test_at_on_a_name_the_expression_lacks_is_said():
    (warning,) = _warnings("diff(x^2, x) at X = 2")
    assert "'X' does not occur" in warning and "did you mean 'x'" in warning


@pytest.mark.parametrize("program", ["x + y - y at y = 2", "W: R^(2,2)\nx*W/W at W = [[1, 2], [3, 0]]",
                                     "f(a) = a - a + x\nf(y) at y = 1"])
def test_a_written_name_that_cancelled_is_said_to_have_cancelled_not_to_be_missing(program):
    (warning,) = _warnings(program)
    assert "no longer depends on" in warning and "does not occur" not in warning


def test_an_at_whose_value_is_a_number_says_nothing():
    # diff(round(w), w) at w = 0.8 is 0 everywhere: the lesson, not a typo
    assert _warnings("diff(x^2, x) at X = 2") and not _warnings("w: R\ndiff(unstopped(round(w)), w) at w = 0.8")


def test_a_name_bound_twice_in_one_at_is_said_and_the_last_value_wins():
    results = Session().run("x^2 at x = 2, x = 3")
    assert results[0].value == 9
    assert any("bound twice" in w for w in results[0].warnings)


@pytest.mark.parametrize(
    "program",
    [
        "diff(x^2*y, x)",  # free symbols that are nobody's typo
        "mu = 2\nmu2 = 3\nmu + mu2 + nu",
        "x1: R\nx2 + x1",
        "y: R^2\nsum(y*y) at y = [1, 2]",
        "f(u) = u^2 + w\nf(3) at w = 1",
        "theta = 3\ntheta + z at z = 1",
    ],
)
def test_ordinary_programs_stay_quiet(program):
    assert _warnings(program) == []


def test_near_name_rules():
    assert near_name("thetta", ["theta"]) == "theta"
    assert near_name("Loss", ["loss"]) == "loss"
    assert near_name("x2", ["x1"]) is None
    assert near_name("mu", ["mu2"]) is None


# --- an `at` warns only where the user is likely wrong, or a stop is why ---------------


@pytest.mark.parametrize(
    "program",
    [
        # one point reused for every line of a script
        "W: R^(2,2); Wp: R^(2,2); v = [1, 2]\np = [[1, 0], [0, 1]]\n"
        "sum(W @ v) at W = p, Wp = p\nsum(Wp @ v) at W = p, Wp = p",
        # a discount of 0 cancels q_t in the definition, before the point is given
        "gamma = 0\ntd = (r + gamma * sg(q_t) - q_tm1)^2\ndiff(td, q_tm1) at q_t = 1, q_tm1 = 2, r = 1",
        # a gradient that does not depend on the point: x was differentiated away
        "x: R; y: R\ngrad(x*sg(y^2), [x, y]) at x = 2, y = 3",
        # vq_vae's decoder weight d is on no path to the code e
        "e: R\nrecon = (d * (z + sg(e - z)) - 1)^2\ncodebook = (sg(z) - e)^2\n"
        "grad(recon + codebook, e) at z = 1, e = 2, d = 3\ngrad(codebook, e) at z = 1, e = 2, d = 3",
    ],
)
def test_an_at_point_that_covers_more_than_the_expression_is_not_a_mistake(program):
    assert _warnings(program) == []


def test_a_name_only_a_stop_removed_is_said_to_be_removed_by_the_stop():
    """The stop_gradient example of TensorFlow's autodiff guide: dz/dy is None there, 0 here."""
    (warning,) = _warnings("x: R; y: R\ngrad(x^2 + sg(y^2), [x, y]) at x = 2, y = 3")
    assert "'y'" in warning and "only inside stop_gradient" in warning and "None" in warning
    assert "cancelled" not in warning and "does not occur" not in warning


def test_a_name_nobody_wrote_is_still_a_likely_typo():
    (warning,) = _warnings("loss = x^2\ndiff(loss, x) at x = 1, lss = 2")
    assert "'lss' does not occur" in warning and "did you mean 'loss'" in warning
    (warning,) = _warnings("diff(x^2, x) at zork = 1")
    assert "'zork' does not occur" in warning and "did you mean" not in warning
