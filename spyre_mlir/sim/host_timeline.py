"""The host runtime's work on the simulated timeline: what a call costs end to end.

The device model times each kernel on the card (sim/timing.py); a call also needs the host
runtime to prepare each launch, as IBM's runtime does:

    graph construction   a node per kernel (`graph_kernel_s`) and one per tensor argument
                         (`graph_tensor_s`): what the launch computes and which bytes it moves;
                         a host <-> card transfer has one tensor node
    program correction   three ordered steps: the host substitutes the program's symbolic DDR
                         addresses with real ones (`patch_address_s` per DMA instruction per core
                         per tensor it addresses); the patched program crosses the host link
                         (`host_link_latency_s`, then `instruction_bytes` per instruction per
                         core at `host_link_bytes_per_s`); then the compute
    the compute          its start (`launch_overhead_s` when the host starts it,
                         `dispatch_overhead_s` when the card starts it after the kernel before)
                         and the card's time (the cores' cycles, sim/timing.py)
    data transfers       a call's inputs and results over the host link
    CPU ops              a graph's op left to the host between device kernels (`host_op_s`)

Which of that work is on the call's critical path is the runtime mode
(`DeviceConfig.runtime_mode`), not a constant:

    eager-patching    every launch at launch time, in order: its graph (kernel and tensor
                      nodes), its correction, its program over the link, then its compute,
                      which the host starts; the next launch's work begins when the compute
                      ends (one chain). A transfer waits for its tensor node.
    transfers-ahead   the same, with the tensor nodes built ahead (graph construction off the
                      data-transfer path): a launch pays its kernel node, its correction and
                      its program; a transfer only the link.
    patched-once      the graph is built ahead (off the compute path too), and a launch's
                      program is patched and sent only when an address it names differs from
                      its last call's (`Launch.patch`): resident weights, a resident KV cache
                      and a graph's fixed buffers keep them, so a steady call patches nothing.
                      Kernels run as launch sequences (the host starts the first, the card the
                      others), and the host corrects a program while the card runs the kernels
                      before it; a kernel waits only for a program that is late.

A call's steps are recorded once (what was launched and moved, and whether addresses
changed) and any mode's timeline is computed from them (`schedule`): the card's time does
not depend on the mode. The card runs its kernels and the link its data transfers in the
call's order (one device chain); in patched-once the host's corrections run on a lane of their
own, ahead of the card where they can.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from spyre_mlir.target.config import RUNTIME_MODES, DeviceConfig

GRAPH, CORRECTION, CPU, PROGRAMS, DATA = (
    "host: graph construction",
    "host: program correction",
    "host: CPU ops",
    "link: programs",
    "link: data",
)
LANES = (GRAPH, CORRECTION, CPU, PROGRAMS, DATA)
"""The host runtime's lanes in the trace, beside the card's kernels and cores."""


@dataclass(frozen=True, slots=True)
class Launch:
    """A kernel launch of a call, as the host runtime sees it."""

    name: str
    compute_s: float
    """The card's time for it from its barrier (its cores' cycles; a copy's bytes)."""
    overhead_s: float
    """Its start as the device model charged it in the launch sequence: `launch_overhead_s`
    (the host starts it) or `dispatch_overhead_s` (the card starts it after the kernel before)."""
    arguments: int
    """Its tensor arguments: nodes of its graph."""
    addresses: int
    """Symbolic DDR addresses its program names: one per DMA instruction per core per tensor."""
    instructions: int
    """Its program's instructions, summed over the cores."""
    host_started: bool = True
    """Whether the host starts it (the first kernel of a launch sequence) or the card (a later one)."""
    patch: bool = True
    """Whether an address it names changed since its last launch at the same place in the
    graph (or it never ran): a patched-once runtime corrects and sends its program again."""


@dataclass(frozen=True, slots=True)
class Transfer:
    """A host <-> card data transfer of a call."""

    nbytes: int
    kind: str
    to_device: bool
    """Host to card (an upload: it may leave as soon as the host has the value) or card to
    host (the host waits for it)."""


@dataclass(frozen=True, slots=True)
class HostOp:
    """A CPU op of the call between device kernels."""

    seconds: float


Step = Launch | Transfer | HostOp


@dataclass(frozen=True, slots=True)
class HostSpan:
    """Work on one of the host runtime's lanes (`LANES`), seconds from the call's start."""

    lane: str
    name: str
    start: float
    seconds: float


@dataclass
class CallTimeline:
    """One call in one runtime mode: its end-to-end time, what is on its critical path, and
    when each piece ran."""

    mode: str
    total_s: float = 0.0
    """End to end: from the call's first step to its last result on the host."""
    kernels_s: float = 0.0
    """The card's time in its kernels (from their barriers)."""
    dispatch_s: float = 0.0
    """Starting the kernels: the host's launches and the card's dispatches."""
    runtime_s: float = 0.0
    """The host runtime's work on the critical path: graph construction, program correction
    and the patched programs' transfers, where the card waits for them."""
    link_s: float = 0.0
    """Data transfers over the host link."""
    host_ops_s: float = 0.0
    """CPU ops on the critical path (host round trips)."""
    work_s: dict[str, float] = field(default_factory=dict)
    """The host runtime's work by lane, on the critical path or not."""
    spans: list[HostSpan] = field(default_factory=list)
    launches: list[tuple[float, float]] = field(default_factory=list)
    """Per launch, in order: when it started on the card (its dispatch first) and for how long
    (dispatch and compute)."""

    @property
    def runtime_share(self) -> float:
        """The host runtime's share of the call's time."""
        return self.runtime_s / self.total_s if self.total_s else 0.0

    def _put(self, lane: str, name: str, start: float, seconds: float) -> float:
        if seconds > 0:
            self.spans.append(HostSpan(lane, name, start, seconds))
            self.work_s[lane] = self.work_s.get(lane, 0.0) + seconds
        return start + seconds


def link_seconds(nbytes: int, config: DeviceConfig) -> float:
    """One transfer over the host link: its latency, then its bytes (target/cycles.py's
    host_transfer_seconds, for a program as for data)."""
    return config.host_link_latency_s + nbytes / config.host_link_bytes_per_s


def schedule(steps: Sequence[Step], config: DeviceConfig, mode: str | None = None) -> CallTimeline:
    """A call's timeline in `mode` (default: the config's runtime_mode): module docstring."""
    mode = mode or config.runtime_mode
    if mode not in RUNTIME_MODES:
        raise ValueError(f"runtime mode must be one of {', '.join(RUNTIME_MODES)}, got {mode!r}")
    if mode == "patched-once":
        return _patched_once(steps, config)
    return _at_launch(steps, config, tensors_at_launch=mode == "eager-patching")


def _at_launch(steps: Sequence[Step], config: DeviceConfig, tensors_at_launch: bool) -> CallTimeline:
    """eager-patching and transfers-ahead: one chain, every piece after the one before."""
    tl = CallTimeline("eager-patching" if tensors_at_launch else "transfers-ahead")
    t = 0.0
    for s in steps:
        if isinstance(s, Launch):
            nodes = config.graph_kernel_s + (s.arguments * config.graph_tensor_s if tensors_at_launch else 0.0)
            start = t
            t = tl._put(GRAPH, s.name, t, nodes)
            t = tl._put(CORRECTION, s.name, t, s.addresses * config.patch_address_s)
            t = tl._put(PROGRAMS, s.name, t, link_seconds(s.instructions * config.instruction_bytes, config))
            tl.runtime_s += t - start
            tl.launches.append((t, config.launch_overhead_s + s.compute_s))
            tl.dispatch_s += config.launch_overhead_s
            tl.kernels_s += s.compute_s
            t += config.launch_overhead_s + s.compute_s
        elif isinstance(s, Transfer):
            if tensors_at_launch:
                start = t
                t = tl._put(GRAPH, s.kind, t, config.graph_tensor_s)
                tl.runtime_s += t - start
            seconds = link_seconds(s.nbytes, config)
            t = tl._put(DATA, s.kind, t, seconds)
            tl.link_s += seconds
        else:
            t = tl._put(CPU, "cpu op", t, s.seconds)
            tl.host_ops_s += s.seconds
    tl.total_s = t
    return tl


def _patched_once(steps: Sequence[Step], config: DeviceConfig) -> CallTimeline:
    """patched-once: the card and its data transfers in order (`card`); the host (`host`)
    corrects the programs whose addresses changed as early as it can, starts each launch
    sequence, runs CPU ops and waits for what it reads. The host runtime's share of the path is
    what the call would be faster without its corrections (the same steps, none patched)."""
    tl = _once(steps, config, CallTimeline("patched-once"))
    if any(isinstance(s, Launch) and s.patch for s in steps):
        tl.runtime_s = tl.total_s - _once(steps, config, None).total_s
    tl.host_ops_s = max(0.0, tl.total_s - tl.kernels_s - tl.dispatch_s - tl.link_s - tl.runtime_s)
    return tl


def _once(steps: Sequence[Step], config: DeviceConfig, tl: CallTimeline | None) -> CallTimeline:
    """The patched-once schedule; `tl` None: the same call with no program corrected."""
    out = tl or CallTimeline("patched-once")
    card = host = 0.0
    for s in steps:
        if isinstance(s, Launch):
            ready = 0.0
            if s.patch and tl is not None:
                host = out._put(CORRECTION, s.name, host, s.addresses * config.patch_address_s)
                host = ready = out._put(
                    PROGRAMS, s.name, host, link_seconds(s.instructions * config.instruction_bytes, config)
                )
            # the host starts a sequence's first kernel (its launch overhead), the card the others
            start = max(card, host if s.host_started else 0.0, ready)
            out.launches.append((start, s.overhead_s + s.compute_s))
            out.dispatch_s += s.overhead_s
            out.kernels_s += s.compute_s
            card = start + s.overhead_s + s.compute_s
        elif isinstance(s, Transfer):
            seconds = link_seconds(s.nbytes, config)
            start = max(card, host) if s.to_device else card
            card = out._put(DATA, s.kind, start, seconds)
            out.link_s += seconds
            if not s.to_device:  # the host reads it
                host = max(host, card)
        else:
            host = out._put(CPU, "cpu op", host, s.seconds)  # (after the transfer it waited for)
    out.total_s = max(card, host)
    return out
