"""--from-torch: published losses translate from torch.export, keep every detach and no_grad, match autograd."""

from __future__ import annotations


import numpy as np
import pytest

from tests.frameworks.harness import point, run, user_attribute, worst

torch = pytest.importorskip("torch")

# (module:class, --shapes or None with --example-args, how many stops the source has on the traced path)
LOSSES = [
    ("byol_torch:BYOL", "x=3", None, 1),
    ("byol_torch:SimSiam", "x1=3 x2=3", None, 2),
    ("vqvae_torch:Quantiser", "z=3", None, 3),
    ("vqvae_torch:Classifier", None, "vqvae_torch:labelled", 0),
    ("rl_torch:TD", "s=3 s2=3", None, 1),
    ("rl_torch:ActorCritic", "s=3 s2=3", None, 2),
    ("rl_torch:GumbelHard", "g=3", None, 1),
    ("byol_torch:BatchBYOL", "X=4,3", None, 1),
    ("rl_torch:DQNBatch", None, "rl_torch:batch", 1),
]


user_object = user_attribute  # the user's function (module) by MODULE:NAME


def example(shapes, example_args) -> tuple:
    if shapes is not None:
        return tuple(torch.tensor(v) for v in point(shapes).values())
    return tuple(user_object(example_args)())


def autograd_numbers(spec: str, args: tuple) -> list:
    from gradlang.frameworks.trace_torch import float64

    with float64(torch):
        return _autograd_numbers(spec, args)


def _autograd_numbers(spec: str, args: tuple) -> list:
    module = user_object(spec)().double()
    inputs = [a.clone().requires_grad_(True) if a.is_floating_point() else a for a in args]
    leaves = [*module.parameters(), *(a for a in inputs if a.is_floating_point())]
    loss = module(*inputs)
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)  # a stopped branch's weights get None
    return [loss.detach().numpy(), *(np.zeros(tuple(v.shape)) if g is None else g.numpy()
                                     for g, v in zip(grads, leaves))]


@pytest.mark.parametrize("spec, shapes, example_args, stops", LOSSES)
def test_gradient_equals_autograd(spec, shapes, example_args, stops):
    program, ours = run("torch", spec, shapes=shapes, example_args=example_args)
    theirs = autograd_numbers(spec, example(shapes, example_args))
    assert len(ours) == len(theirs), program
    assert worst(ours, theirs) < 1e-12, program


@pytest.mark.parametrize("spec, shapes, example_args, stops", LOSSES)
def test_every_detach_and_no_grad_is_kept_with_its_line(spec, shapes, example_args, stops):
    program, _ = run("torch", spec, shapes=shapes, example_args=example_args)
    module = spec.split(":")[0]
    kept = [line for line in program.splitlines() if "stop_gradient(" in line]
    assert len(kept) == stops, program
    assert all(f"{module}.py:" in line for line in kept), program
    if spec == "byol_torch:BYOL":
        assert "torch.no_grad() region at byol_torch.py:21" in program


def test_an_operation_without_translation_is_placed_at_the_users_line():
    from gradlang.frameworks import TranslateError

    with pytest.raises(TranslateError) as caught:
        run("torch", "unsupported_torch:Running", shapes="x=3")
    error = caught.value
    assert error.message == "no translation for the PyTorch operation aten.cumprod.default"
    assert (error.filename, error.line) == ("unsupported_torch.py", 13)
    assert error.source_line.strip() == "return torch.cumprod(torch.tanh(x), 0).sum()"


def test_the_default_dtype_is_left_as_it_was():
    before = torch.get_default_dtype()
    run("torch", "byol_torch:BYOL", shapes="x=3")
    assert torch.get_default_dtype() == before


def test_an_autograd_function_is_named_as_unread():
    program, ours = run("torch", "custom_rules_torch:Quantised", shapes="x=3")
    assert "RoundThrough.apply (at custom_rules_torch.py:16) is a torch.autograd.Function" in program
    x = point("x=3")["x"]
    assert worst(ours[1:], [np.round(x)]) < 1e-12  # d/dx (round(x) x) with round's derivative 0


def test_the_same_estimator_with_detach_is_kept():
    program, ours = run("torch", "custom_rules_torch:Plain", shapes="x=3")
    assert "# .detach() at custom_rules_torch.py:30" in program
    assert worst(ours, autograd_numbers("custom_rules_torch:Plain", example("x=3", None))) < 1e-12


@pytest.mark.parametrize("spec, shapes", [("byol_torch:BYOL", "x=3"), ("vqvae_torch:Quantiser", "z=3"),
                                          ("rl_torch:TD", "s=3 s2=3")])
def test_round_trip_through_export_keeps_the_gradient(spec, shapes, tmp_path):
    """--from-torch, then --export torch: the exported loss has autograd's gradient at the traced point."""
    from tests.frameworks.harness import exported as exported_module

    session, program, exported = exported_module("torch", spec, shapes, tmp_path)
    theirs = autograd_numbers(spec, example(shapes, None))
    points = [line.split(" = ", 1)[0] for line in program.splitlines() if "_at = " in line]
    assert len(points) == len(theirs) - 1
    values = [np.asarray(session.eval(name).tolist(), dtype=np.float64) for name in points]
    ours = exported.grad_loss(*(torch.tensor(v) for v in values))
    assert worst([g.detach().numpy() for g in ours], theirs[1:]) < 1e-12
