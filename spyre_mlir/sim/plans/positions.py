"""Where an instruction's accesses lie: stick positions as index arrays, a row per core.

An access (`spyre_isa.AccessAttr`) is a base per core and strides over a loop nest; its
positions are the LX (or DDR) sticks it touches, (cores, steps), and its rows the indices of
those sticks in the (cores * lx_sticks, 128) view of every core's LX (`flat_rows`), so that
an access of all the cores of a stream is one 1-D gather.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.target.constants import F16_LANES, F32_LANES

F32_STICKS = F16_LANES // F32_LANES
"""Sticks of one 64-lane f32 vector (a PT accumulator row's stick of outputs, an f32 SFP access): 2."""


def loop_offsets(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Stick offsets of a loop nest, outer dim first (row-major over `sizes`); read-only,
    shared by every access with the same loop nest (a program's instructions repeat a few)."""
    return _loop_offsets(tuple(sizes), tuple(strides))


@functools.lru_cache(maxsize=4096)
def _loop_offsets(sizes: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    off = np.zeros(1, dtype=np.int64)
    for n, s in zip(sizes, strides):
        off = (off[:, None] + np.arange(n, dtype=np.int64) * s).reshape(-1)
    off.flags.writeable = False
    return off


def bases(acc: spyre_isa.AccessAttr, n: int) -> np.ndarray:
    return np.asarray(acc.base.table(n), dtype=np.int64)


def flat_rows(cores: Sequence[int] | np.ndarray, pos: np.ndarray, lx_sticks: int) -> np.ndarray:
    """Row indices into the (cores * lx_sticks, 128) view of LX of positions `pos` (one row
    per core), so that an access is one 1-D gather instead of a 2-D one."""
    c = np.asarray(cores, dtype=np.int64).reshape(-1, *([1] * (pos.ndim - 1)))
    return c * lx_sticks + pos


def spans(pos: np.ndarray) -> list[tuple[tuple[int, int], ...]]:
    """Per core (row of `pos`), the stick interval its access covers, as a one-interval tuple
    (empty for no access): the timing model's hazard unit."""
    flat = pos.reshape(pos.shape[0], -1)
    if not flat.size:
        return [()] * flat.shape[0]
    return [((lo, hi),) for lo, hi in zip(flat.min(axis=1).tolist(), (flat.max(axis=1) + 1).tolist())]


def positions(acc: spyre_isa.AccessAttr, sizes: Sequence[int], n: int) -> np.ndarray:
    """Stick positions of an access over a loop nest of `sizes`, a row per core: (n, prod(sizes))."""
    return bases(acc, n)[:, None] + loop_offsets(sizes, acc.strides.as_tuple())[None]


def vector_positions(acc: spyre_isa.AccessAttr, sizes: Sequence[int], n: int) -> np.ndarray:
    """Stick positions of an SFP access: (n, vectors), or (n, vectors, 2) for f32."""
    pos = positions(acc, sizes, n)
    if acc.is_f32:  # one 64-lane vector = two consecutive f32 sticks
        pos = np.stack([pos + s for s in range(F32_STICKS)], axis=-1)
    return pos
