"""Device memories as byte arrays, and host <-> device transfers that follow the layout.

    LX:   one (cores, lx_sticks, 128) uint8 array — every core's 2 MiB scratchpad
    DDR:  sparse by allocation; each DdrTensor owns (num_sticks, 128) uint8 bytes at a
          virtual address, and the allocator refuses what the device's usable DDR cannot hold;
          a gather-only table (LazyRowsTensor) gets its rows rounded in when first read;
          an immutable tensor (`DdrTensor.freeze`) may have an fp32 copy of its values beside
          its bits (`DeviceMemory.decoded`), which products read instead of decoding

16-bit device values are stored as the numerics mode's bit patterns (DL16 by default), so
what is in memory is exactly what the hardware would hold; every store rounds.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from spyre_mlir.layout import Layout, row_major_strides
from spyre_mlir.sim.numerics import Numerics, get_numerics
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES

_TO_DEVICE_SLAB = 1 << 20
"""Elements `to_device` stages and encodes at a time (4 MiB of fp32)."""


class DeviceError(RuntimeError):
    """The device model refuses an operation the hardware cannot do (a precise message
    naming the kernel, core, instruction and bytes where they apply)."""


@cache
def _row_item(nbytes: int) -> np.dtype:
    """A row of `nbytes` bytes as one numpy item."""
    return np.dtype((np.void, nbytes))


class StickRows:
    """A (rows, width) array read and written by arrays of row indices: `rows[idx]` is np.take
    and `rows[idx] = v` is np.put on whole rows as single items, the same as fancy indexing
    (the last of repeated indices wins) at a fraction of its cost. The LX bytes are (rows, 128)
    uint8; the values kept decoded (`DeviceMemory.scratch_values`) are
    (rows, 64) float32."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self.items = array.view(_row_item(array.shape[1] * array.itemsize)).reshape(-1)

    def __getitem__(self, idx: np.ndarray) -> np.ndarray:
        return self.array.take(idx, axis=0)  # the method: np.take's wrapper costs a microsecond a call

    def __setitem__(self, idx: np.ndarray, values: np.ndarray) -> None:
        self.items.put(idx, np.ascontiguousarray(values, dtype=self.array.dtype).view(self.items.dtype))


@dataclass(frozen=True)
class _Placement:
    """Where a layout puts the host elements, as a strided view (no per-element index arrays).

    Pad every host dim to its padded extent (the top digit's overhang) with zeros; then device
    element c is padded-host element sum_j c[j] * q_j * phs[h_j] (q_j the digit weight of
    device dim j along host dim h_j, phs the padded host's row-major strides), so the device
    array is an `as_strided` view of the padded host with those strides. Synthetic (-1) dims
    hold data at coordinate 0 only (`select`), a splat lane dim has stride 0 (copies)."""

    padded: tuple[int, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    """In elements of the padded host array."""
    select: tuple[slice, ...]
    """The device coordinates that hold data (index 0 of every synthetic dim)."""


@lru_cache(maxsize=256)
def _placement(layout: Layout) -> _Placement:
    host = layout.host_shape
    padded = tuple(max(e, layout.padded_extent(h)) for h, e in enumerate(host))
    phs = row_major_strides(padded)
    dims: list[tuple[int, int, slice]] = []  # per device dim: extent, stride, the coordinates that hold data
    for j, (n, s) in enumerate(zip(layout.device_size, layout.stride_map)):
        owner = layout.host_dim_of(j)
        if s == -1:
            dims.append((1, 0, slice(0, 1)))
        elif owner is None:  # a size-1 dim, or the splat lane dim (copies)
            dims.append((n, 0, slice(None)))
        else:
            h, q = owner
            dims.append((n, q * phs[h], slice(None)))
    return _Placement(padded, tuple(d[0] for d in dims), tuple(d[1] for d in dims), tuple(d[2] for d in dims))


def _device_view(host: np.ndarray, p: _Placement) -> np.ndarray:
    """A C-order array of the host shape, zero-padded to `p.padded`, seen in the device's dims
    (`p.shape`, read-only): what goes to the device coordinates `p.select`."""
    if p.padded != host.shape:
        padded = np.zeros(p.padded, dtype=host.dtype)
        padded[tuple(slice(0, e) for e in host.shape)] = host
        host = padded
    return as_strided(host, p.shape, tuple(s * host.itemsize for s in p.strides), writeable=False)


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

    def read_rows(self, rows: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """The sticks at `pos` (any shape), which hold the table rows `rows`: a gather's read."""
        return self.data.take(pos, axis=0)

    def freeze(self) -> None:
        """Make the bytes read-only, for this tensor and its views: the host does so for a copy
        no launch writes (a parameter, a constant). A write to it then fails where it is
        attempted, so a decoded copy of it (`DeviceMemory.decoded`) can never go stale."""
        self.data.flags.writeable = False

    @property
    def frozen(self) -> bool:
        return not self.data.flags.writeable


class LazyRowsTensor(DdrTensor):
    """A 2-D table in the generic layout that only gathers read (an embedding table): DDR
    holds what `to_device` would have written, but a row is rounded into it when a gather
    first reads it, not all at upload. Reading the whole table would make every page of the
    host array resident (a mapped weights file: 44 MiB for BERT's word embeddings) and every
    page of its DDR copy, for the 128 rows a forward reads.

        read_rows(rows, pos):  fill(unique rows not yet filled); the sticks at pos
        data (any other use):  fill(every row not yet filled); all the sticks
        fill(R):               DDR stick (j, r) = encode(host[r, 64 j : 64 j + 64], zero-padded)
                               for r in R, j < ceil(H / 64): the generic layout's device
                               dims (sticks, rows, lanes), at j * stride[0] + r * stride[1]

    The host array is read when a row is first needed: like any device copy of a weight, it
    stands for the values at upload (the host executor re-uploads a parameter whose version
    changed)."""

    def __init__(self, t: DdrTensor, host: np.ndarray, numerics: Numerics):
        super().__init__(t.layout, t.data, t.address, t.name)  # `data` sets _data
        self._host = host
        self._numerics = numerics
        self._filled = np.zeros(t.layout.shape[0], dtype=bool)

    @staticmethod
    def fits(host: np.ndarray, layout: Layout) -> bool:
        """Whether `host` can be uploaded row by row into `layout`."""
        return (
            len(layout.shape) == 2
            and tuple(host.shape) == tuple(layout.shape)
            and layout == Layout.generic(layout.shape, 2)
        )

    @property
    def data(self) -> np.ndarray:
        missing = np.flatnonzero(~self._filled)
        for lo in range(0, missing.size, 4096):  # in slabs: the fp32 staging never exists whole
            self._fill(missing[lo : lo + 4096])
        return self._data

    @data.setter
    def data(self, value: np.ndarray) -> None:
        self._data = value

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def read_rows(self, rows: np.ndarray, pos: np.ndarray) -> np.ndarray:
        want = np.unique(rows)
        self._fill(want[~self._filled[want]])
        return self._data.take(pos, axis=0)

    def _fill(self, rows: np.ndarray) -> None:
        if not rows.size:
            return
        sticks, width = self.layout.device_size[0], self.layout.shape[1]
        s_stick, s_row = self.layout.stick_strides
        values = np.zeros((rows.size, sticks * F16_LANES), dtype=np.float32)
        values[:, :width] = self._host[rows]
        bits = self._numerics.encode(values).reshape(rows.size, sticks, F16_LANES)
        lanes = self._data.view(np.uint16).reshape(-1, F16_LANES)
        lanes[np.arange(sticks)[None, :] * s_stick + rows[:, None] * s_row] = bits
        self._filled[rows] = True

    def __repr__(self) -> str:
        return (
            f"LazyRowsTensor({self.layout}, {self.name!r}, rows filled {int(self._filled.sum())}/{self._filled.size})"
        )


class DecodedCopy(NamedTuple):
    """A frozen tensor's sticks decoded to fp32 (`DeviceMemory.decoded`), (num_sticks, 64).

    `rows` None: in stick order, stick p at values[p]. `rows` R: arranged so that sticks R apart
    are side by side: stick p = c * R + r (column c of the R-stick columns, row r) at values[r *
    C + c], C = num_sticks / R. A matrix whose sticks run down its rows first (a weight laid
    out column of sticks by column, as work division over its columns wants it) then has each
    row's sticks as one run of values: any block of it is a strided view, no copy."""

    values: np.ndarray
    rows: int | None

    def rows_of(self, sticks: np.ndarray) -> np.ndarray:
        """Rows of `values` that hold the given sticks."""
        if self.rows is None:
            return sticks
        columns = self.values.shape[0] // self.rows
        return sticks % self.rows * columns + sticks // self.rows


class DeviceMemory:
    """DDR allocations and the cores' LX scratchpads."""

    def __init__(self, config: DeviceConfig):
        config.validate()
        self.config = config
        self.numerics: Numerics = get_numerics(config.numerics)
        lx = config.cores * config.lx_sticks
        backing = np.zeros((2 * lx, STICK_BYTES), dtype=np.uint8)  # scratch: as much again (pages untouched until used)
        self.lx = backing[:lx].reshape(config.cores, config.lx_sticks, STICK_BYTES)
        self.lx_rows = StickRows(backing)
        """The same bytes as rows: core c's stick s is row c * lx_sticks + s; rows past the
        cores' LX are scratch (`reserve_scratch`)."""
        self.scratch_values = StickRows(np.zeros((0, F16_LANES), dtype=np.float32))
        """The fp32 values of 16-bit sticks a regrouped step stored, kept beside (or instead
        of) their bits for the steps that read them (sim/regroup/, "kept"), in rows of
        their own (`reserve_scratch`); like the scratch rows, nothing in it outlives a launch."""
        self.ddr_used = 0
        self._next_address = 0x1000_0000
        self._decoded: weakref.WeakKeyDictionary[DdrTensor, DecodedCopy] = weakref.WeakKeyDictionary()
        """fp32 copies of frozen tensors, by the tensor that owns the bytes (`decoded`)."""

    def reserve_scratch(self, rows: int, kept: int) -> None:
        """Make `lx_rows` reach `rows` rows past the cores' LX, and `scratch_values` `kept`
        rows: scratch that the regrouped steps of a launch write fresh values into
        (sim/regroup/); no instruction addresses it, and nothing in it outlives a
        launch. The LX bytes are kept."""
        lx = self.lx.shape[0] * self.lx.shape[1]
        if self.scratch_values.array.shape[0] < kept:
            self.scratch_values = StickRows(np.zeros((kept, F16_LANES), dtype=np.float32))
        if self.lx_rows.array.shape[0] >= lx + rows:
            return
        backing = np.zeros((lx + max(rows, 2 * (self.lx_rows.array.shape[0] - lx)), STICK_BYTES), dtype=np.uint8)
        backing[:lx] = self.lx.reshape(-1, STICK_BYTES)
        self.lx = backing[:lx].reshape(self.lx.shape)
        self.lx_rows = StickRows(backing)

    # ------------------------------------------------------------------ DDR
    def check_room(self, layout: Layout, name: str = "") -> None:
        """Refuse, before any host memory is taken, a tensor the free usable DDR cannot hold."""
        nbytes = layout.nbytes
        if self.ddr_used + nbytes > self.config.ddr_usable_bytes:
            raise DeviceError(
                f"DDR exhausted: {name or 'a tensor'} of shape {layout.shape} needs {nbytes} bytes, "
                f"{self.config.ddr_usable_bytes - self.ddr_used} of {self.config.ddr_usable_bytes} usable bytes are free"
            )

    def allocate(self, layout: Layout, name: str = "") -> DdrTensor:
        nbytes = layout.nbytes
        self.check_room(layout, name)
        data = np.zeros((layout.num_sticks, STICK_BYTES), dtype=np.uint8)
        t = DdrTensor(layout, data, self._next_address, name)
        self._next_address += (nbytes + 4095) // 4096 * 4096
        self.ddr_used += nbytes
        return t

    def free(self, t: DdrTensor) -> None:
        if t.owner is None:
            self.ddr_used -= t.nbytes
            self._decoded.pop(t, None)

    @property
    def decoded_bytes(self) -> int:
        """Bytes of the decoded copies alive (a tensor dropped unfreed lets its copy go)."""
        return sum(c.values.nbytes for c in self._decoded.values())

    def _fits(self, root: DdrTensor) -> bool:
        return self.decoded_bytes + root.data.shape[0] * F16_LANES * 4 <= self.config.decoded_copy_bytes

    def decoded(self, t: DdrTensor, rows: int | None = None) -> DecodedCopy | None:
        """The values of a frozen tensor's sticks as fp32 (`DecodedCopy`): numerics.decode of
        its bits, made on first use, arranged by `rows` then (when its sticks divide into
        columns of that many), and kept while the tensor lives, within the config's
        `decoded_copy_bytes` (None for a tensor that is not frozen, or past the budget: the
        caller decodes the bits, which gives the same values). A later call gets the copy as
        it was made, whatever its `rows`."""
        if isinstance(t, LazyRowsTensor) or not t.frozen:  # (a lazy table's `data` fills it whole)
            return None
        root = t.owner or t
        copy = self._decoded.get(root)
        if copy is None:
            if not self._fits(root):
                return None
            bits = root.data.view(np.uint16)
            sticks = bits.shape[0]
            if rows is None or rows <= 1 or sticks % rows:
                copy = DecodedCopy(self.numerics.decode(bits).reshape(-1, F16_LANES), None)
            else:  # stick p = column * rows + row goes to row * columns + column
                arranged = bits.reshape(sticks // rows, rows, F16_LANES).transpose(1, 0, 2)
                copy = DecodedCopy(self.numerics.decode(arranged).reshape(-1, F16_LANES), rows)
            copy.values.flags.writeable = False
            self._decoded[root] = copy
        return copy

    # ------------------------------------------------------------------ host transfers
    def to_device_rows(self, host: np.ndarray, layout: Layout, name: str = "") -> DdrTensor:
        """`to_device` for a table only gathers read: rows rounded into DDR as gathers first
        read them (LazyRowsTensor), when the table fits that form; otherwise `to_device`."""
        src = np.asarray(host)
        if not LazyRowsTensor.fits(src, layout):
            return self.to_device(src, layout, name=name)
        return LazyRowsTensor(self.allocate(layout, name), src, self.numerics)

    def to_device(
        self, host: np.ndarray, layout: Layout, permutation: tuple[int, ...] | None = None, name: str = ""
    ) -> DdrTensor:
        """Place a host array in DDR in `layout` (after an optional permutation and a
        reshape to the layout's shape), rounding every element to the device format;
        padding lanes are written as 0."""
        self._check_host(host, layout, permutation)
        t = self.allocate(layout, name)
        self.write(t, host, permutation)
        return t

    @staticmethod
    def _check_host(host: np.ndarray, layout: Layout, permutation: tuple[int, ...] | None) -> None:
        moved = np.asarray(host) if permutation is None else np.asarray(host).transpose(permutation)
        if moved.size != int(np.prod(layout.shape)) and moved.shape != layout.shape:
            raise DeviceError(
                f"to_device: host array of shape {moved.shape} does not match layout shape {layout.shape}"
            )

    def write(self, t: DdrTensor, host: np.ndarray, permutation: tuple[int, ...] | None = None) -> None:
        """Write a host array over the whole of DDR tensor `t` in its layout, as `to_device`
        places it (a tensor whose host copy changed outside any program: a KV transfer
        received from another card)."""
        layout = t.layout
        self._check_host(host, layout, permutation)
        if t.frozen:
            raise DeviceError("write: the tensor is frozen (read-only bytes: its decoded copy would go stale)")
        src = np.asarray(host)
        moved = src if permutation is None else src.transpose(permutation)
        moved = moved.reshape(layout.shape)
        p = _placement(layout)
        if moved.dtype != np.float32 or not moved.flags.c_contiguous:
            # copied whole either way (a permutation, another dtype): rounding is element-wise, so
            # round first, in the source's own order, and the copy that places the values moves
            # 16-bit patterns (padding lanes: 0, the pattern of 0.0 in both formats)
            bits = self.numerics.encode(src)
            bits = bits if permutation is None else bits.transpose(permutation)
            bits = np.ascontiguousarray(bits.reshape(layout.shape)).reshape(layout.host_shape)
            t.data.reshape(-1).view(np.uint16).reshape(layout.device_size)[p.select] = _device_view(bits, p)
            return
        view = _device_view(moved.reshape(layout.host_shape), p)
        # in slabs of the outermost device dim, so that a large tensor's fp32 staging copy and
        # its encoding never exist whole (they would set the process's peak memory)
        outer, inner = layout.device_size[0], math.prod(layout.device_size[1:])
        step = outer if p.select[0] != slice(None) else max(1, _TO_DEVICE_SLAB // inner)
        flat = t.data.reshape(-1).view(np.uint16)
        for lo in range(0, outer, step):
            hi = min(outer, lo + step)
            values = np.zeros((hi - lo, *layout.device_size[1:]), dtype=np.float32)  # padding, synthetic coordinates: 0
            if step < outer:
                values[(slice(None), *p.select[1:])] = view[lo:hi]
            else:
                values[p.select] = view
            flat[lo * inner : hi * inner] = self.numerics.encode(values).reshape(-1)

    def from_device(self, t: DdrTensor) -> np.ndarray:
        """The logical tensor as float32 on the host (padding ignored)."""
        layout = t.layout
        p = _placement(layout)
        values = self.numerics.decode(t.data.reshape(-1).view(np.uint16)).reshape(layout.device_size)
        # of the copies in a splat lane dim, the last lane's (as the element-wise definition,
        # where the last write of an element wins)
        select = tuple(
            slice(n - 1, n) if s == 0 and st == 0 and sel == slice(None) and n > 1 else sel
            for n, s, st, sel in zip(layout.device_size, layout.stride_map, p.strides, p.select)
        )
        values = values[select]
        padded = np.empty(p.padded, dtype=np.float32)
        shape = tuple(values.shape)
        view = as_strided(padded, shape, tuple(s * padded.itemsize for s in p.strides[: len(shape)]))
        view[...] = values
        out = padded[tuple(slice(0, e) for e in layout.host_shape)]
        return np.ascontiguousarray(out).reshape(layout.shape)
