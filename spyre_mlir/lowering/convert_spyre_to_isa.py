"""`convert-spyre-to-isa`: each planned `spyre.kernel` becomes a `spyre_isa.program`, and the
kernel op a `spyre_isa.launch` of it.

For every core, the kernel's chunks are walked in order and each chunk is spelled out as
instructions, all addresses fixed at compile time:

    matmul      per chunk: DMA A tile, DMA B tile (skipped when unchanged), PT into the fp32
                accumulator (accumulating over k chunks); after the last k chunk an SFP copy
                rounds the accumulator into the output tile and a DMA stores it; with an
                epilogue, its SFP steps read the accumulator instead (no copy: only the
                epilogue's result is rounded) and a DMA stores their result tile
    pointwise   per chunk: DMA each input tile (broadcast dims not loaded), one SFP
                instruction per body op (f32 temporaries), DMA the output tile out
    restickify  same elements per stick: DMA in through the source layout, DMA out through
                the result layout; stick moved to another dim: DMA 64 x 64 blocks in, SFP
                block transposes, DMA out

Then cores with the same instruction sequence (up to addresses) are folded into one SPMD
`spyre_isa.stream` whose per-core addresses are tables; a ragged last tile gives its core(s)
their own stream. Views between kernels stay on the host side (they move no data).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.cost import piece_rows
from spyre_mlir.analysis.sfp import pointwise_program
from spyre_mlir.analysis.sticks import matmul_reads, slice_strides
from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.dialects.spyre import (
    epilogue,
    kernel_core_boxes,
    kernel_iteration_dims,
    kernel_ops,
    pointwise_loops,
    reduce_tile_dim,
    row_group,
    single_pointwise,
    slice_loops,
)
from spyre_mlir.dialects.spyre_iteration import chunk_boxes, lane_gather_dim, parts, restickify_loops, transpose_row_dim
from spyre_mlir.layout import Layout, LoopDim, digit_stride, loop_dims, loop_strides, operand_strides
from spyre_mlir.target.config import DEFAULT_CONFIG
from spyre_mlir.target.constants import STICK_BYTES

# region Per-core instruction records


@dataclass(frozen=True)
class Ins:
    """One instruction of one core: `key` is what must match for cores to share a stream,
    `bases` what may differ (becomes a per-core table: access bases, ring shifts, tokens)."""

    key: tuple
    bases: tuple[int, ...]


def _compact(sizes: Sequence[int], unit: int = 1) -> list[int]:
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
    tail: int = 64,
) -> Ins:
    key = ("reduce", fn, (tuple(src[1]), src[2]), (tuple(dst[1]), dst[2]), tuple(sizes), tail)
    return Ins(key, (src[0], dst[0]))


def gather_rows(
    table: int, indices: int, index_base: int, count: int, row_sticks: int, lx_base: int, lx_strides: Sequence[int]
) -> Ins:
    return Ins(("gather", table, indices, count, row_sticks, tuple(lx_strides)), (index_base, lx_base))


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
        cls = spyre_isa.DmaLoadOp if kind == "load" else spyre_isa.DmaStoreOp
        return cls(args[arg], ddr, lx, sizes)
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
        _, table, indices, count, row_sticks, lx_s = ins.key
        return spyre_isa.DmaGatherOp(
            args[table], args[indices], tables[0], count, row_sticks, spyre_isa.access(tables[1], lx_s)
        )
    if kind == "reduce":
        _, fn, (ss, sf), (ds, df), sizes, tail = ins.key
        cls = {"max": spyre_isa.SfpReduceMaxOp, "min": spyre_isa.SfpReduceMinOp, "sum": spyre_isa.SfpReduceSumOp}[fn]
        return cls(
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
        progs = [per_core[c] for c in cores]
        ops = []
        for pos in range(len(progs[0])):  # type: ignore[arg-type]
            column = [p[pos] for p in progs]  # type: ignore[index]
            tables = []
            for b in range(len(column[0].bases)):
                vals = [ins.bases[b] for ins in column]
                tables.append(spyre_isa.per_core(vals[0] if len(set(vals)) == 1 else tuple(vals)))
            ops.append(build(column[0], tables, args))
        streams.append(spyre_isa.StreamOp(cores, ops))
    return streams


# endregion
# region Kernel code generation


class KernelCodegen:
    """Instructions of one kernel for each core."""

    def __init__(self, kernel: spyre.KernelOp, cores: int, onchip: spyre.OnchipAttr | None = None):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        if kernel.split is None or kernel.chunks is None or kernel.lx is None:
            raise PassFailedException(
                f"kernel {self.name}: run spyre-divide-work and spyre-plan-scratchpad first (split, chunks and lx are needed)"
            )
        if len(kernel.outputs) != 1:
            raise PassFailedException(
                f"kernel {self.name}: {len(kernel.outputs)} results; programs with several outputs are not supported yet"
            )
        ops = kernel_ops(kernel)
        self.epilogue = epilogue(ops) if len(ops) == 2 and isinstance(ops[0], spyre.MatmulOp) else None
        self.group = row_group(ops) if len(ops) > 1 and self.epilogue is None else None
        self.compute = ops[0] if self.epilogue is not None else ops[-1]  # a row group's result is its last op's
        self.dims = kernel_iteration_dims(kernel)
        try:
            self.boxes = kernel_core_boxes(kernel, cores)
        except ValueError as e:
            raise PassFailedException(f"kernel {self.name}: {e}") from None
        self.cores = cores
        self.chunks = kernel.chunks.as_dict()
        self.lx = {k: v // STICK_BYTES for k, v in kernel.lx.as_dict().items()}
        args = list(kernel.body.block.args)
        self.arg_index = {a: i for i, a in enumerate(args)}
        self.n_inputs = len(args)
        # spyre-resident-chains, spyre-onchip-relayout: values kept in LX between launches
        # (offsets in sticks)
        out, into = kernel.resident_out, kernel.resident_in
        self.resident_out = out.offset.data // STICK_BYTES if out is not None else None
        self.resident_in = (into.input.data, into.offset.data // STICK_BYTES) if into is not None else None
        assert (onchip is None) == (kernel.onchip is None), "an onchip mark is lowered as onchip_plan checked it"
        self.onchip = onchip
        """The kernel's `onchip` mark (spyre-onchip-relayout), as `onchip_plan` checked it."""
        self.resident_ranges: dict[str, list[int]] = {}
        """The program's `spyre.resident_in` / `spyre.resident_out`: [lo, hi) LX sticks."""

    def arg(self, v: SSAValue) -> int:
        """Program argument index of a kernel value (inputs, then the output)."""
        if v in self.arg_index:
            return self.arg_index[v]
        return self.n_inputs  # the kernel's single result

    def buf(self, name: str, count: int) -> int:
        """LX offset (sticks) of buffer `name` for its `count`-th use (1-based): planned copies
        `name_1`, `name_2`, ... (double or deeper buffering) take the uses in turn."""
        return self.lx[self.copies(name)[(count - 1) % len(self.copies(name))]]

    def copies(self, name: str) -> list[str]:
        out = [name]
        while f"{name}_{len(out)}" in self.lx:
            out.append(f"{name}_{len(out)}")
        return out

    def per_core(self) -> list[list[Ins] | None]:
        gen: Callable[[dict], list[Ins]]
        if self.group is not None:
            gen = self.rows
        elif isinstance(self.compute, spyre.MatmulOp):
            gen = self.matmul
        elif isinstance(self.compute, spyre.PointwiseOp):
            gen = self.pointwise
        elif isinstance(self.compute, spyre.ReduceOp):
            gen = self.reduce
        elif isinstance(self.compute, spyre.GatherOp):
            gen = self.gather
        elif isinstance(self.compute, spyre.SliceOp):
            gen = self.slice
        else:
            gen = self.restickify
        self._check_layouts()
        self.groups = self._multicast_groups() if gen == self.matmul else {}
        out: list[list[Ins] | None] = []
        for core, box in enumerate(self.boxes):
            self.core = core
            if self.onchip is not None:  # the bands of its producer and consumer decide the work
                out.append(self._onchip_transpose() or None)
                continue
            try:
                out.append(None if box is None else gen(box))
            except ValueError as e:  # a layout the generator cannot address (analysis.sticks)
                raise PassFailedException(f"kernel {self.name}: {e}") from None
        return out

    def _check_layouts(self) -> None:
        """Refuse, once per kernel, the layouts a matmul or a gather program cannot address
        (docs/layouts.md, "What the lowering assumes")."""
        op = self.compute
        if isinstance(op, spyre.MatmulOp):
            for role, v in (("lhs", op.lhs), ("rhs", op.rhs), ("result", op.result)):
                lay = spyre.device_layout(v.type)
                if not matmul_reads(lay):
                    raise PassFailedException(
                        f"kernel {self.name}: 'spyre.matmul' {role} {lay.describe()}: the matmul steps each dim by one stick "
                        "stride, so its sticks must hold the generic layout's (run spyre-propagate-layouts first)"
                    )
        elif isinstance(op, spyre.GatherOp):
            table, res = spyre.device_layout(op.table.type), spyre.device_layout(op.result.type)
            if table.canonical() != Layout.generic(table.shape, table.element_bytes).canonical():
                raise PassFailedException(
                    f"kernel {self.name}: 'spyre.gather' table {table.describe()}: the gather reads whole rows of the generic "
                    "layout (run spyre-propagate-layouts first)"
                )
            if not matmul_reads(res):  # each row's sticks stored by one stride per dim, as a matmul operand is read
                raise PassFailedException(
                    f"kernel {self.name}: 'spyre.gather' result {res.describe()}: the gather stores a row's sticks by one "
                    "stride, so its sticks must hold the generic layout's"
                )

    def _multicast_groups(self) -> dict[int, list[int]]:
        """With `multicast <chain = g>` on the kernel: chains of g cores that read the same B tiles
        (same b, n and k ranges; only m differs), in ring order, by core: consecutive cores, or
        every p-th with a k split in p parts (the k parts of one block are adjacent)."""
        if self.kernel.multicast is None:
            return {}
        g = self.kernel.multicast.chain.data
        sharing: dict[tuple, list[int]] = {}
        for core, box in enumerate(self.boxes):
            if box is not None:
                key = tuple(r for name, r in box.items() if name != "m")
                sharing.setdefault(key, []).append(core)
        by_core: dict[int, list[int]] = {}
        for members in sharing.values():
            for start in range(0, len(members), g):
                chain = members[start : start + g]
                events = {len(self._b_events(self.boxes[c])) for c in chain}  # type: ignore[arg-type]
                stride = chain[1] - chain[0] if len(chain) > 1 else 1
                if (
                    len(chain) > 1
                    and len(events) == 1
                    and chain == list(range(chain[0], chain[0] + stride * len(chain), stride))
                ):
                    for c in chain:
                        by_core[c] = chain
        return by_core

    def _b_events(self, box: dict) -> list[tuple]:
        keys: list[tuple] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            for b in range(*ch.get("b", (0, 1))):
                key = (b, ch["n"], ch["k"])
                if not keys or keys[-1] != key:
                    keys.append(key)
        return keys

    # -------------------------------------------------------------- matmul
    def matmul(self, box: dict) -> list[Ins]:
        op = self.compute
        assert isinstance(op, spyre.MatmulOp)
        la, lb, lc = (spyre.device_layout(v.type) for v in (op.lhs, op.rhs, op.result))
        M, K = la.shape[-2:]
        N = lb.shape[-1]
        batched = len(la.shape) == 3
        sa_b, sa_m, sa_kt = digit_stride(la, 0, 1) if batched else 0, digit_stride(la, -2, 1), digit_stride(la, -1, 64)
        sb_b, sb_k, sb_nt = digit_stride(lb, 0, 1) if batched else 0, digit_stride(lb, -2, 1), digit_stride(lb, -1, 64)
        sc_b, sc_m, sc_nt = digit_stride(lc, 0, 1) if batched else 0, digit_stride(lc, -2, 1), digit_stride(lc, -1, 64)
        A, B, C = self.arg(op.lhs), self.arg(op.rhs), self.arg(op.result)
        lx = self.lx
        out: list[Ins] = []
        loaded_a = loaded_b = None
        n_a = n_b = n_out = 0  # loads/stores so far: double buffers alternate on their parity
        # spyre-resident-chains: A is this core's whole block, left in LX by the previous
        # launch as [k stick][row] at `a_res`; the result (after the epilogue) stays in LX,
        # the core's whole block as [n stick][row] at `c_res`
        rows = box["m"][1] - box["m"][0]
        a_res = self.resident_in[1] if self.resident_in is not None and self.resident_in[0] == A else None
        c_res = self.resident_out
        if a_res is not None:
            self._resident("spyre.resident_in", a_res, rows * (box["k"][1] - box["k"][0]))
        if c_res is not None:  # not split along k (the kernel verifies it)
            self._resident("spyre.resident_out", c_res, rows * (box["n"][1] - box["n"][0]))
        group = self.groups.get(self.core)
        pos = group.index(self.core) if group else 0
        n_tiles = len(self._b_events(box)) if group else 0
        kt_total = math.ceil(K / 64)
        # a k split: the cores of one (b, n, m) block each sum their own k range; the partial
        # sums go down the k parts (core + 1 -> core, adjacent on the ring), the first rounds
        k_parts = parts(kt_total, self.kernel.split.as_dict().get("k", 1))  # type: ignore[union-attr]
        k_pos, k_end, n_partial = k_parts.index(box["k"]), box["k"][1], 0
        # one matrix at a time (the tiles hold one); within it the (n, m, k) chunks in order,
        # so that the k chunks of one output tile accumulate back to back
        all_chunks = chunk_boxes(box, self.dims, self.chunks)
        b_ranges = list(dict.fromkeys(ch.get("b", (0, 1)) for ch in all_chunks))
        chunks = [(b, ch) for br in b_ranges for b in range(*br) for ch in all_chunks if ch.get("b", (0, 1)) == br]
        b_keys = [(b, ch["n"], ch["k"]) for b, ch in chunks]
        for i, (b, ch) in enumerate(chunks):
            (n0, n1), (m0, m1), (k0, k1) = ch["n"], ch["m"], ch["k"]
            mr, nst, kst = m1 - m0, n1 - n0, k1 - k0
            r0, r1 = k0 * 64, min(K, k1 * 64)
            ncols = min(N, n1 * 64) - n0 * 64
            if a_res is not None:  # this chunk of the resident block
                lhs = (a_res + (k0 - box["k"][0]) * rows + m0 - box["m"][0], [1, rows])
            else:
                if loaded_a != (b, m0, m1, k0, k1):  # A tile as [k stick][row]
                    n_a += 1
                    out.append(
                        load(
                            A,
                            b * sa_b + k0 * sa_kt + m0 * sa_m,
                            [sa_kt, sa_m],
                            self.buf("lhs", n_a),
                            [mr, 1],
                            [kst, mr],
                        )
                    )
                    loaded_a = (b, m0, m1, k0, k1)
                lhs = (self.buf("lhs", n_a), [1, mr])
            if loaded_b != (b, n0, n1, k0, k1):  # B tile as [n stick][k row]
                n_b += 1
                rhs = self.buf("rhs", n_b)
                if group is None or pos == 0:  # the chain's first core loads B from DDR
                    out.append(
                        load(B, b * sb_b + n0 * sb_nt + r0 * sb_k, [sb_nt, sb_k], rhs, [r1 - r0, 1], [nst, r1 - r0])
                    )
                if group is not None:
                    out += self._multicast_step(group, pos, n_b, n_tiles, rhs, [r1 - r0, 1], [nst, r1 - r0])
                loaded_b = (b, n0, n1, k0, k1)
            out.append(
                pt(
                    lhs,
                    (self.buf("rhs", n_b), [1, r1 - r0]),
                    (lx["acc"], [2, 2 * mr]),
                    mr,
                    ncols,
                    r1 - r0,
                    k0 > box["k"][0],
                )
            )
            if group is not None and pos > 0 and (i + 1 == len(chunks) or b_keys[i + 1] != b_keys[i]):
                # done with B tile n_b (its PT passes and its sends, all earlier): its buffer may
                # take tile n_b + depth, if there is one (before the output's rounding and store,
                # which the credit need not wait for)
                if n_b + len(self.copies("rhs")) <= n_tiles:
                    out.append(signal(2 * group[pos] + 1))
            sums = (lx["acc"], [2 * mr, 2], True)  # the tile's fp32 sums, as an SFP source
            if k1 == k_end and (k_pos < len(k_parts) - 1 or k_pos > 0):
                if k_pos < len(k_parts) - 1:  # add the next k part's partial sums, then free its buffer
                    out.append(wait(self._partial_token(self.core)))
                    out.append(sfp("add", [sums, (lx["acc_in"], [2 * mr, 2], True)], sums, [nst, mr]))
                    out.append(signal(self._partial_token(self.core) + 1))
                if k_pos > 0:  # pass the sums to the previous k part, once its buffer is free
                    credit = self._partial_token(self.core - 1) + 1 if n_partial else None
                    out.append(
                        ring_send(
                            (lx["acc"], [1]),
                            (lx["acc_in"], [1]),
                            -1,
                            [2 * mr * nst],
                            self._partial_token(self.core - 1),
                            after=credit,
                        )
                    )
                    n_partial += 1
                    continue
            if k1 == k_end:  # round the fp32 sums into the output tile (or run the epilogue on them), then store it
                n_out += 1
                kept = (
                    None if c_res is None else (c_res + (n0 - box["n"][0]) * rows + m0 - box["m"][0], [rows, 1], False)
                )
                if self.epilogue is None:
                    tile_out = self.buf("out", n_out)
                    out.append(sfp("copy", [sums], kept or (tile_out, [mr, 1], False), [nst, mr]))
                else:
                    tile_out = self._epilogue(out, sums, n_out, n0, m0, nst, mr, kept)
                    C = self.arg(self.epilogue.pointwise.result)
                if kept is None:
                    out.append(store(C, tile_out, [mr, 1], b * sc_b + n0 * sc_nt + m0 * sc_m, [sc_nt, sc_m], [nst, mr]))
        return out

    def _partial_token(self, core: int) -> int:
        """Token: partial sums landed in `core`'s acc_in (+ 1: `core` has added them, acc_in is
        free), after the multicast chains' tokens 2c and 2c + 1."""
        return 2 * self.cores + 2 * core

    def _epilogue(
        self,
        out: list[Ins],
        sums: tuple[int, list[int], bool],
        count: int,
        n0: int,
        m0: int,
        nst: int,
        mr: int,
        dst: tuple[int, list[int], bool] | None = None,
    ) -> int:
        """The pointwise epilogue on an output tile's fp32 sums (`sums`, the accumulator as an f32
        SFP source, [n stick][row]): load the other inputs' tiles, run the SFP steps (only the
        epilogue's result is rounded), return where the result tile is (`dst`, the place the
        result stays in LX, when given)."""
        ep = self.epilogue
        assert ep is not None
        access: dict[tuple[str, int], tuple[int, list[int], bool]] = {}
        for i, (sn, sm) in enumerate(ep.strides):
            if i == ep.operand:
                access[("in", i)] = sums
                continue
            v = ep.pointwise.inputs[i]
            kept = [(n, st, full) for n, st, full in ((nst, sn, 0), (mr, sm, 1)) if st]
            buf = self.lx[f"e{i}"]
            if kept:
                lx_strides = _compact([n for n, _, _ in kept])
                out.append(
                    load(
                        self.arg(v),
                        n0 * sn + m0 * sm,
                        [st for _, st, _ in kept],
                        buf,
                        lx_strides,
                        [n for n, _, _ in kept],
                    )
                )
            else:
                out.append(load(self.arg(v), 0, [1], buf, [1], [1]))
            strides = [0, 0]
            for (_, _, which), x in zip(kept, _compact([n for n, _, _ in kept]) if kept else []):
                strides[which] = x
            access[("in", i)] = (buf, strides, False)
        res = self.buf("res", count)
        access[("out", 0)] = dst if dst is not None else (res, [mr, 1], False)
        steps, temps = pointwise_program(ep.pointwise)
        for k in range(temps):
            access[("t", k)] = (self.lx[f"t{k}"], [2 * mr, 2], True)
        for step in steps:
            out.append(sfp(step.fn, [access[x] for x in step.srcs], access[step.dst], [nst, mr], step.imm))
        return res

    def _multicast_step(
        self, group: list[int], pos: int, tile: int, tiles: int, rhs: int, lx_strides: list[int], sizes: list[int]
    ) -> list[Ins]:
        """B tile number `tile` (1-based, [n stick][row] at `rhs`) travels down the group's chain
        over the ring: the first core loads it from DDR, every other core receives it from its
        predecessor and, unless it is the last, passes it on to the same buffer of its
        successor, in pieces of about MULTICAST_PIECE sticks (cost.piece_rows) so that a piece moves on as soon as
        it has landed (the chain fills in one piece per hop, not one tile per hop): one
        `ring_send ... piece P after 2c notify 2(c+1)` per tile and core (the last core of the
        chain waits for all the pieces at once).

            token 2c     a piece landed in core c's buffer (the sender's ring_send notifies it)
            token 2c+1   core c has finished with a tile (its buffer is free)

        With `depth` B buffers, a buffer is reused every `depth` tiles: right after its last PT
        pass on tile t a receiving core frees tile t's buffer (a signal: every earlier
        instruction, the PT passes reading it and the sends passing it on, has finished; matmul()
        emits it) if tile t + depth exists, and a sender of tile t > depth first waits for that
        credit from its successor.

        (A rotating head, tile t loaded by core (t - 1) mod g and passed around the cycle, is
        slower, as measured: tiles then reach a core from heads at different distances, and the
        arrival jitter stalls the PT more than the spread DDR loads save; docs/optimizations.md.)"""
        g = len(group)
        me, succ = group[pos], group[min(pos + 1, g - 1)]
        depth = len(self.copies("rhs"))
        nst, rows = sizes
        out: list[Ins] = []
        sends = pos < g - 1
        if sends and tile > depth:
            out.append(wait(2 * succ + 1))
        step = piece_rows(nst)
        if sends:
            at = (rhs, lx_strides)
            piece = step if step < rows else None
            out.append(ring_send(at, at, succ - me, [nst, rows], 2 * succ, piece, 2 * me if pos > 0 else None))
        elif pos > 0:
            out.append(wait(2 * me, -(-rows // step)))
        return out

    # -------------------------------------------------------------- pointwise
    def pointwise(self, box: dict) -> list[Ins]:
        op = self.compute
        assert isinstance(op, spyre.PointwiseOp)
        dims, strides_in = pointwise_loops(op)
        steps, _ = pointwise_program(op)
        lx = self.lx
        result: list[Ins] = []
        # a resident value (spyre-onchip-relayout) is the core's whole box, dense, in LX
        box_lo = [box[d.name][0] for d in dims]
        box_ext = [box[d.name][1] - box[d.name][0] for d in dims]
        box_strides = _compact(box_ext)
        for count, ch in enumerate(chunk_boxes(box, self.dims, self.chunks), start=1):
            lo = [ch[d.name][0] for d in dims]
            ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
            tile = _compact(ext)
            in_box = sum((l - b) * s for l, b, s in zip(lo, box_lo, box_strides))
            access: dict[tuple[str, int], tuple[int, list[int], bool]] = {
                ("out", 0): (self.buf("out", count), tile, False)
            }
            if self.resident_out is not None:
                access[("out", 0)] = (self.resident_out + in_box, box_strides, False)
                self._resident("spyre.resident_out", self.resident_out, math.prod(box_ext))
            for i, v in enumerate(op.inputs):
                if self.resident_in is not None and self.resident_in[0] == i:
                    if any(a != d.stick_stride for a, d in zip(strides_in[i], dims) if d.size > 1):
                        raise PassFailedException(
                            f"kernel {self.name}: input {i} is resident in LX but not in the output's layout"
                        )
                    access[("in", i)] = (self.resident_in[1] + in_box, box_strides, False)
                    self._resident("spyre.resident_in", self.resident_in[1], math.prod(box_ext))
                    continue
                s = strides_in[i]
                kept = [j for j in range(len(dims)) if s[j] != 0]
                in_tile = _compact([ext[j] for j in kept])
                base = sum(lo[j] * s[j] for j in range(len(dims)))
                if kept:
                    result.append(
                        load(
                            self.arg(v),
                            base,
                            [s[j] for j in kept],
                            self.buf(f"in{i}", count),
                            in_tile,
                            [ext[j] for j in kept],
                        )
                    )
                else:  # a single stick broadcast everywhere
                    result.append(load(self.arg(v), base, [1], self.buf(f"in{i}", count), [1], [1]))
                full = [0] * len(dims)
                for pos, j in enumerate(kept):
                    full[j] = in_tile[pos]
                access[("in", i)] = (self.buf(f"in{i}", count), full, False)
            for name, base in lx.items():
                if name.startswith("t") and not name.endswith("_1"):
                    access[("t", int(name[1:]))] = (base, [2 * s for s in tile], True)
            for st in steps:
                result.append(sfp(st.fn, [access[s] for s in st.srcs], access[st.dst], ext, st.imm))
            if self.resident_out is None:
                out_base = sum(l * d.stick_stride for l, d in zip(lo, dims))
                result.append(
                    store(
                        self.arg(op.result), self.buf("out", count), tile, out_base, [d.stick_stride for d in dims], ext
                    )
                )
        return result

    def _resident(self, which: str, lo: int, sticks: int) -> None:
        """Record an LX range the program keeps for, or takes from, another launch."""
        old = self.resident_ranges.get(which, [lo, lo])
        self.resident_ranges[which] = [lo, max(old[1], lo + sticks)]

    # -------------------------------------------------------------- gather
    def gather(self, box: dict) -> list[Ins]:
        """Each core gathers its rows (all their sticks) into LX, then stores them in place."""
        op = self.compute
        assert isinstance(op, spyre.GatherOp)
        table, res = spyre.device_layout(op.table.type), spyre.device_layout(op.result.type)
        sticks = -(-table.shape[1] // table.lanes)
        s_row, s_t = digit_stride(res, 0, 1), digit_stride(res, 1, 64)
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            n0, n1 = ch["n"]
            rows = n1 - n0
            out.append(
                gather_rows(self.arg(op.table), self.arg(op.indices), n0, rows, sticks, self.lx["rows"], [sticks, 1])
            )
            out.append(
                store(self.arg(op.result), self.lx["rows"], [sticks, 1], n0 * s_row, [s_row, s_t], [rows, sticks])
            )
        return out

    # -------------------------------------------------------------- slice
    def slice(self, box: dict) -> list[Ins]:
        """Copy the box: DMA in through the input's layout from the start, DMA out."""
        op = self.compute
        assert isinstance(op, spyre.SliceOp)
        src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
        dims = slice_loops(op)
        s = slice_strides(op, dims)
        if s is None:
            raise PassFailedException(
                f"kernel {self.name}: 'spyre.slice' of {src.describe()} from {list(op.start.as_tuple())} into {dst.describe()}: "
                "the input's sticks do not hold the result's by one stride per loop from the start on (run spyre-propagate-layouts first)"
            )
        origin = _element_stick(src, op.start.as_tuple())
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            lo = [ch[d.name][0] for d in dims]
            ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
            tile = _compact(ext)
            out.append(
                load(self.arg(op.input), origin + sum(l * x for l, x in zip(lo, s)), s, self.lx["tile"], tile, ext)
            )
            out.append(
                store(
                    self.arg(op.result),
                    self.lx["tile"],
                    tile,
                    sum(l * d.stick_stride for l, d in zip(lo, dims)),
                    [d.stick_stride for d in dims],
                    ext,
                )
            )
        return out

    # -------------------------------------------------------------- reduce
    def reduce(self, box: dict) -> list[Ins]:
        """Along the stick dim: load each row's sticks, SFP-reduce them and their lanes (padding
        masked) into one vector per row, scale for a mean, store the splat result."""
        op = self.compute
        assert isinstance(op, spyre.ReduceOp)
        src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
        tile = reduce_tile_dim(op)
        extent = src.shape[op.dim.value.data]
        tail = extent - 64 * (src.device_size[tile] - 1)
        dims = [d for d in loop_dims(src) if d.device_dim != tile]
        s_r = src.stick_strides[tile]
        kind = op.kind.data
        lx = self.lx
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            lo = [ch[d.name][0] for d in dims] or [0]
            ext = [ch[d.name][1] - ch[d.name][0] for d in dims] or [1]
            r = ch["r"][1] - ch["r"][0]
            tile_in = _compact([*ext, r])
            vec = _compact(ext)
            in_strides = [d.stick_stride for d in dims] or [0]
            out.append(
                load(
                    self.arg(op.input),
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
                    out.append(
                        sfp("mul", [(lx["acc"], [2 * v for v in vec], True)], (lx["out"], vec, False), ext, scale)
                    )
            else:
                out.append(reduce(kind, (lx["in"], tile_in, False), (lx["out"], vec + [0], False), [*ext, r], tail))
            dst_strides = loop_strides(dst, dims) or [0]
            out_base = sum(l * x for l, x in zip(lo, dst_strides))
            out.append(store(self.arg(op.result), lx["out"], vec, out_base, dst_strides, ext))
        return out

    # -------------------------------------------------------------- row group
    def rows(self, box: dict) -> list[Ins]:
        """A row group (analysis.work.RowGroup) per chunk of rows: DMA in the inputs' tiles,
        every reduction and pointwise step from LX to LX, DMA out the last result. The loops
        are the full layout's outer loops, then r (the reduced dim's sticks, innermost);
        each value's LX tile is dense over the loops it does not broadcast along."""
        g = self.group
        assert g is not None
        args = list(self.kernel.body.block.args)
        first_reduce = next(o for o in g.ops if isinstance(o, spyre.ReduceOp))
        extent = g.full.shape[first_reduce.dim.value.data]
        tail = extent - 64 * (g.r - 1)
        last = len(g.ops) - 1
        out: list[Ins] = []
        # a rank-1 group (one row) gets an outer loop of one, so that every step has a loop
        pad = [] if g.outer else [0]

        def group_strides(v: SSAValue, user: Operation) -> list[int]:
            return pad + g.strides(v, user)

        for count, ch in enumerate(chunk_boxes(box, self.dims, self.chunks), start=1):
            lo = [ch[d.name][0] for d in g.outer] or [0]
            ext = [ch[d.name][1] - ch[d.name][0] for d in g.outer] or [1]
            r = ch["r"][1] - ch["r"][0]
            full_sizes = [*ext, r]
            vec = _compact(ext) if ext else []
            loc: dict[SSAValue, tuple[int, list[int]]] = {}
            for i, a in enumerate(args):
                users = [o for o in g.ops if a in o.operands]
                if not users:
                    continue
                st = group_strides(a, users[0])
                kept = [j for j, x in enumerate(st) if x != 0]
                tile = _compact([full_sizes[j] for j in kept])
                base = sum(lo[j] * st[j] for j in range(len(lo)))
                buf = self.buf(f"a{i}", count)
                if kept:
                    out.append(load(self.arg(a), base, [st[j] for j in kept], buf, tile, [full_sizes[j] for j in kept]))
                else:  # one stick, broadcast everywhere
                    out.append(load(self.arg(a), base, [1], buf, [1], [1]))
                strides = [0] * len(full_sizes)
                for p, j in enumerate(kept):
                    strides[j] = tile[p]
                loc[a] = (buf, strides)
            for j, o in enumerate(g.ops):
                full = g.is_full(o.results[0])
                vbuf = self.buf(f"v{j}", count) if j == last else self.lx[f"v{j}"]
                res = (vbuf, _compact(full_sizes) if full else [*vec, 0])
                if isinstance(o, spyre.ReduceOp):
                    src_base, src_strides = loc[o.input]
                    kind = o.kind.data
                    if kind in ("sum", "mean"):
                        acc = (self.lx["acc"], [2 * v for v in vec] + [0], True)
                        out.append(reduce("sum", (src_base, src_strides, False), acc, full_sizes, tail))
                        if kind == "sum":
                            out.append(sfp("copy", [(acc[0], acc[1][:-1], True)], (vbuf, vec, False), ext))
                        else:
                            out.append(sfp("mul", [(acc[0], acc[1][:-1], True)], (vbuf, vec, False), ext, 1.0 / extent))
                    else:
                        out.append(
                            reduce(kind, (src_base, src_strides, False), (vbuf, [*vec, 0], False), full_sizes, tail)
                        )
                else:
                    assert isinstance(o, spyre.PointwiseOp)
                    steps, _ = pointwise_program(o)
                    sizes = full_sizes if full else [*ext, 1]
                    access: dict[tuple[str, int], tuple[int, list[int], bool]] = {("out", 0): (res[0], res[1], False)}
                    for i, v in enumerate(o.inputs):
                        access[("in", i)] = (loc[v][0], loc[v][1], False)
                    for k in range(
                        max((int(n[1:]) + 1 for n in self.lx if n[:1] == "t" and n[1:].isdigit()), default=0)
                    ):
                        access[("t", k)] = (self.lx[f"t{k}"], [2 * x for x in _compact(sizes)], True)
                    for step in steps:
                        out.append(sfp(step.fn, [access[x] for x in step.srcs], access[step.dst], sizes, step.imm))
                loc[o.results[0]] = res
            result = g.ops[last].results[0]
            st = group_strides(result, g.ops[last])
            base = sum(lo[j] * st[j] for j in range(len(lo)))
            if g.is_full(result):
                out.append(store(self.arg(result), loc[result][0], loc[result][1], base, st, full_sizes))
            else:
                out.append(store(self.arg(result), loc[result][0], vec or [0], base, st[:-1] or [0], ext or [1]))
        return out

    # -------------------------------------------------------------- restickify
    def restickify(self, box: dict) -> list[Ins]:
        op = self.compute
        assert isinstance(op, spyre.RestickifyOp)
        src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
        if dst.is_splat or (src.is_splat and dst.is_sparse):
            return self._splat(box, src, dst)
        if lane_gather_dim(src, dst) is not None:
            return self._lane_gather(box, src, dst)
        if transpose_row_dim(src, dst) is None:
            return self._stick_permutation(box, src, dst)
        return self._block_transpose(box, src, dst)

    def _onchip_transpose(self) -> list[Ins]:
        """This core's part of an in-LX transpose (spyre-onchip-relayout): its band of the
        source, rows [r0, r1) x all columns, sits at `src` as [column stick][row]; core j's box
        of the result, sticks [s0, s1) x rows [c0, c1), lands at `dst` as [stick][row].

            for each 64-row block b of the band:
                if this core's box holds all of b's result:  sfp_transpose b into it
                else:                                        sfp_transpose b into staging[b]
            for shift in 1 .. cores - 1 (j = core + shift):  ring_send the staged part j holds
            for this core's own part (if staged):            sfp copy
            barrier (when anything crossed the ring)

        The mark is `onchip_plan`'s (checked against the tensors, the producer and the consumer).
        """
        plan, k, n = self.onchip, self.core, self.cores
        assert isinstance(self.compute, spyre.RestickifyOp) and plan is not None
        cols, cs, boxes = plan.cols, plan.col_sticks, plan.boxes
        S, D, G = (at.data // STICK_BYTES for at in (plan.src, plan.dst, plan.staging))
        r0, r1 = plan.bands[k]
        width = r1 - r0  # stick stride between the band's column sticks
        self._resident("spyre.resident_in", S, plan.band_sticks)
        self._resident("spyre.resident_out", D, plan.box_sticks)
        out: list[Ins] = []
        staged: list[int] = []  # blocks (index in the band) that went to staging
        for b in range((r1 - r0) // 64):
            rb = r0 // 64 + b
            if plan.direct(k, rb):
                base, full, part = D + (rb - boxes[k][0]) * cols, cols // 64, cols % 64
                if full:
                    out.append(transpose((S + b * 64, [width, 1]), (base, [64, 1]), full, 64, 64))
                if part:
                    out.append(
                        transpose((S + full * width + b * 64, [width, 1]), (base + full * 64, [64, 1]), 1, 64, part)
                    )
            else:
                out.append(transpose((S + b * 64, [width, 1]), (G + b * cs * 64, [64, 1]), cs, 64, 64))
                staged.append(b)
        for shift in range(n):
            j = (k + shift) % n
            s0, s1, c0, c1 = boxes[j]
            blocks = [b for b in staged if s0 <= r0 // 64 + b < s1]
            if not blocks or c1 <= c0:
                continue
            ba, nb = blocks[0], len(blocks)
            src = (G + ba * cs * 64 + c0, [cs * 64, 1])
            dst_acc = (D + (r0 // 64 + ba - s0) * (c1 - c0), [c1 - c0, 1])
            if shift == 0:
                out.append(sfp("copy", [(src[0], src[1], False)], (dst_acc[0], dst_acc[1], False), [nb, c1 - c0]))
            else:
                out.append(ring_send(src, dst_acc, shift if shift <= n // 2 else shift - n, [nb, c1 - c0], None))
        if plan.staged:
            out.append(barrier())  # every core, senders and receivers: all sends have landed
        return out

    def _splat(self, box: dict, src: Layout, dst: Layout) -> list[Ins]:
        """One element per stick -> the element in every lane (an SFP max over lane 0), or
        back (a splat already holds lane 0: a copy)."""
        op = self.compute

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
            raise PassFailedException(
                f"kernel {self.name}: 'spyre.restickify' {src} to the splat {dst} is not supported yet"
            )
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            lo = [ch[d.name][0] for d in dims]
            ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
            tile = _compact(ext)
            strides = [d.stick_stride for d in dims]
            out.append(load(self.arg(op.input), sum(l * x for l, x in zip(lo, s)), s, self.lx["tile"], tile, ext))
            if dst.is_splat:
                out.append(
                    reduce(
                        "max", (self.lx["tile"], [*tile, 0], False), (self.lx["tile"], [*tile, 0], False), [*ext, 1], 1
                    )
                )
            out.append(
                store(self.arg(op.result), self.lx["tile"], tile, sum(l * x for l, x in zip(lo, strides)), strides, ext)
            )
        return out

    def _lane_gather(self, box: dict, src: Layout, dst: Layout) -> list[Ins]:
        """Sparse (one element per stick, lane 0) -> sticked on host dim h (work.lane_gather_dim):

        for each chunk of result sticks, and each uniform part of h's 64-blocks (rows =
        64, or what the last block holds):
            DMA the rows source sticks of every result stick in   ([stick][row] in LX)
            sfp_transpose blocks = result sticks, rows, cols = 1   (lane i <- stick i's lane 0)
            DMA the result sticks out
        """
        op = self.compute
        h = lane_gather_dim(src, dst)
        assert h is not None
        dims = restickify_loops(src, dst)
        tile = next((i for i, d in enumerate(dims) if d.host_dim == h and d.weight == 64), None)
        strides = _source_strides(src, dims, ragged=tile)
        if strides is None:
            raise PassFailedException(
                f"kernel {self.name}: 'spyre.restickify' {src.shape} from device_size {list(src.device_size)}, stride_map "
                f"{list(src.stride_map)} to {list(dst.device_size)}, {list(dst.stride_map)}: the source's sticks cannot be matched"
            )
        (digit,) = src.digits[h]
        step = src.stick_strides[digit.device_dim]  # sticks between consecutive elements of h
        extent = src.host_shape[h]
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            lo = [ch[d.name][0] for d in dims]
            ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
            parts = [(None, None, extent)] if tile is None else _ragged_split(lo[tile], lo[tile] + ext[tile], extent)
            for p0, p1, rows in parts:
                plo, pext = list(lo), list(ext)
                if tile is not None:
                    plo[tile], pext[tile] = p0, p1 - p0
                blocks = math.prod(pext)
                out.append(
                    load(
                        self.arg(op.input),
                        sum(l * x for l, x in zip(plo, strides)),
                        [*strides, step],
                        self.lx["src"],
                        _compact([*pext, rows]),
                        [*pext, rows],
                    )
                )
                out.append(transpose((self.lx["src"], [rows, 1]), (self.lx["dst"], [1, 1]), blocks, rows, 1))
                out.append(
                    store(
                        self.arg(op.result),
                        self.lx["dst"],
                        _compact(pext),
                        sum(l * d.stick_stride for l, d in zip(plo, dims)),
                        [d.stick_stride for d in dims],
                        pext,
                    )
                )
        return out

    def _stick_permutation(self, box: dict, src: Layout, dst: Layout) -> list[Ins]:
        op = self.compute
        dims = restickify_loops(src, dst)
        s = operand_strides(dst, src, list(range(len(dst.host_shape))), dims)
        if s is None:
            raise PassFailedException(
                f"kernel {self.name}: 'spyre.restickify' {src.shape} from device_size {list(src.device_size)}, stride_map "
                f"{list(src.stride_map)} to {list(dst.device_size)}, {list(dst.stride_map)}: the sticks cannot be matched"
            )
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
            lo = [ch[d.name][0] for d in dims]
            ext = [ch[d.name][1] - ch[d.name][0] for d in dims]
            tile = _compact(ext)
            out.append(load(self.arg(op.input), sum(l * x for l, x in zip(lo, s)), s, self.lx["tile"], tile, ext))
            out.append(
                store(
                    self.arg(op.result),
                    self.lx["tile"],
                    tile,
                    sum(l * d.stick_stride for l, d in zip(lo, dims)),
                    [d.stick_stride for d in dims],
                    ext,
                )
            )
        return out

    def _block_transpose(self, box: dict, src: Layout, dst: Layout) -> list[Ins]:
        op = self.compute
        hs, hd = src.stick_dim, dst.stick_dim
        row_dim = transpose_row_dim(src, dst)
        err = PassFailedException(
            f"kernel {self.name}: 'spyre.restickify' {src.shape} from device_size {list(src.device_size)}, stride_map "
            f"{list(src.stride_map)} to {list(dst.device_size)}, {list(dst.stride_map)} is not supported yet"
        )
        if hs is None or hd is None or row_dim is None:
            raise err
        src_hd, src_hs, dst_hs = src.digits[hd], src.digits[hs], dst.digits[hs]
        if len(src_hd) != 1 or len(dst_hs) != 1 or len(src_hs) > 2 or (len(src_hs) == 2 and src_hs[1].weight != 64):
            raise err
        Xs, Xd = src.host_shape[hs], dst.host_shape[hd]
        st_src = src.stick_strides
        sr_hd = st_src[src_hd[0].device_dim]
        sr_tile = st_src[src_hs[1].device_dim] if len(src_hs) == 2 else 0
        dims = restickify_loops(src, dst)
        tile_dim = next((d.device_dim for d in dims if d.host_dim == hd and d.weight == 64), None)
        others = [d for d in dims if d.device_dim not in (row_dim, tile_dim)]
        src_other = _source_strides(src, others)
        if src_other is None:
            raise err
        by_dim = {d.device_dim: d for d in dims}
        st_R = by_dim[row_dim].stick_stride
        st_T = by_dim[tile_dim].stick_stride if tile_dim is not None else 0
        out: list[Ins] = []
        for ch in chunk_boxes(box, self.dims, self.chunks):
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
                    lx_blk = _compact(blk, 64)
                    base_o_src = sum(l * s for l, s in zip(o_lo, src_other))
                    base_o_dst = sum(l * d.stick_stride for l, d in zip(o_lo, others))
                    out.append(
                        load(
                            self.arg(op.input),
                            base_o_src + pa0 * sr_tile + pb0 * 64 * sr_hd,
                            [*src_other, sr_tile, 64 * sr_hd, sr_hd],
                            self.lx["src"],
                            [*lx_blk, 1],
                            [*blk, rows],
                        )
                    )
                    out.append(transpose((self.lx["src"], [64, 1]), (self.lx["dst"], [64, 1]), blocks, rows, cols))
                    out.append(
                        store(
                            self.arg(op.result),
                            self.lx["dst"],
                            [*lx_blk, 1],
                            base_o_dst + pa0 * 64 * st_R + pb0 * st_T,
                            [*[d.stick_stride for d in others], 64 * st_R, st_T, st_R],
                            [*blk, cols],
                        )
                    )
        return out


def _element_stick(layout: Layout, coords: Sequence[int]) -> int:
    """The stick holding the element at logical `coords` (lane 0 of it: coords along the
    stick dim are multiples of the stick)."""
    stick = 0
    strides = layout.stick_strides
    lane = len(layout.device_size) - 1
    for h, x in enumerate(coords if layout.shape else (0,)):
        for d in layout.digits[h]:
            c = (x // d.weight) % d.size
            if d.device_dim != lane:
                stick += c * strides[d.device_dim]
    return stick


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
    full_hi = min(hi, extent // 64)
    parts = []
    if full_hi > lo:
        parts.append((lo, full_hi, 64))
    if hi > full_hi:
        parts.append((max(lo, full_hi), hi, extent - 64 * max(lo, full_hi)))
    return parts


# endregion


def onchip_plan(kernel: spyre.KernelOp, cores: int, lx_bytes: int = DEFAULT_CONFIG.lx_bytes) -> spyre.OnchipAttr:
    """A restickify kernel's `onchip` mark (spyre-onchip-relayout), checked where it meets the
    device and the kernels around it; PassFailedException naming the kernel and the reason
    otherwise. The mark and its kernel verify the rest (spyre_marks.OnchipAttr: disjoint
    areas, whole 64-row bands; spyre.KernelOp: the transpose, bands and boxes that hold the
    tensors once).

        the device     a band and a box per core (`cores`), the areas inside LX (`lx_bytes`
                       per core, the device's)
        the producer   a pointwise kernel whose result, and its views, only this reads; it
                       leaves its result at `src` (resident_out), its boxes the bands (all
                       column sticks)
        the consumer   the result's only reader, a pointwise kernel that reads it at `dst`
                       (resident_in), its boxes the mark's boxes
        the span       the kernels from the producer to the consumer, in one block, each with
                       an lx_budget at or below the areas, which are live while they run"""
    name = kernel.sym_name.data

    def refuse(why: str) -> PassFailedException:
        return PassFailedException(f"kernel {name}: 'spyre.restickify' onchip: {why}")

    mark = kernel.onchip
    assert mark is not None
    if len(mark.bands) != cores:
        raise refuse(f"src_rows and dst_boxes are for {len(mark.bands)} cores, the device has {cores}")
    areas = mark.areas()
    for key, lo, hi in areas:
        if hi > lx_bytes:
            raise refuse(f"{key} = {lo}: its {(hi - lo) // STICK_BYTES} sticks run past the {lx_bytes} bytes of LX")
    bottom = min(lo for _, lo, _ in areas)
    bands = [list(b) for b in mark.bands]
    boxes = [list(b) for b in mark.boxes]
    # the producer: a pointwise kernel whose boxes are the bands, left in LX at src; it stores
    # nothing to DDR, so its result and the views of it have no other reader
    v = kernel.inputs[0]
    while True:
        if len(list(v.uses)) != 1:
            raise refuse(
                "its source, or a view of it, has another reader, which would read DDR that nothing wrote (the producer leaves its result in LX only)"
            )
        if not isinstance(v.owner, spyre.PermuteOp):
            break
        v = v.owner.input
    producer = v.owner
    if single_pointwise(producer) is None:
        raise refuse("its source is not a pointwise kernel's result left in LX (resident_out)")
    assert isinstance(producer, spyre.KernelOp)
    if producer.resident_out is None:
        raise refuse("its source is not a pointwise kernel's result left in LX (resident_out)")
    if producer.resident_out.offset.data != mark.src.data:
        raise refuse(
            f"src = {mark.src.data}, but the producer {producer.sym_name.data} leaves its result at {producer.resident_out.offset.data}"
        )
    p_boxes = _boxes_of(producer, cores, refuse)
    want = [None if b == (0, 0) else {"d0": (0, mark.col_sticks), "d1": b} for b in mark.bands]
    if [d.name for d in kernel_iteration_dims(producer)] != ["d0", "d1"] or p_boxes != want:
        raise refuse(
            f"src_rows {bands} are not the boxes of the producer {producer.sym_name.data} (all column sticks, its rows)"
        )
    # the consumer: the result's only reader, whose boxes are dst_boxes, reading them at dst
    users = [u.operation for u in kernel.outputs[0].uses]
    consumer = users[0] if len(users) == 1 else None
    if (
        single_pointwise(consumer) is None
        or not isinstance(consumer, spyre.KernelOp)
        or consumer.resident_in is None
    ):
        raise refuse(
            "its result (kept in LX only) is not read by exactly one pointwise kernel that takes it from LX (resident_in)"
        )
    index, at = consumer.resident_in.input.data, consumer.resident_in.offset.data
    if consumer.inputs[index] is not kernel.outputs[0] or at != mark.dst.data:
        raise refuse(f"dst = {mark.dst.data}, but the consumer {consumer.sym_name.data} reads input {index} at {at}")
    c_boxes = _boxes_of(consumer, cores, refuse)
    want = [None if b == (0, 0, 0, 0) else {"d0": (b[0], b[1]), "d1": (b[2], b[3])} for b in mark.boxes]
    if [d.name for d in kernel_iteration_dims(consumer)] != ["d0", "d1"] or c_boxes != want:
        raise refuse(f"dst_boxes {boxes} are not the boxes of the consumer {consumer.sym_name.data}")
    # no kernel from the producer to the consumer plans a buffer into the areas
    block = kernel.parent_block()
    if block is None or producer.parent_block() is not block or consumer.parent_block() is not block:
        raise refuse("its producer and consumer are not in its block")
    span = list(block.ops)
    span = span[span.index(producer) : span.index(consumer) + 1]
    for k in span:
        if isinstance(k, spyre.KernelOp) and not (k.lx_budget is not None and k.lx_budget.bytes.data <= bottom):
            raise refuse(
                f"kernel {k.sym_name.data} runs while the areas (from LX byte {bottom}) are live, and its lx_budget does not keep its buffers below them"
            )
    return mark


def _boxes_of(kernel: spyre.KernelOp, cores: int, refuse: Callable[[str], PassFailedException]) -> list:
    """Each core's box of another kernel (None: idle), or the refusal if it has no valid split."""
    if kernel.split is None:
        raise refuse(f"kernel {kernel.sym_name.data} has no split (run spyre-divide-work first)")
    try:
        return [None if b is None else dict(b) for b in kernel_core_boxes(kernel, cores)]
    except ValueError as e:
        raise refuse(f"kernel {kernel.sym_name.data}: {e}") from None


def kernel_key(kernel: spyre.KernelOp) -> tuple:
    """What two kernels must share to lower to the same program: everything but their names.

        key = (input types, output types, properties but sym_name (by name), attributes,
               for each op inside: name, properties, attributes, result types,
                                   operands as numbers (values numbered in order of definition))

    A value from outside the kernel (none today: kernels are isolated) keys by its identity."""
    number: dict[SSAValue, int] = {}
    ops = []
    for block in kernel.body.blocks:
        for a in block.args:
            number[a] = len(number)
        ops.append(("block", tuple(a.type for a in block.args)))
    for inner in kernel.body.walk():
        for region in inner.regions:
            for block in region.blocks:
                for a in block.args:
                    number[a] = len(number)
        ops.append(
            (
                inner.name,
                tuple(inner.properties.items()),
                tuple(inner.attributes.items()),
                tuple(number.get(v, id(v)) for v in inner.operands),
                tuple(r.type for r in inner.results),
                tuple(tuple(a.type for b in r.blocks for a in b.args) for r in inner.regions),
            )
        )
        for r in inner.results:
            number[r] = len(number)
    return (
        tuple(v.type for v in kernel.inputs),
        tuple(r.type for r in kernel.outputs),
        tuple(sorted((k, v) for k, v in kernel.properties.items() if k != "sym_name")),
        tuple(kernel.attributes.items()),
        tuple(ops),
    )


@dataclass(frozen=True)
class ConvertSpyreToIsaPass(ModulePass):
    """Lower planned spyre.kernel ops to spyre_isa programs and launches."""

    name = "convert-spyre-to-isa"

    cores: int = DEFAULT_CONFIG.cores
    """Cores of the device (must match spyre-divide-work)."""

    lx_bytes: int = DEFAULT_CONFIG.lx_bytes
    """LX bytes per core of the device (an `onchip` mark's areas must lie inside)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.walk() if isinstance(k, spyre.KernelOp)]
        first_func = next((f for f in op.ops if isinstance(f, func.FuncOp)), None)
        onchip = {k: onchip_plan(k, self.cores, self.lx_bytes) for k in kernels if k.onchip is not None}
        """Checked before any kernel becomes a launch: the check reads the producer and consumer kernels."""
        done: dict[tuple, spyre_isa.ProgramOp] = {}
        """Programs by `kernel_key`: the layers of a model repeat their
        kernels, and a repeat launches the first one's program (its launch names the kernel)."""
        for kernel in kernels:
            name = kernel.sym_name.data
            key = kernel_key(kernel)
            prog = done.get(key)
            if prog is None:
                gen = KernelCodegen(kernel, self.cores, onchip.get(kernel))
                arg_types = [v.type for v in kernel.inputs] + [r.type for r in kernel.outputs]
                block = Block(arg_types=arg_types)
                for a, arg_name in zip(block.args, [f"in{i}" for i in range(len(kernel.inputs))] + ["out"]):
                    a.name_hint = arg_name
                streams = fold_streams(gen.per_core(), block.args)
                for s in streams:
                    block.add_op(s)
                prog = spyre_isa.ProgramOp(gen.name, arg_types, len(kernel.inputs), Region(block))
                for attr_name, (lo, hi) in sorted(gen.resident_ranges.items()):
                    prog.attributes[attr_name] = DenseArrayBase.from_list(i64, [lo, hi])
                done[key] = prog
                if first_func is not None:
                    Rewriter.insert_op(prog, InsertPoint.before(first_func))
                else:
                    op.body.block.add_op(prog)
            launch = spyre_isa.LaunchOp(
                prog.sym_name.data, list(kernel.inputs), [r.type for r in kernel.outputs], kernel=name
            )
            Rewriter.replace_op(kernel, launch)
