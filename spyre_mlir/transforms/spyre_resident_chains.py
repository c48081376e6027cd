"""`spyre-resident-chains`: a matmul kernel whose result is read only as the A operand of the
next matmul kernel (an MLP: matmul -> activation -> matmul) keeps that result in LX; the
consumer multiplies it from there. No DDR store at the producer's end, no A load in the
consumer: the intermediate never leaves the cores.

Through DDR (without this pass):

    P: H = act(X @ W1)      every core stores its block of H (rows x all of its columns)
    C: Y = H @ W2 (+ b)     every core loads its block of H (all of K), then multiplies

Kept in LX: the two kernels get matching splits, chosen together by estimated time
(analysis/cost.py, with the resident terms: P stores nothing, C loads no A):

    P: split <n = p, m = q>        core (i, j) (m part i, n part j) = core i * p + j computes
                                   rows i, columns j of H and keeps that block in LX, dense as
                                   [column stick][row] at `out`
    C: split <n = 1, m = q, k = p> core i * p + j multiplies rows i, k range j of H (the same
                                   block, where P left it) by W2; with p > 1 the k parts add
                                   their partial sums over the ring (spyre-divide-work's k split)

The marks (spyre.attrs): P `resident_out <offset = out>` and `core_order [...]` (the cores
of P's boxes in core_boxes order: m-major, so that the n parts of one row block sit on
adjacent cores as C's k parts do); C `resident_in <input = index of H, offset = out>`; both
(and every kernel between them) `lx_budget <bytes = ...>` = the planner's budget (the
module's `spyre.target`: `planner_lx_bytes`) minus the block, which sits at its top; the
split and `multicast <chain = g>` of each (spyre-divide-work leaves a kernel with a split
alone).

The pair is marked only when its estimate beats the two kernels planned apart (as
spyre-divide-work would); a remark says what was chosen, or why not
(`spyre-opt --print-remarks`, or the `spyre_mlir.remarks` logger).

Applies to: 2-D matmul kernels (each with or without a pointwise epilogue) whose intermediate
is f16 in the generic stick layout, read by nothing but the consumer's matmul as A, with a
whole number of sticks of columns and rows that split evenly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from spyre_mlir.analysis.buffers import epilogue_sticks
from spyre_mlir.analysis.cost import (
    MatmulShape,
    best_chunks,
    matmul_shape,
    multicast_chains,
    plan_matmul,
)
from spyre_mlir.diagnostics import REMARKS
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre import epilogue, kernel_ops
from spyre_mlir.layout import Layout
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES

MAX_K_PARTS = 4
"""The consumer's k parts (as spyre-divide-work's k split: at most 4, on adjacent cores)."""


@dataclass(frozen=True)
class PairPlan:
    """Matching splits of a producer and consumer matmul, and their estimate."""

    m_parts: int
    """q: row blocks (both kernels)."""
    n_parts: int
    """p: the producer's column parts = the consumer's k parts."""
    producer_chunks: dict[str, int]
    producer_multicast: int
    consumer_chunks: dict[str, int]
    consumer_multicast: int
    seconds: float


def _matmul_kernel(kernel) -> tuple[spyre.MatmulOp, tuple[int, int, int, int] | None] | None:
    """The matmul of a matmul kernel (with or without an epilogue), and its epilogue's sticks."""
    if not isinstance(kernel, spyre.KernelOp):
        return None
    ops = kernel_ops(kernel)
    if not ops or not isinstance(ops[0], spyre.MatmulOp):
        return None
    if len(ops) == 1:
        return ops[0], None
    try:
        return ops[0], epilogue_sticks(epilogue(ops))
    except ValueError:
        return None


def plan_pair(
    producer: MatmulShape,
    consumer: MatmulShape,
    config,
    budget_sticks: int,
    double_buffer: bool,
    multicast: bool,
    split_k: bool,
    producer_epilogue=None,
    consumer_epilogue=None,
    stationary: bool = True,
) -> PairPlan | None:
    """The matching splits (q row blocks; p producer column parts = consumer k parts) with
    the least estimated time of both kernels, the intermediate resident; None: none fits."""
    n_sticks = math.ceil(producer.n / F16_LANES)
    best: PairPlan | None = None
    for p in [x for x in (1, 2, 4) if x <= (MAX_K_PARTS if split_k else 1)]:
        if n_sticks % p or (p > 1 and n_sticks // p < 2):
            continue
        for m_parts in [x for x in (1, 2, 4, 8, 16, 32, 64, 128) if x * p <= config.cores and producer.m % x == 0]:
            rows = producer.m // m_parts
            block = rows * (n_sticks // p)  # sticks of H per core
            budget = budget_sticks - block
            if budget <= 0:
                continue
            pp = pc = None
            for g in multicast_chains(m_parts, multicast):
                found = best_chunks(
                    producer,
                    {"n": p, "m": m_parts, "k": 1},
                    config,
                    budget,
                    double_buffer,
                    g,
                    producer_epilogue,
                    out_resident=True,
                    stationary=stationary,
                )
                if found is not None and (pp is None or found[1].seconds < pp[1].seconds):
                    pp = (found[0], found[1], g)
                found = best_chunks(
                    consumer,
                    {"n": 1, "m": m_parts, "k": p},
                    config,
                    budget,
                    double_buffer,
                    g,
                    consumer_epilogue,
                    a_resident=True,
                )
                if found is not None and (pc is None or found[1].seconds < pc[1].seconds):
                    pc = (found[0], found[1], g)
            if pp is None or pc is None:
                continue
            seconds = pp[1].seconds + pc[1].seconds
            if best is None or seconds < best.seconds:
                best = PairPlan(m_parts, p, pp[0], pp[2], pc[0], pc[2], seconds)
    return best


@dataclass(frozen=True)
class SpyreResidentChainsPass(ModulePass):
    """Keep a matmul kernel's result in LX for the matmul kernel that reads it as A."""

    name = "spyre-resident-chains"

    double_buffer: bool = True
    """Whether spyre-plan-scratchpad double-buffers (changes the estimates)."""

    multicast: bool = True
    """Whether the kernels may pass B tiles along the ring (as spyre-divide-work's option)."""

    split_k: bool = True
    """Whether the consumer may split its k (the producer's columns) over adjacent cores."""

    stationary_a: bool = True
    """Whether the producer's small A blocks may stay whole in LX (spyre-plan-scratchpad's option)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = spyre.module_target(op)
        order = [k for k in op.walk() if isinstance(k, spyre.KernelOp)]
        for kernel in order:
            if _matmul_kernel(kernel) is None:
                continue
            readers = [u.operation for u in kernel.outputs[0].uses]
            matmuls = [r for r in readers if _matmul_kernel(r) is not None]
            if not matmuls:
                continue
            consumer = matmuls[0]
            assert isinstance(consumer, spyre.KernelOp)
            reason = (
                "the intermediate has other readers (they read it from DDR)"
                if len(readers) > 1
                else self._try(kernel, consumer, order, config)
            )
            if reason is not None:
                REMARKS.info(
                    "%s -> %s: the intermediate goes through DDR: %s",
                    kernel.sym_name.data,
                    consumer.sym_name.data,
                    reason,
                )

    def _try(
        self, p: spyre.KernelOp, c: spyre.KernelOp, order: list[spyre.KernelOp], config: DeviceConfig
    ) -> str | None:
        """Mark the pair; the reason it does not apply, or None."""
        pm, cm = _matmul_kernel(p), _matmul_kernel(c)
        assert pm is not None and cm is not None, "the chain's kernels are matmul kernels"
        (pmm, pep), (cmm, cep) = pm, cm
        for k in (p, c):
            if k.split is not None or any(mark is not None for mark in (k.resident_in, k.resident_out, k.core_order)):
                return f"{k.sym_name.data} already has a split or a resident value"
        v = p.outputs[0]
        index = [i for i, x in enumerate(c.inputs) if x == v]
        if len(index) != 1:
            return "the consumer reads the intermediate more than once"
        arg = c.body.block.args[index[0]]
        if [u.operation for u in arg.uses] != [cmm] or cmm.lhs is not arg or cmm.rhs is arg:
            return "the consumer reads the intermediate other than as its matmul's A operand"
        layout = spyre.device_layout(v.type)
        if (
            len(layout.shape) != 2
            or layout.element_bytes != 2
            or layout.canonical() != Layout.generic(layout.shape, 2).canonical()
        ):
            return "the intermediate is not a 2-D f16 tensor in the generic stick layout"
        if spyre.device_layout(cmm.lhs.type).canonical() != layout.canonical():
            return "the consumer's A is not the intermediate's layout"
        ps, cs = matmul_shape(pmm), matmul_shape(cmm)
        if ps.batched or cs.batched or (ps.m, ps.n) != (cs.m, cs.k):
            return "only 2-D matmuls chain"
        if ps.n % F16_LANES:
            return f"the intermediate's {ps.n} columns are not whole sticks"
        span = order[order.index(p) : order.index(c) + 1]  # the pair and the kernels between
        budget = config.planner_lx_bytes // STICK_BYTES
        for k in span:
            if k.lx_budget is not None:
                budget = min(budget, k.lx_budget.bytes.data // STICK_BYTES)
        plan = plan_pair(
            ps, cs, config, budget, self.double_buffer, self.multicast, self.split_k, pep, cep, self.stationary_a
        )
        if plan is None:
            return "no matching splits fit LX"
        apart = [
            plan_matmul(s, config, budget, self.double_buffer, self.multicast, e, self.split_k, self.stationary_a)
            for s, e in ((ps, pep), (cs, cep))
        ]
        planned = [a for a in apart if a is not None]
        if len(planned) == len(apart):
            seconds = sum(a[2].seconds for a in planned)
            if seconds <= plan.seconds:
                return f"planned apart they are estimated faster ({seconds * 1e6:.1f} us against {plan.seconds * 1e6:.1f} us)"
        q, n = plan.m_parts, plan.n_parts
        rows = ps.m // q
        block = rows * (ps.n // F16_LANES // n)
        top = (budget - block) * STICK_BYTES
        # P's boxes in core_boxes order (n parts slowest) placed m-major: box (j, i) -> core i * n + j
        core_order = [(b % q) * n + b // q for b in range(n * q)]
        p.split = spyre.SplitAttr({"n": n, "m": q, "k": 1})
        c.split = spyre.SplitAttr({"n": 1, "m": q, "k": n})
        p.resident_out = spyre.ResidentOutAttr(top)
        p.core_order = spyre.CoreOrderAttr(core_order)
        c.resident_in = spyre.ResidentInAttr(index[0], top)
        for k, g in ((p, plan.producer_multicast), (c, plan.consumer_multicast)):
            if g > 1:
                k.multicast = spyre.MulticastAttr(g)
        for k in span:
            k.lx_budget = spyre.LxBudgetAttr(top)
        REMARKS.info(
            "%s -> %s: the intermediate stays in LX (%d bytes per core): split m = %d, n = k = %d, estimated %.1f us",
            p.sym_name.data,
            c.sym_name.data,
            block * STICK_BYTES,
            q,
            n,
            plan.seconds * 1e6,
        )
        return None
