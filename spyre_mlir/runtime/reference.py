"""A numpy reference for the `torch` dialect, with the error bound the device may show.

`evaluate(module, inputs, numerics)` runs the torch-level function in float64 (the exact
answer to within 1e-15) and, beside every value, propagates a first-order bound on how far
the device's result may be from it, from the device format's unit roundoff u and the f32
unit roundoff u32 = 2^-24 of PT sums and SFP intermediates:

    host -> device          e = u|x| + tiny                 (tiny: flush below the smallest normal)
    every device store       + u|r| + tiny
    matmul  C = A @ B        e_C = 6 sqrt(|A|^2 @ e_B^2 + e_A^2 @ |B|^2) + e_A @ e_B + K u32 (|A| @ |B|) + store
    add/sub                  e = e_a + e_b                              (+ store, + 8 u32 |r|)
    mul                      e = |b| e_a + |a| e_b + e_a e_b            (+ store, + 8 u32 |r|)
    relu                     e = e_x                                     (+ store)
    gelu                     e = 1.13 e_x     (sup |gelu'| = 1.1289 for both forms) (+ store, + 8 u32 (|x| + 1))
    views                    e moves with the elements

The K rounding errors inside one dot product are independent and zero-mean (round to
nearest even), so they add in quadrature: e_k is an upper bound of a uniform error, i.e.
at least sqrt(3) standard deviations, and the factor 6 puts the bound beyond 10 sigma. The
worst case (all K errors aligned, |A| @ e_B) is ~sqrt(K) times looser and would hide a lost
bias; every other term is a worst case.

Tests assert |device - reference| <= bound element by element: the tolerance follows from
the format, and a wrong answer (a misplaced element, a lost bias) exceeds it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import torch as t
from spyre_mlir.runtime.numerics import Numerics

U32 = 2.0**-24
GELU_LIPSCHITZ = 1.13


class ReferenceError(ValueError):
    pass


def _gelu(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def evaluate(module: ModuleOp, inputs: Sequence[np.ndarray], numerics: Numerics, ctx: Any = None, entry: str = "main") -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(values, bounds) of the function's results, in float64."""
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
    if fn is None:
        raise ReferenceError(f"no function @{entry}")
    u, tiny = numerics.unit_roundoff, numerics.min_normal
    env: dict[SSAValue, tuple[np.ndarray, np.ndarray]] = {}

    def store(r: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return r, e + u * np.abs(r) + tiny

    for arg, x in zip(fn.body.block.args, inputs):
        x = np.asarray(x, dtype=np.float64)
        env[arg] = (x, u * np.abs(x) + tiny)

    def val(v: SSAValue) -> tuple[np.ndarray, np.ndarray]:
        if v not in env:
            raise ReferenceError(f"value {v} is not a tensor the reference knows")
        return env[v]

    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            vals = [val(v) for v in op.arguments]
            return [v for v, _ in vals], [e for _, e in vals]
        if isinstance(op, t.ValueTensorLiteralOp):
            if isinstance(op.value, DenseResourceAttr):
                x = t.resource_to_numpy(ctx, op.value).astype(np.float64)
            else:
                assert isinstance(op.value, DenseIntOrFPElementsAttr)
                x = np.asarray(op.value.get_values(), dtype=np.float64).reshape(op.result.type.get_shape())  # type: ignore[union-attr]
            env[op.result] = (x, u * np.abs(x) + tiny)
            continue
        if not op.results or not isinstance(op.results[0].type, t.ValueTensorType):
            continue
        env[op.results[0]] = _eval_op(op, val, store, u)
    raise ReferenceError(f"@{entry} has no return")


def _eval_op(op: Operation, val, store, u: float) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(op, t.AtenMmOp | t.AtenAddmmOp | t.AtenLinearOp):
        if isinstance(op, t.AtenLinearOp):
            (a, ea), (w, ew) = val(op.input), val(op.weight)
            b, eb = np.swapaxes(w, -1, -2), np.swapaxes(ew, -1, -2)
            bias = None if isinstance(op.bias.type, t.NoneType) else val(op.bias)
            alpha = beta = 1.0
        elif isinstance(op, t.AtenAddmmOp):
            (a, ea), (b, eb) = val(op.mat1), val(op.mat2)
            bias = val(op.self_)
            alpha, beta = t.constant_float_value(op.alpha), t.constant_float_value(op.beta)
        else:
            (a, ea), (b, eb), bias, alpha, beta = val(op.self_), val(op.mat2), None, 1.0, 1.0
        k = a.shape[-1]
        c = a @ b
        ec = (
            6 * np.sqrt(np.square(a) @ np.square(eb) + np.square(ea) @ np.square(b))
            + ea @ eb
            + k * U32 * (np.abs(a) @ np.abs(b))
        )
        c, ec = store(c, ec)
        if bias is not None or alpha != 1.0:
            r = alpha * c + (beta * bias[0] if bias is not None else 0.0)
            er = abs(alpha) * ec + (abs(beta) * bias[1] if bias is not None else 0.0) + 8 * U32 * np.abs(r)
            c, ec = store(r, er)
        return c, ec
    if isinstance(op, t.AtenTOp | t.AtenPermuteOp | t.AtenTransposeIntOp):
        x, e = val(op.self_)
        if isinstance(op, t.AtenTOp):
            perm = list(range(x.ndim))[::-1]
        elif isinstance(op, t.AtenPermuteOp):
            perm = t.constant_list_ints(op.dims)
        else:
            perm = list(range(x.ndim))
            d0, d1 = t.constant_int_value(op.dim0) % x.ndim, t.constant_int_value(op.dim1) % x.ndim
            perm[d0], perm[d1] = perm[d1], perm[d0]
        return np.transpose(x, perm), np.transpose(e, perm)
    if isinstance(op, t.AtenViewOp | t.AtenReshapeOp | t.AtenUnsafeViewOp):
        x, e = val(op.self_)
        shape = op.results[0].type.get_shape()
        return x.reshape(shape), e.reshape(shape)
    if isinstance(op, t.AtenCloneOp):
        return val(op.self_)
    if op.name.startswith(("torch.aten.add.", "torch.aten.sub.", "torch.aten.mul.")):
        kind = op.name.split(".")[2]
        x, ex = val(op.self_)
        alpha = t.constant_float_value(op.alpha) if hasattr(op, "alpha") else 1.0
        if isinstance(op.other.type, t.ValueTensorType):
            y, ey = val(op.other)
        else:
            y, ey = np.float64(t.constant_float_value(op.other)), np.float64(0.0)
        y, ey = alpha * y, abs(alpha) * ey
        if kind == "mul":
            if ey == 0.0 and np.all(y == 1.0):
                return x, ex  # x * 1 is folded away: no rounding
            r, er = x * y, np.abs(y) * ex + np.abs(x) * ey + ex * ey
        else:
            r, er = (x + y, ex + ey) if kind == "add" else (x - y, ex + ey)
        return store(r, er + 8 * U32 * np.abs(r))
    if isinstance(op, t.AtenReluOp):
        x, e = val(op.self_)
        return store(np.maximum(x, 0.0), e)
    if isinstance(op, t.AtenGeluOp):
        x, e = val(op.self_)
        r = _gelu(x, t.constant_str_value(op.approximate) or "none")
        return store(r, GELU_LIPSCHITZ * e + 8 * U32 * (np.abs(x) + 1.0))
    raise ReferenceError(f"the reference has no semantics for '{op.name}'")


def reference_for_model(model: Any, *inputs: Any, numerics: Numerics) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Exact values and device error bounds of a torch model's outputs, evaluated on the same
    aot_autograd inference graph (core-ATen decompositions) the spyre backend compiles."""
    import torch
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd

    from spyre_mlir.frontend.fx_importer import import_fx_graph

    captured: dict[str, Any] = {}

    def fw(gm: Any, example_inputs: Any) -> Any:
        captured["gm"] = gm

        def run(*args: Any) -> Any:
            captured["args"] = [a.detach().to(torch.float64).numpy() for a in args]
            return gm(*args)

        return run

    backend = aot_autograd(fw_compiler=fw, decompositions=core_aten_decompositions())
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=backend, dynamic=False)(*inputs)
    torch._dynamo.reset()
    module, info = import_fx_graph(captured["gm"])
    return evaluate(module, captured["args"], numerics, info.ctx)
