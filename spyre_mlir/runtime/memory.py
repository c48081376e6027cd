"""Device memories as byte arrays, and host <-> device transfers that follow the layout.

    LX:   one (cores, lx_sticks, 128) uint8 array — every core's 2 MiB scratchpad
    DDR:  sparse by allocation; each DdrTensor owns (num_sticks, 128) uint8 bytes at a
          virtual address, and the allocator refuses what the device's usable DDR cannot hold

16-bit device values are stored as the numerics mode's bit patterns (DL16 by default), so
what is in memory is exactly what the hardware would hold; every store rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from spyre_mlir.layout import STICK_BYTES, Layout
from spyre_mlir.runtime.config import DeviceConfig
from spyre_mlir.runtime.numerics import Numerics, get_numerics


class DeviceError(RuntimeError):
    """The device model refuses an operation the hardware cannot do (a precise message
    naming the kernel, core, instruction and bytes where they apply)."""


@lru_cache(maxsize=256)
def _index_arrays(layout: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(host offsets of valid device elements, their flat device positions, valid mask)."""
    offset, valid = layout.index_arrays()
    flat_valid = valid.reshape(-1)
    return offset.reshape(-1)[flat_valid], np.flatnonzero(flat_valid), flat_valid


@dataclass(eq=False)
class DdrTensor:
    """A device tensor resident in DDR: its bytes, its layout, its virtual address."""

    layout: Layout
    data: np.ndarray  # (num_sticks, 128) uint8, shared by views
    address: int
    name: str = ""
    owner: DdrTensor | None = field(default=None, repr=False)

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    def view_as(self, layout: Layout) -> DdrTensor:
        """The same bytes read through another layout (free views: permute, reshape)."""
        assert layout.num_sticks == self.layout.num_sticks
        return DdrTensor(layout, self.data, self.address, self.name, self.owner or self)


class DeviceMemory:
    """DDR allocations and the cores' LX scratchpads."""

    def __init__(self, config: DeviceConfig):
        config.validate()
        self.config = config
        self.numerics: Numerics = get_numerics(config.numerics)
        self.lx = np.zeros((config.cores, config.lx_sticks, STICK_BYTES), dtype=np.uint8)
        self.ddr_used = 0
        self._next_address = 0x1000_0000

    # ------------------------------------------------------------------ DDR
    def allocate(self, layout: Layout, name: str = "") -> DdrTensor:
        nbytes = layout.nbytes
        if self.ddr_used + nbytes > self.config.ddr_usable_bytes:
            raise DeviceError(
                f"DDR exhausted: {name or 'a tensor'} of shape {layout.shape} needs {nbytes} bytes, "
                f"{self.config.ddr_usable_bytes - self.ddr_used} of {self.config.ddr_usable_bytes} usable bytes are free"
            )
        data = np.zeros((layout.num_sticks, STICK_BYTES), dtype=np.uint8)
        t = DdrTensor(layout, data, self._next_address, name)
        self._next_address += (nbytes + 4095) // 4096 * 4096
        self.ddr_used += nbytes
        return t

    def free(self, t: DdrTensor) -> None:
        if t.owner is None:
            self.ddr_used -= t.nbytes

    # ------------------------------------------------------------------ host transfers
    def to_device(self, host: np.ndarray, layout: Layout, permutation: tuple[int, ...] | None = None, name: str = "") -> DdrTensor:
        """Place a host array in DDR in `layout` (after an optional permutation and a
        reshape to the layout's shape), rounding every element to the device format;
        padding lanes are written as 0."""
        src = np.asarray(host)
        if permutation is not None:
            src = src.transpose(permutation)
        if src.size == int(np.prod(layout.shape)):
            src = src.reshape(layout.shape)
        if src.shape != layout.shape:
            raise DeviceError(f"to_device: host array of shape {src.shape} does not match layout shape {layout.shape}")
        t = self.allocate(layout, name)
        host_off, dev_pos, _ = _index_arrays(layout)
        flat = np.ascontiguousarray(src, dtype=np.float32).reshape(-1)
        bits = np.zeros(layout.num_sticks * layout.lanes, dtype=np.uint16)
        bits[dev_pos] = self.numerics.encode(flat[host_off])
        t.data[...] = bits.view(np.uint8).reshape(t.data.shape)
        return t

    def from_device(self, t: DdrTensor) -> np.ndarray:
        """The logical tensor as float32 on the host (padding ignored)."""
        layout = t.layout
        host_off, dev_pos, _ = _index_arrays(layout)
        bits = t.data.reshape(-1).view(np.uint16)
        out = np.empty(max(1, int(np.prod(layout.shape))), dtype=np.float32)
        out[host_off] = self.numerics.decode(bits[dev_pos])
        return out.reshape(layout.shape)
