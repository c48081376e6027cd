"""The device model executes hand-written spyre_isa programs with the device's numerics."""

import numpy as np
import pytest
from isa_programs import XY, xy_module

from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.target.config import DeviceConfig

T = XY  # (isa_programs.XY) short in the program texts


def run(programs: str, body: str, inputs, config=DeviceConfig()):
    module, ctx = xy_module(programs, body)
    model = DeviceModel(config)
    (out,) = Executable(module, ctx, model)(*inputs)
    return out, model


def binary_program(op: str, extra: str = "") -> str:
    """Two cores, 64 sticks each: load x and y tiles, combine, store."""
    return f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 64], strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_load %b[[0, 64], strides = [1]] -> lx [64, strides = [1]] sizes [64] : {T}
    {op}
    spyre_isa.dma_store lx [128, strides = [1]] -> %c[[0, 64], strides = [1]] sizes [64] : {T}
  }}
}}"""


LAUNCH = f"  %r = spyre_isa.launch @k(%xd, %yd) : ({T}, {T}) -> {T}"


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    return rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal((64, 128)).astype(np.float32)


@pytest.mark.parametrize("fn, ref", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("max", np.maximum)])
def test_sfp_binary_is_bit_exact(xy, fn, ref):
    x, y = xy
    op = f"spyre_isa.sfp_{fn} lx [0, strides = [1]], lx [64, strides = [1]] -> lx [128, strides = [1]] sizes [64]"
    out, model = run(binary_program(op), LAUNCH, (x, y))
    expect = DL16.round(ref(DL16.round(x), DL16.round(y)))
    assert np.array_equal(out, expect)
    k = model.profile.kernels[0]
    assert k.ddr_read_bytes == 2 * 128 * 128 and k.ddr_write_bytes == 128 * 128 and k.cores == 2


def test_sfp_immediate_and_f32_temporaries(xy):
    x, y = xy
    op = (
        "spyre_isa.sfp_exp lx [0, strides = [1]] -> lx [256, strides = [2], f32] sizes [64]\n"
        "    spyre_isa.sfp_mul lx [256, strides = [2], f32], 2.500000e-01 -> lx [128, strides = [1]] sizes [64]"
    )
    out, _ = run(binary_program(op), LAUNCH, (x, y))
    assert np.array_equal(out, DL16.round(np.exp(DL16.round(x)) * np.float32(0.25)))


def test_pt_matmul_accumulates_in_fp32(xy):
    """C = x[:, :64] @ y[:, :64] + x[:, 64:] @ y[:, 64:] on one core: two PT passes of K = 64,
    the second accumulating into the fp32 partial sums, then one rounding into the output.

    x's sticks are [stick column][row]: A[m, k] = stick m + 64 * (k // 64) (lhs strides [1, 64]);
    B[k, n] = stick k of one stick column of y (rhs strides [1, 0])."""
    x, y = xy
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [128] : {T}
    spyre_isa.dma_load %b[0, strides = [1]] -> lx [128, strides = [1]] sizes [128] : {T}
    spyre_isa.pt_matmul lx [0, strides = [1, 64]], lx [128, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64
    spyre_isa.pt_matmul lx [64, strides = [1, 64]], lx [192, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64 accumulate
    spyre_isa.sfp_copy lx [256, strides = [2], f32] -> lx [512, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [512, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
  }}
}}"""
    out, model = run(prog, LAUNCH, (x, y))
    xr, yr = DL16.round(x), DL16.round(y)
    expect = DL16.round(xr[:, :64] @ yr[:, :64] + xr[:, 64:] @ yr[:, 64:])
    got = out[:, :64]
    assert np.max(np.abs(got - expect)) <= 2 * DL16.unit_roundoff * np.max(np.abs(expect))
    assert model.profile.kernels[0].macs == 2 * 64 * 64 * 64


def test_block_transpose_moves_bits_exactly(xy):
    x, y = xy
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [128] : {T}
    spyre_isa.sfp_transpose lx [0, strides = [64, 1]] -> lx [128, strides = [64, 1]] blocks = 2 rows = 64 cols = 64
    spyre_isa.dma_store lx [128, strides = [1]] -> %c[0, strides = [1]] sizes [128] : {T}
  }}
}}"""
    out, _ = run(prog, LAUNCH, (x, y))
    xr = DL16.round(x)
    assert np.array_equal(out[:, :64], xr[:, :64].T) and np.array_equal(out[:, 64:], xr[:, 64:].T)


def test_signal_and_wait_order_two_streams(xy):
    """Core 1 waits for core 0's result in DDR before it reads it."""
    x, y = xy
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [1] {{
    spyre_isa.wait 7 count 1
    spyre_isa.dma_load %c[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.sfp_neg lx [0, strides = [1]] -> lx [0, strides = [1]] sizes [64]
    spyre_isa.dma_store lx [0, strides = [1]] -> %c[64, strides = [1]] sizes [64] : {T}
  }}
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {T}
    spyre_isa.dma_store lx [0, strides = [1]] -> %c[0, strides = [1]] sizes [64] : {T}
    spyre_isa.signal 7
    spyre_isa.barrier
  }}
}}"""
    with pytest.raises(DeviceError, match="deadlock"):
        run(prog, LAUNCH, (x, y))  # core 1 never reaches the barrier core 0 waits at
    out, _ = run(prog.replace("    spyre_isa.barrier\n", ""), LAUNCH, (x, y))
    xr = DL16.round(x)
    assert np.array_equal(out[:, :64], xr[:, :64])
    assert np.array_equal(out[:, 64:], -xr[:, :64])


def _chain(core0: str, core1: str, core2: str) -> str:
    """Three cores: core 0 loads x's sticks 0..7 and passes them down a chain 0 -> 1 -> 2 over
    the ring; core 2 stores them."""
    return f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [8, 1]] -> lx [0, strides = [8, 1]] sizes [1, 8] : {T}
{core0}
  }}
  spyre_isa.stream cores [1] {{
{core1}
  }}
  spyre_isa.stream cores [2] {{
{core2}
    spyre_isa.dma_store lx [0, strides = [8, 1]] -> %c[0, strides = [8, 1]] sizes [1, 8] : {T}
  }}
}}"""


def test_ring_send_in_pieces_is_its_unrolled_sends_and_waits(xy):
    """`piece 2 after 1 notify 2`: per piece of 2 sticks, wait for one token 1, send, notify 2 —
    the same result and the same simulated time as the four wait/send pairs written out."""
    x, y = xy
    send = "    spyre_isa.ring_send lx [{b}, strides = [8, 1]] -> core + 1 lx [{b}, strides = [8, 1]] sizes [1, {n}]"
    pieces = _chain(
        send.format(b=0, n=8) + " piece 2 notify 1",
        send.format(b=0, n=8) + " piece 2 after 1 notify 2",
        "    spyre_isa.wait 2 count 4",
    )
    unrolled = _chain(
        "\n".join(send.format(b=b, n=2) + " notify 1" for b in range(0, 8, 2)),
        "\n".join(f"    spyre_isa.wait 1 count 1\n{send.format(b=b, n=2)} notify 2" for b in range(0, 8, 2)),
        "\n".join("    spyre_isa.wait 2 count 1" for _ in range(4)),
    )
    out, model = run(pieces, LAUNCH, (x, y))
    ref, ref_model = run(unrolled, LAUNCH, (x, y))
    assert np.array_equal(out[:8, :64], DL16.round(x)[:8, :64])
    assert np.array_equal(out, ref)
    k, r = model.profile.kernels[-1], ref_model.profile.kernels[-1]
    assert k.cycles == r.cycles and k.ring_bytes == r.ring_bytes == 2 * 8 * 128
    assert k.instructions == 5 and r.instructions == 18  # ops x cores, as written


def test_ring_send_in_pieces_waits_piece_by_piece(xy):
    """Core 0 sends its second piece only after core 2 has seen the first: core 1 must pass the
    first piece on before the second arrives (waiting for all pieces first would deadlock)."""
    x, y = xy
    send = "    spyre_isa.ring_send lx [{b}, strides = [8, 1]] -> core + 1 lx [{b}, strides = [8, 1]] sizes [1, {n}]"
    prog = _chain(
        send.format(b=0, n=2)
        + " notify 1\n    spyre_isa.wait 9 count 1\n"
        + send.format(b=2, n=6)
        + " piece 2 notify 1",
        send.format(b=0, n=8) + " piece 2 after 1 notify 2",
        "    spyre_isa.wait 2 count 1\n    spyre_isa.signal 9\n    spyre_isa.wait 2 count 3",
    )
    out, _ = run(prog, LAUNCH, (x, y))
    assert np.array_equal(out[:8, :64], DL16.round(x)[:8, :64])
    # without core 2's signal, core 0 never sends the rest: a deadlock that names the ring send
    with pytest.raises(DeviceError, match=r"deadlock.*cores \[1\] at instruction #0 \(spyre_isa.ring_send\)"):
        run(prog.replace("    spyre_isa.signal 9\n", ""), LAUNCH, (x, y))


def test_a_chain_written_as_one_stream_is_the_chain_written_core_by_core(xy):
    """Cores 1 and 2 of a chain 0 -> 1 -> 2 -> 3 as one stream with per-core tokens (`after
    [1, 2] notify [2, 3]`): each core at its own pace, the same bytes, simulated time and
    instruction count as two streams of one core each."""
    x, y = xy
    send = "    spyre_isa.ring_send lx [0, strides = [8, 1]] -> core + 1 lx [0, strides = [8, 1]] sizes [1, 8] piece 2"

    def chain(middle: str) -> str:
        return f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [8, 1]] -> lx [0, strides = [8, 1]] sizes [1, 8] : {T}
{send} notify 1
  }}
{middle}
  spyre_isa.stream cores [3] {{
    spyre_isa.wait 3 count 4
    spyre_isa.dma_store lx [0, strides = [8, 1]] -> %c[0, strides = [8, 1]] sizes [1, 8] : {T}
  }}
}}"""

    folded = chain(f"  spyre_isa.stream cores [1, 2] {{\n{send} after [1, 2] notify [2, 3]\n  }}")
    apart = chain(
        "\n".join(f"  spyre_isa.stream cores [{c}] {{\n{send} after {c} notify {c + 1}\n  }}" for c in (1, 2))
    )
    out, model = run(folded, LAUNCH, (x, y))
    ref, ref_model = run(apart, LAUNCH, (x, y))
    assert np.array_equal(out[:8, :64], DL16.round(x)[:8, :64])
    assert np.array_equal(out, ref)
    k, r = model.profile.kernels[-1], ref_model.profile.kernels[-1]
    assert (
        (k.cycles, k.ring_bytes, k.instructions)
        == (r.cycles, r.ring_bytes, r.instructions)
        == (r.cycles, 3 * 8 * 128, 6)
    )


def test_cores_of_one_stream_wait_for_each_other(xy):
    """Core 1 waits for a token core 0 of its own stream signals after its own wait: run in
    lockstep (both cores' waits at once) this would deadlock; each core at its own pace it
    does not. Core 2 starts it."""
    x, y = xy
    prog = f"""
spyre_isa.program @k(%a: {T}, %b: {T}, %c: {T}) inputs 2 {{
  spyre_isa.stream cores [0, 1] {{
    spyre_isa.wait [9, 1] count 1
    spyre_isa.signal [1, 8]
  }}
  spyre_isa.stream cores [2] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [128] : {T}
    spyre_isa.dma_store lx [0, strides = [1]] -> %c[0, strides = [1]] sizes [128] : {T}
    spyre_isa.signal 9
    spyre_isa.wait 8 count 1
  }}
}}"""
    out, _ = run(prog, LAUNCH, (x, y))
    assert np.array_equal(out, DL16.round(x))
    # core 0 waiting for core 1's token instead: then both wait for each other
    with pytest.raises(DeviceError, match=r"deadlock.*cores \[0\] at instruction #0 \(spyre_isa.wait\)"):
        run(prog.replace("wait [9, 1]", "wait [8, 1]"), LAUNCH, (x, y))
    # one token for both cores: core 2's one signal lets core 0 through, whose signal lets
    # core 1 through (in lockstep both would wait for two tokens at once)
    relay = prog.replace("wait [9, 1] count 1", "wait 9 count 1").replace("signal [1, 8]", "signal 9")
    out, _ = run(relay.replace("    spyre_isa.wait 8 count 1\n", ""), LAUNCH, (x, y))
    assert np.array_equal(out, DL16.round(x))


def test_out_of_lx_access_is_refused_with_its_location(xy):
    x, y = xy
    op = "spyre_isa.sfp_add lx [0, strides = [1]], lx [64, strides = [1]] -> lx [16380, strides = [1]] sizes [64]"
    with pytest.raises(
        DeviceError,
        match=r"kernel k, instruction #2 \(spyre_isa.sfp_add\), core 0: SFP destination reaches LX bytes up to 2104832",
    ):
        run(binary_program(op), LAUNCH, (x, y))


def test_cost_grows_with_bytes_and_shrinks_with_cores(xy):
    x, y = xy
    op = "spyre_isa.sfp_add lx [0, strides = [1]], lx [64, strides = [1]] -> lx [128, strides = [1]] sizes [64]"
    _, model = run(binary_program(op), LAUNCH, (x, y))
    k = model.profile.kernels[0]
    assert k.time_s > DeviceConfig().launch_overhead_s
    assert set(k.engine_cycles) == {"dma_in", "dma_out", "sfp"}


def test_a_16_bit_copy_moves_the_bits():
    """An SFP copy between 16-bit operands moves its source's bits: for every pattern what
    decoding and encoding it give (a DL16 value, stored again, rounds to itself), and the
    NaN pattern keeps its sign bit (0xFFFF, which a store of a negative NaN writes)."""
    from spyre_mlir.dialects import spyre_isa
    from spyre_mlir.layout import Layout
    from spyre_mlir.sim.numerics import dl16_decode, dl16_encode

    prog_text = binary_program("spyre_isa.sfp_copy lx [0, strides = [1]] -> lx [128, strides = [1]] sizes [64]")
    module, _ = xy_module(prog_text, LAUNCH)
    prog = next(op for op in module.walk() if isinstance(op, spyre_isa.ProgramOp))
    model = DeviceModel()
    layout = Layout.generic((64, 128), 2)
    x, y = (model.memory.to_device(np.zeros((64, 128), np.float32), layout) for _ in range(2))
    rng = np.random.default_rng(0)
    special = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x7FFE, 0xFFFE, 0x7FFF, 0xFFFF], dtype=np.uint16)
    bits = np.concatenate([special, rng.integers(0, 1 << 16, x.data.size // 2 - special.size).astype(np.uint16)])
    x.data[...] = bits.view(np.uint8).reshape(x.data.shape)
    (out,) = model.launch(prog, [x, y])
    got = out.data.view(np.uint16).reshape(-1)
    assert np.array_equal(got, bits)
    kept = bits != 0xFFFF  # the one pattern decoding and encoding do not give back
    assert np.array_equal(got[kept], dl16_encode(dl16_decode(bits))[kept])
    assert dl16_encode(np.float32(-np.nan)) == 0xFFFF


def test_every_instruction_has_the_plan_registered_for_its_class():
    """The device model finds an instruction's execution by its op class (sim/plans/
    `executes`, a family's base class for the whole family): every spyre_isa instruction has
    one, and the SFP functions and reductions are keyed by op class as well."""
    from spyre_mlir.dialects import spyre_isa
    from spyre_mlir.sim import plans

    instructions = [op for op in spyre_isa.SpyreISA.operations if issubclass(op, spyre_isa.IsaInstruction)]
    assert len(instructions) > 20
    assert [op.name for op in instructions if plans.plan_class(op) is None] == []
    assert {op for op in instructions if plans.plan_class(op) is plans.SfpPlan} == set(plans.SFP_FUNCTIONS)
    assert {op for op in instructions if plans.plan_class(op) is plans.ReducePlan} == set(plans.REDUCTIONS)


def test_a_new_instruction_runs_through_the_plan_registered_for_it():
    """Adding an instruction to the device model is one plan class registered for its op
    class; an instruction with none is refused by name."""
    from xdsl.irdl import IRDLOperation, irdl_op_definition

    from spyre_mlir.sim import plans
    from spyre_mlir.target.config import DEFAULT_CONFIG

    @irdl_op_definition
    class MarkOp(IRDLOperation):
        name = "test.mark"

    @irdl_op_definition
    class UnknownOp(IRDLOperation):
        name = "test.unknown"

    ran: list[list[int]] = []

    @plans.executes(MarkOp)
    class MarkPlan(plans.Plan):
        engine = "sfp"

        def run(self, model, args, cores, check=True):
            ran.append(cores.tolist())

    (plan,) = plans.plan_instruction(MarkOp(), "k", 0, [2, 3], DEFAULT_CONFIG)
    assert isinstance(plan, MarkPlan) and plan.where == "kernel k, instruction #0 (test.mark)"
    plan.run(DeviceModel(), [], np.asarray([2, 3]))
    assert ran == [[2, 3]]
    with pytest.raises(DeviceError, match=r"kernel k: the device model cannot execute 'test.unknown'"):
        plans.plan_instruction(UnknownOp(), "k", 0, [0], DEFAULT_CONFIG)


def test_a_freed_executable_takes_its_programs_plans_with_it(xy):
    """A device model outlives the executables that run on it (the backend's is the process's):
    the plans it made for an executable's programs, which hold the programs and so the whole
    module, go when the executable goes, and a later launch of the same program plans again."""
    import gc
    import weakref

    x, y = xy
    op = "spyre_isa.sfp_add lx [0, strides = [1]], lx [64, strides = [1]] -> lx [128, strides = [1]] sizes [64]"
    model = DeviceModel()
    module, ctx = xy_module(binary_program(op), LAUNCH)
    exe = Executable(module, ctx, model)
    (first,) = exe(x, y)
    (again,) = exe(x, y)  # the kept plan: the same result
    assert np.array_equal(first, again)
    assert len(model._plans) == 1
    program = weakref.ref(exe.programs["k"])
    del exe, module, ctx
    while gc.collect():  # the executable's finalizer lets go of the programs; their cycles go next
        pass
    assert program() is None, "the device model still holds the freed executable's program"
    assert len(model._plans) == 0
    module, ctx = xy_module(binary_program(op), LAUNCH)
    exe = Executable(module, ctx, model)
    (fresh,) = exe(x, y)
    assert np.array_equal(fresh, first) and len(model._plans) == 1
