"""Simulated time, as discrete events (semantics live in interpreter.py; this file never
touches data).

Each core has engines — `dma_in`, `dma_out`, `pt`, `sfp`, `ring` — that each run their own
instructions one at a time, in program order. An instruction starts when

    its engine is free and every earlier instruction of that engine has started,
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
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from spyre_mlir.target.config import DeviceConfig

ENGINES = ("dma_in", "dma_out", "pt", "sfp", "ring")


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


class DeadlockError(RuntimeError):
    pass


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
    __slots__ = ("work", "core", "pos", "start", "lat_end", "progress", "rate", "compute", "port", "ddr")

    def __init__(self, work: Work, core: int, pos: int, start: float):
        self.work = work
        self.core = core
        self.pos = pos
        self.start = start
        self.lat_end = start + work.latency
        self.progress = 0.0
        self.rate = 0.0
        self.compute, self.port, self.ddr = work.compute, work.port, work.ddr  # read at every event


WINDOW = 64
"""How far past its oldest unfinished instruction a core looks for work it may start."""


def simulate(programs: dict[int, list[Work]], config: DeviceConfig) -> Timeline:
    """Run the per-core instruction lists of one launch through the event model."""
    ddr_rate = config.ddr_bytes_per_s / config.clock_hz
    port_rate = config.lx_port_bytes_per_cycle
    cores = sorted(programs)
    state = {c: [0] * len(programs[c]) for c in cores}  # 0 waiting, 1 running, 2 done
    resume = {c: [0] * len(programs[c]) for c in cores}  # where instruction i's conflict scan stopped
    frontier = {c: 0 for c in cores}  # oldest unfinished instruction
    engine_head: dict[tuple[int, str], deque[int]] = defaultdict(deque)
    for c in cores:
        for i, w in enumerate(programs[c]):
            if w.engine is not None:
                engine_head[(c, w.engine)].append(i)
    engine_busy: dict[tuple[int, str], bool] = defaultdict(bool)
    tokens: dict[int, deque[float]] = defaultdict(deque)
    at_barrier: dict[int, int] = {}
    running: list[_Running] = []
    spans: list[Span] = []
    busy: dict[str, float] = defaultdict(float)
    t = 0.0
    dirty = set(cores)
    eps = 1e-9
    # A scan of core c can issue something new only after one of its own instructions
    # finished, or, when it stopped at a `wait` on token T without enough tokens, after T was
    # signalled (other cores' finishing, issuing or barrier arrivals change nothing else it
    # looks at: engines, hazards and the barrier's release are its own core's state). A scan
    # records (finished[c], T, signals of T so far); a core is scanned again only when that
    # changed: after its own instruction finished, or by T's signal (`waiters`).
    finished = {c: 0 for c in cores}
    signalled: dict[int, int] = defaultdict(int)  # tokens ever signalled, per token
    waiters: dict[int, set[int]] = defaultdict(set)  # cores whose last scan stopped at a wait on the token
    scanned: dict[int, tuple[int, int | None, int]] = {}

    def signal(token: int) -> None:
        tokens[token].append(t)
        signalled[token] += 1
        if token in waiters:
            dirty.update(waiters.pop(token))

    def finish(c: int, i: int) -> None:
        state[c][i] = 2
        finished[c] += 1
        while frontier[c] < len(programs[c]) and state[c][frontier[c]] == 2:
            frontier[c] += 1

    def try_issue(c: int) -> None:
        scanned[c] = (finished[c], None, 0)
        prog, st = programs[c], state[c]
        i = frontier[c]
        end = min(len(prog), frontier[c] + WINDOW)
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
                        finish(c, i)
                        signal(w.sync[1])
                    i += 1
                    continue
                if kind == "wait":
                    token = w.sync[1]
                    queue = tokens[token]
                    if len(queue) < w.sync[2]:
                        scanned[c] = (finished[c], token, signalled[token])
                        waiters[token].add(c)
                        return
                    for _ in range(w.sync[2]):
                        queue.popleft()
                    finish(c, i)
                    i += 1
                    continue
                # barrier: this core's earlier work done, then every core of the launch (the
                # last to arrive finishes everyone's barrier, which rescans their cores)
                if not earlier_done:
                    return
                at_barrier[c] = i
                if len(at_barrier) < len(cores):
                    return
                for other, j in list(at_barrier.items()):
                    finish(other, j)
                    dirty.add(other)
                at_barrier.clear()
                i += 1
                continue
            head = engine_head[(c, w.engine)]
            if not engine_busy[(c, w.engine)] and head and head[0] == i:
                # earlier instructions checked once stay checked: a conflict is a property of
                # the pair, and finishing is final, so the scan resumes where it stopped
                j = max(resume[c][i], frontier[c])
                while j < i and (st[j] == 2 or not _conflict(w, prog[j])):
                    j += 1
                resume[c][i] = j
                if j == i:
                    head.popleft()
                    engine_busy[(c, w.engine)] = True
                    st[i] = 1
                    running.append(_Running(w, c, i, t))
            i += 1

    while True:
        while dirty:
            c = min(dirty)  # the lowest-numbered core first
            dirty.remove(c)
            last = scanned.get(c)
            if last is None or last[0] != finished[c] or (last[1] is not None and signalled[last[1]] != last[2]):
                try_issue(c)  # else it would find what the last scan found: nothing more to issue
        if not running:
            if all(frontier[c] == len(programs[c]) for c in cores):
                break
            where = "; ".join(
                f"core {c} at instruction #{programs[c][frontier[c]].index} ({programs[c][frontier[c]].name})"
                for c in cores
                if frontier[c] < len(programs[c])
            )
            raise DeadlockError(f"deadlock, every unfinished core is blocked: {where}")
        # shares of the resources among the transfers in flight (those past their latency)
        te = t + eps
        n_ddr = 0
        n_port: dict[int, int] = {}
        for r in running:
            if r.lat_end <= te:
                if r.ddr > 0:
                    n_ddr += 1
                if r.port > 0:
                    n_port[r.core] = n_port.get(r.core, 0) + 1
        next_event = math.inf
        for r in running:
            if r.lat_end > te:
                if r.lat_end < next_event:
                    next_event = r.lat_end
                continue
            duration = r.compute
            if r.port > 0:
                d = r.port * n_port[r.core] / port_rate
                if d > duration:
                    duration = d
            if r.ddr > 0:
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
        dt = next_event - t
        t = next_event
        was, te = t - dt + eps, t + eps
        done = []
        for r in running:
            if r.lat_end <= was and r.rate > 0:  # was transferring during the step
                r.progress = 1.0 if r.rate == math.inf else r.progress + r.rate * dt
            if r.lat_end <= te and r.progress >= 1.0 - 1e-9:
                done.append(r)
        for r in done:
            running.remove(r)
            engine_busy[(r.core, r.work.engine)] = False
            finish(r.core, r.pos)
            if r.work.notify is not None:
                signal(r.work.notify)
            spans.append(Span(r.core, r.work.engine, r.work.name, r.work.index, r.start, t))
            busy[r.work.engine] += t - r.start
            dirty.add(r.core)
    return Timeline(t, spans, dict(busy))
