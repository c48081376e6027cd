"""Stick addressing shared by the passes: which stick of one layout holds the elements that
a stick of another layout holds.

Kernels iterate over the non-lane device dims of a *driving* layout (the output's): one
iteration is one stick. For an operand in another layout, `operand_strides` gives, per
driving dim, the operand's stick stride for the same elements (0 where the operand
broadcasts), so that one strided DMA/SFP loop nest addresses both:

    driving stick  c = (c_0, ..., c_n)  at  sum_j c_j * out_stride_j
    operand stick                       at  sum_j c_j * operand_strides[j]

It fails (None) when the operand's sticks do not hold the same elements, i.e. its stick
runs along another host dim (a transpose: restickify with block transposes), its digits
do not nest within the driving ones, or a driving loop runs past the operand's digit (the
driving layout padded past the operand's extent: the loop would read the next coordinate of
an outer digit, or sticks past the tensor). An operand broadcast along the output's stick dim is
readable only in a splat layout (every lane a copy of its element).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from spyre_mlir.layout import Digit, Layout


@dataclass(frozen=True)
class LoopDim:
    """A loop over sticks: a non-lane device dim, or a part of one. It steps host dim
    `host_dim` (None: synthetic) by `weight` elements, `size` times, `stick_stride` sticks apart."""

    device_dim: int
    host_dim: int | None
    weight: int
    size: int
    stick_stride: int
    name: str


def loop_dims(
    layout: Layout,
    refine: Sequence[tuple[Layout, Sequence[int | None]]] = (),
    keep: frozenset[int] = frozenset(),
) -> list[LoopDim]:
    """The non-lane device dims of a layout, outer first, with their stick strides.

    With `refine` = [(operand layout, dim_map), ...], a dim is cut where an operand's digits
    of the same host dim begin or end, so that every loop nests inside one digit of every
    operand (e.g. 16 rows read from a layout that keeps them as 2 x 8 become loops 2 and 8,
    named d1_0 and d1_1). Host dims in `keep` are never cut."""
    strides = layout.stick_strides
    dims: list[LoopDim] = []
    for j in range(len(layout.device_size) - 1):
        owner = layout.host_dim_of(j)
        h, q = owner if owner is not None else (None, 0)
        n, st = layout.device_size[j], strides[j]
        cuts: set[int] = set()
        if h is not None and h not in keep:
            for op_layout, dim_map in refine:
                oh = dim_map[h]
                if oh is None:
                    continue
                for od in op_layout.digits[oh]:
                    for b in (od.weight, od.weight * od.size):
                        if q < b < q * n and b % q == 0:
                            cuts.add(b)
        bounds = sorted({q, q * n} | cuts) if h is not None else []
        if cuts and all(b2 % b1 == 0 for b1, b2 in zip(bounds, bounds[1:])):
            parts = [(b1, b2 // b1) for b1, b2 in zip(bounds, bounds[1:])][::-1]  # outer first
            for k, (w, size) in enumerate(parts):
                dims.append(LoopDim(j, h, w, size, st * (w // q), f"d{j}_{k}"))
        else:
            dims.append(LoopDim(j, h, q, n, st, f"d{j}"))
    return dims


def broadcast_dim_map(out_shape: Sequence[int], in_shape: Sequence[int]) -> list[int | None]:
    """For each output dim, the input dim it reads (numpy broadcasting), None if broadcast."""
    offset = len(out_shape) - len(in_shape)
    result: list[int | None] = []
    for i, n in enumerate(out_shape):
        j = i - offset
        result.append(j if j >= 0 and in_shape[j] == n and n > 1 else None)
    return result


def operand_strides(
    out: Layout, operand: Layout, dim_map: Sequence[int | None], loops: Sequence[LoopDim] | None = None
) -> list[int] | None:
    """Operand stick stride per loop of `out` (its device dims, or the refined `loops`).

    `dim_map[h]` is the operand host dim that output host dim h reads, or None (broadcast).
    """
    if operand.element_bytes != out.element_bytes:
        return None
    if out.is_splat:  # one element per stick, copied in every lane: operands must be splats too
        if not operand.is_splat:
            return None
    elif out.is_sparse:  # one element per stick, in lane 0 (a stick dim of extent 1)
        last = dim_map[len(out.shape) - 1] if out.shape else None
        if not (operand.is_sparse or last is not None and operand.stick_dim == last):
            return None  # (an operand read from its lane 0: a slice from a stick boundary)
    else:
        out_lane = out.stick_dim
        if out_lane is None:
            return None
        op_lane = dim_map[out_lane]
        if op_lane is None:
            # constant along the output's sticks: readable only if every lane holds the value
            if not operand.is_splat:
                return None
        elif operand.stick_dim != op_lane:
            return None
    op_digits = operand.digits
    op_strides = operand.stick_strides
    lane_dev = len(operand.device_size) - 1
    result = []
    for d in loops if loops is not None else loop_dims(out, [(operand, dim_map)]):
        if d.host_dim is None:
            result.append(0)
            continue
        oh = dim_map[d.host_dim]
        if oh is None:
            result.append(0)
            continue
        match = holding_digit(op_digits[oh], d.weight)
        if match is not None and d.weight * d.size > match.weight * match.size:
            match = None  # the loop runs past its digit: into the next coordinate of an outer digit or past the tensor
        if match is None or match.device_dim == lane_dev:
            return None
        result.append(op_strides[match.device_dim] * (d.weight // match.weight))
    return result


def holding_digit(digits: Sequence[Digit], weight: int) -> Digit | None:
    """The digit of a host dim (`Layout.digits[h]`) that a step of `weight` elements steps:
    its weight divides the step, and the step is below its span."""
    return next((d for d in digits if d.weight <= weight < d.weight * d.size and weight % d.weight == 0), None)


def loop_strides(layout: Layout, loops: Sequence[LoopDim]) -> list[int]:
    """`layout`'s stick stride per loop (`digit_stride` of its host dim and weight; 0 for a
    synthetic loop)."""
    return [0 if d.host_dim is None else digit_stride(layout, d.host_dim, d.weight) for d in loops]


def matmul_reads(lay: Layout) -> bool:
    """Whether a matmul reads an operand (or writes its result) in `lay` as it is: the
    kernel steps each dim by one stick stride (convert-spyre-to-isa, which refuses any
    other layout), so the sticks must hold what the generic layout's hold, in any order:

        sticked along the last dim, 64-blocks of it one device dim (or one block)
        every other dim one device dim (or extent 1); other device dims of size 1"""
    if lay.canonical() == Layout.generic(lay.shape, lay.element_bytes).canonical():
        return True
    last = len(lay.host_shape) - 1
    if (
        lay.is_splat
        or lay.is_sparse
        or lay.stick_dim != last
        or lay.stride_map[-1] != 1
        or lay.padded_extent(last) != math.ceil(lay.host_shape[last] / lay.lanes) * lay.lanes
    ):
        return False
    for h, ds in enumerate(lay.digits):
        steps = [d for d in ds if d.device_dim != len(lay.device_size) - 1]  # the lanes aside
        if len(steps) > 1 or steps and steps[0].weight != (lay.lanes if h == last else 1):
            return False
    stepping = {d.device_dim for ds in lay.digits for d in ds}
    return all(n == 1 for j, n in enumerate(lay.device_size[:-1]) if j not in stepping)


def digit_stride(layout: Layout, host_dim: int, weight: int) -> int:
    """Stick stride of a step of `weight` elements along host dim `host_dim` of `layout`: the
    stride of the device dim whose digit holds that step (scaled when the step is a multiple
    of the digit's weight), 0 when the step stays inside a stick or the dim has a single
    coordinate there (extent <= weight). ValueError when no single device dim steps it (the
    dim is split so that a step of `weight` is not one stride)."""
    h = host_dim % len(layout.host_shape)
    last = len(layout.device_size) - 1
    d = holding_digit(layout.digits[h], weight)
    if d is not None:
        return 0 if d.device_dim == last else layout.stick_strides[d.device_dim] * (weight // d.weight)
    if layout.padded_extent(h) > weight:
        raise ValueError(f"host dim {h} of {layout.describe()}: no device dim steps it by {weight}")
    return 0
