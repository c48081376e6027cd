"""`spyre-onchip-relayout`: a transposing restickify between two pointwise kernels is done in
LX, over the ring, instead of through DDR.

Through DDR (what the kernels do without this pass):

    P: load x, compute, store s          (s in DDR)
    R: load s in 64 x 64 blocks, sfp_transpose, store d
    C: load d, compute, store y

On chip (this pass marks the three kernels; convert-spyre-to-isa lowers the marks):

    P: load x, compute into LX           core k keeps its band of s: rows [r0_k, r1_k), all
                                         columns, as [column stick][row] at `src`
    R: for each core k, concurrently:    no DDR access
         sfp_transpose its blocks        (into core j's box of d at `dst` when core k owns
                                         all of the block's destination, else into `staging`)
         ring_send to every core j the part of its transposed blocks that j's box of d holds
       barrier                           (every send has landed)
    C: read d from LX at `dst`, compute, store y

The marks (spyre.attrs): P `resident_out <offset = src>`; C `resident_in <input = i,
offset = dst>`; R `onchip <src, dst, staging, src_rows, dst_boxes>` (LX offsets in bytes; per
core the band of source rows and the box [stick lo, stick hi, row lo, row hi] of d). The
resident buffers sit at the top of the LX the kernels from P to C may use (the planner's
budget, `planner_lx_bytes` of the module's `spyre.target`, or the lowest `lx_budget` one of
them already has: spyre-resident-chains' block lies above it); each of those kernels gets
`lx_budget <bytes = ...>` = the buffers' bottom, so no planned buffer overlaps them while they
are live.

Consumer alignment (`align_consumer`, on by default): C is pointwise, so any split of it is
valid; it is split along d's sticks to match P's bands, so that every block stays on its core
(no ring traffic). Off: C keeps spyre-divide-work's split and blocks cross the ring.

Where the pattern does not apply, or the bands do not fit, the restickify stays a DDR kernel
and a remark says why (`spyre-opt --print-remarks`, or the `spyre_mlir.remarks` logger).
Applies to: rank-2 f16 tensors in the generic stick layout, the transposed dim a multiple of
64, P and C single-op pointwise kernels, each value read only along the pattern.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from spyre_mlir.diagnostics import REMARKS
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import kernel_iteration_dims, kernel_ops, single_pointwise
from spyre_mlir.dialects.spyre.iteration import Box, core_boxes
from spyre_mlir.layout import Layout
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES, TRANSPOSE_BLOCK


def _only_use(v: SSAValue) -> Operation | None:
    uses = list(v.uses)
    return uses[0].operation if len(uses) == 1 else None


@dataclass(frozen=True)
class SpyreOnchipRelayoutPass(ModulePass):
    """Mark producer, restickify and consumer kernels for an in-LX relayout over the ring."""

    name = "spyre-onchip-relayout"

    align_consumer: bool = True
    """Split the consumer so that every block stays on its core (off: its own split)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = spyre.module_target(op)
        order = [k for k in op.walk() if isinstance(k, spyre.KernelOp)]
        for kernel in order:
            ops = kernel_ops(kernel)
            if len(ops) == 1 and isinstance(ops[0], spyre.RestickifyOp) and kernel.onchip is None:
                reason = self._try(kernel, ops[0], order, config.cores, config.planner_lx_bytes)
                if reason is None:
                    REMARKS.info("%s: restickify done on chip (LX and ring), no DDR round trip", kernel.sym_name.data)
                else:
                    REMARKS.info("%s: restickify stays in DDR: %s", kernel.sym_name.data, reason)

    def _try(
        self, r: spyre.KernelOp, restick: spyre.RestickifyOp, order: list[spyre.KernelOp], cores: int, budget_bytes: int
    ) -> str | None:
        """Mark the pattern around restickify kernel `r` for a device of `cores` cores whose
        planner may use `budget_bytes` of LX; the reason it does not apply, or None."""
        # ---- the producer: a pointwise kernel whose result reaches r only through permutes
        v = r.inputs[0]
        while isinstance(v.owner, spyre.PermuteOp):
            if _only_use(v) is None:
                return "the transposed view has other readers"
            v = v.owner.input
        p = v.owner if isinstance(v.owner, Operation) else None
        if single_pointwise(p) is None:
            return f"its source is not produced by a pointwise kernel (by '{getattr(p, 'name', 'a block argument')}')"
        assert isinstance(p, spyre.KernelOp)
        if _only_use(v) is None:
            return "the source has other readers (it must stay in DDR for them)"
        if p.resident_out is not None:
            return "the producer already keeps its result in LX for another relayout"
        # ---- the consumer: one pointwise kernel reading the result
        c = _only_use(r.outputs[0])
        if single_pointwise(c) is None:
            return "its result is not read by exactly one pointwise kernel"
        assert isinstance(c, spyre.KernelOp)
        if c.resident_in is not None:
            return "the consumer already reads another operand from LX"
        # ---- the shapes: a 2-D transpose of f16 generic layouts
        src = spyre.device_layout(p.outputs[0].type)
        dst = spyre.device_layout(restick.result.type)
        if len(src.shape) != 2 or src.element_bytes != 2:
            return f"only rank-2 f16 transposes are done on chip (shape {src.shape}, {8 * src.element_bytes}-bit)"
        if (
            src.canonical() != Layout.generic(src.shape, 2).canonical()
            or dst.canonical() != Layout.generic(dst.shape, 2).canonical()
        ):
            return "source and result must be in the generic stick layout"
        rows, cols = src.shape
        if dst.shape != (cols, rows):
            return f"the result {dst.shape} is not the transpose of {src.shape}"
        if rows % TRANSPOSE_BLOCK:
            return f"the transposed dim ({rows}) is not a multiple of {TRANSPOSE_BLOCK}"
        c_index = [i for i, x in enumerate(c.inputs) if x == r.outputs[0]]
        if len(c_index) != 1:
            return "the consumer reads the result more than once"
        # ---- the bands: P split along rows in whole blocks, C split along d's sticks (aligned)
        pdims = kernel_iteration_dims(p)
        cdims = kernel_iteration_dims(c)
        if [d.name for d in pdims] != ["d0", "d1"] or [d.name for d in cdims] != ["d0", "d1"]:
            return "the pointwise kernels do not iterate the generic layout's two dims"
        blocks = rows // TRANSPOSE_BLOCK
        n = min(cores, blocks)
        psplit = {"d0": 1, "d1": n}
        pboxes = core_boxes(pdims, psplit, cores)
        bands = [None if b is None else b["d1"] for b in pboxes]
        if any(b is not None and (b[0] % TRANSPOSE_BLOCK or (b[1] % TRANSPOSE_BLOCK and b[1] != rows)) for b in bands):
            return f"{rows} rows do not split into whole {TRANSPOSE_BLOCK}-row blocks over {n} cores"
        if self.align_consumer:
            csplit = {"d0": n, "d1": 1}
        elif c.split is not None:
            csplit = c.split.as_dict()
        else:
            return "the consumer kernel has no split (spyre-divide-work gives it one)"
        cboxes = core_boxes(cdims, csplit, cores)
        # ---- LX: src band, dst box, staging (only when blocks cross the ring)
        cs = math.ceil(cols / F16_LANES)
        src_sticks = max((b[1] - b[0]) * cs for b in bands if b is not None)
        dst_sticks = max(
            ((b["d0"][1] - b["d0"][0]) * (b["d1"][1] - b["d1"][0]) for b in cboxes if b is not None), default=0
        )

        def transposed_here(band: tuple[int, int] | None, box: Box | None) -> bool:
            """The core's box of d is the transpose of its band (or it has neither)."""
            if band is None or box is None:
                return band is None and box is None
            return box["d0"] == (band[0] // F16_LANES, math.ceil(band[1] / F16_LANES)) and box["d1"] == (0, cols)

        local = all(transposed_here(bands[k], cboxes[k]) for k in range(cores))
        staging = 0 if local else src_sticks
        need = (src_sticks + dst_sticks + staging) * STICK_BYTES
        # below any budget a kernel of the span already has (spyre-resident-chains keeps a block
        # above it while these kernels run)
        first, last = order.index(p), order.index(c)
        span = order[first : last + 1]
        ceiling = min([budget_bytes] + [k.lx_budget.bytes.data for k in span if k.lx_budget is not None])
        if need > ceiling // 2:
            held = "" if ceiling == budget_bytes else f" below the {budget_bytes - ceiling} bytes resident buffers hold"
            return f"its bands need {need} bytes of LX per core, more than half the planner's budget ({ceiling} bytes{held})"
        top = ceiling - need
        src_at, dst_at, staging_at = top, top + src_sticks * STICK_BYTES, top + (src_sticks + dst_sticks) * STICK_BYTES
        # ---- mark
        p.split = spyre.SplitAttr(psplit)
        c.split = spyre.SplitAttr(csplit)
        p.resident_out = spyre.ResidentOutAttr(src_at)
        c.resident_in = spyre.ResidentInAttr(c_index[0], dst_at)
        r.onchip = spyre.OnchipAttr(
            src_at,
            dst_at,
            staging_at,
            [b if b is not None else (0, 0) for b in bands],
            [(*b["d0"], *b["d1"]) if b is not None else (0, 0, 0, 0) for b in cboxes],
        )
        for k in span:
            k.lx_budget = spyre.LxBudgetAttr(top)  # top < ceiling <= any budget it had
        return None
