"""Which layouts the kernels read as they are (convert-spyre-to-isa's addressing; the stick
arithmetic itself is `spyre_mlir.layout`'s)."""

from __future__ import annotations

import math

from spyre_mlir.layout import Layout


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
