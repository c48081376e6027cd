"""Streams and events in simulated time: each stream's clock advances by the work issued on
it (an eager op's call of its one-op graph at its end-to-end time, the host runtime's work on
its critical path included: sim/host_timeline.py), events read the clocks, and `wait_event`
orders one stream after another."""

import pytest
import torch

import spyre_mlir
from spyre_mlir.sim.profile import STREAM_LANES


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def timed(s, fn):
    """Run fn on stream s between two timing events; (result, events, the simulated seconds of
    the calls and of the kernels outside them)."""
    start, end = torch.spyre.Event(enable_timing=True), torch.spyre.Event(enable_timing=True)
    with torch.spyre.stream(s), spyre_mlir.profile() as prof:
        start.record()
        out = fn()
        end.record()
    work = prof.call_time_s + sum(k.time_s for k in prof.kernels if k.call is None)
    return out, (start, end), work, prof


def test_events_measure_the_work_between_them():
    a, b = randn(128, 256).to("spyre"), randn(256, 512, seed=1).to("spyre")
    s = torch.spyre.Stream()
    assert s.stream_id != torch.spyre.default_stream().stream_id
    _, (start, end), work, prof = timed(s, lambda: a @ b)
    assert work > sum(k.time_s for k in prof.kernels) > 0  # (the first call corrects its program)
    assert start.elapsed_time(end) == pytest.approx(work * 1e3, rel=1e-9)  # milliseconds
    assert all(k.stream == s.stream_id for k in prof.kernels) and prof.calls[0].stream == s.stream_id


def test_wait_event_orders_one_stream_after_another():
    a = randn(256, 256, seed=2).to("spyre")
    s1, s2, s3 = torch.spyre.Stream(), torch.spyre.Stream(), torch.spyre.Stream()
    for s in (s1, s2, s3):  # the three streams start level
        torch.spyre.current_stream().wait_stream(s)
    level = torch.Event(device="spyre", enable_timing=True)
    level.record()
    for s in (s1, s2, s3):
        s.wait_event(level)
    y, (_, produced), t1, _ = timed(s1, lambda: a @ a)
    s2.wait_event(produced)  # s2 consumes y: it starts after s1's matmul
    z, (start2, end2), t2, _ = timed(s2, lambda: y + 1.0)
    _, (start3, end3), t3, _ = timed(s3, lambda: a + 1.0)  # s3 waits for nothing
    assert level.elapsed_time(start2) == pytest.approx(t1 * 1e3, rel=1e-9)
    assert level.elapsed_time(end2) == pytest.approx((t1 + t2) * 1e3, rel=1e-9)
    assert level.elapsed_time(start3) == pytest.approx(0.0, abs=1e-12)
    assert level.elapsed_time(end3) == pytest.approx(t3 * 1e3, rel=1e-9)
    assert torch.equal(z.cpu(), (y + 1.0).cpu())


def test_the_generic_accelerator_apis_reach_the_streams():
    s = torch.Stream(device="spyre")
    prev = torch.accelerator.current_stream()
    torch.accelerator.set_stream(s)
    try:
        assert torch.accelerator.current_stream() == s == torch.spyre.current_stream()
    finally:
        torch.accelerator.set_stream(prev)
    assert torch.spyre.current_stream() == prev
    torch.accelerator.synchronize()
    s.synchronize()
    assert s.query()


def test_the_trace_shows_streams_as_lanes():
    a = randn(64, 128, seed=3).to("spyre")
    s1, s2 = torch.spyre.Stream(), torch.spyre.Stream()
    with spyre_mlir.profile() as prof:
        with torch.spyre.stream(s1):
            a * 2.0
        with torch.spyre.stream(s2):
            a @ a.T
    lanes = {e["tid"] for e in prof.chrome_trace()["traceEvents"] if e.get("cat") == "kernel"}
    assert {STREAM_LANES + s1.stream_id, STREAM_LANES + s2.stream_id} <= lanes
    names = {e["args"]["name"] for e in prof.chrome_trace()["traceEvents"] if e.get("name") == "thread_name"}
    assert f"stream {s1.stream_id}" in names and f"stream {s2.stream_id}" in names
