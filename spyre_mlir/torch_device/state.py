"""The device's configuration and mode: the `DeviceConfig` its kernels run on, and strict
mode (an op the device cannot take raises instead of running on the CPU)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from spyre_mlir.sim.numerics import Numerics, get_numerics
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.torch_device import extension

_CONFIG = DeviceConfig()
_STRICT = os.environ.get("SPYRE_DEVICE_STRICT", "0") == "1"


def config() -> DeviceConfig:
    return _CONFIG


def numerics() -> Numerics:
    return get_numerics(_CONFIG.numerics)


HOST_RUNTIME_FIELDS = frozenset(
    ("runtime_mode", "graph_kernel_s", "graph_tensor_s", "patch_address_s", "instruction_bytes")
)
"""The host runtime's parameters (sim/host_timeline.py): they price launches, not what tensors hold."""


def configure(**fields: Any) -> DeviceConfig:
    """Run the device on another `DeviceConfig` (any of its fields): only while no device
    tensor is allocated, since tensors hold values in the config's numerics; the host
    runtime's parameters (`HOST_RUNTIME_FIELDS`: the runtime mode among them) at any time."""
    global _CONFIG
    if not set(fields) <= HOST_RUNTIME_FIELDS and extension.module().memory_allocated():
        raise RuntimeError(
            "spyre: configure the device before allocating spyre tensors (some are allocated); only the host "
            f"runtime's parameters may change now ({', '.join(sorted(HOST_RUNTIME_FIELDS))})"
        )
    cfg = dataclasses.replace(_CONFIG, **fields)
    cfg.validate()
    if not set(fields) <= HOST_RUNTIME_FIELDS:
        extension.module().set_memory_limit(cfg.ddr_usable_bytes)
    _CONFIG = cfg
    return cfg


def strict() -> bool:
    return _STRICT


def set_strict(on: bool) -> None:
    """Strict mode: an op the device cannot take raises (naming it) instead of running on the CPU."""
    global _STRICT
    _STRICT = bool(on)
