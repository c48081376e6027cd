"""Build and run small hand-written spyre_isa programs (shared by the device-model tests)."""

from __future__ import annotations

import numpy as np
from xdsl.parser import Parser

from spyre_mlir.dialects.torch import make_context
from spyre_mlir.layout import Layout
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig


def tensor_type(rows: int, cols: int) -> str:
    lay = Layout.generic((rows, cols), 2)
    size = ", ".join(map(str, lay.device_size))
    strides = ", ".join(map(str, lay.stride_map))
    return f"tensor<{rows}x{cols}xf16, #spyre.layout<device_size = [{size}], stride_map = [{strides}]>>"


def run_program(
    body: str,
    shapes: list[tuple[int, int]],
    out_shape: tuple[int, int],
    config: DeviceConfig = DeviceConfig(),
    inputs=None,
    verify=True,
):
    """Run `@k` (streams in `body`; arguments %a, %b, ... then %out) on seeded inputs.
    Returns (output, DeviceModel)."""
    names = [chr(ord("a") + i) for i in range(len(shapes))]
    types = [tensor_type(*s) for s in shapes]
    out_t = tensor_type(*out_shape)
    args = ", ".join(f"%{n}: {t}" for n, t in zip(names, types))
    host_args = ", ".join(f"%h{n}: tensor<{r}x{c}xf32>" for n, (r, c) in zip(names, shapes))
    transfers = "\n".join(
        f"  %d{n} = spyre.to_device %h{n} : tensor<{r}x{c}xf32> -> {t}" for n, (r, c), t in zip(names, shapes, types)
    )
    text = f"""
spyre_isa.program @k({args}, %out: {out_t}) inputs {len(shapes)} {{
{body}
}}
func.func @main({host_args}) -> tensor<{out_shape[0]}x{out_shape[1]}xf32> {{
{transfers}
  %r = spyre_isa.launch @k({", ".join(f"%d{n}" for n in names)}) : ({", ".join(types)}) -> {out_t}
  %h = spyre.from_device %r : {out_t} -> tensor<{out_shape[0]}x{out_shape[1]}xf32>
  func.return %h : tensor<{out_shape[0]}x{out_shape[1]}xf32>
}}"""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    if verify:
        module.verify()
    model = DeviceModel(config)
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    (out,) = Executable(module, ctx, model)(*inputs)
    return out, model


XY = "tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], stride_map = [64, 128, 1]>>"
"""A (64, 128) device tensor: 2 stick columns x 64 rows = 128 sticks (stick s < 64 is row s's
lanes 0..63, stick 64 + s its lanes 64..127)."""


def xy_module(programs: str, body: str):
    """`programs`, then @main(%x, %y) of two (64, 128) host tensors, on the device as %xd and
    %yd, running `body` (which defines %r, an XY tensor, returned to the host); verified.
    Returns (module, context)."""
    text = f"""
{programs}
func.func @main(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<64x128xf32> {{
  %xd = spyre.to_device %x : tensor<64x128xf32> -> {XY}
  %yd = spyre.to_device %y : tensor<64x128xf32> -> {XY}
{body}
  %h = spyre.from_device %r : {XY} -> tensor<64x128xf32>
  func.return %h : tensor<64x128xf32>
}}"""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module, ctx
