"""vLLM's device communicator on the spyre platform (docs/vllm-scale.md, "Tensor parallel").

With `--tensor-parallel-size N` vLLM runs one worker per rank, each with its own simulated
card (the device model of its process), and its parallel layers call the tensor-parallel
group's collectives: an all-reduce after each row-parallel linear and the vocabulary-parallel
embedding, an all-gather of the LM head's logits. The platform's `dist_backend` is "spyre", so
the group's device process group is the "spyre" c10d backend (spyre_mlir/distributed), and its
collectives (traced into each step's program as vLLM's custom ops, run by the host between the
program's kernels) go through it. `SpyreCommunicator` runs them inside `card_values`: each is
charged to the card's profile at its time over the card link (distributed/link.py), a
`collective:<kind>` record the step's time counts.
"""

from __future__ import annotations

from typing import Any

import torch
from vllm.distributed.device_communicators.base_device_communicator import DeviceCommunicatorBase

from spyre_mlir.distributed.backend import card_values
from spyre_mlir.frontend.backend import get_device_model


class SpyreDeviceCommunicator(DeviceCommunicatorBase):
    """vLLM's device communicator with every collective charged to the card (module docstring)."""

    def _charged(self) -> Any:
        device = get_device_model()
        return card_values(device.profile, device.config)

    def all_reduce(self, input_: torch.Tensor) -> torch.Tensor:
        with self._charged():
            return super().all_reduce(input_)

    def all_gather(self, input_: torch.Tensor, dim: int = -1) -> torch.Tensor:
        with self._charged():
            return super().all_gather(input_, dim)

    def reduce_scatter(self, input_: torch.Tensor, dim: int = -1) -> torch.Tensor:
        with self._charged():
            return super().reduce_scatter(input_, dim)

    def gather(self, input_: torch.Tensor, dst: int = 0, dim: int = -1) -> torch.Tensor | None:
        with self._charged():
            return super().gather(input_, dst, dim)

    def broadcast(self, tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
        with self._charged():
            return super().broadcast(tensor, src)
