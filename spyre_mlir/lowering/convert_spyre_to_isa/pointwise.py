"""The SFP kernels' instructions per core: pointwise ops (one SFP instruction per body op),
reductions along the stick dim, and row groups (reductions and pointwise ops on the same
rows, their intermediates in LX).
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.sfp import pointwise_program
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import pointwise_loops, reduce_tile_dim
from spyre_mlir.dialects.spyre.iteration import Box, chunk_boxes
from spyre_mlir.layout import LoopDim, loop_dims, loop_strides
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins, compact, load, reduce, sfp, store
from spyre_mlir.lowering.convert_spyre_to_isa.kernel import CoreCode, lowers
from spyre_mlir.lowering.convert_spyre_to_isa.movement import ConcatPart, concat_parts, part_of_chunk
from spyre_mlir.lowering.convert_spyre_to_isa.plan import KernelPlan
from spyre_mlir.target.constants import F16_LANES


@lowers(spyre.PointwiseOp)
def lower_pointwise(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Per chunk: DMA each input tile in (broadcast dims not loaded), one SFP instruction per
    body op (f32 temporaries), DMA the output tile out; a resident input is read, and a
    resident result written, in the core's whole box in LX instead; an input that is a sliced
    concat in the kernel is DMAed part by part from its slices' inputs (`_sliced_parts`)."""
    op = plan.compute
    assert isinstance(op, spyre.PointwiseOp)
    dims, strides_in = pointwise_loops(op)
    steps, _ = pointwise_program(op)
    lx = plan.lx
    result: list[Ins] = []
    resident: dict[str, tuple[int, int]] = {}
    sliced = {i: _sliced_parts(plan, op.inputs[i], dims) for i in plan.sliced_inputs}  # input i: (its loop, parts)
    # a resident value (spyre-onchip-relayout) is the core's whole box, dense, in LX
    box_lo = [box[d.name][0] for d in dims]
    box_ext = [box[d.name][1] - box[d.name][0] for d in dims]
    box_strides = compact(box_ext)
    for count, ch in enumerate(chunk_boxes(box, plan.dims, plan.chunks), start=1):
        lo = [ch[d.name][0] for d in dims]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
        tile = compact(ext)
        in_box = sum((l - b) * s for l, b, s in zip(lo, box_lo, box_strides))
        access: dict[tuple[str, int], tuple[int, list[int], bool]] = {("out", 0): (plan.buf("out", count), tile, False)}
        if plan.resident_out is not None:
            access[("out", 0)] = (plan.resident_out + in_box, box_strides, False)
            resident["spyre.resident_out"] = (plan.resident_out, plan.resident_out + math.prod(box_ext))
        for i, v in enumerate(op.inputs):
            if plan.resident_in is not None and plan.resident_in[0] == i:
                if any(a != d.stick_stride for a, d in zip(strides_in[i], dims) if d.size > 1):
                    raise PassFailedException(
                        f"kernel {plan.name}: input {i} is resident in LX but not in the output's layout"
                    )
                access[("in", i)] = (plan.resident_in[1] + in_box, box_strides, False)
                resident["spyre.resident_in"] = (plan.resident_in[1], plan.resident_in[1] + math.prod(box_ext))
                continue
            if i in sliced:  # after the other inputs: a part may be copied from one's tile
                continue
            s = strides_in[i]
            kept = [j for j in range(len(dims)) if s[j] != 0]
            in_tile = compact([ext[j] for j in kept])
            base = sum(lo[j] * s[j] for j in range(len(dims)))
            if kept:
                result.append(
                    load(
                        plan.arg(v),
                        base,
                        [s[j] for j in kept],
                        plan.buf(f"in{i}", count),
                        in_tile,
                        [ext[j] for j in kept],
                    )
                )
            else:  # a single stick broadcast everywhere
                result.append(load(plan.arg(v), base, [1], plan.buf(f"in{i}", count), [1], [1]))
            full = [0] * len(dims)
            for pos, j in enumerate(kept):
                full[j] = in_tile[pos]
            access[("in", i)] = (plan.buf(f"in{i}", count), full, False)
        for i in sliced:  # each part's share of the tile, from its slice's input
            at, parts = sliced[i]
            tile_in, buf = compact(ext), plan.buf(f"in{i}", count)
            for part in parts:
                if (share := part_of_chunk(part, at, lo, ext)) is None:
                    continue
                src, plo, pext = share
                dst = buf + sum((x - y) * t for x, y, t in zip(plo, lo, tile_in))
                held = _held_in_tile(plan, op, dims, strides_in, part, at, src, lo, ext, pext, sliced, count)
                if held is not None:  # the tile of another input holds it: an SFP copy, not a DMA
                    result.append(sfp("copy", [(held, tile_in, False)], (dst, tile_in, False), pext))
                else:
                    result.append(load(part.arg, src, part.strides, dst, tile_in, pext))
            access[("in", i)] = (buf, tile_in, False)
        for name, base in lx.items():
            if name.startswith("t") and not name.endswith("_1"):
                access[("t", int(name[1:]))] = (base, [2 * s for s in tile], True)
        for st in steps:
            result.append(sfp(st.fn, [access[s] for s in st.srcs], access[st.dst], ext, st.imm))
        if plan.resident_out is None:
            out_base = sum(l * d.stick_stride for l, d in zip(lo, dims))
            result.append(
                store(plan.arg(op.result), plan.buf("out", count), tile, out_base, [d.stick_stride for d in dims], ext)
            )
    return CoreCode(result, resident)


def _held_in_tile(
    plan: KernelPlan,
    op: spyre.PointwiseOp,
    dims: list[LoopDim],
    strides_in: list[list[int]],
    part: ConcatPart,
    at: int | None,
    src: int,
    lo: list[int],
    ext: list[int],
    pext: list[int],
    sliced: dict,
    count: int,
) -> int | None:
    """The LX stick where the tile of another input of the pointwise op, loaded from DDR for
    this chunk, holds a sliced input's part starting at DDR stick `src` of its argument (the
    rotary embedding's swapped halves of t, when t's whole head is in the tile: t * cos +
    cat(t[h:], t[:h]) * sin' reads t once); None where no tile does. The part's slice starts
    along the concat's loop only (its origin, decoded by the loops' strides, steps no other
    loop), so the offset from the tile's
    first stick is along that loop."""
    if at is None or plan.resident_in is not None:
        return None
    tile = compact(ext)
    s_at = part.strides[at]
    rem = part.origin  # the origin's units per loop, widest stride first
    for k in sorted(range(len(dims)), key=lambda k: -part.strides[k]):
        if part.strides[k] > 0:
            units, rem = divmod(rem, part.strides[k])
            if units and k != at or units >= dims[k].size:
                return None
    if s_at <= 0 or rem:
        return None
    for j, v in enumerate(op.inputs):
        if j in sliced or plan.arg(v) != part.arg or list(strides_in[j]) != list(part.strides):
            continue
        if any(s == 0 and n > 1 for s, n in zip(strides_in[j], ext)):  # its tile is not the whole chunk
            continue
        offset = src - sum(x * s for x, s in zip(lo, part.strides))
        if offset % s_at:
            continue
        first = offset // s_at  # the part's first unit along the loop, from the tile's
        if first < 0 or first + pext[at] > ext[at]:
            continue
        return plan.buf(f"in{j}", count) + first * tile[at]
    return None


def _sliced_parts(plan: KernelPlan, v: SSAValue, dims: list[LoopDim]) -> tuple[int, list[ConcatPart]]:
    """A sliced concat a pointwise op reads, placed as its result, so on its loops `dims`
    (`concat_parts`); refused where no loop runs along the concat's dim."""
    cat = v.owner
    assert isinstance(cat, spyre.ConcatOp)  # pointwise_sliced_inputs
    at, parts = concat_parts(plan, cat, dims)
    if at is None:
        raise Unsupported(
            f"kernel {plan.name}: the pointwise op's sliced concat is along dim {cat.dim.value.data}, which no loop runs along"
        )
    return at, parts


@lowers(spyre.ReduceOp)
def lower_reduce(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Along the stick dim: load each row's sticks, SFP-reduce them and their lanes (padding
    masked) into one vector per row, scale for a mean, store the splat result."""
    op = plan.compute
    assert isinstance(op, spyre.ReduceOp)
    src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
    tile = reduce_tile_dim(op)
    extent = src.shape[op.dim.value.data]
    tail = extent - F16_LANES * (src.device_size[tile] - 1)
    dims = [d for d in loop_dims(src) if d.device_dim != tile]
    s_r = src.stick_strides[tile]
    kind = op.kind.data
    lx = plan.lx
    out: list[Ins] = []
    for ch in chunk_boxes(box, plan.dims, plan.chunks):
        lo = [ch[d.name][0] for d in dims] or [0]
        ext = [ch[d.name][1] - ch[d.name][0] for d in dims] or [1]
        r = ch["r"][1] - ch["r"][0]
        tile_in = compact([*ext, r])
        vec = compact(ext)
        in_strides = [d.stick_stride for d in dims] or [0]
        out.append(
            load(
                plan.arg(op.input),
                sum(l * x for l, x in zip(lo, in_strides)),
                in_strides + [s_r],
                lx["in"],
                tile_in,
                [*ext, r],
            )
        )
        if kind in ("sum", "mean"):
            out.append(
                reduce(
                    "sum",
                    (lx["in"], tile_in, False),
                    (lx["acc"], [2 * v for v in vec] + [0], True),
                    [*ext, r],
                    tail,
                )
            )
            scale = 1.0 / extent if kind == "mean" else None
            if scale is None:
                out.append(sfp("copy", [(lx["acc"], [2 * v for v in vec], True)], (lx["out"], vec, False), ext))
            else:
                out.append(sfp("mul", [(lx["acc"], [2 * v for v in vec], True)], (lx["out"], vec, False), ext, scale))
        else:
            out.append(reduce(kind, (lx["in"], tile_in, False), (lx["out"], vec + [0], False), [*ext, r], tail))
        dst_strides = loop_strides(dst, dims) or [0]
        out_base = sum(l * x for l, x in zip(lo, dst_strides))
        out.append(store(plan.arg(op.result), lx["out"], vec, out_base, dst_strides, ext))
    return CoreCode(out)


@lowers(spyre.RowGroup)
def lower_row_group(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """A row group (spyre.RowGroup) per chunk of rows: DMA in the inputs' tiles,
    every reduction and pointwise step from LX to LX, DMA out the last result. The loops
    are the full layout's outer loops, then r (the reduced dim's sticks, innermost);
    each value's LX tile is dense over the loops it does not broadcast along."""
    g = plan.group
    assert g is not None
    args = plan.args
    last = len(g.ops) - 1
    out: list[Ins] = []
    # a rank-1 group (one row) gets an outer loop of one, so that every step has a loop
    pad = [] if g.outer else [0]

    def group_strides(v: SSAValue, user: Operation) -> list[int]:
        return pad + g.strides(v, user)

    for count, ch in enumerate(chunk_boxes(box, plan.dims, plan.chunks), start=1):
        lo = [ch[d.name][0] for d in g.outer] or [0]
        ext = [ch[d.name][1] - ch[d.name][0] for d in g.outer] or [1]
        r = ch["r"][1] - ch["r"][0]
        full_sizes = [*ext, r]
        vec = compact(ext) if ext else []
        loc: dict[SSAValue, tuple[int, list[int]]] = {}
        for i, a in enumerate(args):
            users = [o for o in g.ops if a in o.operands]
            if not users:
                continue
            st = group_strides(a, users[0])
            kept = [j for j, x in enumerate(st) if x != 0]
            tile = compact([full_sizes[j] for j in kept])
            base = sum(lo[j] * st[j] for j in range(len(lo)))
            buf = plan.buf(f"a{i}", count)
            if kept:
                out.append(load(plan.arg(a), base, [st[j] for j in kept], buf, tile, [full_sizes[j] for j in kept]))
            else:  # one stick, broadcast everywhere
                out.append(load(plan.arg(a), base, [1], buf, [1], [1]))
            strides = [0] * len(full_sizes)
            for p, j in enumerate(kept):
                strides[j] = tile[p]
            loc[a] = (buf, strides)
        out += row_group_steps(plan, g, loc, ext, r, count)
        result = g.ops[last].results[0]
        st = group_strides(result, g.ops[last])
        base = sum(lo[j] * st[j] for j in range(len(lo)))
        if g.is_full(result):
            out.append(store(plan.arg(result), loc[result][0], loc[result][1], base, st, full_sizes))
        else:
            out.append(store(plan.arg(result), loc[result][0], vec or [0], base, st[:-1] or [0], ext or [1]))
    return CoreCode(out)


def row_group_steps(
    plan: KernelPlan,
    g: spyre.RowGroup,
    loc: dict[SSAValue, tuple[int, list[int]]],
    ext: list[int],
    r: int,
    count: int,
) -> list[Ins]:
    """The reductions and SFP steps of row group `g` on a chunk of rows (`ext`: its outer
    loops' extents) and `r` sticks, LX to LX: `loc` holds where the values read from outside
    the group are ((LX stick, strides per [*outer, r]), 0 where one broadcasts), and gets each
    op's result (`v{j}`: the last one's copy for chunk `count`; full values dense over
    [*outer, r], splat values one stick per row)."""
    first_reduce = next(o for o in g.ops if isinstance(o, spyre.ReduceOp))
    extent = g.full.shape[first_reduce.dim.value.data]
    tail = extent - F16_LANES * (g.r - 1)
    last = len(g.ops) - 1
    full_sizes = [*ext, r]
    vec = compact(ext) if ext else []
    out: list[Ins] = []
    for j, o in enumerate(g.ops):
        full = g.is_full(o.results[0])
        vbuf = plan.buf(f"v{j}", count) if j == last else plan.lx[f"v{j}"]
        res = (vbuf, compact(full_sizes) if full else [*vec, 0])
        if isinstance(o, spyre.ReduceOp):
            src_base, src_strides = loc[o.input]
            kind = o.kind.data
            if kind in ("sum", "mean"):
                acc = (plan.lx["acc"], [2 * v for v in vec] + [0], True)
                out.append(reduce("sum", (src_base, src_strides, False), acc, full_sizes, tail))
                if kind == "sum":
                    out.append(sfp("copy", [(acc[0], acc[1][:-1], True)], (vbuf, vec, False), ext))
                else:
                    out.append(sfp("mul", [(acc[0], acc[1][:-1], True)], (vbuf, vec, False), ext, 1.0 / extent))
            else:
                out.append(reduce(kind, (src_base, src_strides, False), (vbuf, [*vec, 0], False), full_sizes, tail))
        else:
            assert isinstance(o, spyre.PointwiseOp)
            steps, _ = pointwise_program(o)
            sizes = full_sizes if full else [*ext, 1]
            access: dict[tuple[str, int], tuple[int, list[int], bool]] = {("out", 0): (res[0], res[1], False)}
            for i, v in enumerate(o.inputs):
                access[("in", i)] = (loc[v][0], loc[v][1], False)
            for k in range(max((int(n[1:]) + 1 for n in plan.lx if n[:1] == "t" and n[1:].isdigit()), default=0)):
                access[("t", k)] = (plan.lx[f"t{k}"], [2 * x for x in compact(sizes)], True)
            for step in steps:
                out.append(sfp(step.fn, [access[x] for x in step.srcs], access[step.dst], sizes, step.imm))
        loc[o.results[0]] = res
    return out
