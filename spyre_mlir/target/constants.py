"""Facts of the Spyre hardware that are not parameters: the stick, the PT array's shape, the
transpose block and the instruction format's counters. `DeviceConfig` (target/config.py) holds
what a study may vary; these are fixed by the data formats the compiler emits.
"""

STICK_BYTES = 128
"""Bytes per stick (torch-spyre RFC 0047): the unit of every DMA transfer and LX address."""

F16_LANES = STICK_BYTES // 2
"""16-bit elements per stick (DL16 or IEEE fp16): 64."""

F32_LANES = STICK_BYTES // 4
"""32-bit elements per stick: 32."""

PT_ROWS = 8
"""PT array rows per corelet: output rows one pass produces (torch-spyre docs, cost model)."""

PT_LANES = F16_LANES
"""PT array lanes per corelet: output columns one pass produces, one f16 stick (torch-spyre
cost model). A matmul's K and N are walked in sticks of this many lanes."""

TRANSPOSE_BLOCK = F16_LANES
"""Side of the square block a relayout transposes on chip: one stick of 64 lanes by 64 sticks
(the lane gather reads 64 sticks and writes 64 sticks)."""

MAX_LOOP_COUNT = (1 << 16) - 1
"""The instruction format's loop and stick counts are 16-bit fields."""


def lanes_for(element_bytes: int) -> int:
    """Elements per stick for an element size in bytes (64 for f16, 32 for f32, 128 for i8)."""
    return STICK_BYTES // element_bytes
