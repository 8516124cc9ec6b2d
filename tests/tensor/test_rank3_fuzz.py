"""A fixed slice of the rank-3 fuzzer (tests/tensor/tensor_rank3.py): random programs over `X: R^(b,t,d)` with
NumPy broadcasting, axes, keepdims, permutations, indexing, ranges, stack and concat, einsum, reshape, take,
scatter_add and broadcast_to, whose loss and gradients must be JAX's at
symbolic and at literal sizes. A failure names a seed that `benchmarks/tensor_fuzz.py --rank3 1 --seed S`
reproduces."""

from __future__ import annotations

import pytest

pytest.importorskip("jax")

from tests.tensor import tensor_rank3  # noqa: E402


@pytest.mark.parametrize("seed", range(6))
def test_a_random_rank3_program_agrees_with_jax(seed):
    finding = tensor_rank3.run(seed, depth=2)
    assert finding.verdict == "ok", str(finding)


@pytest.mark.parametrize("name", sorted(tensor_rank3.FIXED))
def test_a_fixed_program_agrees_with_jax(name):
    finding = tensor_rank3.run_fixed(name)
    assert finding.verdict == "ok", str(finding)


@pytest.mark.parametrize("seed", [1, 11, 13, 14, 18, 35])
def test_a_random_program_with_ranges_stack_and_concat_agrees_with_jax(seed):
    """Seeds whose programs cut ranges on every axis and join by stack and concat at rank 3 (section 3b)."""
    finding = tensor_rank3.run(seed, depth=2)
    assert "concat" in finding.text or "stack" in finding.text
    assert finding.verdict == "ok", str(finding)


@pytest.mark.parametrize("seed", [3, 6, 12, 16, 19, 72])
def test_a_random_program_with_einsum_reshape_take_and_broadcast_to_agrees_with_jax(seed):
    """Seeds whose programs use the rest of section 3b: einsum, reshape, take at argmax indices, broadcast_to."""
    finding = tensor_rank3.run(seed, depth=2)
    assert any(op in finding.text for op in ("einsum", "reshape", "take", "broadcast_to"))
    assert finding.verdict == "ok", str(finding)


@pytest.mark.parametrize("seed", [6097, 6100])
def test_the_seeds_where_a_list_of_scalars_met_argmax_at_literal_sizes(seed):
    """`broadcast_to(a, (t, d))` at literal sizes is a list of a's; beside a formula holding argmax it was lowered to
    components, where argmax has none (NeedsNumbers at the definition) or no axis (`argmax takes 1 argument`)."""
    finding = tensor_rank3.run(seed, depth=3)
    assert finding.verdict == "ok", str(finding)
