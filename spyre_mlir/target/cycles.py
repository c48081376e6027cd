"""Cycles of engine work for one instruction: the formulas the cost model (analysis/cost.py)
and the timing model (sim/timing.py) share, so an estimate and a simulation count the same
work the same way, and the host link's charge per transfer.
"""

from __future__ import annotations

import math

from spyre_mlir.target.config import DeviceConfig


def pt_passes(config: DeviceConfig, m: int, n: int, k: int) -> float:
    """PT engine cycles: one pass yields pt_rows x pt_lanes outputs for one k, per corelet."""
    return math.ceil(m / config.pt_rows) * math.ceil(n / config.pt_lanes) * k / config.corelets_used


def dma_engine_cycles(config: DeviceConfig, instructions: int, stream: float) -> float:
    """A DMA engine's cycles for `instructions` transfers that stream `stream` cycles in all.
    Each pays `ddr_latency_cycles` before its bytes move; with a queue (`dma_queue_depth` >= 2)
    an instruction's latency runs while the one before it streams, one latency at a time, so
    the latencies beyond the first hide behind the bytes; without one, they add up."""
    lat = config.ddr_latency_cycles
    if instructions == 0:
        return stream
    if config.dma_queue_depth > 1:
        return max(instructions * lat, lat + stream)
    return instructions * lat + stream


def sfp_cycles(config: DeviceConfig, vectors: int, transcendental: bool) -> float:
    per_vector = config.sfp_transcendental_factor if transcendental else 1.0
    return vectors * per_vector / (config.sfp_vectors_per_cycle * config.corelets_used)


def ring_cycles(config: DeviceConfig, nbytes: int, hops: int) -> float:
    return hops * config.ring_hop_latency_cycles + nbytes / config.ring_bytes_per_cycle


def host_transfer_seconds(nbytes: int, config: DeviceConfig) -> float:
    """One `to_device` or `from_device` of `nbytes` device bytes: the link's fixed cost, then
    the bytes at its rate (as the profile charges it, `Profile.add_transfer`)."""
    return config.host_link_latency_s + nbytes / config.host_link_bytes_per_s
