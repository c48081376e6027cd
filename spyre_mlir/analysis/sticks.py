"""Which operands the kernels read as they are, one stick stride per loop (convert-spyre-to-isa's
addressing; the stick arithmetic itself is `spyre_mlir.layout`'s): a matmul's operands in the
generic layout's sticks, and a slice's input."""

from __future__ import annotations

import math
from collections.abc import Sequence

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import slice_loops
from spyre_mlir.layout import Layout, LoopDim, operand_strides


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


def slice_strides(
    op: spyre.SliceOp, loops: Sequence[LoopDim] | None = None, src: Layout | None = None
) -> list[int] | None:
    """The input's stick stride per loop of the result (`slice_loops`), a step multiplying it
    (element r[i] is x[start + i * step]); None when the input's sticks do not hold the
    result's elements, the result's padding reaches past the input's from the start, or a
    stepped dim is split over several of the input's digits. `src`: the input's layout, if
    not its own (what a reader would see of a candidate layout)."""
    src = spyre.device_layout(op.input.type) if src is None else src
    dst = spyre.device_layout(op.result.type)
    loops = slice_loops(op) if loops is None else loops
    strides = operand_strides(dst, src, list(range(len(dst.host_shape))), loops)
    if strides is None:
        return None
    step = op.steps
    for h, s0 in enumerate(op.start.as_tuple()):
        # the strides nest the loops in the input's digits from index 0; from the start on they
        # do only when the start moves the top digit alone (a multiple of its weight), and stay
        # inside the input when the result's last padded coordinate, from the start on, is
        # within the input's padded extent (else the copy reads sticks past the input)
        if src.digits[h] and s0 % max(d.weight for d in src.digits[h]):
            return None
        if s0 + step[h] * (dst.padded_extent(h) - 1) >= src.padded_extent(h):
            return None
    for j, d in enumerate(loops):
        if d.host_dim is None or step[d.host_dim] == 1:
            continue
        if len(src.digits[d.host_dim]) != 1:  # one digit: the stepped elements are evenly spaced sticks
            return None
        strides[j] *= step[d.host_dim]
    return strides
