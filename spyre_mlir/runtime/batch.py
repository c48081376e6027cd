"""Batched execution of a program the device model has already run once with every check.

A program's control flow does not depend on the data: which instruction of which stream can
run after which follows from the sync instructions alone (signal, wait, a ring send's notify,
barrier). So the first launch of a program runs it as interpreter.py defines (streams run
cooperatively, with the LX bounds and the sanitizer), and then the program is rewritten once
into a straight list of *steps* that later launches execute without any sync bookkeeping:

    waves     the cooperative schedule in lockstep: each wave takes the next instruction of
              every stream that is not blocked (syncs are settled between waves), data
              movement (DMA, ring) before compute: a stream whose next instruction computes
              waits while others still move data, so that cores fed by a chain of ring sends
              compute together; a wave whose instructions conflict (below) is cut into
              consecutive conflict-free parts
    steps     within a wave, instructions of the same kind and shape, from any streams, become
              one instruction over all their cores (one numpy operation: their per-core index
              arrays are concatenated)

A step executes its instructions at once (reads, then writes), which equals running them one
after the other only if none writes what another reads or writes. That is checked once, from
the addresses: DDR sticks exactly, and the LX sticks that ring sends write into other cores
against everything else on those cores (as intervals, conservatively). A wave with such a
pair is cut into consecutive parts without one, each as long as it can be (they run one
after the other, a valid order of the streams; `_conflict_free`).

The steps are then regrouped by their data flow (runtime/regroup.py): writes renamed to fresh
rows, copies folded, dead rows dropped, and steps of one kind that do not depend on each other
merged, so that what a core does tile after tile becomes one step. Later launches run those.

`_Labels` and `_share_b` serve the cooperative execution (interpreter.py
`_mark_shared_operands`): PT operands that several cores hold identically are multiplied as
one matrix product per distinct B. Every LX stick carries a label: a DMA load labels it with
the DDR stick and when it was loaded, a ring send copies the source's labels, any other write
gives fresh labels; cores whose B sticks carry equal labels hold equal B.

Time is untouched: the timing model replays the original per-core instruction lists.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spyre_mlir.runtime.regroup import regroup
from spyre_mlir.runtime.timing import overlap

if TYPE_CHECKING:
    from spyre_mlir.runtime.interpreter import DeviceModel, ProgramPlan, _Plan
    from spyre_mlir.runtime.memory import DdrTensor


class Unbatchable(Exception):
    """The program keeps the cooperative execution (a gather, a deadlock, an instruction with no batched form)."""


def _signature(ins: _Plan) -> tuple | None:
    """Instructions with equal signatures can share one step; None: never merged."""
    from spyre_mlir.runtime import interpreter as I

    if isinstance(ins, I._DmaPlan):
        return ("dma", ins.arg, ins.load, ins.ddr_pos.shape[1:], ins.lx_idx.shape[1:])
    if isinstance(ins, I._PtPlan):
        if ins.shared is not None:
            return None
        return (
            "pt",
            ins.m,
            ins.n,
            ins.k,
            ins.accumulate,
            ins.a_idx.shape[1:],
            ins.b_idx.shape[1:],
            ins.c_idx.shape[1:],
        )
    if isinstance(ins, I._SfpPlan):
        imm = None if ins.imm is None else float(ins.imm)
        if imm is not None and imm != imm:  # NaN: never equal to itself
            return None
        srcs = tuple((f32, idx.shape[1:]) for (f32, _), idx in zip(ins.srcs, ins.src_idx))
        return ("sfp", ins.function, imm, srcs, ins.dst[0], ins.dst_idx.shape[1:])
    if isinstance(ins, I._ReducePlan):
        return (
            "reduce",
            ins.function,
            ins.outer,
            ins.inner,
            ins.tail,
            ins.src[0],
            ins.dst[0],
            ins.src_idx.shape[1:],
            ins.dst_idx.shape[1:],
        )
    if isinstance(ins, I._TransposePlan):
        return ("transpose", ins.rows, ins.cols, ins.src_idx.shape[1:], ins.dst_idx.shape[1:])
    if isinstance(ins, I._RingPlan):
        return ("ring", ins.src_idx.shape[1:], ins.dst_idx.shape[1:])
    return None


_ROW_ARRAYS = {
    "_DmaPlan": ("ddr_pos", "lx_idx"),
    "_PtPlan": ("a_idx", "b_idx", "c_idx", "c_pos"),
    "_ReducePlan": ("src_idx", "dst_idx"),
    "_TransposePlan": ("src_idx", "dst_idx"),
    "_RingPlan": ("src_idx", "dst_idx"),
}


def _merge(members: list[tuple[_Plan, np.ndarray]]) -> tuple[_Plan, np.ndarray]:
    """One instruction over the cores of several (same signature): row arrays concatenated."""
    first, _ = members[0]
    cores = np.concatenate([c for _, c in members])
    merged = copy.copy(first)  # a step never aliases the streams' own plans
    merged.works = []  # timing reads the streams' plans; a step need not keep the per-core works
    if len(members) == 1:
        return merged, cores
    name = type(first).__name__
    if name == "_SfpPlan":
        merged.src_idx = [np.concatenate([p.src_idx[i] for p, _ in members]) for i in range(len(first.src_idx))]
        merged.dst_idx = np.concatenate([p.dst_idx for p, _ in members])
    else:
        for attr in _ROW_ARRAYS[name]:
            setattr(merged, attr, np.concatenate([getattr(p, attr) for p, _ in members]))
    if name == "_DmaPlan":
        merged.ddr_end = max(p.ddr_end for p, _ in members)
    return merged, cores


_MOVERS = ("dma_in", "dma_out", "ring")


def schedule(plan: ProgramPlan) -> list[list[tuple[int, int]]]:
    """The waves: (stream, instruction index) of the compute instructions run together."""
    streams = plan.stream_plans()
    ns = len(streams)
    # per stream, read once: each instruction's sync, whether it moves data, what it notifies
    syncs = [[ins.sync for ins in s.instrs] for s in streams]
    moves = [[ins.engine in _MOVERS for ins in s.instrs] for s in streams]
    notifies = [[getattr(ins, "notify", None) for ins in s.instrs] for s in streams]
    sizes = [len(s.cores) for s in streams]
    ends = [len(s.instrs) for s in streams]
    pcs = [0] * ns
    tokens: dict[int, int] = defaultdict(int)
    at_barrier: set[int] = set()
    waves: list[list[tuple[int, int]]] = []
    while True:
        changed = True
        while changed:  # settle the syncs
            changed = False
            for si in range(ns):
                pc, mine, end = pcs[si], syncs[si], ends[si]
                while pc < end and si not in at_barrier:
                    sync = mine[pc]
                    if sync is None:
                        break
                    if sync[0] == "barrier":
                        at_barrier.add(si)
                        changed = True
                        break
                    if sync[0] == "wait":
                        need = sync[2] * sizes[si]
                        if tokens[sync[1]] < need:
                            break
                        tokens[sync[1]] -= need
                    else:
                        tokens[sync[1]] += sizes[si]
                    pc += 1
                    changed = True
                pcs[si] = pc
            if at_barrier and at_barrier == set(range(ns)):
                for si in at_barrier:
                    pcs[si] += 1
                at_barrier.clear()
                changed = True
        ready = [si for si in range(ns) if si not in at_barrier and pcs[si] < ends[si] and syncs[si][pcs[si]] is None]
        if not ready:
            if all(pcs[si] == ends[si] for si in range(ns)):
                return waves
            raise Unbatchable("deadlock")
        # data movement first: a stream whose next instruction computes waits while others
        # still move data, so that the cores a chain of ring sends feeds compute together
        movers = [si for si in ready if moves[si][pcs[si]]]
        ready = movers or ready
        waves.append([(si, pcs[si]) for si in ready])
        for si in ready:
            notify = notifies[si][pcs[si]]
            if notify is not None:
                tokens[notify] += sizes[si]
            pcs[si] += 1


def _conflict_free(plan: ProgramPlan, wave: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The wave cut into consecutive parts that run one after the other, each free of
    conflicts (any order of a wave's instructions is one the streams could run in: each is
    its stream's next, with its syncs settled). A conflict is a pair of instructions of one
    part of which one writes what the other reads or writes:

        DDR  exactly: an (argument, stick) that one DMA stores and another loads or stores
        LX   what a ring send writes into a core (its destination's stick interval) against
             every interval another instruction of the part touches on that core (its
             timing work's reads and writes, or another send's destination), conservatively

    (other LX is never shared: different streams hold different cores). Conflicts are
    pairwise, so the parts are found greedily: an instruction joins the part before it unless
    it conflicts with a member, and every part is as long as it can be."""
    from spyre_mlir.runtime import interpreter as I

    streams = plan.stream_plans()
    instrs = [streams[si].instrs[pc] for si, pc in wave]
    rings = any(isinstance(ins, I._RingPlan) for ins in instrs)  # else no LX is shared
    stores = any(isinstance(ins, I._DmaPlan) and not ins.load for ins in instrs)  # else no DDR conflicts
    if not rings and not stores:
        return [wave]
    parts: list[list[tuple[int, int]]] = []
    part: list[tuple[int, int]] = []
    ddr_read: set[int] = set()  # (argument << 40) + stick, of the part's DMA loads
    ddr_written: set[int] = set()  # ... of its stores
    touched: dict[int, list[tuple[int, int]]] = defaultdict(list)  # core -> LX intervals the part touches
    ring_in: dict[int, list[tuple[int, int]]] = defaultdict(
        list
    )  # core -> LX intervals the part's ring sends write into it
    # LX conflicts can only be on cores a ring send of the wave writes into
    targets = {t for ins in instrs if isinstance(ins, I._RingPlan) for t, _, _ in ins.dst_spans}
    for (si, pc), ins in zip(wave, instrs):
        own: list[tuple[int, tuple[tuple[int, int], ...]]] = []
        dst: list[tuple[int, int, int]] = []
        if rings:
            own = [
                (core, w.reads + w.writes) for core, w in zip(streams[si].cores.tolist(), ins.works) if core in targets
            ]
            if isinstance(ins, I._RingPlan):
                dst = ins.dst_spans
        ddr: list[int] = []
        if stores and isinstance(ins, I._DmaPlan):
            ddr = (ins.ddr_pos.reshape(-1) + (ins.arg << 40)).tolist()
        conflict = (
            (ddr and (not ddr_written.isdisjoint(ddr) or (not ins.load and not ddr_read.isdisjoint(ddr))))
            or any(overlap(ivs, ring_in[core]) for core, ivs in own if core in ring_in)
            or any(overlap(((lo, hi),), touched[t]) for t, lo, hi in dst if t in touched)
        )
        if conflict:
            parts.append(part)
            part = []
            ddr_read, ddr_written = set(), set()
            touched, ring_in = defaultdict(list), defaultdict(list)
        part.append((si, pc))
        if ddr:
            (ddr_read if ins.load else ddr_written).update(ddr)
        for core, ivs in own:
            touched[core].extend(ivs)
        for t, lo, hi in dst:
            touched[t].append((lo, hi))
            ring_in[t].append((lo, hi))
    parts.append(part)
    return parts


class _Labels:
    """What every LX stick holds, as a label (equal labels: equal bytes)."""

    def __init__(self, cores: int, lx_sticks: int):
        self.lx_sticks = lx_sticks
        self.labels = -np.arange(1, cores * lx_sticks + 1, dtype=np.int64)  # all different
        self.fresh = cores * lx_sticks + 1
        self.sources: dict[tuple[Any, int], int] = {}

    def write_fresh(self, rows: np.ndarray) -> None:
        rows = rows.reshape(-1)
        self.labels[rows] = -(self.fresh + np.arange(rows.size, dtype=np.int64))
        self.fresh += rows.size

    def load(self, when: Any, arg: int, rows: np.ndarray, ddr_pos: np.ndarray) -> None:
        src = self.sources.setdefault((when, arg), len(self.sources) + 1)
        self.labels[rows.reshape(-1)] = (src << 40) + ddr_pos.reshape(-1)


def _share_b(labels: _Labels, ins: _Plan) -> bool:
    """Mark a PT whose cores hold equal B bytes (equal labels at their B sticks): all of them
    alike, `shared = "rhs"`; in groups, `b_groups` (the rows of each group). False if every
    core's B differs (nothing marked)."""
    keys: dict[bytes, list[int]] = {}
    lab = labels.labels[ins.b_idx.reshape(len(ins.b_idx), -1)]
    for row in range(len(lab)):
        keys.setdefault(lab[row].tobytes(), []).append(row)
    if len(keys) == len(lab):
        return False
    if len(keys) == 1:
        ins.shared = "rhs"
    else:
        ins.b_groups = [np.asarray(rows, dtype=np.int64) for rows in keys.values()]
    return True


class BatchedProgram:
    """A program as a straight list of steps (see the module docstring)."""

    def __init__(self, plan: ProgramPlan, cores: int, lx_sticks: int):
        from spyre_mlir.runtime import interpreter as I

        waves = schedule(plan)
        streams = plan.stream_plans()
        self.steps: list[tuple[_Plan, np.ndarray]] = []
        parts = [part for wave in waves for part in _conflict_free(plan, wave)]
        for wave in parts:
            groups: dict[Any, list[tuple[_Plan, np.ndarray]]] = {}
            for si, pc in wave:
                ins = streams[si].instrs[pc]
                if isinstance(ins, I._GatherPlan):
                    raise Unbatchable("gather")
                key = _signature(ins)
                groups.setdefault(key if key is not None else ("single", si, pc), []).append((ins, streams[si].cores))
            self.steps.extend(_merge(members) for members in groups.values())

        self.steps, self.scratch_rows = regroup(self.steps, cores, lx_sticks, plan.resident_out)

    def run(self, model: DeviceModel, args: Sequence[DdrTensor]) -> None:
        model.memory.reserve_scratch(self.scratch_rows)
        for ins, cores in self.steps:
            ins.run(model, args, cores, False)
