"""The plans of a stream, and which PT operands the cores of a stream hold alike."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.sim.plans.base import Labels, Unlabelled, plan_instruction
from spyre_mlir.sim.plans.pt import PtPlan
from spyre_mlir.sim.plans.ring import RingPlan
from spyre_mlir.sim.plans.sync import SyncPlan
from spyre_mlir.target.config import DeviceConfig


class StreamPlan:
    """The plans of one `spyre_isa.stream`, in order, for its cores."""

    def __init__(self, stream: spyre_isa.StreamOp, kernel: str, config: DeviceConfig):
        self.cores = np.asarray(stream.core_list, dtype=np.int64)
        bad = [c for c in stream.core_list if c >= config.cores]
        if bad:
            raise DeviceError(f"kernel {kernel}: a stream uses core {bad[0]} but the device has {config.cores} cores")
        ops = stream.body.block.ops
        self.n_ops = len(ops)
        self.instrs = [
            plan for i, op in enumerate(ops) for plan in plan_instruction(op, kernel, i, stream.core_list, config)
        ]
        """The instructions' plans in order (a ring send in pieces has several; `index` is the
        instruction's)."""

    def lockstep(self) -> bool:
        """Whether the executors may run this stream's cores together, instruction by
        instruction (spyre_isa.StreamOp): one core, or one token per sync for all its cores and
        not both waiting for tokens and producing them.

            lockstep = cores == 1 or (every sync's and notify's token table is uniform
                                      and not ((any wait or after) and (any signal or notify)))"""
        if len(self.cores) < 2:
            return True
        waits = produces = False
        for ins in self.instrs:
            tokens: Sequence[Any]
            if isinstance(ins, SyncPlan):
                tokens, kind = ins.syncs, ins.syncs[0][0]
            elif isinstance(ins, RingPlan) and ins.notifies[0] is not None:
                tokens, kind = ins.notifies, "notify"
            else:
                continue
            if len(set(tokens)) > 1:
                return False
            waits |= kind == "wait"
            produces |= kind in ("signal", "notify")
        return not (waits and produces)

    def split(self) -> list[StreamPlan]:
        """One stream plan per core, in core order (`Plan.split`)."""
        n = len(self.cores)
        rows = [ins.split(n) for ins in self.instrs]
        out = []
        for i in range(n):
            one = copy.copy(self)
            one.cores = self.cores[i : i + 1]
            one.instrs = [r[i] for r in rows]
            out.append(one)
        return out


def mark_shared_operands(streams: Sequence[StreamPlan], cores: int, lx_sticks: int) -> None:
    """Find the PT operands that cores of a stream hold identically (the same bytes at their
    operand's LX sticks), from the addresses alone: LX sticks carry labels (`Labels`), equal
    when a DMA load gave them the same DDR sticks, fresh after any other write. Programs with
    ring sends (which write other streams' LX) are left alone."""
    instrs = [ins for s in streams for ins in s.instrs]
    used = [int(c) for s in streams for c in s.cores]
    if any(ins.dst_spans for ins in instrs) or len(set(used)) != len(used):
        return
    labels = Labels(cores, lx_sticks)
    try:
        for si, s in enumerate(streams):
            if len(s.cores) < 2:
                continue
            for i, ins in enumerate(s.instrs):
                ins.label(labels, (si, i))
    except (IndexError, Unlabelled):  # an access outside LX: the checked launch will say where
        for ins in instrs:
            if isinstance(ins, PtPlan):
                ins.unshare()
