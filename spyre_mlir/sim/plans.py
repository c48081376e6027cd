"""Instruction plans: what a `spyre_isa` instruction compiles to before the device model runs it.

A plan is one instruction prepared for the cores of one stream: its positions in LX and DDR as
index arrays (a row per core), its `run` (the semantics for all those cores as one numpy
operation), its `checks` (LX bounds and the sanitizer, without moving data) and its `works`
(per-core costs for the timing model). One plan class serves each instruction family and is
found through a registry keyed by op class, as xDSL's interpreter finds an `@impl`:

    @executes(spyre_isa.SfpReduceOp)          # the op class, or a base class of a family
    class ReducePlan(Plan): ...

    plan_instruction(op, ...)                  # the plans of `op` (a ring send: one per piece)

Beside the semantics, a plan describes its accesses for the batched execution (sim/batch.py)
and the regrouping (sim/regroup.py), which are written against this interface and not
against the families:

    accesses()     the LX rows it reads and the rows it writes (None: no batched form)
    ddr_access()   a DMA's DDR argument and sticks
    with_rows()    the same instruction over other LX rows (merged or renamed steps)
    signature()    instructions with equal signatures can run as one step
    label()        what its writes do to the LX labels (`Labels`, `mark_shared_operands`)

`StreamPlan` holds the plans of one `spyre_isa.stream`.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

import numpy as np
import torch
from xdsl.ir import BlockArgument, Operation

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.sim import timing
from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.memory import DdrTensor, DeviceError, StickRows
from spyre_mlir.sim.numerics import Numerics
from spyre_mlir.target import cycles
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, F32_LANES, STICK_BYTES, TRANSPOSE_BLOCK

F32_STICKS = F16_LANES // F32_LANES
"""Sticks of one 64-lane f32 vector (a PT accumulator row's stick of outputs, an f32 SFP access): 2."""

Sync = tuple[Any, ...]
"""A sync as the executors take it: ("signal", token) | ("wait", token, count) | ("barrier",)."""

# region Positions


_NO_POSITIONS = np.zeros(0, dtype=np.int64)
"""The positions of a step, which runs on its rows (`Plan.POSITIONS`)."""


def _without_positions(field: Any) -> Any:
    """A `Plan.POSITIONS` field with its position arrays dropped: an array, an (is_f32,
    positions) pair, or a list of pairs."""
    if isinstance(field, list):
        return [_without_positions(f) for f in field]
    if isinstance(field, tuple):
        return (field[0], _NO_POSITIONS)
    return _NO_POSITIONS


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


def _positions(acc: spyre_isa.AccessAttr, sizes: Sequence[int], n: int) -> np.ndarray:
    """Stick positions of an access over a loop nest of `sizes`, a row per core: (n, prod(sizes))."""
    return _bases(acc, n)[:, None] + loop_offsets(sizes, acc.strides.as_tuple())[None]


def _vector_pos(acc: spyre_isa.AccessAttr, sizes: Sequence[int], n: int) -> np.ndarray:
    """Stick positions of an SFP access: (n, vectors), or (n, vectors, 2) for f32."""
    pos = _positions(acc, sizes, n)
    if acc.is_f32:  # one 64-lane vector = two consecutive f32 sticks
        pos = np.stack([pos + s for s in range(F32_STICKS)], axis=-1)
    return pos


def operand_matrix(num: Numerics, sticks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The first `cols` lanes of `rows` rows of 16-bit sticks as a contiguous f32 matrix."""
    x = num.decode(sticks.view(np.uint16)).reshape(rows, -1)
    if x.shape[1] == cols:
        return x
    return np.ascontiguousarray(x[:, :cols])


def tile_products(a: np.ndarray, b: np.ndarray, accumulation: str) -> np.ndarray:
    """The PT's products of tiles: a (..., m, k) @ b (..., k, n), broadcast over the leading
    dims, as fp32 sums (..., m, n). Every (m, k) @ (k, n) tile is one product of that shape on
    its own, whatever else is stacked beside it: numpy's matmul runs one BLAS call per tile, and
    BLAS's sums for an element depend on the shapes of the call (OpenBLAS and MKL pick kernels,
    blockings and threads by them), so a tile's bits follow from the instruction alone, never
    from how an executor groups cores or tiles (docs/numerics.md).

        fp32   the sums in fp32, in the order BLAS takes for a product of the tile's shape
        f64    the reference mode: the exact products summed in float64, rounded once to fp32
    """
    if accumulation == "f64":
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    return np.matmul(_blas_operand(a), _blas_operand(b))


def _blas_operand(x: np.ndarray) -> np.ndarray:
    """x as float32 whose every matrix BLAS takes as it is (unit lane stride, rows at least a
    row apart): a strided view of a decoded copy is not copied (the bits are those of the
    contiguous matrix: BLAS packs its operands); anything else is made contiguous, since numpy
    multiplies matrices BLAS cannot take by a loop of its own (other sums)."""
    if x.dtype == np.float32 and x.strides[-1] == 4 and x.strides[-2] >= 4 * x.shape[-1]:
        return x
    return np.ascontiguousarray(x, dtype=np.float32)


def _load_vectors(model: Machine, idx: np.ndarray, is_f32: bool, kept: np.ndarray | None = None) -> np.ndarray:
    """(n, vectors, 64) float32 values at the LX rows `idx` (`_flat` of an SFP access); with
    `kept`, the rows of `DeviceMemory.scratch_values` that hold them decoded (`Plan.kept_reads`)."""
    if kept is not None:
        return model.memory.scratch_values[kept].reshape(len(idx), -1, F16_LANES)
    raw = model.memory.lx_rows[idx]
    if is_f32:
        return raw.view(np.float32).reshape(len(idx), -1, F16_LANES)
    return model.memory.numerics.decode(raw.view(np.uint16)).reshape(len(idx), -1, F16_LANES)


def _store_vectors(
    model: Machine,
    idx: np.ndarray,
    is_f32: bool,
    values: np.ndarray,
    kept: np.ndarray | None = None,
    bits: bool = True,
) -> None:
    """Store fp32 values at the LX rows `idx`, rounded to the 16-bit format unless `is_f32`;
    with `kept` (`Plan.kept_write`), the stored values also go to those rows of
    `DeviceMemory.scratch_values`, and without `bits` only there."""
    values = np.ascontiguousarray(values, dtype=np.float32)
    if kept is not None:
        stored, decoded = model.memory.numerics.store(values, bits)
        model.memory.scratch_values[kept] = decoded.reshape(*kept.shape, F16_LANES)
        if stored is not None:
            model.memory.lx_rows[idx] = stored.view(np.uint8).reshape(*idx.shape, STICK_BYTES)
        return
    out = values if is_f32 else model.memory.numerics.encode(values)
    model.memory.lx_rows[idx] = out.view(np.uint8).reshape(*idx.shape, STICK_BYTES)


# endregion
# region Labels


class Labels:
    """What every LX stick holds, as a label (equal labels: equal bytes). A DMA load labels a
    stick with the DDR stick and when it was loaded, any other write gives fresh labels; so
    cores whose operand sticks carry equal labels hold equal operands (`mark_shared_operands`)."""

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


class Unlabelled(Exception):
    """A plan whose LX writes are not known (no `accesses`): no operand can be found shared."""


# endregion
# region The plan interface


class DdrAccess(NamedTuple):
    """A DMA's side in DDR: the argument, its sticks (shaped as the LX rows), load or store."""

    arg: int
    pos: np.ndarray
    load: bool


class Step(Protocol):
    """What a batched program runs: a plan, or a form the regrouping made of plans."""

    def run(self, model: Machine, args: Sequence[DdrTensor], cores: np.ndarray, check: bool = ...) -> None: ...


class Plan:
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
    PER_CORE: ClassVar[tuple[str, ...]] = ()
    """The fields with a row per core of the stream (arrays, or lists and tuples of them: `split`)."""
    POSITIONS: ClassVar[tuple[str, ...]] = ()
    """The per-core positions (for the checks), or (is_f32, positions) pairs of them, that a
    step made by `with_rows` or `merged` does not keep (`_copy`)."""
    ENTRIES: ClassVar[tuple[str, ...]] = ("works",)
    """The lists with an entry per core of the stream (`split`)."""
    TOTALS: ClassVar[tuple[str, ...]] = ("ddr_read", "ddr_write", "ring_bytes", "macs")
    """The counts summed over the stream's cores (`split` divides them; ProgramPlan.counts sums them)."""
    DATA_DEPENDENT: ClassVar[bool] = False
    """Its addresses are picked at run time (a gather): every launch of its program is checked
    and runs cooperatively."""
    COPIES: ClassVar[bool] = False
    """Its write holds the bytes of its first read (a ring send): the regrouping follows the values."""
    dst_spans: Sequence[tuple[int, int, int]] = ()
    """Per core, (target core, lo, hi): the LX sticks [lo, hi) it writes in another core's LX."""
    kept_reads: tuple[np.ndarray | None, ...] = ()
    """A regrouped step's: per read of `accesses`, the rows of `DeviceMemory.scratch_values`
    that hold its 16-bit values decoded (None, or none given: it decodes its LX rows' bits)."""
    kept_write: np.ndarray | None = None
    """A regrouped step's: the rows of `DeviceMemory.scratch_values` its 16-bit store keeps its
    values in (sim/regroup.py, "kept")."""
    writes_bits = True
    """A regrouped step's with `kept_write`: whether its LX rows get the bits too (False:
    nothing reads them as bits)."""

    def __init__(self, op: Operation, kernel: str, index: int, n: int, config: DeviceConfig):
        self.op = op
        self.index = index
        self.where = f"kernel {kernel}, instruction #{index} ({op.name})"
        self.works: list[timing.Work] = []  # one per core, set by each kind of plan

    @classmethod
    def build(cls, op: Operation, kernel: str, index: int, cores: Sequence[int], config: DeviceConfig) -> list[Plan]:
        """The plans of one instruction on these cores, in order (one, bound to its LX rows)."""
        plan = cls(op, kernel, index, len(cores), config)
        plan.bind(np.asarray(cores, dtype=np.int64), config.lx_sticks)
        return [plan]

    @property
    def sync(self) -> Sync | None:
        """The sync it makes (syncs only), one for all the stream's cores (`StreamPlan.lockstep`)."""
        return None

    @property
    def notify(self) -> int | None:
        """The token it signals when it finishes (a ring send's), one for all the stream's cores."""
        return None

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        """Precompute the LX row indices of this instruction's accesses on these cores."""

    def split(self, n: int) -> list[Plan]:
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

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        pass

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        """What `run(..., check=True)` checks, in the same order, without moving data (the
        checks depend on addresses only)."""

    # ------------------------------------------------------------------ batched forms
    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None] | None:
        """The LX rows it reads (arrays with a row per core, a new list) and the rows it
        writes (None: no LX write, as a DMA store); None: no batched form."""
        return None

    def ddr_access(self) -> DdrAccess | None:
        """Its DDR side, for a DMA."""
        return None

    def decoding_reads(self) -> list[bool]:
        """Per read of `accesses`: whether it only takes the 16-bit values its rows hold
        (decodes them), never their bits, so that a regrouped step may take them decoded."""
        acc = self.accesses()
        return [False] * (0 if acc is None else len(acc[0]))

    def stores_values(self) -> bool:
        """Whether its write is computed fp32 values rounded to the 16-bit format, so that a
        regrouped step may keep them decoded (`kept_write`)."""
        return False

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> Plan:
        """A copy (without works: timing replays the streams' own plans) that reads and writes
        other LX rows, given as `accesses` gives them (and a DMA's DDR sticks)."""
        raise NotImplementedError(f"{type(self).__name__} has no batched form")

    def merged(self, plans: Sequence[Plan]) -> Plan:
        """One plan over the cores of `plans` (this one first, all of one signature): their
        rows concatenated, in order."""
        if len(plans) == 1:
            return self._copy()  # a step never aliases the streams' own plans
        rows = [acc for acc in (p.accesses() for p in plans) if acc is not None]
        assert len(rows) == len(plans), "plans of one signature have batched forms"
        reads = [np.concatenate([r[j] for r, _ in rows]) for j in range(len(rows[0][0]))]
        writes = [w for _, w in rows if w is not None]
        ddr = [d.pos for d in (p.ddr_access() for p in plans) if d is not None]
        return self.with_rows(reads, np.concatenate(writes) if writes else None, np.concatenate(ddr) if ddr else None)

    def signature(self) -> tuple | None:
        """Instructions with equal signatures can share one step; None: never merged."""
        return None

    def label(self, labels: Labels, when: Any) -> None:
        """Its writes in `labels` (`when` names the instruction): fresh labels by default."""
        acc = self.accesses()
        if acc is None:
            raise Unlabelled(self.where)
        if acc[1] is not None:
            labels.write_fresh(acc[1])

    # ------------------------------------------------------------------ helpers
    def _copy(self) -> Plan:
        """A step of this plan: its works and positions (`POSITIONS`) not kept, as a step
        runs on its rows."""
        step = copy.copy(self)
        step.works = []
        for name in self.POSITIONS:
            setattr(step, name, _without_positions(getattr(self, name)))
        return step

    def _works(
        self,
        n: int,
        *,
        reads: Sequence[np.ndarray] = (),
        writes: Sequence[np.ndarray] = (),
        latency: float = 0.0,
        compute: float = 0.0,
        port: float = 0.0,
        ddr: float = 0.0,
    ) -> None:
        read_spans, write_spans = [_spans(p) for p in reads], [_spans(p) for p in writes]
        self.works = [
            timing.Work(
                self.index,
                self.op.name,
                self.engine,
                latency=latency,
                compute=compute,
                port=port,
                ddr=ddr,
                reads=tuple(x for sp in read_spans for x in sp[i]),
                writes=tuple(x for sp in write_spans for x in sp[i]),
            )
            for i in range(n)
        ]

    def _check_lx(self, model: Machine, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        lim = model.config.lx_sticks
        if pos.size and pos.max() >= lim:
            row = int(np.argmax(pos.reshape(len(cores), -1).max(axis=1)))
            raise DeviceError(
                f"{self.where}, core {cores[row]}: {what} reaches LX bytes up to "
                f"{(int(pos.max()) + 1) * STICK_BYTES} beyond the {lim * STICK_BYTES}-byte scratchpad"
            )

    def _read(self, model: Machine, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        self._check_lx(model, cores, pos, what)
        if model.sanitizer:
            model.sanitizer.lx_read(self.where, cores, pos)

    def _write(self, model: Machine, cores: np.ndarray, pos: np.ndarray, what: str) -> None:
        self._check_lx(model, cores, pos, what)
        if model.sanitizer:
            model.sanitizer.lx_write(self.where, cores, pos)


_PLANS: dict[type[Operation], type[Plan]] = {}
_P = TypeVar("_P", bound=type[Plan])


def executes(*ops: type[Operation]) -> Callable[[_P], _P]:
    """Register a plan class as the execution of these instruction classes and their
    subclasses (a family's base class registers the whole family)."""

    def register(cls: _P) -> _P:
        for op in ops:
            _PLANS[op] = cls
        plan_class.cache_clear()
        return cls

    return register


@functools.cache
def plan_class(op_type: type[Operation]) -> type[Plan] | None:
    """The plan class registered for an instruction class, or for its nearest base class."""
    return next((_PLANS[c] for c in op_type.__mro__ if c in _PLANS), None)


def plan_instruction(op: Operation, kernel: str, index: int, cores: Sequence[int], config: DeviceConfig) -> list[Plan]:
    """The plans of one instruction, in order: one, but for a ring send per piece the wait of
    its `after` (if any) and the piece, as RingSendOp defines it (one piece without `piece`)."""
    cls = plan_class(type(op))
    if cls is None:
        raise DeviceError(f"kernel {kernel}: the device model cannot execute '{op.name}'")
    return cls.build(op, kernel, index, cores, config)


# endregion
# region DMA


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
        self.ddr_pos = _positions(op.ddr_access, sizes, n)
        self.lx_pos = _positions(op.lx_access, sizes, n)
        nbytes = self.ddr_pos.shape[1] * STICK_BYTES
        self.ddr_read, self.ddr_write = (n * nbytes, 0) if self.load else (0, n * nbytes)
        latency = config.ddr_latency_cycles
        if self.load:
            self._works(n, latency=latency, port=nbytes, ddr=nbytes, writes=[self.lx_pos])
        else:
            self._works(n, latency=latency, port=nbytes, ddr=nbytes, reads=[self.lx_pos])
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

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        else:
            self._check_ddr_bounds(args[self.arg], cores)
        t, lx = args[self.arg], model.memory.lx_rows
        if self.load:
            lx[self.lx_idx] = t.data.take(self.ddr_pos, axis=0)
        else:
            StickRows(t.data)[self.ddr_pos] = lx[self.lx_idx]

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
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
        self.lx_pos = _positions(op.lx_access, [self.count, self.row_sticks], n)
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
        self.lx_idx = _flat(cores, self.lx_pos, lx_sticks)

    def picked(self, args: Sequence[Any]) -> np.ndarray:
        """The host indices each core's rows take: (cores, count)."""
        idx = np.asarray(args[self.index_arg]).reshape(-1)
        return idx[self.index_base[:, None] + np.arange(self.count)[None]]


@executes(spyre_isa.DmaGatherOp)
class GatherPlan(_IndexedRowsPlan):
    """DMA of table rows picked at run time by the host indices handed over at launch."""

    engine = "dma_in"
    PER_CORE = ("index_base", "lx_pos", "lx_idx")

    def __init__(self, op: spyre_isa.DmaGatherOp, kernel: str, index: int, n: int, config: DeviceConfig):
        assert isinstance(op.table, BlockArgument)
        super().__init__(op, kernel, index, n, config, op.table)
        steps = self.ddr_layout.dim_stick_steps()
        if steps is not None and self.ddr_layout.stick_dim == 1:  # (a table read as it is: spyre.table_rows)
            self.s_row, self.s_stick = steps
        else:
            strides = self.ddr_layout.stick_strides
            digits = self.ddr_layout.digits
            self.s_row = strides[digits[0][0].device_dim] if digits[0] else 0
            self.s_stick = strides[digits[1][-1].device_dim] if len(digits[1]) > 1 else 0

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        table = args[self.ddr_arg]
        rows = self.picked(args)
        vocab = self.ddr_layout.shape[0]
        if rows.size and (rows.min() < 0 or rows.max() >= vocab):
            bad = int(rows[(rows < 0) | (rows >= vocab)][0])
            raise DeviceError(f"{self.where}: index {bad} is out of range for a table of {vocab} rows")
        pos = (rows * self.s_row)[:, :, None] + (np.arange(self.row_sticks) * self.s_stick)[None, None, :]
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


# endregion
# region PT


@executes(spyre_isa.PtMatmulOp)
class PtPlan(Plan):
    engine = "pt"
    PER_CORE = ("a_pos", "b_pos", "c_pos", "a_idx", "b_idx", "c_idx")
    shared: str | None = None
    """"rhs" ("lhs"): every core of the stream holds the same B (A) bytes at the same LX
    sticks whenever this instruction runs (`mark_shared_operands`), so the stream's
    products are one matrix product: A of all cores stacked on one B (one A on all B)."""
    b_groups: list[np.ndarray] | None = None
    """Rows (cores) that hold the same B bytes, group by group: one matrix product per group,
    B read from its first row."""

    def __init__(self, op: spyre_isa.PtMatmulOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
        m, nn, k = op.m.value.data, op.n.value.data, op.k.value.data
        self.m, self.n, self.k = m, nn, k
        self.accumulate = op.accumulate is not None
        kt, nt = -(-k // F16_LANES), -(-nn // F16_LANES)

        def grid(acc: spyre_isa.AccessAttr, rows: int, cols: int) -> np.ndarray:
            s0, s1 = acc.strides.as_tuple()
            return (
                _bases(acc, n)[:, None, None]
                + (np.arange(rows) * s0)[None, :, None]
                + (np.arange(cols) * s1)[None, None, :]
            )

        self.a_pos = grid(op.lhs, m, kt)
        self.b_pos = grid(op.rhs, k, nt)
        self.c_pos = (grid(op.acc, m, nt)[..., None] + np.arange(F32_STICKS)).reshape(n, m, F32_STICKS * nt)
        self.macs = n * m * nn * k
        reads = [self.a_pos, self.b_pos] + ([self.c_pos] if self.accumulate else [])
        self._works(n, compute=cycles.pt_passes(config, m, nn, k), reads=reads, writes=[self.c_pos])

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.a_idx = _flat(cores, self.a_pos, lx_sticks)
        self.b_idx = _flat(cores, self.b_pos, lx_sticks)
        self.c_idx = _flat(cores, self.c_pos, lx_sticks)

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.a_pos, "PT lhs")
        self._read(model, cores, self.b_pos, "PT rhs")
        if self.accumulate:
            self._read(model, cores, self.c_pos, "PT acc")
        self._write(model, cores, self.c_pos, "PT acc")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx, num, acc = model.memory.lx_rows, model.memory.numerics, model.config.accumulation
        nc, m, k, n = len(cores), self.m, self.k, self.n
        # one product per core's tile (tile_products): the bits do not depend on which cores
        # share an operand, only the decoding does (a shared operand is decoded once)
        if self.shared == "rhs":  # (nc, m, k) @ (k, n)
            a = operand_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = tile_products(a, operand_matrix(num, lx[self.b_idx[0]], k, n), acc)
        elif self.b_groups is not None:  # per group: (rows, m, k) @ (k, n)
            a = operand_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = np.empty((nc, m, n), dtype=np.float32)
            for rows in self.b_groups:
                prod[rows] = tile_products(a[rows], operand_matrix(num, lx[self.b_idx[rows[0]]], k, n), acc)
        elif self.shared == "lhs":  # (m, k) @ (nc, k, n)
            a = operand_matrix(num, lx[self.a_idx[0]], m, k)
            prod = tile_products(a, operand_matrix(num, lx[self.b_idx], nc * k, n).reshape(nc, k, n), acc)
        else:
            a = operand_matrix(num, lx[self.a_idx], nc * m, k).reshape(nc, m, k)
            prod = tile_products(a, operand_matrix(num, lx[self.b_idx], nc * k, n).reshape(nc, k, n), acc)
        width = self.c_pos.shape[2] * F32_LANES
        if self.accumulate:
            old = lx[self.c_idx].view(np.float32).reshape(nc, m, -1)
            prod += old[:, :, :n] if width != n else old
        if width != n:
            out = np.zeros((nc, m, width), dtype=np.float32)
            out[:, :, :n] = prod
            prod = out
        lx[self.c_idx] = prod.view(np.uint8).reshape(nc, m, -1, STICK_BYTES)

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [self.a_idx, self.b_idx] + ([self.c_idx] if self.accumulate else []), self.c_idx

    def decoding_reads(self) -> list[bool]:
        return [True, False] + ([False] if self.accumulate else [])  # (B: read as decoded copies, or bits)

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> PtPlan:
        step = self._copy()
        assert isinstance(step, PtPlan) and write is not None
        step.a_idx, step.b_idx, step.c_idx = reads[0], reads[1], write
        return step

    def signature(self) -> tuple | None:
        if self.shared is not None:
            return None
        return self.product_signature()

    def product_signature(self) -> tuple:
        """`signature` whether or not an operand is shared."""
        return (
            "pt",
            self.m,
            self.n,
            self.k,
            self.accumulate,
            self.a_idx.shape[1:],
            self.b_idx.shape[1:],
            self.c_idx.shape[1:],
        )

    def label(self, labels: Labels, when: Any) -> None:
        """Mark the operands its cores hold alike (`shared`, `b_groups`), then its write."""
        a = labels.labels[self.a_idx.reshape(len(self.a_idx), -1)]
        if not self._share_b(labels) and (a == a[:1]).all():
            self.shared = "lhs"
        labels.write_fresh(self.c_idx)

    def _share_b(self, labels: Labels) -> bool:
        """Mark cores that hold equal B bytes (equal labels at their B sticks): all of them
        alike, `shared = "rhs"`; in groups, `b_groups` (the rows of each group). False if every
        core's B differs (nothing marked)."""
        keys: dict[bytes, list[int]] = {}
        lab = labels.labels[self.b_idx.reshape(len(self.b_idx), -1)]
        for row in range(len(lab)):
            keys.setdefault(lab[row].tobytes(), []).append(row)
        if len(keys) == len(lab):
            return False
        if len(keys) == 1:
            self.shared = "rhs"
        else:
            self.b_groups = [np.asarray(rows, dtype=np.int64) for rows in keys.values()]
        return True

    def unshare(self) -> None:
        self.shared, self.b_groups = None, None


# endregion
# region SFP


def _erf(x: np.ndarray) -> np.ndarray:
    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


SFP_FUNCTIONS: dict[type[Operation], Callable[..., Any]] = {
    spyre_isa.SfpCopyOp: lambda x: x,
    spyre_isa.SfpNegOp: np.negative,
    spyre_isa.SfpExpOp: np.exp,
    spyre_isa.SfpErfOp: _erf,
    spyre_isa.SfpTanhOp: np.tanh,
    spyre_isa.SfpLogOp: np.log,
    spyre_isa.SfpSqrtOp: np.sqrt,
    spyre_isa.SfpRsqrtOp: lambda x: np.float32(1.0) / np.sqrt(x),
    spyre_isa.SfpSinOp: np.sin,
    spyre_isa.SfpCosOp: np.cos,
    spyre_isa.SfpAbsOp: np.abs,
    spyre_isa.SfpRecipOp: lambda x: np.float32(1.0) / x,
    spyre_isa.SfpAddOp: np.add,
    spyre_isa.SfpSubOp: np.subtract,
    spyre_isa.SfpMulOp: np.multiply,
    spyre_isa.SfpDivOp: np.divide,
    spyre_isa.SfpMaxOp: np.maximum,
    spyre_isa.SfpMinOp: np.minimum,
    spyre_isa.SfpSelectOp: lambda m, a, b: np.where(m != 0, a, b),
}
"""The numpy function of each SFP element-wise instruction, on float32 vectors."""


@executes(spyre_isa.SfpUnaryOp, spyre_isa.SfpBinaryOp, spyre_isa.SfpSelectOp)
class SfpPlan(Plan):
    """Unary and binary SFP functions over 64-lane vectors."""

    engine = "sfp"
    PER_CORE = ("srcs", "dst", "src_idx", "dst_idx")
    POSITIONS = ("srcs", "dst")

    def __init__(
        self,
        op: spyre_isa.SfpUnaryOp | spyre_isa.SfpBinaryOp | spyre_isa.SfpSelectOp,
        kernel: str,
        index: int,
        n: int,
        config: DeviceConfig,
    ):
        super().__init__(op, kernel, index, n, config)
        self.function = "select" if isinstance(op, spyre_isa.SfpSelectOp) else op.FUNCTION
        self.fn = SFP_FUNCTIONS[type(op)]
        sizes = op.sizes.as_tuple()
        self.imm: np.float32 | None = None
        if isinstance(op, spyre_isa.SfpUnaryOp):
            srcs = [op.src]
        elif isinstance(op, spyre_isa.SfpSelectOp):
            srcs = [op.mask, op.lhs, op.rhs]
        else:
            srcs = [op.lhs] + ([op.rhs] if op.rhs is not None else [])
            self.imm = None if op.imm is None else np.float32(op.imm.value.data)
        self.srcs = [(a.is_f32, _vector_pos(a, sizes, n)) for a in srcs]
        self.dst = (op.dst.is_f32, _vector_pos(op.dst, sizes, n))
        self.moves_bits = self.function == "copy" and not srcs[0].is_f32 and not op.dst.is_f32
        """A copy within the 16-bit format: the sticks' bits move as they are (their decoded
        values, stored again, would round to the same bits; a NaN keeps its sign)."""
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

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        for _, pos in self.srcs:
            self._read(model, cores, pos, "SFP source")
        self._write(model, cores, self.dst[1], "SFP destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        if self.moves_bits:
            lx = model.memory.lx_rows
            lx[self.dst_idx] = lx[self.src_idx[0]]
            return
        kept = self.kept_reads or (None,) * len(self.srcs)
        vals: list[Any] = [
            _load_vectors(model, idx, is_f32, k) for (is_f32, _), idx, k in zip(self.srcs, self.src_idx, kept)
        ]
        if self.imm is not None:
            vals.append(self.imm)
        out = np.asarray(self.fn(*vals), dtype=np.float32)  # (numpy's warnings off: ProgramPlan.execute)
        _store_vectors(model, self.dst_idx, self.dst[0], out, self.kept_write, self.writes_bits)

    def decoding_reads(self) -> list[bool]:
        return [not is_f32 and not self.moves_bits for is_f32, _ in self.srcs]

    def stores_values(self) -> bool:
        return not self.dst[0] and not self.moves_bits

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return list(self.src_idx), self.dst_idx

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> SfpPlan:
        step = self._copy()
        assert isinstance(step, SfpPlan) and write is not None
        step.src_idx, step.dst_idx = reads, write
        return step

    def signature(self) -> tuple | None:
        imm = None if self.imm is None else float(self.imm)
        if imm is not None and imm != imm:  # NaN: never equal to itself
            return None
        srcs = tuple((f32, idx.shape[1:]) for (f32, _), idx in zip(self.srcs, self.src_idx))
        return ("sfp", self.function, imm, srcs, self.dst[0], self.dst_idx.shape[1:])


class _SrcDstPlan(Plan):
    """An instruction that reads one LX access and writes another (`src_idx`, `dst_idx`)."""

    src_idx: np.ndarray
    dst_idx: np.ndarray

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [self.src_idx], self.dst_idx

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> Plan:
        step = self._copy()
        assert isinstance(step, _SrcDstPlan) and write is not None
        step.src_idx, step.dst_idx = reads[0], write
        return step


REDUCTIONS: dict[type[Operation], tuple[float, Callable[[np.ndarray], np.ndarray]]] = {
    spyre_isa.SfpReduceMaxOp: (-np.inf, lambda x: x.max(axis=(2, 3))),
    spyre_isa.SfpReduceMinOp: (np.inf, lambda x: x.min(axis=(2, 3))),
    spyre_isa.SfpReduceSumOp: (0.0, lambda x: x.sum(axis=(2, 3), dtype=np.float32)),
}
"""Each SFP reduction: the value its masked padding lanes hold, and the reduction of
(cores, outer, inner, lanes) vectors over the innermost loop dim and the lanes."""


@executes(spyre_isa.SfpReduceOp)
class ReducePlan(_SrcDstPlan):
    engine = "sfp"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx")
    POSITIONS = ("src", "dst")

    def __init__(self, op: spyre_isa.SfpReduceOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
        sizes = op.sizes.as_tuple()
        self.function = op.FUNCTION
        self.fill, self.reduce = REDUCTIONS[type(op)]
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

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.src[1], "reduce source")
        self._write(model, cores, self.dst[1], "reduce destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        kept = self.kept_reads[0] if self.kept_reads else None
        x = _load_vectors(model, self.src_idx, self.src[0], kept).reshape(len(cores), self.outer, self.inner, F16_LANES)
        if self.tail < F16_LANES:
            x = x.copy()
            x[:, :, -1, self.tail :] = self.fill
        r = self.reduce(x)  # (numpy's warnings off: ProgramPlan.execute)
        out = np.repeat(r[:, :, None], F16_LANES, axis=2)
        _store_vectors(model, self.dst_idx, self.dst[0], out, self.kept_write, self.writes_bits)

    def decoding_reads(self) -> list[bool]:
        return [not self.src[0]]

    def stores_values(self) -> bool:
        return not self.dst[0]

    def signature(self) -> tuple:
        return (
            "reduce",
            self.function,
            self.outer,
            self.inner,
            self.tail,
            self.src[0],
            self.dst[0],
            self.src_idx.shape[1:],
            self.dst_idx.shape[1:],
        )


@executes(spyre_isa.SfpTransposeOp)
class TransposePlan(_SrcDstPlan):
    engine = "sfp"
    PER_CORE = ("src", "dst", "src_idx", "dst_idx")
    POSITIONS = ("src", "dst")

    def __init__(self, op: spyre_isa.SfpTransposeOp, kernel: str, index: int, n: int, config: DeviceConfig):
        super().__init__(op, kernel, index, n, config)
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
            compute=cycles.sfp_cycles(config, blocks * TRANSPOSE_BLOCK, False),
            reads=[self.src.reshape(n, -1)],
            writes=[self.dst.reshape(n, -1)],
        )

    def bind(self, cores: np.ndarray, lx_sticks: int) -> None:
        self.src_idx = _flat(cores, self.src, lx_sticks)
        self.dst_idx = _flat(cores, self.dst, lx_sticks)

    def checks(self, model: Machine, args: Sequence[Any], cores: np.ndarray) -> None:
        self._read(model, cores, self.src, "transpose source")
        self._write(model, cores, self.dst, "transpose destination")

    def run(self, model: Machine, args: Sequence[Any], cores: np.ndarray, check: bool = True) -> None:
        if check:
            self.checks(model, args, cores)
        lx = model.memory.lx_rows
        src = lx[self.src_idx].view(np.uint16)  # (n, blocks, rows, 64)
        block = np.zeros((*src.shape[:2], TRANSPOSE_BLOCK, TRANSPOSE_BLOCK), dtype=np.uint16)
        block[:, :, : self.rows, :] = src
        out = np.ascontiguousarray(block.transpose(0, 1, 3, 2)[:, :, : self.cols, :])
        lx[self.dst_idx] = out.view(np.uint8)

    def signature(self) -> tuple:
        return ("transpose", self.rows, self.cols, self.src_idx.shape[1:], self.dst_idx.shape[1:])


# endregion
# region Ring


@executes(spyre_isa.RingSendOp)
class RingPlan(_SrcDstPlan):
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


# endregion
# region Sync


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


# endregion
# region Streams


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


# endregion
