"""The reference device model: executes `spyre_isa` programs on byte-array memories.

Every instruction executes on numpy views of whole sticks, and an SPMD instruction executes
for all cores of its stream as one numpy operation (per-core bases become an index axis).
16-bit values are decoded from / encoded to the numerics mode's bit patterns on every read
and write, so every store rounds exactly as the device does; PT products accumulate in fp32.

Streams of one program run cooperatively: each runs until it blocks on a `wait` without
enough tokens or reaches a `barrier`; a barrier releases when every stream has reached it;
if no stream can move, the program is deadlocked and the model says where each core stands.

The host side of a compiled module (transfers, launches, host torch ops) is `runtime/host.py`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import hashlib
import math
import operator
import os
import pickle
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from threadpoolctl import ThreadpoolController
from xdsl.ir import BlockArgument, Operation

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.runtime import timing
from spyre_mlir.runtime.batch import BatchedProgram, Unbatchable, _Labels, _share_b
from spyre_mlir.runtime.memory import DdrTensor, DeviceError, DeviceMemory, StickRows
from spyre_mlir.runtime.profile import KernelRecord, Profile, record_launch
from spyre_mlir.runtime.sanitizer import Sanitizer
from spyre_mlir.target import cycles
from spyre_mlir.target.config import DEFAULT_CONFIG, DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES

# region BLAS threads

_BLAS: Any = None
_blas_depth = 0


@contextlib.contextmanager
def host_threads() -> Iterator[None]:
    """While the device model runs (re-entrant): torch on one thread, numpy's BLAS on the
    threads torch had. torch is idle then, and the PT steps' f64 products are the largest
    part of a forward; OpenBLAS threads a product only above its own size threshold (~1 M
    multiply-adds: a core's 128 x 64 x 64 tile stays on one thread). torch's OpenMP threads
    must rest meanwhile: with both pools at two threads, a product after a torch op waits on
    threads still spinning (a 128 x 384 x 1152 f64 product: 2.4 ms on one BLAS thread, 1.3
    ms on two, 10 ms on two beside torch's two; docs/performance.md)."""
    global _BLAS, _blas_depth
    if _blas_depth == 0:
        if _BLAS is None:
            _BLAS = ThreadpoolController().select(internal_api="openblas")
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
        limit = _BLAS.limit(limits=torch_threads)
    _blas_depth += 1
    try:
        yield
    finally:
        _blas_depth -= 1
        if _blas_depth == 0:
            limit.restore_original_limits()
            torch.set_num_threads(torch_threads)


# endregion
# region Instruction plans


def loop_offsets(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Stick offsets of a loop nest, outer dim first (row-major over `sizes`); read-only,
    shared by every access with the same loop nest (a program's instructions repeat a few)."""
    return _loop_offsets(tuple(sizes), tuple(strides))


@functools.lru_cache(maxsize=4096)
def _loop_offsets(sizes: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    off = np.zeros(1, dtype=np.int64)
    for n, s in zip(sizes, strides):
        off = (off[:, None] + np.arange(n, dtype=np.int64) * s).reshape(-1)
    off.flags.writeable = False
    return off


def _bases(acc: spyre_isa.AccessAttr, n: int) -> np.ndarray:
    return np.asarray(acc.base.table(n), dtype=np.int64)


def _flat(cores: Sequence[int] | np.ndarray, pos: np.ndarray, lx_sticks: int) -> np.ndarray:
    """Row indices into the (cores * lx_sticks, 128) view of LX of positions `pos` (one row
    per core), so that an access is one 1-D gather instead of a 2-D one."""
    c = np.asarray(cores, dtype=np.int64).reshape(-1, *([1] * (pos.ndim - 1)))
    return c * lx_sticks + pos


def _rows(field: Any, n: int) -> list[Any]:
    """A per-core field (an array (n, ...), or a list or tuple of such and of flags) as n
    fields of one core each: row i of every array (a view), the flags as they are."""
    if isinstance(field, np.ndarray):
        return list(field[:, None])
    if isinstance(field, list | tuple):
        if not field:
            return [type(field)() for _ in range(n)]
        return [type(field)(parts) for parts in zip(*(_rows(x, n) for x in field))]
    return [field] * n  # a flag beside an array, as an SFP access's (is_f32, positions)


def _spans(pos: np.ndarray) -> list[tuple[tuple[int, int], ...]]:
    """Per core (row of `pos`), the stick interval its access covers, as a one-interval tuple
    (empty for no access): the timing model's hazard unit."""
    flat = pos.reshape(pos.shape[0], -1)
    if not flat.size:
        return [()] * flat.shape[0]
    return [((lo, hi),) for lo, hi in zip(flat.min(axis=1).tolist(), (flat.max(axis=1) + 1).tolist())]


class _Plan:
    """An instruction prepared for execution on the cores of one stream: `run` does its
    semantics for all of them at once; `works` are its per-core costs for the timing model.

    `run(..., check)`: with `check` false the LX bounds and the sanitizer are skipped; the
    program plan asks for them until one launch has passed them (they depend on addresses
    only, and a program's addresses are the same at every launch)."""

    engine: str | None = None
    ddr_read = 0
    ddr_write = 0
    ring_bytes = 0
    macs = 0
    sync: tuple | None = None
    PER_CORE: tuple[str, ...] = ()
    """The fields with a row per core of the stream (arrays, or lists and tuples of them: `split`)."""
    ENTRIES: tuple[str, ...] = ("works",)
    """The lists with an entry per core of the stream (`split`)."""
    TOTALS = ("ddr_read", "ddr_write", "ring_bytes", "macs")
    """The counts summed over the stream's cores (`split` divides them; ProgramPlan.counts sums them)."""

    def __init__(self, op: Operation, kernel: str, index: int, n: int):
        self.op = op
        self.index = index
        self.where = f"kernel {kernel}, instruction #{index} ({op.name})"
        self.works: list[timing.Work] = []  # one per core, set by each kind of plan

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        """Precompute the LX row indices of this instruction's accesses on these cores."""

    def split(self, n: int) -> list[_Plan]:
        """This plan of a stream of n cores as n plans of one core each, the same as planning
        the instruction for each core alone (test_stream_split.py compares every field):

            for i in range(n): row i of every per-core field (PER_CORE), entry i of every
                               per-core list (ENTRIES); the totals (bytes, MACs) / n"""
        mine = vars(self)
        rows = {name: _rows(mine[name], n) for name in self.PER_CORE}
        rows.update((name, [[x] for x in mine[name]]) for name in self.ENTRIES)
        totals = {name: mine[name] // n for name in self.TOTALS if name in mine}
        cls, out = type(self), []
        for i in range(n):
            p = cls.__new__(cls)
            p.__dict__.update(mine, **totals, **{name: r[i] for name, r in rows.items()})
            p._derive()
            out.append(p)
        return out

    def _derive(self) -> None:
        """Fields derived from the per-core ones (set again on each plan `split` makes)."""

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        pass

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        """What `run(..., check=True)` checks, in the same order, without moving data (the
        checks depend on addresses only)."""

    def _works(self, n: int, *, reads=(), writes=(), **cost: float) -> None:
        read_spans, write_spans = [_spans(p) for p in reads], [_spans(p) for p in writes]
        self.works = [
            timing.Work(
                self.index,
                self.op.name,
                self.engine,
                reads=tuple(x for sp in read_spans for x in sp[i]),
                writes=tuple(x for sp in write_spans for x in sp[i]),
                **cost,
            )
            for i in range(n)
        ]

    def _check_lx(self, model: DeviceModel, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        lim = model.config.lx_sticks
        if pos.size and pos.max() >= lim:
            row = int(np.argmax(pos.reshape(len(cores), -1).max(axis=1)))
            raise DeviceError(
                f"{self.where}, core {cores[row]}: {what} reaches LX bytes up to "
                f"{(int(pos.max()) + 1) * STICK_BYTES} beyond the {lim * STICK_BYTES}-byte scratchpad"
            )

    def _read(self, model: DeviceModel, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        self._check_lx(model, cores, pos, what)
        if model.sanitizer:
            model.sanitizer.lx_read(self.where, cores, pos)

    def _write(self, model: DeviceModel, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        self._check_lx(model, cores, pos, what)
        if model.sanitizer:
            model.sanitizer.lx_write(self.where, cores, pos)


class _DmaPlan(_Plan):
    PER_CORE = ("ddr_pos", "lx_pos", "lx_idx")

    def __init__(self, op: spyre_isa.DmaOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n)
        sizes = op.sizes.as_tuple()
        assert isinstance(op.ddr, BlockArgument)
        self.arg = op.ddr.index
        self.load = isinstance(op, spyre_isa.DmaLoadOp)
        self.engine = "dma_in" if self.load else "dma_out"
        self.ddr_pos = _bases(op.ddr_access, n)[:, None] + loop_offsets(sizes, op.ddr_access.strides.as_tuple())[None]
        self.lx_pos = _bases(op.lx_access, n)[:, None] + loop_offsets(sizes, op.lx_access.strides.as_tuple())[None]
        nbytes = self.ddr_pos.shape[1] * STICK_BYTES
        self.ddr_read, self.ddr_write = (n * nbytes, 0) if self.load else (0, n * nbytes)
        lx = {"writes": [self.lx_pos]} if self.load else {"reads": [self.lx_pos]}
        self._works(n, latency=config.ddr_latency_cycles, port=nbytes, ddr=nbytes, **lx)
        for w, span in zip(self.works, _spans(self.ddr_pos + (self.arg << 40))):
            if self.load:
                w.ddr_reads = span
            else:
                w.ddr_writes = span
        self._derive()

    def _derive(self) -> None:
        self.ddr_end = int(self.ddr_pos.max()) + 1 if self.ddr_pos.size else 0

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.lx_idx = _flat(cores, self.lx_pos, lx_sticks)

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        else:
            self._check_ddr_bounds(args[self.arg], cores)
        t, lx = args[self.arg], model.memory.lx_rows
        if self.load:
            lx[self.lx_idx] = t.data.take(self.ddr_pos, axis=0)
        else:
            StickRows(t.data)[self.ddr_pos] = lx[self.lx_idx]

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        t = args[self.arg]
        self._check_ddr_bounds(t, cores)
        san = model.sanitizer
        if self.load:
            if san:
                san.ddr_access(self.where, cores, self.arg, t, self.ddr_pos, write=False)
            self._write(model, cores, self.lx_pos, "DMA")
        else:
            self._read(model, cores, self.lx_pos, "DMA")
            if san:
                san.ddr_access(self.where, cores, self.arg, t, self.ddr_pos, write=True)

    def _check_ddr_bounds(self, t: DdrTensor, cores: np.ndarray) -> None:
        if self.ddr_end > t.data.shape[0]:
            row = int(np.argmax(self.ddr_pos.max(axis=1)))
            bad = self.ddr_pos[row][self.ddr_pos[row] >= t.data.shape[0]]
            raise DeviceError(
                f"{self.where}, core {cores[row]}: DMA reaches DDR bytes [{int(bad.min()) * STICK_BYTES}, "
                f"{(int(bad.max()) + 1) * STICK_BYTES}) outside argument {self.arg}, a {t.nbytes}-byte tensor"
            )


class _GatherPlan(_Plan):
    """DMA of table rows picked at run time by the host indices handed over at launch."""

    engine = "dma_in"
    PER_CORE = ("index_base", "lx_pos", "lx_idx")

    def __init__(self, op: spyre_isa.DmaGatherOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n)
        assert isinstance(op.table, BlockArgument) and isinstance(op.indices, BlockArgument)
        self.table_arg, self.index_arg = op.table.index, op.indices.index
        self.table_layout = spyre.device_layout(op.table.type)
        self.count, self.row_sticks = op.count.value.data, op.row_sticks.value.data
        self.index_base = np.asarray(op.index_base.table(n), dtype=np.int64)
        self.lx_pos = (
            _bases(op.lx_access, n)[:, None]
            + loop_offsets([self.count, self.row_sticks], op.lx_access.strides.as_tuple())[None]
        )
        strides = self.table_layout.stick_strides
        digits = self.table_layout.digits
        self.s_row = strides[digits[0][0].device_dim] if digits[0] else 0
        self.s_stick = strides[digits[1][-1].device_dim] if len(digits[1]) > 1 else 0
        nbytes = self.count * self.row_sticks * STICK_BYTES
        self.ddr_read = n * nbytes
        self._works(n, latency=config.ddr_latency_cycles, port=nbytes, ddr=nbytes, writes=[self.lx_pos])
        whole = (self.table_arg << 40, (self.table_arg << 40) + self.table_layout.num_sticks)
        for w in self.works:
            w.ddr_reads = (whole,)

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.lx_idx = _flat(cores, self.lx_pos, lx_sticks)

    def run(self, model: DeviceModel, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        table = args[self.table_arg]
        idx = np.asarray(args[self.index_arg]).reshape(-1)
        rows = idx[self.index_base[:, None] + np.arange(self.count)[None]]  # (n, count)
        vocab = self.table_layout.shape[0]
        if rows.size and (rows.min() < 0 or rows.max() >= vocab):
            bad = int(rows[(rows < 0) | (rows >= vocab)][0])
            raise DeviceError(f"{self.where}: index {bad} is out of range for a table of {vocab} rows")
        pos = (rows * self.s_row)[:, :, None] + (np.arange(self.row_sticks) * self.s_stick)[None, None, :]
        pos = pos.reshape(len(cores), -1)
        if model.sanitizer and check:
            model.sanitizer.ddr_access(self.where, cores, self.table_arg, table, pos, write=False)
        if check:
            self._write(model, cores, self.lx_pos, "gather")
        model.memory.lx_rows[self.lx_idx] = table.read_rows(rows, pos)


class _PtPlan(_Plan):
    engine = "pt"
    PER_CORE = ("a_pos", "b_pos", "c_pos", "a_idx", "b_idx", "c_idx")
    shared: str | None = None
    """"rhs" ("lhs"): every core of the stream holds the same B (A) bytes at the same LX
    sticks whenever this instruction runs (`_mark_shared_operands`), so the stream's
    products are one matrix product: A of all cores stacked on one B (one A on all B)."""
    b_groups: list[np.ndarray] | None = None
    """Rows (cores) that hold the same B bytes, group by group (batched execution,
    runtime/batch.py): one matrix product per group, B read from its first row."""

    def __init__(self, op: spyre_isa.PtMatmulOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n)
        m, nn, k = op.m.value.data, op.n.value.data, op.k.value.data
        self.m, self.n, self.k = m, nn, k
        self.accumulate = op.accumulate is not None
        kt, nt = -(-k // 64), -(-nn // 64)

        def grid(acc: spyre_isa.AccessAttr, rows: int, cols: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                _bases(acc, n)[:, None, None]
                + (np.arange(rows) * s0)[None, :, None]
                + (np.arange(cols) * s1)[None, None, :]
            )

        self.a_pos = grid(op.lhs, m, kt)
        self.b_pos = grid(op.rhs, k, nt)
        self.c_pos = (grid(op.acc, m, nt)[..., None] + np.arange(2)).reshape(n, m, 2 * nt)
        self.macs = n * m * nn * k
        reads = [self.a_pos, self.b_pos] + ([self.c_pos] if self.accumulate else [])
        self._works(n, compute=cycles.pt_passes(config, m, nn, k), reads=reads, writes=[self.c_pos])

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.a_idx = _flat(cores, self.a_pos, lx_sticks)
        self.b_idx = _flat(cores, self.b_pos, lx_sticks)
        self.c_idx = _flat(cores, self.c_pos, lx_sticks)

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        self._read(model, cores, self.a_pos, "PT lhs")
        self._read(model, cores, self.b_pos, "PT rhs")
        if self.accumulate:
            self._read(model, cores, self.c_pos, "PT acc")
        self._write(model, cores, self.c_pos, "PT acc")

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx, num = model.memory.lx_rows, model.memory.numerics
        nc, m, k, n = len(cores), self.m, self.k, self.n
        # DL16 x DL16 products are exact; the pass's sums are taken in f64 and rounded to the fp32
        # accumulator once, so a result does not depend on how BLAS blocks a tile (i.e. on the
        # work division): the PT's fixed-order fp32 sums are modelled to within their rounding.
        # Operands are decoded straight to f64 (the values of decode(...).astype(np.float64)),
        # contiguous as BLAS takes them.
        if self.shared == "rhs":  # (nc * m, k) @ (k, n)
            a = _f64_matrix(num, lx[self.a_idx], nc * m, k)
            b = _f64_matrix(num, lx[self.b_idx[0]], k, n)
            prod = np.matmul(a, b).astype(np.float32).reshape(nc, m, n)
        elif self.b_groups is not None:  # per group: (rows * m, k) @ (k, n)
            a = _f64_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = np.empty((nc, m, n), dtype=np.float32)
            for rows in self.b_groups:
                b = _f64_matrix(num, lx[self.b_idx[rows[0]]], k, n)
                prod[rows] = np.matmul(a[rows].reshape(-1, k), b).astype(np.float32).reshape(len(rows), m, n)
        elif self.shared == "lhs":  # (m, k) @ (k, nc * n), B's columns core by core
            a = _f64_matrix(num, lx[self.a_idx[0]], m, k)
            b = num.decode_f64(lx[self.b_idx.transpose(1, 0, 2)].view(np.uint16)).reshape(k, nc, -1)
            b = np.ascontiguousarray(b[:, :, :n]).reshape(k, nc * n)
            prod = np.ascontiguousarray(np.matmul(a, b).astype(np.float32).reshape(m, nc, n).transpose(1, 0, 2))
        else:
            a = _f64_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            b = _f64_matrix(num, lx[self.b_idx], nc * k, n).reshape(nc, k, n)
            prod = np.matmul(a, b).astype(np.float32)
        width = self.c_pos.shape[2] * 32
        if self.accumulate:
            old = lx[self.c_idx].view(np.float32).reshape(nc, m, -1)
            prod += old[:, :, :n] if width != n else old
        if width != n:
            out = np.zeros((nc, m, width), dtype=np.float32)
            out[:, :, :n] = prod
            prod = out
        lx[self.c_idx] = prod.view(np.uint8).reshape(nc, m, -1, STICK_BYTES)


def _f64_matrix(num: Any, sticks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The first `cols` lanes of `rows` rows of 16-bit sticks as a contiguous f64 matrix."""
    x = num.decode(sticks.view(np.uint16)).reshape(rows, -1)
    if x.shape[1] == cols:
        return x.astype(np.float64)
    out = np.empty((rows, cols), dtype=np.float64)
    out[...] = x[:, :cols]  # one strided pass (astype of the slice is slower)
    return out


def _mark_shared_operands(streams: Sequence[_StreamPlan], cores: int, lx_sticks: int) -> None:
    """Find the PT operands that cores of a stream hold identically (the same bytes at their
    operand's LX sticks), from the addresses alone: LX sticks carry labels (runtime/batch.py),
    equal when a DMA load gave them the same DDR sticks, fresh after any other write. Programs
    with ring sends (which write other streams' LX) are left alone."""
    instrs = [ins for s in streams for ins in s.instrs]
    used = [int(c) for s in streams for c in s.cores]
    if any(isinstance(i, _RingPlan) for i in instrs) or len(set(used)) != len(used):
        return
    labels = _Labels(cores, lx_sticks)
    try:
        for si, s in enumerate(streams):
            if len(s.cores) < 2:
                continue
            for i, ins in enumerate(s.instrs):
                if isinstance(ins, _PtPlan):
                    a = labels.labels[ins.a_idx.reshape(len(ins.a_idx), -1)]
                    if not _share_b(labels, ins) and (a == a[:1]).all():
                        ins.shared = "lhs"
                    labels.write_fresh(ins.c_idx)
                elif isinstance(ins, _DmaPlan):
                    if ins.load:
                        labels.load((si, i), ins.arg, ins.lx_idx, ins.ddr_pos)
                elif isinstance(ins, _GatherPlan):
                    labels.write_fresh(ins.lx_idx)
                elif isinstance(ins, _SfpPlan | _ReducePlan | _TransposePlan):
                    labels.write_fresh(ins.dst_idx)
    except IndexError:  # an access outside LX: the checked launch will say where
        for ins in instrs:
            if isinstance(ins, _PtPlan):
                ins.shared, ins.b_groups = None, None


def _erf(x: np.ndarray) -> np.ndarray:
    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


_SFP_FUNCTIONS: dict[str, Any] = {
    "copy": lambda x: x,
    "neg": np.negative,
    "exp": np.exp,
    "erf": _erf,
    "tanh": np.tanh,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: np.float32(1.0) / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "abs": np.abs,
    "recip": lambda x: np.float32(1.0) / x,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "select": lambda m, a, b: np.where(m != 0, a, b),
}


def _vector_pos(acc: spyre_isa.AccessAttr, sizes: Sequence[int], n: int) -> np.ndarray:
    """Stick positions of an SFP access: (n, vectors), or (n, vectors, 2) for f32."""
    pos = _bases(acc, n)[:, None] + loop_offsets(sizes, acc.strides.as_tuple())[None]
    if acc.is_f32:  # one 64-lane vector = two consecutive f32 sticks
        pos = np.stack([pos, pos + 1], axis=-1)
    return pos


def _load_vectors(model: DeviceModel, idx: np.ndarray, is_f32: bool) -> np.ndarray:
    """(n, vectors, 64) float32 values at the LX rows `idx` (`_flat` of an SFP access)."""
    raw = model.memory.lx_rows[idx]
    if is_f32:
        return raw.view(np.float32).reshape(len(idx), -1, 64)
    return model.memory.numerics.decode(raw.view(np.uint16)).reshape(len(idx), -1, 64)


def _store_vectors(model: DeviceModel, idx: np.ndarray, is_f32: bool, values: np.ndarray) -> None:
    values = np.ascontiguousarray(values, dtype=np.float32)
    bits = values if is_f32 else model.memory.numerics.encode(values)
    model.memory.lx_rows[idx] = bits.view(np.uint8).reshape(*idx.shape, STICK_BYTES)


class _SfpPlan(_Plan):
    """Unary and binary SFP functions over 64-lane vectors."""

    engine = "sfp"
    PER_CORE = ("srcs", "dst", "src_idx", "dst_idx")

    def __init__(
        self, op: spyre_isa.SfpUnaryOp | spyre_isa.SfpBinaryOp, kernel: str, index: int, n: int, config: DeviceConfig
    ):
        super().__init__(op, kernel, index, n)
        self.function = "select" if isinstance(op, spyre_isa.SfpSelectOp) else op.FUNCTION
        self.fn = _SFP_FUNCTIONS[self.function]
        sizes = op.sizes.as_tuple()
        if isinstance(op, spyre_isa.SfpUnaryOp):
            srcs = [op.src]
            self.imm = None
        elif isinstance(op, spyre_isa.SfpSelectOp):
            srcs = [op.mask, op.lhs, op.rhs]
            self.imm = None
        else:
            srcs = [op.lhs] + ([op.rhs] if op.rhs is not None else [])
            self.imm = None if op.imm is None else np.float32(op.imm.value.data)
        self.srcs = [(a.is_f32, _vector_pos(a, sizes, n)) for a in srcs]
        self.dst = (op.dst.is_f32, _vector_pos(op.dst, sizes, n))
        vectors = int(np.prod(sizes))
        self._works(
            n,
            compute=cycles.sfp_cycles(config, vectors, self.function in spyre_isa.SFP_TRANSCENDENTAL),
            reads=[p.reshape(n, -1) for _, p in self.srcs],
            writes=[self.dst[1].reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = [_flat(cores, pos, lx_sticks) for _, pos in self.srcs]
        self.dst_idx = _flat(cores, self.dst[1], lx_sticks)

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        for _, pos in self.srcs:
            self._read(model, cores, pos, "SFP source")
        self._write(model, cores, self.dst[1], "SFP destination")

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        vals = [_load_vectors(model, idx, is_f32) for (is_f32, _), idx in zip(self.srcs, self.src_idx)]
        if self.imm is not None:
            vals.append(self.imm)
        with np.errstate(all="ignore"):
            out = np.asarray(self.fn(*vals), dtype=np.float32)
        _store_vectors(model, self.dst_idx, self.dst[0], out)


class _ReducePlan(_Plan):
    engine = "sfp"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx")

    def __init__(self, op: spyre_isa.SfpReduceOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n)
        sizes = op.sizes.as_tuple()
        self.function = op.FUNCTION
        self.outer = int(np.prod(sizes[:-1]))
        self.inner = sizes[-1]
        self.tail = op.tail.value.data
        self.src = (op.src.is_f32, _vector_pos(op.src, sizes, n))
        dst_strides = list(op.dst.strides.as_tuple())
        dst_strides[-1] = 0
        dst = spyre_isa.AccessAttr(op.dst.base, dst_strides, op.dst.element_type)
        self.dst = (op.dst.is_f32, _vector_pos(dst, [*sizes[:-1], 1], n))
        self._works(
            n,
            compute=cycles.sfp_cycles(config, self.outer * self.inner, False),
            reads=[self.src[1].reshape(n, -1)],
            writes=[self.dst[1].reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = _flat(cores, self.src[1], lx_sticks)
        self.dst_idx = _flat(cores, self.dst[1], lx_sticks)

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        self._read(model, cores, self.src[1], "reduce source")
        self._write(model, cores, self.dst[1], "reduce destination")

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        x = _load_vectors(model, self.src_idx, self.src[0]).reshape(len(cores), self.outer, self.inner, 64)
        fill = {"max": -np.inf, "min": np.inf, "sum": 0.0}[self.function]
        if self.tail < 64:
            x = x.copy()
            x[:, :, -1, self.tail :] = fill
        with np.errstate(all="ignore"):
            if self.function == "max":
                r = x.max(axis=(2, 3))
            elif self.function == "min":
                r = x.min(axis=(2, 3))
            else:
                r = x.sum(axis=(2, 3), dtype=np.float32)
        _store_vectors(model, self.dst_idx, self.dst[0], np.repeat(r[:, :, None], 64, axis=2))


class _TransposePlan(_Plan):
    engine = "sfp"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx")

    def __init__(self, op: spyre_isa.SfpTransposeOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n)
        blocks, self.rows, self.cols = op.blocks.value.data, op.rows.value.data, op.cols.value.data

        def grid(acc: spyre_isa.AccessAttr, inner: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                _bases(acc, n)[:, None, None]
                + (np.arange(blocks) * s0)[None, :, None]
                + (np.arange(inner) * s1)[None, None, :]
            )

        self.src = grid(op.src, self.rows)
        self.dst = grid(op.dst, self.cols)
        self._works(
            n,
            compute=cycles.sfp_cycles(config, blocks * 64, False),
            reads=[self.src.reshape(n, -1)],
            writes=[self.dst.reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = _flat(cores, self.src, lx_sticks)
        self.dst_idx = _flat(cores, self.dst, lx_sticks)

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        self._read(model, cores, self.src, "transpose source")
        self._write(model, cores, self.dst, "transpose destination")

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx = model.memory.lx_rows
        src = lx[self.src_idx].view(np.uint16)  # (n, blocks, rows, 64)
        block = np.zeros((*src.shape[:2], 64, 64), dtype=np.uint16)
        block[:, :, : self.rows, :] = src
        out = np.ascontiguousarray(block.transpose(0, 1, 3, 2)[:, :, : self.cols, :])
        lx[self.dst_idx] = out.view(np.uint8)


class _RingPlan(_Plan):
    """Piece k of a ring send: steps [r0, r1) of its last loop dim (`_RingSend.parts`)."""

    engine = "ring"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx", "targets")
    ENTRIES = ("works", "notifies", "dst_spans")

    def __init__(
        self, op: spyre_isa.RingSendOp, kernel: str, index: int, n: int, config: DeviceConfig, whole: _RingSend, k: int
    ):
        super().__init__(op, kernel, index, n)
        r0, r1 = whole.parts[k]
        self.src, self.dst = whole.piece(whole.src, r0, r1), whole.piece(whole.dst, r0, r1)
        self.src_idx, self.dst_idx = whole.piece(whole.src_idx, r0, r1), whole.piece(whole.dst_idx, r0, r1)
        self.targets = whole.targets
        self.notifies = [None] * n if op.notify is None else op.notify.table(n)
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

    @property
    def notify(self) -> int | None:
        """The token the piece notifies, as the lockstep executors take it (one for all the
        stream's cores: `_StreamPlan.lockstep`)."""
        return self.notifies[0]

    def checks(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray) -> None:
        self._read(model, cores, self.src, "ring source")
        self._write(model, self.targets, self.dst, "ring destination")

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx = model.memory.lx_rows
        lx[self.dst_idx] = lx[self.src_idx]


class _RingSend:
    """What the pieces of one ring send share, computed once for the whole send: its source
    and destination positions and LX rows per core (a piece's are a slice of them), its target
    cores and hop counts, and per piece and core the source stick interval [lo, hi) (the
    timing model's hazard unit, as `_spans` of the piece's positions)."""

    def __init__(self, op: spyre_isa.RingSendOp, cores: Sequence[int], config: DeviceConfig):
        n = len(cores)
        sizes = op.sizes.as_tuple()
        self.parts = op.pieces()
        self.rows = math.prod(sizes[:-1])
        self.src = _vector_pos(op.src, sizes, n)
        self.dst = _vector_pos(op.dst, sizes, n)
        shift = np.asarray(op.shift.table(n), dtype=np.int64)
        self.targets = (np.asarray(cores) + shift) % config.cores
        self.hops = np.minimum(np.abs(shift) % config.cores, config.cores - np.abs(shift) % config.cores).tolist()
        self.src_idx = _flat(cores, self.src, config.lx_sticks)
        self.dst_idx = _flat(self.targets, self.dst, config.lx_sticks)
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


class _SyncPlan(_Plan):
    """signal, wait, barrier; or (`after` given: a ring send's per-core tokens) the wait a
    ring send's `after` makes before a piece."""

    ENTRIES = ("works", "syncs")

    def __init__(self, op: Operation, kernel: str, index: int, n: int, after: list[int] | None = None):
        super().__init__(op, kernel, index, n)
        if after is not None:
            self.syncs = [("wait", t, 1) for t in after]
        elif isinstance(op, spyre_isa.SignalOp):
            self.syncs = [("signal", t) for t in op.token.table(n)]
        elif isinstance(op, spyre_isa.WaitOp):
            self.syncs = [("wait", t, op.count.value.data) for t in op.token.table(n)]
        else:
            self.syncs = [("barrier",)] * n
        """Each core's sync."""
        self.works = [timing.Work(index, op.name, None, sync=sync) for sync in self.syncs]

    @property
    def sync(self) -> tuple:  # type: ignore[override]
        """The sync as the lockstep executors take it (one token for all the stream's cores:
        `_StreamPlan.lockstep`)."""
        return self.syncs[0]


def _plan_instruction(
    op: Operation, kernel: str, index: int, cores: Sequence[int], config: DeviceConfig
) -> list[_Plan]:
    """The plans of one instruction, in order: one, but for a ring send per piece the wait of
    its `after` (if any) and the piece, as RingSendOp defines it (one piece without `piece`)."""
    if isinstance(op, spyre_isa.RingSendOp):  # its pieces' LX rows come with the whole send's
        n = len(cores)
        plans: list[_Plan] = []
        whole = _RingSend(op, cores, config)
        after = None if op.after is None else op.after.table(n)
        for k in range(len(whole.parts)):
            if after is not None:
                plans.append(_SyncPlan(op, kernel, index, n, after))
            plans.append(_RingPlan(op, kernel, index, n, config, whole, k))
        return plans
    plan = _new_plan(op, kernel, index, cores, config)
    plan.bind(np.asarray(cores, dtype=np.int64), config.lx_sticks)
    return [plan]


def _new_plan(op: Operation, kernel: str, index: int, cores: Sequence[int], config: DeviceConfig) -> _Plan:
    n = len(cores)
    if isinstance(op, spyre_isa.DmaOp):
        return _DmaPlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.DmaGatherOp):
        return _GatherPlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.PtMatmulOp):
        return _PtPlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.SfpUnaryOp | spyre_isa.SfpBinaryOp | spyre_isa.SfpSelectOp):
        return _SfpPlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.SfpReduceOp):
        return _ReducePlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.SfpTransposeOp):
        return _TransposePlan(op, kernel, index, n, config)
    if isinstance(op, spyre_isa.BarrierOp | spyre_isa.SignalOp | spyre_isa.WaitOp):
        return _SyncPlan(op, kernel, index, n)
    raise DeviceError(f"kernel {kernel}: the device model cannot execute '{op.name}'")


class _StreamPlan:
    def __init__(self, stream: spyre_isa.StreamOp, kernel: str, config: DeviceConfig):
        self.cores = np.asarray(stream.core_list, dtype=np.int64)
        bad = [c for c in stream.core_list if c >= config.cores]
        if bad:
            raise DeviceError(f"kernel {kernel}: a stream uses core {bad[0]} but the device has {config.cores} cores")
        ops = stream.body.block.ops
        self.n_ops = len(ops)
        self.instrs = [
            plan for i, op in enumerate(ops) for plan in _plan_instruction(op, kernel, i, stream.core_list, config)
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
            if isinstance(ins, _SyncPlan):
                tokens, kind = ins.syncs, ins.syncs[0][0]
            elif isinstance(ins, _RingPlan) and ins.notifies[0] is not None:
                tokens, kind = ins.notifies, "notify"
            else:
                continue
            if len(set(tokens)) > 1:
                return False
            waits |= kind == "wait"
            produces |= kind in ("signal", "notify")
        return not (waits and produces)

    def split(self) -> list[_StreamPlan]:
        """One stream plan per core, in core order (`_Plan.split`)."""
        n = len(self.cores)
        rows = [ins.split(n) for ins in self.instrs]
        out = []
        for i in range(n):
            one = copy.copy(self)
            one.cores = self.cores[i : i + 1]
            one.instrs = [r[i] for r in rows]
            out.append(one)
        return out


BATCH = os.environ.get("SPYRE_BATCH", "1") != "0"
"""Run checked programs as batched steps (runtime/batch.py); False (SPYRE_BATCH=0): every
launch runs cooperatively, as the definition (the two agree bit for bit)."""


_WORK_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(timing.Work)))
"""A Work's fields as a tuple (the timeline cache's key)."""

_TIMELINES: dict[bytes, timing.Timeline] = {}
"""Timelines by a digest of the instructions' timing-relevant fields (time does not depend on names or data)."""
_TIMELINES_MAX = 256


def _range_attr(prog: spyre_isa.ProgramOp, name: str) -> tuple[int, int] | None:
    attr = prog.attributes.get(name)
    if attr is None:
        return None
    lo, hi = attr.get_values()  # type: ignore[attr-defined]  (verified by spyre_isa.ProgramOp)
    return int(lo), int(hi)


class ProgramPlan:
    """A `spyre_isa.program` prepared for repeated execution; its timeline is computed once
    (time does not depend on the data)."""

    def __init__(self, prog: spyre_isa.ProgramOp, config: DeviceConfig):
        self.name = prog.sym_name.data
        self.num_inputs = prog.num_inputs.data
        self.arg_layouts = [None if spyre.is_index_tensor(a.type) else spyre.device_layout(a.type) for a in prog.args]
        self._prog = prog
        self.config = config
        self.streams: list[_StreamPlan] | None = None
        """The instructions' plans, stream by stream (`stream_plans`); None once the program runs
        as batched steps and its timeline and LX writes are known (rebuilt if asked for again)."""
        streams = self.stream_plans()
        self._timeline: timing.Timeline | None = None
        instrs = [ins for s in streams for ins in s.instrs]
        self.counts = dict(
            cores=sum(len(s.cores) for s in streams if s.instrs),
            instructions=sum(s.n_ops * len(s.cores) for s in streams),
            ddr_read_bytes=sum(i.ddr_read for i in instrs),
            ddr_write_bytes=sum(i.ddr_write for i in instrs),
            ring_bytes=sum(i.ring_bytes for i in instrs),
            macs=sum(i.macs for i in instrs),
        )
        self.resident_in = _range_attr(prog, "spyre.resident_in")
        """LX sticks [lo, hi) an earlier launch left for this one (spyre-onchip-relayout)."""
        self.resident_out = _range_attr(prog, "spyre.resident_out")
        """LX sticks [lo, hi) this launch leaves for a later one."""
        self._lx_writes: list[tuple[int, int]] | None = None
        self.checked = False
        """True once a launch passed the LX bounds and the sanitizer: they depend on the
        program's addresses only, so later launches skip them."""
        self.data_dependent = any(isinstance(i, _GatherPlan) for i in instrs)
        """Addresses picked at run time (gathers): every launch is checked."""
        self.batched: BatchedProgram | None = None
        """The program as batched steps, once a launch has passed the checks."""

    def stream_plans(self) -> list[_StreamPlan]:
        if self.streams is None:
            streams = [_StreamPlan(s, self.name, self.config) for s in self._prog.streams]
            together = [s.lockstep() for s in streams]
            if not all(together):  # each core of the others at its own pace
                parts = [q for s, t in zip(streams, together) for q in ([s] if t else s.split())]
                streams = sorted(parts, key=lambda s: s.cores.tolist())
            self.streams = streams
            _mark_shared_operands(self.streams, self.config.cores, self.config.lx_sticks)
        return self.streams

    def lx_writes(self) -> list[tuple[int, int]]:
        """The LX stick intervals any core of the program writes (merged)."""
        if self._lx_writes is None:
            spans = sorted({iv for s in self.stream_plans() for ins in s.instrs for w in ins.works for iv in w.writes})
            merged: list[tuple[int, int]] = []
            for lo, hi in spans:
                if merged and lo <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
                else:
                    merged.append((lo, hi))
            self._lx_writes = merged
        return self._lx_writes

    def timeline(self) -> timing.Timeline:
        if self._timeline is None:
            programs: dict[int, list[timing.Work]] = {}
            for s in self.stream_plans():
                for row, core in enumerate(s.cores):
                    programs[int(core)] = [ins.works[row] for ins in s.instrs]
            # programs that differ only in name (a model's repeated layers) share a timeline;
            # the key is a digest of every work's fields (the fields themselves held ~5 MiB
            # for MiniLM's programs)
            fields = (self.config, tuple((c, tuple(map(_WORK_FIELDS, ws))) for c, ws in sorted(programs.items())))
            key = hashlib.blake2b(pickle.dumps(fields, protocol=5), digest_size=16).digest()
            cached = _TIMELINES.get(key)
            if cached is None:
                try:
                    cached = timing.simulate(programs, self.config)
                except timing.DeadlockError as e:
                    raise DeviceError(f"kernel {self.name}: {e}") from None
                if len(_TIMELINES) >= _TIMELINES_MAX:
                    _TIMELINES.pop(next(iter(_TIMELINES)))
                _TIMELINES[key] = cached
            self._timeline = cached
        return self._timeline

    def execute(self, model: DeviceModel, args: Sequence[DdrTensor]) -> None:
        """The semantics: streams run cooperatively until they block on a wait or a barrier.

        The first launch checks (LX bounds, the sanitizer); later ones run the program as
        batched steps (runtime/batch.py), which compute the same bits. The checks depend on
        the addresses only, so a first launch whose addresses do not depend on data takes the
        cooperative order for the checks alone, then runs batched:

            first launch:  cooperative(checks only); batched(data)    (if batchable; else
                           cooperative(data)); gathers: cooperative(checks and data)
            later:         batched(data)                   (SPYRE_BATCH=0: cooperative(data))"""
        if self.checked and self.batched is not None and BATCH:
            self.batched.run(model, args)
            return
        check = not self.checked
        if check and not self.data_dependent and BATCH:
            self._cooperative(model, args, check=True, move=False)
            self._checked_now()
            if self.batched is not None:
                self.batched.run(model, args)
                return
            check = False
        self._cooperative(model, args, check=check, move=True)
        if check and not self.data_dependent:
            self._checked_now()

    def _checked_now(self) -> None:
        self.checked = True
        try:  # later launches run the program as batched steps (runtime/batch.py)
            self.batched = BatchedProgram(self, self.config.cores, self.config.lx_sticks)
        except Unbatchable:
            self.batched = None

    def _cooperative(self, model: DeviceModel, args: Sequence[DdrTensor], check: bool, move: bool) -> None:
        """Run the streams cooperatively: with `check`, the LX bounds and the sanitizer; with
        `move`, the data (without: the checks alone, in the same order)."""
        streams = self.stream_plans()
        san = model.sanitizer if check else None
        if san:
            san.begin(self.name)
            if self.resident_in is not None:  # left by an earlier launch (DeviceModel.launch checks which)
                san.written[:, self.resident_in[0] : self.resident_in[1]] = True
        pcs = [0] * len(streams)
        tokens: dict[int, int] = defaultdict(int)
        at_barrier: set[int] = set()
        while True:
            progress = False
            for si, s in enumerate(streams):
                instrs, cores = s.instrs, s.cores
                pc = pcs[si]
                while pc < len(instrs) and si not in at_barrier:
                    ins = instrs[pc]
                    sync = ins.sync
                    if sync is None:
                        if move:
                            ins.run(model, args, cores, check)
                        else:
                            ins.checks(model, args, cores)
                        notify = getattr(ins, "notify", None)
                        if notify is not None:  # a ring send's completion notice
                            tokens[notify] += len(cores)
                            if san:
                                san.signal(cores, notify)
                    elif sync[0] == "barrier":
                        at_barrier.add(si)
                        break
                    elif sync[0] == "wait":  # every core of the stream consumes `count`
                        need = sync[2] * len(cores)
                        if tokens[sync[1]] < need:
                            break
                        tokens[sync[1]] -= need
                        if san:
                            san.wait(cores, sync[1], sync[2])
                    else:  # signal: every core of the stream adds one
                        tokens[sync[1]] += len(cores)
                        if san:
                            san.signal(cores, sync[1])
                    pc += 1
                    progress = True
                pcs[si] = pc
            unfinished = [si for si in range(len(streams)) if pcs[si] < len(streams[si].instrs)]
            if not unfinished:
                break
            if at_barrier and at_barrier == set(range(len(streams))):
                if san:
                    san.barrier(np.concatenate([s.cores for s in streams]))
                for si in at_barrier:
                    pcs[si] += 1
                at_barrier.clear()
                continue
            if not progress:
                where = "; ".join(
                    f"cores {[int(c) for c in streams[si].cores]} at instruction #{streams[si].instrs[pcs[si]].index} ({streams[si].instrs[pcs[si]].op.name})"
                    for si in unfinished
                )
                raise DeviceError(f"kernel {self.name}: deadlock, every unfinished core is blocked: {where}")

    def run(self, model: DeviceModel, args: Sequence[DdrTensor], name: str | None = None) -> KernelRecord:
        self.execute(model, args)
        record = KernelRecord.from_timeline(name or self.name, self.timeline(), self.config, **self.counts)
        if self.batched is not None and self.streams is not None:
            # later launches run the batched steps: the per-stream plans (index arrays, works)
            # are not needed again once the timeline and the LX writes are known
            self.lx_writes()
            self.streams = None
        return record


# endregion
# region The model


class DeviceModel:
    """One simulated Spyre card: memories, prepared programs, and the profile of its runs."""

    def __init__(self, config: DeviceConfig = DEFAULT_CONFIG):
        self.config = config
        self.memory = DeviceMemory(config)
        self.profile = Profile()
        self.sanitizer = Sanitizer(config) if config.sanitize else None
        self._plans: dict[spyre_isa.ProgramOp, ProgramPlan] = {}
        self.resident: dict[tuple[int, int], str] = {}
        """LX ranges (sticks, every core) that a launch left for a later one, and its name."""

    def plan(self, prog: spyre_isa.ProgramOp) -> ProgramPlan:
        plan = self._plans.get(prog)
        if plan is None:
            plan = self._plans[prog] = ProgramPlan(prog, self.config)
        return plan

    def launch(
        self, prog: spyre_isa.ProgramOp, inputs: Sequence[DdrTensor], name: str | None = None
    ) -> list[DdrTensor]:
        """Run `prog` on `inputs`; its outputs. `name`: the kernel the profile names the launch
        by (a launch of a program shared by identical kernels); default the program's."""
        name = name or prog.sym_name.data
        if prog not in self._plans:  # outputs the DDR cannot hold: refused before the plan's host arrays
            for i, a in enumerate(prog.args[prog.num_inputs.data :]):
                self.memory.check_room(spyre.device_layout(a.type), f"{name}.out{i}")
        with host_threads():
            return self._launch(prog, inputs, name)

    def _launch(self, prog: spyre_isa.ProgramOp, inputs: Sequence[DdrTensor], name: str) -> list[DdrTensor]:
        plan = self.plan(prog)
        if len(inputs) != plan.num_inputs:
            raise DeviceError(f"kernel {name} takes {plan.num_inputs} inputs, got {len(inputs)}")
        for i, (t, want) in enumerate(zip(inputs, plan.arg_layouts)):
            if want is None:  # host indices, handed to the program as they are
                continue
            if t.layout != want and t.layout.canonical() != want.canonical():  # equal: the same placement, unchecked
                raise DeviceError(f"kernel {name}: input {i} has layout {t.layout}, the program expects {want}")
        if plan.resident_in is not None and plan.resident_in not in self.resident:
            lo, hi = plan.resident_in
            raise DeviceError(
                f"kernel {name} reads LX bytes [{lo * STICK_BYTES}, {hi * STICK_BYTES}) as a value an earlier launch "
                f"left there, but no earlier launch did (or a later one overwrote it); left: "
                f"{', '.join(f'[{a * STICK_BYTES}, {b * STICK_BYTES}) by {k}' for (a, b), k in self.resident.items()) or 'nothing'}"
            )
        outputs = [
            self.memory.allocate(lay, f"{name}.out{i}") for i, lay in enumerate(plan.arg_layouts[plan.num_inputs :])
        ]
        record = plan.run(self, [*inputs, *outputs], name)
        if self.resident:  # what this launch overwrote is gone
            writes = plan.lx_writes()
            for lo, hi in list(self.resident):
                if (lo, hi) != plan.resident_out and any(a < hi and b > lo for a, b in writes):
                    del self.resident[(lo, hi)]
        if plan.resident_out is not None:
            self.resident[plan.resident_out] = name
        self.profile.add(record)
        record_launch(record)
        return outputs


# endregion
