"""Reductions and normalisations along the last dim."""

from __future__ import annotations

from xdsl.dialects import math as mathd
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.movement import positive_dim
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    NotOnDevice,
    addf,
    const,
    divf,
    mulf,
    pointwise,
    pointwise_append,
    scalar_of,
    shape_of,
    subf,
)


def _reduce(ops: list[Operation], x: SSAValue, kind: str, dim: int) -> SSAValue:
    """spyre.reduce along `dim` (keepdim); along the stick dim only."""
    shape = shape_of(x)
    dim = positive_dim(dim, shape)
    if not shape or shape[dim] == 1:  # over one element: sum, mean and max of it are the element
        return x
    if dim != len(shape) - 1:
        raise NotOnDevice(f"a reduction along dim {dim} of {shape}, not the stick (last) dim")
    out_shape = (*shape[:-1], 1)
    r = spyre.ReduceOp(kind, x, dim, spyre.device_tensor_type(out_shape, Layout.splat(out_shape, 2)))
    ops.append(r)
    return r.result


class LowerReductions(Lowering):
    """mean.dim / sum.dim_IntList over the last dim with keepdim; amax and amin likewise."""

    lowers = {
        "torch.aten.mean.dim": "spyre.reduce mean (last dim, keepdim): a splat result",
        "torch.aten.sum.dim_IntList": "spyre.reduce sum (last dim, keepdim): a splat result",
        "torch.aten.amax": "spyre.reduce max (last dim, keepdim): a splat result",
        "torch.aten.amin": "spyre.reduce min (last dim, keepdim): a splat result",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        dims = t.constant_list_ints(op.operands[1])
        keep = op.operands[2].owner
        keepdim = isinstance(keep, t.ConstantBoolOp) and bool(keep.value.value.data)
        x_type = op.operands[0].type
        if (
            isinstance(x_type, t.ValueTensorType)
            and x_type.has_sizes
            and x_type.get_shape() == ()
            and len(dims or ()) == 1
        ):
            keepdim = True  # a 0-d input: keepdim changes nothing
            keepdim = True
        if dims is None or len(dims) != 1 or not keepdim:
            raise NotOnDevice("only one reduced dim, with keepdim=True")
        if len(op.operands) > 3 and not isinstance(op.operands[3].type, t.NoneType):
            raise NotOnDevice("a dtype argument")
        kind = {
            "torch.aten.mean.dim": "mean",
            "torch.aten.sum.dim_IntList": "sum",
            "torch.aten.amax": "max",
            "torch.aten.amin": "min",
        }[op.name]
        ops: list[Operation] = []
        return ops, _reduce(ops, self.dev(op.operands[0], op), kind, dims[0])


class LowerSoftmax(Lowering):
    """softmax along the last dim: m = max, e = exp(x - m), y = e / sum(e)."""

    lowers = {
        "torch.aten._softmax": "spyre.reduce max, spyre.pointwise exp(x - m), spyre.reduce sum, spyre.pointwise divide (last dim)"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        dim = t.constant_int_value(op.operands[1])
        if dim is None:
            raise NotOnDevice("dim is not constant")
        ops: list[Operation] = []
        m = _reduce(ops, x, "max", dim)
        e = pointwise([x, m], shape_of(x), lambda a, b: mathd.ExpOp(subf(a, b)).result)
        ops.append(e)
        total = _reduce(ops, e.result, "sum", dim)
        y = pointwise([e.result, total], shape_of(x), divf)
        ops.append(y)
        return ops, y.result


class LowerLayerNorm(Lowering):
    """native_layer_norm over the last dim: mean, var = mean((x - mean)^2),
    y = (x - mean) * rsqrt(var + eps) * w + b; also returns mean and rstd."""

    lowers = {
        "torch.aten.native_layer_norm": "spyre.reduce mean, spyre.pointwise (x - mean)^2, spyre.reduce mean, rsqrt, normalise (last dim)"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], list[SSAValue]]:
        x_v, shape_v, w_v, b_v, eps_v = op.operands
        norm = t.constant_list_ints(shape_v)
        x = self.dev(x_v, op)
        if norm is None or len(norm) != 1 or norm[0] != shape_of(x)[-1]:
            raise NotOnDevice("normalised shape other than the last dim")
        eps = scalar_of(eps_v, op, "eps")
        w = None if isinstance(w_v.type, t.NoneType) else self.dev(w_v, op)
        b = None if isinstance(b_v.type, t.NoneType) else self.dev(b_v, op)
        ops: list[Operation] = []
        mean = _reduce(ops, x, "mean", -1)
        d = pointwise([x, mean], shape_of(x), subf)
        ops.append(d)
        var = _reduce(ops, pointwise_append(ops, [d.result], shape_of(x), lambda a: mulf(a, a)), "mean", -1)
        rstd = pointwise([var], shape_of(var), lambda v: mathd.RsqrtOp(addf(v, const(eps))).result)
        ops.append(rstd)
        extra = [v for v in (w, b) if v is not None]

        def body(dv: SSAValue, r: SSAValue, *wb: SSAValue) -> SSAValue:
            y = mulf(dv, r)
            i = 0
            if w is not None:
                y = mulf(y, wb[i])
                i += 1
            if b is not None:
                y = addf(y, wb[i])
            return y

        y = pointwise([d.result, rstd.result, *extra], shape_of(x), body)
        ops.append(y)
        return ops, [y.result, mean, rstd.result]
