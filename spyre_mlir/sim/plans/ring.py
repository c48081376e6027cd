"""The ring plan: a ring send's pieces, LX sticks from each core into another core's LX."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.sim import timing
from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.plans.base import Plan, SrcDstPlan, executes
from spyre_mlir.sim.plans.positions import flat_rows, vector_positions
from spyre_mlir.sim.plans.sync import SyncPlan
from spyre_mlir.target import cycles
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES


@executes(spyre_isa.RingSendOp)
class RingPlan(SrcDstPlan):
    """Piece k of a ring send: steps [r0, r1) of its last loop dim (`RingSend.parts`)."""

    engine = "ring"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx", "targets")
    ENTRIES = ("works", "notifies", "dst_spans")
    COPIES = True

    def __init__(
        self,
        op: spyre_isa.RingSendOp,
        kernel: str,
        index: int,
        n: int,
        config: DeviceConfig,
        whole: RingSend | None = None,
        k: int = 0,
    ):
        super().__init__(op, kernel, index, n, config)
        assert whole is not None  # `build` makes the whole send first
        r0, r1 = whole.parts[k]
        self.src, self.dst = whole.piece(whole.src, r0, r1), whole.piece(whole.dst, r0, r1)
        self.src_idx, self.dst_idx = whole.piece(whole.src_idx, r0, r1), whole.piece(whole.dst_idx, r0, r1)
        self.targets = whole.targets
        self.notifies: list[int | None] = [None] * n if op.notify is None else list(op.notify.table(n))
        """The token each core's piece notifies."""
        self.dst_spans = list(zip(whole.targets.tolist(), whole.dst_lo[k], whole.dst_hi[k]))
        """Per core, (target core, lo, hi): the LX sticks [lo, hi) the piece writes there."""
        nbytes = self.src[0].size * STICK_BYTES
        self.ring_bytes = n * nbytes
        self.works = [
            timing.Work(
                index,
                op.name,
                "ring",
                compute=cycles.ring_cycles(config, nbytes, h),
                port=nbytes,
                reads=((lo, hi),),
                notify=t,
            )
            for h, lo, hi, t in zip(whole.hops, whole.lo[k], whole.hi[k], self.notifies)
        ]

    @classmethod
    def build(cls, op: Operation, kernel: str, index: int, cores: Sequence[int], config: DeviceConfig) -> list[Plan]:
        """Per piece, the wait of its `after` (if any) and the piece; the pieces' LX rows come
        with the whole send's."""
        assert isinstance(op, spyre_isa.RingSendOp)
        n = len(cores)
        plans: list[Plan] = []
        whole = RingSend(op, cores, config)
        after = None if op.after is None else op.after.table(n)
        for k in range(len(whole.parts)):
            if after is not None:
                plans.append(SyncPlan(op, kernel, index, n, config, after))
            plans.append(cls(op, kernel, index, n, config, whole, k))
        return plans

    @property
    def notify(self) -> int | None:
        return self.notifies[0]

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.src, "ring source")
        self._write(model, self.targets, self.dst, "ring destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx = model.memory.lx_rows
        lx[self.dst_idx] = lx[self.src_idx]

    def signature(self) -> tuple:
        return ("ring", self.src_idx.shape[1:], self.dst_idx.shape[1:])


class RingSend:
    """What the pieces of one ring send share, computed once for the whole send: its source
    and destination positions and LX rows per core (a piece's are a slice of them), its target
    cores and hop counts, and per piece and core the source stick interval [lo, hi) (the
    timing model's hazard unit, as `spans` of the piece's positions)."""

    def __init__(self, op: spyre_isa.RingSendOp, cores: Sequence[int], config: DeviceConfig):
        n = len(cores)
        sizes = op.sizes.as_tuple()
        self.parts = op.pieces()
        self.rows = math.prod(sizes[:-1])
        self.src = vector_positions(op.src, sizes, n)
        self.dst = vector_positions(op.dst, sizes, n)
        shift = np.asarray(op.shift.table(n), dtype=np.int64)
        self.targets = (np.asarray(cores) + shift) % config.cores
        self.hops = np.minimum(np.abs(shift) % config.cores, config.cores - np.abs(shift) % config.cores).tolist()
        self.src_idx = flat_rows(cores, self.src, config.lx_sticks)
        self.dst_idx = flat_rows(self.targets, self.dst, config.lx_sticks)
        starts = [r0 for r0, _ in self.parts]

        def spans(pos: np.ndarray) -> tuple[list, list]:
            """[piece][core] first and past-last sticks of `pos` in each piece."""
            steps = pos.reshape(n, self.rows, sizes[-1], -1)  # (core, outer steps, last-dim step, sticks)
            lo = np.minimum.reduceat(steps.min(axis=(1, 3)), starts, axis=1)
            hi = np.maximum.reduceat(steps.max(axis=(1, 3)), starts, axis=1) + 1
            return lo.T.tolist(), hi.T.tolist()

        self.lo, self.hi = spans(self.src)
        self.dst_lo, self.dst_hi = spans(self.dst)  # in the target's LX

    def piece(self, pos: np.ndarray, r0: int, r1: int) -> np.ndarray:
        """The positions of steps [r0, r1) of the last loop dim (row-major: the fastest dim
        but an f32 vector's two sticks)."""
        if r0 == 0 and r1 * self.rows == pos.shape[1]:
            return pos
        n, tail = pos.shape[0], pos.shape[2:]
        return pos.reshape(n, self.rows, -1, *tail)[:, :, r0:r1].reshape(n, -1, *tail)
