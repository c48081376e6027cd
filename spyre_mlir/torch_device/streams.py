"""Simulated time on the device's streams.

Each stream has a clock in the C++ runtime (seconds of simulated device time). Work issued on
a stream starts when the stream's earlier work ends, and advances the clock by its simulated
time: a kernel by its `KernelRecord.time_s`, a host transfer by its bytes over the host link,
a copy on the card by its DDR bytes over the DDR bandwidth. An event records its stream's
clock; `wait_event` moves the waiting stream's clock up to the event's. The host is not
timed: it issues work at once and never waits (`synchronize` returns at once, as every kernel
has run by the time it is launched).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from spyre_mlir.sim.profile import KernelRecord, record_launch, record_transfer
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.cycles import host_transfer_seconds
from spyre_mlir.torch_device import extension

if TYPE_CHECKING:
    from spyre_mlir.sim.interpreter import DeviceModel


def current_id() -> int:
    return int(extension.module().current_stream_id())


def clock(stream_id: int) -> float:
    return float(extension.module().clock(stream_id))


def charge(records: Sequence[KernelRecord]) -> None:
    """Put kernels that ran on the current stream on its clock, one after another."""
    ext = extension.module()
    sid = current_id()
    for r in records:
        r.stream = sid
        r.start_s = ext.clock(sid)
        ext.advance(sid, r.time_s)


@contextmanager
def charged(model: DeviceModel) -> Iterator[None]:
    """Charge the current stream with every kernel `model` launches inside the block."""
    start = len(model.profile.kernels)
    try:
        yield
    finally:
        charge(model.profile.kernels[start:])


def transfer(nbytes: int, config: DeviceConfig) -> None:
    """A host <-> device copy on the current stream: its time over the host link (the link's
    latency, then the bytes), as the profile charges it."""
    if nbytes <= 0:
        return
    record_transfer(nbytes, config, "copy")
    extension.module().advance(current_id(), host_transfer_seconds(nbytes, config))


def device_copy(name: str, read_bytes: int, write_bytes: int, config: DeviceConfig) -> None:
    """A copy within DDR on the current stream, in the profile as a kernel named `name`."""
    record = KernelRecord.copy(name, read_bytes, write_bytes, config)
    charge([record])
    record_launch(record)
