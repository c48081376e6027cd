"""A matmul kernel's instructions per core: A and B tiles in, PT passes into the fp32
accumulator, the rounding copy or the pointwise epilogue, the tile out; B tiles passed down
multicast chains over the ring; k parts adding their partial sums over the ring; A read from
and the result left in LX for resident chains.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from spyre_mlir.analysis.cost import piece_rows
from spyre_mlir.analysis.sfp import pointwise_program
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects.spyre.iteration import Box, chunk_boxes, parts
from spyre_mlir.layout import matrix_strides
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import (
    Ins,
    compact,
    load,
    pt,
    ring_send,
    sfp,
    signal,
    store,
    wait,
)
from spyre_mlir.lowering.convert_spyre_to_isa.kernel import CoreCode, lowers
from spyre_mlir.lowering.convert_spyre_to_isa.plan import KernelPlan, b_events
from spyre_mlir.target.constants import PT_LANES


@lowers(spyre.MatmulOp)
def lower_matmul(plan: KernelPlan, core: int, box: Box) -> CoreCode:
    """Per (n, m, k) chunk: the B tile in (from DDR, or down the multicast chain, after the A
    tile there), the A tile in (unless resident, or stationary: the core's whole A block loaded
    once per matrix, at its first chunk, where the plan has an `a_block`), a PT pass into the
    fp32 accumulator; after a tile's last k chunk the k parts' partial sums added over the
    ring, then the rounding copy or the epilogue and the tile out (or into the resident
    block).

    A core that receives a k part's partial sums finishes a tile after the next chunk's loads:
    its `wait` for the sums holds up every later instruction of the core, and the next B and A
    tiles, into the other buffers, then stream while it waits (the accumulator, which the
    next PT pass overwrites, is read before that pass in program order)."""
    op = plan.compute
    assert isinstance(op, spyre.MatmulOp)
    la, lb, lc = (spyre.device_layout(v.type) for v in (op.lhs, op.rhs, op.result))
    M, K = la.shape[-2:]
    N = lb.shape[-1]
    (sa_b, sa_m, sa_kt), (sb_b, sb_k, sb_nt), (sc_b, sc_m, sc_nt) = map(matrix_strides, (la, lb, lc))
    A, B, C = plan.arg(op.lhs), plan.arg(op.rhs), plan.arg(op.result)
    lx = plan.lx
    out: list[Ins] = []
    resident: dict[str, tuple[int, int]] = {}
    loaded_a: tuple[int, ...] | None = None  # the A tile (or stationary block) in LX
    loaded_b = None
    n_a = n_b = n_out = 0  # loads/stores so far: double buffers alternate on their parity
    # spyre-resident-chains: A is this core's whole block, left in LX by the previous
    # launch as [k stick][row] at `a_res`; the result (after the epilogue) stays in LX,
    # the core's whole block as [n stick][row] at `c_res`
    rows = box["m"][1] - box["m"][0]
    a_res = plan.resident_in[1] if plan.resident_in is not None and plan.resident_in[0] == A else None
    c_res = plan.resident_out
    if a_res is not None:
        resident["spyre.resident_in"] = (a_res, a_res + rows * (box["k"][1] - box["k"][0]))
    # a block of few rows kept whole in LX, [k stick][row] as a resident one (buffers.STATIONARY_A_ROWS)
    stationary = a_res is None and "a_block" in lx
    mb0, kb0, kbox = box["m"][0], box["k"][0], box["k"][1] - box["k"][0]
    if c_res is not None:  # not split along k (the kernel verifies it)
        resident["spyre.resident_out"] = (c_res, c_res + rows * (box["n"][1] - box["n"][0]))
    group = plan.groups.get(core)
    pos = group.index(core) if group else 0
    n_tiles = len(b_events(box, plan.dims, plan.chunks)) if group else 0
    kt_total = math.ceil(K / PT_LANES)
    # a k split: the cores of one (b, n, m) block each sum their own k range; the partial
    # sums go down the k parts (core + 1 -> core, adjacent on the ring), the first rounds
    k_parts = parts(kt_total, plan.split.get("k", 1))
    k_pos, k_end, n_partial = k_parts.index(box["k"]), box["k"][1], 0
    # one matrix at a time (the tiles hold one); within it the (n, m, k) chunks in order,
    # so that the k chunks of one output tile accumulate back to back
    all_chunks = chunk_boxes(box, plan.dims, plan.chunks)
    b_ranges = list(dict.fromkeys(ch.get("b", (0, 1)) for ch in all_chunks))
    chunks = [(b, ch) for br in b_ranges for b in range(*br) for ch in all_chunks if ch.get("b", (0, 1)) == br]
    b_keys = [(b, ch["n"], ch["k"]) for b, ch in chunks]
    receives = k_pos < len(k_parts) - 1  # waits for the next k part's partial sums
    finish: list[Ins] = []  # the previous tile's end, deferred past this chunk's loads
    for i, (b, ch) in enumerate(chunks):
        (n0, n1), (m0, m1), (k0, k1) = ch["n"], ch["m"], ch["k"]
        mr, nst, kst = m1 - m0, n1 - n0, k1 - k0
        r0, r1 = k0 * PT_LANES, min(K, k1 * PT_LANES)
        ncols = min(N, n1 * PT_LANES) - n0 * PT_LANES
        a_in: list[Ins] = []  # this chunk's A load, after its B load from DDR (below)
        if a_res is not None:  # this chunk of the resident block
            lhs = (a_res + (k0 - kb0) * rows + m0 - mb0, [1, rows])
        elif stationary:  # this chunk of the stationary block, loaded at the matrix's first chunk
            if loaded_a != (b,):
                a_in.append(
                    load(A, b * sa_b + kb0 * sa_kt + mb0 * sa_m, [sa_kt, sa_m], lx["a_block"], [rows, 1], [kbox, rows])
                )
                loaded_a = (b,)
            lhs = (lx["a_block"] + (k0 - kb0) * rows + m0 - mb0, [1, rows])
        else:
            if loaded_a != (b, m0, m1, k0, k1):  # A tile as [k stick][row]
                n_a += 1
                a_in.append(
                    load(
                        A,
                        b * sa_b + k0 * sa_kt + m0 * sa_m,
                        [sa_kt, sa_m],
                        plan.buf("lhs", n_a),
                        [mr, 1],
                        [kst, mr],
                    )
                )
                loaded_a = (b, m0, m1, k0, k1)
            lhs = (plan.buf("lhs", n_a), [1, mr])
        if group is not None:  # B down a chain: A first (the chain's waits would hold it up)
            out += a_in
            a_in = []
        if loaded_b != (b, n0, n1, k0, k1):  # B tile as [n stick][k row]
            n_b += 1
            rhs = plan.buf("rhs", n_b)
            if group is None or pos == 0:  # the chain's first core loads B from DDR
                out.append(load(B, b * sb_b + n0 * sb_nt + r0 * sb_k, [sb_nt, sb_k], rhs, [r1 - r0, 1], [nst, r1 - r0]))
            if group is not None:
                out += multicast_step(plan, group, pos, n_b, n_tiles, rhs, [r1 - r0, 1], [nst, r1 - r0])
            loaded_b = (b, n0, n1, k0, k1)
        # without a chain, B before A: a core's first loads are then of B, which a weight's
        # frozen copy lets start before the launch's barrier (DeviceConfig.early_loads)
        out += a_in
        out += finish
        finish = []
        out.append(
            pt(
                lhs,
                (plan.buf("rhs", n_b), [1, r1 - r0]),
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
            if n_b + len(plan.copies("rhs")) <= n_tiles:
                out.append(signal(2 * group[pos] + 1))
        sums = (lx["acc"], [2 * mr, 2], True)  # the tile's fp32 sums, as an SFP source
        end = finish if receives else out
        if k1 == k_end and (receives or k_pos > 0):
            if receives:  # add the next k part's partial sums, then free its buffer
                end.append(wait(_partial_token(plan, core)))
                end.append(sfp("add", [sums, (lx["acc_in"], [2 * mr, 2], True)], sums, [nst, mr]))
                end.append(signal(_partial_token(plan, core) + 1))
            if k_pos > 0:  # pass the sums to the previous k part, once its buffer is free
                credit = _partial_token(plan, core - 1) + 1 if n_partial else None
                end.append(
                    ring_send(
                        (lx["acc"], [1]),
                        (lx["acc_in"], [1]),
                        -1,
                        [2 * mr * nst],
                        _partial_token(plan, core - 1),
                        after=credit,
                    )
                )
                n_partial += 1
                continue
        if k1 == k_end:  # round the fp32 sums into the output tile (or run the epilogue on them), then store it
            n_out += 1
            kept = None if c_res is None else (c_res + (n0 - box["n"][0]) * rows + m0 - box["m"][0], [rows, 1], False)
            if plan.epilogue is None:
                tile_out = plan.buf("out", n_out)
                end.append(sfp("copy", [sums], kept or (tile_out, [mr, 1], False), [nst, mr]))
            else:
                tile_out = _epilogue(plan, end, sums, n_out, n0, m0, nst, mr, kept)
                C = plan.arg(plan.epilogue.pointwise.result)
            if kept is None:
                end.append(store(C, tile_out, [mr, 1], b * sc_b + n0 * sc_nt + m0 * sc_m, [sc_nt, sc_m], [nst, mr]))
    return CoreCode(out + finish, resident)


def _partial_token(plan: KernelPlan, core: int) -> int:
    """Token: partial sums landed in `core`'s acc_in (+ 1: `core` has added them, acc_in is
    free), after the multicast chains' tokens 2c and 2c + 1."""
    return 2 * plan.cores + 2 * core


def _epilogue(
    plan: KernelPlan,
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
    ep = plan.epilogue
    assert ep is not None
    access: dict[tuple[str, int], tuple[int, list[int], bool]] = {}
    for i, (sn, sm) in enumerate(ep.strides):
        if i == ep.operand:
            access[("in", i)] = sums
            continue
        v = ep.pointwise.inputs[i]
        kept = [(n, st, full) for n, st, full in ((nst, sn, 0), (mr, sm, 1)) if st]
        buf = plan.lx[f"e{i}"]
        if kept:
            lx_strides = compact([n for n, _, _ in kept])
            out.append(
                load(
                    plan.arg(v),
                    n0 * sn + m0 * sm,
                    [st for _, st, _ in kept],
                    buf,
                    lx_strides,
                    [n for n, _, _ in kept],
                )
            )
        else:
            out.append(load(plan.arg(v), 0, [1], buf, [1], [1]))
        strides = [0, 0]
        for (_, _, which), x in zip(kept, compact([n for n, _, _ in kept]) if kept else []):
            strides[which] = x
        access[("in", i)] = (buf, strides, False)
    res = plan.buf("res", count)
    access[("out", 0)] = dst if dst is not None else (res, [mr, 1], False)
    steps, temps = pointwise_program(ep.pointwise)
    for k in range(temps):
        access[("t", k)] = (plan.lx[f"t{k}"], [2 * mr, 2], True)
    for step in steps:
        out.append(sfp(step.fn, [access[x] for x in step.srcs], access[step.dst], [nst, mr], step.imm))
    return res


def multicast_step(
    plan: KernelPlan,
    group: Sequence[int],
    pos: int,
    tile: int,
    tiles: int,
    rhs: int,
    lx_strides: list[int],
    sizes: list[int],
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
    depth = len(plan.copies("rhs"))
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
