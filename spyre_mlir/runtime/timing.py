"""Simulated time, as discrete events (semantics live in interpreter.py; this file never
touches data).

Each core has engines — `dma_in`, `dma_out`, `pt`, `sfp`, `ring` — that each run one
instruction at a time. A core issues its instructions in program order; an instruction
starts when

    its engine is free,
    no earlier, unfinished instruction of the core touches an overlapping LX range in a
        conflicting way (read-after-write, write-after-read, write-after-write), and
    its sync condition holds (`signal` and `barrier` also wait for the core's earlier work),

so DMA and compute overlap whenever the program lets them (double buffering). A running
instruction needs some of: engine cycles (`compute`), bytes through its core's LX port
(`port`), bytes of DDR bandwidth (`ddr`), after a fixed `latency`. Shared resources are
divided at every moment among the instructions using them (fluid sharing):

    DDR bandwidth   equally among all DMA transfers in flight on all cores
    LX port         equally among the instructions of one core that use it

and each instruction progresses at the pace of its scarcest resource:

    rate = 1 / max(compute, port / port_share, ddr / ddr_share)      (fraction per cycle)

The PT array reads its operands through its own path (the published PT peak needs one B
stick per corelet per cycle, more than a shared 128 B/cycle port could give); DMA, SFP and
ring traffic go through the port. Every constant comes from DeviceConfig.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from dataclasses import dataclass, field

from spyre_mlir.runtime.config import DeviceConfig

ENGINES = ("dma_in", "dma_out", "pt", "sfp", "ring")


@dataclass
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
    sync: tuple = ()  # ("signal", token) | ("wait", token, count) | ("barrier",)


@dataclass
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


# region Cost of one instruction (cycles of engine work)


def pt_passes(config: DeviceConfig, m: int, n: int, k: int) -> float:
    """PT engine cycles: one pass yields pt_rows x pt_lanes outputs for one k, per corelet."""
    return math.ceil(m / config.pt_rows) * math.ceil(n / config.pt_lanes) * k / config.corelets_used


def sfp_cycles(config: DeviceConfig, vectors: int, transcendental: bool) -> float:
    per_vector = config.sfp_transcendental_factor if transcendental else 1.0
    return vectors * per_vector / (config.sfp_vectors_per_cycle * config.corelets_used)


def ring_cycles(config: DeviceConfig, nbytes: int, hops: int) -> float:
    return hops * config.ring_hop_latency_cycles + nbytes / config.ring_bytes_per_cycle


# endregion


def _overlap(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    return any(lo1 < hi2 and lo2 < hi1 for lo1, hi1 in a for lo2, hi2 in b)


class _Running:
    __slots__ = ("work", "core", "start", "lat_end", "progress", "rate")

    def __init__(self, work: Work, core: int, start: float):
        self.work = work
        self.core = core
        self.start = start
        self.lat_end = start + work.latency
        self.progress = 0.0
        self.rate = 0.0


def simulate(programs: dict[int, list[Work]], config: DeviceConfig) -> Timeline:
    """Run the per-core instruction lists of one launch through the event model."""
    ddr_rate = config.ddr_bytes_per_s / config.clock_hz
    port_rate = config.lx_port_bytes_per_cycle
    cores = sorted(programs)
    pc = {c: 0 for c in cores}
    inflight: dict[int, list[_Running]] = {c: [] for c in cores}
    engine_busy: dict[tuple[int, str], bool] = defaultdict(bool)
    tokens: dict[int, deque[float]] = defaultdict(deque)
    at_barrier: set[int] = set()
    running: list[_Running] = []
    spans: list[Span] = []
    busy: dict[str, float] = defaultdict(float)
    t = 0.0
    dirty = set(cores)
    eps = 1e-9

    def try_issue(c: int) -> bool:
        issued = False
        prog = programs[c]
        while pc[c] < len(prog):
            w = prog[pc[c]]
            if w.sync:
                kind = w.sync[0]
                if kind == "signal":
                    if inflight[c]:
                        break
                    tokens[w.sync[1]].append(t)
                    dirty.update(cores)
                elif kind == "wait":
                    queue = tokens[w.sync[1]]
                    if len(queue) < w.sync[2]:
                        break
                    for _ in range(w.sync[2]):
                        queue.popleft()
                else:  # barrier: every core of the launch, each with its earlier work done
                    if inflight[c] or c in at_barrier:
                        break
                    at_barrier.add(c)
                    if at_barrier != set(cores):
                        break
                    at_barrier.clear()
                    for other in cores:
                        if other != c:
                            pc[other] += 1
                            dirty.add(other)
                pc[c] += 1
                issued = True
                continue
            if engine_busy[(c, w.engine)]:
                break
            if any(
                _overlap(w.reads, r.work.writes) or _overlap(w.writes, r.work.reads) or _overlap(w.writes, r.work.writes)
                for r in inflight[c]
            ):
                break
            rec = _Running(w, c, t)
            engine_busy[(c, w.engine)] = True
            inflight[c].append(rec)
            running.append(rec)
            pc[c] += 1
            issued = True
        return issued

    while True:
        while dirty:
            c = dirty.pop()
            try_issue(c)
        if not running:
            if all(pc[c] == len(programs[c]) for c in cores):
                break
            where = "; ".join(
                f"core {c} at instruction #{programs[c][pc[c]].index} ({programs[c][pc[c]].name})"
                for c in cores
                if pc[c] < len(programs[c])
            )
            raise DeadlockError(f"deadlock, every unfinished core is blocked: {where}")
        # shares of the resources among the transfers in flight
        moving = [r for r in running if r.lat_end <= t + eps]
        n_ddr = sum(1 for r in moving if r.work.ddr > 0)
        n_port: dict[int, int] = defaultdict(int)
        for r in moving:
            if r.work.port > 0:
                n_port[r.core] += 1
        next_event = math.inf
        for r in running:
            if r.lat_end > t + eps:
                next_event = min(next_event, r.lat_end)
                continue
            w = r.work
            duration = w.compute
            if w.port > 0:
                duration = max(duration, w.port * n_port[r.core] / port_rate)
            if w.ddr > 0:
                duration = max(duration, w.ddr * n_ddr / ddr_rate)
            r.rate = math.inf if duration <= 0 else 1.0 / duration
            remaining = 1.0 - r.progress
            next_event = min(next_event, t if r.rate == math.inf else t + remaining / r.rate)
        dt = next_event - t
        t = next_event
        done = []
        for r in running:
            if r.lat_end <= t - dt + eps and r.rate > 0:  # was transferring during the step
                r.progress = 1.0 if r.rate == math.inf else r.progress + r.rate * dt
            if r.lat_end <= t + eps and r.progress >= 1.0 - 1e-9:
                done.append(r)
        for r in done:
            running.remove(r)
            inflight[r.core].remove(r)
            engine_busy[(r.core, r.work.engine)] = False
            spans.append(Span(r.core, r.work.engine, r.work.name, r.work.index, r.start, t))
            busy[r.work.engine] += t - r.start
            dirty.add(r.core)
        dirty.update(c for c in cores if pc[c] < len(programs[c]) and programs[c][pc[c]].sync)
    return Timeline(t, spans, dict(busy))
