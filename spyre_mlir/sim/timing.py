"""Simulated time, as discrete events (semantics live in interpreter.py; this file never
touches data).

Each core has engines — `dma_in`, `dma_out`, `pt`, `sfp`, `ring` — that each run their own
instructions in program order, one at a time, but for the DMA engines, which keep up to
`dma_queue_depth` instructions in flight: a DMA engine issues its next instruction once every
one it has in flight is past its latency, so a run of transfers pays the latency once (the
engine still streams its transfers' bytes one after another, in order). An instruction starts
when

    its engine can take it and every earlier instruction of that engine has started,
    no earlier, unfinished instruction of the core (on any engine) touches an overlapping LX
        range, or an overlapping range of the same DDR tensor, in a conflicting way
        (read-after-write, write-after-read, write-after-write), and
    no earlier `wait` or `barrier` of the core is still blocked,

so DMA and compute overlap whenever the data lets them (double buffering), and a DMA stalled
on a buffer does not hold up compute behind it. `signal` fires once every earlier
instruction of its core has finished (a ring send's `notify` token once the send has);
`wait` once enough tokens were signalled; `barrier` once every core of the launch has
finished its earlier work and reached it. At any moment the cores are considered in
ascending order: when several wait for one token, the lowest-numbered takes it first. A running
instruction needs some of: engine cycles (`compute`), bytes through its core's LX port
(`port`), bytes of DDR bandwidth (`ddr`), after a fixed `latency`. Shared resources are
divided at every moment among the instructions using them (fluid sharing):

    DDR bandwidth   equally among all DMA transfers in flight on all cores
    LX port         equally among the instructions of one core that use it

and each instruction progresses at the pace of its scarcest resource:

    rate = 1 / max(compute, port / port_share, ddr / ddr_share)      (fraction per cycle)

The LX port carries DMA and ring traffic. The PT array and the SFP reach LX through their own
datapaths: the published PT peak needs one B stick per corelet per cycle, and the published
softmax time (23.67 us for 512 x 1024 with intermediates in LX) needs about one SFP vector
operation per cycle; a shared 128 B/cycle port could give neither (docs/hardware.md).
Every constant comes from DeviceConfig.

Early loads (`Early`, DeviceConfig.early_loads): a launch the card dispatches after others
may let each core start its leading loads of read-only DDR tensors (the first `count`
instructions of its program) at `release` <= 0, before the launch's barrier at 0, where it
finished its part of the kernels before; every other instruction waits for 0. Before 0 the
transfers share what DDR bandwidth the kernels running then leave (`ddr_shares`). The
timeline's `cycles` count from 0.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from spyre_mlir.target.config import DeviceConfig

ENGINES = ("dma_in", "dma_out", "pt", "sfp", "ring")
QUEUED_ENGINES = ("dma_in", "dma_out")
"""Engines that keep `DeviceConfig.dma_queue_depth` instructions in flight."""


@dataclass(slots=True)
class Work:
    """One instruction on one core, as the timing model sees it."""

    index: int
    name: str
    engine: str | None  # None: a sync instruction
    latency: float = 0.0
    compute: float = 0.0
    port: float = 0.0
    ddr: float = 0.0
    reads: tuple[tuple[int, int], ...] = ()
    writes: tuple[tuple[int, int], ...] = ()
    """LX stick intervals [lo, hi) the instruction reads and writes on its core."""
    ddr_reads: tuple[tuple[int, int], ...] = ()
    ddr_writes: tuple[tuple[int, int], ...] = ()
    """DDR intervals, as (argument << 40) + stick, so that different tensors never overlap."""
    sync: tuple = ()  # ("signal", token) | ("wait", token, count) | ("barrier",)
    notify: int | None = None
    """A token this instruction signals when it finishes (a ring send's completion notice)."""


@dataclass(slots=True)
class Span:
    """When one instruction ran on one core's engine (cycles from the launch)."""

    core: int
    engine: str
    name: str
    index: int
    start: float
    end: float


@dataclass
class Timeline:
    """The simulated execution of one program launch."""

    cycles: float
    spans: list[Span] = field(default_factory=list)
    busy: dict[str, float] = field(default_factory=dict)
    """Busy cycles per engine, summed over cores."""
    early: float = 0.0
    """Cycles before the barrier its first early load started (0: none; `Early`)."""
    ends: dict[int, float] = field(default_factory=dict)
    """Per core that ran an instruction, when its last one ended."""


class DeadlockError(RuntimeError):
    pass


@dataclass(frozen=True)
class Early:
    """What a launch may start before its barrier (module docstring)."""

    release: dict[int, tuple[int, float]]
    """Per core: (how many leading instructions may start early, from which cycle, <= 0)."""
    ddr_shares: tuple[tuple[float, float], ...] = ()
    """(from which cycle, share): the share of the DDR bandwidth transfers get before the
    barrier, from each cycle until the next (1 before the first and from 0 on)."""


def overlap(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> bool:
    """Whether an interval [lo, hi) of `a` meets one of `b`."""
    return any(lo1 < hi2 and lo2 < hi1 for lo1, hi1 in a for lo2, hi2 in b)


def _conflict(a: Work, b: Work) -> bool:
    return (
        overlap(a.reads, b.writes)
        or overlap(a.writes, b.reads)
        or overlap(a.writes, b.writes)
        or overlap(a.ddr_reads, b.ddr_writes)
        or overlap(a.ddr_writes, b.ddr_reads)
        or overlap(a.ddr_writes, b.ddr_writes)
    )


class _Running:
    """An instruction in flight on its core's engine."""

    __slots__ = (
        "work",
        "engine",
        "core",
        "pos",
        "start",
        "lat_end",
        "lat_seen",
        "progress",
        "rate",
        "compute",
        "port",
        "ddr",
    )

    def __init__(self, work: Work, engine: str, core: int, pos: int, start: float):
        self.work = work
        self.engine = engine
        self.core = core
        self.pos = pos
        self.start = start
        self.lat_end = start + work.latency
        self.lat_seen = False  # whether the engine was told it is past its latency
        self.progress = 0.0
        self.rate = 0.0
        self.compute, self.port, self.ddr = work.compute, work.port, work.ddr  # read at every event


WINDOW = 64
"""How far past its oldest unfinished instruction a core first looks for work it may start.
Where every core is blocked within it, the cores look through their whole programs before a
deadlock is declared: an engine may run ahead of the others by any number of instructions
(a chain's ring sends far past a DMA waiting on the next core), and the window only bounds
the scans' cost."""

_EPS = 1e-9
"""Cycles within which events count as simultaneous."""


def simulate(programs: dict[int, list[Work]], config: DeviceConfig, early: Early | None = None) -> Timeline:
    """Run the per-core instruction lists of one launch through the event model."""
    return Simulation(programs, config, early).run()


class Simulation:
    """One launch's per-core instruction lists in the event model (module docstring): the
    cores' issue state, the instructions in flight and the clock, advanced event by event.

    A scan of core c (`_try_issue`) can issue something new only after one of its own
    instructions finished or passed its latency on a queued engine, or, when it stopped at a
    `wait` on token T without enough tokens, after T was signalled (other cores' finishing,
    issuing or barrier arrivals change nothing else it looks at: engines, hazards and the
    barrier's release are its own core's state). A scan records (moved[c], T, signals of T so
    far); a core is scanned again only when that changed: after its own instruction finished or
    passed its latency, or by T's signal (`waiters`)."""

    def __init__(self, programs: dict[int, list[Work]], config: DeviceConfig, early: Early | None = None):
        self.programs = programs
        self.early = {c: r for c, r in (early.release.items() if early else ()) if r[0] > 0 and r[1] < 0}
        """Per core: leading instructions that may start before the barrier, and from when."""
        self.shares = [(at, share) for at, share in (early.ddr_shares if early else ()) if at < 0]
        self.gates = sorted(
            {r[1] for r in self.early.values()} | ({at for at, _ in self.shares} | {0.0} if self.early else set())
        )
        """The clock's stops before the barrier: each core's release, where the DDR share
        changes, then the barrier (0)."""
        self.ddr_rate = config.ddr_bytes_per_s / config.clock_hz
        """DDR bytes per cycle, shared by every transfer in flight."""
        self.port_rate = config.lx_port_bytes_per_cycle
        """LX port bytes per cycle, shared by one core's users of the port."""
        self.cores = sorted(programs)
        cores = self.cores
        self.state = {c: [0] * len(programs[c]) for c in cores}  # 0 waiting, 1 running, 2 done
        self.resume = {c: [0] * len(programs[c]) for c in cores}  # where instruction i's conflict scan stopped
        self.frontier = {c: 0 for c in cores}  # oldest unfinished instruction
        self.engine_head: dict[tuple[int, str], deque[int]] = defaultdict(deque)
        """Per (core, engine), its instructions not yet issued, in program order."""
        for c in cores:
            for i, w in enumerate(programs[c]):
                if w.engine is not None:
                    self.engine_head[(c, w.engine)].append(i)
        self.in_flight: dict[tuple[int, str], list[_Running]] = defaultdict(list)
        """Per (core, engine), its instructions running."""
        self.queue_depth = {e: (config.dma_queue_depth if e in QUEUED_ENGINES else 1) for e in ENGINES}
        self.tokens: dict[int, deque[float]] = defaultdict(deque)
        """Per token, when each signal not yet consumed was made."""
        self.at_barrier: dict[int, int] = {}
        """Cores waiting at a barrier, and at which instruction."""
        self.running: list[_Running] = []
        self.spans: list[Span] = []
        self.busy: dict[str, float] = defaultdict(float)
        start = min(self.gates[0], 0.0) if self.gates else 0.0
        self.busy_until: dict[tuple[int, str], float] = defaultdict(lambda: start)
        """Per (core, engine), where its busy time counted so far ends (a queued engine's
        instructions overlap: an engine is busy while any of them runs)."""
        self.t = self.gates[0] if self.gates else 0.0
        self.dirty = set(cores)
        """Cores to scan for instructions they may issue."""
        self.moved = {c: 0 for c in cores}
        """Per core, its instructions that finished or passed their latency on a queued engine."""
        self.signalled: dict[int, int] = defaultdict(int)  # tokens ever signalled, per token
        self.waiters: dict[int, set[int]] = defaultdict(set)  # cores whose last scan stopped at a wait on the token
        self.scanned: dict[int, tuple[int, int | None, int]] = {}
        self.window = WINDOW
        self.longest = max((len(p) for p in programs.values()), default=0)

    def run(self) -> Timeline:
        programs, frontier = self.programs, self.frontier
        while True:
            self._issue()
            if not self.running and self.t < -_EPS:  # waiting for a core's release or the barrier
                self._advance(self._next_gate())
                continue
            if not self.running:
                if all(frontier[c] == len(programs[c]) for c in self.cores):
                    break
                if self.window < self.longest:  # blocked within the window: look through it all
                    self.window = self.longest
                    self.scanned.clear()
                    self.dirty.update(self.cores)
                    continue
                where = "; ".join(
                    f"core {c} at instruction #{programs[c][frontier[c]].index} ({programs[c][frontier[c]].name})"
                    for c in self.cores
                    if frontier[c] < len(programs[c])
                )
                raise DeadlockError(f"deadlock, every unfinished core is blocked: {where}")
            self._advance(self._next_event())
        first = min((s.start for s in self.spans), default=0.0)
        ends: dict[int, float] = {}
        for sp in self.spans:
            if sp.end > ends.get(sp.core, -math.inf):
                ends[sp.core] = sp.end
        return Timeline(self.t, self.spans, dict(self.busy), max(0.0, -first), ends)

    def _share(self) -> float:
        share = 1.0
        for at, s in self.shares:
            if at > self.t + _EPS:
                break
            share = s
        return share

    def _next_gate(self) -> float:
        return next(g for g in self.gates if g > self.t + _EPS)

    def _limit(self, c: int) -> int:
        """How far core c may issue now: everything from the barrier on; before it, its early
        instructions once released, else none."""
        if self.t >= -_EPS:
            return len(self.programs[c])
        count, release = self.early.get(c, (0, 0.0))
        return count if self.t >= release - _EPS else 0

    def _signal(self, token: int) -> None:
        self.tokens[token].append(self.t)
        self.signalled[token] += 1
        if token in self.waiters:
            self.dirty.update(self.waiters.pop(token))

    def _finish(self, c: int, i: int) -> None:
        self.state[c][i] = 2
        self.moved[c] += 1
        frontier, prog, st = self.frontier, self.programs[c], self.state[c]
        while frontier[c] < len(prog) and st[frontier[c]] == 2:
            frontier[c] += 1

    def _issue(self) -> None:
        """Scan the dirty cores, the lowest-numbered first, for what they may start now."""
        dirty, scanned, moved, signalled = self.dirty, self.scanned, self.moved, self.signalled
        while dirty:
            c = min(dirty)
            dirty.remove(c)
            last = scanned.get(c)
            if last is None or last[0] != moved[c] or (last[1] is not None and signalled[last[1]] != last[2]):
                self._try_issue(c)  # else it would find what the last scan found: nothing more to issue

    def _try_issue(self, c: int) -> None:
        frontier, moved = self.frontier, self.moved
        self.scanned[c] = (moved[c], None, 0)
        prog, st, resume = self.programs[c], self.state[c], self.resume[c]
        i = frontier[c]
        end = min(len(prog), frontier[c] + self.window, self._limit(c))
        while i < end:
            w = prog[i]
            if st[i]:
                i += 1
                continue
            if w.sync:
                kind = w.sync[0]
                earlier_done = frontier[c] == i
                if kind == "signal":
                    if earlier_done:
                        self._finish(c, i)
                        self._signal(w.sync[1])
                    i += 1
                    continue
                if kind == "wait":
                    token = w.sync[1]
                    queue = self.tokens[token]
                    if len(queue) < w.sync[2]:
                        self.scanned[c] = (moved[c], token, self.signalled[token])
                        self.waiters[token].add(c)
                        return
                    for _ in range(w.sync[2]):
                        queue.popleft()
                    self._finish(c, i)
                    i += 1
                    continue
                # barrier: this core's earlier work done, then every core of the launch (the
                # last to arrive finishes everyone's barrier, which rescans their cores)
                if not earlier_done:
                    return
                at_barrier = self.at_barrier
                at_barrier[c] = i
                if len(at_barrier) < len(self.cores):
                    return
                for other, j in list(at_barrier.items()):
                    self._finish(other, j)
                    self.dirty.add(other)
                at_barrier.clear()
                i += 1
                continue
            engine = w.engine
            assert engine is not None  # a Work without an engine is a sync
            head = self.engine_head[(c, engine)]
            if head and head[0] == i and self._engine_takes(c, engine):
                # earlier instructions checked once stay checked: a conflict is a property of
                # the pair, and finishing is final, so the scan resumes where it stopped
                j = max(resume[i], frontier[c])
                while j < i and (st[j] == 2 or not _conflict(w, prog[j])):
                    j += 1
                resume[i] = j
                if j == i:
                    head.popleft()
                    st[i] = 1
                    r = _Running(w, engine, c, i, self.t)
                    self.running.append(r)
                    self.in_flight[(c, engine)].append(r)
            i += 1

    def _engine_takes(self, c: int, engine: str) -> bool:
        """Whether the engine can start another instruction now: it is idle, or it queues and
        every instruction it has in flight is past its latency, with room for one more."""
        flight = self.in_flight[(c, engine)]
        if not flight:
            return True
        te = self.t + _EPS
        return len(flight) < self.queue_depth[engine] and all(r.lat_end <= te for r in flight)

    def _next_event(self) -> float:
        """Each transfer's rate from its shares of the resources in flight (those past their
        latency, and on a queued engine the oldest: an engine streams its transfers in order),
        and the time of the next event: a latency ending or a transfer finishing."""
        t, running = self.t, self.running
        port_rate, ddr_rate = self.port_rate, self.ddr_rate
        te = t + _EPS
        if t < -_EPS:  # before the barrier: the kernels running then have the rest of the DDR
            ddr_rate *= self._share()
        n_ddr = 0
        n_port: dict[int, int] = {}
        flight, queued = self.in_flight, self.queue_depth
        streaming = []
        next_event = math.inf
        for r in running:
            if r.lat_end <= te and (queued[r.engine] == 1 or flight[(r.core, r.engine)][0] is r):
                streaming.append(r)
                if r.ddr > 0:
                    n_ddr += 1
                if r.port > 0:
                    n_port[r.core] = n_port.get(r.core, 0) + 1
            else:
                r.rate = 0.0  # (in its latency, or behind its engine's older transfer)
                if te < r.lat_end < next_event:
                    next_event = r.lat_end
        for r in streaming:
            duration = r.compute
            if r.port > 0:
                d = r.port * n_port[r.core] / port_rate
                if d > duration:
                    duration = d
            if r.ddr > 0:
                if ddr_rate <= 0:  # (before the barrier, the kernel before takes all of it)
                    r.rate = 0.0
                    continue
                d = r.ddr * n_ddr / ddr_rate
                if d > duration:
                    duration = d
            if duration <= 0:
                r.rate = math.inf
                next_event = t if t < next_event else next_event
            else:
                r.rate = 1.0 / duration
                e = t + (1.0 - r.progress) / r.rate
                if e < next_event:
                    next_event = e
        if t < -_EPS:
            next_event = min(next_event, self._next_gate())
        return next_event

    def _advance(self, next_event: float) -> None:
        """Move the clock to `next_event`: progress for the transfers that ran, and the
        instructions that finished leave their engines."""
        dt = next_event - self.t
        crossed = self.gates and any(self.t + _EPS < g <= next_event + _EPS for g in self.gates)
        t = self.t = next_event
        if crossed:  # a release or the barrier: cores may issue what they could not
            self.scanned.clear()
            self.dirty.update(self.cores)
        was, te = t - dt + _EPS, t + _EPS
        done = []
        queued = self.queue_depth
        for r in self.running:
            if r.lat_end <= was and r.rate > 0:  # was transferring during the step
                r.progress = 1.0 if r.rate == math.inf else r.progress + r.rate * dt
            if r.lat_end <= te:
                if r.progress >= 1.0 - 1e-9:
                    done.append(r)
                elif not r.lat_seen and queued[r.engine] > 1:  # its engine may take the next one
                    r.lat_seen = True
                    self.moved[r.core] += 1
                    self.dirty.add(r.core)
        for r in done:
            self.running.remove(r)
            key = (r.core, r.engine)
            flight = self.in_flight[key]
            # busy since the earliest instruction in flight started (all of them run until now)
            self.busy[r.engine] += t - max(min(x.start for x in flight), self.busy_until[key])
            self.busy_until[key] = t
            flight.remove(r)
            self._finish(r.core, r.pos)
            if r.work.notify is not None:
                self._signal(r.work.notify)
            self.spans.append(Span(r.core, r.engine, r.work.name, r.work.index, r.start, t))
            self.dirty.add(r.core)
