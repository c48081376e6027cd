"""The fuzz harness's oracle for spyre-level functions (spyre-run --reference covers the torch
level only): what a function of spyre ops computes, on logical arrays, whatever the layouts.

Layouts decide where elements sit, never their values, so a layout mutation that still
verifies must not change a result. The oracle evaluates each op on numpy arrays, rounding
where the device stores (DL16) and in the precision the device computes in:

    to_device             round(reshape(transpose(x, permutation)))
    from_device           the values, in the host element type
    matmul                round(a @ b)                 (exact products, sums in float64)
    pointwise             round(body(inputs...))       (the body in float32, inputs broadcast)
    reduce                round(sum | mean | max | min over dim, keepdim)   (float32)
    gather, slice         rows at the indices; the box at `start`
    permute, reshape      transpose, reshape; restickify: the same values
    kernel                its body on its inputs

`agree(device, reference)` allows what the device's different summation orders and double
roundings can give (a few units in the last DL16 place, which later ops may amplify):
|d - r| <= 2^-5 |r| + 2^-7 max|r|, elementwise; a misplaced element is off by about the
size of the values themselves.

A function holding anything else (torch ops, spyre_isa launches, unknown ops) has no oracle:
`evaluate` raises NoOracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.sim.numerics import DL16


class NoOracle(Exception):
    """The function holds an op the oracle has no semantics for."""


def _round(x: np.ndarray) -> np.ndarray:
    return DL16.round(np.asarray(x, dtype=np.float32)).astype(np.float32)


_HOST_DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64}


def _body(op: spyre.PointwiseOp, inputs: list[np.ndarray]) -> np.ndarray:
    env: dict[SSAValue, Any] = dict(zip(op.body.block.args, inputs))
    f32 = np.float32
    with np.errstate(all="ignore"):
        for o in op.body.block.ops:
            if isinstance(o, spyre.YieldOp):
                return np.asarray(env[o.values[0]], dtype=f32)
            a = [env[v] for v in o.operands]
            name = o.name
            if name == "arith.constant":
                assert isinstance(o, arith.ConstantOp) and isinstance(o.value, FloatAttr)
                r: Any = f32(o.value.value.data)
            elif name == "arith.addf":
                r = np.add(a[0], a[1], dtype=f32)
            elif name == "arith.subf":
                r = np.subtract(a[0], a[1], dtype=f32)
            elif name == "arith.mulf":
                r = np.multiply(a[0], a[1], dtype=f32)
            elif name == "arith.divf":
                r = np.divide(a[0], a[1], dtype=f32)
            elif name == "arith.maximumf":
                r = np.maximum(a[0], a[1], dtype=f32)
            elif name == "arith.minimumf":
                r = np.minimum(a[0], a[1], dtype=f32)
            elif name == "arith.negf":
                r = np.negative(a[0], dtype=f32)
            elif name == "arith.cmpf":  # the verifier allows only (mask != 0)
                r = np.asarray(a[0], dtype=f32) != 0
            elif name == "arith.select":
                r = np.where(a[0], a[1], a[2]).astype(f32)
            elif name == "math.exp":
                r = np.exp(a[0], dtype=f32)
            elif name == "math.erf":
                import torch

                r = torch.special.erf(torch.from_numpy(np.ascontiguousarray(a[0], dtype=f32))).numpy()
            elif name == "math.tanh":
                r = np.tanh(a[0], dtype=f32)
            elif name == "math.log":
                r = np.log(a[0], dtype=f32)
            elif name == "math.sqrt":
                r = np.sqrt(a[0], dtype=f32)
            elif name == "math.rsqrt":
                r = f32(1.0) / np.sqrt(a[0], dtype=f32)
            elif name == "math.sin":
                r = np.sin(a[0], dtype=f32)
            elif name == "math.cos":
                r = np.cos(a[0], dtype=f32)
            elif name == "math.absf":
                r = np.abs(np.asarray(a[0], dtype=f32))
            else:
                raise NoOracle(f"pointwise body op '{name}'")
            env[o.results[0]] = r
    raise NoOracle("a pointwise body without spyre.yield")


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def _run_ops(ops: Sequence[Operation], env: dict[SSAValue, Any]) -> list[np.ndarray]:
    for op in ops:
        if isinstance(op, func.ReturnOp | spyre.YieldOp):
            return [env[v] for v in op.operands]
        a: list[Any] = [env.get(v) for v in op.operands]  # arrays, or the scalars of constants
        r: Any
        if isinstance(op, spyre.ToDeviceOp):
            x = np.asarray(a[0], dtype=np.float32)
            if op.permutation is not None:
                x = x.transpose(op.permutation.as_tuple())
            r = _round(x.reshape(_shape(op.result)))
        elif isinstance(op, spyre.FromDeviceOp):
            assert isinstance(op.result.type, TensorType)
            r = np.asarray(a[0]).astype(_HOST_DTYPES.get(str(op.result.type.element_type), np.float32))
        elif isinstance(op, spyre.MatmulOp):
            r = _round(np.matmul(a[0].astype(np.float64), a[1].astype(np.float64)))
        elif isinstance(op, spyre.PointwiseOp):
            shape = _shape(op.result)
            ins = [np.broadcast_to(np.asarray(x, dtype=np.float32), shape) for x in a]
            r = _round(np.broadcast_to(_body(op, ins), shape))
        elif isinstance(op, spyre.ReduceOp):
            d = op.dim.value.data
            x = np.asarray(a[0], dtype=np.float32)
            kind = op.kind.data
            with np.errstate(all="ignore"):
                if kind == "sum":
                    r = x.sum(axis=d, keepdims=True, dtype=np.float32)
                elif kind == "mean":
                    r = x.sum(axis=d, keepdims=True, dtype=np.float32) * np.float32(1.0 / x.shape[d])
                elif kind == "max":
                    r = x.max(axis=d, keepdims=True)
                else:
                    r = x.min(axis=d, keepdims=True)
            r = _round(r)
        elif isinstance(op, spyre.GatherOp):
            idx = np.asarray(a[1]).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= a[0].shape[0]):
                raise NoOracle("indices out of range (the device model refuses them)")
            r = a[0][idx]
        elif isinstance(op, spyre.SliceOp):
            box = tuple(slice(s, s + n) for s, n in zip(op.start.as_tuple(), _shape(op.result)))
            r = a[0][box]
        elif isinstance(op, spyre.ConcatOp):
            r = np.concatenate(a, axis=op.dim.value.data)
        elif isinstance(op, spyre.PermuteOp):
            r = np.transpose(a[0], op.permutation.as_tuple())
        elif isinstance(op, spyre.ReshapeOp):
            r = np.reshape(a[0], _shape(op.result))
        elif isinstance(op, spyre.RestickifyOp):
            r = a[0]
        elif isinstance(op, spyre.KernelOp):
            outs = _run_ops(list(op.body.block.ops), dict(zip(op.body.block.args, a)))
            env.update(zip(op.results, outs))
            continue
        elif isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
            r = np.asarray(op.value.get_values()).reshape(_shape(op.result))
        elif isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr | FloatAttr):
            r = op.value.value.data
        else:
            raise NoOracle(f"'{op.name}'")
        env[op.results[0]] = r
    raise NoOracle("no return")


def evaluate(module: ModuleOp, entry: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
    if fn is None or len(fn.body.blocks) != 1:
        raise NoOracle(f"no straight-line @{entry}")
    if not any(o.name.startswith("spyre.") for o in fn.walk()):
        raise NoOracle("no spyre op")
    env: dict[SSAValue, Any] = {}
    for arg, x in zip(fn.body.block.args, inputs):
        env[arg] = _round(x) if spyre.is_device_tensor(arg.type) else x  # device arguments are transferred
    return _run_ops(list(fn.body.block.ops), env)


def agree(device: np.ndarray, reference: np.ndarray) -> tuple[bool, str]:
    d = np.asarray(device, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if d.shape != r.shape:
        return False, f"shape {d.shape} != reference {r.shape}"
    finite = np.isfinite(r)
    scale = float(np.abs(r[finite]).max()) if finite.any() else 0.0
    with np.errstate(invalid="ignore"):
        err = np.abs(d - r)
        ok = (err <= 2.0**-5 * np.abs(r) + 2.0**-7 * scale) | (d == r) | (np.isnan(d) & np.isnan(r))
    if ok.all():
        return True, ""
    bad = np.argwhere(~ok)[0]
    i = tuple(int(x) for x in bad)
    return (
        False,
        f"{int((~ok).sum())} of {ok.size} elements differ, e.g. at {i}: device {d[i]:.6g}, reference {r[i]:.6g}",
    )
