"""`convert-torch-to-spyre`: choose, op by op, where each torch op runs, select spyre ops for
those that run on the device, and place the host <-> device border.

    device   torch ops with a lowering below, on float tensors of static, non-empty shape
    host     everything else stays a torch op and runs on the CPU (PyTorch eager):
               by design   ops on integer/boolean tensors (indices, masks, positions), as on
                           the real stack
               fallback    float ops without a lowering yet (reported; `strict=true` refuses)

    func args, torch literals     host values; spyre.to_device right before the first device use
    device value -> host op       spyre.from_device right before the host op
    func.return                   spyre.from_device of device results, in the original dtype

Lowerings (one pattern per op family; each op's entry in `DEVICE_OPS` says what it becomes):

    mm, addmm, linear             spyre.matmul (+ one spyre.pointwise for bias, alpha, beta)
    t, permute, transpose         spyre.permute (a free view: same bytes, permuted layout)
    view, reshape, _unsafe_view   spyre.reshape (a free view; restickify first if needed)
    clone                         its input (value semantics)
    cat                           spyre.concat (transposed off the stick dim when pieces end inside a stick)
    element-wise ops              spyre.pointwise with a body of arith/math scalar ops

Values cross between `!torch.vtensor` and builtin tensors through
`builtin.unrealized_conversion_cast` (a type-only bridge the host executor passes through).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    FunctionType,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrealizedConversionCastOp,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.cost import host_round_trip_seconds, relayout_seconds
from spyre_mlir.analysis.sticks import slice_strides
from spyre_mlir.analysis.views import transfer_permutation
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout
from spyre_mlir.target.config import DEFAULT_CONFIG
from spyre_mlir.target.constants import F16_LANES, lanes_for

HOST_FLOAT_TYPES = (Float32Type, Float16Type, BFloat16Type)
"""Host element types the device path accepts (they become DL16 on the device)."""


class NotOnDevice(Exception):
    """Raised by a lowering that cannot take this instance of its op: the op stays on the host."""


class InconsistentResult(Exception):
    """Raised by a lowering whose op's declared result type disagrees with what its operands
    give (the torch dialect's verifiers check only some ops): a diagnostic naming the op."""


# region Helpers: types, scalars, pointwise bodies


def is_vtensor(v: SSAValue) -> TypeGuard[SSAValue[t.ValueTensorType]]:
    return isinstance(v.type, t.ValueTensorType)


def host_tensor_type(vt: Attribute, where: Operation) -> TensorType:
    """The builtin host tensor type of a `!torch.vtensor` (any dtype)."""
    dtype = vt.get_dtype() if isinstance(vt, t.ValueTensorType) else None
    if not isinstance(vt, t.ValueTensorType) or not vt.has_sizes or dtype is None:
        raise PassFailedException(f"'{where.name}': {vt} is not a ranked tensor with a known dtype")
    if any(d < 0 for d in vt.get_shape()):
        raise PassFailedException(f"'{where.name}': dynamic shape {vt} is not supported (shapes must be static)")
    return TensorType(dtype, vt.get_shape())


def device_reason(vt: Attribute) -> str | None:
    """Why a tensor of this type cannot live on the device (None: it can)."""
    if not isinstance(vt, t.ValueTensorType) or not vt.has_sizes or not vt.has_dtype:
        return f"{vt} is not a ranked tensor with a known dtype"
    shape = vt.get_shape()
    if any(d < 0 for d in shape):
        return f"dynamic shape {vt} (shapes must be static)"
    if any(d == 0 for d in shape):
        return f"empty tensor {vt}"
    if not isinstance(vt.get_dtype(), HOST_FLOAT_TYPES):
        return f"dtype {vt.get_dtype()} of {vt} (f32, f16 and bf16 become DL16; integers and booleans stay on the host)"
    return None


def pointwise(inputs: Sequence[SSAValue], shape: Sequence[int], body: Callable[..., SSAValue]) -> spyre.PointwiseOp:
    """spyre.pointwise over `inputs` whose body is built by `body(*block_args)` with arith/math.

    The result is in the generic layout, or a splat when its full-shape inputs are splats
    (arithmetic on reduction results stays broadcastable) or its last dim is 1 (one element
    per stick: the SFP works on whole vectors, so every lane carries it)."""
    shape = tuple(shape)
    for v in inputs:
        s = _shape(v)
        lane_broadcast = shape and shape[-1] > 1 and (not s or s[-1] == 1)
        if lane_broadcast and not (_layout(v).is_splat or _layout(v).is_sparse) and transfer_permutation(v) is None:
            # v needs each element in every lane of a stick (a splat): the host lays a transfer
            # (or a view of one, e.g. a bias b[:, None]) out so, and the device makes one from an
            # element in lane 0 of its own stick (restickify: an SFP broadcast), but has no
            # relayout that moves an element from another lane to its own stick yet
            raise NotOnDevice(
                f"broadcasting a computed {s} tensor along the stick dim (to {shape}): its elements are not "
                f"one per stick in lane 0, and no device relayout puts them there yet"
            )
    one_per_stick = not shape or shape[-1] == 1  # a generic layout would hold lane 0 only
    for v in inputs:
        lay = _layout(v)
        # (a view of a host transfer is laid out by the host: its relayout folds into the transfer)
        if (
            one_per_stick
            and _shape(v) == shape
            and not (lay.is_splat or lay.is_sparse)
            and transfer_permutation(v) is None
        ):
            # the result is a splat (below); v holds its elements side by side along another dim
            # (e.g. a permute moved an extent-1 dim last), and no device relayout puts each in
            # its own stick yet
            raise NotOnDevice(
                f"a {shape} result from a tensor whose elements sit along the sticks of another dim: "
                f"no device relayout puts them one per stick yet"
            )
    block = Block(arg_types=[f32] * len(inputs))
    with ImplicitBuilder(block):
        result = body(*block.args)
        spyre.YieldOp(result)
    full = [_layout(v) for v in inputs if _shape(v) == shape]
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


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return v.type.get_shape()


def _layout(v: SSAValue) -> Layout:
    return spyre.device_layout(v.type)


def _result_shape(op: Operation) -> tuple[int, ...]:
    vt = op.results[0].type
    assert isinstance(vt, t.ValueTensorType)
    return vt.get_shape()


# endregion
# region The border between host and device


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
        transfer = spyre.ToDeviceOp(host, spyre.device_tensor_type(_shape(host)))
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
    rewriter.replace(op, [*new_ops, *casts], [c.results[0] for c in casts])


class Lowering(RewritePattern):
    """A device lowering of some torch ops; `lower` raises NotOnDevice to leave one on the host."""

    names: tuple[str, ...] = ()

    def __init__(self, border: Border, refused: dict[Operation, str], strict: bool = False):
        self.border = border
        self.refused = refused
        self.strict = strict
        """The pass's `strict`: a choice between the device and the host by cost takes the device."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name not in self.names or op in self.refused:
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
            if want is not None and spyre.is_device_tensor(got.type) and _shape(got) != tuple(want):
                raise PassFailedException(
                    f"'{op.name}': its result type {r.type} is not the shape {_shape(got)} its operands give"
                )
        _finish(rewriter, op, ops, value)

    def dev(self, v: SSAValue, op: Operation) -> SSAValue:
        return self.border.device(v, op)

    def reshape(self, ops: list[Operation], v: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`_reshape`, choosing between the device and the host by cost unless strict."""
        return _reshape(ops, v, shape, by_cost=not self.strict)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue | list[SSAValue]]:
        """The device ops standing for `op` and the values of its results (one, or a list)."""
        raise NotImplementedError


# endregion
# region Views and matmul


def _permute(ops: list[Operation], v: SSAValue, perm: Sequence[int]) -> SSAValue:
    if list(perm) == list(range(len(perm))):
        return v
    layout = _layout(v).permuted(tuple(perm))
    p = spyre.PermuteOp(v, perm, spyre.device_tensor_type(layout.shape, layout))
    ops.append(p)
    return p.result


def _dim(d: int, shape: Sequence[int]) -> int:
    """A dim argument, made non-negative; out of range is the op's error (as in PyTorch)."""
    if not -max(len(shape), 1) <= d < max(len(shape), 1):  # a 0-d tensor takes dim 0 and -1, as in PyTorch
        raise InconsistentResult(f"dim {d} is out of range for shape {tuple(shape)}")
    return d % max(len(shape), 1)


def _reshape(ops: list[Operation], v: SSAValue, shape: Sequence[int], by_cost: bool) -> SSAValue:
    """v reshaped to `shape` as a free view (`spyre.reshape`) of the first layout that allows it:

    v's own layout
    else a restickify of v to the generic layout, or else to a layout sticked along another
         dim (`_transposed_layouts`), that one only if its relayout is estimated cheaper
         than a round trip through the host (`by_cost`; the pass's strict mode turns it off)
    else two reshapes through the shape `_leading_and_last` gives
    else NotOnDevice, saying why (the reshape stays on the host)"""
    shape = tuple(shape)
    if _shape(v) == shape:
        return v
    if math.prod(_shape(v)) != math.prod(shape):
        raise InconsistentResult(
            f"its result shape {shape} does not hold the {math.prod(_shape(v))} elements of {_shape(v)}"
        )
    layout = _layout(v).reshaped(shape)
    costly = ""
    if layout is None:  # not a view of this layout: restickify to the first that it is a view of
        generic = Layout.generic(_shape(v), 2)
        host_s = host_round_trip_seconds(_layout(v), DEFAULT_CONFIG)
        for target in [generic, *_transposed_layouts(_shape(v))]:
            view = target.reshaped(shape)
            if view is None:
                continue
            if target is not generic and by_cost:  # sticked along another dim: only if cheaper than the host
                device_s = relayout_seconds(target, DEFAULT_CONFIG)
                if device_s > host_s:
                    costly = costly or (
                        f"; the layout sticked along dim {target.stick_dim} makes it a view, but relayouting to it "
                        f"(est. {device_s * 1e6:.2f} us) costs more than a round trip through the host (est. {host_s * 1e6:.2f} us)"
                    )
                    continue
            r = spyre.RestickifyOp(v, spyre.device_tensor_type(_shape(v), target))
            ops.append(r)
            v, layout = r.result, view
            break
    if layout is None:
        old = _shape(v)
        why = _why_not_a_view(old, shape) + (
            costly or (", and no layout sticked along another dim makes it a view" if len(old) > 1 else "")
        )
        mid = _leading_and_last(old, shape)
        if mid is not None:  # two reshapes: the leading dims, and the last dim's split or merge
            trial: list[Operation] = []
            try:
                out = _reshape(trial, _reshape(trial, v, mid, by_cost), shape, by_cost)
            except NotOnDevice as e:
                why += f" (nor through {mid}: {e})"
            else:
                ops.extend(trial)
                return out
        raise NotOnDevice(f"reshaping {old} to {shape} {why}")
    rs = spyre.ReshapeOp(v, spyre.device_tensor_type(shape, layout))
    ops.append(rs)
    return rs.result


def _leading_and_last(old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape between two reshapes that change the leading dims apart from the last dim's
    split into (or merge from) trailing dims, when `new` has such trailing dims, or `old`:

        split   old[-1] = prod(new[k:])  ->  new[:k] + (old[-1],)     e.g. (84, 384) -> (7, 12, 384) -> (7, 12, 12, 32)
        merge   new[-1] = prod(old[k:])  ->  old[:k] + (new[-1],)     e.g. (7, 12, 12, 32) -> (7, 12, 384) -> (84, 384)

    or else the last dim's split in two whose first part joins the leading dims (or the
    reverse):

        old[-1] = a * new[-1]  ->  old[:-1] + (a, new[-1])                     e.g. (1, 23, 18) -> (1, 23, 2, 9) -> (46, 9)
        new[-1] = a * old[-1]  ->  new[:-1] + (a, old[-1])                     e.g. (46, 9) -> (23, 2, 9) -> (23, 18)

    (the largest such k; None if none, or if the shape between is one of the two). A head
    split of a batch of short sequences: the rows are no multiple of a stick, so no layout of
    (84, 384) keeps them whole, but one of (7, 12, 384) sticked along the sequence does."""
    if not old or not new:
        return None
    mid = None
    for k in range(len(new) - 1, 0, -1):  # split: old's last dim becomes new[k:]
        if math.prod(new[k:]) == old[-1]:
            mid = (*new[:k], old[-1])
            break
    else:
        for k in range(len(old) - 1, 0, -1):  # merge: old[k:] becomes new's last dim
            if math.prod(old[k:]) == new[-1]:
                mid = (*old[:k], new[-1])
                break
        else:  # the last dim split in two, the first part merged into the leading dims
            if old[-1] % new[-1] == 0 and old[-1] != new[-1]:
                mid = (*old[:-1], old[-1] // new[-1], new[-1])
            elif new[-1] % old[-1] == 0 and old[-1] != new[-1]:
                mid = (*new[:-1], new[-1] // old[-1], old[-1])
    return None if mid in (old, new) else mid


def _transposed_layouts(shape: tuple[int, ...]) -> list[Layout]:
    """The layouts of a tensor sticked along one of its other dims, largest first (the generic
    layout of the tensor with dim j moved last, permuted back): a reshape that splits or merges
    only the last dim is a view of one of them, e.g. an attention head split (128, 384) ->
    (128, 12, 32), whose heads of 32 would each start a new stick in the generic layout. For a
    single row, one sticked along a dim of extent 1, which holds an element per stick: (1, 1, 64)
    -> (1, 1, 4, 16) is a view of no other layout."""
    rank = len(shape)
    out = []
    single_row = all(n == 1 for n in shape[:-1])
    for j in sorted(range(rank - 1), key=lambda j: -shape[j]):
        if shape[j] == 1 and not single_row:
            continue
        perm = [d for d in range(rank) if d != j] + [j]
        moved = Layout.generic(tuple(shape[d] for d in perm), 2)
        out.append(moved.permuted(tuple(perm.index(d) for d in range(rank))))
    return out


def _why_not_a_view(old: tuple[int, ...], new: tuple[int, ...]) -> str:
    """Why a reshape of the generic (16-bit) stick layout is not a free view: a stick holds
    `lanes_for(2)` consecutive elements of the last dim, padded to whole sticks."""
    per_stick = lanes_for(2)
    a, b = (old or (1,))[-1], (new or (1,))[-1]
    if a % per_stick:
        return f"would move stick padding (the last dim {a} is not a multiple of {per_stick} and does not survive)"
    if b % per_stick:
        return (
            f"would move elements into stick padding (the result's last dim {b} is not a multiple of {per_stick}: "
            f"each run of {b} would start a new stick)"
        )
    return f"would split a stick of {per_stick} elements across dims"


class LowerExpand(Lowering):
    """expand materialises the broadcast (a pointwise copy that reads the input with stride 0)."""

    names = ("torch.aten.expand",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        shape = _result_shape(op)
        if _shape(x) == shape:
            return [], x
        try:
            pw = pointwise([x], shape, lambda a: a)
        except NotOnDevice as e:
            ops: list[Operation] = []
            return ops, _expand_across_lanes(ops, x, shape, str(e), by_cost=not self.strict)
        return [pw], pw.result


class LowerViews(Lowering):
    names = (
        "torch.aten.unsqueeze",
        "torch.aten.squeeze.dims",
        "torch.aten.squeeze.dim",
        "torch.aten.t",
        "torch.aten.permute",
        "torch.aten.transpose.int",
        "torch.aten.view",
        "torch.aten.reshape",
        "torch.aten._unsafe_view",
        "torch.aten.clone",
        "torch.aten.alias",
    )

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        rank = len(_shape(x))
        ops: list[Operation] = []
        if op.name in ("torch.aten.clone", "torch.aten.alias"):
            return ops, x
        if op.name == "torch.aten.t":
            return ops, _permute(ops, x, (1, 0)) if rank == 2 else x
        if op.name == "torch.aten.permute":
            dims = t.constant_list_ints(op.operands[1])
            if dims is None:
                raise NotOnDevice("dims are not constant")
            return ops, _permute(ops, x, [d % rank for d in dims])
        if op.name == "torch.aten.transpose.int":
            d0, d1 = t.constant_int_value(op.operands[1]), t.constant_int_value(op.operands[2])
            if d0 is None or d1 is None:
                raise NotOnDevice("dims are not constant")
            perm = list(range(rank))
            perm[d0 % rank], perm[d1 % rank] = perm[d1 % rank], perm[d0 % rank]
            return ops, _permute(ops, x, perm)
        return ops, self.reshape(ops, x, _result_shape(op))


class LowerCopy(Lowering):
    """copy(self, src): src's values in self's shape (aot_autograd's form of a write into a graph
    input, `x.copy_(src)`): src itself where the shapes agree (a device value holds the same
    16-bit values whatever the float dtype)."""

    names = ("torch.aten.copy",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        dest, src = op.operands[0], op.operands[1]
        if tuple(t.vtensor_type(dest).get_shape()) != tuple(t.vtensor_type(src).get_shape()):
            raise NotOnDevice("copy broadcasts its source (the device copies values of one shape)")
        return [], self.dev(src, op)


class LowerMatmul(Lowering):
    """mm, bmm, addmm and linear: spyre.matmul, then bias/alpha/beta in one spyre.pointwise."""

    names = ("torch.aten.mm", "torch.aten.bmm", "torch.aten.addmm", "torch.aten.linear")

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        ops: list[Operation] = []
        xs = None
        if op.name == "torch.aten.bmm":
            a, b = self.dev(op.operands[0], op), self.dev(op.operands[1], op)
            shape = (_shape(a)[0], _shape(a)[1], _shape(b)[2])
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
            xs = _shape(x)
            if len(xs) != 2:  # fold the leading dims into rows
                x = self.reshape(ops, x, (math.prod(xs[:-1]), xs[-1]))
            lhs, rhs, alpha, beta = x, _permute(ops, w, (1, 0)), 1.0, 1.0
        elif op.name == "torch.aten.addmm":
            alpha, beta = scalar_of(op.operands[4], op, "alpha"), scalar_of(op.operands[3], op, "beta")
            lhs, rhs = self.dev(op.operands[1], op), self.dev(op.operands[2], op)
            bias = self.dev(op.operands[0], op) if beta != 0.0 else None
        else:
            lhs, rhs, bias, alpha, beta = self.dev(op.operands[0], op), self.dev(op.operands[1], op), None, 1.0, 1.0
        m, n = _shape(lhs)[0], _shape(rhs)[1]
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


# endregion
# region Element-wise


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

    names = t.ELEMENTWISE_UNARY

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        if op.name == "torch.aten.gelu":
            mode = t.constant_str_value(op.operands[1])
            if mode not in ("none", "tanh"):
                raise NotOnDevice(f'approximate must be a constant "none" or "tanh", got {op.operands[1]}')
            fn: Callable[[SSAValue], SSAValue] = _gelu_erf if mode == "none" else _gelu_tanh
        else:
            fn = UNARY[op.name][0]
        pw = pointwise([x], _shape(x), fn)
        return [pw], pw.result


class LowerBinary(Lowering):
    """add/sub/mul/div/minimum/maximum with a tensor or a scalar; alpha folds into the body."""

    names = t.ELEMENTWISE_BINARY + t.ELEMENTWISE_SCALAR

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        kind = op.name.split(".")[2]
        fn = BINARY[kind][0]
        alpha = scalar_of(op.operands[2], op, "alpha") if kind in ("add", "sub") else 1.0
        shape = _result_shape(op)
        other = op.operands[1]
        if is_vtensor(other):
            if kind in ("div",) and len(op.operands) > 2:
                raise NotOnDevice("div with a rounding mode")
            x, y = self.dev(op.operands[0], op), self.dev(other, op)
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

    names = ("torch.aten.pow.Tensor_Scalar",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        c = scalar_of(op.operands[1], op, "the exponent")
        if not math.isfinite(c):
            raise NotOnDevice(f"exponent {c}")
        if c == int(c) or abs(c) == 0.5:
            raise NotOnDevice(f"exponent {c:g} (torch-adapt rewrites the ones in -2..4 and +-0.5)")
        x = self.dev(op.operands[0], op)
        pw = pointwise([x], _shape(x), lambda a: mathd.ExpOp(mulf(mathd.LogOp(a).result, const(c))).result)
        return [pw], pw.result


class LowerWhere(Lowering):
    """where(cond, x, y): the boolean condition goes to the device as a 0/1 mask and the SFP
    selects (mask != 0 ? x : y), broadcasting all three."""

    names = ("torch.aten.where.self",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        cond, x_v, y_v = op.operands
        if t.vtensor_type(cond).get_dtype() != IntegerType(1):
            raise NotOnDevice("the condition is not boolean")
        m = self.border.device(cond, op, mask=True)
        x, y = self.dev(x_v, op), self.dev(y_v, op)

        def body(c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
            nonzero = arith.CmpfOp(c, const(0.0), "one").result
            return arith.SelectOp(nonzero, a, b).result

        pw = pointwise([m, x, y], _result_shape(op), body)
        return [pw], pw.result


class LowerClamp(Lowering):
    names = ("torch.aten.clamp",)

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

        pw = pointwise([x], _shape(x), body)
        return [pw], pw.result


def _swap(rank: int, i: int, j: int) -> list[int]:
    """The permutation of `rank` dims that swaps dims i and j."""
    perm = list(range(rank))
    perm[i], perm[j] = j, i
    return perm


def _stick_partner(shape: Sequence[int]) -> int | None:
    """The dim a stick dim's elements are transposed to when they must change lanes: the last
    other dim of extent > 1 (None: a single row, see `_as_column`)."""
    return next((d for d in range(len(shape) - 2, -1, -1) if shape[d] > 1), None)


def _generic(ops: list[Operation], v: SSAValue) -> SSAValue:
    """v in the generic layout (a restickify unless it is already)."""
    shape = _shape(v)
    if _layout(v).canonical() == Layout.generic(shape, 2).canonical():
        return v
    r = spyre.RestickifyOp(v, spyre.device_tensor_type(shape))
    ops.append(r)
    return r.result


def _as_column(ops: list[Operation], x: SSAValue) -> SSAValue:
    """A tensor whose dims are all 1 but the stick dim (n), as two columns of n rows,
    (n, 1, ..., 1, 2): x broadcast to two rows (a pointwise copy), viewed with the first and last
    dims swapped, and restickified to the generic layout (a block transpose). Along the rows the stick dim's elements can be sliced and joined at any index."""
    shape = _shape(x)
    two = pointwise_append(ops, [x], (2, *shape), lambda a: a)
    col = _permute(ops, two, _swap(len(shape) + 1, 0, len(shape)))
    r = spyre.RestickifyOp(col, spyre.device_tensor_type(_shape(col)))
    ops.append(r)
    return r.result


def _from_column(ops: list[Operation], col: SSAValue) -> SSAValue:
    """The first column of `_as_column`'s (n, 1, ..., 1, 2), in the generic layout, as a row
    (1, ..., 1, n) of the original rank: lane 0 of each stick (a slice at a stick boundary),
    viewed back; a reader that needs the row's elements side by side restickifies it (a lane
    gather)."""
    shape = _shape(col)
    first = spyre.SliceOp(col, [0] * len(shape), spyre.device_tensor_type((*shape[:-1], 1)))
    ops.append(first)
    row = _permute(ops, first.result, _swap(len(shape), 0, len(shape) - 1))
    return _reshape(ops, row, _shape(row)[1:], by_cost=False)


class LowerSlice(Lowering):
    """slice.Tensor and select.int: spyre.slice of the box (+ a view dropping the dim); a step
    along a dim other than the stick dim strides the copy."""

    names = ("torch.aten.slice.Tensor", "torch.aten.select.int")

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        shape = _shape(x)
        dim = t.constant_int_value(op.operands[1])
        if dim is None:
            raise NotOnDevice("dim is not constant")
        dim = _dim(dim, shape)
        if op.name == "torch.aten.select.int":
            index = t.constant_int_value(op.operands[2])
            if index is None:
                raise NotOnDevice("index is not constant")
            if not -shape[dim] <= index < shape[dim]:
                raise InconsistentResult(f"index {index} is out of range for dim {dim} of {shape}")
            begin, end, step = index % shape[dim], index % shape[dim] + 1, 1
        else:
            begin_v, end_v, step_v = (
                t.constant_int_value(v) if not isinstance(v.type, t.NoneType) else None for v in op.operands[2:5]
            )
            step = step_v or 1
            begin = 0 if begin_v is None else min(max(begin_v + shape[dim] if begin_v < 0 else begin_v, 0), shape[dim])
            end = shape[dim] if end_v is None else min(max(end_v + shape[dim] if end_v < 0 else end_v, 0), shape[dim])
        if step < 1:
            raise InconsistentResult(f"step {step} must be positive")
        select_lanes = op.name == "torch.aten.select.int" and len(shape) > 1  # the kept elements sit one per stick
        ops: list[Operation] = []
        out = self._box(ops, op, x, dim, begin, end, step, select_lanes)
        return ops, self.reshape(ops, out, _result_shape(op))

    def _box(
        self,
        ops: list[Operation],
        op: Operation,
        x: SSAValue,
        dim: int,
        begin: int,
        end: int,
        step: int,
        select_lanes: bool,
    ) -> SSAValue:
        """x's box [begin, end) by step along dim (the dim kept, extent count)."""
        shape = _shape(x)
        count = len(range(begin, end, step))
        if count <= 1:
            step = 1  # one element (or none: an empty result stays on the host)
        last = len(shape) - 1
        perm: list[int] | None = None
        if dim == last and shape[dim] > 1 and (step != 1 or begin % F16_LANES or select_lanes):
            # the kept elements change lanes: transpose the stick dim with another dim (a device
            # block transpose), take the rows there with a strided copy, and transpose back
            partner = _stick_partner(shape)
            if partner is None:  # one row: sliced as a column (`_as_column`)
                col = _as_column(ops, x)
                box = (count, *_shape(col)[1:])
                sl = spyre.SliceOp(
                    col, [begin] + [0] * len(shape), spyre.device_tensor_type(box), [step] + [1] * len(shape)
                )
                ops.append(sl)
                return _from_column(ops, sl.result)
            if count == 1 and op.name == "torch.aten.slice.Tensor":
                raise NotOnDevice(
                    f"a slice of one element of the stick dim at {begin} of {shape}, not at a stick boundary: the "
                    f"elements would sit one per stick, and no device relayout moves them from their lanes there yet"
                )
            perm = _swap(len(shape), partner, last)
            x = _permute(ops, x, perm)
            shape, dim = _shape(x), partner
        box = tuple(count if i == dim else n for i, n in enumerate(shape))
        if box == shape:  # select of an extent-1 dim still drops it (never after the transpose: extent > 1)
            return x
        # a slice reads its input as it is where the input's sticks hold the box's by one
        # stride per loop (a rotary embedding's half of transposed heads), else in the generic
        # layout (spyre-propagate-layouts' rule; the starts are checked against the layout read)
        start = [begin if i == dim else 0 for i in range(len(shape))]
        steps = [step if i == dim else 1 for i in range(len(shape))]
        sl = spyre.SliceOp(x, start, spyre.device_tensor_type(box), steps)
        if slice_strides(sl) is None:
            sl.operands[0] = _generic(ops, x)
        ops.append(sl)
        return sl.result if perm is None else _permute(ops, sl.result, perm)  # a swap undoes itself


class LowerCat(Lowering):
    """cat: spyre.concat of the non-empty pieces. Along the stick dim, when a piece other than
    the last does not end at a stick boundary, the pieces are transposed to another dim (a
    device block transpose each), joined there and transposed back, as a slice of the stick
    dim is (rotary embeddings' halves of a head)."""

    names = ("torch.aten.cat",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        listed = op.operands[0].owner
        if not isinstance(listed, t.PrimListConstructOp):
            raise NotOnDevice("the tensors are not a list built in the graph")
        dim_v = t.constant_int_value(op.operands[1]) if len(op.operands) > 1 else 0
        if dim_v is None:
            raise NotOnDevice("dim is not constant")
        shape = _result_shape(op)
        dim = _dim(dim_v, shape)
        pieces = [
            v
            for v in listed.elements
            if not (isinstance(v.type, t.ValueTensorType) and v.type.has_sizes and 0 in v.type.get_shape())
        ]  # PyTorch skips empty pieces (a 1-d empty tensor of any length among them too)
        if not pieces:
            raise NotOnDevice("every piece is empty")
        xs = [self.dev(v, op) for v in pieces]
        for x in xs:
            if len(_shape(x)) != len(shape) or any(
                a != b for j, (a, b) in enumerate(zip(_shape(x), shape)) if j != dim
            ):
                raise InconsistentResult(
                    f"a piece of shape {_shape(x)} does not fit the result {shape} along dim {dim}"
                )
        if sum(_shape(x)[dim] for x in xs) != shape[dim]:
            raise InconsistentResult(f"the pieces' extents along dim {dim} do not sum to the result's {shape[dim]}")
        ops: list[Operation] = []
        return ops, _concat(ops, xs, dim, shape, by_cost=not self.strict)


def _concat(ops: list[Operation], xs: Sequence[SSAValue], dim: int, shape: tuple[int, ...], by_cost: bool) -> SSAValue:
    """The device tensors `xs` (non-empty, agreeing off `dim`) joined along `dim` into `shape`:
    a spyre.concat; along the stick dim with a piece other than the last ending inside a stick,
    joined along another dim between two transposes (or, for one row, as columns)."""
    if len(xs) == 1:
        return xs[0]
    last = len(shape) - 1
    perm: list[int] | None = None
    if dim == last and any(_shape(x)[dim] % F16_LANES for x in xs[:-1]):
        partner = _stick_partner(shape)
        if partner is None:  # one row (a decode step's): joined as columns (`_as_column`)
            cat = spyre.ConcatOp(
                [_as_column(ops, x) for x in xs], 0, spyre.device_tensor_type((shape[-1], *shape[:-1], 2))
            )
            ops.append(cat)
            return _reshape(ops, _from_column(ops, cat.result), shape, by_cost)
        perm = _swap(len(shape), partner, last)
        xs = [_permute(ops, x, perm) for x in xs]
        dim, shape = partner, tuple(shape[p] for p in perm)
    cat = spyre.ConcatOp(xs, dim, spyre.device_tensor_type(shape))
    ops.append(cat)
    return cat.result if perm is None else _permute(ops, cat.result, perm)


class LowerEmbedding(Lowering):
    """embedding(weight, indices): spyre.gather of the rows, then a free view to the shape."""

    names = ("torch.aten.embedding",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        weight, indices = op.operands[0], op.operands[1]
        index_type = t.vtensor_type(indices).get_dtype()
        if len(t.vtensor_type(weight).get_shape()) != 2 or not (
            isinstance(index_type, IntegerType) and index_type.width.data > 1
        ):
            raise NotOnDevice("embedding needs a 2-D table and integer indices")
        table = self.dev(weight, op)
        idx = self.border.host_tensor(indices, op)
        n = math.prod(_shape(idx))
        g = spyre.GatherOp(table, idx, spyre.device_tensor_type((n, _shape(table)[1])))
        ops: list[Operation] = [g]
        return ops, self.reshape(ops, g.result, _result_shape(op))


class LowerIndexPut(Lowering):
    """index_put(x, [None, ..., idx], v) with one 1-D host integer index tensor at dim d, without
    accumulation (a KV-cache update: HF's `index_copy_` at `cache_position`): x seen as
    (O, L, C) (the dims before d, d, the dims after; a free view) and v as (O, n, C), a
    spyre.scatter of v's rows into x's buffer in place. Only where nothing else reads x: the
    scatter writes its buffer."""

    names = ("torch.aten.index_put",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x, index_list, v, accumulate = op.operands
        if not (isinstance(accumulate.owner, t.ConstantBoolOp) and not accumulate.owner.value.value.data):
            raise NotOnDevice("index_put with accumulate (a scatter-add) has no device lowering yet")
        if not isinstance(index_list.owner, t.PrimListConstructOp):
            raise NotOnDevice("its indices are not a list built in the graph")
        indexed = [i for i, e in enumerate(index_list.owner.elements) if not isinstance(e.owner, t.ConstantNoneOp)]
        shape = tuple(t.vtensor_type(x).get_shape())
        if len(indexed) != 1 or not shape:
            raise NotOnDevice("the device scatters rows along one dim (one index tensor, the others None)")
        d = indexed[0]
        index = index_list.owner.elements[d]
        if not is_vtensor(index) or not _is_int(index) or len(index.type.get_shape()) != 1:
            raise NotOnDevice("the index is not a 1-D integer tensor")
        n = index.type.get_shape()[0]
        if d == len(shape) - 1:
            raise NotOnDevice("rows along the stick dim (the last) are single elements; the device scatters whole rows")
        rows, given = (*shape[:d], n, *shape[d + 1 :]), tuple(t.vtensor_type(v).get_shape())
        if given != rows and not (math.prod(given) == math.prod(rows) and rows[len(rows) - len(given) :] == given):
            raise NotOnDevice(f"values {given} broadcast to the rows {rows}")  # (leading 1s are a view)
        dest = self._written_in_place(x, op)
        o, length, c = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1 :])
        view = _layout(dest).reshaped((o, length, c))
        if view is None or not spyre.rows_by_strides(view):
            raise NotOnDevice(
                f"{shape} seen as (O, L, C) = {(o, length, c)} is not a free view of its layout with rows by strides"
            )
        ops: list[Operation] = []
        dest3 = spyre.ReshapeOp(dest, spyre.device_tensor_type((o, length, c), view))
        ops.append(dest3)
        values = self.reshape(ops, self.dev(v, op), (o, n, c))
        sc = spyre.ScatterOp(dest3.result, self.border.host_tensor(index, op), values)
        back = spyre.ReshapeOp(sc.result, dest.type)
        ops += [sc, back]
        return ops, back.result

    def _written_in_place(self, x: SSAValue, op: Operation) -> SSAValue:
        """x's device value, for a write in place: x read by `op` alone, and that value by nothing
        else, nor a view of another value; or x a host-made constant (zeros of a new cache, which
        cse may have made one value for several: the host executor copies a destination a later
        step reads before writing it, `Executable.copy_first`)."""
        owner = x.owner
        if isinstance(owner, Operation) and owner.name in t.CREATION_OPS:
            return self.dev(x, op)
        if x.uses.get_length() != 1:
            raise NotOnDevice("its destination is read elsewhere too (the device scatter writes it in place)")
        if isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type):
            dest = owner.inputs[0]
            if dest.uses.get_length() != 1 or isinstance(dest.owner, spyre.PermuteOp | spyre.ReshapeOp):
                raise NotOnDevice("its destination is a view of, or read with, another value (written in place)")
            return dest
        if x in self.border.on_device:
            raise NotOnDevice("its destination is read on the device too (the scatter writes it in place)")
        return self.dev(x, op)


# endregion
# region Indexing, repeats and padding: rows at host indices, copies into offsets


def _host_op(
    host: list[Operation], name: str, operands: Sequence[SSAValue], shape: Sequence[int], dtype: Attribute
) -> SSAValue:
    """A torch op on integer/boolean tensors, appended to `host` (index arithmetic runs on the
    host by design)."""
    op = t.torch_op_class(name).create(operands=list(operands), result_types=[t.ValueTensorType(list(shape), dtype)])
    host.append(op)
    return op.results[0]


def _host_int(host: list[Operation], value: int) -> SSAValue:
    c = t.ConstantIntOp(value)
    host.append(c)
    return c.result


INDEX_TYPES = (IntegerType(64, Signedness.SIGNED), IntegerType(32, Signedness.SIGNED))
"""Element types of index tensors that pick rows (PyTorch's long and int; bool and uint8 are masks)."""


def _row_numbers(host: list[Operation], indices: Sequence[SSAValue], extents: Sequence[int], outer: int) -> SSAValue:
    """Host ops computing the rows of a table (outer * L_0 * ... * L_k-1, C) that index tensors
    i_0 ... i_k-1 pick, for each of the `outer` blocks of L_0 * ... * L_k-1 rows: a tensor
    (outer, B...) (B the indices' broadcast shape; (B...) when outer is 1),

        row[o, b] = o * L_0 * ... * L_k-1 + sum_j w_j[b] * L_j+1 * ... * L_k-1,
        w_j = i_j + L_j if i_j < 0 else i_j          (counted from the end, as in PyTorch)

    and -1 where some w_j is outside [0, L_j) (when that could pick another valid row: k > 1 or
    outer > 1), which the device gather refuses as PyTorch does."""
    zero, one = _host_int(host, 0), _host_int(host, 1)
    guard = len(indices) > 1 or outer > 1
    row: SSAValue | None = None
    bad: SSAValue | None = None
    stride = math.prod(extents)
    picked = _broadcast(*indices)
    for n, (i, extent) in enumerate(zip(indices, extents, strict=True)):
        it = t.vtensor_type(i)
        shape, dtype = it.get_shape(), it.get_dtype()
        assert dtype is not None
        stride //= extent
        bounds = _index_bounds(i)
        others = [v for m, v in enumerate(indices) if m != n]
        if bounds == (0, 0) and others and _broadcast(*others) == picked:
            continue  # all zeros: adds nothing, and the others give the shape
        length = _host_int(host, extent)
        w = i
        if bounds is None or bounds[0] < 0:
            negative = _host_op(host, "torch.aten.lt.Scalar", [i, zero], shape, IntegerType(1))
            wrapped = _host_op(host, "torch.aten.add.Scalar", [i, length, one], shape, dtype)
            w = _host_op(host, "torch.aten.where.self", [negative, wrapped, i], shape, dtype)
        if guard and (bounds is None or not -extent <= bounds[0] <= bounds[1] < extent):
            low = _host_op(host, "torch.aten.lt.Scalar", [w, zero], shape, IntegerType(1))
            high = _host_op(host, "torch.aten.ge.Scalar", [w, length], shape, IntegerType(1))
            out = _host_op(host, "torch.aten.logical_or", [low, high], shape, IntegerType(1))
            if bad is not None:
                out = _host_op(host, "torch.aten.logical_or", [bad, out], _broadcast(bad, out), IntegerType(1))
            bad = out
        term = w if stride == 1 else _host_op(host, "torch.aten.mul.Scalar", [w, _host_int(host, stride)], shape, dtype)
        row = term if row is None else _host_add(host, row, term, one)
    assert row is not None
    if outer > 1:
        picked = t.vtensor_type(row).get_shape()
        offsets_shape = (outer, *(1 for _ in picked))
        step = math.prod(extents)
        offsets = t.ValueTensorLiteralOp(
            DenseIntOrFPElementsAttr.from_list(
                TensorType(INDEX_TYPES[0], offsets_shape), [o * step for o in range(outer)]
            ),
            t.ValueTensorType(offsets_shape, INDEX_TYPES[0]),
        )
        host.append(offsets)
        row = _host_add(host, offsets.result, row, one)
    if bad is not None:
        dtype = t.vtensor_type(row).get_dtype()
        assert dtype is not None  # an index's
        minus_one = _host_int(host, -1)
        row = _host_op(host, "torch.aten.where.ScalarSelf", [bad, minus_one, row], _broadcast(bad, row), dtype)
    return row


_SAME_VALUES = frozenset(
    f"torch.aten.{name}"
    for name in (
        "unsqueeze",
        "view",
        "reshape",
        "_unsafe_view",
        "expand",
        "clone",
        "squeeze.dim",
        "squeeze.dims",
        "permute",
        "slice.Tensor",
        "select.int",
    )
)
"""Ops whose result holds some of their first operand's values (views and copies)."""


def _index_bounds(v: SSAValue) -> tuple[int, int] | None:
    """Bounds (lo, hi) of an integer tensor's values where the graph fixes them: aranges of
    constants, argmax/argmin (positions along a dim), integer literals, and views, copies and
    sums of those; None where it does not."""
    op = v.owner
    if not isinstance(op, Operation):
        return None
    if op.name in ("torch.aten.arange", "torch.aten.arange.start", "torch.aten.arange.start_step"):
        count = {"torch.aten.arange": 1, "torch.aten.arange.start": 2}.get(op.name, 3)
        args = [t.constant_int_value(a) for a in op.operands[:count]]
        if any(a is None for a in args):
            return None
        values = range(*(a for a in args if a is not None))
        if not values:
            return None
        return (values[0], values[-1]) if values.step > 0 else (values[-1], values[0])  # not a walk of every value
    if op.name in ("torch.aten.argmax", "torch.aten.argmin"):
        shape = t.vtensor_type(op.operands[0]).get_shape()
        dim = t.constant_int_value(op.operands[1]) if len(op.operands) > 1 else None
        extent = math.prod(shape) if dim is None else shape[dim % max(len(shape), 1)] if shape else 1
        return (0, extent - 1) if extent > 0 else None
    if op.name in _SAME_VALUES:
        return _index_bounds(op.operands[0])
    if op.name in ("torch.aten.add.Tensor", "torch.aten.add.Scalar"):
        a = _index_bounds(op.operands[0])
        alpha = t.constant_int_value(op.operands[2])
        b = (c, c) if (c := t.constant_int_value(op.operands[1])) is not None else _index_bounds(op.operands[1])
        if a is None or b is None or alpha is None:
            return None
        ends = (b[0] * alpha, b[1] * alpha)
        return (a[0] + min(ends), a[1] + max(ends))
    if isinstance(op, t.ValueTensorLiteralOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        literal = [int(x) for x in op.value.get_values()]
        return (min(literal), max(literal)) if literal else None
    return None


def _host_add(host: list[Operation], a: SSAValue, b: SSAValue, one: SSAValue) -> SSAValue:
    """a + b on the host, broadcast (int32 with int64 adds in int64)."""
    dtypes = (t.vtensor_type(a).get_dtype(), t.vtensor_type(b).get_dtype())
    dtype = INDEX_TYPES[0] if INDEX_TYPES[0] in dtypes else dtypes[0]
    assert dtype is not None
    return _host_op(host, "torch.aten.add.Tensor", [a, b, one], _broadcast(a, b), dtype)


def _broadcast(*vs: SSAValue) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(t.vtensor_type(v).get_shape() for v in vs)))


class LowerIndex(Lowering):
    """index.Tensor(x, [None, ..., i_0, ..., i_k-1, ...]) with k >= 1 integer index tensors
    broadcasting together to B, and index_select(x, d, i) (B = (len(i),)): rows of x at host
    indices, by spyre.gather,

        r[a..., b..., c...] = x[a..., i_0[b], ..., i_k-1[b], c...]     (indexed dims adjacent)
        r[b..., a..., c...]                                             (not adjacent, as PyTorch)

    x viewed as a table (A * L_0 * ... * L_k-1, C) of rows of the trailing dims' C elements, for
    the A leading elements a; the host computes the rows (`_row_numbers`); the gathered rows
    (A * |B|, C) are viewed as the result. When the indexed dims end with the stick dim, it is
    first swapped with the dim before them (a free view; the gather's table is restickified,
    a block transpose); indexed dims not adjacent are moved first; rows of single elements
    sharing sticks are gathered as columns (`_as_column`)."""

    names = ("torch.aten.index.Tensor", "torch.aten.index_select")

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        shape = tuple(t.vtensor_type(op.operands[0]).get_shape())
        given = self._indices(op, shape)
        dims = sorted(given)
        for j, i in given.items():
            it = t.vtensor_type(i)
            if not it.has_sizes or any(s < 0 for s in it.get_shape()) or it.get_dtype() not in INDEX_TYPES:
                raise NotOnDevice(
                    f"index {j} is {it}, not an int64/int32 tensor of static shape (a boolean or uint8 index is a mask: "
                    "a data-dependent number of rows)"
                )
        try:
            picked = tuple(np.broadcast_shapes(*(t.vtensor_type(given[j]).get_shape() for j in dims)))
        except ValueError:
            raise InconsistentResult("its index tensors do not broadcast together") from None
        if op.name == "torch.aten.index_select":
            picked = (math.prod(picked),)  # a 0-d index keeps the dim, of extent 1
        rank, lead, k = len(shape), dims[0], len(dims)
        x = self.dev(op.operands[0], op)
        ops: list[Operation] = []
        host: list[Operation] = []
        try:
            if dims != list(range(lead, lead + k)):  # B first, then the other dims in order
                rest = [d for d in range(rank) if d not in given]
                out = self._rows(ops, host, _permute(ops, x, dims + rest), 0, [given[j] for j in dims], picked)
            elif lead + k < rank or lead == 0:  # rows of the trailing dims (or of single elements)
                out = self._rows(ops, host, x, lead, [given[j] for j in dims], picked)
            else:  # the stick dim indexed: swapped with dim lead - 1, which then holds the rows
                p = lead - 1
                xs = _permute(ops, x, _swap(rank, p, rank - 1))
                order = [rank - 1, *dims[:-1]]  # the indexed dims as they sit in xs
                out = self._rows(ops, host, xs, p, [given[j] for j in order], picked)
                nb = len(picked)
                # xs's result is (S[:p], B, S[p]): S[p] back before B
                out = _permute(ops, out, [*range(p), p + nb, *range(p, p + nb)])
            lay = _layout(out)
            if len(lay.shape) > 1 and lay.shape[-1] == 1 and not (lay.is_sparse or lay.is_splat):
                raise NotOnDevice(
                    f"a {lay.shape} result whose elements would sit along the sticks of dim {lay.stick_dim}: its "
                    "readers take one element per stick, and no device relayout puts them there yet"
                )
        except NotOnDevice:
            for dead in reversed([*host, *ops]):
                dead.erase(safe_erase=False)  # the indices' uses go with them
            raise
        Rewriter.insert_op(host, InsertPoint.before(op))
        return ops, out

    def _rows(
        self,
        ops: list[Operation],
        host: list[Operation],
        x: SSAValue,
        lead: int,
        indices: Sequence[SSAValue],
        picked: tuple[int, ...],
    ) -> SSAValue:
        """x[a..., i_0[b], ..., i_k-1[b], c...] for indexed dims lead ... lead + k - 1 of x:
        (S[:lead], B, S[lead + k:])."""
        shape, k = _shape(x), len(indices)
        outer, extents, trailing = shape[:lead], shape[lead : lead + k], shape[lead + k :]
        rows, cols = math.prod(outer) * math.prod(extents), math.prod(trailing)
        n = math.prod(outer) * math.prod(picked)
        table, columns = self._table(ops, x, rows, cols)
        row = _row_numbers(host, indices, extents, math.prod(outer))
        cast = UnrealizedConversionCastOp.get([row], [host_tensor_type(row.type, host[-1])])
        host.append(cast)
        g = spyre.GatherOp(table, cast.results[0], spyre.device_tensor_type((n, _shape(table)[1])))
        ops.append(g)
        got = _from_column(ops, g.result) if columns else g.result
        return self.reshape(ops, got, (*outer, *picked, *trailing))

    def _table(self, ops: list[Operation], x: SSAValue, rows: int, cols: int) -> tuple[SSAValue, bool]:
        """x as a gather table (rows, cols) in (or viewed from a transfer into) the generic
        layout; or, when its rows are single elements that share sticks, as two columns of
        `rows` rows (`_as_column`), which the second value says."""
        if cols > 1:
            return self.reshape(ops, x, (rows, cols)), False
        trial: list[Operation] = []
        try:
            table = self.reshape(trial, x, (rows, 1))
        except NotOnDevice:
            pass
        else:
            lay = _layout(table)
            # (one element per stick already, e.g. a reduction's splat viewed: a MoE's routing weights)
            if (
                lay.canonical() == Layout.generic((rows, 1), 2)
                or lay.is_splat
                or transfer_permutation(table) is not None
            ):
                ops.extend(trial)
                return table, False
        return _as_column(ops, self.reshape(ops, x, (rows,))), True

    @staticmethod
    def _indices(op: Operation, shape: tuple[int, ...]) -> dict[int, SSAValue]:
        """The index tensors by the dim they index."""
        if op.name == "torch.aten.index_select":
            if not shape:
                raise NotOnDevice("index_select of a 0-d tensor (one element picked or repeated: nothing to gather)")
            d = t.constant_int_value(op.operands[1])
            if d is None:
                raise NotOnDevice("dim is not constant")
            i = op.operands[2]
            if is_vtensor(i) and i.type.has_sizes and len(i.type.get_shape()) > 1:
                raise InconsistentResult("index_select takes a 0-d or 1-d index")
            return {_dim(d, shape): i}
        listed = op.operands[1].owner
        if not isinstance(listed, t.PrimListConstructOp):
            raise NotOnDevice("its indices are not a list built in the graph")
        given = {j: e for j, e in enumerate(listed.elements) if not isinstance(e.type, t.NoneType)}
        if not given or len(listed.elements) > len(shape):
            raise InconsistentResult(f"{len(listed.elements)} indices for a tensor of rank {len(shape)}")
        return given


class LowerRepeat(Lowering):
    """repeat(x, r): x tiled r_j times along each dim j (x first viewed with leading 1s to
    len(r) dims): a spyre.concat of r_j copies along each dim with r_j > 1 (`_concat`)."""

    names = ("torch.aten.repeat",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        reps = t.constant_list_ints(op.operands[1])
        if reps is None:
            raise NotOnDevice("the repeats are not constant")
        x = self.dev(op.operands[0], op)
        if len(reps) < len(_shape(x)):
            raise InconsistentResult(f"{len(reps)} repeats for a tensor of rank {len(_shape(x))}")
        ops: list[Operation] = []
        shape = (1,) * (len(reps) - len(_shape(x))) + _shape(x)
        x = self.reshape(ops, x, shape)
        if any(r > 1 for r in reps):
            x = _joinable(x)
        for j, r in enumerate(reps):
            if r > 1:
                shape = (*shape[:j], shape[j] * r, *shape[j + 1 :])
                x = _concat(ops, [x] * r, j, shape, by_cost=not self.strict)
        return ops, x


def _joinable(x: SSAValue) -> SSAValue:
    """x, when a concat can read it in the generic layout: a (..., 1) tensor's holds one element
    per stick, and no device relayout moves elements that share sticks there yet."""
    shape, lay = _shape(x), _layout(x)
    if shape and shape[-1] == 1 and not (lay.is_sparse or lay.is_splat) and transfer_permutation(x) is None:
        raise NotOnDevice(
            f"a {shape} tensor whose elements sit along the sticks of dim {lay.stick_dim}: a concat reads one "
            "element per stick, and no device relayout puts them there yet"
        )
    return x


def _filled(ops: list[Operation], shape: Sequence[int], value: float) -> SSAValue:
    """A device tensor of `shape` holding `value`: a host constant, sent once (constants stay
    resident)."""
    host = TensorType(f32, shape)
    cst = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(host, [value] * math.prod(shape)), host)
    transfer = spyre.ToDeviceOp(cst.result, spyre.device_tensor_type(shape))
    ops += [cst, transfer]
    return transfer.result


class LowerConstantPad(Lowering):
    """constant_pad_nd(x, pad, value), pad = (before, after) per dim from the last dim
    backwards: along each padded dim, a spyre.concat of x between blocks of `value`
    (`_filled`)."""

    names = ("torch.aten.constant_pad_nd",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        pads = t.constant_list_ints(op.operands[1])
        if pads is None:
            raise NotOnDevice("the padding is not constant")
        value = scalar_of(op.operands[2], op, "the padding value") if len(op.operands) > 2 else 0.0
        x = self.dev(op.operands[0], op)
        shape = _shape(x)
        if len(pads) % 2 or len(pads) // 2 > len(shape):
            raise InconsistentResult(f"padding {pads} for a tensor of rank {len(shape)}")
        if any(p < 0 for p in pads):
            raise NotOnDevice(f"negative padding {pads} (a crop) has no device lowering yet")
        ops: list[Operation] = []
        if any(pads):
            x = _joinable(x)
        for j in range(len(pads) // 2):
            dim, before, after = len(shape) - 1 - j, pads[2 * j], pads[2 * j + 1]
            if not before and not after:
                continue
            blocks = [(*shape[:dim], n, *shape[dim + 1 :]) for n in (before, after)]
            pieces = [_filled(ops, b, value) if b[dim] else None for b in blocks]
            shape = (*shape[:dim], before + shape[dim] + after, *shape[dim + 1 :])
            x = _concat(ops, [v for v in (pieces[0], x, pieces[1]) if v is not None], dim, shape, not self.strict)
        return ops, x


def _expand_across_lanes(
    ops: list[Operation], x: SSAValue, shape: tuple[int, ...], why: str, by_cost: bool
) -> SSAValue:
    """x (..., 1) broadcast along the stick dim to `shape` (..., w) where its elements are not
    one per stick (`pointwise` refuses it, saying `why`): x with its stick dim swapped with p,
    the result's last other dim of extent > 1, broadcast along p there (a stride-0 read of a
    dim off the stick), and swapped back (a free view sticked along p; a reader that needs the
    result sticked along its last dim restickifies it, a block transpose)."""
    src, rank = _shape(x), len(shape)
    p = _stick_partner(shape)
    if not src or src[-1] != 1 or p is None:
        raise NotOnDevice(why)
    x = _reshape(ops, x, (1,) * (rank - len(src)) + src, by_cost)
    perm = _swap(rank, p, rank - 1)
    try:
        pw = pointwise([_permute(ops, x, perm)], tuple(shape[d] for d in perm), lambda a: a)
    except NotOnDevice:
        raise NotOnDevice(why) from None
    ops.append(pw)
    return _permute(ops, pw.result, perm)


# endregion
# region Reductions and normalisations


def _reduce(ops: list[Operation], x: SSAValue, kind: str, dim: int) -> SSAValue:
    """spyre.reduce along `dim` (keepdim); along the stick dim only."""
    shape = _shape(x)
    dim = _dim(dim, shape)
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

    names = ("torch.aten.mean.dim", "torch.aten.sum.dim_IntList", "torch.aten.amax", "torch.aten.amin")

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

    names = ("torch.aten._softmax",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        dim = t.constant_int_value(op.operands[1])
        if dim is None:
            raise NotOnDevice("dim is not constant")
        ops: list[Operation] = []
        m = _reduce(ops, x, "max", dim)
        e = pointwise([x, m], _shape(x), lambda a, b: mathd.ExpOp(subf(a, b)).result)
        ops.append(e)
        total = _reduce(ops, e.result, "sum", dim)
        y = pointwise([e.result, total], _shape(x), divf)
        ops.append(y)
        return ops, y.result


class LowerLayerNorm(Lowering):
    """native_layer_norm over the last dim: mean, var = mean((x - mean)^2),
    y = (x - mean) * rsqrt(var + eps) * w + b; also returns mean and rstd."""

    names = ("torch.aten.native_layer_norm",)

    def lower(self, op: Operation) -> tuple[list[Operation], list[SSAValue]]:
        x_v, shape_v, w_v, b_v, eps_v = op.operands
        norm = t.constant_list_ints(shape_v)
        x = self.dev(x_v, op)
        if norm is None or len(norm) != 1 or norm[0] != _shape(x)[-1]:
            raise NotOnDevice("normalised shape other than the last dim")
        eps = scalar_of(eps_v, op, "eps")
        w = None if isinstance(w_v.type, t.NoneType) else self.dev(w_v, op)
        b = None if isinstance(b_v.type, t.NoneType) else self.dev(b_v, op)
        ops: list[Operation] = []
        mean = _reduce(ops, x, "mean", -1)
        d = pointwise([x, mean], _shape(x), subf)
        ops.append(d)
        var = _reduce(ops, pointwise_append(ops, [d.result], _shape(x), lambda a: mulf(a, a)), "mean", -1)
        rstd = pointwise([var], _shape(var), lambda v: mathd.RsqrtOp(addf(v, const(eps))).result)
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

        y = pointwise([d.result, rstd.result, *extra], _shape(x), body)
        ops.append(y)
        return ops, [y.result, mean, rstd.result]


def pointwise_append(
    ops: list[Operation], inputs: Sequence[SSAValue], shape: Sequence[int], body: Callable[..., SSAValue]
) -> SSAValue:
    pw = pointwise(inputs, shape, body)
    ops.append(pw)
    return pw.result


# endregion

# region Convolution


def _pieces(ops: list[Operation], v: SSAValue, count: int) -> list[SSAValue]:
    """v cut into `count` equal slices along dim 0."""
    shape = _shape(v)
    size = shape[0] // count
    out: list[SSAValue] = []
    for i in range(count):
        sl = spyre.SliceOp(v, [i * size] + [0] * (len(shape) - 1), spyre.device_tensor_type((size, *shape[1:])))
        ops.append(sl)
        out.append(sl.result)
    return out


def _sum_body(*args: SSAValue) -> SSAValue:
    total = args[0]
    for a in args[1:]:
        total = addf(total, a)
    return total


class LowerConvolution(Lowering):
    """convolution (1-d and 2-d; aot_autograd's `aten.convolution` of conv1d/conv2d) as matmuls
    over strided views of the input, channels last (the channels along the sticks, so that every
    tap is a strided copy along non-stick dims: no lane moves):

        x (N, C, *S) -> (G, N, *S, C/G)      one relayout (a host input's transfer lays it out so)
        zero border  -> spyre.concat with host-built zeros (`_filled`) along each padded spatial dim
        tap k        -> spyre.slice start k * dilation, step stride: (G, N, *O, C/G), viewed (G, M, C/G)
        y            -> (G, M, C_out/G) viewed back as (N, C_out, *O) (a permute)

    The contraction over the taps, by the channels per group:

        C/G whole sticks, or one tap   im2col: the taps side by side along the contraction (whole
                                       sticks each), one spyre.matmul batched over the groups
        otherwise                      the taps stacked (T * G, M, C/G), one batched spyre.matmul
                                       with the weight (T * G, C/G, C_out/G), summed over the taps:
                                       without groups and with C_out whole sticks a matmul by ones
                                       (1, T) (the sum in fp32), else one spyre.pointwise over the
                                       T slices

    A patch embedding (stride = kernel, no padding or dilation, the image tiled exactly, channels
    not whole sticks, fewer rows of patches than taps) needs no taps: the image seen as
    (C * kh, N * Ho * Wo, kw) is a relayout of it (free in a host input's transfer), one batched
    matmul contracts each patch row (kw) and the sum above adds the C * kh rows. A depthwise
    convolution (groups = C = C_out) has no contraction: one spyre.pointwise of
    sum_k x_k * w_k (+ bias) over the taps and the weight's columns.

    Refused (the op runs on the host): transposed convolutions (each input element scatters
    into several outputs) and 3-d ones."""

    names = ("torch.aten.convolution",)

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x_v, w_v, b_v, stride_v, padding_v, dilation_v, transposed_v, _, groups_v = op.operands
        transposed = transposed_v.owner
        if not isinstance(transposed, t.ConstantBoolOp):
            raise NotOnDevice("transposed is not a constant")
        if transposed.value.value.data:
            raise NotOnDevice(
                "a transposed convolution: each input element scatters into several outputs, which no device "
                "lowering expresses yet"
            )
        xs, ws = tuple(t.vtensor_type(x_v).get_shape()), tuple(t.vtensor_type(w_v).get_shape())
        spatial = len(xs) - 2
        if spatial not in (1, 2):
            raise NotOnDevice(f"a {spatial}-d convolution: the device lowers 1-d and 2-d ones")
        params: list[tuple[int, ...]] = []
        for what, v in (("stride", stride_v), ("padding", padding_v), ("dilation", dilation_v)):
            values = t.constant_list_ints(v)
            if values is None:
                raise NotOnDevice(f"{what} is not a constant list")
            params.append(tuple(values * spatial if len(values) == 1 else values))
        stride, padding, dilation = params
        groups = t.constant_int_value(groups_v)
        if groups is None:
            raise NotOnDevice("groups is not constant")
        n, c, *s = xs
        c_out, cg, *k = ws
        o = tuple(_result_shape(op)[2:])
        bias = None if isinstance(b_v.type, t.NoneType) else b_v
        ops: list[Operation] = []
        if groups == c == c_out and cg == 1:
            y = self._depthwise(ops, op, x_v, w_v, bias, xs, k, o, stride, padding, dilation)
            return ops, _permute(ops, y, (0, spatial + 1, *range(1, spatial + 1)))  # (N, *O, C) -> (N, C, *O)
        taps, cog, m = math.prod(k), c_out // groups, n * math.prod(o)
        operands = None
        if (
            groups == 1
            and stride == tuple(k)
            and not any(padding)
            and all(d == 1 for d in dilation)
            and all(si == oi * ki for si, oi, ki in zip(s, o, k))
            and c % F16_LANES
            and math.prod((c, *k[:-1])) < taps
        ):
            trial: list[Operation] = []
            try:
                operands = self._patches(trial, op, x_v, w_v, xs, ws, o)
                ops += trial
            except NotOnDevice:
                operands = None  # the taps below
        if operands is None:
            operands = self._taps(ops, op, x_v, w_v, xs, ws, o, groups, stride, padding, dilation)
        lhs, rhs = operands
        mm = spyre.MatmulOp(lhs, rhs, spyre.device_tensor_type((*_shape(lhs)[:-1], _shape(rhs)[-1])))
        ops.append(mm)
        b = None if bias is None else self._laid_out(ops, bias, op, (groups, 1, cog), (0, 1, 2))
        if _shape(mm.result)[0] != groups:  # taps stacked along the batch
            y = self._sum_taps(ops, mm.result, groups, b)
        else:
            y = mm.result if b is None else pointwise_append(ops, [mm.result, b], (groups, m, cog), addf)
        y = self.reshape(ops, y, (groups, n, *o, cog))
        y = _permute(ops, y, (1, 0, spatial + 2, *range(2, spatial + 2)))  # (N, G, C_out/G, *O)
        return ops, self.reshape(ops, y, (n, c_out, *o))

    def _laid_out(
        self,
        ops: list[Operation],
        v: SSAValue,
        op: Operation,
        shape: Sequence[int],
        perm: Sequence[int],
        final: Sequence[int] | None = None,
    ) -> SSAValue:
        """v (a torch value) seen as `shape`, permuted by `perm` and seen as `final` (default: as
        permuted), in the generic layout: a host tensor's transfer lays it out so (the host
        reshapes and permutes on the way in); a device value is reshaped, permuted (a view) and
        restickified where a view needs it."""
        x = self.dev(v, op)
        permuted = tuple(shape[p] for p in perm)
        final = tuple(final or permuted)
        owner = x.owner
        seen = Layout.generic(final, 2).reshaped(permuted)
        if isinstance(owner, spyre.ToDeviceOp) and owner.permutation is None and seen is not None:
            inverse = tuple(list(perm).index(d) for d in range(len(perm)))
            transfer = spyre.ToDeviceOp(owner.input, spyre.device_tensor_type(tuple(shape), seen.permuted(inverse)))
            ops.append(transfer)
            x = transfer.result
        else:
            x = self.reshape(ops, x, shape)
        x = _generic(ops, _permute(ops, x, perm)) if final == permuted else _permute(ops, x, perm)
        return _generic(ops, self.reshape(ops, x, final))

    def _padded(self, ops: list[Operation], x: SSAValue, first: int, padding: Sequence[int]) -> SSAValue:
        """x with a zero border of `padding[d]` along dim first + d (spyre.concat with host zeros)."""
        for d, p in enumerate(padding):
            if p == 0:
                continue
            shape = list(_shape(x))
            border = _filled(ops, tuple(p if i == first + d else e for i, e in enumerate(shape)), 0.0)
            shape[first + d] += 2 * p
            x = _concat(ops, [border, x, border], first + d, tuple(shape), by_cost=not self.strict)
        return x

    def _windows(
        self,
        ops: list[Operation],
        x: SSAValue,
        first: int,
        kernel: Sequence[int],
        o: Sequence[int],
        stride: Sequence[int],
        dilation: Sequence[int],
    ) -> list[SSAValue]:
        """Per tap (row-major over the kernel), the strided box of x's spatial dims (from `first`)
        that it reads: start tap * dilation, step stride, extent o."""
        rank = len(_shape(x))
        out = []
        for tap in itertools.product(*(range(kd) for kd in kernel)):
            start, steps, box = [0] * rank, [1] * rank, list(_shape(x))
            for d, (i, dl, st, od) in enumerate(zip(tap, dilation, stride, o)):
                start[first + d], steps[first + d], box[first + d] = i * dl, st, od
            if tuple(box) == _shape(x):
                out.append(x)
                continue
            sl = spyre.SliceOp(x, start, spyre.device_tensor_type(box), steps)
            ops.append(sl)
            out.append(sl.result)
        return out

    def _taps(
        self,
        ops: list[Operation],
        op: Operation,
        x_v: SSAValue,
        w_v: SSAValue,
        xs: Sequence[int],
        ws: Sequence[int],
        o: Sequence[int],
        groups: int,
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
    ) -> tuple[SSAValue, SSAValue]:
        """The matmul operands over the taps: im2col (G, M, T * C/G) and (G, T * C/G, C_out/G), or
        the taps stacked (T * G, M, C/G) and (T * G, C/G, C_out/G)."""
        n, c, *s = xs
        c_out, cg, *k = ws
        spatial, taps, cog, m = len(s), math.prod(k), c_out // groups, n * math.prod(o)
        # x (N, C, *S) seen as (N, G, C/G, *S), permuted to (G, N, *S, C/G)
        x = self._laid_out(ops, x_v, op, (n, groups, cg, *s), (1, 0, *range(3, spatial + 3), 2))
        windows = self._windows(ops, self._padded(ops, x, 2, padding), 2, k, o, stride, dilation)
        # w (C_out, C/G, *K) seen as (G, C_out/G, C/G, *K)
        w_shape = (groups, cog, cg, *k)
        if taps == 1 or cg % F16_LANES == 0:  # whole sticks per tap: side by side along the contraction
            cols = _concat(ops, windows, spatial + 2, (groups, n, *o, taps * cg), by_cost=not self.strict)
            w_perm = (0, *range(3, spatial + 3), 2, 1)  # (G, *K, C/G, C_out/G)
            w = self._laid_out(ops, w_v, op, w_shape, w_perm, (groups, taps * cg, cog))
            return self.reshape(ops, cols, (groups, m, taps * cg)), w
        rows = _concat(ops, windows, 0, (taps * groups, n, *o, cg), by_cost=not self.strict)
        w_perm = (*range(3, spatial + 3), 0, 2, 1)  # (*K, G, C/G, C_out/G)
        w = self._laid_out(ops, w_v, op, w_shape, w_perm, (taps * groups, cg, cog))
        return self.reshape(ops, rows, (taps * groups, m, cg)), w

    def _patches(
        self,
        ops: list[Operation],
        op: Operation,
        x_v: SSAValue,
        w_v: SSAValue,
        xs: Sequence[int],
        ws: Sequence[int],
        o: Sequence[int],
    ) -> tuple[SSAValue, SSAValue]:
        """The matmul operands of a patch embedding: the image as (C * K[:-1], M, K[-1]) and the
        weight as (C * K[:-1], K[-1], C_out)."""
        n, c, *s = xs
        c_out, _, *k = ws
        spatial = len(s)
        rows, m = math.prod((c, *k[:-1])), n * math.prod(o)
        # x (N, C, *S) seen as (N, C, O0, K0, ...), permuted to (C, K0, .., N, O0, .., K_last)
        tiled = (n, c, *(e for od, kd in zip(o, k) for e in (od, kd)))
        kernel_dims = [3 + 2 * d for d in range(spatial)]
        perm = (1, *kernel_dims[:-1], 0, *(2 + 2 * d for d in range(spatial)), kernel_dims[-1])
        x = self._laid_out(ops, x_v, op, tiled, perm, (rows, m, k[-1]))
        # w (C_out, C, *K) permuted to (C, *K, C_out)
        w = self._laid_out(ops, w_v, op, ws, (*range(1, spatial + 2), 0), (rows, k[-1], c_out))
        return x, w

    def _sum_taps(self, ops: list[Operation], z: SSAValue, groups: int, bias: SSAValue | None) -> SSAValue:
        """z (T * G, M, N) summed over T (+ bias (G, 1, N)): (G, M, N)."""
        tg, m, n = _shape(z)
        taps = tg // groups
        if groups == 1 and n % F16_LANES == 0:  # rows of whole sticks: a matmul by ones sums them in fp32
            flat = self.reshape(ops, z, (taps, m * n))
            mm = spyre.MatmulOp(_filled(ops, (1, taps), 1.0), flat, spyre.device_tensor_type((1, m * n)))
            ops.append(mm)
            y = self.reshape(ops, mm.result, (1, m, n))
            return y if bias is None else pointwise_append(ops, [y, bias], (1, m, n), addf)
        parts = _pieces(ops, z, taps)
        return pointwise_append(ops, [*parts, *([bias] if bias is not None else [])], (groups, m, n), _sum_body)

    def _depthwise(
        self,
        ops: list[Operation],
        op: Operation,
        x_v: SSAValue,
        w_v: SSAValue,
        bias: SSAValue | None,
        xs: Sequence[int],
        k: Sequence[int],
        o: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
    ) -> SSAValue:
        """sum over taps of x_k * w_k (+ bias), channels last: (N, *O, C)."""
        n, c, *s = xs
        spatial, taps = len(s), math.prod(k)
        x = self._laid_out(ops, x_v, op, (n, c, *s), (0, *range(2, spatial + 2), 1))  # (N, *S, C)
        windows = self._windows(ops, self._padded(ops, x, 1, padding), 1, k, o, stride, dilation)
        w = self._laid_out(ops, w_v, op, (c, taps), (1, 0))  # w (C, 1, *K) as (T, C)
        columns = [w] if taps == 1 else _pieces(ops, w, taps)
        extra = [] if bias is None else [self.dev(bias, op)]

        def body(*args: SSAValue) -> SSAValue:
            products = [mulf(a, b) for a, b in zip(args[:taps], args[taps : 2 * taps])]
            return _sum_body(*products, *args[2 * taps :])

        return pointwise_append(ops, [*windows, *columns, *extra], (n, *o, c), body)


# endregion

LOWERINGS: tuple[type[Lowering], ...] = (
    LowerViews,
    LowerCopy,
    LowerExpand,
    LowerEmbedding,
    LowerIndexPut,
    LowerSlice,
    LowerCat,
    LowerIndex,
    LowerRepeat,
    LowerConstantPad,
    LowerMatmul,
    LowerUnary,
    LowerBinary,
    LowerPow,
    LowerClamp,
    LowerWhere,
    LowerReductions,
    LowerSoftmax,
    LowerLayerNorm,
    LowerConvolution,
)

DEVICE_OPS: dict[str, str] = {
    "torch.aten.mm": "spyre.matmul",
    "torch.aten.bmm": "spyre.matmul (batched)",
    "torch.aten.addmm": "spyre.matmul + spyre.pointwise (bias, alpha, beta)",
    "torch.aten.linear": "spyre.matmul (+ spyre.pointwise for the bias); free views around it",
    "torch.aten.t": "spyre.permute (free view)",
    "torch.aten.permute": "spyre.permute (free view)",
    "torch.aten.transpose.int": "spyre.permute (free view)",
    "torch.aten.view": "spyre.reshape (free view)",
    "torch.aten.reshape": "spyre.reshape (free view)",
    "torch.aten._unsafe_view": "spyre.reshape (free view)",
    "torch.aten.clone": "its input (value semantics)",
    "torch.aten.alias": "its input (value semantics)",
    "torch.aten.copy": "its source, of the destination's shape (value semantics)",
    "torch.aten.unsqueeze": "spyre.reshape (free view)",
    "torch.aten.squeeze.dims": "spyre.reshape (free view)",
    "torch.aten.squeeze.dim": "spyre.reshape (free view)",
    "torch.aten.expand": "spyre.pointwise copy (the broadcast is materialised); along the stick dim from elements that share sticks: broadcast along another dim between two transposes",
    "torch.aten.embedding": "spyre.gather: row DMAs at indices the host hands over at launch",
    "torch.aten.index_put": "spyre.scatter: rows at host indices along one dim, written in place into the destination (a KV-cache update); the destination read by nothing else",
    "torch.aten.slice.Tensor": "spyre.slice (a step strides the copy); along the stick dim with a step or off a stick boundary: transposed to another dim, sliced there and transposed back",
    "torch.aten.select.int": "spyre.slice of one row + spyre.reshape dropping the dim; along the stick dim: transposed to another dim first",
    "torch.aten.cat": "spyre.concat (DMA copies of each piece to its offset); along the stick dim with a piece ending inside a stick: transposed to another dim, joined there and transposed back",
    "torch.aten.index.Tensor": "spyre.gather: rows at host indices (integer index tensors on any dims; the row numbers computed on the host) of the tensor with the indexed dims moved first, viewed and permuted to the result",
    "torch.aten.index_select": "spyre.gather: rows at host indices along the dim, as index.Tensor",
    "torch.aten.repeat": "spyre.concat of the copies along each repeated dim (as cat)",
    "torch.aten.constant_pad_nd": "spyre.concat of the tensor between host-built constant blocks (sent once) along each padded dim; negative padding stays on the host",
    "torch.aten.gelu": "spyre.pointwise: erf form (none) or tanh form (tanh)",
    "torch.aten.pow.Tensor_Scalar": "spyre.pointwise exp(c log x) for non-integer c; torch-adapt makes x*x..., sqrt, rsqrt",
    "torch.aten.clamp": "spyre.pointwise: maximumf / minimumf with constants",
    "torch.aten.where.self": "spyre.pointwise: select on the condition (sent as a 0/1 mask); with two scalar values it builds a mask on the host",
    **{name: f"spyre.pointwise: {doc}" for name, (_, doc) in UNARY.items()},
    **{
        f"torch.aten.{k}.{o}": f"spyre.pointwise: {doc}"
        + (" (x * 1, x / 1 fold to x)" if o == "Scalar" and k in ("mul", "div") else "")
        for k, (_, doc) in BINARY.items()
        for o in ("Tensor", "Scalar")
        if k not in ("minimum", "maximum")
    },
    "torch.aten.minimum": "spyre.pointwise: minimumf",
    "torch.aten.maximum": "spyre.pointwise: maximumf",
    "torch.aten.mean.dim": "spyre.reduce mean (last dim, keepdim): a splat result",
    "torch.aten.sum.dim_IntList": "spyre.reduce sum (last dim, keepdim): a splat result",
    "torch.aten.amax": "spyre.reduce max (last dim, keepdim): a splat result",
    "torch.aten.amin": "spyre.reduce min (last dim, keepdim): a splat result",
    "torch.aten._softmax": "spyre.reduce max, spyre.pointwise exp(x - m), spyre.reduce sum, spyre.pointwise divide (last dim)",
    "torch.aten.native_layer_norm": "spyre.reduce mean, spyre.pointwise (x - mean)^2, spyre.reduce mean, rsqrt, normalise (last dim)",
    "torch.aten.convolution": "1-d and 2-d, channels last: each tap a strided spyre.slice (a zero border by spyre.concat), spyre.matmul over the taps side by side or batched per tap and summed, batched over groups; a patch embedding one batched spyre.matmul over a relayout of the image; depthwise one spyre.pointwise multiply-add; transposed and 3-d on the host",
}
"""Every torch op with a device lowering, and what it becomes (docs/ops.md is generated from it)."""


def _is_int(v: SSAValue[t.ValueTensorType]) -> bool:
    """An integer/boolean tensor (or one of unknown dtype); f64 and complex tensors are not:
    those are float data the device cannot take, a CPU fallback to report."""
    return not v.type.has_dtype or isinstance(v.type.get_dtype(), IntegerType)


def _is_tensor_list(v: SSAValue) -> bool:
    """A list of tensors (a split's pieces): data, not a host scalar."""
    return isinstance(v.type, t.ListType) and isinstance(v.type.element_type, t.ValueTensorType)


def _host_by_design(op: Operation) -> tuple[bool, str]:
    """Ops the host runs by design, as the real stack does: index and mask arithmetic on
    integer/boolean tensors, comparisons producing masks, constant creation, and the float copy
    of an integer/boolean tensor (positions for rotary tables: integer data lives on the host,
    the copy is where it crosses to floats)."""
    if op.name in t.CREATION_OPS:
        return True, "a constant made from shapes and numbers (host-built)"
    if HOST_CONSTANT in op.attributes:
        return True, "a constant computed from host-built ones (built once, on the host)"
    if INDEX_ARITHMETIC in op.attributes:
        return True, "float arithmetic on integer data whose result only integer ops read (index building, host)"
    if op.results and not any(is_vtensor(v) or _is_tensor_list(v) for v in op.results):
        return True, "computes a host scalar"
    if op.name == "torch.aten.where.self" and all(v.type.get_shape() == () for v in op.operands[1:] if is_vtensor(v)):
        return True, "builds a mask from a boolean condition and two constants (host)"
    ins = [v for v in op.operands if is_vtensor(v)]
    outs = [v for v in op.results if is_vtensor(v)]
    if (ins or outs) and all(_is_int(v) for v in (*ins, *outs)):
        return True, "integer/boolean tensors stay on the host"
    if outs and all(_is_int(v) for v in outs):
        return True, "computes an integer/boolean mask (host)"
    if op.name in t.DTYPE_CONVERSIONS and ins and all(_is_int(v) for v in ins):
        return True, "a float copy of an integer/boolean tensor (integer data lives on the host)"
    if op.name == "torch.aten.histc" and ins and all(_float_copy_of_int(v) for v in ins):
        return True, "counts integer values held as floats (a MoE's tokens per expert: integer data lives on the host)"
    return False, ""


def _float_copy_of_int(v: SSAValue) -> bool:
    """v is the float copy of an integer/boolean tensor (its values are integers)."""
    owner = v.owner
    return (
        isinstance(owner, Operation)
        and owner.name in t.DTYPE_CONVERSIONS
        and bool(owner.operands)
        and is_vtensor(owner.operands[0])
        and _is_int(owner.operands[0])
    )


HOST_CONSTANT = spyre.HOST_CONSTANT_ATTR

_RANDOM = ("rand", "normal", "bernoulli", "uniform", "dropout", "multinomial")
"""Name parts of ops whose result is not a function of their operands."""


def mark_host_constants(block: Block) -> None:
    """Mark the torch ops whose tensor operands are all constants and at least one of them
    built from shapes and numbers (`t.CREATION_OPS`, or an op marked so): OPT's positions as the
    cumsum of a mask of ones, BLOOM's ALiBi slopes (powers of a constant base), a Llama-4-style
    attention scale from positions. They compute a constant, which the host builds at the first
    call and the device then holds, as it does the creation ops' (runtime/host.py folds every
    op made of constants); on the device they would run at every call, or go to the host and
    back. Literals alone (weights written into the IR) do not count: ops on them stay where
    their lowering puts them."""
    constant: set[SSAValue] = set()
    built: set[SSAValue] = set()
    """Constants made from shapes and numbers."""
    for op in block.ops:
        operands = [
            e for v in op.operands for e in (v.owner.operands if isinstance(v.owner, t.PrimListConstructOp) else [v])
        ]
        if isinstance(op, t.VALUE_OPS) and not isinstance(op, t.PrimListConstructOp):
            constant.update(op.results)
        elif isinstance(op, t.PrimListConstructOp):
            if all(v in constant for v in op.operands):
                constant.update(op.results)
        elif op.name.startswith("torch.") and operands and all(v in constant for v in operands):
            if any(part in op.name for part in _RANDOM):
                continue
            constant.update(op.results)
            if op.name in t.CREATION_OPS:
                built.update(op.results)
            elif any(v in built for v in operands if is_vtensor(v)):
                built.update(op.results)
                op.attributes[HOST_CONSTANT] = UnitAttr()


INDEX_ARITHMETIC = "spyre.index_arithmetic"
"""Marks a float op of index building (`mark_index_arithmetic`): on the host, by design."""


def mark_index_arithmetic(block: Block) -> None:
    """Mark the float ops that compute from integer data alone and whose results only integer
    ops read, through other such ops: index building written in floats, such as T5's and
    MPNet's relative position buckets (the log of a distance, truncated back to an integer).
    They stay on the host with the integer ops around them, as index and mask building does:
    on the device they would cost a round trip for what is integer data on both sides."""
    derived: set[SSAValue] = set()
    """Float values computed from integer data alone."""
    candidates: list[Operation] = []
    for op in block.ops:
        ins = [v for v in op.operands if is_vtensor(v)]
        outs = [v for v in op.results if is_vtensor(v) and not _is_int(v)]
        if ins and outs and all(_is_int(v) or v in derived for v in ins):
            derived.update(outs)
            if not _host_by_design(op)[0]:
                candidates.append(op)
    marked: set[Operation] = set()
    for op in reversed(candidates):  # readers first: a chain is marked from its integer end
        readers = [u.operation for r in op.results for u in r.uses]
        if readers and all(
            r in marked or (_host_by_design(r)[0] and all(_is_int(v) for v in r.results if is_vtensor(v)))
            for r in readers
        ):
            marked.add(op)
            op.attributes[INDEX_ARITHMETIC] = UnitAttr()


def host_ops(ops) -> list[tuple[Operation, str, bool]]:
    """Torch ops left on the host after conversion, as (op, reason, by_design)."""
    found = []
    for op in ops:
        if not op.name.startswith("torch.") or isinstance(op, t.VALUE_OPS) or op.name == "torch.prim.ListUnpack":
            continue
        by_design, why = _host_by_design(op)
        reason = op.attributes.get("spyre.host")
        if reason is not None:
            text = reason.data
        else:
            text = why if by_design else "no device lowering yet"
        found.append((op, text, by_design))
    return found


@dataclass(frozen=True)
class ConvertTorchToSpyrePass(ModulePass):
    """Lower `torch` ops to `spyre` device ops where they can run on the device; the rest stay
    on the host, with transfers at the border."""

    name = "convert-torch-to-spyre"

    strict: bool = False
    """Refuse (naming the op and why) instead of leaving a float op on the host."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                self.convert_function(fn)

    def convert_function(self, fn: func.FuncOp) -> None:
        block = fn.body.block
        # arguments become host tensors seen through casts; literals stay host values
        for arg in list(block.args):
            if is_vtensor(arg):
                torch_type = arg.type
                cast = UnrealizedConversionCastOp.get([arg], [torch_type])
                arg.replace_all_uses_with(cast.results[0])
                new_arg = Rewriter.replace_value_with_new_type(arg, host_tensor_type(torch_type, fn))
                cast.operands[0] = new_arg
                Rewriter.insert_op(cast, InsertPoint.at_start(block))
        border = Border()
        mark_host_constants(block)
        mark_index_arithmetic(block)
        refused: dict[Operation, str] = {
            op: _host_by_design(op)[1] for op in block.ops if {INDEX_ARITHMETIC, HOST_CONSTANT} & op.attributes.keys()
        }
        PatternRewriteWalker(
            GreedyRewritePatternApplier([cls(border, refused, self.strict) for cls in LOWERINGS]),
            apply_recursively=False,
        ).rewrite_region(fn.body)
        for lit in [o for o in block.ops if isinstance(o, t.ValueTensorLiteralOp)]:
            if not lit.result.uses:  # every reader took its arith.constant
                Rewriter.erase_op(lit)
        # what stayed on the host reads host values (also through lists), and says why it is there
        for host_op, reason, _ in host_ops(block.ops):
            host_op.attributes["spyre.host"] = StringAttr(refused.get(host_op, reason))
            for i, v in enumerate(host_op.operands):
                if is_vtensor(v):
                    host_op.operands[i] = border.host(v, host_op)
                elif isinstance(v.owner, t.PrimListConstructOp):
                    lst = v.owner
                    for j, e in enumerate(lst.elements):
                        if is_vtensor(e):
                            lst.operands[j] = border.host(e, lst)
        if self.strict:
            for host_op, reason, by_design in host_ops(block.ops):
                if not by_design:
                    raise Unsupported(
                        f"'{host_op.name}' producing {_types(host_op)} cannot run on the device: {reason}"
                    )
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        results = []
        mutated = {k: j for j, k in spyre.aliased_arguments(fn).items()}
        for i, v in enumerate(list(ret.arguments)):
            if is_vtensor(v):
                host_v = _mirror(v, block.args[mutated[i]], ret) if i in mutated else None
                host_v = host_v or border.host(v, ret)
                cast = UnrealizedConversionCastOp.get([host_v], [host_tensor_type(v.type, ret)])
                Rewriter.insert_op(cast, InsertPoint.before(ret))
                ret.operands[i] = cast.results[0]
            results.append(ret.operands[i].type)
        fn.function_type = FunctionType.from_lists([a.type for a in block.args], results)
        _fold_casts(block)


def _mirror(v: SSAValue, arg: SSAValue, ret: Operation) -> SSAValue | None:
    """The host copy of a mutated argument's new contents `v` when they stay on the device as
    the argument's copy: a `spyre.from_device mirror`, which keeps the caller's tensor equal to
    the device's without a transfer. They do when they are the argument's device copy written in
    place (through views and scatters: a KV cache's update), or a buffer the function computed
    in the layout the function takes the argument in (a sliding-window cache's roll): the host
    executor then keeps that buffer as the argument's copy (runtime/host.py, `adopted`). None
    otherwise: the new contents go to the host."""
    owner = v.owner
    if not (isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type)):
        return None
    dev = root = owner.inputs[0]
    while isinstance(root.owner, spyre.PermuteOp | spyre.ReshapeOp | spyre.ScatterOp):
        root = root.owner.dest if isinstance(root.owner, spyre.ScatterOp) else root.owner.input
    in_place = isinstance(root.owner, spyre.ToDeviceOp) and root.owner.input is arg
    takes = [u.operation for u in arg.uses if isinstance(u.operation, spyre.ToDeviceOp)]
    if not in_place and not any(op.permutation is None and op.result.type == root.type == dev.type for op in takes):
        return None
    back = spyre.FromDeviceOp(dev, host_tensor_type(v.type, ret), mirror=True)
    cast = UnrealizedConversionCastOp.get([back.result], [v.type])
    Rewriter.insert_op([back, cast], InsertPoint.before(ret))
    return cast.results[0]


def _types(op: Operation) -> str:
    return ", ".join(str(r.type) for r in op.results) or "nothing"


def _fold_casts(block: Block) -> None:
    """cast(cast(x)) back to x's type -> x; then drop what is dead."""
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            if isinstance(op, UnrealizedConversionCastOp):
                src = op.inputs[0]
                if isinstance(src.owner, UnrealizedConversionCastOp) and src.owner.inputs[0].type == op.outputs[0].type:
                    op.outputs[0].replace_all_uses_with(src.owner.inputs[0])
                    changed = True
            if isinstance(
                op, (UnrealizedConversionCastOp, arith.ConstantOp, spyre.ToDeviceOp, spyre.FromDeviceOp, *t.VALUE_OPS)
            ) and not any(r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True
