"""Patterns of real training losses (#39): min/max of two tensors, F.normalize's eps, float32 casts, PRNG keys and
random draws, forward(*args), Python numbers, stops inside helpers and sub-modules, a fixed example point.

Each translated program is run by gradlang (harness.run) and its gradient compared with torch.autograd or
jax.grad computed here, in float64, from the example modules in examples/frameworks/.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from gradlang.frameworks import TranslateError
from tests.frameworks.harness import EXAMPLES, point, run, translated, user_attribute, worst

torch = pytest.importorskip("torch")


def line_of(module: str, text: str) -> int:
    """The line of examples/frameworks/MODULE.py that holds `text` (so no test hard-codes a line number)."""
    lines = (EXAMPLES / f"{module}.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def at_value(program: str, name: str) -> np.ndarray:
    """The value the program's point gives `name` (`name_at = [...]`)."""
    match = re.search(rf"^{name}_at = (.*)$", program, re.M)
    return np.asarray(json.loads(match.group(1)), dtype=np.float64)


def autograd(spec: str, args: tuple) -> list:
    """torch.autograd's loss and gradient by every parameter, then every float argument (float64), the module
    built at the seed the translation builds it at."""
    from gradlang.frameworks.shapes_arg import SEED
    from gradlang.frameworks.trace_torch import float64

    with float64(torch), torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        target = user_attribute(spec)
        module = target().double() if isinstance(target, type) else None
        inputs = [torch.as_tensor(a).double().requires_grad_(True) if _is_float(a) else a for a in args]
        leaves = [*(module.parameters() if module is not None else ()), *(a for a in inputs if _is_float(a))]
        loss = (module or target)(*inputs)
        grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    return [loss.detach().numpy(), *(np.zeros(tuple(v.shape)) if g is None else g.numpy()
                                     for g, v in zip(grads, leaves))]


def x64(jax):
    """float64 in JAX, as the translation traces (it turns jax_enable_x64 on)."""
    jax.config.update("jax_enable_x64", True)
    from contextlib import nullcontext

    return nullcontext()


def _is_float(value) -> bool:
    if isinstance(value, torch.Tensor):
        return value.is_floating_point()
    return isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating)


def shaped(shapes: str) -> tuple:
    return tuple(point(shapes).values())


# --- 1. torch.min / torch.max of two tensors, torch.minimum / maximum, jnp.minimum / maximum -----------------


def test_sacs_clipped_double_q_agrees_with_autograd():
    shapes = "obs=4,3 next_obs=4,3 rewards=4"
    program, ours = run("torch", "training_torch:ClippedDoubleQ", shapes=shapes)
    assert "min(" in program and "max(" in program
    assert worst(ours, autograd("training_torch:ClippedDoubleQ", shaped(shapes))) < 1e-9, program


def test_a_tie_of_two_tensors_shares_the_gradient_as_torch_and_jax_do():
    jax = pytest.importorskip("jax")
    _, ours = run("torch", "training_torch:extremes", example_args="training_torch:tied")
    given = user_attribute("training_torch:tied")()
    theirs = autograd("training_torch:extremes", (given["a"].numpy(), given["b"].numpy()))
    assert worst(ours, theirs) < 1e-12
    assert ours[1].tolist() == [3.0, 3.0, 4.0]  # ties at 0 and 1: 1/2 of each of max, min, maximum
    _, ours = run("jax", "training_jax:extremes", example_args="training_jax:tied")
    a, b = (np.asarray(v, dtype=np.float64) for v in user_attribute("training_jax:tied")().values())
    with x64(jax):
        grads = jax.grad(user_attribute("training_jax:extremes"), argnums=(0, 1))(a, b)
    assert worst(ours[1:], [np.asarray(g) for g in grads]) < 1e-12
    assert ours[1].tolist() == [1.5, 1.5, 2.0]


def test_a_clamp_at_its_bound_gives_the_gradient_to_its_input_as_torch_does():
    program, ours = run("torch", "training_torch:hinge", example_args="training_torch:at_bounds")
    (x,) = user_attribute("training_torch:at_bounds")()
    assert "where(" in program  # max(x, 0) would share the tie at x = 0 (1/2), torch.clamp gives it all to x
    assert worst(ours, autograd("training_torch:hinge", (x.numpy(),))) < 1e-12, program
    program, ours = run("torch", "training_torch:hinge", shapes="x=4")
    assert "max(x, 0.0)" in program and "min(x, 0.5)" in program  # no tie of x: the clamps are max and min
    assert "where(relu(x) >= 0.0" in program  # relu(x) is 0 where x < 0: a tie of the last clamp
    assert worst(ours, autograd("training_torch:hinge", shaped("x=4"))) < 1e-12


def test_td3s_jnp_minimum_agrees_with_jax_grad():
    jax = pytest.importorskip("jax")
    shapes = "params.q1=3 params.q2=3 obs=4,3 rewards=4"
    program, ours = run("jax", "training_jax:clipped_double_q", shapes=shapes)
    given = point(shapes)
    with x64(jax):
        function = user_attribute("training_jax:clipped_double_q")
        value, grads = jax.value_and_grad(function, argnums=(0, 1, 2))(given["params"], given["obs"], given["rewards"])
    theirs = [value, grads[0]["q1"], grads[0]["q2"], grads[1], grads[2]]
    assert worst(ours, [np.asarray(t) for t in theirs]) < 1e-9, program


# --- 2. F.normalize with PyTorch's eps: an all-zero row --------------------------------------------------------


@pytest.mark.parametrize("spec, shapes, example_args", [
    ("training_torch:zero_row", None, "training_torch:rows"),
    ("training_torch:MoCo", "x=2,3", None),
])
def test_normalize_of_an_all_zero_row_has_pytorchs_finite_gradient(spec, shapes, example_args):
    program, ours = run("torch", spec, shapes=shapes, example_args=example_args)
    args = shaped(shapes) if shapes else tuple(a.numpy() for a in user_attribute(example_args)())
    theirs = autograd(spec, args)
    assert all(np.isfinite(g).all() for g in ours), program
    assert worst(ours, theirs) < 1e-9, program
    assert "sqrt(max(sum(" in program and "1e-24" in program


# --- 3. casts kept as float32(…) --------------------------------------------------------------------------------


def test_a_torch_cast_is_kept_as_float32():
    program, ours = run("torch", "training_torch:cast", shapes="x=3")
    assert "float32(x)" in program and "float32 casts are kept" in program
    theirs = autograd("training_torch:cast", shaped("x=3"))
    assert abs(float(ours[0]) - float(theirs[0])) < 1e-12 * abs(float(theirs[0]))  # the rounding is kept exactly
    assert worst(ours[1:], theirs[1:]) < 1e-6  # torch's backward rounds to float32 through the cast


def test_acmes_float32_casts_are_kept_and_agree_with_jax():
    jax = pytest.importorskip("jax")
    shapes = "q=3 target=3 discount=3"
    program, ours = run("jax", "training_jax:cast_td", shapes=shapes)
    assert "float32(" in program
    given = point(shapes)
    with x64(jax):
        value, grads = jax.value_and_grad(user_attribute("training_jax:cast_td"), argnums=(0, 1, 2))(*given.values())
    assert abs(float(ours[0]) - float(value)) < 1e-12
    assert worst(ours[1:], [np.asarray(g) for g in grads]) < 1e-6
    dropped = program.replace("float32(", "(")  # without the casts the loss is off: they are not decoration
    from gradlang import Session

    assert abs(float(Session().run(dropped)[0].value) - float(value)) > 1e-9


def test_the_float32_builtin_rounds_and_has_derivative_one_as_jax():
    jax = pytest.importorskip("jax")
    from gradlang import Session
    from tests.conftest import as_floats

    x = np.array([0.1, 1.0 / 3.0, -2.7])
    results = Session().run("x: R^3\nL = sum(float32(x)^2 * x)\nL at x = [0.1, 1/3, -2.7]\ngrad(L, x) at x = "
                            "[0.1, 1/3, -2.7]\nfloat32(1/3)")
    with x64(jax):
        def loss(v):
            return jax.numpy.sum(v.astype(jax.numpy.float32).astype(jax.numpy.float64) ** 2 * v)

        value, grad = jax.value_and_grad(loss)(x)
    assert float(as_floats(results[-3].value)) == pytest.approx(float(value), rel=1e-15)
    rounded = x.astype(np.float32).astype(np.float64)
    assert worst([as_floats(results[-2].value)], [2 * rounded * x + rounded ** 2]) < 1e-15  # float32' = 1, exactly
    assert worst([as_floats(results[-2].value)], [np.asarray(grad)]) < 1e-6  # JAX rounds the cotangent to float32
    assert float(results[-1].value) == float(np.float32(1.0 / 3.0))
    assert str(results[-1].value) != "1/3"


def test_a_cast_to_float16_is_refused_at_the_users_line():
    with pytest.raises(TranslateError) as caught:
        translated("torch", "training_torch:half", shapes="x=3")
    assert "float16" in caught.value.message and "aten.to" in caught.value.message
    assert caught.value.line == line_of("training_torch", "x.half()")


# --- 4. PRNG keys as data, random draws as named data inputs ----------------------------------------------------


def test_an_unused_split_of_a_key_is_data():
    jax = pytest.importorskip("jax")
    program, ours = run("jax", "training_jax:unused_split", shapes="x=3")
    with x64(jax):
        grad = jax.grad(user_attribute("training_jax:unused_split"))(point("x=3")["x"])
    assert worst(ours[1:], [np.asarray(grad)]) < 1e-12
    assert "PRNG" not in program


def test_draws_from_a_typed_key_are_named_data_inputs_at_their_lines():
    jax = pytest.importorskip("jax")
    program, ours = run("jax", "training_jax:drawn", example_args="training_jax:keyed")
    line = line_of("training_jax", "jax.random.normal(k1")
    assert f"normal: R^3   # jax.random.normal at training_jax.py:{line}" in program, program
    assert f"gumbel: R^3   # jax.random.gumbel at training_jax.py:{line + 1}" in program
    x, key = user_attribute("training_jax:keyed")()
    with x64(jax):
        value, grad = jax.value_and_grad(user_attribute("training_jax:drawn"))(np.asarray(x, np.float64), key)
        k1, _ = jax.random.split(key)
        noise = jax.random.normal(k1, (3,))
    assert worst(ours, [np.asarray(value), np.asarray(grad)]) < 1e-12  # one gradient: by x, not by the draws
    assert worst([at_value(program, "normal")], [np.asarray(noise)]) < 1e-15


def test_a_torch_draw_in_the_forward_is_a_named_data_input():
    program, ours = run("torch", "training_torch:Noisy", shapes="x=3")
    line = line_of("training_torch", "torch.randn(2)")
    assert f"randn: R^2   # torch.randn at training_torch.py:{line}" in program, program
    noise = torch.tensor(at_value(program, "randn"))
    weight, bias = (torch.tensor(at_value(program, name), requires_grad=True) for name in ("fc_weight", "fc_bias"))
    x = torch.tensor(point("x=3")["x"], requires_grad=True)
    loss = ((weight @ x + bias + noise) ** 2).sum()
    theirs = [loss.detach().numpy(), *(g.numpy() for g in torch.autograd.grad(loss, [weight, bias, x]))]
    assert worst(ours, theirs) < 1e-12


# --- 5. forward(*args) and Python numbers ------------------------------------------------------------------------


def test_a_forward_taking_star_args():
    program, ours = run("torch", "training_torch:Sum", shapes="a=3 b=3")
    assert worst(ours, autograd("training_torch:Sum", shaped("a=3 b=3"))) < 1e-12, program


def test_dinos_python_int_epoch_is_a_constant():
    program, ours = run("torch", "training_torch:DINOLoss", example_args="training_torch:dino_args")
    student, teacher, epoch = user_attribute("training_torch:dino_args")()
    assert "epoch = 1 is a Python number" in program
    assert worst(ours, autograd("training_torch:DINOLoss", (student.numpy(), teacher.numpy(), epoch))) < 1e-9


# --- 6. a stop's own line, inside a helper method and a sub-module -----------------------------------------------


def test_a_detach_inside_a_helper_method_is_cited_at_its_own_line():
    program, ours = run("torch", "training_torch:PPG", shapes="x=2,3")
    line = line_of("training_torch", "return hidden.detach()")
    assert f".detach() at training_torch.py:{line}" in program, program
    assert worst(ours, autograd("training_torch:PPG", shaped("x=2,3"))) < 1e-12


def test_a_no_grad_region_is_cited_at_its_with_line():
    program, _ = run("torch", "training_torch:MoCo", shapes="x=2,3")
    line = line_of("training_torch", "k = F.normalize(self.momentum(x)") - 1
    kept = [text for text in program.splitlines() if "stop_gradient(" in text]
    assert kept and all(f"torch.no_grad() region at training_torch.py:{line}" in text for text in kept), program


# --- 7. the same example point on every run ----------------------------------------------------------------------


def test_the_example_point_is_the_same_on_every_run():
    first = translated("torch", "training_torch:cast", example_args="training_torch:numpy_drawn")
    np.random.seed(12345)  # whatever state the generator is in, the user's draws start from gradlang's seed
    assert translated("torch", "training_torch:cast", example_args="training_torch:numpy_drawn") == first
    assert translated("torch", "training_torch:Noisy", shapes="x=3") == translated("torch", "training_torch:Noisy",
                                                                                  shapes="x=3")


def test_a_norm_not_clamped_at_a_zero_vector_is_refused_naming_it_at_its_line():
    with pytest.raises(TranslateError) as caught:
        translated("torch", "training_torch:bare_norm", example_args="training_torch:halves")
    assert "the norm of a zero vector" in caught.value.message and "where PyTorch gives [0.0, 0.0, 0.0]" in (
        caught.value.message)
    assert caught.value.line == line_of("training_torch", "return torch.linalg.vector_norm(v *")


def test_float32_prints_as_written_in_every_format():
    from gradlang import Session
    from gradlang.render.latex import to_latex
    from gradlang.render.plain import to_plain
    from gradlang.render.pretty import to_pretty

    value = Session().run("x: R^3\nfloat32(x) * 3")[-1].value
    assert to_plain(value) == "3*float32(x)"
    assert "float32(x)" in to_pretty(value) and "float₃₂" not in to_pretty(value)
    assert r"\operatorname{float32}" in to_latex(value)


def test_what_is_computed_from_a_draw_is_written_from_its_name():
    program, ours = run("torch", "training_torch:gumbel_soft", shapes="logits=3")
    assert "-log(exponential)" in program, program  # the Gumbel noise, not frozen into numbers
    drawn = torch.tensor(at_value(program, "exponential"))
    logits = torch.tensor(point("logits=3")["logits"], requires_grad=True)
    loss = (torch.softmax((logits - drawn.log()) / 0.5, dim=0) * torch.arange(3.0, dtype=torch.float64)).sum()
    theirs = [loss.detach().numpy(), torch.autograd.grad(loss, logits)[0].numpy()]
    assert worst(ours, theirs) < 1e-12


# --- 8. in-place writes through views, shared sub-modules --------------------------------------------------------


def test_a_write_through_a_view_reaches_its_base_read_after_it():
    program, ours = run("torch", "training_torch:RowScaled", shapes="x=2,3")
    assert worst(ours, autograd("training_torch:RowScaled", shaped("x=2,3"))) < 1e-12, program


def test_a_buffer_written_through_data_is_read_at_its_new_numbers_without_a_gradient():
    program, ours = run("torch", "training_torch:EMABuffer", shapes="x=2,3")
    assert worst(ours, autograd("training_torch:EMABuffer", shaped("x=2,3"))) < 1e-12, program


def test_a_sub_module_registered_twice_is_one_set_of_leaves():
    program, ours = run("torch", "training_torch:SharedBackbone", shapes="x=2,3")
    assert re.findall(r"^(\w+): R", program, re.M) == ["net_weight", "net_bias", "x"], program
    assert worst(ours, autograd("training_torch:SharedBackbone", shaped("x=2,3"))) < 1e-12, program
