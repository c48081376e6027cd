"""Views and data movement the lowerings share: permutes, reshapes (a free view, a relayout
or a refusal by cost), moves off the stick dim through columns, concats, constant blocks."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32
from xdsl.ir import Operation, SSAValue

from spyre_mlir.analysis.cost import host_round_trip_seconds, relayout_seconds
from spyre_mlir.dialects import spyre
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    InconsistentResult,
    NotOnDevice,
    layout_of,
    pointwise_append,
    shape_of,
)
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, lanes_for


def permute(ops: list[Operation], v: SSAValue, perm: Sequence[int]) -> SSAValue:
    if list(perm) == list(range(len(perm))):
        return v
    layout = layout_of(v).permuted(tuple(perm))
    p = spyre.PermuteOp(v, perm, spyre.device_tensor_type(layout.shape, layout))
    ops.append(p)
    return p.result


def positive_dim(d: int, shape: Sequence[int]) -> int:
    """A dim argument, made non-negative; out of range is the op's error (as in PyTorch)."""
    if not -max(len(shape), 1) <= d < max(len(shape), 1):  # a 0-d tensor takes dim 0 and -1, as in PyTorch
        raise InconsistentResult(f"dim {d} is out of range for shape {tuple(shape)}")
    return d % max(len(shape), 1)


def reshape(ops: list[Operation], v: SSAValue, shape: Sequence[int], costs: DeviceConfig | None) -> SSAValue:
    """v reshaped to `shape` as a free view (`spyre.reshape`) of the first layout that allows it:

    v's own layout
    else a restickify of v to the generic layout, or else to a layout sticked along another
         dim (`_transposed_layouts`), that one only if its relayout is estimated cheaper on
         the device `costs` (the module's target) than a round trip through the host (None:
         without asking, the pass's strict mode)
    else two reshapes through the shape `_leading_and_last` gives
    else NotOnDevice, saying why (the reshape stays on the host)"""
    shape = tuple(shape)
    if shape_of(v) == shape:
        return v
    if math.prod(shape_of(v)) != math.prod(shape):
        raise InconsistentResult(
            f"its result shape {shape} does not hold the {math.prod(shape_of(v))} elements of {shape_of(v)}"
        )
    layout = layout_of(v).reshaped(shape)
    costly = ""
    if layout is None:  # not a view of this layout: restickify to the first that it is a view of
        generic = Layout.generic(shape_of(v), 2)
        for target in [generic, *_transposed_layouts(shape_of(v))]:
            view = target.reshaped(shape)
            if view is None:
                continue
            if target is not generic and costs is not None:  # sticked along another dim: only if cheaper than the host
                host_s = host_round_trip_seconds(layout_of(v), costs)
                device_s = relayout_seconds(target, costs)
                if device_s > host_s:
                    costly = costly or (
                        f"; the layout sticked along dim {target.stick_dim} makes it a view, but relayouting to it "
                        f"(est. {device_s * 1e6:.2f} us) costs more than a round trip through the host (est. {host_s * 1e6:.2f} us)"
                    )
                    continue
            r = spyre.RestickifyOp(v, spyre.device_tensor_type(shape_of(v), target))
            ops.append(r)
            v, layout = r.result, view
            break
    if layout is None:
        old = shape_of(v)
        why = _why_not_a_view(old, shape) + (
            costly or (", and no layout sticked along another dim makes it a view" if len(old) > 1 else "")
        )
        mid = _leading_and_last(old, shape)
        if mid is not None:  # two reshapes: the leading dims, and the last dim's split or merge
            trial: list[Operation] = []
            try:
                out = reshape(trial, reshape(trial, v, mid, costs), shape, costs)
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


def swap(rank: int, i: int, j: int) -> list[int]:
    """The permutation of `rank` dims that swaps dims i and j."""
    perm = list(range(rank))
    perm[i], perm[j] = j, i
    return perm


def stick_partner(shape: Sequence[int]) -> int | None:
    """The dim a stick dim's elements are transposed to when they must change lanes: the last
    other dim of extent > 1 (None: a single row, see `as_column`)."""
    return next((d for d in range(len(shape) - 2, -1, -1) if shape[d] > 1), None)


def to_generic(ops: list[Operation], v: SSAValue) -> SSAValue:
    """v in the generic layout (a restickify unless it is already)."""
    shape = shape_of(v)
    if layout_of(v).canonical() == Layout.generic(shape, 2).canonical():
        return v
    r = spyre.RestickifyOp(v, spyre.device_tensor_type(shape))
    ops.append(r)
    return r.result


def as_column(ops: list[Operation], x: SSAValue) -> SSAValue:
    """A tensor whose dims are all 1 but the stick dim (n), as two columns of n rows,
    (n, 1, ..., 1, 2): x broadcast to two rows (a pointwise copy), viewed with the first and last
    dims swapped, and restickified to the generic layout (a block transpose). Along the rows the stick dim's elements can be sliced and joined at any index."""
    shape = shape_of(x)
    two = pointwise_append(ops, [x], (2, *shape), lambda a: a)
    col = permute(ops, two, swap(len(shape) + 1, 0, len(shape)))
    r = spyre.RestickifyOp(col, spyre.device_tensor_type(shape_of(col)))
    ops.append(r)
    return r.result


def from_column(ops: list[Operation], col: SSAValue) -> SSAValue:
    """The first column of `as_column`'s (n, 1, ..., 1, 2), in the generic layout, as a row
    (1, ..., 1, n) of the original rank: lane 0 of each stick (a slice at a stick boundary),
    viewed back; a reader that needs the row's elements side by side restickifies it (a lane
    gather)."""
    shape = shape_of(col)
    first = spyre.SliceOp(col, [0] * len(shape), spyre.device_tensor_type((*shape[:-1], 1)))
    ops.append(first)
    row = permute(ops, first.result, swap(len(shape), 0, len(shape) - 1))
    return reshape(ops, row, shape_of(row)[1:], costs=None)


def concat(
    ops: list[Operation], xs: Sequence[SSAValue], dim: int, shape: tuple[int, ...], costs: DeviceConfig | None
) -> SSAValue:
    """The device tensors `xs` (non-empty, agreeing off `dim`) joined along `dim` into `shape`:
    a spyre.concat; along the stick dim with a piece other than the last ending inside a stick,
    joined along another dim between two transposes (or, for one row, as columns)."""
    if len(xs) == 1:
        return xs[0]
    last = len(shape) - 1
    perm: list[int] | None = None
    if dim == last and any(shape_of(x)[dim] % F16_LANES for x in xs[:-1]):
        partner = stick_partner(shape)
        if partner is None:  # one row (a decode step's): joined as columns (`as_column`)
            cat = spyre.ConcatOp(
                [as_column(ops, x) for x in xs], 0, spyre.device_tensor_type((shape[-1], *shape[:-1], 2))
            )
            ops.append(cat)
            return reshape(ops, from_column(ops, cat.result), shape, costs)
        perm = swap(len(shape), partner, last)
        xs = [permute(ops, x, perm) for x in xs]
        dim, shape = partner, tuple(shape[p] for p in perm)
    cat = spyre.ConcatOp(xs, dim, spyre.device_tensor_type(shape))
    ops.append(cat)
    return cat.result if perm is None else permute(ops, cat.result, perm)


def constant(ops: list[Operation], values: Sequence[float], shape: Sequence[int]) -> SSAValue:
    """A device tensor of `shape` holding `values` (row-major): a host constant, sent once."""
    host = TensorType(f32, shape)
    cst = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(host, list(values)), host)
    transfer = spyre.ToDeviceOp(cst.result, spyre.device_tensor_type(shape))
    ops += [cst, transfer]
    return transfer.result


def filled(ops: list[Operation], shape: Sequence[int], value: float) -> SSAValue:
    """A device tensor of `shape` holding `value`: a host constant, sent once (constants stay
    resident)."""
    host = TensorType(f32, shape)
    cst = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(host, [value] * math.prod(shape)), host)
    transfer = spyre.ToDeviceOp(cst.result, spyre.device_tensor_type(shape))
    ops += [cst, transfer]
    return transfer.result
