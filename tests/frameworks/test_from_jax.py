"""--from-jax: published losses translate, keep every stop, and gradlang's gradient equals jax.grad."""

from __future__ import annotations

import numpy as np
import pytest

from tests.frameworks.harness import point, run, user_attribute, worst

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

# (module:function, --shapes, how many stops the source has on the traced path)
LOSSES = [
    ("byol_jax:loss", "params.online.W=2,3 params.predictor.W=2,2 params.target.W=2,3 x=3", 1),
    ("stable_softmax_jax:loss", "W=3,4 x=4", 1),
    ("stable_softmax_jax:by_hand", "W=3,4 x=4", 1),
    ("stable_softmax_jax:nested", "W=3,4 x=4", 1),
    ("vqvae_jax:loss", "z=3 codebook=4,3", 3),
    ("rl_jax:td_loss", "W=2,3 s=3 s2=3", 1),
    ("rl_jax:actor_critic", "theta=2,3 v=3 s=3 s2=3", 3),
    ("rl_jax:gumbel_hard", "logits=3 g=3 w=3", 2),
    ("rl_jax:simsiam", "W=3,3 P=3,3 x1=3 x2=3", 2),
    ("byol_jax:batch_loss", "W=2,3 P=2,2 T=2,3 X=4,3", 1),
    ("stable_softmax_jax:batch_cross_entropy", "W=3,4 b=4 X=2,3 Y=2,4", 1),
    ("rl_jax:dqn_batch", "W=3,4 S=3,4 S2=3,4", 1),
]


user_function = user_attribute  # the user's function (module) by MODULE:NAME


def jax_numbers(spec: str, args: tuple) -> list:
    function = user_function(spec)
    value, grads = jax.value_and_grad(function, argnums=tuple(range(len(args))))(*args)
    return [np.asarray(value), *(np.asarray(g) for g in jax.tree_util.tree_leaves(grads))]


@pytest.mark.parametrize("spec, shapes, stops", LOSSES)
def test_gradient_equals_jax_grad(spec, shapes, stops):
    program, ours = run("jax", spec, shapes=shapes)
    given = point(shapes)
    args = tuple(given.values())
    assert worst(ours, jax_numbers(spec, args)) < 1e-12, program


@pytest.mark.parametrize("spec, shapes, stops", LOSSES)
def test_every_stop_is_kept_with_its_source_line(spec, shapes, stops):
    program, _ = run("jax", spec, shapes=shapes)
    module = spec.split(":")[0]
    kept = [line for line in program.splitlines() if "stop_gradient(" in line]
    assert len(kept) == stops, program
    assert all(f"{module}.py:" in line for line in kept), program


@pytest.mark.parametrize("spec, shapes", [(spec, shapes) for spec, shapes, _ in LOSSES])
def test_round_trip_through_export_keeps_the_gradient(spec, shapes, tmp_path):
    """--from-jax, then --export jax: the exported loss has the original's gradient at the traced point."""
    from tests.frameworks.harness import exported as exported_module

    _, _, exported = exported_module("jax", spec, shapes, tmp_path)
    loss = spec.split(":")[1]
    args = [np.asarray(a) for a in jax.tree_util.tree_leaves(tuple(point(shapes).values()))]
    ours = getattr(exported, f"grad_{loss}")(*args)
    theirs = jax.tree_util.tree_leaves(jax.grad(user_function(spec), argnums=tuple(range(len(point(shapes)))))(
        *point(shapes).values()))
    assert worst(list(ours), theirs) < 1e-12


def test_a_custom_rule_is_replaced_by_the_primals_derivative_and_said_so():
    program, ours = run("jax", "custom_rules_jax:loss", shapes="x=3")
    assert "clip_gradient (at custom_rules_jax.py:31) has a custom derivative rule (custom_vjp_call)" in program
    given = tuple(point("x=3").values())
    assert worst(ours, jax_numbers("custom_rules_jax:primal_loss", given)) < 1e-12
