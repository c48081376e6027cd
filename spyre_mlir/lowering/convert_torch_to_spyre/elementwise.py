"""Element-wise ops: spyre.pointwise with a body of arith/math scalar ops."""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    NotOnDevice,
    addf,
    const,
    divf,
    is_vtensor,
    mulf,
    pointwise,
    result_shape,
    scalar_of,
    shape_of,
    subf,
)


def _gelu_erf(x: SSAValue) -> SSAValue:
    """x * 0.5 * (1 + erf(x / sqrt(2)))"""
    return mulf(mulf(x, const(0.5)), addf(mathd.ErfOp(mulf(x, const(math.sqrt(0.5)))).result, const(1.0)))


def _gelu_tanh(x: SSAValue) -> SSAValue:
    """x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))"""
    cube = mulf(mulf(x, x), x)
    inner = mulf(addf(x, mulf(cube, const(0.044715))), const(math.sqrt(2.0 / math.pi)))
    return mulf(mulf(x, const(0.5)), addf(mathd.TanhOp(inner).result, const(1.0)))


def _sigmoid(x: SSAValue) -> SSAValue:
    """1 / (1 + exp(-x))"""
    return divf(const(1.0), addf(mathd.ExpOp(arith.NegfOp(x).result).result, const(1.0)))


UNARY: dict[str, tuple[Callable[[SSAValue], SSAValue], str]] = {
    "torch.aten.relu": (lambda x: arith.MaximumfOp(x, const(0.0)).result, "maximumf(x, 0)"),
    "torch.aten.neg": (lambda x: arith.NegfOp(x).result, "negf"),
    "torch.aten.abs": (lambda x: mathd.AbsFOp(x).result, "math.absf"),
    "torch.aten.exp": (lambda x: mathd.ExpOp(x).result, "math.exp"),
    "torch.aten.log": (lambda x: mathd.LogOp(x).result, "math.log"),
    "torch.aten.sqrt": (lambda x: mathd.SqrtOp(x).result, "math.sqrt"),
    "torch.aten.rsqrt": (lambda x: mathd.RsqrtOp(x).result, "math.rsqrt"),
    "torch.aten.tanh": (lambda x: mathd.TanhOp(x).result, "math.tanh"),
    "torch.aten.sin": (lambda x: mathd.SinOp(x).result, "math.sin"),
    "torch.aten.cos": (lambda x: mathd.CosOp(x).result, "math.cos"),
    "torch.aten.erf": (lambda x: mathd.ErfOp(x).result, "math.erf"),
    "torch.aten.sigmoid": (_sigmoid, "1 / (1 + exp(-x))"),
    "torch.aten.reciprocal": (lambda x: divf(const(1.0), x), "1 / x"),
}
"""Unary element-wise ops and their pointwise body."""


BINARY: dict[str, tuple[Callable[[SSAValue, SSAValue], SSAValue], str]] = {
    "add": (addf, "addf"),
    "sub": (subf, "subf"),
    "mul": (mulf, "mulf"),
    "div": (divf, "divf"),
    "minimum": (lambda a, b: arith.MinimumfOp(a, b).result, "minimumf"),
    "maximum": (lambda a, b: arith.MaximumfOp(a, b).result, "maximumf"),
}
"""Binary element-wise ops (Tensor and Scalar overloads) and their pointwise body op."""


class LowerUnary(Lowering):
    """The ops of torch.ELEMENTWISE_UNARY: the body UNARY gives, or gelu's form."""

    lowers = {
        name: "spyre.pointwise: "
        + ("erf form (none) or tanh form (tanh)" if name == "torch.aten.gelu" else UNARY[name][1])
        for name in t.ELEMENTWISE_UNARY
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        if op.name == "torch.aten.gelu":
            mode = t.constant_str_value(op.operands[1])
            if mode not in ("none", "tanh"):
                raise NotOnDevice(f'approximate must be a constant "none" or "tanh", got {op.operands[1]}')
            fn: Callable[[SSAValue], SSAValue] = _gelu_erf if mode == "none" else _gelu_tanh
        else:
            fn = UNARY[op.name][0]
        pw = pointwise([x], shape_of(x), fn)
        return [pw], pw.result


class LowerBinary(Lowering):
    """add/sub/mul/div/minimum/maximum with a tensor or a scalar; alpha folds into the body."""

    lowers = {
        name: f"spyre.pointwise: {BINARY[name.split('.')[2]][1]}"
        + (" (x * 1, x / 1 fold to x)" if name in ("torch.aten.mul.Scalar", "torch.aten.div.Scalar") else "")
        for name in (*t.ELEMENTWISE_BINARY, *t.ELEMENTWISE_SCALAR)
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        kind = op.name.split(".")[2]
        fn = BINARY[kind][0]
        alpha = scalar_of(op.operands[2], op, "alpha") if kind in ("add", "sub") else 1.0
        shape = result_shape(op)
        other = op.operands[1]
        if is_vtensor(other):
            if kind in ("div",) and len(op.operands) > 2:
                raise NotOnDevice("div with a rounding mode")
            x, y = self.promoted(op.operands[0], op), self.promoted(other, op)
            pw = pointwise([x, y], shape, lambda a, b: fn(a, mulf(b, const(alpha)) if alpha != 1.0 else b))
            return [pw], pw.result
        x = self.dev(op.operands[0], op)
        s = scalar_of(other, op, "other") * alpha
        if kind == "mul" and s == 1.0 or kind == "div" and s == 1.0:
            return [], x  # x * 1 == x / 1 == x exactly, NaN included
        if kind == "div":
            fn, s = mulf, 1.0 / s if s != 0 else math.copysign(math.inf, s)
        pw = pointwise([x], shape, lambda a: fn(a, const(s)))
        return [pw], pw.result


class LowerPow(Lowering):
    """pow(x, c) for a non-integer constant c: exp(c * log(x)) (NaN for x < 0, as torch).
    Integer exponents and 0.5 / -0.5 are torch-adapt's (multiplications, reciprocal, sqrt,
    rsqrt); without it they stay on the CPU rather than lose their sign."""

    lowers = {
        "torch.aten.pow.Tensor_Scalar": "spyre.pointwise exp(c log x) for non-integer c; torch-adapt makes x*x..., sqrt, rsqrt"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        c = scalar_of(op.operands[1], op, "the exponent")
        if not math.isfinite(c):
            raise NotOnDevice(f"exponent {c}")
        if c == int(c) or abs(c) == 0.5:
            raise NotOnDevice(f"exponent {c:g} (torch-adapt rewrites the ones in -2..4 and +-0.5)")
        x = self.dev(op.operands[0], op)
        pw = pointwise([x], shape_of(x), lambda a: mathd.ExpOp(mulf(mathd.LogOp(a).result, const(c))).result)
        return [pw], pw.result


class LowerWhere(Lowering):
    """where(cond, x, y): the boolean condition goes to the device as a 0/1 mask and the SFP
    selects (mask != 0 ? x : y), broadcasting all three."""

    lowers = {
        "torch.aten.where.self": "spyre.pointwise: select on the condition (sent as a 0/1 mask); with two scalar values it builds a mask on the host"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        cond, x_v, y_v = op.operands
        if t.vtensor_type(cond).get_dtype() != IntegerType(1):
            raise NotOnDevice("the condition is not boolean")
        m = self.border.device(cond, op, mask=True)
        x, y = self.dev(x_v, op), self.dev(y_v, op)

        def body(c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
            nonzero = arith.CmpfOp(c, const(0.0), "one").result
            return arith.SelectOp(nonzero, a, b).result

        pw = pointwise([m, x, y], result_shape(op), body)
        return [pw], pw.result


class LowerClamp(Lowering):
    lowers = {"torch.aten.clamp": "spyre.pointwise: maximumf / minimumf with constants"}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        lo = None if isinstance(op.operands[1].type, t.NoneType) else scalar_of(op.operands[1], op, "min")
        hi = None if isinstance(op.operands[2].type, t.NoneType) else scalar_of(op.operands[2], op, "max")

        def body(a: SSAValue) -> SSAValue:
            if lo is not None:
                a = arith.MaximumfOp(a, const(lo)).result
            if hi is not None:
                a = arith.MinimumfOp(a, const(hi)).result
            return a

        pw = pointwise([x], shape_of(x), body)
        return [pw], pw.result
