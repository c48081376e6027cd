"""The sanitizer: refuse, per launch, what the hardware forbids or leaves undefined.

    LX overflow                 an access past the core's 2 MiB (checked where LX is touched)
    DMA outside an allocation   DDR sticks past the end of the tensor (checked by the DMA)
    uninitialised LX            reading LX sticks no instruction of this launch has written
    DDR race                    two cores touching one DDR stick, at least one writing, with no
                                sync (signal/wait, barrier) ordering them
    per-core span               one core addressing more than 256 MB of one tensor
    deadlock                    every unfinished core blocked (the scheduler reports it)

Races use vector clocks: core c's clock vc[c] counts, per core d, the epochs of d that c has
synchronised with. An access by d in epoch e is ordered before c's access iff e < vc[c][d].
`signal` and `barrier` close the signalling cores' epochs; `wait` and `barrier` merge clocks.
Every error names the kernel, the core, the instruction and the bytes.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import TYPE_CHECKING

import numpy as np

from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES

if TYPE_CHECKING:
    from spyre_mlir.sim.memory import DdrTensor


def _byte_range(sticks: np.ndarray) -> str:
    lo, hi = int(sticks.min()), int(sticks.max()) + 1
    return f"bytes [{lo * STICK_BYTES}, {hi * STICK_BYTES})"


class _DdrState:
    """What a launch did to one DDR tensor: per stick its last writer and that write's epoch;
    per (core, stick) the epoch of the core's last read (-1: none), kept as the list of reads
    until a write needs them (a (cores, sticks) array is 23 MiB for an embedding table that a
    gather only reads, at every launch)."""

    def __init__(self, sticks: int, cores: int):
        self.sticks, self.cores = sticks, cores
        self.writer = np.full(sticks, -1, dtype=np.int16)
        self.write_epoch = np.zeros(sticks, dtype=np.int32)
        self.reads: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        """(cores (n, 1), sticks (n, T), epochs (n, 1)) of each read, in order."""
        self._read_epoch: np.ndarray | None = None
        self.has_writes = False
        """Whether any stick has been written (until then no access can race with a write)."""

    def has_reads(self) -> bool:
        """Whether any stick has been read (until then no write can race with a read)."""
        return bool(self.reads) or self._read_epoch is not None

    def read_epoch(self) -> np.ndarray:
        """(cores, sticks): the epoch of each core's last read of each stick, -1 if none."""
        if self._read_epoch is None:
            self._read_epoch = np.full((self.cores, self.sticks), -1, dtype=np.int32)
        for own, flat, epoch in self.reads:
            self._read_epoch[own, flat] = epoch
        self.reads.clear()
        return self._read_epoch


_NO_LOW = np.iinfo(np.int64).max
"""A span's lowest stick before any access."""


class Sanitizer:
    def __init__(self, config: DeviceConfig):
        self.config = config
        self.cores = config.cores

    def begin(self, kernel: str) -> None:
        self.kernel = kernel
        self.written = np.zeros((self.cores, self.config.lx_sticks), dtype=bool)
        self.vc = np.zeros((self.cores, self.cores), dtype=np.int32)
        self.tokens: dict[int, deque[np.ndarray]] = defaultdict(deque)
        self.ddr: dict[int, _DdrState] = {}
        self.span: dict[int, np.ndarray] = {}
        """Per argument, (2, cores): the lowest and highest stick each core addressed."""

    # ------------------------------------------------------------------ LX
    def lx_read(self, where: str, cores: np.ndarray, pos: np.ndarray) -> None:
        flat = pos.reshape(len(cores), -1)
        ok = self.written[cores[:, None], flat]
        if not ok.all():
            row = int(np.argmax(~ok.all(axis=1)))
            bad = flat[row][~ok[row]]
            raise DeviceError(
                f"{where}, core {cores[row]}: reads LX {_byte_range(bad)} that no instruction of this launch has written"
            )

    def lx_write(self, where: str, cores: np.ndarray, pos: np.ndarray) -> None:
        self.written[cores[:, None], pos.reshape(len(cores), -1)] = True

    # ------------------------------------------------------------------ DDR
    def ddr_access(
        self, where: str, cores: np.ndarray, arg: int, tensor: DdrTensor, pos: np.ndarray, write: bool
    ) -> None:
        n = len(cores)
        flat = pos.reshape(n, -1)
        self._check_span(where, cores, arg, tensor, flat)
        state = self.ddr.get(arg)
        if state is None:
            state = self.ddr[arg] = _DdrState(tensor.layout.num_sticks, self.cores)
        vc_rows = self.vc[cores]  # (n, cores): what each accessing core has synchronised with
        own = cores[:, None]
        if state.has_writes:  # earlier writes by other cores that these cores are not ordered after
            writer = state.writer[flat]
            seen = vc_rows[np.arange(n)[:, None], np.maximum(writer, 0)]
            conflict = (writer >= 0) & (writer != own) & (state.write_epoch[flat] >= seen)
            if conflict.any():
                self._race(where, cores, arg, tensor, flat, conflict, writer, "written", write)
        if write and state.has_reads():
            # earlier reads by other cores that these writes are not ordered after
            reads = state.read_epoch()[:, flat]  # (cores, n, T)
            others = np.arange(self.cores)[:, None, None] != own[None]
            conflict_r = others & (reads >= 0) & (reads >= vc_rows.T[:, :, None])
            if conflict_r.any():
                d, row, col = (int(i[0]) for i in np.nonzero(conflict_r))
                raise DeviceError(
                    f"{where}, core {cores[row]}: writes DDR {_byte_range(flat[row, col : col + 1])} of {self._arg(arg, tensor)} "
                    f"that core {d} read without a sync between them (a race)"
                )
        if write:
            # two cores of this instruction writing the same stick
            if n > 1:
                pairs = np.unique(flat * n + np.arange(n)[:, None])  # (stick, row) as one key, sorted
                sticks = pairs // n
                twice = sticks[1:] == sticks[:-1]  # one stick, two rows
                if twice.any():
                    stick = sticks[1:][twice][0]
                    rows = pairs[sticks == stick] % n
                    raise DeviceError(
                        f"{where}, cores {cores[rows[0]]} and {cores[rows[1]]}: both write DDR "
                        f"{_byte_range(np.array([stick]))} of {self._arg(arg, tensor)} at once (a race)"
                    )
            state.writer[flat] = own
            state.write_epoch[flat] = self.vc[cores, cores][:, None]
            state.has_writes = True
        else:
            state.reads.append((own, flat, self.vc[cores, cores][:, None]))

    def _check_span(self, where: str, cores: np.ndarray, arg: int, tensor: DdrTensor, flat: np.ndarray) -> None:
        limit = self.config.per_core_span_bytes
        lo, hi = flat.min(axis=1), flat.max(axis=1)
        span = self.span.get(arg)
        if span is None:  # this launch's first access of the tensor
            span = self.span[arg] = np.empty((2, self.cores), dtype=np.int64)
            span[0], span[1] = _NO_LOW, -1
        else:
            lo, hi = np.minimum(span[0, cores], lo), np.maximum(span[1, cores], hi)
        span[0, cores], span[1, cores] = lo, hi
        over = (hi - lo + 1) * STICK_BYTES > limit
        if over.any():
            i = int(np.argmax(over))
            raise DeviceError(
                f"{where}, core {cores[i]}: addresses bytes [{lo[i] * STICK_BYTES}, {(hi[i] + 1) * STICK_BYTES}) of "
                f"{self._arg(arg, tensor)}, a span over the {limit}-byte limit for one core in one tensor"
            )

    def _race(self, where, cores, arg, tensor, flat, conflict, writer, what, write) -> None:
        row, col = (int(i[0]) for i in np.nonzero(conflict))
        verb = "writes" if write else "reads"
        raise DeviceError(
            f"{where}, core {cores[row]}: {verb} DDR {_byte_range(flat[row, col : col + 1])} of {self._arg(arg, tensor)} "
            f"that core {writer[row, col]} {what} without a sync between them (a race)"
        )

    @staticmethod
    def _arg(arg: int, tensor: DdrTensor) -> str:
        return f"argument {arg} (shape {tensor.layout.shape})"

    # ------------------------------------------------------------------ sync
    def signal(self, cores: np.ndarray, token: int) -> None:
        for c in cores:
            self.vc[c, c] += 1
            self.tokens[token].append(self.vc[c].copy())

    def wait(self, cores: np.ndarray, token: int, count: int) -> None:
        for c in cores:
            for _ in range(count):
                self.vc[c] = np.maximum(self.vc[c], self.tokens[token].popleft())

    def barrier(self, cores: np.ndarray) -> None:
        self.vc[cores, cores] += 1
        merged = self.vc[cores].max(axis=0)
        self.vc[cores] = merged
