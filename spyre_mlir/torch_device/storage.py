"""How a spyre tensor's bytes hold its values: DL16 sticks in the generic layout at rest.

A storage is allocated for a *base*: the shape of the dense tensor it was made for (for a
tensor made with permuted strides, its shape in storage order; for a storage made from bytes,
a flat run). Its bytes are `Layout.generic(base, element bytes)`: floating-point values
(float32, float16, bfloat16) as 16-bit device values (DL16, or IEEE fp16 under that numerics),
rounded when they arrive; integers and booleans exactly, in their own width (128 int8, 32
int32 or 16 int64 lanes per 128-byte stick). Padding lanes hold 0.

Element `h` of the storage (PyTorch's storage offset, in elements) is element `h` of the base
in row-major order, so every PyTorch view (strides and offset over the storage) reads and
writes the values where the card holds them: `values` and `write` go through the whole
storage's values, laid out as PyTorch sees them.

float64 and complex tensors have no device format and are refused when made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from spyre_mlir.layout import Layout
from spyre_mlir.sim.memory import DdrTensor
from spyre_mlir.sim.numerics import Numerics
from spyre_mlir.target.constants import STICK_BYTES
from spyre_mlir.torch_device import extension

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_INTEGERS: dict[torch.dtype, type] = {
    torch.int64: np.int64,
    torch.int32: np.int32,
    torch.int16: np.int16,
    torch.int8: np.int8,
    torch.uint8: np.uint8,
    torch.bool: np.bool_,
}


class DeviceDtypeError(TypeError):
    """A dtype the device holds no format for."""


def element_bytes(dtype: torch.dtype) -> int:
    """Bytes of one element on the device: 2 for floating point (16-bit device values),
    the dtype's own width for integers and booleans."""
    if dtype in FLOATS:
        return 2
    if dtype in _INTEGERS:
        return torch.empty((), dtype=dtype).element_size()
    raise DeviceDtypeError(
        f"spyre: the device holds no {dtype} (it holds float32, float16 and bfloat16 as 16-bit device values, "
        f"and int8/16/32/64, uint8 and bool exactly): convert the tensor first, e.g. .to(torch.float32)"
    )


def base_of(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """The dense shape a new storage for (sizes, strides) lays out: the sizes in storage
    order when the strides are a permutation of dense ones, else the storage as one run."""
    sizes, strides = tuple(sizes), tuple(strides)
    n = math.prod(sizes)
    if n == 0:
        return (0,)
    big = [i for i in range(len(sizes)) if sizes[i] != 1]  # a size-1 dim's stride is free
    order = sorted(big, key=lambda i: -strides[i])
    expect = 1
    for i in reversed(order):
        if strides[i] != expect:
            extent = 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
            return (extent,)
        expect *= sizes[i]
    if order == big:  # row-major already
        return sizes
    return tuple(sizes[i] for i in order)


def at_rest(base: Sequence[int], dtype: torch.dtype) -> Layout:
    return Layout.generic(tuple(base), element_bytes(dtype))


def device_bytes(base: Sequence[int], dtype: torch.dtype) -> int:
    """What a storage for `base` occupies on the card (whole sticks, padding included)."""
    if math.prod(base) == 0:
        return 0
    return at_rest(base, dtype).nbytes


def contiguous_strides(sizes: tuple[int, ...], memory_format: torch.memory_format | None = None) -> tuple[int, ...]:
    """PyTorch's strides of a new tensor of `sizes` (row-major, or channels-last)."""
    if memory_format == torch.channels_last and len(sizes) == 4:
        n, c, h, w = sizes
        return (h * w * c, 1, w * c, c)
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def new(sizes: Sequence[int], strides: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    """A new spyre tensor (zeros: the allocator's bytes are zero, the pattern of 0 in every format)."""
    sizes, strides = tuple(int(s) for s in sizes), tuple(int(s) for s in strides)
    base = base_of(sizes, strides)
    return extension.module().empty(list(sizes), list(strides), dtype, device_bytes(base, dtype), list(base))


def _to_device_dims(host: np.ndarray, layout: Layout) -> np.ndarray:
    """Host values of the base's shape placed in the generic layout's device dims (padding 0)."""
    shape = layout.host_shape
    lanes = layout.lanes
    host = host.reshape(shape)
    chunks = layout.device_size[-2] if len(shape) == 1 else layout.device_size[-3]
    padded = np.zeros((*shape[:-1], chunks * lanes), dtype=host.dtype)
    padded[..., : shape[-1]] = host
    if len(shape) == 1:
        return padded.reshape(chunks, lanes)
    return np.moveaxis(padded.reshape(shape[0], *shape[1:-1], chunks, lanes), 0, -2)


def _from_device_dims(dev: np.ndarray, layout: Layout) -> np.ndarray:
    shape = layout.host_shape
    if len(shape) == 1:
        return dev.reshape(-1)[: shape[0]]
    moved = np.moveaxis(dev.reshape(layout.device_size), -2, 0)
    return moved.reshape(*shape[:-1], -1)[..., : shape[-1]]


class StorageViewError(TypeError):
    """A storage read as another dtype than its values' (a reinterpreting view)."""


def _info(t: torch.Tensor) -> tuple[int, tuple[int, ...]]:
    accounted, base, dtype = extension.module().storage_info(t)
    if accounted and dtype is not None and dtype != t.dtype:
        raise StorageViewError(
            f"spyre: a storage of {dtype} values is read as {t.dtype}: the card holds values in its own format, "
            f"not host bytes, so a view that reinterprets them (Tensor.view(dtype), a typed view of an untyped "
            f"storage) has no meaning on it; convert with .to({t.dtype}) instead"
        )
    return accounted, tuple(base)


def sticks(t: torch.Tensor) -> np.ndarray:
    """The storage's device bytes, (num_sticks, 128) uint8: written through, not a copy."""
    accounted, _ = _info(t)
    raw = extension.module().raw_bytes(t).numpy()
    return raw[:accounted].reshape(-1, STICK_BYTES)


def storage_values(t: torch.Tensor, numerics: Numerics) -> np.ndarray:
    """Every element of the storage (in storage offsets), decoded: float32 for floating
    point, the integer type for integers."""
    accounted, base = _info(t)
    n = t.untyped_storage().nbytes() // t.element_size()
    if accounted == 0:
        return np.zeros(n, dtype=np.float32 if t.dtype in FLOATS else _INTEGERS[t.dtype])
    layout = at_rest(base, t.dtype)
    raw = sticks(t)
    if t.dtype in FLOATS:
        dev = numerics.decode(raw.reshape(-1).view(np.uint16))
    else:
        dev = raw.reshape(-1).view(_INTEGERS[t.dtype])
    flat = np.ascontiguousarray(_from_device_dims(dev.reshape(layout.device_size), layout)).reshape(-1)
    return flat[:n] if flat.size >= n else np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])


def write_storage(t: torch.Tensor, flat: np.ndarray, numerics: Numerics) -> None:
    """Set every element of the storage from `flat` (storage offsets), rounding floats."""
    accounted, base = _info(t)
    if accounted == 0:
        return
    layout = at_rest(base, t.dtype)
    n = math.prod(layout.host_shape)
    flat = flat.reshape(-1)[:n]
    dev = _to_device_dims(flat, layout)
    raw = sticks(t).reshape(-1)
    if t.dtype in FLOATS:
        raw.view(np.uint16)[:] = numerics.encode(np.ascontiguousarray(dev, dtype=np.float32)).reshape(-1)
    else:
        raw.view(_INTEGERS[t.dtype])[:] = np.ascontiguousarray(dev).reshape(-1)


def _strided(flat: np.ndarray, t: torch.Tensor) -> np.ndarray:
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[t.storage_offset() :], tuple(t.shape), tuple(s * item for s in t.stride())
    )


def covers_storage(t: torch.Tensor) -> bool:
    """Whether `t` is its whole storage, densely in row-major order of its base."""
    _, base = _info(t)
    return (
        t.storage_offset() == 0
        and t.is_contiguous()
        and tuple(t.shape) == base
        and t.numel() * t.element_size() == t.untyped_storage().nbytes()
    )


def values(t: torch.Tensor, numerics: Numerics) -> np.ndarray:
    """The tensor's values as the card holds them (a new array of its shape)."""
    return np.array(_strided(storage_values(t, numerics), t))


def write(t: torch.Tensor, host: np.ndarray, numerics: Numerics) -> None:
    """Store `host` (broadcast to t's shape) into t's elements; the rest of its storage keeps
    its values."""
    host = np.broadcast_to(np.asarray(host), tuple(t.shape))
    dtype = np.float32 if t.dtype in FLOATS else _INTEGERS[t.dtype]
    if covers_storage(t):
        write_storage(t, np.ascontiguousarray(host, dtype=dtype), numerics)
        return
    flat = storage_values(t, numerics).copy()
    _strided(flat, t)[...] = host
    write_storage(t, flat, numerics)


def ddr_tensor(t: torch.Tensor, name: str = "") -> DdrTensor | None:
    """The tensor's bytes as the device model's DDR tensor, when the tensor is its whole
    storage (so the bytes are exactly `Layout.generic(t.shape)`); else None."""
    if not covers_storage(t) or t.numel() == 0:
        return None
    layout = at_rest(tuple(t.shape), t.dtype)
    return DdrTensor(layout, sticks(t), t.untyped_storage().data_ptr(), name)
