"""What runs cost in simulated device time: per kernel launch and per core, with a
torch.profiler-like API.

    with spyre_mlir.profile() as prof:
        model(x)
    print(prof.table())                       # kernels sorted by time
    prof.export_chrome_trace("trace.json")    # Perfetto / chrome://tracing

Per kernel: time, DDR bytes, MACs, utilisation of PT, SFP and DDR, and the roofline:

    arithmetic intensity  AI = 2 * MACs / DDR bytes                    (FLOP per byte)
    attainable            min(PT peak, AI * DDR bandwidth)             (FLOP/s; memory roofline
                                                                        in bytes/s for MAC-free kernels)
    attainment            achieved / attainable
    bottleneck            the busiest of PT, SFP (per core used) and DDR

Peaks are of the whole card with the corelets the compiler drives (DeviceConfig).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, NoReturn, TypeVar, overload

from spyre_mlir.sim.host_timeline import LANES, CallTimeline, Launch, Step, schedule
from spyre_mlir.sim.timing import ENGINES, Span, Timeline
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.cycles import host_transfer_seconds


@dataclass
class KernelRecord:
    """One kernel launch on the device model."""

    name: str
    time_s: float
    """Simulated time: `overhead_s` + the last core's finish."""
    cycles: float
    cores: int
    """Cores that ran at least one instruction."""
    instructions: int
    """Instructions issued, summed over cores."""
    ddr_read_bytes: int
    ddr_write_bytes: int
    macs: int
    ring_bytes: int = 0
    """Bytes sent over the data ring, summed over cores."""
    arguments: int = 0
    """Its program's tensor arguments."""
    ddr_addresses: int = 0
    """Symbolic DDR addresses its program names, which the runtime patches at launch: one per
    DMA instruction per core per tensor it addresses."""
    config: DeviceConfig = field(repr=False, default_factory=DeviceConfig)
    engine_cycles: dict[str, float] = field(default_factory=dict)
    """Busy cycles per engine, summed over cores."""
    spans: list[Span] = field(default_factory=list, repr=False)
    """Per core and engine: when each instruction ran (cycles from the kernel's start)."""
    stream: int = 0
    """The stream of the native device it ran on (spyre_mlir/torch_device/streams.py)."""
    start_s: float | None = None
    """When it started on that stream's clock (None: not on a stream; the trace places such
    kernels back to back)."""
    overhead_s: float = 0.0
    """What starting it cost, in `time_s`: `launch_overhead_s` for the first kernel of a launch
    sequence, `dispatch_overhead_s` for a later one (`dispatched`)."""
    early_cycles: float = 0.0
    """Cycles before its barrier that its early loads began (DeviceConfig.early_loads), in
    the kernel before's time and not in `time_s`; the utilisations count them."""
    core_ends: dict[int, float] = field(default_factory=dict, repr=False)
    """Per core that ran an instruction, when its last one ended (cycles from the barrier)."""
    call: int | None = None
    """The call of a compiled graph it ran in (`CallRecord.number`; None: outside one)."""
    call_launch: int = 0
    """Its place among that call's launches (`CallTimeline.launches`)."""
    saturated: int = 0
    """Values its outputs hold that a store saturated: past the 16-bit format's range (DL16:
    |x| > 8.57e9, stored as the largest finite value; IEEE fp16: stored as infinity). A
    result that holds one is not the true value (`DeviceModel` warns once per kernel). Not
    counted where the kernel's inputs already held one or its program has an immediate past
    the range: the largest value standing for an infinity, as an attention mask's does."""

    @staticmethod
    def from_timeline(name: str, tl: Timeline, config: DeviceConfig, **counts: int) -> KernelRecord:
        return KernelRecord(
            name=name,
            time_s=config.launch_overhead_s + tl.cycles / config.clock_hz,
            cycles=tl.cycles,
            config=config,
            engine_cycles=dict(tl.busy),
            spans=tl.spans,
            overhead_s=config.launch_overhead_s,
            early_cycles=tl.early,
            core_ends=tl.ends,
            **counts,
        )

    def dispatched(self) -> KernelRecord:
        """This launch as a later kernel of a launch sequence: the card starts it
        (`dispatch_overhead_s`), not the host."""
        cost = self.config.dispatch_overhead_s
        record = object.__new__(KernelRecord)  # (a field-for-field copy: `replace` re-runs
        record.__dict__.update(self.__dict__)  # __init__, a tenth of a launch's bookkeeping)
        record.time_s, record.overhead_s = self.time_s - self.overhead_s + cost, cost
        return record

    @staticmethod
    def timed(
        name: str,
        seconds: float,
        read_bytes: int,
        write_bytes: int,
        config: DeviceConfig,
        cores: int,
        overhead_s: float = 0.0,
    ) -> KernelRecord:
        """A record of work priced as a whole (no instruction stream): `seconds` long, of which
        `overhead_s` its start."""
        return KernelRecord(
            name=name,
            time_s=seconds,
            cycles=seconds * config.clock_hz,
            cores=cores,
            instructions=0,
            ddr_read_bytes=read_bytes,
            ddr_write_bytes=write_bytes,
            macs=0,
            config=config,
            overhead_s=overhead_s,
        )

    @staticmethod
    def copy(name: str, read_bytes: int, write_bytes: int, config: DeviceConfig) -> KernelRecord:
        """A copy within DDR (DMA from DDR to DDR on every core): a launch, and its bytes over
        the DDR bandwidth."""
        seconds = config.launch_overhead_s + (read_bytes + write_bytes) / config.ddr_bytes_per_s
        return KernelRecord.timed(
            name, seconds, read_bytes, write_bytes, config, config.cores, overhead_s=config.launch_overhead_s
        )

    @property
    def ddr_bytes(self) -> int:
        return self.ddr_read_bytes + self.ddr_write_bytes

    # ------------------------------------------------------------------ utilisation
    def _active(self) -> float:
        """Cycles it ran: from its first early load (or its barrier) to its last core's end."""
        return max(self.cycles + self.early_cycles, 1e-9)

    def _capacity(self) -> float:
        return self._active() * self.config.cores

    @property
    def pt_utilization(self) -> float:
        """MACs done / MACs the card's PT arrays could do in this time (corelets driven)."""
        return self.macs / (self.config.pt_macs_per_cycle * self._capacity())

    @property
    def sfp_utilization(self) -> float:
        return self.engine_cycles.get("sfp", 0.0) / self._capacity()

    @property
    def dma_utilization(self) -> float:
        """Busy fraction of the DMA engines (in and out) of the cores the kernel used."""
        busy = self.engine_cycles.get("dma_in", 0.0) + self.engine_cycles.get("dma_out", 0.0)
        return busy / (2 * self._active() * max(self.cores, 1))

    @property
    def ddr_utilization(self) -> float:
        """DDR bytes moved / bytes the shared DDR could move in this time."""
        per_cycle = self.config.ddr_bytes_per_s / self.config.clock_hz
        return self.ddr_bytes / (per_cycle * self._active())

    # ------------------------------------------------------------------ roofline
    @property
    def peak_flops(self) -> float:
        return 2 * self.config.pt_macs_per_cycle * self.config.clock_hz * self.config.cores

    @property
    def arithmetic_intensity(self) -> float:
        return 2 * self.macs / self.ddr_bytes if self.ddr_bytes else float("inf")

    @property
    def attainment(self) -> float:
        """Achieved / attainable on the roofline (compute kernels in FLOP/s, the others in bytes/s)."""
        seconds = max(self.time_s + self.early_cycles / self.config.clock_hz, 1e-15)
        if self.macs:
            attainable = min(self.peak_flops, self.arithmetic_intensity * self.config.ddr_bytes_per_s)
            return 2 * self.macs / seconds / attainable
        return self.ddr_bytes / seconds / self.config.ddr_bytes_per_s

    @property
    def bottleneck(self) -> str:
        """The busiest resource: PT and SFP engines and DMA engines as a fraction of the cores
        the kernel used, DDR as a fraction of the card's bandwidth."""
        busy = self.engine_cycles
        per_core = self._active() * max(self.cores, 1)
        use = {
            "pt": busy.get("pt", 0.0) / per_core,
            "sfp": busy.get("sfp", 0.0) / per_core,
            "ddr": max(self.ddr_utilization, self.dma_utilization),
        }
        return max(use, key=lambda engine: use[engine])


@dataclass(eq=False)
class CallRecord:
    """One call of a compiled graph: its steps (launches, transfers, CPU ops) in order, from
    which its timeline in any runtime mode follows (sim/host_timeline.py)."""

    number: int
    """Its serial number on its device model (`KernelRecord.call` names it)."""
    name: str
    steps: tuple[Step, ...]
    config: DeviceConfig = field(repr=False, default_factory=DeviceConfig)
    stream: int = 0
    """The native device's stream it ran on (spyre_mlir/torch_device/streams.py)."""
    start_s: float | None = None
    """When it started on that stream's clock (None: not on a stream)."""
    _timelines: dict[str, CallTimeline] = field(default_factory=dict, repr=False)

    def timeline(self, mode: str | None = None) -> CallTimeline:
        """Its timeline in `mode` (default: the config's `runtime_mode`)."""
        mode = mode or self.config.runtime_mode
        tl = self._timelines.get(mode)
        if tl is None:
            tl = self._timelines[mode] = schedule(self.steps, self.config, mode)
        return tl

    @property
    def total_s(self) -> float:
        """End to end in the config's runtime mode."""
        return self.timeline().total_s

    @property
    def launches(self) -> int:
        return sum(1 for s in self.steps if isinstance(s, Launch))


T = TypeVar("T")


_ACTIVE: list[Profile] = []


STREAM_LANES = 1_000_000
"""The trace's thread id of stream 0's lane (stream n: this + n), past every core's lanes."""


class KernelLog(Sequence[T], Generic[T]):
    """A device model's own kernel records (`DeviceModel.profile`): every launch counted, the
    last `keep` to `2 * keep` launches' records kept (~600 bytes each), so a long-running process (a server, a
    long generation) does not grow with its launches. Indices count every launch ever recorded
    (`len` is their number), so `log[len_before:]` after a call is the call's records, as with a
    list; reading a record that was dropped raises IndexError, never returns fewer records.
    Iterating yields the kept records only. `spyre_mlir.profile()` keeps every record of its
    block. (The device's calls are kept alike: `what="call"`.)"""

    def __init__(self, keep: int, what: str = "kernel"):
        if keep < 1:
            raise ValueError(f"a {what} log keeps at least one record, not {keep}")
        self.keep = keep
        self.what = what
        self._records: list[T] = []
        self._dropped = 0
        """Records dropped from the front: the first kept one is launch number `_dropped`."""

    def append(self, record: T) -> None:
        self._records.append(record)
        if len(self._records) > 2 * self.keep:  # amortised: a drop every `keep` launches
            self._dropped += len(self._records) - self.keep
            del self._records[: -self.keep]

    def __len__(self) -> int:
        return self._dropped + len(self._records)

    def __iter__(self) -> Iterator[T]:
        return iter(self._records)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            wanted = range(start, stop, step)
            if wanted and min(wanted[0], wanted[-1]) < self._dropped:
                self._gone(min(wanted[0], wanted[-1]))
            return [self._records[j - self._dropped] for j in wanted]
        j = i + len(self) if i < 0 else i
        if not 0 <= j < len(self):
            raise IndexError(f"{self.what} record {i} of {len(self)}")
        if j < self._dropped:
            self._gone(j)
        return self._records[j - self._dropped]

    def __delitem__(self, i: slice) -> None:
        """`del log[first:]`: the records from launch `first` on are forgotten, as a list's
        (`len` is `first` again)."""
        start, stop, step = i.indices(len(self))
        if step != 1 or stop != len(self) or start < self._dropped:
            raise IndexError(f"a {self.what} log forgets its last records only (log[first:], first >= {self._dropped})")
        del self._records[start - self._dropped :]

    def _gone(self, j: int) -> NoReturn:
        raise IndexError(
            f"{self.what} record {j} was dropped: the device profile keeps the last {self.keep} {self.what}s' records "
            f"({len(self)} recorded); wrap the calls in spyre_mlir.profile() to keep all of theirs"
        )


@dataclass
class Profile:
    """Kernel records in launch order (one or more runs)."""

    kernels: list[KernelRecord] | KernelLog = field(default_factory=list)
    transfers_bytes: int = 0
    """Host <-> device bytes (weights are transferred once and cached)."""
    transfers_s: float = 0.0
    """Their time over the host link, each `host_link_latency_s` and its bytes at
    `host_link_bytes_per_s` (the kernels' `total_time_s` does not include it)."""
    transfer_bytes_by_kind: dict[str, int] = field(default_factory=dict)
    """The same bytes by what crossed: "argument" (a graph's weights and inputs, uploaded, or
    read by a host op from the native device), "intermediate" (a value computed in the call on
    its way to or from a host op), "result" (a graph's outputs, downloaded), "index" (integer
    tensors of the native device read by the host ops that build indices and masks, by design),
    "copy" (a copy between a host tensor and a native device tensor)."""

    host_round_trips: int = 0
    """Times a call's host waited for a value between device kernels (a CPU op's operand):
    each ends a launch sequence, so the kernel after it pays a launch."""
    host_ops_s: float = 0.0
    """The host ops' own time in those round trips (`host_op_s` each)."""
    host_round_trip_s: float = 0.0
    """Their price: their transfers both ways (from the wait to the next launch) and `host_op_s`
    each (the new launch is in the next kernel's time): analysis/cost.py
    `host_round_trip_seconds` prices one alike."""
    calls: list[CallRecord] | KernelLog[CallRecord] = field(default_factory=list)
    """The calls of compiled graphs, in order: each one's steps and its timeline with the host
    runtime's work (sim/host_timeline.py)."""

    def add(self, record: KernelRecord) -> None:
        self.kernels.append(record)

    def add_call(self, call: CallRecord) -> None:
        self.calls.append(call)

    def call_breakdown(self, mode: str | None = None) -> dict[str, float]:
        """Where the calls' time goes in `mode` (default: each call's config's runtime_mode),
        summed over the calls: `total_s` end to end, `kernels_s` (the card's compute),
        `dispatch_s` (starting the kernels), `runtime_s` (the host runtime's work on the
        critical path), `link_s` (data transfers), `host_ops_s` (CPU ops on the path)."""
        out = dict.fromkeys(("total_s", "kernels_s", "dispatch_s", "runtime_s", "link_s", "host_ops_s"), 0.0)
        for c in self.calls:
            tl = c.timeline(mode)
            for k in out:
                out[k] += getattr(tl, k)
        return out

    @property
    def call_time_s(self) -> float:
        """The calls' end-to-end time in their runtime mode: kernels, transfers, CPU ops and the
        host runtime's work on the critical path."""
        return sum(c.total_s for c in self.calls)

    @property
    def host_runtime_s(self) -> float:
        """The host runtime's work on the calls' critical path (graph construction, program
        correction, the patched programs over the link) in their runtime mode."""
        return sum(c.timeline().runtime_s for c in self.calls)

    @property
    def host_runtime_share(self) -> float:
        """The host runtime's share of the calls' end-to-end time."""
        total = self.call_time_s
        return self.host_runtime_s / total if total else 0.0

    def add_transfer(self, nbytes: int, config: DeviceConfig, kind: str = "argument", round_trip: bool = False) -> None:
        """`round_trip`: the transfer is part of a host round trip."""
        seconds = host_transfer_seconds(nbytes, config)
        self.transfers_bytes += nbytes
        self.transfers_s += seconds
        self.transfer_bytes_by_kind[kind] = self.transfer_bytes_by_kind.get(kind, 0) + nbytes
        if round_trip:
            self.host_round_trip_s += seconds

    def add_round_trip(self, config: DeviceConfig) -> None:
        """The host waits for a value between device kernels to run a CPU op on it."""
        self.host_round_trips += 1
        self.host_ops_s += config.host_op_s
        self.host_round_trip_s += config.host_op_s

    @property
    def total_time_s(self) -> float:
        return sum(k.time_s for k in self.kernels)

    @property
    def total_ddr_bytes(self) -> int:
        return sum(k.ddr_bytes for k in self.kernels)

    def table(self, sort_by_time: bool = True) -> str:
        rows = sorted(self.kernels, key=lambda k: -k.time_s) if sort_by_time else list(self.kernels)
        head = (
            f"{'kernel':<20}{'time (us)':>10}{'cores':>6}{'instrs':>7}{'DDR MB':>8}{'ring MB':>8}{'GMACs':>8}"
            f"{'PT %':>6}{'SFP %':>6}{'DDR %':>6}{'AI':>7}{'attain':>7}  bottleneck"
        )
        lines = [head, "-" * len(head)]
        for k in rows:
            ai = "-" if not k.macs else f"{k.arithmetic_intensity:.1f}"
            lines.append(
                f"{k.name:<20}{k.time_s * 1e6:>10.2f}{k.cores:>6}{k.instructions:>7}{k.ddr_bytes / 1e6:>8.3f}{k.ring_bytes / 1e6:>8.3f}"
                f"{k.macs / 1e9:>8.3f}{100 * k.pt_utilization:>6.1f}{100 * k.sfp_utilization:>6.1f}"
                f"{100 * k.ddr_utilization:>6.1f}{ai:>7}{100 * k.attainment:>6.1f}%  {k.bottleneck}"
            )
        lines.append("-" * len(head))
        lines.append(
            f"{'total (' + str(len(rows)) + ' launches)':<20}{self.total_time_s * 1e6:>10.2f}{'':>6}"
            f"{sum(k.instructions for k in rows):>7}{self.total_ddr_bytes / 1e6:>8.3f}{sum(k.ring_bytes for k in rows) / 1e6:>8.3f}"
            f"{sum(k.macs for k in rows) / 1e9:>8.3f}"
        )
        if self.transfers_bytes:
            lines.append(
                f"host transfers: {self.transfers_bytes / 1e6:.3f} MB, {self.transfers_s * 1e6:.2f} us over the host link "
                f"(not in the total)"
            )
        if self.host_round_trips:
            lines.append(
                f"host round trips: {self.host_round_trips}, {self.host_round_trip_s * 1e6:.2f} us "
                f"(their transfers and host ops; not in the total)"
            )
        if self.calls:
            b = self.call_breakdown()
            modes = sorted({c.config.runtime_mode for c in self.calls})
            lines.append(
                f"calls: {len(self.calls)}, {b['total_s'] * 1e6:.2f} us end to end ({', '.join(modes)}): kernels "
                f"{b['kernels_s'] * 1e6:.2f}, dispatch {b['dispatch_s'] * 1e6:.2f}, host runtime {b['runtime_s'] * 1e6:.2f} "
                f"({100 * self.host_runtime_share:.1f}%), link {b['link_s'] * 1e6:.2f}, CPU ops {b['host_ops_s'] * 1e6:.2f}"
            )
        saturated = self.saturated
        if saturated:
            lines.append(
                "saturated stores (values past the 16-bit format's range): "
                + ", ".join(f"{name} {n}" for name, n in saturated.items())
            )
        return "\n".join(lines)

    @property
    def saturated(self) -> dict[str, int]:
        """Values stored past the 16-bit format's range, by kernel (`KernelRecord.saturated`)."""
        out: dict[str, int] = {}
        for k in self.kernels:
            if k.saturated:
                out[k.name] = out.get(k.name, 0) + k.saturated
        return out

    def chrome_trace(self) -> dict:
        """Trace Event Format: one process (the device), one thread per core and engine plus
        one for kernel launches and one per host runtime lane (`host_timeline.LANES`, above the
        card's); complete ("X") events in microseconds. A call of a compiled graph is laid out
        as its timeline in its runtime mode: its host runtime's work on the host lanes, each
        kernel where that timeline starts it (so the host's work shows as gaps between
        kernels). Kernels of the native device's streams (`start_s` set) sit on one lane per
        stream at their stream's clock; others run back to back on the "kernels" lane."""
        events: list[dict] = [{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "spyre device (model)"}}]
        events.append({"ph": "M", "pid": 0, "tid": 0, "name": "thread_name", "args": {"name": "kernels"}})
        named: set[int] = set()
        calls = {c.number: c for c in self.calls}
        placed: dict[int, float] = {}
        """Per call laid out: where it starts (us)."""
        t0 = 0.0
        for k in self.kernels:
            us_per_cycle = 1e6 / k.config.clock_hz
            lane, ts, dur, overhead = 0, t0, k.time_s * 1e6, k.overhead_s * 1e6
            number = -1 if k.call is None else k.call
            call = calls.get(number)
            if call is not None and k.call_launch < len(call.timeline().launches):
                tl = call.timeline()
                if number not in placed:
                    base = placed[number] = call.start_s * 1e6 if call.start_s is not None else t0
                    _host_events(events, named, call.name, tl, base)
                    if call.start_s is None:
                        t0 = base + tl.total_s * 1e6
                start, seconds = tl.launches[k.call_launch]
                ts, dur = placed[number] + start * 1e6, seconds * 1e6
                overhead = dur - (k.time_s - k.overhead_s) * 1e6
            elif k.start_s is not None:
                ts = k.start_s * 1e6
            if k.start_s is not None:
                lane = STREAM_LANES + k.stream
                _name_lane(events, named, lane, f"stream {k.stream}")
            events.append(
                {
                    "name": k.name,
                    "cat": "kernel",
                    "ph": "X",
                    "pid": 0,
                    "tid": lane,
                    "ts": ts,
                    "dur": dur,
                    "args": {
                        "cores": k.cores,
                        "ddr_bytes": k.ddr_bytes,
                        "ring_bytes": k.ring_bytes,
                        "macs": k.macs,
                        "pt_utilization": k.pt_utilization,
                        "attainment": k.attainment,
                        "bottleneck": k.bottleneck,
                    },
                }
            )
            start_us = ts + overhead
            for s in k.spans:
                tid = 1 + s.core * len(ENGINES) + ENGINES.index(s.engine)
                _name_lane(events, named, tid, f"core {s.core:02d} {s.engine}", tid)
                events.append(
                    {
                        "name": s.name,
                        "cat": s.engine,
                        "ph": "X",
                        "pid": 0,
                        "tid": tid,
                        "ts": start_us + s.start * us_per_cycle,
                        "dur": (s.end - s.start) * us_per_cycle,
                        "args": {"kernel": k.name, "instruction": s.index},
                    }
                )
            if call is None and k.start_s is None:
                t0 += k.time_s * 1e6
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    def export_chrome_trace(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)


HOST_LANES = 2_000_000
"""The trace's thread id of the host runtime's first lane (`host_timeline.LANES`, in order)."""


def _name_lane(events: list[dict], named: set[int], tid: int, name: str, sort_index: int | None = None) -> None:
    if tid in named:
        return
    named.add(tid)
    events.append({"ph": "M", "pid": 0, "tid": tid, "name": "thread_name", "args": {"name": name}})
    if sort_index is not None:
        events.append(
            {"ph": "M", "pid": 0, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": sort_index}}
        )


def _host_events(events: list[dict], named: set[int], call: str, tl: CallTimeline, base: float) -> None:
    """A call's host runtime work on the host lanes, from `base` (us)."""
    for span in tl.spans:
        i = LANES.index(span.lane)
        tid = HOST_LANES + i
        _name_lane(events, named, tid, span.lane, i - len(LANES))  # (sorted above the card's lanes)
        events.append(
            {
                "name": span.name,
                "cat": "host",
                "ph": "X",
                "pid": 0,
                "tid": tid,
                "ts": base + span.start * 1e6,
                "dur": span.seconds * 1e6,
                "args": {"call": call, "runtime_mode": tl.mode},
            }
        )


def record_launch(record: KernelRecord) -> None:
    """Hand a launch to every active `profile()` block."""
    for p in _ACTIVE:
        p.add(record)


def record_transfer(nbytes: int, config: DeviceConfig, kind: str = "argument", round_trip: bool = False) -> None:
    """Hand a host <-> device transfer to every active `profile()` block."""
    for p in _ACTIVE:
        p.add_transfer(nbytes, config, kind, round_trip)


def record_call(call: CallRecord) -> None:
    """Hand a call of a compiled graph to every active `profile()` block."""
    for p in _ACTIVE:
        p.add_call(call)


def record_round_trip(config: DeviceConfig) -> None:
    """Hand a host round trip to every active `profile()` block."""
    for p in _ACTIVE:
        p.add_round_trip(config)


@contextmanager
def profile() -> Iterator[Profile]:
    """Collect every kernel launched and every host <-> device transfer on any device model
    inside the block."""
    prof = Profile()
    _ACTIVE.append(prof)
    try:
        yield prof
    finally:
        _ACTIVE.remove(prof)
