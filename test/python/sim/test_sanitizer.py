"""The sanitizer refuses what the hardware forbids, naming kernel, core, instruction and bytes;
it never fires on the compiler's own output (every end-to-end test runs with it on)."""

import pytest
from isa_programs import run_program, tensor_type

from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.target.config import DeviceConfig

A = tensor_type(64, 128)  # 128 sticks


def test_lx_overflow():
    body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [16380, strides = [1]] sizes [8] : {A}
  }}"""
    with pytest.raises(
        DeviceError,
        match=r"kernel k, instruction #0 \(spyre_isa.dma_load\), core 0: DMA reaches LX bytes up to 2097664 beyond the 2097152-byte scratchpad",
    ):
        run_program(body, [(64, 128)], (64, 128))


def test_dma_outside_the_allocation():
    body = f"""  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 100], strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
  }}"""
    # caught statically by the verifier, from the tensor type of the DMA's operand
    with pytest.raises(Exception, match=r"DDR sticks up to 163 are outside the tensor \(128 sticks"):
        run_program(body, [(64, 128)], (64, 128))


def test_dma_outside_the_allocation_at_run_time():
    """The device model refuses it too, for a program that skipped verification."""
    body = f"""  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 100], strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
  }}"""
    with pytest.raises(
        DeviceError,
        match=r"kernel k, instruction #0 \(spyre_isa.dma_load\), core 1: DMA reaches DDR bytes \[16384, 20992\) outside argument 0, a 16384-byte tensor",
    ):
        run_program(body, [(64, 128)], (64, 128), verify=False)


def test_read_of_lx_never_written_in_this_launch():
    body = f"""  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 64], strides = [1]] -> lx [0, strides = [1]] sizes [32] : {A}
    spyre_isa.sfp_exp lx [0, strides = [1]] -> lx [100, strides = [1]] sizes [40]
    spyre_isa.dma_store lx [100, strides = [1]] -> %out[[0, 64], strides = [1]] sizes [40] : {A}
  }}"""
    with pytest.raises(
        DeviceError,
        match=r"kernel k, instruction #1 \(spyre_isa.sfp_exp\), core 0: reads LX bytes \[4096, 5120\) that no instruction of this launch has written",
    ):
        run_program(body, [(64, 128)], (64, 128))


def test_lx_written_by_an_earlier_launch_does_not_count():
    ok = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [8] : {A}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [8] : {A}
  }}"""
    run_program(ok, [(64, 128)], (64, 128))
    stale = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [8] : {A}
  }}"""
    with pytest.raises(DeviceError, match="no instruction of this launch has written"):
        run_program(stale, [(64, 128)], (64, 128))


def test_two_cores_writing_one_ddr_range_race():
    body = f"""  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 64], strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0, 60], strides = [1]] sizes [64] : {A}
  }}"""
    with pytest.raises(
        DeviceError,
        match=r"instruction #1 \(spyre_isa.dma_store\), cores 0 and 1: both write DDR bytes \[7680, 7808\) of argument 1 \(shape \(64, 128\)\) at once \(a race\)",
    ):
        run_program(body, [(64, 128)], (64, 128))


RACE = """  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [64] : {A}
    {signal}
  }}
  spyre_isa.stream cores [1] {{
    {wait}
    spyre_isa.dma_load %out[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[64, strides = [1]] sizes [64] : {A}
  }}"""


def test_write_then_read_by_another_core_needs_a_sync():
    unsynced = RACE.format(A=A, signal="", wait="")
    with pytest.raises(
        DeviceError,
        match=r"instruction #0 \(spyre_isa.dma_load\), core 1: reads DDR bytes \[0, 128\) of argument 1 \(shape \(64, 128\)\) that core 0 written without a sync between them \(a race\)",
    ):
        run_program(unsynced, [(64, 128)], (64, 128))
    synced = RACE.format(A=A, signal="spyre_isa.signal 3", wait="spyre_isa.wait 3 count 1")
    run_program(synced, [(64, 128)], (64, 128))


def test_read_then_write_by_another_core_needs_a_sync():
    body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [64] : {A}
    spyre_isa.barrier
    spyre_isa.dma_load %out[0, strides = [1]] -> lx [100, strides = [1]] sizes [64] : {A}
  }}
  spyre_isa.stream cores [1] {{
    spyre_isa.dma_load %a[64, strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
    spyre_isa.barrier
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [64] : {A}
  }}"""
    with pytest.raises(
        DeviceError,
        match=r"core 1: writes DDR bytes \[0, 128\) of argument 1 \(shape \(64, 128\)\) that core 0 read without a sync between them",
    ):
        run_program(body, [(64, 128)], (64, 128))


def test_per_core_span_limit():
    body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [100]] -> lx [0, strides = [1]] sizes [2] : {A}
  }}"""
    with pytest.raises(
        DeviceError,
        match=r"core 0: addresses bytes \[0, 12928\) of argument 0 \(shape \(64, 128\)\), a span over the 8192-byte limit for one core in one tensor",
    ):
        run_program(body, [(64, 128)], (64, 128), DeviceConfig(per_core_span_bytes=8192))


def test_deadlock():
    body = """  spyre_isa.stream cores [0] {
    spyre_isa.wait 1 count 1
  }
  spyre_isa.stream cores [1] {
    spyre_isa.wait 2 count 1
    spyre_isa.signal 1
  }"""
    with pytest.raises(
        DeviceError,
        match=r"kernel k: deadlock, every unfinished core is blocked: cores \[0\] at instruction #0 \(spyre_isa.wait\); cores \[1\] at instruction #0 \(spyre_isa.wait\)",
    ):
        run_program(body, [(64, 128)], (64, 128))


def test_sanitizer_can_be_switched_off():
    body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [8] : {A}
  }}"""
    run_program(body, [(64, 128)], (64, 128), DeviceConfig(sanitize=False))


UNWRITTEN = {  # an instruction of each kind reading LX sticks [900, ...) that nothing wrote
    "pt_matmul": "spyre_isa.pt_matmul lx [900, strides = [1, 64]], lx [0, strides = [1, 0]] -> lx [256, strides = [2, 0], f32] m = 64 n = 64 k = 64",
    "sfp_exp": "spyre_isa.sfp_exp lx [900, strides = [1]] -> lx [0, strides = [1]] sizes [8]",
    "sfp_reduce_max": "spyre_isa.sfp_reduce_max lx [900, strides = [1, 4]] -> lx [0, strides = [1, 0]] sizes [4, 4] tail 64",
    "sfp_transpose": "spyre_isa.sfp_transpose lx [900, strides = [64, 1]] -> lx [0, strides = [64, 1]] blocks = 1 rows = 64 cols = 64",
    "ring_send": "spyre_isa.ring_send lx [900, strides = [1]] -> core + 1 lx [0, strides = [1]] sizes [8]",
    "dma_store": f"spyre_isa.dma_store lx [900, strides = [1]] -> %out[[0, 64], strides = [1]] sizes [8] : {A}",
}


@pytest.mark.parametrize("kind", sorted(UNWRITTEN))
@pytest.mark.parametrize("batch", ["1", "0"])
def test_a_first_launch_checks_every_kind_of_instruction(kind, batch, monkeypatch):
    """A first launch runs its checks in the cooperative order without moving data, then runs
    batched (interpreter.ProgramPlan.execute); with SPYRE_BATCH=0 it checks as it moves data.
    Both find the same first fault, for every kind of instruction."""
    from spyre_mlir.sim import interpreter

    monkeypatch.setattr(interpreter, "BATCH", batch == "1")
    body = f"""  spyre_isa.stream cores [0 to 1] {{
    spyre_isa.dma_load %a[[0, 64], strides = [1]] -> lx [0, strides = [1]] sizes [64] : {A}
    {UNWRITTEN[kind]}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[[0, 64], strides = [1]] sizes [8] : {A}
  }}"""
    with pytest.raises(
        DeviceError, match=rf"kernel k, instruction #1 \(spyre_isa.{kind}\), core 0: reads LX bytes \[115200, "
    ):
        run_program(body, [(64, 128)], (64, 128))
