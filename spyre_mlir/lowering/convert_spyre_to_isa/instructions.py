"""Per-core instruction records and the spyre_isa ops they become.

An `Ins` is one instruction of one core: `key` is what must match for cores to share an SPMD
stream, `bases` what may differ between them (per-core tables: access bases, ring shifts,
sync tokens). `fold_streams` groups the cores whose keys match and `build` spells one
instruction of a stream as its op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.target.constants import F16_LANES


@dataclass(frozen=True)
class Ins:
    """One instruction of one core: `key` is what must match for cores to share a stream,
    `bases` what may differ (becomes a per-core table: access bases, ring shifts, tokens)."""

    key: tuple
    bases: tuple[int, ...]


def compact(sizes: Sequence[int], unit: int = 1) -> list[int]:
    """Row-major strides of a dense tile of `sizes` (each step `unit` sticks)."""
    strides = [unit] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    return strides


def load(
    arg: int, ddr_base: int, ddr_strides: Sequence[int], lx_base: int, lx_strides: Sequence[int], sizes: Sequence[int]
) -> Ins:
    return Ins(("load", arg, tuple(ddr_strides), tuple(lx_strides), tuple(sizes)), (ddr_base, lx_base))


def store(
    arg: int, lx_base: int, lx_strides: Sequence[int], ddr_base: int, ddr_strides: Sequence[int], sizes: Sequence[int]
) -> Ins:
    return Ins(("store", arg, tuple(ddr_strides), tuple(lx_strides), tuple(sizes)), (ddr_base, lx_base))


def sfp(
    fn: str,
    srcs: Sequence[tuple[int, Sequence[int], bool]],
    dst: tuple[int, Sequence[int], bool],
    sizes: Sequence[int],
    imm: float | None = None,
) -> Ins:
    key = ("sfp", fn, tuple((tuple(s), f) for _, s, f in srcs), (tuple(dst[1]), dst[2]), tuple(sizes), imm)
    return Ins(key, tuple(b for b, _, _ in srcs) + (dst[0],))


def reduce(
    fn: str,
    src: tuple[int, Sequence[int], bool],
    dst: tuple[int, Sequence[int], bool],
    sizes: Sequence[int],
    tail: int = F16_LANES,
) -> Ins:
    key = ("reduce", fn, (tuple(src[1]), src[2]), (tuple(dst[1]), dst[2]), tuple(sizes), tail)
    return Ins(key, (src[0], dst[0]))


def gather_rows(
    table: int,
    indices: int,
    index_base: int,
    count: int,
    row_sticks: int,
    lx_base: int,
    lx_strides: Sequence[int],
    first_stick: int | None = None,
) -> Ins:
    """`row_sticks` sticks of each of `count` table rows (from stick `first_stick` of a row on;
    None: from its first) picked by the indices from `index_base` on, into LX."""
    if first_stick is None:
        return Ins(("gather", table, indices, count, row_sticks, tuple(lx_strides), False), (index_base, lx_base))
    return Ins(
        ("gather", table, indices, count, row_sticks, tuple(lx_strides), True), (index_base, lx_base, first_stick)
    )


def scatter_rows(
    out: int,
    indices: int,
    index_base: int,
    outer: int,
    count: int,
    row_sticks: int,
    lx_base: int,
    lx_strides: Sequence[int],
) -> Ins:
    return Ins(("scatter", out, indices, count, row_sticks, tuple(lx_strides)), (index_base, outer, lx_base))


def pt(
    lhs: tuple[int, Sequence[int]],
    rhs: tuple[int, Sequence[int]],
    acc: tuple[int, Sequence[int]],
    m: int,
    n: int,
    k: int,
    accumulate: bool,
) -> Ins:
    key = ("pt", tuple(lhs[1]), tuple(rhs[1]), tuple(acc[1]), m, n, k, accumulate)
    return Ins(key, (lhs[0], rhs[0], acc[0]))


def transpose(src: tuple[int, Sequence[int]], dst: tuple[int, Sequence[int]], blocks: int, rows: int, cols: int) -> Ins:
    return Ins(("transpose", tuple(src[1]), tuple(dst[1]), blocks, rows, cols), (src[0], dst[0]))


def ring_send(
    src: tuple[int, Sequence[int]],
    dst: tuple[int, Sequence[int]],
    shift: int,
    sizes: Sequence[int],
    notify: int | None,
    piece: int | None = None,
    after: int | None = None,
) -> Ins:
    tokens = tuple(t for t in (notify, after) if t is not None)
    key = ("ring", tuple(src[1]), tuple(dst[1]), tuple(sizes), notify is not None, piece, after is not None)
    return Ins(key, (src[0], dst[0], shift, *tokens))


def signal(token: int) -> Ins:
    return Ins(("signal",), (token,))


def wait(token: int, count: int = 1) -> Ins:
    return Ins(("wait", count), (token,))


def barrier() -> Ins:
    return Ins(("barrier",), ())


def build(ins: Ins, tables: list[spyre_isa.PerCoreAttr], args: Sequence[SSAValue]) -> Operation:
    """The xDSL op for an instruction shared by a stream, with per-core base tables."""
    kind = ins.key[0]
    if kind in ("load", "store"):
        _, arg, ddr_s, lx_s, sizes = ins.key
        ddr = spyre_isa.access(tables[0], ddr_s)
        lx = spyre_isa.access(tables[1], lx_s)
        dma = spyre_isa.DmaLoadOp if kind == "load" else spyre_isa.DmaStoreOp
        return dma(args[arg], ddr, lx, sizes)
    if kind == "sfp":
        _, fn, srcs, (dst_s, dst_f), sizes, imm = ins.key
        accs = [spyre_isa.access(t, s, f) for t, (s, f) in zip(tables, srcs)]
        dst = spyre_isa.access(tables[len(srcs)], dst_s, dst_f)
        if fn in spyre_isa.SFP_UNARY:
            return spyre_isa.SFP_UNARY[fn](accs[0], dst, sizes)
        if fn == "select":
            return spyre_isa.SfpSelectOp(accs[0], accs[1], accs[2], dst, sizes)
        return spyre_isa.SFP_BINARY[fn](accs[0], accs[1] if len(accs) > 1 else imm, dst, sizes)
    if kind == "gather":
        _, table, indices, count, row_sticks, lx_s, offset = ins.key
        return spyre_isa.DmaGatherOp(
            args[table],
            args[indices],
            tables[0],
            count,
            row_sticks,
            spyre_isa.access(tables[1], lx_s),
            tables[2] if offset else None,
        )
    if kind == "scatter":
        _, out, indices, count, row_sticks, lx_s = ins.key
        return spyre_isa.DmaScatterOp(
            args[out], args[indices], tables[0], tables[1], count, row_sticks, spyre_isa.access(tables[2], lx_s)
        )
    if kind == "reduce":
        _, fn, (ss, sf), (ds, df), sizes, tail = ins.key
        reduction = {"max": spyre_isa.SfpReduceMaxOp, "min": spyre_isa.SfpReduceMinOp, "sum": spyre_isa.SfpReduceSumOp}[
            fn
        ]
        return reduction(
            spyre_isa.access(tables[0], ss, sf),
            spyre_isa.access(tables[1], ds, df),
            sizes,
            tail,
        )
    if kind == "pt":
        _, ls, rs, cs, m, n, k, accumulate = ins.key
        return spyre_isa.PtMatmulOp(
            spyre_isa.access(tables[0], ls),
            spyre_isa.access(tables[1], rs),
            spyre_isa.access(tables[2], cs, True),
            m,
            n,
            k,
            accumulate,
        )
    if kind == "ring":
        _, ss, ds, sizes, has_notify, piece, has_after = ins.key
        notify = tables[3] if has_notify else None
        after = tables[3 + has_notify] if has_after else None
        return spyre_isa.RingSendOp(
            spyre_isa.access(tables[0], ss), spyre_isa.access(tables[1], ds), tables[2], sizes, notify, piece, after
        )
    if kind == "signal":
        return spyre_isa.SignalOp(tables[0])
    if kind == "wait":
        return spyre_isa.WaitOp(tables[0], ins.key[1])
    if kind == "barrier":
        return spyre_isa.BarrierOp.create()
    if kind == "transpose":
        _, ss, ds, blocks, rows, cols = ins.key
        return spyre_isa.SfpTransposeOp(
            spyre_isa.access(tables[0], ss), spyre_isa.access(tables[1], ds), blocks, rows, cols
        )
    raise AssertionError(kind)


def fold_streams(per_core: list[list[Ins] | None], args: Sequence[SSAValue]) -> list[spyre_isa.StreamOp]:
    """Group cores with the same instruction keys into SPMD streams."""
    groups: dict[tuple, list[int]] = {}
    for core, prog in enumerate(per_core):
        if prog:
            groups.setdefault(tuple(i.key for i in prog), []).append(core)
    streams = []
    for cores in sorted(groups.values()):
        progs = [prog for c in cores if (prog := per_core[c])]  # every core of a group has a program
        ops = []
        for pos in range(len(progs[0])):
            column = [p[pos] for p in progs]
            tables = []
            for b in range(len(column[0].bases)):
                vals = [ins.bases[b] for ins in column]
                tables.append(spyre_isa.per_core(vals[0] if len(set(vals)) == 1 else tuple(vals)))
            ops.append(build(column[0], tables, args))
        streams.append(spyre_isa.StreamOp(cores, ops))
    return streams
