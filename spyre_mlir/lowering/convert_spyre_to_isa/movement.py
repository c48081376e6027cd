"""The data movement kernels' instructions per core: gathers and scatters of rows at host indices, slices,
concats, and restickifies (stick permutations, 64 x 64 block transposes, lane gathers, splats).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.sticks import slice_strides
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import slice_loops
from spyre_mlir.dialects.spyre.iteration import (
    Box,
    chunk_boxes,
    lane_gather_dim,
    lane_scatter_dim,
    restickify_loops,
    transpose_row_dim,
)
from spyre_mlir.layout import Layout, LoopDim, digit_stride, loop_dims, loop_strides, operand_strides
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import (
    Ins,
    compact,
    gather_rows,
    load,
    reduce,
    scatter_rows,
    store,
    transpose,
)
from spyre_mlir.lowering.convert_spyre_to_isa.kernel import CoreCode, lowers
from spyre_mlir.lowering.convert_spyre_to_isa.plan import KernelPlan
from spyre_mlir.target.constants import F16_LANES, TRANSPOSE_BLOCK


@lowers(spyre.GatherOp)
def lower_gather(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Each core gathers its rows (all their sticks) into LX, then stores them in place."""
    op = plan.compute
    assert isinstance(op, spyre.GatherOp)
    res = spyre.device_layout(op.result.type)
    sticks = op.row_sticks
    s_row, s_t = digit_stride(res, 0, 1), digit_stride(res, 1, F16_LANES)
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        n0, n1 = ch["n"]
        rows = n1 - n0
        out.append(
            gather_rows(plan.arg(op.table), plan.arg(op.indices), n0, rows, sticks, plan.lx["rows"], [sticks, 1])
        )
        out.append(store(plan.arg(op.result), plan.lx["rows"], [sticks, 1], n0 * s_row, [s_row, s_t], [rows, sticks]))
    return CoreCode(out)


@lowers(spyre.ScatterOp)
def lower_scatter(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Each core DMAs its rows of values into LX, then out into the destination at the host's
    row indices. The program's output is the destination's buffer (`spyre.in_place`): the
    other rows stay as they are, unread and uncopied."""
    op = plan.compute
    assert isinstance(op, spyre.ScatterOp)
    vals = spyre.device_layout(op.values.type)
    sticks = -(-vals.shape[2] // vals.lanes)
    steps = vals.dim_stick_steps()
    assert steps is not None  # rows_by_strides (checked by plan.kernel_plan)
    s_o, s_n, s_c = steps
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        (o0, o1), (n0, n1) = ch["o"], ch["n"]
        rows = n1 - n0
        for o in range(o0, o1):
            lx = plan.lx["rows"] + (o - o0) * rows * sticks
            out.append(load(plan.arg(op.values), o * s_o + n0 * s_n, [s_n, s_c], lx, [sticks, 1], [rows, sticks]))
            out.append(scatter_rows(plan.arg(op.result), plan.arg(op.indices), n0, o, rows, sticks, lx, [sticks, 1]))
    return CoreCode(out)


@lowers(spyre.SliceOp)
def lower_slice(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Copy the box: DMA in through the input's layout from the start, DMA out."""
    op = plan.compute
    assert isinstance(op, spyre.SliceOp)
    src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
    dims = slice_loops(op)
    s = slice_strides(op, dims)
    if s is None:
        raise PassFailedException(
            f"kernel {plan.name}: 'spyre.slice' of {src.describe()} from {list(op.start.as_tuple())} into {dst.describe()}: "
            "the input's sticks do not hold the result's by one stride per loop from the start on (run spyre-propagate-layouts first)"
        )
    origin = src.element_stick(op.start.as_tuple())
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        lo = [ch[d.name][0] for d in dims]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
        out += _copy_box(plan, plan.arg(op.input), origin + sum(l * x for l, x in zip(lo, s)), s, lo, ext, dims)
    return CoreCode(out)


def _copy_box(
    plan: KernelPlan,
    arg: int,
    base: int,
    strides: Sequence[int],
    lo: Sequence[int],
    ext: Sequence[int],
    dims: Sequence[LoopDim],
) -> list[Ins]:
    """A box of `ext` units per loop DMAed into LX from argument `arg` (at stick `base`, by
    `strides`) and out to the kernel's result at its loop coordinates `lo`."""
    tile = compact(ext)
    return [
        load(arg, base, strides, plan.lx["tile"], tile, ext),
        store(
            plan.arg(plan.compute.results[0]),
            plan.lx["tile"],
            tile,
            sum(x * d.stick_stride for x, d in zip(lo, dims)),
            [d.stick_stride for d in dims],
            ext,
        ),
    ]


@lowers(spyre.ConcatOp)
def lower_concat(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Each input's part of the chunk (`concat_parts`, `part_of_chunk`): DMA in from the
    input, DMA out at the result's coordinate."""
    op = plan.compute
    assert isinstance(op, spyre.ConcatOp)
    dims = loop_dims(spyre.device_layout(op.result.type))
    at, parts = concat_parts(plan, op, dims)
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        lo = [ch[d.name][0] for d in dims]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
        for part in parts:
            if (share := part_of_chunk(part, at, lo, ext)) is not None:
                base, plo, pext = share
                out += _copy_box(plan, part.arg, base, part.strides, plo, pext, dims)
    return CoreCode(out)


class ConcatPart(NamedTuple):
    """Where one input of a concat is read from, over the loops of the concat's result."""

    arg: int
    """The kernel argument: the input, or the input of the slice the input is (in the kernel)."""
    origin: int
    """The stick of the argument the part starts at (a slice's start)."""
    strides: list[int]
    """The argument's stick stride per loop."""
    first: int
    end: int
    """The part's units [first, end) along the loop of the concat's dim."""


def concat_parts(plan: KernelPlan, cat: spyre.ConcatOp, dims: Sequence[LoopDim]) -> tuple[int | None, list[ConcatPart]]:
    """The loop of `dims` (the loops of a value placed as the concat's result) along the
    concat's dim (None: no loop is), and each non-empty input's part. Along the stick dim the
    loop counts sticks, and every offset is a whole number of them. A part that is a slice in
    the kernel (spyre.sliced_concat, spyre.pointwise_sliced_inputs) is DMAed from the slice's
    input, from the stick of its start, through that input's strides (`slice_strides`).
    Refused: the dim split over several loops, an offset inside a unit of its loop, a slice
    whose input's sticks do not hold the part by one stride per loop."""
    d = cat.dim.value.data
    along = [j for j, loop in enumerate(dims) if loop.host_dim == d]
    if len(along) > 1:
        raise Unsupported(f"kernel {plan.name}: the concat's dim {d} is {len(along)} loops, not one")
    at = along[0] if along else None
    unit = 1 if at is None else dims[at].weight
    parts = []
    for v, offset in zip(cat.inputs, cat.offsets()):
        extent = spyre.device_layout(v.type).shape[d]
        if not extent:
            continue
        if offset % unit:
            raise Unsupported(
                f"kernel {plan.name}: the concat's part at {offset} along dim {d} starts inside a unit of {unit} of its loop"
            )
        sl = v.owner
        if isinstance(sl, spyre.SliceOp):
            strides = slice_strides(sl, dims)
            if strides is None:
                raise Unsupported(
                    f"kernel {plan.name}: the concat's part 'spyre.slice' of {spyre.device_layout(sl.input.type).describe()} "
                    f"from {list(sl.start.as_tuple())}: the input's sticks do not hold it by one stride per loop of the concat"
                )
            origin = spyre.device_layout(sl.input.type).element_stick(sl.start.as_tuple())
            parts.append(
                ConcatPart(plan.arg(sl.input), origin, strides, offset // unit, offset // unit + -(-extent // unit))
            )
        else:
            src = spyre.device_layout(v.type)
            parts.append(
                ConcatPart(plan.arg(v), 0, loop_strides(src, dims), offset // unit, offset // unit + -(-extent // unit))
            )
    return at, parts


def part_of_chunk(
    part: ConcatPart, at: int | None, lo: Sequence[int], ext: Sequence[int]
) -> tuple[int, list[int], list[int]] | None:
    """A part's share of a chunk (`lo`, `ext` units per loop): the stick of the part's argument
    it starts at, its first unit and extent per loop; None if the chunk holds none of it."""
    plo, pext = list(lo), list(ext)
    src_lo = list(lo)
    if at is not None:
        a, b = max(lo[at], part.first), min(lo[at] + ext[at], part.end)
        if a >= b:
            return None
        plo[at], pext[at], src_lo[at] = a, b - a, a - part.first
    return part.origin + sum(x * y for x, y in zip(src_lo, part.strides)), plo, pext


@lowers(spyre.RestickifyOp)
def lower_restickify(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """A relayout by the pair of layouts: a lane scatter (to one element per stick, or its
    splat), to or from a splat, a lane gather, a stick permutation (both layouts' sticks hold
    the same elements), or block transposes."""
    op = plan.compute
    assert isinstance(op, spyre.RestickifyOp)
    src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
    if lane_scatter_dim(src, dst) is not None:
        return CoreCode(_lane_scatter(plan, box, src, dst))
    if dst.is_splat or (src.is_splat and dst.is_sparse):
        return CoreCode(_splat(plan, box, src, dst))
    if lane_gather_dim(src, dst) is not None:
        return CoreCode(_lane_gather(plan, box, src, dst))
    if transpose_row_dim(src, dst) is None:
        return CoreCode(_stick_permutation(plan, box, src, dst))
    return CoreCode(_block_transpose(plan, box, src, dst))


def _splat(plan: KernelPlan, box: Box, src: Layout, dst: Layout) -> list[Ins]:
    """One element per stick -> the element in every lane (an SFP max over lane 0), or
    back (a splat already holds lane 0: a copy)."""
    op = plan.compute
    assert isinstance(op, spyre.RestickifyOp)

    def lane0(lay: Layout) -> Layout | None:  # one element per stick, in lane 0 (a splat has it there too)
        if not (lay.is_splat or lay.is_sparse):
            return None
        return Layout(lay.shape, lay.element_bytes, lay.device_size, (*lay.stride_map[:-1], -1))

    dims = restickify_loops(src, dst)
    s_dst, s_src = lane0(dst), lane0(src)
    s = (
        None
        if s_dst is None or s_src is None
        else operand_strides(s_dst, s_src, list(range(len(dst.host_shape))), dims)
    )
    if s is None:
        raise Unsupported(f"kernel {plan.name}: 'spyre.restickify' {src} to the splat {dst} is not supported yet")
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        lo = [ch[d.name][0] for d in dims]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
        tile = compact(ext)
        strides = [d.stick_stride for d in dims]
        out.append(load(plan.arg(op.input), sum(l * x for l, x in zip(lo, s)), s, plan.lx["tile"], tile, ext))
        if dst.is_splat:
            out.append(
                reduce("max", (plan.lx["tile"], [*tile, 0], False), (plan.lx["tile"], [*tile, 0], False), [*ext, 1], 1)
            )
        out.append(
            store(plan.arg(op.result), plan.lx["tile"], tile, sum(l * x for l, x in zip(lo, strides)), strides, ext)
        )
    return out


def _lane_gather(plan: KernelPlan, box: Box, src: Layout, dst: Layout) -> list[Ins]:
    """Sparse (one element per stick, lane 0) -> sticked on host dim h (spyre.iteration.lane_gather_dim):

    for each chunk of result sticks, and each uniform part of h's 64-blocks (rows =
    64, or what the last block holds):
        DMA the rows source sticks of every result stick in   ([stick][row] in LX)
        sfp_transpose blocks = result sticks, rows, cols = 1   (lane i <- stick i's lane 0)
        DMA the result sticks out
    """
    op = plan.compute
    assert isinstance(op, spyre.RestickifyOp)
    h = lane_gather_dim(src, dst)
    assert h is not None
    dims = restickify_loops(src, dst)
    tile = next((i for i, d in enumerate(dims) if d.host_dim == h and d.weight == TRANSPOSE_BLOCK), None)
    strides = _source_strides(src, dims, ragged=tile)
    if strides is None:
        raise _refused(plan, src, dst, ": the source's sticks cannot be matched")
    (digit,) = src.digits[h]
    step = src.stick_strides[digit.device_dim]  # sticks between consecutive elements of h
    extent = src.host_shape[h]
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        lo = [ch[d.name][0] for d in dims]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
        pieces = [(0, 0, extent)] if tile is None else _ragged_split(lo[tile], lo[tile] + ext[tile], extent)
        for p0, p1, rows in pieces:
            plo, pext = list(lo), list(ext)
            if tile is not None:
                plo[tile], pext[tile] = p0, p1 - p0
            blocks = math.prod(pext)
            out.append(
                load(
                    plan.arg(op.input),
                    sum(l * x for l, x in zip(plo, strides)),
                    [*strides, step],
                    plan.lx["src"],
                    compact([*pext, rows]),
                    [*pext, rows],
                )
            )
            out.append(transpose((plan.lx["src"], [rows, 1]), (plan.lx["dst"], [1, 1]), blocks, rows, 1))
            out.append(
                store(
                    plan.arg(op.result),
                    plan.lx["dst"],
                    compact(pext),
                    sum(l * d.stick_stride for l, d in zip(plo, dims)),
                    [d.stick_stride for d in dims],
                    pext,
                )
            )
    return out


def _lane_scatter(plan: KernelPlan, box: Box, src: Layout, dst: Layout) -> list[Ins]:
    """Sticked on host dim h -> one element per stick (spyre.iteration.lane_scatter_dim), in
    lane 0 (sparse) or in every lane (a splat: what a broadcast along the stick reads):

    for each chunk, and each uniform part of h's 64-blocks (cols = 64, or what the last
    block holds):
        DMA the source stick of every block in                 ([block] in LX)
        sfp_transpose blocks, rows = 1, cols                   (stick j's lane 0 <- lane j)
        a splat: sfp_reduce_max over lane 0 of each stick      (into every lane)
        DMA the result sticks out
    """
    op = plan.compute
    assert isinstance(op, spyre.RestickifyOp)
    hs = src.stick_dim
    row_dim = transpose_row_dim(src, dst)
    src_hs = src.digits[hs] if hs is not None else ()
    err = _refused(plan, src, dst, ": the source's sticks cannot be matched")
    if hs is None or row_dim is None or len(src_hs) > 2 or (len(src_hs) == 2 and src_hs[1].weight != TRANSPOSE_BLOCK):
        raise err
    dims = restickify_loops(src, dst)
    others = [d for d in dims if d.device_dim != row_dim]
    src_other = _source_strides(src, others)
    if src_other is None:
        raise err
    sr_tile = src.stick_strides[src_hs[1].device_dim] if len(src_hs) == 2 else 0
    row = next(d for d in dims if d.device_dim == row_dim)
    st_r = row.stick_stride
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        o_lo = [ch[d.name][0] for d in others]
        o_ext = [ch[d.name][1] - ch[d.name][0] for d in others]
        a0, a1 = ch[row.name]
        base_src = sum(lo * s for lo, s in zip(o_lo, src_other))
        base_dst = sum(lo * d.stick_stride for lo, d in zip(o_lo, others))
        for p0, p1, cols in _ragged_split(a0, a1, src.host_shape[hs]):
            blk = [*o_ext, p1 - p0]
            blocks = math.prod(blk)
            lx_dst = [*compact(blk, cols), 1]
            out.append(
                load(
                    plan.arg(op.input),
                    base_src + p0 * sr_tile,
                    [*src_other, sr_tile],
                    plan.lx["src"],
                    compact(blk),
                    blk,
                )
            )
            out.append(transpose((plan.lx["src"], [1, 1]), (plan.lx["dst"], [cols, 1]), blocks, 1, cols))
            if dst.is_splat:
                out.append(
                    reduce(
                        "max",
                        (plan.lx["dst"], [*lx_dst, 0], False),
                        (plan.lx["dst"], [*lx_dst, 0], False),
                        [*blk, cols, 1],
                        1,
                    )
                )
            out.append(
                store(
                    plan.arg(op.result),
                    plan.lx["dst"],
                    lx_dst,
                    base_dst + p0 * TRANSPOSE_BLOCK * st_r,
                    [*[d.stick_stride for d in others], TRANSPOSE_BLOCK * st_r, st_r],
                    [*blk, cols],
                )
            )
    return out


def _refused(plan: KernelPlan, src: Layout, dst: Layout, why: str) -> Unsupported:
    """A relayout between these layouts that the lowering does not take, `why` ending the text."""
    return Unsupported(
        f"kernel {plan.name}: 'spyre.restickify' {src.shape} from device_size {list(src.device_size)}, stride_map "
        f"{list(src.stride_map)} to {list(dst.device_size)}, {list(dst.stride_map)}{why}"
    )


def _stick_permutation(plan: KernelPlan, box: Box, src: Layout, dst: Layout) -> list[Ins]:
    """Same elements per stick: DMA each chunk in through the source's strides, out through
    the result's."""
    op = plan.compute
    assert isinstance(op, spyre.RestickifyOp)
    dims = restickify_loops(src, dst)
    s = operand_strides(dst, src, list(range(len(dst.host_shape))), dims)
    if s is None:
        raise _refused(plan, src, dst, ": the sticks cannot be matched")
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        lo = [ch[d.name][0] for d in dims]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
        tile = compact(ext)
        out.append(load(plan.arg(op.input), sum(l * x for l, x in zip(lo, s)), s, plan.lx["tile"], tile, ext))
        out.append(
            store(
                plan.arg(op.result),
                plan.lx["tile"],
                tile,
                sum(l * d.stick_stride for l, d in zip(lo, dims)),
                [d.stick_stride for d in dims],
                ext,
            )
        )
    return out


def _block_transpose(plan: KernelPlan, box: Box, src: Layout, dst: Layout) -> list[Ins]:
    """The stick moved to another host dim: DMA 64 x 64 blocks in ([stick][row]), SFP block
    transposes, DMA the transposed blocks out; short last blocks along either dim in parts
    of their own (`_ragged_split`)."""
    op = plan.compute
    assert isinstance(op, spyre.RestickifyOp)
    hs, hd = src.stick_dim, dst.stick_dim
    row_dim = transpose_row_dim(src, dst)
    err = _refused(plan, src, dst, " is not supported yet")
    if hs is None or hd is None or row_dim is None:
        raise err
    src_hd, src_hs, dst_hs = src.digits[hd], src.digits[hs], dst.digits[hs]
    Xs, Xd = src.host_shape[hs], dst.host_shape[hd]
    # the result's stick dim in several source digits: one block holding them all, each a loop
    digits = sorted(src_hd, key=lambda d: -d.weight)
    one_block = len(src_hd) > 1 and Xd <= TRANSPOSE_BLOCK and math.prod(d.size for d in src_hd) == Xd
    if (
        (len(src_hd) != 1 and not one_block)
        or len(dst_hs) != 1
        or len(src_hs) > 2
        or (len(src_hs) == 2 and src_hs[1].weight != TRANSPOSE_BLOCK)
    ):
        raise err
    st_src = src.stick_strides
    sr_hd = 0 if one_block else st_src[src_hd[0].device_dim]
    rows_strides = [st_src[d.device_dim] for d in digits] if one_block else [sr_hd]
    rows_lx = compact([d.size for d in digits]) if one_block else [1]
    sr_tile = st_src[src_hs[1].device_dim] if len(src_hs) == 2 else 0
    dims = restickify_loops(src, dst)
    tile_dim = next((d.device_dim for d in dims if d.host_dim == hd and d.weight == TRANSPOSE_BLOCK), None)
    others = [d for d in dims if d.device_dim not in (row_dim, tile_dim)]
    src_other = _source_strides(src, others)
    if src_other is None:
        raise err
    by_dim = {d.device_dim: d for d in dims}
    st_R = by_dim[row_dim].stick_stride
    st_T = by_dim[tile_dim].stick_stride if tile_dim is not None else 0
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        o_lo = [ch[d.name][0] for d in others]
        o_ext = [ch[d.name][1] - ch[d.name][0] for d in others]
        a0, a1 = ch[by_dim[row_dim].name]
        b0, b1 = ch[by_dim[tile_dim].name] if tile_dim is not None else (0, 1)
        a_parts = _ragged_split(a0, a1, Xs)  # (lo, hi, cols) per uniform part
        b_parts = _ragged_split(b0, b1, Xd)  # (lo, hi, rows)
        for pa0, pa1, cols in a_parts:
            for pb0, pb1, rows in b_parts:
                blk = [*o_ext, pa1 - pa0, pb1 - pb0]
                blocks = math.prod(blk)
                lx_blk = compact(blk, TRANSPOSE_BLOCK)
                base_o_src = sum(l * s for l, s in zip(o_lo, src_other))
                base_o_dst = sum(l * d.stick_stride for l, d in zip(o_lo, others))
                out.append(
                    load(
                        plan.arg(op.input),
                        base_o_src + pa0 * sr_tile + pb0 * TRANSPOSE_BLOCK * sr_hd,
                        [*src_other, sr_tile, TRANSPOSE_BLOCK * sr_hd, *rows_strides],
                        plan.lx["src"],
                        [*lx_blk, *rows_lx],
                        [*blk, *([d.size for d in digits] if one_block else [rows])],
                    )
                )
                out.append(
                    transpose(
                        (plan.lx["src"], [TRANSPOSE_BLOCK, 1]),
                        (plan.lx["dst"], [TRANSPOSE_BLOCK, 1]),
                        blocks,
                        rows,
                        cols,
                    )
                )
                out.append(
                    store(
                        plan.arg(op.result),
                        plan.lx["dst"],
                        [*lx_blk, 1],
                        base_o_dst + pa0 * TRANSPOSE_BLOCK * st_R + pb0 * st_T,
                        [*[d.stick_stride for d in others], TRANSPOSE_BLOCK * st_R, st_T, st_R],
                        [*blk, cols],
                    )
                )
    return out


def _source_strides(src: Layout, loops: Sequence[LoopDim], ragged: int | None = None) -> list[int] | None:
    """The source's stick stride per loop of a result (0 for a synthetic loop): the stride of
    the source digit of the loop's host dim that holds all its steps (its step a multiple of
    the digit's weight, its span within the digit's: for loop `ragged`, whose last block the
    caller cuts to the extent (`_ragged_split`), its last start); None if no digit holds them."""
    out = []
    for i, d in enumerate(loops):
        if d.host_dim is None:
            out.append(0)
            continue
        span = d.weight * (d.size - 1) + (1 if i == ragged else d.weight)
        match = next(
            (
                od
                for od in src.digits[d.host_dim]
                if od.weight <= d.weight and span <= od.weight * od.size and d.weight % od.weight == 0
            ),
            None,
        )
        if match is None:
            return None
        out.append(src.stick_strides[match.device_dim] * (d.weight // match.weight))
    return out


def _ragged_split(lo: int, hi: int, extent: int) -> list[tuple[int, int, int]]:
    """Blocks [lo, hi) of 64 along a dim of `extent`: the full blocks, then the short last one.

    `lo` and `hi` count blocks from the dim's start (absolute). The callers' block loops are:
    a transpose's result row dim is one digit (`_block_transpose` refuses others), and a loop
    above a 64-block loop of the stick dim is refused by `_source_strides` unless its span fits
    the source's single digit, whose size is the extent (Layout.verify: no whole slice of
    padding), i.e. unless the extent is a multiple of 64, when every block is full anyway."""
    full_hi = min(hi, extent // TRANSPOSE_BLOCK)
    parts = []
    if full_hi > lo:
        parts.append((lo, full_hi, TRANSPOSE_BLOCK))
    if hi > full_hi:
        parts.append((max(lo, full_hi), hi, extent - TRANSPOSE_BLOCK * max(lo, full_hi)))
    return parts
