"""Cost of each instruction, from DeviceConfig only (semantics live in interpreter.py).

First model (per instruction, per core; cores of a program run concurrently):

    DMA   latency + bytes / min(LX port, DDR bandwidth / cores moving data)
    PT    max(ceil(m/8) * ceil(n/64) * k passes,  LX sticks read+written)   per corelet
    SFP   max(vectors * (4 if transcendental else 1),  LX sticks read+written)
    sync  0 (waiting is accounted by the scheduler: a core resumes when released)

DDR traffic counts whole 128-byte sticks. Engines do not yet overlap within a core; the
discrete-event engine model is the next step (docs/hardware.md).
"""

from __future__ import annotations

import math

from spyre_mlir.runtime.config import DeviceConfig


def dma_cycles(config: DeviceConfig, sticks: int, cores_moving: int) -> float:
    nbytes = sticks * config.stick_bytes
    ddr_share = config.ddr_bytes_per_s / config.clock_hz / max(1, cores_moving)
    rate = min(config.lx_port_bytes_per_cycle, ddr_share)
    return config.ddr_latency_cycles + nbytes / rate


def pt_cycles(config: DeviceConfig, m: int, n: int, k: int, lx_sticks: int) -> float:
    passes = math.ceil(m / config.pt_rows) * math.ceil(n / config.pt_lanes) * k / config.corelets_used
    port = lx_sticks * config.stick_bytes / config.lx_port_bytes_per_cycle
    return max(passes, port)


def sfp_cycles(config: DeviceConfig, vectors: int, lx_sticks: int, transcendental: bool) -> float:
    per_vector = config.sfp_transcendental_factor if transcendental else 1.0
    compute = vectors * per_vector / (config.sfp_vectors_per_cycle * config.corelets_used)
    port = lx_sticks * config.stick_bytes / config.lx_port_bytes_per_cycle
    return max(compute, port)
