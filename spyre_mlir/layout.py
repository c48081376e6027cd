"""Stick-layout arithmetic: the meaning of `#spyre.layout<device_size, stride_map>`.

A device tensor is a row-major array of shape `device_size` whose last dimension is the
*stick*: 128 bytes, i.e. `S = 128 // element_bytes` lanes (64 for 16-bit, 32 for f32, 128
for 8-bit). `stride_map[j]` is the number of *host* elements (row-major elements of the
logical tensor) that one step along device dim `j` advances; `-1` marks a padding/synthetic
dim whose only meaningful coordinate is 0; `0` on the lane dim makes a *splat* layout: every
lane holds a copy of the same element (what a reduction along the stick dim produces, and
what a broadcast along the stick dim reads).

    host_offset(c)  = sum_j c[j] * stride_map[j]            (over dims with stride >= 0)
    valid(c)        = every host coordinate is inside the logical shape, and c[j] == 0 on -1 dims
                      (on a 0 dim every coordinate is valid: the copies)

Every device dim with stride s > 0 and size > 1 belongs to exactly one host dim `h`: the
one whose row-major stride `hs[h]` satisfies `hs[h] <= s < hs[h] * shape[h]` and divides s;
it contributes `c[j] * (s // hs[h])` to the coordinate along `h` (its *digit weight* q).
The digits of one host dim form a mixed radix (weights 1, n0, n0*n1, ...); the top digit may
overhang the host extent — that overhang is the *padding* (masked lanes: -inf for max,
+inf for min, 0 otherwise; the runtime writes 0).

The generic stick layout maps host dims `[d0 ... dn-1]` to device dims
`[d1, ..., dn-2, ceil(dn-1 / S), d0, S]`; for (5, 100, 150) f16 that is
device_size [100, 3, 5, 64], stride_map [150, 64, 15000, 1], the stick dim padded 150 -> 192.

Stick addressing (`loop_dims`, `operand_strides`): which stick of one layout holds the
elements that a stick of another layout holds. Kernels iterate over the non-lane device dims of
a *driving* layout (the output's): one iteration is one stick. For an operand in another
layout, `operand_strides` gives, per driving dim, the operand's stick stride for the same
elements (0 where the operand broadcasts), so that one strided DMA/SFP loop nest addresses both:

    driving stick  c = (c_0, ..., c_n)  at  sum_j c_j * out_stride_j
    operand stick                       at  sum_j c_j * operand_strides[j]

It fails (None) when the operand's sticks do not hold the same elements, i.e. its stick
runs along another host dim (a transpose: restickify with block transposes), its digits
do not nest within the driving ones, or a driving loop runs past the operand's digit (the
driving layout padded past the operand's extent: the loop would read the next coordinate of
an outer digit, or sticks past the tensor). An operand broadcast along the output's stick dim is
readable only in a splat layout (every lane a copy of its element).

This module is pure arithmetic on tuples: the dialect (`spyre_mlir.dialects.spyre`), the
passes and the runtime all use it, so the layout has one meaning everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from spyre_mlir.target.constants import STICK_BYTES, lanes_for


class LayoutError(ValueError):
    """A device_size/stride_map pair that does not describe the logical tensor."""


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return tuple(strides)


@dataclass(frozen=True)
class Digit:
    """One device dim's contribution to a host dim: coordinate += c * weight."""

    device_dim: int
    weight: int
    size: int


@dataclass(frozen=True)
class Layout:
    """A logical shape placed on the device by `device_size` and `stride_map`.

    Rank-0 tensors are laid out as shape (1,) (one element in lane 0 of one stick).
    """

    shape: tuple[int, ...]
    element_bytes: int
    device_size: tuple[int, ...]
    stride_map: tuple[int, ...]

    # ------------------------------------------------------------------ construction
    @staticmethod
    def generic(shape: tuple[int, ...], element_bytes: int) -> Layout:
        """The generic stick layout (see module docstring)."""
        shape = tuple(shape)
        lanes = lanes_for(element_bytes)
        host = shape if shape else (1,)
        hs = row_major_strides(host)
        n = len(host)
        lane_stride = 1 if host[-1] > 1 else -1  # an extent-1 stick dim holds lane 0 only
        size: tuple[int, ...]
        stride: tuple[int, ...]
        if n == 1:
            size = (math.ceil(host[0] / lanes), lanes)
            stride = (lanes, lane_stride)
        else:
            size = (*host[1:-1], math.ceil(host[-1] / lanes), host[0], lanes)
            stride = (*hs[1:-1], lanes, hs[0], lane_stride)
        return Layout(shape, element_bytes, size, stride)

    @staticmethod
    def batch_major(shape: tuple[int, ...], element_bytes: int) -> Layout:
        """Every host dim one device dim in host order, sticked along the last: a stack of
        row-major matrices, each row its sticks side by side. For (8, 4096, 1024) f16:
        device_size [8, 4096, 16, 64], stride_map [4194304, 1024, 64, 1]. Viewed as
        (1, 32, 1024, 1024) it is that shape's generic layout (the batch split into heads)."""
        shape = tuple(shape)
        if len(shape) < 2 or shape[-1] < 2:
            raise LayoutError(f"a batch-major layout needs rank >= 2 and a last dim > 1, got {shape}")
        lanes = lanes_for(element_bytes)
        hs = row_major_strides(shape)
        return Layout(shape, element_bytes, (*shape[:-1], math.ceil(shape[-1] / lanes), lanes), (*hs[:-1], lanes, 1))

    # ------------------------------------------------------------------ derived facts
    @property
    def lanes(self) -> int:
        return lanes_for(self.element_bytes)

    @property
    def host_shape(self) -> tuple[int, ...]:
        return self.shape if self.shape else (1,)

    @property
    def host_strides(self) -> tuple[int, ...]:
        return row_major_strides(self.host_shape)

    @property
    def num_sticks(self) -> int:
        """Sticks the tensor occupies on the device (padding included)."""
        return math.prod(self.device_size[:-1])

    @property
    def nbytes(self) -> int:
        return self.num_sticks * STICK_BYTES

    def dim_stick_steps(self) -> tuple[int, ...] | None:
        """Per host dim, the stick offset of one step along it (along the stick dim, of one
        stick), when every element's stick is the sum of its coordinates' steps: each dim's
        digits one mixed-radix run, every digit's stick stride the run's step times its weight.
        None otherwise (a dim's digits interleave with another's, or the layout is sparse)."""
        lane = len(self.device_size) - 1
        strides = self.stick_strides
        steps = []
        for h, digits in enumerate(self.digits if self.shape else ((),)):
            unit = self.lanes if h == self.stick_dim else 1
            outer = [d for d in digits if d.device_dim != lane]
            if h == self.stick_dim and any(
                d.device_dim == lane and (d.weight != 1 or d.size != self.lanes) for d in digits
            ):
                return None
            step = strides[outer[0].device_dim] if outer else 0
            weight = unit
            for d in outer:
                if d.weight != weight or strides[d.device_dim] != step * (d.weight // unit):
                    return None
                weight *= d.size
            steps.append(step)
        return tuple(steps)

    def element_stick(self, coords: Sequence[int]) -> int:
        """The stick holding the element at logical `coords` (lane 0 of it: coords along the
        stick dim are multiples of the stick), counted from the first stick."""
        stick = 0
        strides = self.stick_strides
        lane = len(self.device_size) - 1
        for h, x in enumerate(coords if self.shape else (0,)):
            for d in self.digits[h]:
                if d.device_dim != lane:
                    stick += ((x // d.weight) % d.size) * strides[d.device_dim]
        return stick

    @property
    def stick_strides(self) -> tuple[int, ...]:
        """Row-major stride, in sticks, of each device dim except the lane dim."""
        outer = self.device_size[:-1]
        return row_major_strides(outer) if outer else ()

    def host_dim_of(self, device_dim: int) -> tuple[int, int] | None:
        """(host dim, digit weight) of a device dim, or None for a synthetic dim.

        Host dims of extent 1 are never stepped (their coordinate is always 0), which keeps
        the mapping unambiguous: among the other host dims the ranges
        [hs[h], hs[h] * shape[h]) are disjoint."""
        s, n = self.stride_map[device_dim], self.device_size[device_dim]
        if s <= 0 or n == 1:
            return None
        shape, hs = self.host_shape, self.host_strides
        for h in range(len(shape)):
            if shape[h] == 1:
                continue
            if hs[h] <= s < hs[h] * shape[h] and s % hs[h] == 0:
                return h, s // hs[h]
        raise LayoutError(
            f"device dim {device_dim} (size {n}, stride {s}) does not step along any dim of shape {self.shape}"
        )

    @cached_property
    def digits(self) -> tuple[tuple[Digit, ...], ...]:
        """For each host dim, its digits sorted by weight (validated mixed radix)."""
        per_host: list[list[Digit]] = [[] for _ in self.host_shape]
        for j in range(len(self.device_size)):
            owner = self.host_dim_of(j)
            if owner is not None:
                h, q = owner
                per_host[h].append(Digit(j, q, self.device_size[j]))
        return tuple(tuple(sorted(d, key=lambda x: x.weight)) for d in per_host)

    @property
    def stick_dim(self) -> int | None:
        """Host dim whose consecutive elements share a stick (None: sparse layout)."""
        owner = self.host_dim_of(len(self.device_size) - 1)
        if owner is None:
            return None
        return owner[0]

    @property
    def is_sparse(self) -> bool:
        return self.stride_map[-1] == -1

    @property
    def is_splat(self) -> bool:
        """Every lane of a stick holds a copy of one element (lane stride 0)."""
        return self.stride_map[-1] == 0

    @staticmethod
    def splat(shape: tuple[int, ...], element_bytes: int) -> Layout:
        """The generic layout of a shape whose last dim is 1, with that element in every lane."""
        if shape and shape[-1] != 1:
            raise LayoutError(f"a splat layout needs a last dim of extent 1, got shape {shape}")
        g = Layout.generic(shape, element_bytes)
        return Layout(g.shape, element_bytes, g.device_size, (*g.stride_map[:-1], 0))

    def describe(self) -> str:
        """`(4, 256) in device_size [4, 4, 64], stride_map [64, 256, 1]`: for messages."""
        return f"{self.shape} in device_size {list(self.device_size)}, stride_map {list(self.stride_map)}"

    def padded_extent(self, h: int) -> int:
        """Extent of host dim h on the device (the top digit may overhang the shape)."""
        d = self.digits[h]
        if not d:
            return 1
        return d[-1].weight * d[-1].size

    # ------------------------------------------------------------------ verification
    def verify(self) -> None:
        """Raise LayoutError unless this is a faithful placement of `shape`."""
        if len(self.device_size) != len(self.stride_map):
            raise LayoutError(f"device_size has {len(self.device_size)} dims but stride_map has {len(self.stride_map)}")
        if not self.device_size:
            raise LayoutError("a layout needs at least the stick dim")
        if any(n < 1 for n in self.device_size):
            raise LayoutError(f"device_size {list(self.device_size)} has a dim < 1")
        if any(s < -1 or s == 0 for s in self.stride_map[:-1]) or self.stride_map[-1] < -1:
            raise LayoutError(
                f"stride_map {list(self.stride_map)} has a stride that is neither > 0 nor -1 "
                f"(0 is allowed on the lane dim only: a splat)"
            )
        if any(d < 0 for d in self.shape):
            raise LayoutError(f"shape {self.shape} is not static")
        if self.device_size[-1] != self.lanes:
            raise LayoutError(
                f"the last device dim is the stick: it must hold {self.lanes} elements of "
                f"{self.element_bytes} bytes, not {self.device_size[-1]}"
            )
        lane = self.host_dim_of(len(self.device_size) - 1)
        if lane is not None and lane[1] != 1:
            raise LayoutError(
                f"the stick (last device dim) must step one element along host dim {lane[0]}, not {lane[1]}"
            )
        digits = self.digits  # raises on strides that fit no host dim
        for h, (extent, ds) in enumerate(zip(self.host_shape, digits)):
            if extent == 1:
                continue
            if not ds:
                raise LayoutError(f"host dim {h} (extent {extent}) is not mapped by any device dim")
            expect = 1
            for d in ds:
                if d.weight != expect:
                    raise LayoutError(
                        f"host dim {h}: device dim {d.device_dim} steps {d.weight} elements, "
                        f"expected {expect} (digits must form a mixed radix without gaps or overlaps)"
                    )
                expect *= d.size
            top = ds[-1]
            is_lane = top.device_dim == len(self.device_size) - 1
            if not is_lane and top.weight * (top.size - 1) >= extent:
                raise LayoutError(
                    f"host dim {h}: device dim {top.device_dim} has whole slices of padding "
                    f"({top.size} x {top.weight} for extent {extent})"
                )
            if expect < extent:
                raise LayoutError(f"host dim {h}: device dims cover {expect} of {extent} elements")

    # ------------------------------------------------------------------ element maps
    def index_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(host flat offset, valid mask), each of shape `device_size` (vectorised)."""
        nd = len(self.device_size)
        offset = np.zeros(self.device_size, dtype=np.int64)
        valid = np.ones(self.device_size, dtype=bool)
        coords: list[np.ndarray] = []
        for j, n in enumerate(self.device_size):
            shp = [1] * nd
            shp[j] = n
            coords.append(np.arange(n, dtype=np.int64).reshape(shp))
        for j, s in enumerate(self.stride_map):
            if s == -1:
                valid &= coords[j] == 0
            else:
                offset = offset + coords[j] * s
        for h, ds in enumerate(self.digits):
            if not ds:
                continue
            x = sum(coords[d.device_dim] * d.weight for d in ds)
            valid &= x < self.host_shape[h]
        return offset, valid

    # ------------------------------------------------------------------ views
    def permuted(self, perm: tuple[int, ...]) -> Layout:
        """Layout of `x.permute(perm)` over the same device bytes (a free view)."""
        new_shape = tuple(self.shape[p] for p in perm)
        new_hs = row_major_strides(new_shape) if new_shape else (1,)
        strides = []
        for j, s in enumerate(self.stride_map):
            owner = self.host_dim_of(j)
            if owner is None:  # synthetic dims keep their stride
                strides.append(s)
            else:
                h, q = owner
                strides.append(q * new_hs[perm.index(h)])
        return Layout(new_shape, self.element_bytes, self.device_size, tuple(strides))

    def reshaped(self, new_shape: tuple[int, ...]) -> Layout | None:
        """Layout of `x.reshape(new_shape)` over the same device bytes, or None if the
        reshape cannot be a free view (it would move padding or split a stick)."""
        new_shape = tuple(new_shape)
        if math.prod(new_shape) != math.prod(self.shape):
            raise LayoutError(f"cannot reshape {self.shape} to {new_shape}")
        new_host = new_shape if new_shape else (1,)
        new_hs = row_major_strides(new_host)
        old_hs = self.host_strides
        # a host dim with padding must survive unchanged (same extent and stride)
        for h, extent in enumerate(self.host_shape):
            if self.padded_extent(h) > extent:
                if not any(e == extent and s == old_hs[h] for e, s in zip(new_host, new_hs)):
                    return None
        sizes: list[int] = []
        strides: list[int] = []
        for j, (n, s) in enumerate(zip(self.device_size, self.stride_map)):
            if s in (-1, 0) or n == 1:  # sparse or splat lanes, and unit dims, carry over
                sizes.append(n)
                strides.append(s)
                continue
            owner = self.host_dim_of(j)
            assert owner is not None, "a verified layout's stepping dim belongs to a host dim"
            h = owner[0]
            pieces: list[tuple[int, int]] | None
            if self.padded_extent(h) > self.host_shape[h] and self.digits[h][-1].device_dim == j:
                pieces = [(n, s)]  # the overhanging top digit stays with its (surviving) host dim
            else:
                pieces = _split_digit(n, s, new_host, new_hs)
            if pieces is None:
                return None
            if j == len(self.device_size) - 1 and len(pieces) != 1:
                return None  # the stick would straddle host dims
            for pn, ps in pieces:
                sizes.append(pn)
                strides.append(ps)
        try:
            out = Layout(new_shape, self.element_bytes, tuple(sizes), tuple(strides))
            out.verify()
        except LayoutError:
            return None
        return out.canonical()

    def canonical(self) -> Layout:
        """The same placement with adjacent device dims merged where they are one row-major
        run along one host dim (outer stride == inner stride * inner size); the lane dim and
        size-1 dims are kept. Two layouts with the same size-1 dims place a tensor identically
        iff their canonical forms are equal (`places_like` sets the size-1 dims aside)."""
        sizes, strides = list(self.device_size[:-1]), list(self.stride_map[:-1])
        j = 0
        while j + 1 < len(sizes):
            a, b = j, j + 1
            if (
                sizes[a] > 1
                and sizes[b] > 1
                and strides[a] > 0
                and strides[b] > 0
                and strides[a] == strides[b] * sizes[b]
                and self._same_host_dim(strides[a], strides[b])
            ):
                sizes[a : b + 1] = [sizes[a] * sizes[b]]
                strides[a : b + 1] = [strides[b]]
            else:
                j += 1
        return Layout(
            self.shape,
            self.element_bytes,
            (*sizes, self.device_size[-1]),
            (*strides, self.stride_map[-1]),
        )

    def places_like(self, other: Layout) -> bool:
        """Whether `other` puts every element of the same shape in the same stick and lane:
        the canonical forms equal once the device dims of size 1 (which add nothing to an
        address) are set aside, the lane dim kept."""
        if self.shape != other.shape or self.element_bytes != other.element_bytes:
            return False
        if self == other:
            return True

        def placement(lay: Layout) -> tuple[tuple[int, ...], tuple[int, ...]]:
            kept = [j for j, n in enumerate(lay.device_size[:-1]) if n > 1] + [len(lay.device_size) - 1]
            bare = Layout(
                lay.shape,
                lay.element_bytes,
                tuple(lay.device_size[j] for j in kept),
                tuple(lay.stride_map[j] for j in kept),
            ).canonical()
            return bare.device_size, bare.stride_map

        return placement(self) == placement(other)

    def _same_host_dim(self, s1: int, s2: int) -> bool:
        shape, hs = self.host_shape, self.host_strides

        def owner(s: int) -> int | None:
            return next((h for h in range(len(shape)) if shape[h] > 1 and hs[h] <= s < hs[h] * shape[h]), None)

        return owner(s1) is not None and owner(s1) == owner(s2)

    # ------------------------------------------------------------------ boxes
    def box_to_device(self, box: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...] | None:
        """Device-coordinate ranges (all dims but the lane dim) holding the logical box
        `[(lo, hi), ...]`, or None if the box does not align with whole digits/sticks."""
        host_box = box if self.shape else ((0, 1),)
        ranges: list[tuple[int, int]] = [(0, n) for n in self.device_size[:-1]]
        last = len(self.device_size) - 1
        for h, ((lo, hi), ds) in enumerate(zip(host_box, self.digits)):
            extent = self.host_shape[h]
            if not ds:
                if (lo, hi) != (0, extent):
                    return None
                continue
            for d in ds[:-1]:
                span = d.weight * d.size
                if lo % span or (hi % span and hi != extent):
                    return None
            top = ds[-1]
            if lo % top.weight or (hi % top.weight and hi != extent):
                return None
            if top.device_dim != last:
                ranges[top.device_dim] = (lo // top.weight, -(-hi // top.weight))
            elif (lo, hi) != (0, extent):
                return None
        for j, s in enumerate(self.stride_map[:-1]):
            if s == -1:
                ranges[j] = (0, 1)
        return tuple(ranges)


def _split_digit(n: int, s: int, shape: tuple[int, ...], hs: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """Split device dim (size n, stride s) into row-major pieces that each step along one
    host dim of `shape`; pieces are returned outer first."""
    pieces: list[tuple[int, int]] = []
    while n > 1:
        h = next(
            (h for h in range(len(shape)) if shape[h] > 1 and hs[h] <= s < hs[h] * shape[h]),
            None,
        )
        if h is None or s % hs[h]:
            return None
        if s * n <= hs[h] * shape[h]:  # fits inside host dim h
            pieces.append((n, s))
            break
        room, rest = divmod(hs[h] * shape[h], s)  # steps of s that stay inside host dim h
        if rest or room < 2 or n % room:
            return None
        pieces.append((room, s))
        n, s = n // room, s * room
    return list(reversed(pieces)) if pieces else [(1, s)]


# region Stick addressing


@dataclass(frozen=True)
class LoopDim:
    """A loop over sticks: a non-lane device dim, or a part of one. It steps host dim
    `host_dim` (None: synthetic) by `weight` elements, `size` times, `stick_stride` sticks apart."""

    device_dim: int
    host_dim: int | None
    weight: int
    size: int
    stick_stride: int
    name: str


def loop_dims(
    layout: Layout,
    refine: Sequence[tuple[Layout, Sequence[int | None]]] = (),
    keep: frozenset[int] = frozenset(),
) -> list[LoopDim]:
    """The non-lane device dims of a layout, outer first, with their stick strides.

    With `refine` = [(operand layout, dim_map), ...], a dim is cut where an operand's digits
    of the same host dim begin or end, so that every loop nests inside one digit of every
    operand (e.g. 16 rows read from a layout that keeps them as 2 x 8 become loops 2 and 8,
    named d1_0 and d1_1). Host dims in `keep` are never cut."""
    strides = layout.stick_strides
    dims: list[LoopDim] = []
    for j in range(len(layout.device_size) - 1):
        owner = layout.host_dim_of(j)
        h, q = owner if owner is not None else (None, 0)
        n, st = layout.device_size[j], strides[j]
        cuts: set[int] = set()
        if h is not None and h not in keep:
            for op_layout, dim_map in refine:
                oh = dim_map[h]
                if oh is None:
                    continue
                for od in op_layout.digits[oh]:
                    for b in (od.weight, od.weight * od.size):
                        if q < b < q * n and b % q == 0:
                            cuts.add(b)
        bounds = sorted({q, q * n} | cuts) if h is not None else []
        if cuts and all(b2 % b1 == 0 for b1, b2 in zip(bounds, bounds[1:])):
            parts = [(b1, b2 // b1) for b1, b2 in zip(bounds, bounds[1:])][::-1]  # outer first
            for k, (w, size) in enumerate(parts):
                dims.append(LoopDim(j, h, w, size, st * (w // q), f"d{j}_{k}"))
        else:
            dims.append(LoopDim(j, h, q, n, st, f"d{j}"))
    return dims


def broadcast_dim_map(out_shape: Sequence[int], in_shape: Sequence[int]) -> list[int | None]:
    """For each output dim, the input dim it reads (numpy broadcasting), None if broadcast."""
    offset = len(out_shape) - len(in_shape)
    result: list[int | None] = []
    for i, n in enumerate(out_shape):
        j = i - offset
        result.append(j if j >= 0 and in_shape[j] == n and n > 1 else None)
    return result


def operand_strides(
    out: Layout, operand: Layout, dim_map: Sequence[int | None], loops: Sequence[LoopDim] | None = None
) -> list[int] | None:
    """Operand stick stride per loop of `out` (its device dims, or the refined `loops`).

    `dim_map[h]` is the operand host dim that output host dim h reads, or None (broadcast).
    """
    if operand.element_bytes != out.element_bytes:
        return None
    if out.is_splat:  # one element per stick, copied in every lane: operands must be splats too
        if not operand.is_splat:
            return None
    elif out.is_sparse:  # one element per stick, in lane 0 (a stick dim of extent 1)
        last = dim_map[len(out.shape) - 1] if out.shape else None
        if not (operand.is_sparse or last is not None and operand.stick_dim == last):
            return None  # (an operand read from its lane 0: a slice from a stick boundary)
    else:
        out_lane = out.stick_dim
        if out_lane is None:
            return None
        op_lane = dim_map[out_lane]
        if op_lane is None:
            # constant along the output's sticks: readable only if every lane holds the value
            if not operand.is_splat:
                return None
        elif operand.stick_dim != op_lane:
            return None
    op_digits = operand.digits
    op_strides = operand.stick_strides
    lane_dev = len(operand.device_size) - 1
    result = []
    for d in loops if loops is not None else loop_dims(out, [(operand, dim_map)]):
        if d.host_dim is None:
            result.append(0)
            continue
        oh = dim_map[d.host_dim]
        if oh is None:
            result.append(0)
            continue
        match = holding_digit(op_digits[oh], d.weight)
        if match is not None and d.weight * d.size > match.weight * match.size:
            match = None  # the loop runs past its digit: into the next coordinate of an outer digit or past the tensor
        if match is None or match.device_dim == lane_dev:
            return None
        result.append(op_strides[match.device_dim] * (d.weight // match.weight))
    return result


def holding_digit(digits: Sequence[Digit], weight: int) -> Digit | None:
    """The digit of a host dim (`Layout.digits[h]`) that a step of `weight` elements steps:
    its weight divides the step, and the step is below its span."""
    return next((d for d in digits if d.weight <= weight < d.weight * d.size and weight % d.weight == 0), None)


def loop_strides(layout: Layout, loops: Sequence[LoopDim]) -> list[int]:
    """`layout`'s stick stride per loop (`digit_stride` of its host dim and weight; 0 for a
    synthetic loop)."""
    return [0 if d.host_dim is None else digit_stride(layout, d.host_dim, d.weight) for d in loops]


def matrix_strides(layout: Layout) -> tuple[int, int, int]:
    """Stick strides of a (batched) matrix's layout per matrix (0 unbatched), per row and per
    stick of columns (`digit_stride`): how a matmul steps its operands and result."""
    batch = digit_stride(layout, 0, 1) if len(layout.shape) == 3 else 0
    return batch, digit_stride(layout, -2, 1), digit_stride(layout, -1, layout.lanes)


def digit_stride(layout: Layout, host_dim: int, weight: int) -> int:
    """Stick stride of a step of `weight` elements along host dim `host_dim` of `layout`: the
    stride of the device dim whose digit holds that step (scaled when the step is a multiple
    of the digit's weight), 0 when the step stays inside a stick or the dim has a single
    coordinate there (extent <= weight). ValueError when no single device dim steps it (the
    dim is split so that a step of `weight` is not one stride)."""
    h = host_dim % len(layout.host_shape)
    last = len(layout.device_size) - 1
    d = holding_digit(layout.digits[h], weight)
    if d is not None:
        return 0 if d.device_dim == last else layout.stick_strides[d.device_dim] * (weight // d.weight)
    if layout.padded_extent(h) > weight:
        raise ValueError(f"host dim {h} of {layout.describe()}: no device dim steps it by {weight}")
    return 0


# endregion
