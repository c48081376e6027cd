"""What an instruction's execution reaches of the device model: the `Machine` protocol.

The plans (plans/), the batched programs (batch.py) and the regrouped steps (regroup/)
take a `Machine`, not the device model itself, so they import nothing above them: the device
model (`interpreter.DeviceModel`) imports them and is one.
"""

from __future__ import annotations

from typing import Protocol

from spyre_mlir.sim.memory import DeviceMemory
from spyre_mlir.sim.sanitizer import Sanitizer
from spyre_mlir.target.config import DeviceConfig


class Machine(Protocol):
    """A simulated card as its instructions see it."""

    config: DeviceConfig
    """The card's parameters (cores, LX, numerics ...)."""
    memory: DeviceMemory
    """DDR tensors and every core's LX."""
    sanitizer: Sanitizer | None
    """Checks of what the hardware forbids (None: not checked)."""
