"""What a kernel's `split` and `chunks` mean: the iteration space of its compute op and how it
is cut, over cores (`split`, spyre-divide-work) and into sequential chunks per core (`chunks`,
spyre-plan-scratchpad). The kernel verifier, the passes and convert-spyre-to-isa read this one
model, so they agree on what a split or a chunk means. The iteration dims of each compute op
(`spyre.iteration_dims`, `spyre.kernel_iteration_dims`):

    matmul       b (batch, bmm), n (output sticks), m (rows), k (contraction sticks; never
                 split over cores)
    pointwise    d0 ... d{r-1}: the output's non-lane device dims (one step = one stick)
    reduce       the output's dims, and r: the reduced sticks (neither split nor chunked)
    gather       n: the rows gathered
    slice        d0 ... : the result's non-lane device dims, cut to nest inside the input's
    restickify   d0 ... : the result's non-lane device dims; when the stick moves to another
                 host dim (a transpose), the dim of the old stick dim advances in blocks of 64

A matmul with a pointwise epilogue iterates as its matmul; a row group (reductions and the
pointwise ops around them) as its reductions (`spyre.RowGroup.dims`).

A split `#spyre.split<m = 4, n = 8>` cuts each named dim into that many near-equal parts
(ceil(size / parts) units each, the last part ragged); cores take the parts in row-major
order of the dims (`core_boxes`), and cores beyond the product stay idle. The kernel's
`chunks` (the same attribute) cut one core's box the same way into parts that the core runs
one after the other (`chunk_boxes`), the last dim fastest.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from spyre_mlir.layout import Layout, LoopDim, loop_dims, operand_strides

Box = dict[str, tuple[int, int]]
"""Half-open range per iteration dim, in units of the dim."""


@dataclass(frozen=True)
class IterDim:
    name: str
    size: int
    """Extent in units."""
    parallel: bool = True
    """May be split over cores."""
    chunkable: bool = True
    """May be cut into sequential chunks on a core."""


def transpose_row_dim(src: Layout, dst: Layout) -> int | None:
    """For a restickify that moves the stick to another host dim, or puts each element of a
    stick in its own stick (a lane scatter: to a sparse or splat layout): the result's device
    dim that steps the source's stick dim one element at a time (it advances in 64-blocks).
    None when the sticks hold the same elements (a pure stick permutation), or for a source
    with one element per stick."""
    if (
        src.is_splat
        or (dst.is_splat and src.stick_dim is None)
        or operand_strides(dst, src, list(range(len(dst.host_shape)))) is not None
    ):
        return None
    hs = src.stick_dim
    for d in loop_dims(dst):
        if d.host_dim == hs and d.weight == 1:
            return d.device_dim
    return None


def lane_gather_dim(src: Layout, dst: Layout) -> int | None:
    """For a restickify from a sparse or splat layout (one element per stick, in lane 0 or in
    every lane: what a reduction along the stick dim leaves) to one sticked on host dim h: h, when the source
    steps h with a single digit (h's elements sit in evenly spaced sticks); else None. Such a
    relayout gathers lane 0 of up to 64 sticks into one stick: an SFP transpose of a block of
    `rows` sticks that writes one stick."""
    if not (src.is_sparse or src.is_splat) or dst.is_sparse or dst.is_splat or dst.stick_dim is None:
        return None
    h = dst.stick_dim
    return h if len(src.digits[h]) == 1 else None


def lane_scatter_dim(src: Layout, dst: Layout) -> int | None:
    """For a restickify from a layout sticked on host dim h to one element per stick (sparse,
    or a splat: the element in every lane): h; else None. Such a relayout writes lane j of a
    source stick to lane 0 of a stick of its own: an SFP transpose of one stick per block."""
    if src.is_sparse or src.is_splat or not (dst.is_sparse or dst.is_splat) or src.stick_dim is None:
        return None
    return src.stick_dim


def restickify_loops(src: Layout, dst: Layout) -> list[LoopDim]:
    """The result's loops, cut to nest inside the source's digits (the stick dims of a
    transposition excepted: blocks handle them)."""
    identity = list(range(len(dst.host_shape)))
    if transpose_row_dim(src, dst) is None:
        return loop_dims(dst, [(src, identity)])
    keep = frozenset(h for h in (src.stick_dim, dst.stick_dim) if h is not None)
    return loop_dims(dst, [(src, identity)], keep)


def even_split(dims: Sequence[IterDim], cores: int) -> dict[str, int]:
    """Parts per dim: repeatedly double the parallel dim with the most units per part,
    while the product of parts fits the cores; parts are then trimmed so none is empty."""
    counts = {d.name: 1 for d in dims}
    while True:
        best = None
        for d in dims:
            if not d.parallel:
                continue
            c = counts[d.name]
            per = math.ceil(d.size / c)
            nxt = min(d.size, c * 2)
            if per <= 1 or math.prod(counts.values()) // c * nxt > cores:
                continue
            if best is None or per > best[1]:
                best = (d, per, nxt)
        if best is None:
            break
        counts[best[0].name] = best[2]
    return {d.name: math.ceil(d.size / math.ceil(d.size / counts[d.name])) for d in dims}


def parts(size: int, count: int) -> list[tuple[int, int]]:
    """Near-equal consecutive parts of range(size): ceil(size / count) units each."""
    per = math.ceil(size / count)
    return [(lo, min(size, lo + per)) for lo in range(0, size, per)]


def core_boxes(dims: Sequence[IterDim], split: dict[str, int], cores: int) -> list[Box | None]:
    """The box of each core (None: idle)."""
    per_dim = [parts(d.size, split.get(d.name, 1)) for d in dims]
    boxes: list[Box | None] = []
    for combo in itertools.product(*per_dim):
        boxes.append({d.name: r for d, r in zip(dims, combo)})
    if len(boxes) > cores:
        raise ValueError(f"split {split} needs {len(boxes)} cores, the device has {cores}")
    return boxes + [None] * (cores - len(boxes))


def box_count(dims: Sequence[IterDim], split: dict[str, int]) -> int:
    """How many cores a split keeps busy (core_boxes' boxes that are not None)."""
    return math.prod(len(parts(d.size, split.get(d.name, 1))) for d in dims)


def chunk_boxes(box: Box, dims: Sequence[IterDim], chunks: dict[str, int]) -> list[Box]:
    """The sequential chunks of one core's box, in loop order (dims order, last fastest)."""
    per_dim = []
    for d in dims:
        lo, hi = box[d.name]
        per_dim.append([(lo + a, lo + b) for a, b in parts(hi - lo, chunks.get(d.name, 1))])
    return [{d.name: r for d, r in zip(dims, combo)} for combo in itertools.product(*per_dim)]


def max_chunk(dims: Sequence[IterDim], boxes: Sequence[Box | None], chunks: dict[str, int]) -> dict[str, int]:
    """The largest chunk extent per dim over all cores (what LX buffers must hold)."""
    out = {d.name: 0 for d in dims}
    for box in boxes:
        if box is None:
            continue
        for d in dims:
            lo, hi = box[d.name]
            out[d.name] = max(out[d.name], math.ceil((hi - lo) / chunks.get(d.name, 1)))
    return out
