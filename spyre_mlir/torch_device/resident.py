"""Compiled graphs on spyre tensors: arguments used where they are, results kept there.

`frontend/backend.py` hands a call whose tensors are spyre tensors here: each argument
becomes a `DeviceInput` (its DDR bytes, when they are the whole storage in its generic
layout, and its values for a relayout or a host op), the kernels are charged to the current
stream, and the results become new spyre tensors (a write into DDR, no host transfer). A call
that mixes spyre and host tensors is refused, naming the tensor, as PyTorch refuses a mixed
call between devices.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from spyre_mlir.runtime.host import DeviceInput, Executable
from spyre_mlir.torch_device import state, storage, streams


def on_spyre(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "spyre"


def check_one_device(args: Sequence[Any], what: str = "the compiled call") -> None:
    devices = {a.device.type for a in args if isinstance(a, torch.Tensor)}
    if len(devices) <= 1:
        return
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.device.type != "spyre":
            raise RuntimeError(
                f"spyre: argument {i} of {what} (a {a.dtype} tensor of shape {tuple(a.shape)}) is on {a.device}, "
                f"other arguments on spyre: expected all tensors on one device; move it with .to('spyre')"
            )


def device_input(a: torch.Tensor) -> DeviceInput:
    numerics = state.numerics()
    mine = storage.ddr_tensor(a) if a.dtype in storage.FLOATS else None
    return DeviceInput(mine, functools.partial(storage.values, a, numerics))


def new_tensor(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """A new spyre tensor holding `values` (device values already: the write is exact)."""
    shape = tuple(values.shape)
    out = storage.new(shape, storage.contiguous_strides(shape), dtype)
    storage.write(out, values, state.numerics())
    return out


def run(
    exe: Executable,
    args: Sequence[Any],
    mutated: dict[int, int],
    out_dtypes: Sequence[torch.dtype],
) -> tuple[torch.Tensor, ...]:
    """One call of a compiled graph on spyre tensors."""
    check_one_device(args)
    inputs = [device_input(a) if isinstance(a, torch.Tensor) else a for a in args]
    with streams.charged(exe.model):
        outs = exe(*inputs, device_outputs=True)
    config = state.config()
    for j, k in mutated.items():  # the new contents into the argument's storage, on the card
        a = args[j]
        new = np.asarray(outs[k])
        with torch.no_grad():
            storage.write(a, new, state.numerics())
        streams.device_copy("write_back", new.size * 2, new.size * 2, config)
    return tuple(new_tensor(np.asarray(o), dt) for o, dt in zip(outs, out_dtypes))
