"""A random `*_like` op of a transposed tensor draws what eager PyTorch draws
(frontend/random_layout.py): compiled from the same generator state, the same numbers in the same
elements, and the generator left where eager leaves it."""

from __future__ import annotations

import pytest
import torch

from spyre_mlir.frontend.random_layout import eager_draw_order
from spyre_mlir.sim.numerics import DL16


def _compiled(fn, *args):
    torch._dynamo.reset()
    with torch.no_grad():
        return torch.compile(fn, backend="spyre")(*args)


def _noisy_prior(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """vits's prior latents: a transposed product, plus noise laid out like it."""
    means = (x @ w).transpose(1, 2)  # (1, 24, 40), strides (960, 1, 24)
    return means + torch.randn_like(means)


def _uniform_prior(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    means = (x @ w).transpose(1, 2)
    return means * torch.rand_like(means)


@pytest.mark.parametrize("fn", [_noisy_prior, _uniform_prior])
def test_random_like_of_a_transposed_tensor_draws_eagers_numbers(fn):
    x, w = torch.randn(1, 40, 16), torch.randn(16, 24)
    state = torch.get_rng_state()
    want = fn(x, w)
    after = torch.get_rng_state()
    torch.set_rng_state(state)
    got = _compiled(fn, x, w)
    assert torch.equal(torch.get_rng_state(), after)
    # the product's and the draws' DL16 roundings, and the sum's or product's
    bound = 4 * 16 * DL16.unit_roundoff * ((x.abs() @ w.abs()).max() + 4.0) * 2.0
    assert (got - want).abs().max() <= bound


def test_the_rewrite_draws_eagers_numbers_from_a_contiguous_operand():
    """The rewritten graph, run eagerly on a contiguous copy of the operand (as the host
    executor runs a CPU op), gives what the original gives on the transposed one."""
    means = torch.randn(1, 40, 24).transpose(1, 2)
    gm = torch.fx.experimental.proxy_tensor.make_fx(
        lambda m: torch.ops.aten.randn_like.default(m), tracing_mode="fake"
    )(means)
    assert eager_draw_order(gm)
    draws = [n for n in gm.graph.nodes if n.target is torch.ops.aten.randn_like.default]
    assert [n.kwargs.get("memory_format") for n in draws] == [torch.channels_last]
    state = torch.get_rng_state()
    want = torch.randn_like(means)
    torch.set_rng_state(state)
    got = gm(means.contiguous())
    assert torch.equal(got, want)


def test_a_contiguous_result_is_left_alone():
    gm = torch.fx.experimental.proxy_tensor.make_fx(lambda m: torch.randn_like(m) + m, tracing_mode="fake")(
        torch.randn(4, 32)
    )
    assert not eager_draw_order(gm)
