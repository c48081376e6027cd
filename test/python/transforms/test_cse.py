"""cse at the torch level: spyre-pipeline runs xDSL's cse right after torch-adapt (no
switch: pipeline.py), so equal pure computations become one value before they become kernels.

Which torch ops may merge is `PURE_OPS` of spyre_mlir/dialects/torch/names.py (plus the dedicated
classes, all `Pure`): checked here against PyTorch's own schemas and tags, so that no mutating,
random or side-effecting op is ever merged or erased. End to end, two attentions over one
boolean mask (SDPA decomposes per call, each computing where(mask, 0, -inf)) launch the where
once, with the bits of two attentions over two equal masks (two inputs, which never merge).
"""

import pytest
import torch
from xdsl.traits import Pure

from spyre_mlir.dialects.torch import PURE_OPS, torch_op_class
from spyre_mlir.frontend.backend import STATS, get_device_model
from spyre_mlir.lowering.convert_torch_to_spyre import DEVICE_OPS
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.criteria import assert_within_device_bound, reference

NO_OVERLOAD = {"torch.prim.ListUnpack"}
"""A TorchScript list op with no PyTorch overload: it reads the elements of a list value."""


def _overload(name: str) -> torch._ops.OpOverload:
    """`torch.aten.where.self` -> torch.ops.aten.where.self; `torch.aten.abs` -> .default."""
    _, namespace, op, *overload = name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload[0] if overload else "default")


@pytest.mark.parametrize("name", sorted(PURE_OPS - NO_OVERLOAD))
def test_pure_ops_are_pure_functions_in_pytorch(name):
    """A pure op mutates no operand, draws no random numbers, has no side effect PyTorch knows
    of (asserts, prints), and does not return uninitialised memory."""
    op = _overload(name)
    assert not op._schema.is_mutable, f"{name} mutates an operand"
    assert torch.Tag.nondeterministic_seeded not in op.tags, f"{name} draws random numbers"
    assert op not in torch.fx.node._side_effectful_functions, f"{name} has side effects"
    assert not op.__name__.startswith(("empty", "new_empty")), f"{name} returns uninitialised memory"
    assert torch_op_class(name).has_trait(Pure)


@pytest.mark.parametrize(
    "name",
    [
        "torch.aten.rand_like",
        "torch.aten.randn",
        "torch.aten.dropout",
        "torch.aten.native_dropout",
        "torch.aten.bernoulli.p",
        "torch.aten.empty_like",
        "torch.aten.empty.memory_format",
        "torch.aten.add_.Tensor",
        "torch.aten.copy_",
        "torch.aten._assert_async.msg",
    ],
)
def test_random_uninitialised_and_mutating_ops_are_not_pure(name):
    assert name not in PURE_OPS
    assert not torch_op_class(name).has_trait(Pure)


def test_device_ops_are_pure():
    """Every op with a device lowering is pure, so equal ones merge before they become kernels."""
    assert [n for n in DEVICE_OPS if not torch_op_class(n).has_trait(Pure)] == []


class TwoAttentions(torch.nn.Module):
    """Two attentions, as two layers of an encoder compute them, each over its mask argument."""

    def forward(self, q, k, v, mask0, mask1):
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask0)
        return torch.nn.functional.scaled_dot_product_attention(a, k, v, attn_mask=mask1)


def _run(*inputs):
    """The output, the launches and the graph report of one compiled call."""
    torch._dynamo.reset()
    device = get_device_model()
    before, graphs = len(device.profile.kernels), len(STATS.graphs)
    with torch.no_grad():
        y = torch.compile(TwoAttentions(), backend="spyre")(*inputs)
    (report,) = STATS.graphs[graphs:]
    return y, device.profile.kernels[before:], report


@pytest.mark.slow
def test_one_mask_is_one_where():
    """One mask passed twice: both layers' where(mask, 0, -inf) are one value and one launch,
    one fewer than with two equal masks (two graph inputs, never merged), and the same bits.
    The graph report counts the merged where once (not as a device op of its own)."""
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, 64, 64, generator=g) for _ in range(3))
    mask = torch.rand(1, 1, 64, 64, generator=g) > 0.3
    mask[..., 0] = True  # no row masked out entirely
    (exact,), (bound,) = reference(TwoAttentions(), q, k, v, mask, mask, numerics=DL16)
    shared, kernels, report = _run(q, k, v, mask, mask)
    apart, kernels_apart, report_apart = _run(q, k, v, mask, mask.clone())
    assert_within_device_bound(shared, exact, bound, DL16)
    assert torch.equal(shared, apart)
    assert len(kernels) == len(kernels_apart) - 1
    assert sum(k.time_s for k in kernels) < sum(k.time_s for k in kernels_apart)
    assert report.torch_ops == report_apart.torch_ops - 1
    assert (report.host_by_design, report.cpu_fallback) == (report_apart.host_by_design, report_apart.cpu_fallback)
