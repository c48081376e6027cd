"""The device's aten kernels written in Python: making tensors, copies, resize_ and fill_
(every other op reaches the fallback, eager.py).

Copies move values through `storage`: host -> device rounds floats to the device format
(charged to the current stream as a host transfer), device -> host decodes them, device ->
device is a copy within DDR. A copy converts the dtype as PyTorch's `copy_` does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from spyre_mlir.torch_device import state, storage, streams


def _host(t: torch.Tensor) -> np.ndarray:
    """A CPU tensor's values as numpy (bfloat16 widened to float32, exactly)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.resolve_conj().resolve_neg().numpy()


def empty_memory_format(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    sizes = tuple(int(s) for s in size)
    return storage.new(sizes, storage.contiguous_strides(sizes, memory_format), dtype or torch.get_default_dtype())


def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    return storage.new(size, stride, dtype or torch.get_default_dtype())


def _is_spyre(t: torch.Tensor) -> bool:
    return t.device.type == "spyre"


def copy_from(src: torch.Tensor, dst: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """`_copy_from(src, dst)`: dst's elements from src's (broadcast, dtype converted)."""
    config = state.config()
    numerics = state.numerics()
    if tuple(src.shape) != tuple(dst.shape):
        src = src.expand(dst.shape)  # copy_ broadcasts src
    if _is_spyre(dst):
        if _is_spyre(src):
            host = storage.values(src, numerics)
            streams.device_copy("copy", src.numel() * 2, dst.numel() * 2, config)
        else:
            host = _host(src)
            streams.transfer(dst.numel() * storage.element_bytes(dst.dtype), config)
        host = _converted(host, src.dtype, dst.dtype)
        storage.write(dst, host, numerics)
        return dst
    # device -> host
    vals = storage.values(src, numerics)
    streams.transfer(src.numel() * storage.element_bytes(src.dtype), config)
    out = torch.from_numpy(vals)  # (a new C-ordered array; ascontiguousarray would make a 0-d one 1-d)
    if out.dtype != src.dtype:  # a 16-bit float tensor: the device value in its host dtype
        out = out.to(src.dtype)
    dst.copy_(out)
    return dst


def _converted(host: np.ndarray, src: torch.dtype, dst: torch.dtype) -> np.ndarray:
    """Values of dtype `src` as PyTorch converts them into `dst` (through torch, so that a
    float -> int copy truncates and an int -> bool copy tests for nonzero as PyTorch does)."""
    if src == dst or (dst in storage.FLOATS and src in storage.FLOATS):
        return host  # floats are stored as device values whatever their host dtype
    t = torch.from_numpy(np.array(host)).to(dst)
    return _host(t)


def copy_from_and_resize(src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    if tuple(dst.shape) != tuple(src.shape):
        dst.resize_(src.shape)
    return copy_from(src, dst)


def resize_(self: torch.Tensor, size: Any, memory_format: torch.memory_format | None = None) -> torch.Tensor:
    """Resize in place: within the storage when it is large enough, else into a new storage
    (the old elements keep their storage offsets, as PyTorch's resize_ keeps them)."""
    sizes = tuple(int(s) for s in size)
    strides = storage.contiguous_strides(sizes, memory_format)
    offset = int(self.storage_offset())
    need = (offset + math.prod(sizes)) * self.element_size() if math.prod(sizes) else 0
    if need > self.untyped_storage().nbytes():
        grown = storage.new((offset + math.prod(sizes),), (1,), self.dtype)
        old = storage.storage_values(self, state.numerics())
        flat = np.zeros(grown.numel(), dtype=old.dtype)
        flat[: old.size] = old
        storage.write_storage(grown, flat, state.numerics())
        streams.device_copy("resize", old.size * 2, old.size * 2, state.config())
        with torch.no_grad():
            torch.Tensor.set_(self, grown.untyped_storage(), offset, sizes, strides)
        return self
    with torch.no_grad():
        torch.Tensor.set_(self, self.untyped_storage(), offset, sizes, strides)
    return self


def fill_(self: torch.Tensor, value: Any) -> torch.Tensor:
    """Every element to one value: a store of the value's device bits (a copy within DDR)."""
    v = value.item() if isinstance(value, torch.Tensor) else value
    scalar = torch.tensor(v).to(self.dtype)  # PyTorch's conversion of the scalar
    storage.write(self, _host(scalar), state.numerics())
    streams.device_copy("fill", 0, self.numel() * storage.element_bytes(self.dtype), state.config())
    return self


def native_layer_norm(*args: Any) -> Any:
    """Compiled whole (its decomposition for devices other than CPU and CUDA goes through
    batch_norm, which the device does not lower)."""
    from spyre_mlir.torch_device import eager

    return eager.fallback(torch.ops.aten.native_layer_norm.default, *args)


def native_batch_norm(
    input: torch.Tensor,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
) -> Any:
    """In training with running statistics, the op updates them in place, which its schema
    does not say (`_native_batch_norm_legit`'s does): as that op, so that the update reaches
    the spyre tensors wherever it runs."""
    from spyre_mlir.torch_device import eager

    args = (input, weight, bias, running_mean, running_var, training, momentum, eps)
    if training and running_mean is not None and running_var is not None:
        return eager.fallback(torch.ops.aten._native_batch_norm_legit.default, *args)
    return eager.fallback(torch.ops.aten.native_batch_norm.default, *args)


def soft_margin_loss(*args: Any) -> Any:
    """Compiled whole: PyTorch's composite kernel for devices runs log1p(exp(-y x)) op by op,
    and exp's result, stored to the device format between the two, saturates for y x below
    -22 (DL16's largest value is 8.6e9): one graph fuses the two into one pointwise body,
    whose float32 intermediate does not."""
    from spyre_mlir.torch_device import eager

    return eager.fallback(torch.ops.aten.soft_margin_loss.default, *args)


def convolution_overrideable(*args: Any) -> Any:
    """`aten.convolution` on a device other than the CPU's and CUDA's reaches this op, whose
    default kernel raises before the fallback sees it: the convolution, with the same
    arguments, through the fallback (the device path lowers convolutions)."""
    from spyre_mlir.torch_device import eager

    return eager.fallback(torch.ops.aten.convolution.default, *args)


def untraced(fn: Any) -> Any:
    """A kernel Dynamo never traces: a kernel written in Python is a frame like any other, and
    code between two compiled graphs runs under Dynamo's frame hook, which would trace into it."""
    return torch.compiler.disable(fn, recursive=True)


def register(lib: torch.library.Library) -> None:
    """Register the kernels above for the PrivateUse1 key in `lib` (an aten IMPL library)."""
    key = "PrivateUse1"
    for name, fn in (
        ("empty.memory_format", empty_memory_format),
        ("empty_strided", empty_strided),
        ("_copy_from", copy_from),
        ("_copy_from_and_resize", copy_from_and_resize),
        ("resize_", resize_),
        ("fill_.Scalar", fill_),
        ("fill_.Tensor", fill_),
        ("native_layer_norm", native_layer_norm),
        ("convolution_overrideable", convolution_overrideable),
        ("soft_margin_loss", soft_margin_loss),
        ("native_batch_norm", native_batch_norm),
    ):
        lib.impl(name, untraced(fn), key)
