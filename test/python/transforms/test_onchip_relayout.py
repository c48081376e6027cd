"""spyre-onchip-relayout: a transpose between pointwise kernels done in LX (and over the ring)
gives the same bits as torch, touches no DDR, and a value left in LX is only read by the
launch it was left for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from xdsl.parser import Parser

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.report.sweep import load_bench
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_onchip_relayout import SpyreOnchipRelayoutPass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

LIT_INPUT = Path(__file__).parents[2] / "filecheck" / "transforms" / "spyre-onchip-relayout.mlir"


def exact_values(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """f16 values with at most 9 significant bits: DL16 holds them exactly (docs/numerics.md),
    so relu and the relayout must reproduce them bit for bit."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-512, 512, shape, generator=g) / 64).to(torch.float16)


def relayout_graph(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """c also feeds a matmul (generic layout), so the transpose must happen on the device."""
    c = torch.relu(torch.relu(x).t())
    return c, c @ w


@pytest.mark.parametrize("shape", [(256, 100), (640, 192), (64, 65), (128, 300)])
def test_transpose_between_pointwise_kernels_is_exact_and_skips_ddr(shape):
    x = exact_values(shape, 0)
    w = exact_values((shape[0], 64), 2)
    torch._dynamo.reset()
    dev = get_device_model(DeviceConfig())
    start = len(dev.profile.kernels)
    with torch.no_grad():
        out, _ = torch.compile(relayout_graph, backend="spyre")(x, w)
    kernels = dev.profile.kernels[start:]
    assert torch.equal(out, relayout_graph(x, w)[0])
    assert len(kernels) == 4  # relu, relayout, relu, matmul
    producer, relayout, consumer, _ = kernels
    assert producer.ddr_write_bytes == 0 and consumer.ddr_read_bytes == 0
    assert relayout.ddr_read_bytes == relayout.ddr_write_bytes == 0
    assert relayout.engine_cycles.get("sfp", 0) > 0


def test_a_larger_lx_keeps_the_relayout_on_chip():
    """With 4 MiB of LX per core the pass plans its areas above 2 MiB (its budget is the
    device's): the lowering checks them against the device's LX, not the default's (it once
    refused its own mark, and the graph ran on the CPU)."""
    x, w = exact_values((256, 100), 0), exact_values((256, 64), 2)
    lx = 4 * 1024 * 1024
    torch._dynamo.reset()
    dev = get_device_model(DeviceConfig(lx_bytes=lx))
    start = len(dev.profile.kernels)
    with torch.no_grad():
        out, _ = torch.compile(relayout_graph, backend="spyre", options={"lx_bytes": lx, "strict": True})(x, w)
    kernels = dev.profile.kernels[start:]
    assert torch.equal(out, relayout_graph(x, w)[0])
    assert len(kernels) == 4
    assert kernels[1].ddr_read_bytes == kernels[1].ddr_write_bytes == 0


def _lowered(align_consumer: bool, cores: int = 4):
    ctx = make_tool_context()
    module = Parser(ctx, LIT_INPUT.read_text()).parse_module()
    spyre.set_module_target(module, DeviceConfig(cores=cores))
    for p in (
        SpyreDivideWorkPass(),
        SpyreOnchipRelayoutPass(align_consumer=align_consumer),
        SpyrePlanScratchpadPass(),
        ConvertSpyreToIsaPass(),
    ):
        p.apply(ctx, module)
    return ctx, module


@pytest.mark.parametrize("align_consumer", [True, False])
def test_relayout_over_the_ring_is_exact(align_consumer):
    ctx, module = _lowered(align_consumer)
    model = DeviceModel(DeviceConfig(cores=4))  # sanitizer on: ring writes ordered by the barrier
    x = exact_values((256, 100), 1).numpy()
    (out,) = Executable(module, ctx, model, "between_pointwise")(x)
    np.testing.assert_array_equal(np.asarray(out), np.maximum(x, 0).T)
    relayout = next(k for k in model.profile.kernels if k.name == "t_k1")
    assert relayout.ddr_read_bytes == relayout.ddr_write_bytes == 0
    # aligned: every block stays on its core; not aligned: 3/4 of the tensor crosses the ring
    assert (relayout.ring_bytes == 0) == align_consumer
    if not align_consumer:
        assert relayout.ring_bytes == 3 * (100 * 4 * 128) // 4  # each core keeps 1/4 of its block, sends 3/4


def test_a_resident_value_is_read_only_after_the_launch_that_left_it():
    ctx, module = _lowered(True)
    programs = {p.sym_name.data: p for p in module.walk() if isinstance(p, spyre_isa.ProgramOp)}
    model = DeviceModel(DeviceConfig(cores=4))
    consumer = programs["t_k2"]
    dummy = model.memory.allocate(model.plan(consumer).arg_layouts[0], "in0")
    with pytest.raises(
        DeviceError,
        match=r"kernel t_k2 reads LX bytes \[\d+, \d+\) as a value an earlier launch left there, but no earlier launch did",
    ):
        model.launch(consumer, [dummy])


def test_bench_relayout_all_to_all_path_on_a_small_graph():
    """bench/relayout.py's all-to-all path re-plans the pipeline's dump after spyre-divide-work
    (found by its stage name, whatever its number) with align_consumer=false: on a small graph
    the relayout crosses the ring and the result equals eager's, bit for bit."""
    bench = load_bench("relayout")
    x = exact_values((256, 128), 2)
    w = exact_values((256, 64), 3)
    torch._dynamo.reset()
    kernels, out = bench._all_to_all(x, w)
    relayout = bench._restickify_kernel(kernels)
    assert relayout.ring_bytes > 0 and relayout.ddr_read_bytes == relayout.ddr_write_bytes == 0
    np.testing.assert_array_equal(out, torch.relu(torch.relu(x).t()).numpy())
