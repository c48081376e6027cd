"""Helpers the lowerings share: host and device tensor types, scalars, pointwise bodies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeGuard

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerType,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout

HOST_FLOAT_TYPES = (Float32Type, Float16Type, BFloat16Type)
"""Host element types the device path accepts (they become DL16 on the device)."""


COMPLEX_REASON = "complex numbers (the card has no complex format): the host's by nature"


class NotOnDevice(Exception):
    """Raised by a lowering that cannot take this instance of its op: the op stays on the host."""


class InconsistentResult(Exception):
    """Raised by a lowering whose op's declared result type disagrees with what its operands
    give (the torch dialect's verifiers check only some ops): a diagnostic naming the op."""


def is_vtensor(v: SSAValue) -> TypeGuard[SSAValue[t.ValueTensorType]]:
    return isinstance(v.type, t.ValueTensorType)


def is_complex(v: SSAValue[t.ValueTensorType]) -> bool:
    return isinstance(v.type.get_dtype(), ComplexType)


def host_tensor_type(vt: Attribute, where: Operation) -> TensorType:
    """The builtin host tensor type of a `!torch.vtensor` (any dtype)."""
    dtype = vt.get_dtype() if isinstance(vt, t.ValueTensorType) else None
    if not isinstance(vt, t.ValueTensorType) or not vt.has_sizes or dtype is None:
        raise PassFailedException(f"'{where.name}': {vt} is not a ranked tensor with a known dtype")
    if any(d < 0 for d in vt.get_shape()):
        raise PassFailedException(f"'{where.name}': dynamic shape {vt} is not supported (shapes must be static)")
    return TensorType(dtype, vt.get_shape())


def device_reason(vt: Attribute, integers: bool = False) -> str | None:
    """Why a tensor of this type cannot live on the device (None: it can; `integers`: as the
    float values of integers)."""
    if not isinstance(vt, t.ValueTensorType) or not vt.has_sizes or not vt.has_dtype:
        return f"{vt} is not a ranked tensor with a known dtype"
    shape = vt.get_shape()
    if any(d < 0 for d in shape):
        return f"dynamic shape {vt} (shapes must be static)"
    if any(d == 0 for d in shape):
        return f"empty tensor {vt}"
    if isinstance(vt.get_dtype(), ComplexType):
        return f"{COMPLEX_REASON}: {vt}"
    if not isinstance(vt.get_dtype(), HOST_FLOAT_TYPES) and not (integers and isinstance(vt.get_dtype(), IntegerType)):
        return f"dtype {vt.get_dtype()} of {vt} (f32, f16 and bf16 become DL16; integers and booleans stay on the host)"
    return None


def pointwise(inputs: Sequence[SSAValue], shape: Sequence[int], body: Callable[..., SSAValue]) -> spyre.PointwiseOp:
    """spyre.pointwise over `inputs` whose body is built by `body(*block_args)` with arith/math.

    The result is in the generic layout, or a splat when its full-shape inputs are splats
    (arithmetic on reduction results stays broadcastable) or its last dim is 1 (one element
    per stick: the SFP works on whole vectors, so every lane carries it)."""
    shape = tuple(shape)
    # an input that broadcasts along the stick dim, or whose elements sit along the sticks of
    # another dim of a one-element-per-stick result, is relaid by spyre-propagate-layouts: a
    # host transfer is laid out so, a computed value gets a lane scatter (restickify)
    one_per_stick = not shape or shape[-1] == 1  # a generic layout would hold lane 0 only
    block = Block(arg_types=[f32] * len(inputs))
    with ImplicitBuilder(block):
        result = body(*block.args)
        spyre.YieldOp(result)
    full = [layout_of(v) for v in inputs if shape_of(v) == shape]
    layout = None
    if one_per_stick:
        layout = Layout.splat(shape, 2)
    elif full and all(lay.is_splat and lay == full[0] for lay in full):
        layout = full[0]  # e.g. a viewed reduction result: one element per stick, all lanes
    return spyre.PointwiseOp(inputs, spyre.device_tensor_type(shape, layout), Region(block))


def const(value: float) -> SSAValue:
    return arith.ConstantOp(FloatAttr(float(value), f32)).result


def addf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.AddfOp(a, b).result


def subf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.SubfOp(a, b).result


def mulf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.MulfOp(a, b).result


def divf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.DivfOp(a, b).result


def scalar_of(v: SSAValue, op: Operation, what: str) -> float:
    value = t.constant_float_value(v)
    if value is None:
        raise NotOnDevice(f"{what} is not a constant number")
    return value


def shape_of(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return v.type.get_shape()


def layout_of(v: SSAValue) -> Layout:
    return spyre.device_layout(v.type)


def result_shape(op: Operation) -> tuple[int, ...]:
    vt = op.results[0].type
    assert isinstance(vt, t.ValueTensorType)
    return vt.get_shape()


def pointwise_append(
    ops: list[Operation], inputs: Sequence[SSAValue], shape: Sequence[int], body: Callable[..., SSAValue]
) -> SSAValue:
    pw = pointwise(inputs, shape, body)
    ops.append(pw)
    return pw.result


def is_int(v: SSAValue[t.ValueTensorType]) -> bool:
    """An integer/boolean tensor (or one of unknown dtype); f64 and complex tensors are not:
    those are float data the device cannot take, a CPU fallback to report."""
    return not v.type.has_dtype or isinstance(v.type.get_dtype(), IntegerType)
