"""The plan interface: what every instruction's plan is, and the registry that finds it.

`Plan` is one instruction prepared for the cores of one stream (its fields with a row per
core, `run`, `checks`, `works`, and the accesses the batched execution and the regrouping
read); `executes` registers a plan class for instruction classes, `plan_instruction` finds and
builds it. `Labels` follows which LX sticks hold equal bytes (`mark_shared_operands`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

import numpy as np
from xdsl.ir import Operation

from spyre_mlir.sim import timing
from spyre_mlir.sim.machine import Machine
from spyre_mlir.sim.memory import DdrTensor, DeviceError
from spyre_mlir.sim.plans.positions import spans
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES

Sync = tuple[Any, ...]
"""A sync as the executors take it: ("signal", token) | ("wait", token, count) | ("barrier",)."""


# region Steps' fields


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
    values in (sim/regroup/, "kept")."""
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
        read_spans, write_spans = [spans(p) for p in reads], [spans(p) for p in writes]
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


class SrcDstPlan(Plan):
    """An instruction that reads one LX access and writes another (`src_idx`, `dst_idx`)."""

    src_idx: np.ndarray
    dst_idx: np.ndarray

    def accesses(self) -> tuple[list[np.ndarray], np.ndarray | None]:
        return [self.src_idx], self.dst_idx

    def with_rows(self, reads: list[np.ndarray], write: np.ndarray | None, ddr_pos: np.ndarray | None) -> Plan:
        step = self._copy()
        assert isinstance(step, SrcDstPlan) and write is not None
        step.src_idx, step.dst_idx = reads[0], write
        return step


# endregion
