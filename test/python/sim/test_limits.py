"""Requests the device cannot serve fail cleanly: a clear message naming the cause (or, under
torch.compile, the graph on the CPU with a warning saying why), before any large host
allocation, and the process stays usable: a normal compile afterwards runs on the device.

    tensor larger than usable DDR     compile time: spyre-pipeline's check (pipeline.check_ddr_sizes);
                                      run time: DeviceMemory.check_room, before the plan's arrays
    kernel whose tile cannot fit LX   spyre-plan-scratchpad
    loop count beyond the format      the spyre_isa verifiers (MAX_LOOP_COUNT); DeviceConfig.validate
    unsupported dtypes                complex and f64: the CPU fallback, with the dtype;
                                      int64 indices beyond any table: the gather, naming the index
"""

import resource
import warnings

import numpy as np
import pytest
import torch
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.dialects.torch import make_context
from spyre_mlir.frontend.backend import STATS, get_device_model
from spyre_mlir.layout import Layout
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.memory import DeviceError, DeviceMemory
from spyre_mlir.target.config import DeviceConfig


def compiled(fn, *args, **options):
    """Run fn under torch.compile(backend="spyre"); (result, spyre warnings)."""
    torch._dynamo.reset()
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        y = torch.compile(fn, backend="spyre", options=options or None)(*args)
    return y, [str(w.message) for w in caught if str(w.message).startswith("spyre:")]


def assert_process_still_compiles() -> None:
    """A normal graph afterwards compiles and runs wholly on the device."""
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1))
    before = len(STATS.graphs)
    y, warned = compiled(lambda v: torch.relu(v) * 2.0, x)
    assert not warned and len(STATS.graphs) == before + 1 and not STATS.graphs[-1].cpu_fallback
    assert torch.allclose(y, torch.relu(x) * 2.0, rtol=2**-9)


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# region DDR


def test_tensor_larger_than_usable_ddr_runs_on_the_cpu_with_the_reason():
    x = torch.randn(1024, 1024, generator=torch.Generator().manual_seed(0))
    fallbacks = STATS.fallbacks
    y, warned = compiled(lambda v: v * 2.0, x, ddr_usable_bytes=1 << 20)
    assert len(warned) == 1, warned
    # the refused kernel's torch op runs on the CPU, the rest of the graph on the device
    assert "1 op(s) of this graph run on the CPU: torch.aten.mul.Scalar x1" in warned[0]
    assert "'torch.aten.mul.Scalar': a device kernel it becomes is refused" in warned[0]
    assert "tensor<1024x1024xf16" in warned[0]
    assert (
        "needs 2097152 bytes of DDR, more than the 1048576 bytes the device may allocate (ddr_usable_bytes)"
        in warned[0]
    )
    assert STATS.fallbacks == fallbacks + 1
    assert torch.equal(y, x * 2.0)  # eager, on the CPU
    assert_process_still_compiles()


def test_tensor_larger_than_usable_ddr_in_strict_mode_raises():
    with pytest.raises(
        Exception, match=r"spyre \(strict\): 'spyre.to_device': its result .* needs 2097152 bytes of DDR"
    ):
        compiled(lambda v: v * 2.0, torch.randn(1024, 1024), ddr_usable_bytes=1 << 20, strict=True)
    assert_process_still_compiles()


def test_allocation_beyond_ddr_is_refused_before_host_memory_is_taken():
    """128 GiB in DL16 (2^36 elements): refused by arithmetic on the layout; the host's peak
    memory does not move and the allocator's books are unchanged."""
    memory = DeviceMemory(DeviceConfig(cores=1))
    peak = peak_rss_bytes()
    with pytest.raises(
        DeviceError,
        match=r"DDR exhausted: huge of shape \(262144, 262144\) needs 137438953472 bytes, 120259084288 of 120259084288 usable bytes are free",
    ):
        memory.allocate(Layout.generic((262144, 262144), 2), "huge")
    assert memory.ddr_used == 0
    assert peak_rss_bytes() - peak < 64 << 20


def test_launch_whose_outputs_exceed_free_ddr_fails_before_planning():
    """A program's outputs are checked against the free DDR before its instruction plans (host
    arrays as large as its DMAs) are built; the device model stays usable."""
    text = """
spyre_isa.program @p(%a: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>,
                     %b: tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>) inputs 1 {
  spyre_isa.stream cores [0] {
    spyre_isa.dma_load %a[0, strides = [1]] -> lx [0, strides = [1]] sizes [16] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
    spyre_isa.dma_store lx [0, strides = [1]] -> %b[0, strides = [1]] sizes [16] : tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>
  }
}
"""
    module = Parser(make_context(), text).parse_module()
    prog = next(op for op in module.ops if isinstance(op, spyre_isa.ProgramOp))
    model = DeviceModel(DeviceConfig(cores=1, ddr_usable_bytes=2 * 2048))
    a = model.memory.to_device(np.ones((4, 256), np.float32), Layout.generic((4, 256), 2))
    filler = model.memory.allocate(Layout.generic((4, 256), 2), "filler")
    with pytest.raises(
        DeviceError,
        match=r"DDR exhausted: p.out0 of shape \(4, 256\) needs 2048 bytes, 0 of 4096 usable bytes are free",
    ):
        model.launch(prog, [a])
    assert prog not in model._plans  # refused before planning
    model.memory.free(filler)
    (out,) = model.launch(prog, [a])
    assert np.array_equal(model.memory.from_device(out), np.ones((4, 256), np.float32))


def test_a_call_frees_each_intermediate_after_its_last_use():
    """Eight unfused launches in a chain, on a device whose DDR holds three of their tensors:
    each intermediate is freed once no later launch reads it (held to the end of the call, the
    chain would need nine), and the call leaves no DDR allocated."""
    x = torch.randn(64, 1024, generator=torch.Generator().manual_seed(3))

    def chain(x):
        for f in (torch.relu, torch.tanh, torch.sigmoid, torch.neg, torch.exp, torch.tanh, torch.neg, torch.sigmoid):
            x = f(x)
        return x

    tensor_bytes = 64 * 1024 * 2
    options = {"ddr_usable_bytes": 3 * tensor_bytes, "disable": ["pointwise_chains"], "strict": True}
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CPU fallback: every op runs on the device
        got = torch.compile(chain, backend="spyre", options=options)(x)
    device = get_device_model(DeviceConfig(ddr_usable_bytes=3 * tensor_bytes))
    assert len(device.profile.kernels) >= 8
    assert device.memory.ddr_used == 0
    assert torch.allclose(got, chain(x), atol=0.02)


# endregion
# region LX


def test_kernel_whose_smallest_tile_exceeds_lx_runs_on_the_cpu_with_the_reason():
    a = torch.randn(256, 256, generator=torch.Generator().manual_seed(2))
    b = torch.randn(256, 256, generator=torch.Generator().manual_seed(3))
    y, warned = compiled(torch.mm, a, b, lx_bytes=4096)
    assert len(warned) == 1, warned
    assert "1 op(s) of this graph run on the CPU: torch.aten.mm x1" in warned[0]
    assert "'torch.aten.mm': a device kernel it becomes is refused" in warned[0]
    assert (
        "its smallest chunk needs 8704 bytes of LX per core, the planner's budget is 3200 ('spyre.matmul' producing tensor<256x256xf16"
        in warned[0]
    )
    assert "and no dim can be chunked further" in warned[0]
    assert torch.equal(y, a @ b)
    with pytest.raises(
        Exception, match=r"spyre \(strict\): kernel g\d+_k0: its smallest chunk needs 8704 bytes of LX per core"
    ):
        compiled(torch.mm, a, b, lx_bytes=4096, strict=True)
    assert_process_still_compiles()


# endregion
# region Instruction format


def test_loop_count_beyond_the_instruction_format_is_a_verifier_error():
    layout = "tensor<4x256xf16, #spyre.layout<device_size = [4, 4, 64], stride_map = [64, 256, 1]>>"
    for body, message in [
        (
            f"spyre_isa.dma_load %a[0, strides = [0]] -> lx [0, strides = [0]] sizes [70000] : {layout}",
            r"'spyre_isa.dma_load': loop size 70000 \(dim 0 of \[70000\]\) exceeds the instruction format: its 16-bit count fields hold at most 65535",
        ),
        (
            "spyre_isa.pt_matmul lx [0, strides = [1, 1]], lx [4, strides = [1, 256]] -> lx [1100, strides = [2, 2], f32] m = 70000 n = 64 k = 256",
            r"'spyre_isa.pt_matmul': m = 70000 exceeds the instruction format",
        ),
    ]:
        text = (
            f"spyre_isa.program @p(%a: {layout}) inputs 1 {{\n  spyre_isa.stream cores [0] {{\n    {body}\n  }}\n}}\n"
        )
        module = Parser(make_context(), text).parse_module()
        with pytest.raises(VerifyException, match=message):
            module.verify()


def test_lx_larger_than_the_loop_fields_can_walk_is_refused():
    with pytest.raises(
        ValueError,
        match=r"lx_bytes = 1073741824: 8388608 sticks of LX, more than the instruction format's 16-bit loop counts can walk \(65536 sticks = 8388608 bytes\)",
    ):
        DeviceConfig(lx_bytes=1 << 30).validate()
    with pytest.raises(Exception, match=r"more than the instruction format's 16-bit loop counts can walk"):
        compiled(lambda v: v + 1.0, torch.randn(4, 64), lx_bytes=1 << 30)
    assert_process_still_compiles()


# endregion
# region Dtypes


def test_complex_tensors_run_on_the_cpu_naming_the_dtype():
    x = torch.randn(4, 64, dtype=torch.complex64, generator=torch.Generator().manual_seed(4))
    y, warned = compiled(lambda v: v * 2.0, x)
    assert (
        len(warned) == 1
        and "op(s) of this graph run on the CPU" in warned[0]
        and "complex<f32>" in warned[0]
        and "the card has no complex format" in warned[0]
    ), warned
    assert torch.equal(y, x * 2.0)
    with pytest.raises(Exception, match=r"the card has no complex format"):
        compiled(lambda v: v * 2.0, x, strict=True)
    assert_process_still_compiles()


def test_f64_ops_run_on_the_cpu_with_the_dtype_in_the_warning():
    """f64 is float data the device cannot take (not an integer/boolean op on the host by
    design): a CPU fallback, and the warning says why."""
    x = torch.randn(4, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    before = len(STATS.graphs)
    y, warned = compiled(lambda v: v * 2.0, x)
    assert len(warned) == 1, warned
    assert (
        "run on the CPU: torch.aten.mul.Scalar x1; 'torch.aten.mul.Scalar': dtype f64 of !torch.vtensor<[4,64],f64>"
        in warned[0]
    )
    assert STATS.graphs[before].cpu_fallback == {"torch.aten.mul.Scalar": 1} and not STATS.graphs[before].host_by_design
    assert torch.equal(y, x * 2.0) and y.dtype == torch.float64
    assert_process_still_compiles()


@pytest.mark.parametrize("index", [2**31, 2**40, -(2**33)])
def test_int64_indices_beyond_any_table_are_refused_naming_the_index(index):
    torch._dynamo.reset()
    emb = torch.nn.Embedding(10, 64).eval()
    device = get_device_model()
    used = device.memory.ddr_used
    with torch.no_grad(), pytest.raises(Exception, match=rf"index {index} is out of range for a table of 10 rows"):
        torch.compile(emb, backend="spyre")(torch.tensor([[1, index]]))
    assert (
        device.memory.ddr_used <= used + emb.weight.numel() * 2 + 4096
    )  # transients freed (the table may stay resident)
    assert_process_still_compiles()


# endregion
