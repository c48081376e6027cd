"""Every optimisation keeps the outputs (bench/ablation.py measures their time).

The switches (pipeline.Optimizations, torch.compile option `disable`) change where work runs
and where intermediates live, never what is computed, except one:

  * bit-identical by design: cost_split and multicast (how work is divided; a PT pass's sum
    does not depend on it, sim/interpreter.py), double_buffer and cost_chunks (where tiles
    sit in LX) — as long as the matmul's k chunks stay the same. When a switch changes them,
    the fp32 accumulator adds the passes' sums in another grouping (as the card would): the
    fp32 re-association error (about k * 2^-24 relative, far below DL16's 2^-10 rounding step)
    can move a rounded sum by one DL16 unit, which the ops after it carry on, so both programs'
    outputs are compared with the bound the reference propagates instead; resident_chains
    (an MLP's intermediate kept in LX holds the same DL16 tile the DDR copy would: the splits
    differ, and with them possibly the k chunks, as above); row_groups (a reduction's intermediates kept in LX are stored in the same DL16
    format they would have in DDR), onchip_relayout (a transpose moves bits, in LX or
    through DDR alike);
  * pointwise_chains keeps a folded chain's intermediates in the SFP's f32 temporaries
    instead of rounding each to DL16, and epilogues read the matmul's fp32 sums where the
    separate kernel reads them rounded to DL16 from DDR: a different, and never worse,
    rounding, so both are compared with eager within the DL16 bound of the model
    (spyre_mlir.testing.criteria.reference);
  * stationary_a (a matrix-vector product's A block loaded once) needs few-row products,
    which the Block has none of: its own test compares a decode-shaped product, within the
    DL16 bound (the planner may choose other k chunks with it);
  * attention (the scores product, the softmax and the context product in one kernel) needs
    batched products with rows for every core, which the Block has none of: test_attention.py
    compares it with the three kernels apart, bit for bit in the f64 reference mode;
  * k_split sums a matmul's k halves on two cores and adds the two fp32 partial sums: a
    different association of the fp32 sum, so it too is compared within the DL16 bound (and
    the bit-for-bit comparisons of the others are made with it off on both sides).

The workload has every kind of kernel the switches touch: matmuls with epilogues (bias, GELU,
residual add), softmax and layer norm (row groups), a pointwise chain, and a transpose between
two pointwise kernels (the on-chip relayout). The sanitizer is on
(DeviceConfig's default), so every program also passes its checks.
"""

import pytest
import torch

from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.pipeline import Optimizations
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.criteria import assert_within_device_bound, reference


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
        moved = (
            torch.relu(torch.tanh(x.t() * 0.5).t()) * 3.0
        ) @ self.up.weight.T  # a transpose between pointwise kernels
        return attn @ y, torch.tanh(y * 0.5 + 1.0) * 2.0, moved


def run(disable) -> tuple[list[torch.Tensor], list]:
    torch._dynamo.reset()
    device = get_device_model()
    assert device.config.sanitize
    before = len(device.profile.kernels)
    x = torch.randn(96, 128, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        out = torch.compile(Block().eval(), backend="spyre", options={"disable": disable, "strict": True})(x)
    return list(out), device.profile.kernels[before:]


@pytest.fixture(scope="module")
def optimized():
    return run(["k_split"])


BIT_EXACT = [
    "cost_split",
    "multicast",
    "double_buffer",
    "cost_chunks",
    "row_groups",
    "onchip_relayout",
    "resident_chains",
]


K_CHUNKING = {"cost_split", "multicast", "double_buffer", "cost_chunks", "resident_chains"}
"""Switches that may change a matmul's split or k chunks (the planner's choice depends on them):
its tiles change shape, and the fp32 sums of a tile their order (docs/numerics.md)."""


@pytest.fixture(scope="module")
def bounds():
    """The Block's exact outputs and the DL16 bounds the reference propagates (run's input)."""
    x = torch.randn(96, 128, generator=torch.Generator().manual_seed(1))
    return reference(Block().eval(), x, numerics=DL16)


@pytest.mark.slow
@pytest.mark.parametrize("name", BIT_EXACT)
def test_switch_keeps_outputs_bit_for_bit(optimized, bounds, name):
    outs, kernels = optimized
    base, base_kernels = run(["k_split", name])
    for a, b, exact, bound in zip(outs, base, *bounds):
        if not torch.equal(a, b):
            assert name in K_CHUNKING, f"{name}: outputs differ by {(a - b).abs().max().item()}"
            assert_within_device_bound(a, exact, bound, DL16)
            assert_within_device_bound(b, exact, bound, DL16)
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
    device = get_device_model()
    before = len(device.profile.kernels)
    with torch.no_grad():
        y = torch.compile(Chain(), backend="spyre", options={"disable": disable, "strict": True})(x, b)
    assert_within_device_bound(y, exact, bound, DL16)
    assert len(device.profile.kernels[before:]) == (1 if not disable else 5)


@pytest.mark.parametrize(
    "disable",
    [["k_split"], pytest.param(["k_split", "epilogues"], marks=pytest.mark.slow)],
    ids=["epilogues", "a-launch-each"],
)
def test_epilogues_stay_within_the_dl16_bound(optimized, disable):
    """With epilogues the Block's linears run their bias (and GELU) on the fp32 sums and round
    once; apart, the matmul's result is rounded to DL16 and the bias kernel rounds again. Both
    are inside the bound the reference propagates (a rounding after every op)."""
    x = torch.randn(96, 128, generator=torch.Generator().manual_seed(1))
    exact, bound = reference(Block().eval(), x, numerics=DL16)
    outs, kernels = optimized if disable == ["k_split"] else run(disable)
    for y, e, b in zip(outs, exact, bound):
        assert_within_device_bound(y, e, b, DL16)
    if disable != ["k_split"]:
        assert len(kernels) > len(optimized[1])  # the epilogues' launches are back


@pytest.mark.slow
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
    assert set(BIT_EXACT) | {
        "pointwise_chains",
        "epilogues",
        "k_split",
        "stationary_a",
        "attention",
        "gathered_operands",
    } == {f for f in Optimizations.__dataclass_fields__}
    with pytest.raises(ValueError, match="unknown optimisation"):
        Optimizations().without("fusion")


@pytest.mark.slow
def test_resident_chains_keep_the_mlp_intermediate_in_lx():
    """Linear -> GELU -> Linear: with resident_chains (the default) the intermediate never
    reaches DDR (the first launch stores nothing, the second loads less), the time drops, and
    the output stays within the DL16 bound on the sanitizer; with the switch off, the same
    compiler stores and reloads it."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 512), torch.nn.GELU(), torch.nn.Linear(512, 128)).eval()
    x = torch.randn(128, 128, generator=torch.Generator().manual_seed(4))
    (exact,), (bound,) = reference(model, x, numerics=DL16)
    device = get_device_model()
    assert device.config.sanitize
    runs = {}
    for disable in ([], ["resident_chains"]):
        torch._dynamo.reset()
        before = len(device.profile.kernels)
        with torch.no_grad():
            y = torch.compile(model, backend="spyre", options={"disable": disable, "strict": True})(x)
        assert_within_device_bound(y, exact, bound, DL16)
        runs[bool(disable)] = device.profile.kernels[before:]
    kept, through_ddr = runs[False], runs[True]
    assert len(kept) == len(through_ddr) == 2
    intermediate = 128 * 512 * 2
    assert kept[0].ddr_write_bytes == 0 and through_ddr[0].ddr_write_bytes == intermediate
    assert kept[1].ddr_read_bytes <= through_ddr[1].ddr_read_bytes - intermediate
    assert sum(k.time_s for k in kept) < sum(k.time_s for k in through_ddr)


def test_stationary_a_loads_a_matrix_vector_products_a_block_once():
    """A decode step's shape (1 x 1536 by 1536 x 576): with stationary_a each core loads its
    A block once and its B tiles stream back to back, without it an A tile per chunk holds a
    DMA queue slot and each B tile waits out the latency again. Faster with it; both within
    the DL16 bound (the planner may choose other k chunks with it, so the bits may differ)."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(1536, 576, bias=False).eval()
    x = torch.randn(1, 1536, generator=torch.Generator().manual_seed(4))
    (exact,), (bound,) = reference(lin, x, numerics=DL16)
    device = get_device_model()
    runs = {}
    for disable in ([], ["stationary_a"]):
        torch._dynamo.reset()
        before = len(device.profile.kernels)
        with torch.no_grad():
            y = torch.compile(lin, backend="spyre", options={"disable": disable, "strict": True, "cache": False})(x)
        assert_within_device_bound(y, exact, bound, DL16)
        runs[bool(disable)] = device.profile.kernels[before:]
    assert sum(k.time_s for k in runs[False]) < sum(k.time_s for k in runs[True])
