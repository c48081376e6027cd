"""The ATen decompositions the backend traces with: PyTorch's core-ATen table, with the ops the
device takes better in another form.

    roll(x, shifts, dims)   cat of two slices per rolled dim (core ATen: index_select at
                            computed positions, a gather): the slices and the cat are DMA copies
                            into offsets of one buffer on the device, and no index crosses the
                            host link (HF's sliding-window KV cache rolls its rows every step)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

aten = torch.ops.aten


def _roll(x: torch.Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> Any:
    if not dims or len(shifts) != len(dims):  # a roll of the flattened tensor: core ATen's form
        return NotImplemented
    out = x
    for shift, d in zip(shifts, dims):
        length = out.shape[d]
        s = shift % length if length else 0
        if s:
            out = torch.cat([out.narrow(d, length - s, s), out.narrow(d, 0, length - s)], d)
    return out.clone() if out is x else out  # a cat is a new tensor already


def decompositions() -> dict[Any, Any]:
    """PyTorch's core-ATen decomposition table with ours in place of its entries."""
    from torch._decomp import core_aten_decompositions

    table: dict[Any, Any] = dict(core_aten_decompositions())
    table[aten.roll.default] = _roll
    return table
