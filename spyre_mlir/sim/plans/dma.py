"""DMA plans: sticks between DDR and LX (dma_load, dma_store), and rows picked at run time by
host indices (dma_gather, dma_scatter)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import BlockArgument

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.memory import DdrTensor, DeviceError, StickRows
from spyre_mlir.sim.plans.base import DdrAccess, Labels, Plan, executes
from spyre_mlir.sim.plans.positions import flat_rows, positions, spans
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES


@executes(spyre_isa.DmaOp)
class DmaPlan(Plan):
    PER_CORE = ("ddr_pos", "lx_pos", "lx_idx")
    POSITIONS = ("lx_pos",)

    def __init__(self, op: spyre_isa.DmaOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
        sizes = op.sizes.as_tuple()
        assert isinstance(op.ddr, BlockArgument)
        self.arg = op.ddr.index
        self.load = isinstance(op, spyre_isa.DmaLoadOp)
        self.engine = "dma_in" if self.load else "dma_out"
        self.ddr_pos = positions(op.ddr_access, sizes, n)
        self.lx_pos = positions(op.lx_access, sizes, n)
        nbytes = self.ddr_pos.shape[1] * STICK_BYTES
        self.ddr_read, self.ddr_write = (n * nbytes, 0) if self.load else (0, n * nbytes)
        latency = config.ddr_latency_cycles
        if self.load:
            self._works(n, latency=latency, port=nbytes, ddr=nbytes, writes=[self.lx_pos])
        else:
            self._works(n, latency=latency, port=nbytes, ddr=nbytes, reads=[self.lx_pos])
        for w, span in zip(self.works, spans(self.ddr_pos + (self.arg << 40))):
            if self.load:
                w.ddr_reads = span
            else:
                w.ddr_writes = span
        self._derive()

    def _derive(self) -> None:
        self.ddr_end = int(self.ddr_pos.max()) + 1 if self.ddr_pos.size else 0

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.lx_idx = flat_rows(cores, self.lx_pos, lx_sticks)

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        else:
            self.check_ddr_bounds(args[self.arg], cores)
        t, lx = args[self.arg], model.memory.lx_rows
        if self.load:
            lx[self.lx_idx] = t.data.take(self.ddr_pos, axis=0)
        else:
            StickRows(t.data)[self.ddr_pos] = lx[self.lx_idx]

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        t = args[self.arg]
        self.check_ddr_bounds(t, cores)
        san = model.sanitizer
        if self.load:
            if san:
                san.ddr_access(self.where, cores, self.arg, t, self.ddr_pos, write=False)
            self._write(model, cores, self.lx_pos, "DMA")
        else:
            self._read(model, cores, self.lx_pos, "DMA")
            if san:
                san.ddr_access(self.where, cores, self.arg, t, self.ddr_pos, write=True)

    def check_ddr_bounds(self, t: DdrTensor, cores: np.ndarray) -> None:
        if self.ddr_end > t.data.shape[0]:
            row = int(np.argmax(self.ddr_pos.max(axis=1)))
            bad = self.ddr_pos[row][self.ddr_pos[row] >= t.data.shape[0]]
            raise DeviceError(
                f"{self.where}, core {cores[row]}: DMA reaches DDR bytes [{int(bad.min()) * STICK_BYTES}, "
                f"{(int(bad.max()) + 1) * STICK_BYTES}) outside argument {self.arg}, a {t.nbytes}-byte tensor"
            )

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return ([], self.lx_idx) if self.load else ([self.lx_idx], None)

    def ddr_access(self) -> DdrAccess:
        return DdrAccess(self.arg, np.broadcast_to(self.ddr_pos, self.lx_idx.shape), self.load)

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> DmaPlan:
        step = self._copy()
        assert isinstance(step, DmaPlan) and ddr_pos is not None
        lx_idx = write if self.load else reads[0]
        assert lx_idx is not None
        step.lx_idx, step.ddr_pos = lx_idx, ddr_pos
        step._derive()
        return step

    def signature(self) -> tuple:
        return ("dma", self.arg, self.load, self.ddr_pos.shape[1:], self.lx_idx.shape[1:])

    def label(self, labels: Labels, when: Any) -> None:
        if self.load:
            labels.load(when, self.arg, self.lx_idx, self.ddr_pos)


class _IndexedRowsPlan(Plan):
    """A DMA of `count` rows of `row_sticks` sticks per core between LX (`lx_access`) and the
    DDR rows that host indices handed over at launch pick (dma_gather in, dma_scatter out)."""

    DATA_DEPENDENT = True

    def __init__(
        self,
        op: spyre_isa.DmaGatherOp | spyre_isa.DmaScatterOp,
        kernel: str,
        index: int,
        n: int,
        config: DeviceConfig,
        ddr: BlockArgument,
    ):
        super().__init__(op, kernel, index, n, config)
        assert isinstance(op.indices, BlockArgument)
        self.ddr_arg, self.index_arg = ddr.index, op.indices.index
        self.ddr_layout = spyre.device_layout(ddr.type)
        self.count, self.row_sticks = op.count.value.data, op.row_sticks.value.data
        self.index_base = np.asarray(op.index_base.table(n), dtype=np.int64)
        self.lx_pos = positions(op.lx_access, [self.count, self.row_sticks], n)
        nbytes = self.count * self.row_sticks * STICK_BYTES
        load = self.engine == "dma_in"
        lx = [self.lx_pos]
        self._works(
            n,
            latency=config.ddr_latency_cycles,
            port=nbytes,
            ddr=nbytes,
            reads=() if load else lx,
            writes=lx if load else (),
        )
        whole = ((self.ddr_arg << 40, (self.ddr_arg << 40) + self.ddr_layout.num_sticks),)
        for w in self.works:
            if load:
                w.ddr_reads = whole
            else:
                w.ddr_writes = whole
        if load:
            self.ddr_read = n * nbytes
        else:
            self.ddr_write = n * nbytes

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.lx_idx = flat_rows(cores, self.lx_pos, lx_sticks)

    def picked(self, args: Sequence[Any]) -> np.ndarray:
        """The host indices each core's rows take: (cores, count)."""
        idx = np.asarray(args[self.index_arg]).reshape(-1)
        return idx[self.index_base[:, None] + np.arange(self.count)[None]]


@executes(spyre_isa.DmaGatherOp)
class GatherPlan(_IndexedRowsPlan):
    """DMA of table rows picked at run time by the host indices handed over at launch."""

    engine = "dma_in"
    PER_CORE = ("index_base", "stick_pos", "lx_pos", "lx_idx")

    def __init__(self, op: spyre_isa.DmaGatherOp, kernel: str, index: int, n: int, config: DeviceConfig):
        assert isinstance(op.table, BlockArgument)
        super().__init__(op, kernel, index, n, config, op.table)
        first = op.first_stick.table(n) if op.first_stick is not None else [0] * n
        steps = self.ddr_layout.dim_stick_steps()
        if steps is not None and self.ddr_layout.stick_dim == 1:  # (a table read as it is: spyre.table_rows)
            self.s_row, self.s_stick = steps
        else:
            strides = self.ddr_layout.stick_strides
            digits = self.ddr_layout.digits
            self.s_row = strides[digits[0][0].device_dim] if digits[0] else 0
            self.s_stick = strides[digits[1][-1].device_dim] if len(digits[1]) > 1 else 0
        self.stick_pos = (
            np.asarray(first, dtype=np.int64)[:, None] + np.arange(self.row_sticks)[None, :]
        ) * self.s_stick
        """Per core, the DDR stick offset within a row of each stick it takes (from `first_stick`)."""

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        table = args[self.ddr_arg]
        rows = self.picked(args)
        vocab = self.ddr_layout.shape[0]
        if rows.size and (rows.min() < 0 or rows.max() >= vocab):
            bad = int(rows[(rows < 0) | (rows >= vocab)][0])
            raise DeviceError(f"{self.where}: index {bad} is out of range for a table of {vocab} rows")
        pos = (rows * self.s_row)[:, :, None] + self.stick_pos[:, None, :]
        pos = pos.reshape(len(cores), -1)
        if model.sanitizer and check:
            model.sanitizer.ddr_access(self.where, cores, self.ddr_arg, table, pos, write=False)
        if check:
            self._write(model, cores, self.lx_pos, "gather")
        model.memory.lx_rows[self.lx_idx] = table.read_rows(rows, pos)

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [], self.lx_idx


@executes(spyre_isa.DmaScatterOp)
class ScatterPlan(_IndexedRowsPlan):
    """DMA of LX rows into DDR rows picked at run time by the host indices handed over at launch."""

    engine = "dma_out"
    PER_CORE = ("index_base", "outer", "lx_pos", "lx_idx")

    def __init__(self, op: spyre_isa.DmaScatterOp, kernel: str, index: int, n: int, config: DeviceConfig):
        assert isinstance(op.out, BlockArgument)
        super().__init__(op, kernel, index, n, config, op.out)
        self.outer = np.asarray(op.outer.table(n), dtype=np.int64)
        steps = self.ddr_layout.dim_stick_steps()
        assert steps is not None  # a verified scatter's destination has rows by strides
        self.s_o, self.s_row, self.s_stick = steps

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        out = args[self.ddr_arg]
        rows = self.picked(args)
        length = self.ddr_layout.shape[1]
        if rows.size and (rows.min() < -length or rows.max() >= length):
            bad = int(rows[(rows < -length) | (rows >= length)][0])
            raise DeviceError(f"{self.where}: index {bad} is out of range for {length} rows")
        rows = np.where(rows < 0, rows + length, rows)
        pos = (self.outer[:, None] * self.s_o + rows * self.s_row)[:, :, None] + (
            np.arange(self.row_sticks) * self.s_stick
        )[None, None, :]
        pos = pos.reshape(len(cores), -1)
        if check:
            self._read(model, cores, self.lx_pos, "scatter")
        if model.sanitizer and check:
            model.sanitizer.ddr_access(self.where, cores, self.ddr_arg, out, pos, write=True)
        StickRows(out.data)[pos] = model.memory.lx_rows[self.lx_idx]

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [self.lx_idx], None
