"""Simulated time on the device's streams.

Each stream has a clock in the C++ runtime (seconds of simulated device time). Work issued on
a stream starts when the stream's earlier work ends, and advances the clock by its simulated
time: a call of a compiled graph (an eager op's, or a `torch.compile` graph's) by its
end-to-end time in the device's runtime mode, the host runtime's work on its critical path
included (`CallRecord.total_s`, sim/host_timeline.py), each of its kernels starting where
that timeline starts it; a kernel outside a call by its `KernelRecord.time_s`; a host transfer
by its bytes over the host link; a copy on the card by its DDR bytes over the DDR bandwidth.
An event records its stream's clock; `wait_event` moves the waiting stream's clock up to the
event's. Beyond the host runtime's work, the host is not timed: it issues work at once and
never waits (`synchronize` returns at once, as every kernel has run by the time it is
launched).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from spyre_mlir.sim.profile import CallRecord, KernelRecord, record_launch, record_transfer
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.cycles import host_transfer_seconds
from spyre_mlir.torch_device import extension

if TYPE_CHECKING:
    from spyre_mlir.sim.interpreter import DeviceModel


def current_id() -> int:
    return int(extension.module().current_stream_id())


def clock(stream_id: int) -> float:
    return float(extension.module().clock(stream_id))


def charge(records: Sequence[KernelRecord], calls: Sequence[CallRecord] = ()) -> None:
    """Put work that ran on the current stream on its clock, one piece after another: a call
    (of `calls`) at its end-to-end time, each of its kernels where its timeline starts it; a
    kernel outside those calls at its own time."""
    ext = extension.module()
    sid = current_id()
    by_number = {c.number: c for c in calls}
    placed: set[int] = set()

    def place(call: CallRecord) -> float:
        if call.number not in placed:
            placed.add(call.number)
            call.stream, call.start_s = sid, ext.clock(sid)
            ext.advance(sid, call.total_s)
        assert call.start_s is not None
        return call.start_s

    for r in records:
        r.stream = sid
        call = by_number.get(r.call) if r.call is not None else None
        if call is None:
            r.start_s = ext.clock(sid)
            ext.advance(sid, r.time_s)
        else:
            r.start_s = place(call) + call.timeline().launches[r.call_launch][0]
    for call in calls:  # (a call without kernels: CPU ops and transfers)
        place(call)


@contextmanager
def charged(model: DeviceModel) -> Iterator[None]:
    """Charge the current stream with every call and kernel `model` runs inside the block."""
    start, first_call = len(model.profile.kernels), len(model.profile.calls)
    try:
        yield
    finally:
        charge(model.profile.kernels[start:], model.profile.calls[first_call:])


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
