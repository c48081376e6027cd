"""Scaling laws of the discrete-event cost model (never wall-clock time)."""

import pytest
from isa_programs import run_program, tensor_type

from spyre_mlir.target.config import DeviceConfig

CFG = DeviceConfig()


def cycles(body, shapes, out_shape, config=CFG):
    _, model = run_program(body, shapes, out_shape, config)
    return model.profile.kernels[-1]


def load_program(rows: int, cores: int) -> tuple[str, list[tuple[int, int]]]:
    """Each of `cores` cores loads `rows` sticks of its own slice and stores one stick back."""
    t = tensor_type(rows * cores, 64)
    bases = ", ".join(str(rows * c) for c in range(cores)) if cores > 1 else "0"
    table = f"[{bases}]" if cores > 1 else bases
    body = (
        f"""  spyre_isa.stream cores [0 to {cores - 1}] {{
    spyre_isa.dma_load %a[{table}, strides = [1]] -> lx [0, strides = [1]] sizes [{rows}] : {t}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[{table}, strides = [1]] sizes [1] : {t}
  }}"""
        if cores > 1
        else f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [{rows}] : {t}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[0, strides = [1]] sizes [1] : {t}
  }}"""
    )
    return body, [(rows * cores, 64)]


def test_twice_the_bytes_twice_the_dma_time():
    small = cycles(*load_program(2048, 1), (2048, 64))
    large = cycles(*load_program(4096, 1), (4096, 64))
    fixed = 2 * CFG.ddr_latency_cycles + 128 / CFG.lx_port_bytes_per_cycle  # two latencies + the stored stick
    assert (large.cycles - fixed) == pytest.approx(2 * (small.cycles - fixed), rel=1e-6)
    # one core moves at its LX port's rate (128 B/cycle), below the shared DDR's
    assert small.cycles - fixed == pytest.approx(2048 * 128 / CFG.lx_port_bytes_per_cycle, rel=1e-6)


def test_ddr_bandwidth_is_shared_by_the_cores_moving_data():
    per_core = 1024
    t1 = cycles(*load_program(per_core, 1), (per_core, 64)).cycles
    t8 = cycles(*load_program(per_core, 8), (per_core * 8, 64)).cycles
    t32 = cycles(*load_program(per_core, 32), (per_core * 32, 64)).cycles
    ddr_per_cycle = CFG.ddr_bytes_per_s / CFG.clock_hz
    # 8 and 32 cores each get an equal share of DDR: the transfer takes 8x / 32x the bytes at DDR speed
    assert t8 - CFG.ddr_latency_cycles * 2 == pytest.approx(
        8 * per_core * 128 / ddr_per_cycle + 8 * 128 / ddr_per_cycle, rel=1e-3
    )
    latency = 2 * CFG.ddr_latency_cycles
    assert (t32 - latency) / (t8 - latency) == pytest.approx(4, rel=1e-3)
    assert t1 < t8 < t32


def sfp_program(vectors_per_core: int, cores: int, repeat: int) -> tuple[str, list[tuple[int, int]]]:
    t = tensor_type(vectors_per_core * cores, 64)
    bases = (
        f"[0 step {vectors_per_core} x {cores}]" if cores > 2 else (f"[0, {vectors_per_core}]" if cores == 2 else "0")
    )
    ops = "\n".join(
        f"    spyre_isa.sfp_exp lx [0, strides = [1]] -> lx [0, strides = [1]] sizes [{vectors_per_core}]"
        for _ in range(repeat)
    )
    body = f"""  spyre_isa.stream cores [0 to {cores - 1}] {{
    spyre_isa.dma_load %a[{bases}, strides = [1]] -> lx [0, strides = [1]] sizes [{vectors_per_core}] : {t}
{ops}
    spyre_isa.dma_store lx [0, strides = [1]] -> %out[{bases}, strides = [1]] sizes [{vectors_per_core}] : {t}
  }}"""
    return body, [(vectors_per_core * cores, 64)]


def test_compute_bound_kernel_on_twice_the_cores_takes_half_the_time():
    one = cycles(*sfp_program(256, 1, 64), (256, 64))
    two = cycles(*sfp_program(128, 2, 64), (256, 64))
    assert one.bottleneck == two.bottleneck == "sfp"
    # the SFP work per core halves exactly; the DMA in and out (DDR-shared) does not
    assert two.engine_cycles["sfp"] == pytest.approx(one.engine_cycles["sfp"])  # same total over 2 cores
    assert two.cycles == pytest.approx(one.cycles / 2, rel=0.05)


def overlap_program(dependent: bool) -> str:
    t = tensor_type(2048, 64)
    src = 4096 if dependent else 0
    return f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [1024] : {t}
    spyre_isa.dma_load %a[1024, strides = [1]] -> lx [4096, strides = [1]] sizes [1024] : {t}
    spyre_isa.sfp_exp lx [{src}, strides = [1]] -> lx [8192, strides = [1]] sizes [1024]
    spyre_isa.dma_store lx [8192, strides = [1]] -> %out[0, strides = [1]] sizes [1] : {t}
  }}"""


def test_dma_and_compute_overlap_when_the_program_lets_them():
    overlapped = cycles(overlap_program(False), [(2048, 64)], (2048, 64))
    serial = cycles(overlap_program(True), [(2048, 64)], (2048, 64))
    dma = 150 + 1024 * 128 / CFG.lx_port_bytes_per_cycle
    sfp = 1024 * CFG.sfp_transcendental_factor
    # the exp on the first tile runs while the second tile streams in ...
    assert overlapped.cycles < serial.cycles
    assert overlapped.cycles <= 2 * dma + sfp
    # ... but the exp reading the second tile waits for it (read after write)
    spans = {s.name: s for s in serial.spans if s.name != "spyre_isa.dma_store"}
    second_load = max((s for s in serial.spans if s.name == "spyre_isa.dma_load"), key=lambda s: s.end)
    assert spans["spyre_isa.sfp_exp"].start >= second_load.end


def test_ring_cost_grows_per_hop_and_per_byte():
    t = tensor_type(32 * 64, 64)

    def ring(shift: int, sticks: int) -> float:
        body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [{sticks}] : {t}
    spyre_isa.ring_send lx [0, strides = [1]] -> core + {shift} lx [0, strides = [1]] sizes [{sticks}]
  }}"""
        k = cycles(body, [(32 * 64, 64)], (32 * 64, 64))
        return next(s.end - s.start for s in k.spans if s.engine == "ring")

    assert ring(3, 64) - ring(1, 64) == pytest.approx(2 * CFG.ring_hop_latency_cycles)
    assert ring(31, 64) == ring(1, 64)  # the ring is bidirectional: one hop the other way
    assert ring(1, 128) - ring(1, 64) == pytest.approx(64 * 128 / CFG.ring_bytes_per_cycle)


def test_pt_passes_follow_the_array_shape():
    t = tensor_type(256, 128)
    body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [512] : {t}
    spyre_isa.pt_matmul lx [0, strides = [1, 256]], lx [0, strides = [1, 0]] -> lx [1024, strides = [2, 0], f32] m = 16 n = 64 k = 128
  }}"""
    k = cycles(body, [(256, 128)], (256, 128))
    pt = next(s for s in k.spans if s.engine == "pt")
    assert pt.end - pt.start == pytest.approx(2 * 1 * 128)  # ceil(16/8) x ceil(64/64) x k
    assert k.macs == 16 * 64 * 128


def test_cores_waiting_for_one_token_take_it_lowest_numbered_first():
    """timing.py: at any moment the cores are considered in ascending order, so of two cores
    waiting for one token the lower-numbered takes the first signal (with the other order,
    core 1 would start at 100 and core 0 at 150)."""
    from spyre_mlir.sim.timing import Work, simulate

    def waiter() -> list[Work]:
        return [Work(0, "spyre_isa.wait", None, sync=("wait", 7, 1)), Work(1, "spyre_isa.sfp_exp", "sfp", compute=10.0)]

    signaller = [
        Work(0, "spyre_isa.sfp_exp", "sfp", compute=100.0),
        Work(1, "spyre_isa.signal", None, sync=("signal", 7)),
        Work(2, "spyre_isa.sfp_exp", "sfp", compute=50.0),
        Work(3, "spyre_isa.signal", None, sync=("signal", 7)),
    ]
    for order in ([0, 1, 2], [2, 1, 0]):  # the dict's order does not matter
        programs = {c: (signaller if c == 2 else waiter()) for c in order}
        tl = simulate(programs, CFG)
        start = {s.core: s.start for s in tl.spans if s.core != 2}
        assert start == {0: 100.0, 1: 150.0}
        assert tl.cycles == 160.0


def test_a_dma_engine_pays_the_latency_once_for_transfers_back_to_back():
    """Two loads in a row on one core: with a queue (dma_queue_depth = 2) the second's latency
    runs while the first streams, and the engine streams them in order; without one, each
    waits out its latency alone."""
    t = tensor_type(2048, 64)
    body = f"""  spyre_isa.stream cores [0] {{
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [1024] : {t}
    spyre_isa.dma_load %a[1024, strides = [1]] -> lx [1024, strides = [1]] sizes [1024] : {t}
  }}"""
    stream = 1024 * 128 / CFG.lx_port_bytes_per_cycle  # one load's bytes at the core's port rate
    lat = CFG.ddr_latency_cycles
    queued = cycles(body, [(2048, 64)], (1, 64))
    alone = cycles(body, [(2048, 64)], (1, 64), CFG.replace(dma_queue_depth=1))
    assert queued.cycles == pytest.approx(lat + 2 * stream, rel=1e-6)
    assert alone.cycles == pytest.approx(2 * (lat + stream), rel=1e-6)
    first, second = sorted((s for s in queued.spans if s.engine == "dma_in"), key=lambda s: s.start)
    assert first.end == pytest.approx(lat + stream, rel=1e-6)  # in order: not slowed by the second
    assert queued.engine_cycles["dma_in"] == pytest.approx(queued.cycles, rel=1e-6)  # busy once, not twice


# region Early loads (DeviceConfig.early_loads)


def _load_then_pass():
    """One core: a load of 1024 sticks from argument 1 into LX, then a PT pass reading it."""
    from spyre_mlir.sim import timing

    load = timing.Work(
        0,
        "spyre_isa.dma_load",
        "dma_in",
        latency=CFG.ddr_latency_cycles,
        port=1024 * 128,
        ddr=1024 * 128,
        writes=((0, 1024),),
        ddr_reads=((1 << 40, (1 << 40) + 1024),),
    )
    product = timing.Work(1, "spyre_isa.pt_matmul", "pt", compute=500, reads=((0, 1024),), writes=((2000, 2016),))
    return {0: [load, product]}


def test_early_loads_start_before_the_barrier_and_nothing_else_does():
    from spyre_mlir.sim import timing

    programs = _load_then_pass()
    lat = CFG.ddr_latency_cycles
    base = timing.simulate(programs, CFG)
    assert base.cycles == pytest.approx(lat + 1024 + 500)  # the load at the port's 128 B/cycle
    early = timing.simulate(programs, CFG, timing.Early({0: (1, -300.0)}))
    assert early.cycles == pytest.approx(base.cycles - 300)  # its first 300 cycles before the barrier
    assert min(s.start for s in early.spans if s.engine == "pt") >= 0  # the pass is not released
    # a core not released, or released for none of its instructions, waits for the barrier
    assert timing.simulate(programs, CFG, timing.Early({1: (1, -300.0)})).cycles == base.cycles
    assert timing.simulate(programs, CFG, timing.Early({0: (0, -300.0)})).cycles == base.cycles


def test_early_loads_share_the_ddr_the_kernel_before_leaves():
    from spyre_mlir.sim import timing

    programs = _load_then_pass()
    base = timing.simulate(programs, CFG).cycles
    whole = timing.simulate(programs, CFG, timing.Early({0: (1, -600.0)})).cycles
    half = timing.simulate(programs, CFG, timing.Early({0: (1, -600.0)}, ddr_shares=((-600.0, 0.5),))).cycles
    none = timing.simulate(programs, CFG, timing.Early({0: (1, -600.0)}, ddr_shares=((-600.0, 0.0),))).cycles
    # before the barrier: 450 cycles of bytes after the latency, at 128 B/cycle (the port's),
    # at half the DDR's 136.5 B/cycle, or not at all (only the latency passes)
    assert whole == pytest.approx(base - 600)
    ddr = CFG.ddr_bytes_per_s / CFG.clock_hz
    assert half == pytest.approx(base - CFG.ddr_latency_cycles - 450 * (ddr / 2) / 128)
    assert none == pytest.approx(base - CFG.ddr_latency_cycles)
    # a share per kernel running before the barrier: none of it, then all of it (a dispatch)
    steps = timing.simulate(programs, CFG, timing.Early({0: (1, -600.0)}, ddr_shares=((-600.0, 0.0), (-300.0, 1.0))))
    assert steps.cycles == pytest.approx(base - CFG.ddr_latency_cycles - 300)


def test_early_loads_is_a_count_of_kernels():
    assert CFG.early_loads == 4
    with pytest.raises(ValueError, match="early_loads must be an int >= 0"):
        CFG.replace(early_loads=-1).validate()
    with pytest.raises(ValueError, match="early_loads must be int, got True"):
        CFG.replace(early_loads=True).validate()


def _on_device(fn, *args, early: int):
    """fn compiled for a device with `early_loads=early`, called once: its output and launches."""
    import torch

    from spyre_mlir.frontend.backend import get_device_model

    torch._dynamo.reset()
    device = get_device_model(CFG.replace(early_loads=early))
    before = len(device.profile.kernels)
    with torch.no_grad():
        y = torch.compile(fn, backend="spyre", options={"early_loads": early, "cache": False})(*args)
    return y, device.profile.kernels[before:]


def test_a_weights_first_tile_loads_during_the_kernel_before():
    """x * 2 (one small kernel), then a matrix-vector product with a resident weight: with early
    loads the product's cores start its weight's first tiles during the small kernel and the
    dispatch, so the product takes less time from its barrier; the same bits either way, the
    small kernel (the sequence's first, started by the host) unchanged. An input sent at each
    call (not read-only on the device) starts nothing early."""
    import torch

    torch.manual_seed(0)
    lin = torch.nn.Linear(1536, 576, bias=False).eval()
    x = torch.randn(1, 1536)
    y_on, (scale_on, product_on) = _on_device(lambda v: lin(v * 2.0), x, early=4)
    y_off, (scale_off, product_off) = _on_device(lambda v: lin(v * 2.0), x, early=0)
    assert torch.equal(y_on, y_off)
    assert scale_on.time_s == scale_off.time_s
    assert product_on.time_s < product_off.time_s
    assert min(s.start for s in product_on.spans) < 0 <= min(s.start for s in product_off.spans)

    def weight_as_input(v, w):
        return (v * 2.0) @ w

    w = lin.weight.detach().T.contiguous()
    _, sent_on = _on_device(weight_as_input, x, w, early=4)
    _, sent_off = _on_device(weight_as_input, x, w, early=0)
    assert [k.time_s for k in sent_on] == [k.time_s for k in sent_off]


# endregion
