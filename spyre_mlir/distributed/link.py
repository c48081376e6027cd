"""What a collective between cards costs in simulated time: ring algorithms over the card link.

With N cards on a ring, each link `card_link_bytes_per_s` each way and `card_link_latency_s`
per hop, and B the bytes a collective is about (16-bit device values for floating point):

    all_reduce                 2 (N-1)/N * B / bw + 2 (N-1) * lat    (reduce-scatter, then all-gather)
    all_gather, reduce_scatter   (N-1)/N * B / bw +   (N-1) * lat    (B: the whole gathered buffer)
    all_to_all, gather, scatter  (N-1)/N * B / bw +   (N-1) * lat
    broadcast, reduce                       B / bw +   (N-1) * lat    (pipelined along the ring)
    send, recv                              B / bw +           lat
    barrier                                           2 (N-1) * lat    (an all-reduce of nothing)

These are the bandwidth-optimal ring schedules (Patarasuk and Yuan, 2009); the card's own
library (spyreccl) publishes no algorithm, so the ring is an assumption (docs/hardware.md).
"""

from __future__ import annotations

from spyre_mlir.sim.profile import KernelRecord
from spyre_mlir.target.config import DeviceConfig

KINDS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "gather",
    "scatter",
    "broadcast",
    "reduce",
    "send",
    "recv",
    "barrier",
)


def collective_seconds(kind: str, nbytes: int, world: int, config: DeviceConfig) -> float:
    """Simulated seconds of one collective of `kind` over `world` cards about `nbytes` bytes."""
    if kind not in KINDS:
        raise ValueError(f"no link model for the collective {kind!r}; known: {', '.join(KINDS)}")
    if world <= 1:
        return 0.0
    n, bw, lat = world, config.card_link_bytes_per_s, config.card_link_latency_s
    if kind == "all_reduce":
        return 2 * (n - 1) / n * nbytes / bw + 2 * (n - 1) * lat
    if kind in ("all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"):
        return (n - 1) / n * nbytes / bw + (n - 1) * lat
    if kind in ("broadcast", "reduce"):
        return nbytes / bw + (n - 1) * lat
    if kind in ("send", "recv"):
        return nbytes / bw + lat
    return 2 * (n - 1) * lat  # barrier


def collective_record(kind: str, nbytes: int, world: int, config: DeviceConfig) -> KernelRecord:
    """A profile's record of one collective (`collective:<kind>`, what the step clocks count as
    the card link's): its time by `collective_seconds`, its bytes read and written."""
    seconds = collective_seconds(kind, nbytes, world, config)
    return KernelRecord.timed(f"collective:{kind}", seconds, nbytes, nbytes, config, cores=0)
