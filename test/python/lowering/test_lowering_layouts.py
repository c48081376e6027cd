"""convert-spyre-to-isa addresses every value through its own layout: a reduction's splat
result (alone or at the end of a row group) whose device dims are in another order than its
input's gets each row's result where that layout puts it. Hand-written spyre-level IR, as
spyre-propagate-layouts never makes such a pair; before, the result was stored by the
input's device-dim order and came back transposed."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from spyre_mlir.dialects import spyre
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_fuse import SpyreFusePass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

FULL = "tensor<4x4x128xf16, #spyre.layout<device_size = [4, 2, 4, 64], stride_map = [128, 64, 512, 1]>>"
"""(4, 4, 128) with dim 1 outermost, then the sticks of dim 2, then dim 0."""
SPLAT = "tensor<4x4x1xf16, #spyre.layout<device_size = [4, 4, 1, 64], stride_map = [4, 1, -1, 0]>>"
"""Its max along dim 2, one element per stick: dim 0 outermost (the other order)."""


def module(scale: bool) -> str:
    x = "%0"
    body = ""
    if scale:  # a pointwise op before the reduction: the two form a row group
        x = "%1"
        body = f"""    %1 = spyre.pointwise %0 : ({FULL}) -> {FULL} {{
    ^bb0(%a: f32):
      %c = arith.constant 2.0 : f32
      %m = arith.mulf %a, %c : f32
      spyre.yield %m : f32
    }}
"""
    return f"""builtin.module {{
  func.func @f(%x: tensor<4x4x128xf32>) -> tensor<4x4x1xf32> {{
    %0 = spyre.to_device %x : tensor<4x4x128xf32> -> {FULL}
{body}    %2 = spyre.reduce "max" {x} dim 2 : {FULL} -> {SPLAT}
    %3 = spyre.from_device %2 : {SPLAT} -> tensor<4x4x1xf32>
    func.return %3 : tensor<4x4x1xf32>
  }}
}}"""


def lowered_and_run(text: str, x: np.ndarray):
    """The spyre-level module through spyre-fuse .. convert-spyre-to-isa on 4 cores, and @f(x)
    on the device model."""
    ctx = make_tool_context()
    m = Parser(ctx, text).parse_module()
    spyre.set_module_target(m, DeviceConfig(cores=4))
    for p in (
        SpyreFusePass(),
        SpyreDivideWorkPass(),
        SpyrePlanScratchpadPass(),
        ConvertSpyreToIsaPass(),
    ):
        p.apply(ctx, m)
    (y,) = Executable(m, ctx, DeviceModel(DeviceConfig(cores=4)), "f")(x)
    return m, np.asarray(y)


@pytest.mark.parametrize("scale", [False, True], ids=["reduce", "row-group"])
def test_a_splat_result_in_another_device_dim_order_is_stored_by_its_own_layout(scale):
    # values with at most 9 significant bits: DL16 holds them, their doubles and their max exactly
    x = (np.random.default_rng(0).integers(-512, 512, (4, 4, 128)) / 64).astype(np.float32)
    m, y = lowered_and_run(module(scale), x)
    if scale:  # the pointwise op and the reduction are one kernel
        assert "spyre_isa.sfp_reduce_max" in str(m) and str(m).count("spyre_isa.program") == 1
    np.testing.assert_array_equal(y, (2 * x if scale else x).max(-1, keepdims=True))


def test_a_reduction_over_less_than_a_stick_finds_its_sticks_dim_in_any_layout():
    """(4, 32) summed along its 32 columns, in a layout whose size-1 dim (the reduced dim's
    one stick) is not where the generic layout puts it: before, the rows' dim was taken for
    the sticks, and the program failed the ISA verifier (a tail of -160)."""
    lay = "#spyre.layout<device_size = [4, 1, 64], stride_map = [32, 64, 1]>"
    splat = "#spyre.layout<device_size = [1, 4, 64], stride_map = [64, 1, 0]>"
    text = f"""builtin.module {{
  func.func @f(%x: tensor<4x32xf32>) -> tensor<4x1xf32> {{
    %0 = spyre.to_device %x : tensor<4x32xf32> -> tensor<4x32xf16, {lay}>
    %1 = spyre.reduce "sum" %0 dim 1 : tensor<4x32xf16, {lay}> -> tensor<4x1xf16, {splat}>
    %2 = spyre.from_device %1 : tensor<4x1xf16, {splat}> -> tensor<4x1xf32>
    func.return %2 : tensor<4x1xf32>
  }}
}}"""
    x = np.random.default_rng(1).integers(-8, 9, (4, 32)).astype(np.float32)  # integer sums: exact
    _, y = lowered_and_run(text, x)
    np.testing.assert_array_equal(y, x.sum(-1, keepdims=True))


def relayout_module(shape: tuple[int, ...], src: str, dst: str) -> str:
    s = "x".join(map(str, shape))
    a, b = f"tensor<{s}xf16, {src}>", f"tensor<{s}xf16, {dst}>"
    return f"""builtin.module {{
  func.func @f(%x: tensor<{s}xf32>) -> tensor<{s}xf32> {{
    %0 = spyre.to_device %x : tensor<{s}xf32> -> {a}
    %1 = spyre.restickify %0 : {a} -> {b}
    %2 = spyre.from_device %1 : {b} -> tensor<{s}xf32>
    func.return %2 : tensor<{s}xf32>
  }}
}}"""


RAGGED_RELAYOUTS = {
    # lane gather, 1000 = 15 x 64 + 40: the 64-block loop split over the cores [0, 4), [4, 8),
    # ..., [12, 16), the last core's last block short
    "gather-split-mid-dim": (
        (2, 1000),
        "#spyre.layout<device_size = [2, 1000, 64], stride_map = [1000, 1, -1]>",
        "#spyre.layout<device_size = [16, 2, 64], stride_map = [64, 1000, 1]>",
    ),
    # lane gather into columns kept as 64 x 2 x 2: the 64-block loop's index is relative (block
    # 2 * c128 + c64); 256 columns, so every block is full
    "gather-relative-block": (
        (3, 256),
        "#spyre.layout<device_size = [3, 256, 64], stride_map = [256, 1, -1]>",
        "#spyre.layout<device_size = [2, 3, 2, 64], stride_map = [128, 256, 64, 1]>",
    ),
    # block transpose (1000, 130) -> sticked on dim 0: 1000 rows in 16 blocks over the cores,
    # the last 40; 130 columns in 3 blocks, the last 2
    "transpose-split-mid-dim": (
        (1000, 130),
        "#spyre.layout<device_size = [3, 1000, 64], stride_map = [64, 130, 1]>",
        "#spyre.layout<device_size = [130, 16, 64], stride_map = [1, 8320, 130]>",
    ),
    # (100, 200): the 200 source columns' 4 blocks one per core, the last core's of 8
    "transpose-ragged-both": (
        (100, 200),
        "#spyre.layout<device_size = [4, 100, 64], stride_map = [64, 200, 1]>",
        "#spyre.layout<device_size = [200, 2, 64], stride_map = [1, 12800, 200]>",
    ),
    # block transpose whose source holds the result's stick dim in two digits (a matmul's
    # result for a per-head reader: columns 16 x 4, head-major in the sticks' order)
    "transpose-two-digit-source": (
        (23, 64),
        "#spyre.layout<device_size = [16, 1, 4, 64], stride_map = [1, 64, 16, 64]>",
        "#spyre.layout<device_size = [1, 23, 64], stride_map = [64, 64, 1]>",
    ),
    # lane scatter: each of a stick's 16 elements into lane 0 of its own stick (xlnet's
    # permuted attention scores), and into every lane (a splat, for a broadcast along the stick)
    "lane-scatter-sparse": (
        (64, 4, 16, 1),
        "#spyre.layout<device_size = [4, 1, 64, 64], stride_map = [16, 64, 64, 1]>",
        "#spyre.layout<device_size = [4, 16, 1, 64, 64], stride_map = [16, 1, 64, 64, -1]>",
    ),
    "lane-scatter-splat": (
        (64, 4, 16, 1),
        "#spyre.layout<device_size = [4, 1, 64, 64], stride_map = [16, 64, 64, 1]>",
        "#spyre.layout<device_size = [4, 16, 1, 64, 64], stride_map = [16, 1, 64, 64, 0]>",
    ),
    # 150 elements along the sticks of dim 1: three blocks, the last of 22, split over cores
    "lane-scatter-ragged": (
        (3, 150, 1),
        "#spyre.layout<device_size = [3, 3, 1, 64], stride_map = [150, 64, 150, 1]>",
        "#spyre.layout<device_size = [3, 150, 64], stride_map = [150, 1, 0]>",
    ),
}


@pytest.mark.parametrize("case", list(RAGGED_RELAYOUTS))
def test_ragged_relayouts_split_mid_dimension_are_exact(case):
    """A relayout whose 64-blocks end in a short one (_ragged_split), with cores' boxes starting
    mid-dimension: the block loops' indices are absolute wherever a block can be short (the
    result's row dim is one digit, a transpose's and a lane gather's source dim one digit of
    exactly its extent, so that a loop above the 64-block one is refused unless the extent is
    a multiple of 64: `_source_strides`), and every element lands where numpy has it."""
    shape, src, dst = RAGGED_RELAYOUTS[case]
    x = (np.random.default_rng(2).integers(-512, 512, shape) / 64).astype(np.float32)  # exact in DL16
    _, y = lowered_and_run(relayout_module(shape, src, dst), x)
    np.testing.assert_array_equal(y, x)


def test_a_slice_lowering_leaves_no_use_by_an_op_outside_the_module():
    """A slice whose input the copy cannot read as it is reads a relayout of it: the value
    keeps no use by a slice that never joined the module (its readers are counted, e.g. for
    epilogues, which need a matmul's result read once)."""
    from pathlib import Path

    from spyre_mlir.lowering.convert_torch_to_spyre import ConvertTorchToSpyrePass

    src = (Path(__file__).parents[2] / "filecheck" / "lowering" / "strided-slice.mlir").read_text()
    ctx = make_tool_context()
    m = Parser(ctx, src).parse_module()
    ConvertTorchToSpyrePass().apply(ctx, m)
    assert any(op.name == "spyre.restickify" for op in m.walk())  # a slice read a relayout
    detached = [
        (op.name, u.operation.name) for op in m.walk() for r in op.results for u in r.uses if u.operation.parent is None
    ]
    assert not detached
