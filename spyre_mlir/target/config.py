"""The Spyre device as data: every hardware parameter the compiler and the device model use.

Nothing else in the project hard-codes a hardware number; each field names its source
(see docs/hardware.md for the sources, where they disagree, and what is assumed).
Run with another device: `DeviceConfig(cores=8, ddr_bytes_per_s=128e9)` or, from the tools,
`--config key=value`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from spyre_mlir.target.constants import MAX_LOOP_COUNT, STICK_BYTES

RUNTIME_MODES = ("eager-patching", "transfers-ahead", "patched-once")
"""The host runtime's modes, from the most work at launch to the least (DeviceConfig.runtime_mode)."""


@dataclass(frozen=True)
class DeviceConfig:
    cores: int = 32
    """Cores on one card, on a bidirectional ring (IBM Spyre announcement; torch-spyre docs)."""

    corelets_per_core: int = 2
    """Corelets per core (torch-spyre docs)."""

    corelets_used: int = 1
    """Corelets the compiler drives per core (torch-spyre uses one by default)."""

    lx_bytes: int = 2 * 1024 * 1024
    """LX scratchpad per core: 2 MiB (torch-spyre scratchpad planning)."""

    lx_planner_fraction: float = 0.8
    """Share of LX the planner may fill; the back end reserves the rest (torch-spyre)."""

    stick_bytes: int = STICK_BYTES
    """The DMA/LX unit: 128 bytes = 64 f16 / 32 f32 / 128 i8 (torch-spyre RFC 0047)."""

    clock_hz: float = 1.5e9
    """Core clock, derived: 1.536 TMAC/s per core / (2 corelets x 8 x 64 MAC per cycle)."""

    pt_rows: int = 8
    """PT array rows per corelet: output rows produced per pass (torch-spyre docs, cost model)."""

    pt_lanes: int = 64
    """PT array lanes per corelet: output columns per pass, one stick (torch-spyre cost model)."""

    sfp_vectors_per_cycle: float = 1.0
    """SFP throughput per corelet: one 64-lane vector per cycle (ktir-cpu latency model)."""

    sfp_transcendental_factor: float = 1.0
    """Cycles per vector on exp/erf/tanh relative to simple ops. ktir-cpu's placeholder; no
    public measurement (assumption, see docs/hardware.md)."""

    ddr_bytes_per_s: float = 204.8e9
    """LPDDR5 bandwidth, shared by all cores (torch-spyre cost model)."""

    ddr_capacity_bytes: int = 128 * 1024**3
    """LPDDR5 capacity per card (IBM Spyre docs)."""

    ddr_usable_bytes: int = 112 * 1024**3
    """DDR the runtime may allocate (IBM Spyre docs: 112 GB usable)."""

    ddr_latency_cycles: int = 150
    """Fixed cost of one DMA instruction: ~100 ns LPDDR5 access latency (assumption)."""

    dma_queue_depth: int = 2
    """DMA instructions one DMA engine keeps in flight: it issues the next one's request once
    the current one is past its latency, so consecutive transfers pay the latency once
    (assumption: the outstanding-request queue every DMA engine has; 1 = each instruction
    waits out its latency alone)."""

    ring_bytes_per_cycle: int = 128
    """Data ring: bytes per cycle per direction per hop (torch-spyre docs)."""

    ring_hop_latency_cycles: int = 4
    """Cycles a transfer spends per ring hop before its bytes stream (assumption: a few
    pipeline stages per router; no public figure)."""

    lx_port_bytes_per_cycle: int = 128
    """LX port per core, shared by DMA, PT and SFP (third-party measurement notes)."""

    per_core_span_bytes: int = 256 * 1024**2
    """Largest contiguous DDR span one core may address in one tensor (torch-spyre work division)."""

    host_link_bytes_per_s: float = 63.0e9
    """Host <-> card bytes per second, each direction: the card's PCIe Gen5 x16 interface
    (torch-spyre docs), 32 GT/s x 16 lanes x 128/130 / 8 bits = 63.0 GB/s. The link's rate:
    what a transfer attains over it is lower (no published measurement), so transfer times
    are lower bounds."""

    host_link_latency_s: float = 1.0e-6
    """One host <-> card transfer's fixed cost before its bytes stream: a DMA descriptor
    written over PCIe and its completion seen by the host (assumption: a PCIe round trip takes
    about a microsecond; no Spyre figure)."""

    host_op_s: float = 2.0e-6
    """A CPU op's own time when a compiled graph runs one between device kernels: one small
    PyTorch eager op (assumption: 1-4 us for the corpus's tensors on the reference machine,
    `x + 1` on a 23 x 64 tensor 4.0 us, a cat 1.9 us; larger tensors take longer, so the
    figure favours the host)."""

    card_link_bytes_per_s: float = 63.0e9
    """Card <-> card bytes per second, each direction, for collectives between cards (one
    process per card): peer to peer over the cards' PCIe Gen5 x16 interfaces, at the host
    link's rate (assumption: IBM publishes no card-to-card figure, and spyreccl, its collective
    library, is closed). Collectives are priced as ring algorithms (distributed/link.py)."""

    card_link_latency_s: float = 2.0e-6
    """One hop of a collective between two cards: a PCIe peer-to-peer write and its completion
    (assumption: a few microseconds; no public figure)."""

    launch_overhead_s: float = 1.0e-6
    """Host-side cost of starting a launch sequence: the kernels a compiled graph runs between
    two points where the host waits for the card (assumption; no public figure)."""

    dispatch_overhead_s: float = 0.2e-6
    """The card's cost of starting the next kernel of a launch sequence: a barrier of the cores
    round the ring (2 x 16 hops x 4 cycles) and the next program's fetch (one DDR latency),
    about 0.19 us (assumption; no public figure)."""

    runtime_mode: str = "patched-once"
    """What of the host runtime's work is on a call's critical path (sim/host_timeline.py):
    "eager-patching" (each launch's graph built, its program patched and sent over the host
    link, then its compute, every launch in order), "transfers-ahead" (the graph's tensor nodes
    built ahead: graph construction off the data-transfer path) or "patched-once" (graph
    construction off the compute path too; a launch's program is patched and sent only when an
    address it names changed since its last call, which resident weights, a resident KV cache
    and a graph's fixed buffers make rare). Not hardware: the default, "patched-once", charges a
    steady call its launch and dispatch overheads alone, as the timing model did before the
    host runtime was modelled."""

    graph_kernel_s: float = 113e-6
    """Host time to add one kernel launch (its compute node) to the runtime's graph (fitted by
    bench/runtime.py to IBM's Granite 3.3 8B runtime figures; no public per-node figure)."""

    graph_tensor_s: float = 11.5e-6
    """Host time to add one tensor argument (the node that moves or addresses its bytes) to
    the runtime's graph, for a launch's arguments and for each host <-> card transfer (fitted
    by bench/runtime.py to IBM's Granite 3.3 8B runtime figures)."""

    patch_address_s: float = 45.5e-9
    """Host time to substitute one symbolic DDR address in a program at launch (program
    correction's host step): per DMA instruction per core per tensor it addresses (fitted by
    bench/runtime.py to IBM's Granite 3.3 8B runtime figures)."""

    instruction_bytes: int = 32
    """Bytes of one instruction of one core's program, what a patched program sends over the
    host link per instruction (assumption: a 256-bit instruction word, room for a DMA's two
    addresses and a loop nest of sizes and strides; no public encoding)."""

    early_loads: int = 4
    """Within a launch sequence, a core starts a kernel's leading loads of read-only device
    tensors (weights, constants) once it has finished its own part of the kernels before,
    up to this many kernels ahead of the barrier, during their tails and the dispatches; only
    into LX the kernel's own plan gives them, so nothing a core still uses is overwritten
    (assumption: each core queues the programs it has work in, as a dataflow card's cores run
    their own streams; IBM publishes no dispatch details). The kernels running meanwhile keep
    the DDR bandwidth they use. 0: every instruction waits for the barrier
    (sim/timing.py, `Early`)."""

    numerics: str = "dl16"
    """Device 16-bit format: "dl16" (IBM DLFloat16, the hardware's) or "ieee-fp16"."""

    accumulation: str = "fp32"
    """How the device model sums a PT pass's products: "fp32" (the hardware keeps its partial
    sums in fp32; each core's tile is one fp32 matrix product, docs/numerics.md) or "f64" (a
    reference mode: the sums in float64, rounded once to fp32)."""

    decoded_copy_bytes: int = 2 * 1024**3
    """Host bytes the device model may spend on fp32 copies of immutable device tensors
    (parameters, constants), which its products read in place of decoding the tensor's DL16
    bits (the same values; sim/memory.py, `DeviceMemory.decoded`); 0: none. Not hardware."""

    sanitize: bool = True
    """Check every launch for what the hardware forbids (sim/sanitizer.py); not hardware."""

    # ------------------------------------------------------------------ derived
    @property
    def lx_sticks(self) -> int:
        return self.lx_bytes // self.stick_bytes

    @property
    def planner_lx_bytes(self) -> int:
        """LX bytes the scratchpad planner may use on each core (stick-aligned)."""
        return int(self.lx_bytes * self.lx_planner_fraction) // self.stick_bytes * self.stick_bytes

    @property
    def pt_macs_per_cycle(self) -> int:
        """MACs per cycle per core with the corelets the compiler drives."""
        return self.pt_rows * self.pt_lanes * self.corelets_used

    @property
    def pt_peak_macs_per_s(self) -> float:
        """Per-core PT peak with every corelet: 1.536e12 MAC/s by default."""
        return self.pt_rows * self.pt_lanes * self.corelets_per_core * self.clock_hz

    def replace(self, **changes) -> DeviceConfig:
        return dataclasses.replace(self, **changes)

    def validate(self) -> None:
        for f in dataclasses.fields(self):
            value, kind = getattr(self, f.name), type(f.default)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not (
                (isinstance(value, kind) and (kind is bool or not isinstance(value, bool)))
                or (kind is float and number)
            ):
                raise ValueError(f"{f.name} must be {'a number' if kind is float else kind.__name__}, got {value!r}")
        if self.numerics not in ("dl16", "ieee-fp16"):
            raise ValueError(f"numerics must be 'dl16' or 'ieee-fp16', got {self.numerics!r}")
        if self.accumulation not in ("fp32", "f64"):
            raise ValueError(f"accumulation must be 'fp32' or 'f64', got {self.accumulation!r}")
        if self.card_link_bytes_per_s <= 0 or self.card_link_latency_s < 0:
            raise ValueError(
                f"the card link needs a positive bandwidth and a latency >= 0, got "
                f"{self.card_link_bytes_per_s}, {self.card_link_latency_s}"
            )
        if self.decoded_copy_bytes < 0:
            raise ValueError(f"decoded_copy_bytes must be >= 0, got {self.decoded_copy_bytes}")
        if self.host_link_bytes_per_s <= 0 or self.host_link_latency_s < 0 or self.host_op_s < 0:
            raise ValueError(
                f"the host link needs a positive bandwidth, and its latency and a host op's time must be >= 0, got "
                f"{self.host_link_bytes_per_s}, {self.host_link_latency_s}, {self.host_op_s}"
            )
        if self.launch_overhead_s < 0 or self.dispatch_overhead_s < 0:
            raise ValueError(
                f"launch and dispatch overheads must be >= 0, got {self.launch_overhead_s}, {self.dispatch_overhead_s}"
            )
        if self.runtime_mode not in RUNTIME_MODES:
            raise ValueError(f"runtime_mode must be one of {', '.join(RUNTIME_MODES)}, got {self.runtime_mode!r}")
        if min(self.graph_kernel_s, self.graph_tensor_s, self.patch_address_s) < 0 or self.instruction_bytes < 0:
            raise ValueError(
                f"the host runtime's costs must be >= 0, got graph_kernel_s={self.graph_kernel_s}, "
                f"graph_tensor_s={self.graph_tensor_s}, patch_address_s={self.patch_address_s}, "
                f"instruction_bytes={self.instruction_bytes}"
            )
        if isinstance(self.early_loads, bool) or not isinstance(self.early_loads, int) or self.early_loads < 0:
            raise ValueError(f"early_loads must be an int >= 0 (kernels ahead; 0: none), got {self.early_loads!r}")
        if self.dma_queue_depth < 1:
            raise ValueError(f"dma_queue_depth must be >= 1, got {self.dma_queue_depth}")
        if not 1 <= self.corelets_used <= self.corelets_per_core:
            raise ValueError(
                f"corelets_used must be 1 .. corelets_per_core ({self.corelets_per_core}), got {self.corelets_used}"
            )
        if self.cores < 1 or self.lx_bytes < self.stick_bytes:
            raise ValueError(f"a device needs >= 1 core and >= 1 stick of LX, got {self.cores}, {self.lx_bytes}")
        if self.lx_sticks > MAX_LOOP_COUNT + 1:
            raise ValueError(
                f"lx_bytes = {self.lx_bytes}: {self.lx_sticks} sticks of LX, more than the instruction format's "
                f"16-bit loop counts can walk ({MAX_LOOP_COUNT + 1} sticks = {(MAX_LOOP_COUNT + 1) * self.stick_bytes} bytes)"
            )

    @staticmethod
    def from_overrides(pairs: list[str] | None, base: DeviceConfig | None = None) -> DeviceConfig:
        """`base` (the default device when None) with the fields of `key=value` strings (the
        tools' `--config`)."""
        cfg = base or DeviceConfig()
        fields = {f.name: f for f in dataclasses.fields(DeviceConfig)}
        changes: dict[str, object] = {}
        for pair in pairs or []:
            key, sep, value = pair.partition("=")
            if not sep or key not in fields:
                raise ValueError(f"unknown device parameter {key!r}; known: {', '.join(fields)}")
            kind = type(getattr(cfg, key))
            if kind is bool:
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(f"device parameter {key}: true or false, got {value!r}")
                changes[key] = value.lower() in ("true", "1")
            else:
                changes[key] = value if kind is str else kind(float(value)) if kind is int else kind(value)
        cfg = cfg.replace(**changes)
        cfg.validate()
        return cfg


DEFAULT_CONFIG = DeviceConfig()
