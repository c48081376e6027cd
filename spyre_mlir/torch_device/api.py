"""`torch.spyre`: the device module PyTorch finds for the "spyre" device.

x = torch.randn(4, 64).to("spyre")         # DL16 on the simulated card
s = torch.spyre.Stream()
with torch.spyre.stream(s):
    y = x @ x.T                            # compiled once, run by the device model on s
torch.spyre.current_stream().wait_stream(s)
torch.spyre.memory_allocated()             # device bytes of live tensors
torch.spyre.clock(s)                       # simulated seconds on s
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from spyre_mlir.torch_device import extension, state, streams

configure = state.configure
set_strict = state.set_strict


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def set_device(device: Any) -> None:
    idx = torch.device(device).index if not isinstance(device, int) else device
    if idx not in (None, 0):
        raise RuntimeError(f"spyre: one device (index 0), not {device}")


def is_initialized() -> bool:
    return True


def _is_in_bad_fork() -> bool:
    return False


def _lazy_init() -> None:
    pass


def manual_seed(seed: int) -> None:
    """Nothing to seed: random numbers for spyre tensors are drawn by the host's generator,
    which `torch.manual_seed` seeds (and which calls this)."""


manual_seed_all = manual_seed


# The host's generator is the device's: these are `torch.get_rng_state`/`set_rng_state` under
# another name. Dynamo does not trace them (as it does not trace `torch.cuda`'s): a compiled
# function that forks the RNG (`torch.random.fork_rng`, PyTorch's `freeze_rng_state`, which calls
# them under `no_dispatch()`) would otherwise reach `torch.set_rng_state` inside the trace.
@torch.compiler.disable
def get_rng_state(device: Any = None) -> torch.Tensor:
    return torch.get_rng_state()


@torch.compiler.disable
def set_rng_state(new_state: torch.Tensor, device: Any = None) -> None:
    torch.set_rng_state(new_state)


# ------------------------------------------------------------------ streams and events
class Stream(torch.Stream):
    """A stream of the spyre device (ids from a pool of 32; 0 is the default stream)."""

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> Stream:
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device="spyre", priority=priority)


def Event(enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> torch.Event:
    """An event of the spyre device (a `torch.Event`: PyTorch's event methods take no
    subclass), recording a stream's simulated clock."""
    return torch.Event(device="spyre", enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


def current_stream(device: Any = None) -> torch.Stream:
    return torch.accelerator.current_stream(torch.device("spyre", 0))


def default_stream(device: Any = None) -> torch.Stream:
    return torch.Stream(stream_id=0, device_index=0, device_type=current_stream().device_type)


def set_stream(stream: torch.Stream) -> None:
    torch.accelerator.set_stream(stream)


@contextmanager
def stream(s: torch.Stream | None) -> Iterator[None]:
    """Issue the block's work on `s` (None: leave the current stream)."""
    if s is None:
        yield
        return
    prev = current_stream()
    set_stream(s)
    try:
        yield
    finally:
        set_stream(prev)


def synchronize(device: Any = None) -> None:
    """Returns at once: the device model has run every kernel by the time it is launched."""


def clock(s: torch.Stream | None = None) -> float:
    """The simulated time (seconds) at the end of the work issued on `s` (default: current)."""
    return streams.clock((s or current_stream()).stream_id)


# ------------------------------------------------------------------ memory
def memory_allocated(device: Any = None) -> int:
    """Device bytes of the live spyre tensors (whole sticks, as the card would hold them)."""
    return int(extension.module().memory_allocated())


def max_memory_allocated(device: Any = None) -> int:
    return int(extension.module().max_memory_allocated())


def reset_peak_memory_stats(device: Any = None) -> None:
    extension.module().reset_peak_memory_stats()


def memory_reserved(device: Any = None) -> int:
    """As allocated: the allocator keeps no cache."""
    return memory_allocated()


def max_memory_reserved(device: Any = None) -> int:
    return max_memory_allocated()


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) usable DDR bytes."""
    total = int(extension.module().memory_limit())
    return total - memory_allocated(), total


def empty_cache() -> None:
    """Nothing is cached."""


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Let tensors take at most `fraction` of the card's usable DDR (torch.OutOfMemoryError past it)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"spyre: a memory fraction is in [0, 1], not {fraction}")
    extension.module().set_memory_limit(int(fraction * state.config().ddr_usable_bytes))
