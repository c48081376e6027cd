"""The target in the IR (spyre_mlir/dialects/spyre/target.py): `#spyre.target` is DeviceConfig's
IR form, printed and parsed and verified; every pass reads the device from the module; a
device given to torch.compile reaches the planner, and a plan made for it is faster on it."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import compiled_within_bound, seeded_randn
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from spyre_mlir.analysis import cost
from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.pipeline import pipeline_passes, run_pipeline
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_fuse import SpyreFusePass

KERNELS = Path(__file__).parents[2] / "filecheck" / "inputs" / "kernels.mlir"


def printed(op: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


def parsed(text: str) -> ModuleOp:
    return Parser(make_tool_context(), text).parse_module()


def test_the_default_target_prints_bare_and_a_changed_field_alone():
    assert str(spyre.TargetAttr()) == "#spyre.target"
    assert spyre.TargetAttr().config == DeviceConfig()
    attr = spyre.TargetAttr(DeviceConfig(cores=8, ddr_bytes_per_s=128e9, host_op_s=1e-6, sanitize=False))
    assert str(attr) == (
        "#spyre.target<cores = 8, ddr_bytes_per_s = 128000000000.0, host_op_s = 1.0e-06, sanitize = false>"
    )


def _changed(value: object) -> object:
    """A valid value other than the default, of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return {"dl16": "ieee-fp16", "fp32": "f64", "patched-once": "eager-patching"}[value]
    if isinstance(value, int):
        return value + 1
    assert isinstance(value, float)
    return value / 2


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(DeviceConfig)])
def test_every_device_parameter_prints_and_parses_back(field):
    config = DeviceConfig().replace(**{field: _changed(getattr(DeviceConfig(), field))})
    config.validate()
    attr = spyre.TargetAttr(config)
    module = parsed(f"builtin.module attributes {{spyre.target = {attr}}} {{}}")
    assert spyre.module_target(module) == config
    assert printed(module).count(field) == 1


@pytest.mark.parametrize(
    "entry, message",
    [
        ("cores = 0", "a device needs >= 1 core"),
        ("corelets_used = 3", "corelets_used must be 1 .. corelets_per_core"),
        ('numerics = "fp8"', "numerics must be 'dl16' or 'ieee-fp16'"),
        ("lx = 4096", "unknown device parameter 'lx'"),
        ("cores = 2, cores = 4", "device parameter cores given twice"),
        ("cores = 1.5", "Expected integer literal for cores"),
        ("sanitize = 1", "Expected boolean literal for sanitize"),
    ],
)
def test_a_target_no_device_has_is_refused_naming_the_parameter(entry, message):
    with pytest.raises((ParseError, VerifyException), match=message):
        parsed(f"builtin.module attributes {{spyre.target = #spyre.target<{entry}>}} {{}}").verify()


def test_a_module_attribute_that_is_not_a_target_is_refused():
    module = parsed('builtin.module attributes {spyre.target = "cores = 8"} {}')
    with pytest.raises(VerifyException, match="spyre.target must be a #spyre.target"):
        spyre.module_target(module)


def test_a_pass_on_a_module_without_a_target_plans_for_the_default_one_and_says_so():
    ctx = make_tool_context()
    module = Parser(ctx, KERNELS.read_text()).parse_module()
    assert spyre.TARGET_ATTR not in module.attributes
    SpyreFusePass(epilogues=False).apply(ctx, module)
    SpyreDivideWorkPass(strategy="even").apply(ctx, module)
    assert module.attributes[spyre.TARGET_ATTR] == spyre.TargetAttr()
    matmul = next(k for k in module.walk() if isinstance(k, spyre.KernelOp))
    assert matmul.split is not None and matmul.split.as_dict() == {"n": 2, "m": 16, "k": 1}  # 32 cores
    assert "builtin.module attributes {spyre.target = #spyre.target} {" in printed(module)


def test_run_pipeline_attaches_the_device_it_compiles_for():
    ctx = make_tool_context()
    module = Parser(ctx, KERNELS.read_text()).parse_module()
    config = DeviceConfig(cores=4, lx_bytes=1 << 20)
    run_pipeline(ctx, module, config)
    assert spyre.module_target(module) == config
    cores = {c for op in module.walk() if isinstance(op, spyre_isa.StreamOp) for c in op.cores.as_tuple()}
    assert cores == {0, 1, 2, 3}


def matmul_module(m: int, k: int, n: int) -> str:
    a, b, c = (f"!torch.vtensor<[{x},{y}],f32>" for x, y in ((m, k), (k, n), (m, n)))
    return f"""func.func @main(%a: {a}, %b: {b}) -> {c} {{
  %0 = torch.aten.mm %a, %b : {a}, {b} -> {c}
  return %0 : {c}
}}"""


M, K, N = 64, 1024, 2048
FAST_DDR = DeviceConfig(ddr_bytes_per_s=4 * DeviceConfig().ddr_bytes_per_s)
"""A design question: the default device with DDR four times as fast (819.2 GB/s)."""


def planned(config: DeviceConfig):
    """The M x K x N matmul (torch level) through the pipeline up to its plan, for `config`:
    the context, the module and the kernel."""
    ctx = make_tool_context()
    module = Parser(ctx, matmul_module(M, K, N)).parse_module()
    spyre.set_module_target(module, config)
    for p in pipeline_passes():
        if isinstance(p, ConvertSpyreToIsaPass):
            break
        p.apply(ctx, module)
    (kernel,) = [op for op in module.walk() if isinstance(op, spyre.KernelOp)]
    return ctx, module, kernel


def estimated(kernel: spyre.KernelOp, device: DeviceConfig) -> float:
    """analysis/cost.py's estimate of the kernel's plan on `device`."""
    assert kernel.split is not None and kernel.chunks is not None
    chain = kernel.multicast.chain.data if kernel.multicast is not None else 1
    stationary = kernel.lx is not None and "a_block" in kernel.lx.as_dict()
    return cost.matmul_estimate(
        cost.MatmulShape(1, M, K, N),
        kernel.split.as_dict(),
        kernel.chunks.as_dict(),
        device,
        True,
        chain,
        a_stationary=stationary,
    ).seconds


def simulated(ctx, module: ModuleOp, device: DeviceConfig) -> tuple[float, np.ndarray]:
    """The planned module lowered for `device` and run on it: the kernel's simulated seconds
    and the product."""
    spyre.set_module_target(module, device)
    ConvertSpyreToIsaPass().apply(ctx, module)
    model = DeviceModel(device)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    (y,) = Executable(module, ctx, model)(a, b)
    return model.profile.kernels[-1].time_s, np.asarray(y)


def test_a_faster_ddr_changes_the_plan_and_its_plan_is_faster_on_it():
    """The planner sees the DDR bandwidth of the module's target: planned for DDR four times as
    fast, the matmul takes another split (fewer cores per B tile), which the estimate ranks
    faster on that device than the default device's plan, and the device model agrees."""
    ctx_d, module_d, kernel_d = planned(DeviceConfig())
    ctx_f, module_f, kernel_f = planned(FAST_DDR)
    plan = lambda k: (k.split, k.chunks, k.multicast)  # noqa: E731
    assert plan(kernel_d) != plan(kernel_f)
    assert estimated(kernel_f, FAST_DDR) < estimated(kernel_d, FAST_DDR)
    default_s, y_d = simulated(ctx_d, module_d, FAST_DDR)
    fast_s, y_f = simulated(ctx_f, module_f, FAST_DDR)
    assert fast_s < default_s
    assert np.isfinite(y_f).all() and y_f.shape == y_d.shape == (M, N)


def test_a_device_given_to_torch_compile_is_the_one_planned_for():
    """`torch.compile(..., options={"ddr_bytes_per_s": ...})`: the backend compiles for that
    device (the plan made for it, its simulated time) and runs on it."""
    ctx, module, _ = planned(FAST_DDR)
    fast_s, _ = simulated(ctx, module, FAST_DDR)
    dev = get_device_model(FAST_DDR)
    start = len(dev.profile.kernels)
    compiled_within_bound(
        torch.mm, seeded_randn(M, K), seeded_randn(K, N, seed=1), ddr_bytes_per_s=FAST_DDR.ddr_bytes_per_s
    )
    (kernel,) = dev.profile.kernels[start:]
    assert kernel.time_s == pytest.approx(fast_s, rel=1e-9)
