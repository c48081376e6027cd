"""Every optimisation keeps the outputs (issue 7; bench/ablation.py measures their time).

The switches (pipeline.Optimizations, torch.compile option `disable`) change where work runs
and where intermediates live, never what is computed, except one:

  * bit-identical by design: cost_split and multicast (how work is divided; PT sums do not
    depend on it, runtime/numerics.py), double_buffer and cost_chunks (where tiles sit in
    LX), row_groups (a reduction's intermediates kept in LX are stored in the same DL16
    format they would have in DDR), epilogues (the matmul's output tile is rounded to DL16
    before the epilogue reads it, as the separate kernel would read it from DDR);
  * pointwise_chains keeps a folded chain's intermediates in the SFP's f32 temporaries
    instead of rounding each to DL16: a different, and never worse, rounding, so the chain
    is compared with eager within the DL16 bound of the model (helpers.reference);
  * k_split sums a matmul's k halves on two cores and adds the two fp32 partial sums: a
    different association of the fp32 sum, so it too is compared within the DL16 bound (and
    the bit-for-bit comparisons of the others are made with it off on both sides).

The workload has every kind of kernel the switches touch: matmuls with epilogues (bias, GELU,
residual add), softmax and layer norm (row groups), and a pointwise chain. The sanitizer is on
(DeviceConfig's default), so every program also passes its checks.
"""

import pytest
import torch

from helpers import assert_within_device_bound, reference
from spyre_mlir.frontend.backend import get_device
from spyre_mlir.runtime.numerics import DL16
from spyre_mlir.pipeline import Optimizations


class Block(torch.nn.Module):
    """An MLP with a residual and a layer norm, and a softmax over a product: every fusion."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.up = torch.nn.Linear(128, 256)
        self.down = torch.nn.Linear(256, 128)
        self.norm = torch.nn.LayerNorm(128)

    def forward(self, x):
        h = self.down(torch.nn.functional.gelu(self.up(x))) + x
        y = self.norm(h)
        attn = torch.softmax(y @ y.T * 0.125, dim=-1)
        return attn @ y, torch.tanh(y * 0.5 + 1.0) * 2.0


def run(disable) -> tuple[list[torch.Tensor], list]:
    torch._dynamo.reset()
    device = get_device()
    assert device.config.sanitize
    before = len(device.profile.kernels)
    x = torch.randn(96, 128, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = torch.compile(Block().eval(), backend="spyre", options={"disable": disable, "strict": True})(x)
    return list(out), device.profile.kernels[before:]


@pytest.fixture(scope="module")
def optimized():
    return run(["k_split"])


BIT_EXACT = ["cost_split", "multicast", "double_buffer", "cost_chunks", "row_groups", "epilogues"]


@pytest.mark.parametrize("name", BIT_EXACT)
def test_switch_keeps_outputs_bit_for_bit(optimized, name):
    outs, kernels = optimized
    base, base_kernels = run(["k_split", name])
    for a, b in zip(outs, base):
        assert torch.equal(a, b), f"{name}: outputs differ by {(a - b).abs().max().item()}"
    # the switch did something: the programs differ in launches or simulated time
    assert [k.time_s for k in kernels] != [k.time_s for k in base_kernels], name


def test_fusions_remove_launches(optimized):
    _, kernels = optimized
    _, unfused = run(["row_groups", "epilogues", "pointwise_chains"])
    assert len(kernels) < len(unfused)
    assert sum(k.time_s for k in kernels) < sum(k.time_s for k in unfused)


class Chain(torch.nn.Module):
    def forward(self, x, b):
        return torch.tanh(x * 0.5 + b) * 2.0 - x


@pytest.mark.parametrize("disable", [[], ["pointwise_chains"]], ids=["folded", "one-launch-each"])
def test_pointwise_chains_stay_within_the_dl16_bound(disable):
    """Folded (one launch, f32 temporaries) and unfolded (a DL16 store after each op) are both
    inside the bound the reference propagates for the unfolded graph, which counts a rounding
    after every op: the folded chain rounds only its result."""
    x = torch.randn(70, 200, generator=torch.Generator().manual_seed(2))
    b = torch.randn(200, generator=torch.Generator().manual_seed(3))
    (exact,), (bound,) = reference(Chain(), x, b, numerics=DL16)
    torch._dynamo.reset()
    device = get_device()
    before = len(device.profile.kernels)
    with torch.no_grad():
        y = torch.compile(Chain(), backend="spyre", options={"disable": disable, "strict": True})(x, b)
    assert_within_device_bound(y, exact, bound, DL16)
    assert len(device.profile.kernels[before:]) == (1 if not disable else 5)


def test_k_split_stays_within_the_dl16_bound(optimized):
    """With k splits (the default) the Block's second linear (96 x 256 x 128) is split in two
    k halves whose fp32 partial sums are added over the ring: the outputs stay inside the bound
    the reference propagates (a rounding after every op, the PT's sums exact), on the
    sanitizer, and the programs differ from those without k splits."""
    x = torch.randn(96, 128, generator=torch.Generator().manual_seed(1))
    exact, bound = reference(Block().eval(), x, numerics=DL16)
    outs, kernels = run([])
    for y, e, b in zip(outs, exact, bound):
        assert_within_device_bound(y, e, b, DL16)
    _, unsplit = optimized
    assert [k.time_s for k in kernels] != [k.time_s for k in unsplit]


def test_every_switch_is_known():
    assert set(BIT_EXACT) | {"pointwise_chains", "k_split"} == {f for f in Optimizations.__dataclass_fields__}
    with pytest.raises(ValueError, match="unknown optimisation"):
        Optimizations().without("fusion")
