"""Views (permute, reshape, expand), copies and matmuls."""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.movement import permute, reshape, stick_partner, swap
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    NotOnDevice,
    addf,
    const,
    mulf,
    pointwise,
    result_shape,
    scalar_of,
    shape_of,
)
from spyre_mlir.target.config import DeviceConfig


class LowerExpand(Lowering):
    """expand materialises the broadcast (a pointwise copy that reads the input with stride 0)."""

    lowers = {
        "torch.aten.expand": "spyre.pointwise copy (the broadcast is materialised); along the stick dim from elements that share sticks: broadcast along another dim between two transposes"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        shape = result_shape(op)
        if shape_of(x) == shape:
            return [], x
        try:
            pw = pointwise([x], shape, lambda a: a)
        except NotOnDevice as e:
            ops: list[Operation] = []
            return ops, _expand_across_lanes(ops, x, shape, str(e), costs=self.costs)
        return [pw], pw.result


class LowerViews(Lowering):
    lowers = {
        "torch.aten.unsqueeze": "spyre.reshape (free view)",
        "torch.aten.squeeze.dims": "spyre.reshape (free view)",
        "torch.aten.squeeze.dim": "spyre.reshape (free view)",
        "torch.aten.t": "spyre.permute (free view)",
        "torch.aten.permute": "spyre.permute (free view)",
        "torch.aten.transpose.int": "spyre.permute (free view)",
        "torch.aten.view": "spyre.reshape (free view)",
        "torch.aten.reshape": "spyre.reshape (free view)",
        "torch.aten._unsafe_view": "spyre.reshape (free view)",
        "torch.aten.clone": "its input (value semantics)",
        "torch.aten.alias": "its input (value semantics)",
        "torch.aten._to_copy": "its input, to the same dtype (value semantics; between float dtypes: no lowering yet)",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        if (
            op.name == "torch.aten._to_copy"
            and t.vtensor_type(op.operands[0]).get_dtype() != t.vtensor_type(op.results[0]).get_dtype()
        ):
            raise NotOnDevice("no device lowering yet")  # (a copy between float dtypes)
        x = self.dev(op.operands[0], op)
        rank = len(shape_of(x))
        ops: list[Operation] = []
        if op.name in ("torch.aten.clone", "torch.aten.alias", "torch.aten._to_copy"):
            return ops, x
        if op.name == "torch.aten.t":
            return ops, permute(ops, x, (1, 0)) if rank == 2 else x
        if op.name == "torch.aten.permute":
            dims = t.constant_list_ints(op.operands[1])
            if dims is None:
                raise NotOnDevice("dims are not constant")
            return ops, permute(ops, x, [d % rank for d in dims])
        if op.name == "torch.aten.transpose.int":
            d0, d1 = t.constant_int_value(op.operands[1]), t.constant_int_value(op.operands[2])
            if d0 is None or d1 is None:
                raise NotOnDevice("dims are not constant")
            perm = list(range(rank))
            perm[d0 % rank], perm[d1 % rank] = perm[d1 % rank], perm[d0 % rank]
            return ops, permute(ops, x, perm)
        return ops, self.reshape(ops, x, result_shape(op))


class LowerCopy(Lowering):
    """copy(self, src): src's values in self's shape (aot_autograd's form of a write into a graph
    input, `x.copy_(src)`): src itself where the shapes agree (a device value holds the same
    16-bit values whatever the float dtype)."""

    lowers = {"torch.aten.copy": "its source, of the destination's shape (value semantics)"}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        dest, src = op.operands[0], op.operands[1]
        if tuple(t.vtensor_type(dest).get_shape()) != tuple(t.vtensor_type(src).get_shape()):
            raise NotOnDevice("copy broadcasts its source (the device copies values of one shape)")
        return [], self.dev(src, op)


class LowerMatmul(Lowering):
    """mm, bmm, addmm and linear: spyre.matmul, then bias/alpha/beta in one spyre.pointwise."""

    lowers = {
        "torch.aten.mm": "spyre.matmul",
        "torch.aten.bmm": "spyre.matmul (batched)",
        "torch.aten.addmm": "spyre.matmul + spyre.pointwise (bias, alpha, beta)",
        "torch.aten.linear": "spyre.matmul (+ spyre.pointwise for the bias); free views around it",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        ops: list[Operation] = []
        xs = None
        if op.name == "torch.aten.bmm":
            a, b = self.dev(op.operands[0], op), self.dev(op.operands[1], op)
            shape = (shape_of(a)[0], shape_of(a)[1], shape_of(b)[2])
            # batch-major: attention's (heads, rows, keys) scores viewed as (1, heads, rows,
            # keys) are then in that shape's generic layout, which the softmax reads as it is
            lay = Layout.batch_major(shape, 2) if shape[2] > 1 else None
            mm = spyre.MatmulOp(a, b, spyre.device_tensor_type(shape, lay))
            return [mm], mm.result
        if op.name == "torch.aten.linear":
            inp, weight, bias_v = op.operands
            if len(t.vtensor_type(inp).get_shape()) < 2 or len(t.vtensor_type(weight).get_shape()) != 2:
                raise NotOnDevice("linear needs an input of rank >= 2 and a 2-D weight")
            x = self.dev(inp, op)
            w = self.dev(weight, op)
            bias = None if isinstance(bias_v.type, t.NoneType) else self.dev(bias_v, op)
            xs = shape_of(x)
            if len(xs) != 2:  # fold the leading dims into rows
                x = self.reshape(ops, x, (math.prod(xs[:-1]), xs[-1]))
            lhs, rhs, alpha, beta = x, permute(ops, w, (1, 0)), 1.0, 1.0
        elif op.name == "torch.aten.addmm":
            alpha, beta = scalar_of(op.operands[4], op, "alpha"), scalar_of(op.operands[3], op, "beta")
            lhs, rhs = self.dev(op.operands[1], op), self.dev(op.operands[2], op)
            bias = self.dev(op.operands[0], op) if beta != 0.0 else None
        else:
            lhs, rhs, bias, alpha, beta = self.dev(op.operands[0], op), self.dev(op.operands[1], op), None, 1.0, 1.0
        m, n = shape_of(lhs)[0], shape_of(rhs)[1]
        mm = spyre.MatmulOp(lhs, rhs, spyre.device_tensor_type((m, n)))
        ops.append(mm)
        out: SSAValue = mm.result
        if bias is not None or alpha != 1.0:
            inputs = [out] + ([bias] if bias is not None else [])

            def body(c: SSAValue, *b: SSAValue) -> SSAValue:
                r = mulf(c, const(alpha)) if alpha != 1.0 else c
                if b:
                    r = addf(r, mulf(b[0], const(beta)) if beta != 1.0 else b[0])
                return r

            pw = pointwise(inputs, (m, n), body)
            ops.append(pw)
            out = pw.result
        if xs is not None and len(xs) != 2:
            out = self.reshape(ops, out, (*xs[:-1], n))
        return ops, out


def _expand_across_lanes(
    ops: list[Operation], x: SSAValue, shape: tuple[int, ...], why: str, costs: DeviceConfig | None
) -> SSAValue:
    """x (..., 1) broadcast along the stick dim to `shape` (..., w) where its elements are not
    one per stick (`pointwise` refuses it, saying `why`): x with its stick dim swapped with p,
    the result's last other dim of extent > 1, broadcast along p there (a stride-0 read of a
    dim off the stick), and swapped back (a free view sticked along p; a reader that needs the
    result sticked along its last dim restickifies it, a block transpose)."""
    src, rank = shape_of(x), len(shape)
    p = stick_partner(shape)
    if not src or src[-1] != 1 or p is None:
        raise NotOnDevice(why)
    x = reshape(ops, x, (1,) * (rank - len(src)) + src, costs)
    perm = swap(rank, p, rank - 1)
    try:
        pw = pointwise([permute(ops, x, perm)], tuple(shape[d] for d in perm), lambda a: a)
    except NotOnDevice:
        raise NotOnDevice(why) from None
    ops.append(pw)
    return permute(ops, pw.result, perm)
