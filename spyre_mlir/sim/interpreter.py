"""The reference device model: executes `spyre_isa` programs on byte-array memories.

Every instruction executes on numpy views of whole sticks, and an SPMD instruction executes
for all cores of its stream as one numpy operation (per-core bases become an index axis).
16-bit values are decoded from / encoded to the numerics mode's bit patterns on every read
and write, so every store rounds exactly as the device does; PT products accumulate in fp32.

Streams of one program run cooperatively: each runs until it blocks on a `wait` without
enough tokens or reaches a `barrier`; a barrier releases when every stream has reached it;
if no stream can move, the program is deadlocked and the model says where each core stands.

What each instruction compiles to and how it executes is `sim/plans/` (a plan class per
instruction family, found by op class); later launches run batched steps (`sim/batch.py`).
The host side of a compiled module (transfers, launches, host torch ops) is `runtime/host.py`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import operator
import os
import pickle
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import torch
from threadpoolctl import ThreadpoolController
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr

from spyre_mlir.dialects import spyre, spyre_isa
from spyre_mlir.sim import timing
from spyre_mlir.sim.batch import BatchedProgram
from spyre_mlir.sim.host_timeline import HostOp, Launch, Step, Transfer
from spyre_mlir.sim.memory import DdrTensor, DeviceError, DeviceMemory
from spyre_mlir.sim.plans import StreamPlan, mark_shared_operands
from spyre_mlir.sim.profile import CallRecord, KernelLog, KernelRecord, Profile, record_call, record_launch
from spyre_mlir.sim.regroup import Unbatchable
from spyre_mlir.sim.sanitizer import Sanitizer
from spyre_mlir.target.config import DEFAULT_CONFIG, DeviceConfig
from spyre_mlir.target.constants import STICK_BYTES

# region BLAS threads

_BLAS: Any = None
_blas_depth = 0


@contextlib.contextmanager
def host_threads() -> Iterator[None]:
    """While the device model runs (re-entrant): torch on one thread, numpy's BLAS on the
    threads torch had. torch is idle then, and the PT steps' products are the largest
    part of a forward; OpenBLAS threads a product only above its own size threshold (~1 M
    multiply-adds: a core's 128 x 64 x 64 tile stays on one thread). torch's OpenMP threads
    must rest meanwhile: with both pools at two threads, a product after a torch op waits on
    threads still spinning (a 128 x 384 x 1152 float64 product: 2.4 ms on one BLAS thread, 1.3
    ms on two, 10 ms on two beside torch's two; docs/performance.md)."""
    global _BLAS, _blas_depth
    if _blas_depth == 0:
        if _BLAS is None:  # OpenBLAS's controllers, called directly: a threadpoolctl limit costs ~5 us
            _BLAS = ThreadpoolController().select(internal_api="openblas").lib_controllers
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
        blas_threads = [c.get_num_threads() for c in _BLAS]
        for c in _BLAS:
            c.set_num_threads(torch_threads)
    _blas_depth += 1
    try:
        yield
    finally:
        _blas_depth -= 1
        if _blas_depth == 0:
            for c, n in zip(_BLAS, blas_threads):
                c.set_num_threads(n)
            torch.set_num_threads(torch_threads)


# endregion
# region Program plans


BATCH = os.environ.get("SPYRE_BATCH", "1") != "0"
"""Run checked programs as batched steps (sim/batch.py); False (SPYRE_BATCH=0): every
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
    assert isinstance(attr, DenseArrayBase)  # spyre_isa.ProgramOp verifies it
    lo, hi = attr.get_values()
    return int(lo), int(hi)


class ProgramPlan:
    """A `spyre_isa.program` prepared for repeated execution; its timeline is computed once
    (time does not depend on the data)."""

    def __init__(self, prog: spyre_isa.ProgramOp, config: DeviceConfig):
        self.name = prog.sym_name.data
        self.num_inputs = prog.num_inputs.data
        self.arg_layouts = [None if spyre.is_index_tensor(a.type) else spyre.device_layout(a.type) for a in prog.args]
        """Each argument's layout; None for host indices (a gather's, inputs only)."""
        self.output_layouts = [spyre.device_layout(a.type) for a in prog.args[self.num_inputs :]]
        """The outputs' layouts (outputs are device tensors)."""
        self._prog = prog
        self.config = config
        self.streams: list[StreamPlan] | None = None
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
            arguments=len(prog.args),
            ddr_addresses=sum(
                len({lo >> 40 for lo, _ in (*w.ddr_reads, *w.ddr_writes)}) for i in instrs for w in i.works
            ),
        )
        self.resident_in = _range_attr(prog, "spyre.resident_in")
        """LX sticks [lo, hi) an earlier launch left for this one (spyre-onchip-relayout)."""
        self.resident_out = _range_attr(prog, "spyre.resident_out")
        """LX sticks [lo, hi) this launch leaves for a later one."""
        self._lx_writes: list[tuple[int, int]] | None = None
        self.checked = False
        """True once a launch passed the LX bounds and the sanitizer: they depend on the
        program's addresses only, so later launches skip them."""
        self.compute_ops = sorted(
            {
                op.name.removeprefix("spyre_isa.")
                for op in prog.walk()
                if op.name.startswith(("spyre_isa.pt_", "spyre_isa.sfp_"))
            }
        )
        """The compute instructions it runs (`pt_matmul`, `sfp_exp` ...), to name it by."""
        self.data_dependent = any(i.DATA_DEPENDENT for i in instrs)
        """Addresses picked at run time (gathers): every launch is checked."""
        self.batched: BatchedProgram | None = None
        """The program as batched steps, once a launch has passed the checks."""
        self.leading_loads = {
            int(core): _leading_loads([ins.works[row] for ins in s.instrs])
            for s in streams
            for row, core in enumerate(s.cores)
        }
        """Per core, the DDR arguments each of its leading `dma_load`s reads (early loads)."""
        self._early: dict[tuple, timing.Timeline] = {}
        """Timelines of launches that start early loads (`timing.Early`), by the spec's key."""
        self._early_counts: dict[frozenset[int], dict[int, int]] = {}

    def stream_plans(self) -> list[StreamPlan]:
        if self.streams is None:
            streams = [StreamPlan(s, self.name, self.config) for s in self._prog.streams]
            together = [s.lockstep() for s in streams]
            if not all(together):  # each core of the others at its own pace
                parts = [q for s, t in zip(streams, together) for q in ([s] if t else s.split())]
                streams = sorted(parts, key=lambda s: s.cores.tolist())
            self.streams = streams
            mark_shared_operands(self.streams, self.config.cores, self.config.lx_sticks)
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

    def early_counts(self, frozen: frozenset[int]) -> dict[int, int]:
        """Per core, how many of its leading instructions load read-only tensors only (the
        arguments in `frozen`): those it may start before the barrier. (Memoised by `frozen`:
        a program is launched with few sets of frozen arguments.)"""
        counts = self._early_counts.get(frozen)
        if counts is None:
            counts = {}
            for core, loads in self.leading_loads.items():
                n = 0
                while n < len(loads) and loads[n] <= frozen:
                    n += 1
                if n:
                    counts[core] = n
            self._early_counts[frozen] = counts
        return counts

    def timeline(self, early: timing.Early | None = None) -> timing.Timeline:
        """The launch's simulated time; with `early`, where cores start their early loads
        before the barrier (timing.Early)."""
        if early is None and self._timeline is not None:
            return self._timeline
        spec = None if early is None else (tuple(sorted(early.release.items())), early.ddr_shares)
        if spec is not None and spec in self._early:
            return self._early[spec]
        programs: dict[int, list[timing.Work]] = {}
        for s in self.stream_plans():
            for row, core in enumerate(s.cores):
                programs[int(core)] = [ins.works[row] for ins in s.instrs]
        # programs that differ only in name (a model's repeated layers) share a timeline;
        # the key is a digest of every work's fields (the fields themselves held ~5 MiB
        # for MiniLM's programs)
        fields = (
            self.config,
            tuple((c, tuple(map(_WORK_FIELDS, ws))) for c, ws in sorted(programs.items())),
            spec,
        )
        key = hashlib.blake2b(pickle.dumps(fields, protocol=5), digest_size=16).digest()
        cached = _TIMELINES.get(key)
        if cached is None:
            try:
                cached = timing.simulate(programs, self.config, early)
            except timing.DeadlockError as e:
                raise DeviceError(f"kernel {self.name}: {e}") from None
            if len(_TIMELINES) >= _TIMELINES_MAX:
                _TIMELINES.pop(next(iter(_TIMELINES)))
            _TIMELINES[key] = cached
        if spec is None:
            self._timeline = cached
        else:
            if len(self._early) >= _TIMELINES_MAX:  # (a long-running server meets many sequences)
                self._early.pop(next(iter(self._early)))
            self._early[spec] = cached
        return cached

    def execute(self, model: DeviceModel, args: Sequence[DdrTensor]) -> None:
        """Run the program on `args` (numpy's floating-point warnings off: an SFP function's
        infinities and NaNs are values of the device's arithmetic, not errors)."""
        with np.errstate(all="ignore"):
            self._execute(model, args)

    def _execute(self, model: DeviceModel, args: Sequence[DdrTensor]) -> None:
        """The semantics: streams run cooperatively until they block on a wait or a barrier.

        The first launch checks (LX bounds, the sanitizer); later ones run the program as
        batched steps (sim/batch.py), which compute the same bits. The checks depend on
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
        try:  # later launches run the program as batched steps (sim/batch.py)
            self.batched = BatchedProgram(
                self.stream_plans(), self.config.cores, self.config.lx_sticks, self.resident_out
            )
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
                        notify = ins.notify
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

    def run(
        self,
        model: DeviceModel,
        args: Sequence[DdrTensor],
        name: str | None = None,
        early: timing.Early | None = None,
    ) -> KernelRecord:
        self.execute(model, args)
        record = KernelRecord.from_timeline(name or self.name, self.timeline(early), self.config, **self.counts)
        if self.batched is not None and self.streams is not None:
            # later launches run the batched steps: the per-stream plans (index arrays, works)
            # are not needed again once the timeline and the LX writes are known
            self.lx_writes()
            self.streams = None
        return record


def _leading_loads(works: Sequence[timing.Work]) -> list[frozenset[int]]:
    """The DDR arguments each leading `dma_load` of one core's program reads (a Work's DDR
    interval is (argument << 40) + stick), up to its first other instruction."""
    out = []
    for w in works:
        if w.name != "spyre_isa.dma_load" or not w.ddr_reads or w.ddr_writes:
            break
        out.append(frozenset(lo >> 40 for lo, _ in w.ddr_reads))
    return out


# endregion
# region The model


PROFILE_RECORDS = 1 << 16
"""The launches whose records a device model's profile keeps at least (`KernelLog`): ~100
SmolLM2-135M decode steps' worth, 40-80 MB."""

PROFILE_CALLS = 256
"""The calls whose records (their steps: ~100 bytes a launch) a device model's profile keeps
at least."""


class DeviceModel:
    """One simulated Spyre card: memories, prepared programs, and the profile of its runs (the
    records of its last `PROFILE_RECORDS` launches or more)."""

    def __init__(self, config: DeviceConfig = DEFAULT_CONFIG):
        self.config = config
        self.memory = DeviceMemory(config)
        self.profile = Profile(kernels=KernelLog(PROFILE_RECORDS), calls=KernelLog(PROFILE_CALLS, "call"))
        self.sanitizer = Sanitizer(config) if config.sanitize else None
        self._plans: dict[spyre_isa.ProgramOp, ProgramPlan] = {}
        self.resident: dict[tuple[int, int], str] = {}
        """LX ranges (sticks, every core) that a launch left for a later one, and its name."""
        self.sequence_open = False
        """Whether a launch sequence is running: the host launched a kernel and has not waited
        for the card since, so the card starts the next kernel itself (`dispatch_overhead_s`)."""
        self._clock = 0.0
        """Cycles from the open sequence's start to the end of its last kernel."""
        self._free: dict[int, float] = {}
        """Per core, where (on `_clock`'s scale) its last instruction in the sequence ended."""
        self._ran: list[tuple[float, float, float]] = []
        """The sequence's last `early_loads` launches: (barrier, end, the DDR share left)."""
        self._warned_saturated: set[str] = set()
        """Kernels whose saturated stores were warned about."""
        self._wide: dict[spyre_isa.ProgramOp, bool] = {}
        """Programs that have an immediate past the format's range (`_wide_immediate`)."""
        self._call: tuple[str, list[Step], list[KernelRecord]] | None = None
        """The call of a compiled graph under way (`begin_call`): its name, its steps so far, its
        kernel records."""
        self._calls = 0

    def record(self, record: KernelRecord, patch: bool = True) -> KernelRecord:
        """Charge a launch to the profile: the first of a launch sequence at `launch_overhead_s`
        (as made), a later one at `dispatch_overhead_s`. `patch`: whether an address its program
        names changed since its last launch at the same place (host_timeline.Launch.patch)."""
        host_started = not self.sequence_open
        if self.sequence_open:
            record = record.dispatched()
        else:
            self._clock, self._free, self._ran = 0.0, {}, []
        self.sequence_open = True
        self._advance(record)
        if self._call is not None:
            _, steps, records = self._call
            record.call, record.call_launch = self._calls, len(records)
            records.append(record)
            steps.append(self._launch_step(record, host_started, patch))
        self.profile.add(record)
        record_launch(record)
        return record

    def _launch_step(self, record: KernelRecord, host_started: bool, patch: bool) -> Launch:
        """The host runtime's view of a launch. Work priced as a whole (a DDR copy: no
        instruction stream) is one DMA instruction per core from one tensor to another."""
        cores = self.config.cores
        whole = not record.instructions
        return Launch(
            record.name,
            record.time_s - record.overhead_s,
            record.overhead_s,
            2 if whole else record.arguments,
            2 * cores if whole else record.ddr_addresses,
            cores if whole else record.instructions,
            host_started,
            patch,
        )

    def begin_call(self, name: str) -> None:
        """A call of a compiled graph starts: its launches, transfers and CPU ops are its steps
        until `end_call` (sim/host_timeline.py)."""
        if self._call is None:
            self._call = (name, [], [])

    def transfer(self, nbytes: int, kind: str, to_device: bool) -> None:
        """A host <-> card data transfer of the call under way."""
        if self._call is not None:
            self._call[1].append(Transfer(nbytes, kind, to_device))

    def host_op(self, seconds: float) -> None:
        """A CPU op of the call under way, between device kernels."""
        if self._call is not None:
            self._call[1].append(HostOp(seconds))

    def end_call(self) -> CallRecord | None:
        """The call ends: its record, in the profile and every active `profile()` block."""
        if self._call is None:
            return None
        name, steps, _ = self._call
        self._call = None
        call = CallRecord(self._calls, name, tuple(steps), self.config)
        self._calls += 1
        self.profile.add_call(call)
        record_call(call)
        return call

    def _advance(self, record: KernelRecord) -> None:
        """Move the sequence's clock past a launch (early loads' bookkeeping): where each core
        finished, and the DDR share the launch left. Work priced as a whole (a copy) holds
        every core and the DDR: nothing starts early across it."""
        config = self.config
        barrier = self._clock + (config.dispatch_overhead_s * config.clock_hz if self._ran or self._free else 0.0)
        end = barrier + record.cycles
        if not record.instructions:
            self._free = {c: end for c in range(config.cores)}
            self._ran = [(barrier, end, 0.0)]
        else:
            for core, last in record.core_ends.items():
                self._free[core] = barrier + last
            self._ran = [*self._ran, (barrier, end, max(0.0, 1.0 - record.ddr_utilization))][
                -max(1, config.early_loads) :
            ]
        self._clock = end

    def end_sequence(self) -> None:
        """The host waits for the card here (it reads a result, or a call ends): the next
        launch starts a new sequence."""
        self.sequence_open = False

    def _early(self, plan: ProgramPlan, args: Sequence[DdrTensor]) -> timing.Early | None:
        """Where each core of a dispatched launch may start its loads of read-only arguments
        (DeviceConfig.early_loads): once it finished its part of the launches before, and no
        earlier than the barrier of the `early_loads`-th launch back; before the barrier, at
        the DDR share each launch running then left on average (all of it in the dispatches)."""
        config = self.config
        if not (config.early_loads and self.sequence_open and self._ran):
            return None
        frozen = frozenset(i for i, a in enumerate(args) if isinstance(a, DdrTensor) and a.frozen)
        counts = plan.early_counts(frozen) if frozen else {}
        if not counts:
            return None
        barrier = self._clock + config.dispatch_overhead_s * config.clock_hz
        floor = self._ran[0][0]
        release = {c: (n, round(max(floor, self._free.get(c, floor)) - barrier, 3)) for c, n in counts.items()}
        shares: list[tuple[float, float]] = []
        for start, end, share in self._ran:
            shares += [(round(start - barrier, 3), round(share, 3)), (round(end - barrier, 3), 1.0)]
        return timing.Early(release, tuple(shares))

    def _saturated(self, prog: spyre_isa.ProgramOp, args: Sequence[DdrTensor], name: str, plan: ProgramPlan) -> int:
        """Values of a launch's 16-bit outputs that a store saturated, warned once per kernel:
        a value past the format's range is not silently a wrong answer. Not counted: a kernel
        whose inputs already hold a saturated value, or whose program has an immediate past the
        range; there the largest value is what the format keeps for an infinity (an attention
        mask's finfo.min or -inf, selected or added), and the kernel that made it warned."""
        numerics = self.memory.numerics

        def held(tensors: Sequence[DdrTensor]) -> int:
            return sum(
                numerics.saturated(t.data.view(np.uint16))
                for t in tensors
                if isinstance(t, DdrTensor) and t.layout.element_bytes == 2  # (not a host index array)
            )

        n = held(args[plan.num_inputs :])
        if n and (self._wide_immediate(prog) or held(args[: plan.num_inputs])):
            return 0
        if n and name not in self._warned_saturated:
            self._warned_saturated.add(name)
            warnings.warn(
                f"spyre: kernel {name} ({', '.join(plan.compute_ops) or 'copies'}) stored {n} value(s) past "
                f"{numerics.name.upper()}'s range (|x| > {numerics.max_value:.4g}), saturated: its result is not the "
                "true value (profile: KernelRecord.saturated)",
                stacklevel=4,
            )
        return n

    def _wide_immediate(self, prog: spyre_isa.ProgramOp) -> bool:
        """Whether an instruction of `prog` has an immediate past the 16-bit format's range."""
        wide = self._wide.get(prog)
        if wide is None:
            top = self.memory.numerics.max_value
            wide = self._wide[prog] = any(
                isinstance(imm := op.properties.get("imm"), FloatAttr) and not abs(imm.value.data) <= top
                for op in prog.walk()
            )
        return wide

    def plan(self, prog: spyre_isa.ProgramOp) -> ProgramPlan:
        """The prepared plan of `prog`, made at its first launch and kept until `forget`."""
        plan = self._plans.get(prog)
        if plan is None:
            plan = self._plans[prog] = ProgramPlan(prog, self.config)
        return plan

    def forget(self, programs: Iterable[spyre_isa.ProgramOp]) -> None:
        """Drop the plans of `programs` (their module is gone: host.Executable calls this when
        it is freed); a later launch of one of them prepares it again."""
        for prog in programs:
            self._plans.pop(prog, None)
            self._wide.pop(prog, None)

    def launch(
        self, prog: spyre_isa.ProgramOp, inputs: Sequence[DdrTensor], name: str | None = None, patch: bool = True
    ) -> list[DdrTensor]:
        """Run `prog` on `inputs`; its outputs. `name`: the kernel the profile names the launch
        by (a launch of a program shared by identical kernels); default the program's. A program
        `in_place` writes into the buffer of that input, which it returns as its output.
        `patch`: whether an address the program names changed since its last launch at the same
        place in a graph (the host runtime corrects it again; sim/host_timeline.py)."""
        name = name or prog.sym_name.data
        if (
            prog not in self._plans and prog.in_place is None
        ):  # outputs the DDR cannot hold: refused before the plan's host arrays
            for i, a in enumerate(prog.args[prog.num_inputs.data :]):
                self.memory.check_room(spyre.device_layout(a.type), f"{name}.out{i}")
        with host_threads():
            return self._launch(prog, inputs, name, patch)

    def _launch(
        self, prog: spyre_isa.ProgramOp, inputs: Sequence[DdrTensor], name: str, patch: bool
    ) -> list[DdrTensor]:
        plan = self.plan(prog)
        if len(inputs) != plan.num_inputs:
            raise DeviceError(f"kernel {name} takes {plan.num_inputs} inputs, got {len(inputs)}")
        for i, (t, want) in enumerate(zip(inputs, plan.arg_layouts)):
            if want is None:  # host indices, handed to the program as they are
                continue
            if not t.layout.places_like(want):
                raise DeviceError(f"kernel {name}: input {i} has layout {t.layout}, the program expects {want}")
        if plan.resident_in is not None and plan.resident_in not in self.resident:
            lo, hi = plan.resident_in
            raise DeviceError(
                f"kernel {name} reads LX bytes [{lo * STICK_BYTES}, {hi * STICK_BYTES}) as a value an earlier launch "
                f"left there, but no earlier launch did (or a later one overwrote it); left: "
                f"{', '.join(f'[{a * STICK_BYTES}, {b * STICK_BYTES}) by {k}' for (a, b), k in self.resident.items()) or 'nothing'}"
            )
        if prog.in_place is not None:  # the output is the input's buffer (a scatter's destination)
            outputs = [inputs[prog.in_place]]
        else:
            outputs = [self.memory.allocate(lay, f"{name}.out{i}") for i, lay in enumerate(plan.output_layouts)]
        args = [*inputs, *outputs]
        record = plan.run(self, args, name, self._early(plan, args))
        if prog.in_place is None:  # (a scatter's rows were stored, and checked, by their producer)
            record.saturated = self._saturated(prog, args, name, plan)
        if self.resident:  # what this launch overwrote is gone
            writes = plan.lx_writes()
            for lo, hi in list(self.resident):
                if (lo, hi) != plan.resident_out and any(a < hi and b > lo for a, b in writes):
                    del self.resident[(lo, hi)]
        if plan.resident_out is not None:
            self.resident[plan.resident_out] = name
        self.record(record, patch)
        return outputs


# endregion
