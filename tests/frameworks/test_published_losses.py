"""Published losses as their authors write them (#39): in-place updates (SwAV's Sinkhorn), torch.distributions
(a SAC actor), lax.scan and Python loops (an rlax TD(lambda)), batch/layer/group norm (a BYOL projector), a hard
Gumbel quantiser (F.gumbel_softmax's scatter, JAX's one_hot(argmax)).

Each is translated from examples/frameworks/published_*.py, run by gradlang, and compared with torch.autograd or
jax.grad computed here in float64 (NaN where the framework is finite fails: `agrees`); every stop is kept with its
own source line, and --explain-wrt finishes.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradlang import Session
from gradlang.frameworks import TranslateError, translate
from gradlang.render.plain import to_plain
from tests.frameworks.harness import exported, in_examples, point, run, translated, user_attribute, worst
from tests.frameworks.test_training_patterns import at_value, autograd, line_of, shaped

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

SWAV = "x1=3,3 x2=3,3"
TD = "params.w1=3,2 params.w2=2 obs=5,3 r_t=4 discount_t=4"
PROJECTOR = " ".join(f"params.{branch}.{name}" for branch in ("online", "target") for name in
                     ("w1=3,4", "scale=4", "bias=4", "w2=4,2")) + " x1=3,3 x2=3,3"
GUMBEL = "params.w=3,4 params.codebook=4,2 x=2,3 noise=2,4"


def agrees(ours: list, theirs: list) -> None:
    """Every number within 1e-9 of the framework's, and finite wherever the framework's is."""
    for a, b in zip(ours, theirs, strict=True):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        assert np.isfinite(a.reshape(-1)[np.isfinite(b.reshape(-1))]).all()
    assert worst(ours, theirs) < 1e-9


def stops(program: str) -> list:
    """The comments of the program's stop_gradient lines."""
    return [line.split("#", 1)[1].strip() for line in program.splitlines() if "= stop_gradient(" in line]


def jax_numbers(spec: str, shapes: str) -> list:
    """jax.value_and_grad by every argument, flattened as the program declares its leaves."""
    given = tuple(point(shapes).values())
    value, grads = jax.value_and_grad(user_attribute(spec), argnums=tuple(range(len(given))))(*given)
    return [np.asarray(value), *(np.asarray(g) for g in jax.tree_util.tree_leaves(grads))]


# --- 1. in-place operations: x += y, x.div_(…), Q /= Q.sum(…) in a loop, nn.ReLU(inplace=True), clamp_ ---------------


def test_swavs_sinkhorn_with_in_place_updates_agrees_with_autograd():
    program, ours = run("torch", "published_torch:SwAV", shapes=SWAV)
    agrees(ours, autograd("published_torch:SwAV", shaped(SWAV)))
    line = line_of("published_torch", "with torch.no_grad():")
    assert stops(program) == [f"torch.no_grad() region at published_torch.py:{line}"] * 2, program
    loop = line_of("published_torch", "for _ in range(iterations):")
    assert (f"# a Python loop at published_torch.py:{loop} (for _ in range(iterations):) is unrolled at its traced "
            "length: 2 runs of 3 iteration(s) each") in program
    assert "t1 * 0.1" in program  # z1 += 0.1 * h1 is the sum, not a lost write


def test_an_input_written_in_place_is_the_written_value():
    program, ours = run("torch", "published_torch:scaled_in_place", example_args="published_torch:pixels")
    assert "obs / 255.0" in program, program
    obs, q = (v.double().requires_grad_(True) for v in user_attribute("published_torch:pixels")())
    loss = user_attribute("published_torch:scaled_in_place")(obs.clone(), q)  # torch writes no leaf in place
    agrees(ours, [loss.detach().numpy(), *(g.numpy() for g in torch.autograd.grad(loss, [obs, q]))])


def test_an_in_place_write_through_a_view_reaches_its_base_read_again():
    """Was refused at the write's line; the write now reaches y at the entries it wrote (CleanRL's GAE)."""
    program, ours = run("torch", "published_torch:view_written", shapes="x=2,3")
    x = torch.as_tensor(at_value(program, "x")).requires_grad_(True)
    loss = user_attribute("published_torch:view_written")(x)
    agrees(ours, [loss.detach().numpy(), torch.autograd.grad(loss, [x])[0].numpy()])


# --- 2. torch.distributions: validation off while tracing, rsample's noise a named draw -------------------------------


def test_a_sac_actor_with_torch_distributions_agrees_with_autograd(monkeypatch):
    validating = torch.distributions.Distribution._validate_args
    program, ours = run("torch", "published_torch:SACActor", shapes="obs=3,3")
    assert torch.distributions.Distribution._validate_args == validating  # restored after the trace
    draw = line_of("published_torch", "action = policy.rsample()")
    assert f"normal: R^(3,2)   # torch.normal_ at published_torch.py:{draw}: a random draw" in program, program
    assert stops(program) == [f".detach() at published_torch.py:{line_of('published_torch', text)}" for text in
                              ("alpha = self.log_alpha.exp().detach()", "(log_prob + 2.0).detach()")]
    noise = torch.tensor(at_value(program, "normal"))
    monkeypatch.setattr(torch.distributions.Normal, "rsample",
                        lambda self, sample_shape=torch.Size(): self.loc + noise * self.scale)
    agrees(ours, autograd("published_torch:SACActor", shaped("obs=3,3")))


# --- 3. lax.scan and Python loops unrolled at the traced length, with a comment ----------------------------------------


def test_an_rlax_td_lambda_by_lax_scan_agrees_with_jax_grad():
    program, ours = run("jax", "published_jax:td_lambda", shapes=TD)
    agrees(ours, jax_numbers("published_jax:td_lambda", TD))
    scan = line_of("published_jax", "jax.lax.scan(step")
    assert f"# lax.scan at published_jax.py:{scan} unrolled" in program
    assert "unrolled at its traced length: 4 step(s) from the last" in program
    assert stops(program) == [f"lax.stop_gradient at published_jax.py:{line_of('published_jax', 'v_tm1, v_t =')}"]
    assert "t1[1:5]" in program and "t1[0:4]" in program  # v[1:], v[:-1] read back as ranges


@pytest.mark.parametrize("spec, shapes, comment", [
    ("published_jax:n_step", "params.w=3 obs=4,3 r_t=3 discount_t=3", "3 iteration(s)"),
    ("published_jax:scanned_sum", "params.w=3,3 xs=4,3", "unrolled at its traced length: 4 step(s)"),
])
def test_a_python_loop_and_a_scan_carrying_a_matrix_agree_with_jax_grad(spec, shapes, comment):
    program, ours = run("jax", spec, shapes=shapes)
    agrees(ours, jax_numbers(spec, shapes))
    assert comment in program, program


def test_a_while_loop_is_refused_naming_it_at_its_line():
    with pytest.raises(TranslateError) as caught:
        translated("jax", "unsupported_jax:looped", shapes="x=3")
    assert "lax.while_loop" in caught.value.message and caught.value.line == 17


# --- 4. batch_norm (batch statistics), layer_norm, group_norm, jax.nn.standardize --------------------------------------


@pytest.mark.parametrize("spec, shapes, written", [
    ("published_torch:BYOLProjector", SWAV, "mean(t1, 0)"),  # training mode: the batch's mean
    ("published_torch:NormHead", "x=3,4", "[[0.5, 0.5, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]"),  # group_norm's averaging
    ("published_torch:FrozenStats", SWAV, "sqrt([1.0, 1.0, 1.0, 1.0] + 1e-05)"),  # eval mode: the running variance
])
def test_normalised_torch_models_agree_with_autograd(spec, shapes, written):
    program, ours = run("torch", spec, shapes=shapes)
    agrees(ours, autograd(spec, shaped(shapes)))
    assert written in program, program
    assert len(stops(program)) == 1 and "published_torch.py:" in stops(program)[0]


def test_a_batch_normalised_jax_projector_agrees_with_jax_grad():
    program, ours = run("jax", "published_jax:projector", shapes=PROJECTOR)
    agrees(ours, jax_numbers("published_jax:projector", PROJECTOR))
    assert stops(program) == [f"lax.stop_gradient at published_jax.py:{line_of('published_jax', 'target = jax.lax')}"]
    assert program.count("has a custom derivative rule") == 1  # relu's rule, said once for its two calls


def test_batch_norm_of_an_image_normalises_over_batch_height_and_width():
    """BatchNorm2d of (b, c, h, w) (was refused: more than two axes): each channel's statistics over the other axes."""
    program, ours = run("torch", "published_torch:ImageNorm", shapes="x=2,3")
    agrees(ours, autograd("published_torch:ImageNorm", shaped("x=2,3")))
    assert "reshape(" in program and "axis=(0, 2, 3)" in program, program


# --- 5. the hard one-hot: scatter of ones at an argmax (F.gumbel_softmax(hard=True)), one_hot(argmax) ------------------


@pytest.mark.parametrize("spec, shapes, written", [
    ("published_torch:GumbelQuantiser", "x=3", "onehot(argmax(t2), 4)"),
    ("published_torch:GumbelBatch", "x=2,3", "stack([onehot(argmax(t2[0, :]), 4), onehot(argmax(t2[1, :]), 4)], 0)"),
])
def test_a_hard_gumbel_quantiser_agrees_with_autograd(spec, shapes, written, monkeypatch):
    program, ours = run("torch", spec, shapes=shapes)
    assert written in program, program
    assert stops(program) == [f".detach() at published_torch.py:{line_of('published_torch', 'F.gumbel_softmax(')}"]
    drawn = torch.tensor(at_value(program, "exponential"))
    monkeypatch.setattr(torch.Tensor, "exponential_", lambda self, *args, **kwargs: self.copy_(drawn))
    agrees(ours, autograd(spec, shaped(shapes)))


def test_a_vq_one_hot_written_by_index_put_at_an_argmin_agrees_with_autograd():
    program, ours = run("torch", "published_torch:VQCodes", shapes="x=3,3")
    assert "stack([onehot(argmin(t3[0, :]), 4), onehot(argmin(t3[1, :]), 4), onehot(argmin(t3[2, :]), 4)], 0)" in (
        program), program
    line = line_of("published_torch", "return ((z - quantised.detach())")
    assert stops(program) == [f".detach() at published_torch.py:{line}"] * 2
    agrees(ours, autograd("published_torch:VQCodes", shaped("x=3,3")))


def test_jaxs_one_hot_of_an_argmax_agrees_and_exports(tmp_path):
    program, ours = run("jax", "published_jax:gumbel_hard", shapes=GUMBEL)
    agrees(ours, jax_numbers("published_jax:gumbel_hard", GUMBEL))
    assert "stack([onehot(argmax(t4[0, :]), 4), onehot(argmax(t4[1, :]), 4)], 0)" in program
    _, _, module = exported("jax", "published_jax:gumbel_hard", GUMBEL, tmp_path)
    args = [np.asarray(a) for a in jax.tree_util.tree_leaves(tuple(point(GUMBEL).values()))]
    assert worst(list(module.grad_gumbel_hard(*args)), jax_numbers("published_jax:gumbel_hard", GUMBEL)[1:]) < 1e-12


def test_a_scatter_that_is_not_a_one_hot_is_refused_at_its_line():
    with pytest.raises(TranslateError) as caught:
        translated("torch", "published_torch:Scattered", shapes="x=3")
    assert caught.value.message.startswith("aten.scatter.src: a scatter that is not ones written into zeros at an argmax")
    assert caught.value.line == line_of("published_torch", ".scatter(0, index, h)")


# --- --explain-wrt finishes on each ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, spec, shapes, wrt", [
    ("torch", "published_torch:SACActor", "obs=3,3", "log_alpha"),
    ("torch", "published_torch:SwAV", SWAV, "prototypes"),  # 85 s of CPU before the work bounds (#40)
    ("torch", "published_torch:NormHead", "x=3,4", "fc"),  # 70 s: layer norm, group norm, layer norm
    ("torch", "published_torch:BYOLProjector", SWAV, "online.1"),
    ("torch", "published_torch:GumbelBatch", "x=2,3", "codebook"),
    ("jax", "published_jax:td_lambda", TD, "params.w2"),
    ("jax", "published_jax:gumbel_hard", GUMBEL, "params.codebook"),
])
def test_explain_wrt_finishes_and_checks_itself(kind, spec, shapes, wrt):
    with in_examples():
        program = translate(kind, spec, shapes=shapes, explain_wrt=(wrt,))
    results = [r for r in Session().run(program) if r is not None and r.kind == "explain"]
    assert len(results) == program.count("\nexplain "), program  # NormHead's fc: its weight, then its bias
    for explained in results:
        text = "\n".join(to_plain(step) for step in explained.steps)
        assert "✓ equals grad" in text, text
