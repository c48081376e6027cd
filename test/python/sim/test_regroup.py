"""Later launches run a program's steps regrouped by data flow (sim/regroup/): the same
bits as the cooperative run, the definition, in fewer steps."""

import numpy as np
import pytest
from isa_programs import XY, xy_module

from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim import interpreter
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.sim.regroup import ChainStep, GemmStep

T = XY


def calls(programs: str, body: str, inputs: list, batch: bool):
    """Each call's output on a fresh device; with `batch`, calls after the first run the
    regrouped steps. Returns (outputs, the device's plans of the programs, taken while the
    executable lives: they go with it)."""
    mod, ctx = xy_module(programs, body)
    model = DeviceModel()
    run = Executable(mod, ctx, model)
    old, interpreter.BATCH = interpreter.BATCH, batch
    try:
        return [run(*xy)[0].copy() for xy in inputs], list(model._plans.values())
    finally:
        interpreter.BATCH = old


@pytest.fixture
def inputs():
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal((64, 128)).astype(np.float32) for _ in range(3))
    return [(x, y), (y, z), (z, x)]  # different inputs per call: stale LX or DDR would show


def same_bits(programs: str, body: str, inputs: list):
    got, plans = calls(programs, body, inputs, batch=True)
    want, _ = calls(programs, body, inputs, batch=False)
    for g, w in zip(got, want):
        assert np.array_equal(g.view(np.uint32), w.view(np.uint32))
    return got, plans


LAUNCH = f"  %r = spyre_isa.launch @k(%xd, %yd) : ({T}, {T}) -> {T}"


def test_column_tiles_through_one_buffer_are_one_product(inputs):
    """One core multiplies x[:, :64] by y's two stick columns, tile after tile through the
    same LX buffers. Regrouped: each kind once, and the PT steps one product of A on both
    B tiles side by side."""
    tiles = "\n".join(
        f"""    spyre_isa.dma_load %b[{64 * j}, strides = [1]] -> lx [128, strides = [1]] sizes [64] : {T}
    spyre_isa.pt_matmul lx [0, strides = [1, 64]], lx [128, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64
    spyre_isa.sfp_copy lx [256, strides = [2], f32] -> lx [512, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [512, strides = [1]] -> %c[{64 * j}, strides = [1]] sizes [64] : {T}"""
        for j in range(2)
    )
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
{tiles}
  }}
}}"""
    got, (plan,) = same_bits(prog, LAUNCH, inputs)
    kinds = [type(s).__name__ for s, _ in plan.batched.steps]
    # y's load, read only as the products' B, may be skipped for a frozen y (it is not here)
    assert sorted(kinds) == sorted(["DmaPlan", "FrozenLoad", "GemmStep", "SfpPlan", "DmaPlan"]), kinds
    (gemm,) = [s for s, _ in plan.batched.steps if isinstance(s, GemmStep)]
    assert len(gemm.blocks) == 1 and gemm.singles is None
    a_rows, b_rows, _ = gemm.blocks[0]
    assert len(a_rows) == 1 and len(b_rows) == 2  # one A on two B tiles
    # scratch rows are reused once dead: A (64) + B (2 x 64) + C (2 x 128 f32) + DL16 out (2 x 64)
    # are 576 fresh rows; the outputs take A's and B's rows, read last by the product
    assert plan.batched.scratch_rows == 64 + 2 * 64 + 2 * 128
    x, y = (DL16.round(v) for v in inputs[2])
    want = DL16.round(np.concatenate([x[:, :64] @ y[:, :64], x[:, :64] @ y[:, 64:]], axis=1))
    assert np.max(np.abs(got[2] - want)) <= 2 * DL16.unit_roundoff * np.max(np.abs(want))


def test_a_later_store_of_one_ddr_stick_stays_later(inputs):
    """c's sticks 0..31 are stored twice: x + y, then x. The second store's data is ready
    long before the first's, and it has the signature of an earlier store (32 sticks), so
    without its DDR order it would be merged with that one and overwritten by x + y."""
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_store lx [0, strides = [1]] -> %c[64, strides = [1]] sizes [32] : {T}
    spyre_isa.dma_load %b[0, strides = [1]] -> lx [64, strides = [1]] sizes [64] : {T}
    spyre_isa.sfp_add lx [0, strides = [1]], lx [64, strides = [1]] -> lx [128, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [128, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_store lx [0, strides = [1]] -> %c[0, strides = [1]] sizes [32] : {T}
  }}
}}"""
    got, _ = same_bits(prog, LAUNCH, inputs)
    x, y = (DL16.round(v) for v in inputs[2])
    assert np.array_equal(got[2][:32, :64], x[:32, :64])
    assert np.array_equal(got[2][32:, :64], DL16.round(x[32:, :64] + y[32:, :64]))
    assert np.array_equal(got[2][:32, 64:], x[:32, :64])


def test_what_a_launch_leaves_in_lx_is_there_for_the_next(inputs):
    """k1 leaves x + y in LX sticks [128, 192) (resident_out); k2 reads them from there
    (resident_in). The regrouped k1 computes into scratch rows and copies the value back."""
    progs = f"""
spyre_isa.program @k1(%a: {T}, %b: {T}, %c: {T}) inputs 2 attributes {{spyre.resident_out = array<i64: 128, 192>}} {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_load %b[0, strides = [1]] -> lx [64, strides = [1]] sizes [64] : {T}
    spyre_isa.sfp_add lx [0, strides = [1]], lx [64, strides = [1]] -> lx [128, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [128, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
  }}
}}
spyre_isa.program @k2(%a: {T}, %c: {T}) inputs 1 attributes {{spyre.resident_in = array<i64: 128, 192>}} {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.sfp_mul lx [128, strides = [1]], lx [0, strides = [1]] -> lx [256, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [256, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
  }}
}}"""
    body = f"""  %s = spyre_isa.launch @k1(%xd, %yd) : ({T}, {T}) -> {T}
  %r = spyre_isa.launch @k2(%xd) : ({T}) -> {T}"""
    got, _ = same_bits(progs, body, inputs)
    for out, (x, y) in zip(got, inputs):
        x, y = DL16.round(x), DL16.round(y)
        assert np.array_equal(out[:, :64], DL16.round(DL16.round(x[:, :64] + y[:, :64]) * x[:, :64]))


def test_a_program_whose_writes_nothing_reads_runs_no_steps(inputs):
    """LX values no store, and no later launch, reads: every step is dead."""
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 64], strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.sfp_exp lx [0, strides = [1]] -> lx [64, strides = [1]] sizes [64]
  }}
}}"""
    got, (plan,) = same_bits(prog, LAUNCH, inputs)
    assert plan.batched.steps == [] and not got[2].any()


def test_computed_values_are_kept_decoded_for_the_steps_that_read_them(inputs):
    """e^x is read only by the SFP product: its step keeps the values decoded and stores no
    bits. e^x * y is read by the PT as A (decoded) and by a DMA store (as bits): its step
    keeps both. The PT takes A from the kept values; every result as the cooperative run's."""
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_load %b[0, strides = [1]] -> lx [64, strides = [1]] sizes [64] : {T}
    spyre_isa.sfp_exp lx [0, strides = [1]] -> lx [128, strides = [1]] sizes [64]
    spyre_isa.sfp_mul lx [128, strides = [1]], lx [64, strides = [1]] -> lx [192, strides = [1]] sizes [64]
    spyre_isa.pt_matmul lx [192, strides = [1, 64]], lx [64, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64
    spyre_isa.sfp_copy lx [256, strides = [2], f32] -> lx [512, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [512, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_store lx [192, strides = [1]] -> %c[64, strides = [1]] sizes [64] : {T}
  }}
}}"""
    got, (plan,) = same_bits(prog, LAUNCH, inputs)
    steps = {getattr(s, "function", type(s).__name__): s for s, _ in plan.batched.steps}
    assert steps["exp"].kept_write is not None and not steps["exp"].writes_bits
    assert steps["mul"].kept_write is not None and steps["mul"].writes_bits
    assert steps["mul"].kept_reads[0] is not None and steps["mul"].kept_reads[1] is None  # y: a load's bits
    assert steps["GemmStep"].a_kept
    assert steps["copy"].kept_write is None  # from fp32 sums: read by the store as bits
    for out, (x, y) in zip(got, inputs):
        x, y = DL16.round(x[:, :64]), DL16.round(y[:, :64])
        a = DL16.round(DL16.round(np.exp(x)) * y)
        assert np.array_equal(out[:, 64:], a)
        want = DL16.round(a @ y)
        assert np.max(np.abs(out[:, :64] - want)) <= 2 * DL16.unit_roundoff * np.max(np.abs(want))


@pytest.mark.parametrize("first_sums_read", [False, True])
def test_the_k_passes_of_an_output_tile_are_one_step(inputs, first_sums_read):
    """x @ y as two k passes, the second accumulating onto the first's sums: one ChainStep,
    whose sums between the passes never reach LX, with the bits of the passes one after the
    other. When something else reads the first pass's sums, they stay two products."""
    also = f"""
    spyre_isa.sfp_copy lx [256, strides = [2], f32] -> lx [640, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [640, strides = [1]] -> %c[64, strides = [1]] sizes [64] : {T}"""
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [128] : {T}
    spyre_isa.dma_load %b[0, strides = [1]] -> lx [128, strides = [1]] sizes [128] : {T}
    spyre_isa.pt_matmul lx [0, strides = [1, 64]], lx [128, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64{also if first_sums_read else ""}
    spyre_isa.pt_matmul lx [64, strides = [1, 64]], lx [192, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64 accumulate
    spyre_isa.sfp_copy lx [256, strides = [2], f32] -> lx [512, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [512, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
  }}
}}"""
    got, (plan,) = same_bits(prog, LAUNCH, inputs)
    products = [s for s, _ in plan.batched.steps if isinstance(s, (GemmStep, ChainStep))]
    if first_sums_read:
        assert [type(s) for s in products] == [GemmStep, GemmStep]
    else:
        assert [type(s) for s in products] == [ChainStep] and len(products[0].links) == 2
    for out, (x, y) in zip(got, inputs):
        x, y = DL16.round(x), DL16.round(y)
        want = DL16.round(x[:, :64] @ y[:, :64] + x[:, 64:] @ y[:, 64:])
        # two DL16 roundings (the result's, want's); the fp32 sums' error is far below them
        assert np.max(np.abs(out[:, :64] - want)) <= 2 * DL16.unit_roundoff * np.max(np.abs(want))
