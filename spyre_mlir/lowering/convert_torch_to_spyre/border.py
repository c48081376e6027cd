"""The border between host and device, and the `Lowering` pattern every op family derives from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseResourceAttr, IntegerType, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.movement import reshape
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    InconsistentResult,
    NotOnDevice,
    device_reason,
    host_tensor_type,
    shape_of,
)


class Border:
    """Where values cross: one to_device per host value, one from_device per device value."""

    def __init__(self) -> None:
        self.on_device: dict[SSAValue, SSAValue] = {}
        self.on_host: dict[SSAValue, SSAValue] = {}
        self.constants: dict[SSAValue, SSAValue] = {}

    def _builtin(self, v: SSAValue, before: Operation) -> tuple[SSAValue, list[Operation]]:
        """The builtin host tensor of a host `!torch.vtensor`: a literal becomes an
        arith.constant (the weights keep their resource), anything else is seen through a cast."""
        owner = v.owner
        if isinstance(owner, t.ValueTensorLiteralOp):
            if v not in self.constants:
                host = host_tensor_type(v.type, owner)
                value = owner.value
                if isinstance(value, DenseResourceAttr):
                    value = DenseResourceAttr.from_params(value.resource_handle.data, host)
                cst = arith.ConstantOp(value, host)
                Rewriter.insert_op(cst, InsertPoint.after(owner))
                self.constants[v] = cst.result
            return self.constants[v], []
        cast = UnrealizedConversionCastOp.get([v], [host_tensor_type(v.type, before)])
        return cast.results[0], [cast]

    def device(self, v: SSAValue, before: Operation, mask: bool = False) -> SSAValue:
        """The device value of a `!torch.vtensor` value, transferring it if it lives on the host
        (`mask`: a boolean tensor, transferred as 0.0 / 1.0)."""
        owner = v.owner
        if isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type):
            return owner.inputs[0]
        if v in self.on_device:
            return self.on_device[v]
        is_bool = isinstance(v.type, t.ValueTensorType) and v.type.has_dtype and v.type.get_dtype() == IntegerType(1)
        reason = None if mask and is_bool else device_reason(v.type)
        if reason is not None:
            raise NotOnDevice(reason)
        if isinstance(owner, UnrealizedConversionCastOp):  # a host tensor seen as a vtensor
            host = owner.inputs[0]
            new_ops: list[Operation] = []
        else:
            host, new_ops = self._builtin(v, before)
        transfer = spyre.ToDeviceOp(host, spyre.device_tensor_type(shape_of(host)))
        Rewriter.insert_op([*new_ops, transfer], InsertPoint.before(before))
        self.on_device[v] = transfer.result
        return transfer.result

    def host_tensor(self, v: SSAValue, before: Operation) -> SSAValue:
        """The builtin host tensor of a `!torch.vtensor` that lives on the host (indices)."""
        owner = v.owner
        if isinstance(owner, UnrealizedConversionCastOp) and not spyre.is_device_tensor(owner.inputs[0].type):
            return owner.inputs[0]
        if isinstance(owner, UnrealizedConversionCastOp):
            raise NotOnDevice("indices computed on the device")
        host, new_ops = self._builtin(v, before)
        Rewriter.insert_op(new_ops, InsertPoint.before(before))
        return host

    def host(self, v: SSAValue, before: Operation) -> SSAValue:
        """A `!torch.vtensor` value a host op can read (from_device of device values)."""
        owner = v.owner
        if not (isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type)):
            return v
        if v in self.on_host:
            return self.on_host[v]
        back = spyre.FromDeviceOp(owner.inputs[0], host_tensor_type(v.type, before))
        cast = UnrealizedConversionCastOp.get([back.result], [v.type])
        Rewriter.insert_op([back, cast], InsertPoint.before(before))
        self.on_host[v] = cast.results[0]
        return cast.results[0]


def _finish(
    rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation], value: SSAValue | Sequence[SSAValue]
) -> None:
    """Replace `op` by `new_ops`, exposing the device values as op's vtensor results."""
    values = [value] if isinstance(value, SSAValue) else list(value)
    casts = [UnrealizedConversionCastOp.get([v], [r.type]) for v, r in zip(values, op.results)]
    origin = op.attributes.get(spyre.ORIGIN)
    if origin is not None:  # the device ops stand for op (spyre.ORIGIN)
        for new in new_ops:
            new.attributes.setdefault(spyre.ORIGIN, origin)
    rewriter.replace(op, [*new_ops, *casts], [c.results[0] for c in casts])


class Lowering(RewritePattern):
    """A device lowering of some torch ops; `lower` raises NotOnDevice to leave one on the host."""

    lowers: ClassVar[dict[str, str]] = {}
    """The torch ops it lowers, each with what it becomes on the device (`DEVICE_OPS`,
    docs/ops.md)."""

    def __init__(self, border: Border, refused: dict[Operation, str], strict: bool = False):
        self.border = border
        self.refused = refused
        self.strict = strict
        """The pass's `strict`: a choice between the device and the host by cost takes the device."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in self.lowers or op in self.refused:
            return
        for v in op.results:
            reason = device_reason(v.type)
            if reason is not None:
                self.refused[op] = reason
                return
        try:
            ops, value = self.lower(op)
        except NotOnDevice as e:
            self.refused[op] = str(e)
            return
        except InconsistentResult as e:
            raise PassFailedException(f"'{op.name}': {e}") from None
        for got, r in zip([value] if isinstance(value, SSAValue) else value, op.results):
            want = t.sizes_of(r)
            if want is not None and spyre.is_device_tensor(got.type) and shape_of(got) != tuple(want):
                raise PassFailedException(
                    f"'{op.name}': its result type {r.type} is not the shape {shape_of(got)} its operands give"
                )
        _finish(rewriter, op, ops, value)

    def dev(self, v: SSAValue, op: Operation) -> SSAValue:
        return self.border.device(v, op)

    def reshape(self, ops: list[Operation], v: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`movement.reshape`, choosing between the device and the host by cost unless strict."""
        return reshape(ops, v, shape, by_cost=not self.strict)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue | list[SSAValue]]:
        """The device ops standing for `op` and the values of its results (one, or a list)."""
        raise NotImplementedError
