"""The sync plan: signal, wait and barrier, and the wait before a ring send's piece."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.sim import timing
from spyre_mlir.sim.plans.base import Plan, Sync, executes
from spyre_mlir.target.config import DeviceConfig


@executes(spyre_isa.BarrierOp, spyre_isa.SignalOp, spyre_isa.WaitOp)
class SyncPlan(Plan):
    """signal, wait, barrier; or (`after` given: a ring send's per-core tokens) the wait a
    ring send's `after` makes before a piece."""

    ENTRIES = ("works", "syncs")

    def __init__(
        self, op: Operation, kernel: str, index: int, n: int, config: DeviceConfig, after: list[int] | None = None
    ):
        super().__init__(op, kernel, index, n, config)
        self.syncs: list[Sync]
        """Each core's sync."""
        if after is not None:
            self.syncs = [("wait", t, 1) for t in after]
        elif isinstance(op, spyre_isa.SignalOp):
            self.syncs = [("signal", t) for t in op.token.table(n)]
        elif isinstance(op, spyre_isa.WaitOp):
            self.syncs = [("wait", t, op.count.value.data) for t in op.token.table(n)]
        else:
            self.syncs = [("barrier",)] * n
        self.works = [timing.Work(index, op.name, None, sync=sync) for sync in self.syncs]

    @classmethod
    def build(cls, op: Operation, kernel: str, index: int, cores: Sequence[int], config: DeviceConfig) -> list[Plan]:
        return [cls(op, kernel, index, len(cores), config)]

    @property
    def sync(self) -> Sync:
        return self.syncs[0]

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [], None
