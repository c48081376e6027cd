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

The steps are then regrouped by their data flow (sim/regroup/): writes renamed to fresh
rows, copies folded, dead rows dropped, and steps of one kind that do not depend on each other
merged, so that what a core does tile after tile becomes one step. Later launches run those.

Everything here reads the plans through their interface (sim/plans/base.py: `signature`,
`accesses`, `ddr_access`, `merged`, `dst_spans`), never their families.

Time is untouched: the timing model replays the original per-core instruction lists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.plans import Plan, Step, StreamPlan
from spyre_mlir.sim.regroup import Unbatchable, regroup
from spyre_mlir.sim.timing import overlap

if TYPE_CHECKING:
    from spyre_mlir.sim.memory import DdrTensor


def _merge(members: list[tuple[Plan, np.ndarray]]) -> tuple[Plan, np.ndarray]:
    """One instruction over the cores of several (same signature): row arrays concatenated."""
    first, _ = members[0]
    return first.merged([p for p, _ in members]), np.concatenate([c for _, c in members])


_MOVERS = ("dma_in", "dma_out", "ring")


def schedule(streams: Sequence[StreamPlan]) -> list[list[tuple[int, int]]]:
    """The waves: (stream, instruction index) of the compute instructions run together."""
    ns = len(streams)
    # per stream, read once: each instruction's sync, whether it moves data, what it notifies
    syncs = [[ins.sync for ins in s.instrs] for s in streams]
    moves = [[ins.engine in _MOVERS for ins in s.instrs] for s in streams]
    notifies = [[ins.notify for ins in s.instrs] for s in streams]
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


def _conflict_free(streams: Sequence[StreamPlan], wave: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
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
    instrs = [streams[si].instrs[pc] for si, pc in wave]
    dmas = [ins.ddr_access() for ins in instrs]
    rings = any(ins.dst_spans for ins in instrs)  # else no LX is shared
    stores = any(d is not None and not d.load for d in dmas)  # else no DDR conflicts
    if not rings and not stores:
        return [wave]
    parts: list[list[tuple[int, int]]] = []
    part: list[tuple[int, int]] = []
    ddr_read: set[int] = set()  # (argument << 40) + stick, of the part's DMA loads
    ddr_written: set[int] = set()  # ... of its stores
    touched: dict[int, list[tuple[int, int]]] = defaultdict(list)  # core -> LX intervals the part touches
    ring_in: dict[int, list[tuple[int, int]]] = defaultdict(list)  # core -> LX intervals ring sends write into it
    # LX conflicts can only be on cores a ring send of the wave writes into
    targets = {t for ins in instrs for t, _, _ in ins.dst_spans}
    for (si, pc), ins, dma in zip(wave, instrs, dmas):
        own: list[tuple[int, tuple[tuple[int, int], ...]]] = []
        dst: Sequence[tuple[int, int, int]] = ()
        if rings:
            own = [
                (core, w.reads + w.writes) for core, w in zip(streams[si].cores.tolist(), ins.works) if core in targets
            ]
            dst = ins.dst_spans
        ddr: list[int] = []
        load = False
        if stores and dma is not None:
            ddr, load = (dma.pos.reshape(-1) + (dma.arg << 40)).tolist(), dma.load
        conflict = (
            (ddr and (not ddr_written.isdisjoint(ddr) or (not load and not ddr_read.isdisjoint(ddr))))
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
            (ddr_read if load else ddr_written).update(ddr)
        for core, ivs in own:
            touched[core].extend(ivs)
        for t, lo, hi in dst:
            touched[t].append((lo, hi))
            ring_in[t].append((lo, hi))
    parts.append(part)
    return parts


class BatchedProgram:
    """A program as a straight list of steps (see the module docstring): the streams' plans,
    on a device of `cores` cores, leaving LX sticks `resident_out` for a later launch."""

    def __init__(self, streams: Sequence[StreamPlan], cores: int, lx_sticks: int, resident_out: tuple[int, int] | None):
        waves = schedule(streams)
        merged: list[tuple[Plan, np.ndarray]] = []
        parts = [part for wave in waves for part in _conflict_free(streams, wave)]
        for wave in parts:
            groups: dict[Any, list[tuple[Plan, np.ndarray]]] = {}
            for si, pc in wave:
                ins = streams[si].instrs[pc]
                if ins.DATA_DEPENDENT:
                    raise Unbatchable("gather")
                key = ins.signature()
                groups.setdefault(key if key is not None else ("single", si, pc), []).append((ins, streams[si].cores))
            merged.extend(_merge(members) for members in groups.values())
        self.steps: list[tuple[Step, np.ndarray]]
        self.steps, self.scratch_rows, self.kept_rows = regroup(merged, cores, lx_sticks, resident_out)

    def run(self, model: Machine, args: Sequence[DdrTensor]) -> None:
        model.memory.reserve_scratch(self.scratch_rows, self.kept_rows)
        for ins, cores in self.steps:
            ins.run(model, args, cores, False)
