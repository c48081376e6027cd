"""`spyre-plan-scratchpad`: place each kernel's buffers in every core's LX, chunking the
core's work until its buffers fit the planner's budget (the module's `spyre.target`:
`planner_lx_bytes`, 80% of 2 MiB by default).

    footprint(chunk) = sum of kernel_buffers(op, largest chunk over cores)   (sticks)
    while footprint > budget: double the chunks of the dim that shrinks it most
    offsets: buffers placed one after another, 128-byte aligned
    budget:  the target's, or a kernel's `lx_budget` if smaller (spyre-resident-chains and
             spyre-onchip-relayout keep values resident above it)

    spyre.kernel "k0" (...) split <...>  ->  ... split <...> chunks <k = 2> lx <lhs = 0, rhs = 16384, ...>

A kernel whose smallest chunk still does not fit is an error naming the kernel and the
bytes. Tensors larger than LX stream through it chunk by chunk (DMA in, compute, DMA out).

Options (each off is a baseline of bench/ablation.py):

    double_buffer   matmul and pointwise tiles that DMA streams get a second buffer (`lhs_1`,
                    `in0_1`, ...); convert-spyre-to-isa alternates them, so the next chunk's
                    loads and the last chunk's store overlap the compute (when both copies
                    do not fit, the kernel is planned single-buffered); an attention kernel
                    takes one copy where two would leave its steps fewer than pt_rows rows
                    (a PT pass yields 8 rows: 4 cost what 8 do)
    cost            matmul chunks: of every chunking that fits, the one with the least
                    estimated time (analysis/cost.py: re-reads, PT passes, overlap) instead of
                    halving the dim that shrinks the footprint most
    stationary_a    with `cost`: a matmul whose cores' blocks have at most 8 rows of A may keep
                    each core's whole A block in LX (`a_block` in place of `lhs`), loaded once
                    before the first PT pass, where the estimate says it is faster
                    (analysis/buffers.py, STATIONARY_A_ROWS); where the block leaves too little
                    room for the other tiles, A goes in tiles
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.buffers import KernelBuffers, epilogue_sticks
from spyre_mlir.analysis.cost import best_chunks, matmul_shape
from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import kernel_form, kernel_iteration_dims, kernel_ops
from spyre_mlir.dialects.spyre.iteration import core_boxes, max_chunk
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES


@dataclass(frozen=True)
class SpyrePlanScratchpadPass(ModulePass):
    """Chunk each kernel's per-core work to fit LX and give every buffer its LX offset."""

    name = "spyre-plan-scratchpad"

    double_buffer: bool = True
    """Second buffers for streamed matmul and pointwise tiles."""

    stationary_a: bool = True
    """With `cost`: a matmul's small A blocks may stay whole in LX (`a_block`)."""

    cost: bool = True
    """Matmul chunks by estimated time (else greedy halving)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = spyre.module_target(op)
        for kernel in op.walk():
            if isinstance(kernel, spyre.KernelOp) and kernel.lx is None:
                self.plan(kernel, config)

    def plan(self, kernel: spyre.KernelOp, config: DeviceConfig) -> None:
        if kernel.split is None:
            raise PassFailedException(f"kernel {kernel.sym_name.data}: run spyre-divide-work first (no split)")
        ops = kernel_ops(kernel)
        streamed = len(ops) > 1 or isinstance(ops[0], spyre.MatmulOp | spyre.PointwiseOp)
        if self.double_buffer and streamed and self._plan(kernel, config, double=True):
            if kernel_form(ops).attention is not None:
                self._attention_rows(kernel, config)
            return
        if not self._plan(kernel, config, double=False):
            raise AssertionError("unreachable: _plan raises when nothing fits")

    def _attention_rows(self, kernel: spyre.KernelOp, config: DeviceConfig) -> None:
        """An attention kernel planned double-buffered whose steps have fewer than
        `pt_rows` rows (a head's chunk of positions) wastes PT passes: a pass yields `pt_rows`
        rows, so 4 rows cost what 8 do. Its pipeline overlaps the PT and the SFP with one copy
        of its buffers too (the next step's scores wait only for this step's rounding of its
        own), so it takes the single-buffered plan where that has more rows a step."""
        assert kernel.chunks is not None and kernel.split is not None
        dims = kernel_iteration_dims(kernel)
        boxes = core_boxes(dims, kernel.split.as_dict(), config.cores)

        def rows(chunks: spyre.SplitAttr) -> int:
            return max_chunk(dims, boxes, chunks.as_dict())["p"]

        if rows(kernel.chunks) >= config.pt_rows:
            return
        double = (kernel.chunks, kernel.lx)
        self._plan(kernel, config, double=False)
        if rows(kernel.chunks) <= rows(double[0]):
            kernel.chunks, kernel.lx = double

    def _plan(self, kernel: spyre.KernelOp, config: DeviceConfig, double: bool) -> bool:
        """Chunks and offsets for the kernel (False: with `double`, nothing fits)."""
        dims = kernel_iteration_dims(kernel)
        assert kernel.split is not None, "plan() refuses a kernel without a split"
        split = kernel.split.as_dict()
        try:
            boxes = core_boxes(dims, split, config.cores)
        except ValueError as e:  # a split (hand-written) with more boxes than the device has cores
            raise PassFailedException(f"kernel {kernel.sym_name.data}: {e}") from None
        model = KernelBuffers(kernel, boxes)
        ops, ep, compute = model.ops, model.epilogue, model.compute
        chunks = {d.name: 1 for d in dims}
        budget_bytes = config.planner_lx_bytes  # LX above a kernel's lx_budget is held by resident buffers
        if kernel.lx_budget is not None:
            budget_bytes = min(budget_bytes, kernel.lx_budget.bytes.data)
        out_resident = isinstance(compute, spyre.MatmulOp) and kernel.resident_out is not None
        stationary = False  # a matmul's A block kept whole in LX (`a_block`), where the estimate chose it

        def buffers(ch: dict[str, int]) -> dict[str, int]:
            return model.sizes(ch, double, stationary)

        def footprint(ch: dict[str, int]) -> int:
            return sum(buffers(ch).values()) * STICK_BYTES

        if self.cost and isinstance(compute, spyre.MatmulOp):
            assert compute is not None
            found = best_chunks(
                matmul_shape(compute),
                split,
                config,
                budget_bytes // STICK_BYTES,
                double,
                model.multicast,
                epilogue_sticks(ep) if ep else None,
                model.a_resident,
                out_resident,
                self.stationary_a,
            )
            if found is not None:
                chunks, stationary = found[0], found[1].a_stationary

        size = footprint(chunks)
        while size > budget_bytes:
            best = None
            for d in dims:
                ext = max_chunk(dims, boxes, chunks)[d.name]
                if ext <= 1 or not d.chunkable:
                    continue
                trial = dict(chunks, **{d.name: min(chunks[d.name] * 2, d.size)})
                got = footprint(trial)
                if best is None or got < best[1]:
                    best = (trial, got)
            if best is None and stationary:  # the block leaves too little room: A in tiles
                stationary = False
                size = footprint(chunks)
                continue
            if best is None:
                if double:
                    return False
                parts = ", ".join(f"{name} {n * STICK_BYTES}" for name, n in buffers(chunks).items())
                last_op = compute if compute is not None else ops[-1]  # a row group's result is its last op's
                raise Unsupported(
                    f"kernel {kernel.sym_name.data}: its smallest chunk needs {size} bytes of LX per core, "
                    f"the planner's budget is {budget_bytes} ('{last_op.name}' producing {last_op.results[0].type}: "
                    f"buffers {parts} bytes, and no dim can be chunked further)"
                )
            chunks, size = best
        offsets = {}
        at = 0
        for name, sticks in buffers(chunks).items():
            offsets[name] = at * STICK_BYTES
            at += max(1, sticks)
        kernel.chunks = spyre.SplitAttr({k: v for k, v in chunks.items()})
        kernel.lx = spyre.LxPlanAttr(offsets)
        return True
