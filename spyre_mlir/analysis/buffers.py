"""LX buffers of a kernel's chunk: the sticks each of its tiles, temporaries and accumulators
needs for a chunk of a given extent (spyre-plan-scratchpad places them, convert-spyre-to-isa
checks a plan against them (`KernelBuffers`); analysis/cost.py and spyre-divide-work size chunks by them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import Operation

from spyre_mlir.analysis.sfp import pointwise_program
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import (
    Attention,
    Epilogue,
    RowGroup,
    kernel_form,
    kernel_ops,
    pointwise_loops,
)
from spyre_mlir.dialects.spyre.iteration import Box, lane_gather_dim, lane_scatter_dim, max_chunk, transpose_row_dim
from spyre_mlir.target.constants import F16_LANES, TRANSPOSE_BLOCK

MULTICAST_BUFFERS = 2
"""B tile buffers of a multicast kernel (spyre-plan-scratchpad). Measured on the MLP of
bench/ablation.py: 4 buffers gave the same time as 2 (docs/optimizations.md), so 2."""


STATIONARY_A_ROWS = 8
"""A matmul whose cores' blocks have at most this many rows of A (one PT pass of rows: a
decode step's matrix-vector products), and no multicast chain (whose cores wait for B pieces
between chunks), may keep each core's whole A block in LX, loaded once
per matrix before its first PT pass (`a_block`), instead of loading an A tile per chunk:
tiles that small would each take one of the DMA engine's `dma_queue_depth` slots behind the B
tile streaming before them, so that every B tile after the first paid the DDR latency again."""


def a_block_sticks(boxes: Sequence[Box | None], a_resident: bool = False, multicast: int = 1) -> int:
    """Sticks of the largest core's whole A block ([k stick][row]) if every core's block has
    at most STATIONARY_A_ROWS rows (A may be stationary), else 0; 0 too for an A an earlier
    launch left in LX (`a_resident`) and under a multicast chain (`multicast` > 1, whose cores
    wait for B pieces between chunks)."""
    live = [b for b in boxes if b is not None]
    if a_resident or multicast > 1 or not live or max(b["m"][1] - b["m"][0] for b in live) > STATIONARY_A_ROWS:
        return 0
    return max((b["m"][1] - b["m"][0]) * (b["k"][1] - b["k"][0]) for b in live)


class KernelBuffers:
    """A kernel's LX buffers, what they follow from read off the kernel once (its ops, epilogue
    or row group, iteration dims, the cores' `boxes`, multicast, resident A, k split), so that
    `sizes` can be asked for many chunkings (spyre-plan-scratchpad's search)."""

    def __init__(self, kernel: spyre.KernelOp, boxes: Sequence[Box | None]):
        assert kernel.split is not None, "a kernel's buffers follow from its split"
        self.ops = kernel_ops(kernel)
        form = kernel_form(self.ops)
        self.epilogue, self.group, self.attention = form.epilogue, form.group, form.attention
        self.compute = form.compute
        """The compute op (a matmul with its epilogue, a concat with the slices it reads), or
        None for a row group."""
        self.transposed_b = any(g.transposed is not None for g in form.gathered)
        """A matmul (or attention) whose B tiles (K^T) are gathered and transposed in LX
        (spyre.GatheredOperand): the gathered rows need a tile's sticks of their own (`gathered`)."""
        self.dims = form.dims()
        self.boxes = boxes
        self.args = list(kernel.body.block.args)
        is_matmul = isinstance(self.compute, spyre.MatmulOp)
        self.k_split = is_matmul and kernel.split.as_dict().get("k", 1) > 1
        self.multicast = kernel.multicast.chain.data if kernel.multicast is not None else 1
        # spyre-resident-chains: a matmul whose A an earlier launch left in LX loads no A tiles
        # (the kernel verifies that a matmul's resident_in names its A)
        self.a_resident = is_matmul and kernel.resident_in is not None
        self.a_block = a_block_sticks(boxes, self.a_resident, self.multicast) if is_matmul else 0
        """Sticks of a stationary A block (0: A cannot be stationary)."""

    def sizes(self, chunks: dict[str, int], double: bool, stationary: bool = False) -> dict[str, int]:
        """LX sticks of every buffer spyre-plan-scratchpad places for a chunking, in placement order
        (`stationary`: a matmul's A block stays in LX, `a_block` in place of `lhs`):

        the compute op's buffers (kernel_buffers, or row_group_buffers for a row group)
        + an epilogue's (epilogue_buffers)
        + gathered                 a matmul's B tiles (attention's K^T) gathered and transposed in LX
                                   (`gathered_scratch`)
        + acc_in = acc             a matmul split along k: the next k part's partial sums
        + rhs_1 .. = rhs           multicast: B tiles arrive from heads at different distances
        + name_1 = name            `double`: the tiles DMA streams (lhs, rhs but multicast,
                                   out, res, a row group's inputs and result, a pointwise's inputs)
        """
        ext = max_chunk(self.dims, self.boxes, chunks)
        if self.attention is not None:
            bufs = attention_buffers(self.attention, ext["p"], self.args, double)
            if self.transposed_b:
                bufs["gathered"] = gathered_scratch(bufs["kt"])
            return bufs
        if self.group is not None:
            bufs = row_group_buffers(self.group, ext, self.args)
        else:
            assert self.compute is not None
            a_block = self.a_block if stationary else 0
            bufs = kernel_buffers(self.compute, ext, self.a_resident, self.epilogue is not None, a_block)
        if self.transposed_b:
            bufs["gathered"] = gathered_scratch(bufs["rhs"])
        if self.epilogue is not None:
            bufs.update(epilogue_buffers(self.epilogue, ext["m"], ext["n"]))
        if self.k_split:
            bufs["acc_in"] = bufs["acc"]
        if self.multicast > 1:
            for i in range(1, MULTICAST_BUFFERS):
                bufs[f"rhs_{i}"] = bufs["rhs"]
        if double:
            last = f"v{len(self.ops) - 1}"
            for name in list(bufs):
                if name == "rhs" and self.multicast > 1:
                    continue
                streamed_input = name[:1] == "a" and name[1:].isdigit() or name[:2] == "in" and name[2:].isdigit()
                if name in ("lhs", "rhs", "out", "res", last) or streamed_input:
                    bufs[f"{name}_1"] = bufs[name]
        return bufs


def matmul_tiles(
    m: int, n: int, k: int, a_resident: bool = False, epilogue: bool = False, a_block: int = 0
) -> dict[str, int]:
    """LX sticks of a matmul chunk's tiles: m rows by k sticks of A, k sticks of 64 rows by n
    sticks of B, the fp32 accumulator (two sticks per 64 lanes) and the rounded output.
    A resident A (`a_resident`: an earlier launch left it in LX) needs no tile, a stationary
    one (`a_block` sticks, the largest core's block: a_block_sticks) the block in place of the
    tile; with an epilogue the accumulator is read by the epilogue, whose result tile
    (epilogue_buffers) replaces the output tile."""
    bufs = {"lhs": m * k, "rhs": F16_LANES * k * n, "acc": 2 * m * n, "out": m * n}
    if a_resident or a_block:
        del bufs["lhs"]
    if a_block and not a_resident:
        bufs = {"a_block": a_block, **bufs}
    if epilogue:
        del bufs["out"]
    return bufs


def kernel_buffers(
    op: Operation, ext: dict[str, int], a_resident: bool = False, epilogue: bool = False, a_block: int = 0
) -> dict[str, int]:
    """LX sticks each buffer of a kernel needs for a chunk of extent `ext` (units per dim);
    a matmul's `a_resident`, `epilogue` and `a_block` as in matmul_tiles."""
    if isinstance(op, spyre.MatmulOp):
        return matmul_tiles(ext["m"], ext["n"], ext["k"], a_resident, epilogue, a_block)
    if isinstance(op, spyre.PointwiseOp):
        dims, all_strides = pointwise_loops(op)
        vectors = math.prod(ext[d.name] for d in dims)
        bufs = {}
        for i, strides in enumerate(all_strides):
            bufs[f"in{i}"] = math.prod(ext[d.name] for d, s in zip(dims, strides) if s != 0)
        bufs["out"] = vectors
        _, temps = pointwise_program(op)
        for j in range(temps):
            bufs[f"t{j}"] = 2 * vectors
        return bufs
    if isinstance(op, spyre.GatherOp):
        return {"rows": ext["n"] * op.row_sticks}
    if isinstance(op, spyre.ScatterOp):
        values = spyre.device_layout(op.values.type)
        return {"rows": ext["o"] * ext["n"] * -(-values.shape[2] // values.lanes)}
    if isinstance(op, spyre.SliceOp | spyre.ConcatOp):
        return {"tile": math.prod(ext.values())}
    if isinstance(op, spyre.ReduceOp):
        vectors = math.prod(v for k, v in ext.items() if k != "r")
        bufs = {"in": vectors * ext["r"], "out": vectors}
        if op.kind.data in ("sum", "mean"):
            bufs["acc"] = 2 * vectors
        return bufs
    if isinstance(op, spyre.RestickifyOp):
        src, dst = spyre.device_layout(op.input.type), spyre.device_layout(op.result.type)
        units = math.prod(ext.values())
        if lane_gather_dim(src, dst) is not None:
            return {"src": TRANSPOSE_BLOCK * units, "dst": units}
        if lane_scatter_dim(src, dst) is not None:  # a source stick per block, its 64 elements' sticks
            return {"src": units, "dst": TRANSPOSE_BLOCK * units}
        if transpose_row_dim(src, dst) is None:
            return {"tile": units}
        return {"src": TRANSPOSE_BLOCK * units, "dst": TRANSPOSE_BLOCK * units}
    raise ValueError(f"'{op.name}' is not a kernel compute op")


def epilogue_buffers(ep: Epilogue, m: int, n: int) -> dict[str, int]:
    """LX sticks of an epilogue's buffers for an output tile of m rows x n sticks: `e{i}` the
    other inputs' tiles, `t{k}` f32 temporaries, `res` the result tile."""
    bufs: dict[str, int] = {}
    for i, (sn, sm) in enumerate(ep.strides):
        if i != ep.operand:
            bufs[f"e{i}"] = (n if sn else 1) * (m if sm else 1)
    for k in range(pointwise_program(ep.pointwise)[1]):
        bufs[f"t{k}"] = 2 * m * n
    bufs["res"] = m * n
    return bufs


def epilogue_sticks(ep: Epilogue) -> tuple[int, int, int, int]:
    """LX sticks the epilogue adds per output tile: (per output stick of the tile, per n stick,
    per row, fixed): full-tile inputs, the result tile and the f32 temporaries; inputs that
    vary along n only (a bias) or along rows only; a single broadcast stick."""
    per_mn = 1 + 2 * pointwise_program(ep.pointwise)[1]
    per_n = per_m = fixed = 0
    for i, (sn, sm) in enumerate(ep.strides):
        if i == ep.operand:
            continue
        if sn and sm:
            per_mn += 1
        elif sn:
            per_n += 1
        elif sm:
            per_m += 1
        else:
            fixed += 1
    return per_mn, per_n, per_m, fixed


def row_group_buffers(group: RowGroup, ext: dict[str, int], args: Sequence) -> dict[str, int]:
    """LX sticks per buffer of a row group's chunk: `a{i}` the kernel inputs read (their
    non-broadcast loops), `v{j}` each op's result, `t{k}` the f32 temporaries of the pointwise
    steps (shared by the ops), `acc` a sum's f32 partials."""
    vectors = math.prod(ext[d.name] for d in group.outer)
    r = ext["r"]
    bufs: dict[str, int] = {}
    for i, a in enumerate(args):
        users = [o for o in group.ops if a in o.operands]
        if users:
            st = group.strides(a, users[0])
            sizes = [ext[d.name] for d in group.outer] + [r]
            bufs[f"a{i}"] = math.prod(n for n, s in zip(sizes, st) if s != 0)
    temps = 0
    for j, o in enumerate(group.ops):
        full = group.is_full(o.results[0])
        bufs[f"v{j}"] = vectors * (r if full else 1)
        if isinstance(o, spyre.PointwiseOp):
            temps = max(temps, pointwise_program(o)[1])
    for k in range(temps):
        bufs[f"t{k}"] = 2 * vectors * r
    if any(isinstance(o, spyre.ReduceOp) and o.kind.data in ("sum", "mean") for o in group.ops):
        bufs["acc"] = 2 * vectors
    return bufs


GATHERED_SCRATCH_BLOCKS = 2
"""64 x 64 blocks the LX of a kernel's gathered, transposed K^T holds at most before their
transposes: two halves that the gathers of consecutive runs of blocks alternate between."""


def gathered_scratch(tile: int) -> int:
    """Sticks of the `gathered` buffer for a B tile (or K^T) of `tile` sticks."""
    return min(tile, GATHERED_SCRATCH_BLOCKS * TRANSPOSE_BLOCK)


def attention_buffers(att: Attention, rows: int, args: Sequence, double: bool) -> dict[str, int]:
    """LX sticks per buffer of an attention kernel's chunk of `rows` rows (spyre.Attention):
    `q` the rows of q ([k stick][row]), `kt` and `v` one matrix's whole K^T and V (B tiles:
    [n stick][k row]), `scores` the scores' fp32 sums ([n stick][row]), `s` the rounded scores
    ([row][stick]), the row group's buffers on those rows (as row_group_buffers names them:
    `a{i}` its inputs, `v{j}` its values, the last of which is the second product's A, `t{k}`
    its temporaries, `acc` a sum's partials), `context` the second product's fp32 sums and
    `out` its rounded tile ([n stick][row]). With `double`, q, the group's inputs, the scores'
    sums, the group's result and `out` get a second copy: the next chunk's scores are computed
    while the group works on this one's (convert-spyre-to-isa pipelines them)."""
    k1, r = matrix_sticks(att.scores.rhs)
    k2, n2 = matrix_sticks(att.context.rhs)
    bufs = {
        "q": rows * -(-k1 // F16_LANES),
        "kt": k1 * r,
        "v": k2 * n2,
        "scores": 2 * rows * r,
        "s": rows * r,
    }
    read = dict(att.inputs())
    for i, a in enumerate(args):  # the group's inputs: dense over the rows and sticks they vary along
        if (st := read.get(a)) is not None:
            bufs[f"a{i}"] = (rows if st[att.rows] else 1) * (r if st[-1] else 1)
    one_row = row_group_buffers(att.group, {**{d.name: 1 for d in att.group.outer}, "r": r}, [])
    for name, sticks in one_row.items():
        bufs[name] = sticks * rows
    bufs["context"] = 2 * rows * n2
    bufs["out"] = rows * n2
    if double:
        last = f"v{len(att.group.ops) - 1}"
        for name in list(bufs):
            if name in ("q", "scores", "out", last) or name[:1] == "a" and name[1:].isdigit():
                bufs[f"{name}_1"] = bufs[name]
    return bufs


def matrix_sticks(v) -> tuple[int, int]:
    """A matrix operand's rows and its columns in sticks (its last two dims)."""
    shape = spyre.device_layout(v.type).shape
    return shape[-2], -(-shape[-1] // F16_LANES)
