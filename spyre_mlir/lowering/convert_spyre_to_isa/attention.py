"""An attention kernel's instructions per core (spyre.Attention): for each chunk of rows of a
matrix, the scores' PT passes, their rounding, the row group's steps and the context's PT
passes, all in LX; the scores never reach DDR.

The chunks are pipelined over the engines, which each run their instructions in order: the
PT computes chunk i + 1's scores before chunk i's context, so that it works while the SFP
runs chunk i's softmax, into the second copies of the scores' sums and the group's result:

    PT    scores 0 | scores 1 | context 0 | scores 2 | context 1 | ...
    SFP              softmax 0 |            softmax 1 |            softmax 2 ...
"""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.analysis.cost import attention_chain
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre.iteration import Box, chunk_boxes
from spyre_mlir.layout import matrix_strides
from spyre_mlir.lowering.convert_spyre_to_isa.geometry import out_stick
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins, load, pt, sfp, store
from spyre_mlir.lowering.convert_spyre_to_isa.kernel import CoreCode, lowers
from spyre_mlir.lowering.convert_spyre_to_isa.matmul import multicast_step
from spyre_mlir.lowering.convert_spyre_to_isa.plan import KernelPlan
from spyre_mlir.lowering.convert_spyre_to_isa.pointwise import row_group_steps
from spyre_mlir.target.constants import PT_LANES


@lowers(spyre.Attention)
def lower_attention(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Per matrix b of the core's box, per chunk of positions, per head h (a step: rows
    h * positions + the chunk's): q's rows in; the group's other inputs' rows in (a mask's
    rows, decoded from the scores' rows: `Attention.group_index`; at the chunk's first step
    only where they are the same for every head and matrix); at the matrix's first step its
    K^T in (from DDR, or down the chain of the cores that take the matrix); the scores' PT
    pass; the previous step's context (below); the scores rounded into `s` and the group's
    steps. A step's context comes after the next step's scores: V in where the matrix changed
    (after the old V's last pass; the core's first V, whose buffer is free, is loaded from DDR
    right behind its K^T), the PT pass on the group's result and V, its rounding, and its
    store where the result places each stick (`_store_runs`)."""
    att = plan.attention
    assert att is not None
    g = att.group
    q, kt, v = att.scores.lhs, att.scores.rhs, att.context.rhs
    k1, n1 = spyre.device_layout(kt.type).shape[-2:]
    k2, n2 = spyre.device_layout(v.type).shape[-2:]
    k1_st, r, n2_st = -(-k1 // PT_LANES), -(-n1 // PT_LANES), -(-n2 // PT_LANES)
    sq_b, sq_m, sq_k = matrix_strides(spyre.device_layout(q.type))
    skt_b, skt_k, skt_n = matrix_strides(spyre.device_layout(kt.type))
    sv_b, sv_k, sv_n = matrix_strides(spyre.device_layout(v.type))
    Q, KT, V, OUT = plan.arg(q), plan.arg(kt), plan.arg(v), plan.arg(att.result)
    lx = plan.lx
    args = list(plan.args)
    inputs = [(args.index(a), a, st) for a, st in att.inputs()]  # a mask: its argument, DDR strides per [*outer, r]
    out: list[Ins] = []
    pending: tuple | None = None  # the chunk whose context is still to come: (b, m0, rows, count)
    matrix = None
    positions = att.positions
    chunks = chunk_boxes(box, plan.dims, plan.chunks)  # b and h are never chunked: chunks of positions
    steps = [(b, c, h, ch["p"]) for b in range(*box["b"]) for c, ch in enumerate(chunks) for h in range(*ch["h"])]
    shared = [(i, a, st) for i, a, st in inputs if att.same_for_every_head(st)]
    """Inputs the same for every matrix and head (a causal mask): loaded once per chunk of positions."""
    loc: dict[SSAValue, tuple[int, list[int]]] = {}
    loads = 0  # chunks of positions whose shared inputs were loaded: their buffers alternate

    chain = _chain(plan, core)
    pos = chain.index(core) if chain else 0

    def from_ddr(arg: int, base: int, strides: list[int], buf: int, rows: int, sticks: int) -> Ins:
        return load(arg, base, strides, buf, [rows, 1], [sticks, rows])

    def matrix_in(
        arg: int, base: int, strides: list[int], buf: int, rows: int, sticks: int, loaded: bool = False
    ) -> list[Ins]:
        """One matrix's K^T or V into `buf` ([stick][row]): from DDR (unless `loaded`: its
        load issued already), or down the chain of the cores that take the matrix (the first
        loads it)."""
        ins = [from_ddr(arg, base, strides, buf, rows, sticks)] if pos == 0 and not loaded else []
        if chain:
            ins += multicast_step(plan, chain, pos, 1, 1, buf, [rows, 1], [sticks, rows])
        return ins

    def v_matrix(b: int) -> tuple[int, int, list[int], int, int, int]:
        """matrix b's V as `from_ddr` and `matrix_in` take it."""
        return V, b * sv_b, [sv_n, sv_k], lx["v"], k2, n2_st

    v_of: list[int | None] = [None]  # the matrix whose V is in LX
    v_early: int | None = None  # the matrix whose V was loaded with its K^T (the core's first)

    def context(b: int, m0: int, mr: int, count: int) -> list[Ins]:
        p = plan.buf(f"v{len(g.ops) - 1}", count)
        tile = plan.buf("out", count)
        out = []
        if v_of[0] != b:  # after the previous matrix's last context pass, which read the old V
            out += matrix_in(*v_matrix(b), loaded=v_early == b)
            v_of[0] = b
        out += [
            pt((p, [r, 1]), (lx["v"], [1, k2]), (lx["context"], [2, 2 * mr]), mr, n2, k2, False),
            sfp("copy", [(lx["context"], [2 * mr, 2], True)], (tile, [mr, 1], False), [n2_st, mr]),
        ]
        for first, rows, base, s_row, s_n in _store_runs(att, b, m0, mr, n2_st):
            out.append(store(OUT, tile + first, [mr, 1], base, [s_n, s_row], [n2_st, rows]))
        return out

    for count, (b, c, h, (p0, p1)) in enumerate(steps, start=1):
        mr, m0 = p1 - p0, h * positions + p0
        qbuf = plan.buf("q", count)
        out.append(load(Q, b * sq_b + m0 * sq_m, [sq_k, sq_m], qbuf, [mr, 1], [k1_st, mr]))
        first = count == 1 or steps[count - 2][:2] != (b, c)  # the first step of this chunk of positions
        loads += first
        for i, a, st in inputs:
            if first or (i, a, st) not in shared:
                buf = plan.buf(f"a{i}", loads if (i, a, st) in shared else count)
                loc[a] = (buf, _group_input(plan, att, out, a, st, buf, b, m0, mr, r))
        if b != matrix:  # after this matrix's first rows of q (a chain's wait holds up what follows it)
            out += matrix_in(KT, b * skt_b, [skt_n, skt_k], lx["kt"], k1, r)
            if matrix is None and pos == 0:  # the first V's load right behind K^T's (its buffer is free)
                out.append(from_ddr(*v_matrix(b)))
                v_early = b
            matrix = b
        scores = plan.buf("scores", count)
        out.append(pt((qbuf, [1, mr]), (lx["kt"], [1, k1]), (scores, [2, 2 * mr]), mr, n1, k1, False))
        if pending is not None:
            out += context(*pending)
        out.append(sfp("copy", [(scores, [2 * mr, 2], True)], (lx["s"], [1, r], False), [r, mr]))
        loc[att.scores_value()] = (lx["s"], [r, 1])
        out += row_group_steps(plan, g, loc, [mr], r, count)
        pending = (b, m0, mr, count)
    if pending is not None:
        out += context(*pending)
    return CoreCode(out)


def _group_input(
    plan: KernelPlan,
    att: spyre.Attention,
    out: list[Ins],
    a: SSAValue,
    st: list[int],
    buf: int,
    b: int,
    m0: int,
    mr: int,
    r: int,
) -> list[int]:
    """Load the rows m0 .. m0 + mr of matrix b of a row group input `a` (DDR stick strides `st`
    per [*group outer loops, r]) into `buf`, dense over [row, stick] where it varies along
    them; its LX strides per [row, stick]. A chunk's rows may cross from one of the group's
    outer loops into the next (a query head's rows into the next head's): one load per run of
    rows inside one."""
    g = att.group
    row_st, col_st = st[att.rows], st[-1]
    lx_row = r if col_st else 1
    strides = [lx_row if row_st else 0, 1 if col_st else 0]
    if not row_st:  # constant along the rows and, attention() checked, along every outer loop
        if col_st:
            out.append(load(plan.arg(a), 0, [col_st], buf, [1], [r]))
        else:
            out.append(load(plan.arg(a), 0, [1], buf, [1], [1]))
        return strides
    m = m0
    while m < m0 + mr:
        idx = att.group_index(b, m)
        run = min(m0 + mr - m, g.outer[att.rows].size - idx[att.rows])
        base = sum(i * s for i, s in zip(idx, st))
        dst = buf + (m - m0) * lx_row
        if col_st:
            out.append(load(plan.arg(a), base, [row_st, col_st], dst, [lx_row, 1], [run, r]))
        else:
            out.append(load(plan.arg(a), base, [row_st], dst, [1], [run]))
        m += run
    return strides


def _store_runs(att: spyre.Attention, b: int, m0: int, mr: int, sticks: int) -> list[tuple[int, int, int, int, int]]:
    """The stores of a context tile of rows m0 .. m0 + mr of matrix b: runs of rows whose
    sticks the result places by one stride per row and one per stick (`geometry.out_stick`:
    the context's own layout, or where its relayout puts them), as (first row in the tile,
    rows, first stick, stride per row, stride per stick)."""
    if att.relayout is None:  # the context's own layout: one stride per row and per stick
        sb, sm, sn = matrix_strides(spyre.device_layout(att.context.result.type))
        return [(0, mr, b * sb + m0 * sm, sm, sn)]
    runs: list[tuple[int, int, int, int, int]] = []
    row = 0
    while row < mr:
        base = out_stick(att, b, m0 + row, 0)
        s_n = out_stick(att, b, m0 + row, 1) - base if sticks > 1 else 0
        s_row = out_stick(att, b, m0 + row + 1, 0) - base if row + 1 < mr else 0
        end = row + 1
        while end < mr and out_stick(att, b, m0 + end, 0) == base + (end - row) * s_row:
            end += 1
        if (
            sticks > 1
            and out_stick(att, b, m0 + end - 1, sticks - 1) != base + (end - 1 - row) * s_row + (sticks - 1) * s_n
        ):
            end = row + 1  # the stick stride differs along the run: a row at a time
        runs.append((row, end - row, base, s_row, s_n))
        row = end
    return runs


def _chain(plan: KernelPlan, core: int) -> list[int]:
    """With `multicast <chain = g>`: the cores that take this core's matrix, in ring order
    (cost.attention_chain: consecutive, one matrix each), which pass its K^T and V down the
    ring; else []."""
    if plan.chain is None:
        return []
    g = plan.chain
    if attention_chain(plan.boxes) != g:
        raise PassFailedException(
            f"kernel {plan.name}: multicast <chain = {g}>: an attention kernel's chains are the cores of one matrix, "
            f"consecutive and one matrix each, and its split gives {attention_chain(plan.boxes)} such cores per matrix"
        )
    box = plan.boxes[core]
    assert box is not None
    return [c for c, other in enumerate(plan.boxes) if other is not None and other["b"] == box["b"]]
