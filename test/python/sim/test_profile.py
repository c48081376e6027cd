"""The profiler API (torch.profiler's habits) and its Chrome trace."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import spyre_mlir
from spyre_mlir.sim.host_timeline import LANES
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.profile import KernelLog, KernelRecord
from spyre_mlir.sim.timing import ENGINES
from spyre_mlir.target.config import DEFAULT_CONFIG, DeviceConfig

FIXTURE = Path(__file__).parents[2] / "fixtures" / "mlp_torch_mlir.mlir"


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()


def test_profile_block_collects_the_launches_inside_it(tmp_path):
    torch._dynamo.reset()
    f = torch.compile(mlp(), backend="spyre")
    x = torch.randn(32, 256)
    with torch.no_grad():
        f(x)  # compile and run once outside the block
        with spyre_mlir.profile() as prof:
            f(x)
    assert len(prof.kernels) == 2  # each matmul with its epilogue (bias + gelu, then bias)
    k = max(prof.kernels, key=lambda k: k.macs)
    assert k.macs == 32 * 256 * 512 or k.macs == 32 * 512 * 256
    assert 0 < k.pt_utilization <= 1 and 0 < k.ddr_utilization <= 1 and 0 < k.attainment <= 1
    assert k.bottleneck in ("pt", "sfp", "ddr")
    table = prof.table()
    assert table.splitlines()[0].split()[:2] == ["kernel", "time"]
    times = [float(line.split()[1]) for line in table.splitlines()[2:4]]
    assert times == sorted(times, reverse=True)  # sorted by time

    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    check_trace(json.loads(path.read_text()), kernels=2)


def check_trace(trace, kernels):
    """Trace Event Format: complete events with name, ts, dur, pid, tid; metadata names threads."""
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    meta = [e for e in events if e["ph"] == "M"]
    assert all({"name", "ts", "dur", "pid", "tid", "cat"} <= e.keys() for e in complete)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)
    launches = [e for e in complete if e["cat"] == "kernel"]
    assert len(launches) == kernels
    assert all(b["ts"] >= a["ts"] + a["dur"] - 1e-6 for a, b in zip(launches, launches[1:]))  # back to back
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert names[0] == "kernels"
    host = [e for e in complete if e["cat"] == "host"]
    for lane in {e["tid"] for e in host}:  # the host runtime's lanes: work one piece at a time
        assert names[lane] in LANES
        spans = sorted((e for e in host if e["tid"] == lane), key=lambda e: e["ts"])
        assert all(b["ts"] >= a["ts"] + a["dur"] - 1e-6 for a, b in zip(spans, spans[1:]))
    instr = [e for e in complete if e["cat"] not in ("kernel", "host")]
    assert {e["cat"] for e in instr} <= set(ENGINES)
    for e in instr:  # every instruction sits on its core's engine thread, inside its launch
        assert names[e["tid"]].endswith(e["cat"]) and names[e["tid"]].startswith("core ")
        at = next(i for i, k in enumerate(launches) if k["name"] == e["args"]["kernel"])
        launch = launches[at]
        assert e["ts"] + e["dur"] <= launch["ts"] + launch["dur"] + 1e-6
        if e["ts"] < launch["ts"]:  # an early load (DeviceConfig.early_loads): during the launch before
            assert e["cat"] == "dma_in" and at > 0 and e["ts"] >= launches[at - 1]["ts"] - 1e-6, e


def test_a_calls_kernels_form_launch_sequences_between_host_waits():
    """The host starts a call's first kernel (launch_overhead_s), the card each later one
    (dispatch_overhead_s), until the host waits for a value: a CPU op's operand (logcumsumexp has
    no device lowering) ends the sequence, and the next kernel is the host's again."""
    torch._dynamo.reset()
    lin1, lin2 = torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)

    def fn(x):
        return torch.softmax(lin2(torch.logcumsumexp(torch.relu(lin1(x)) * 2.0 + 1.0, -1)), -1)

    f = torch.compile(fn, backend="spyre", options={"cache": False})
    x = torch.randn(8, 64)
    with torch.no_grad(), pytest.warns(UserWarning, match="logcumsumexp"):
        f(x)
    with torch.no_grad(), spyre_mlir.profile() as prof:
        f(x)
        f(x)
    cfg = DEFAULT_CONFIG
    for call in (prof.kernels[: len(prof.kernels) // 2], prof.kernels[len(prof.kernels) // 2 :]):
        assert call[0].overhead_s == cfg.launch_overhead_s
        restarts = [k for k in call[1:] if k.overhead_s == cfg.launch_overhead_s]
        assert len(restarts) == 1, [(k.name, k.overhead_s) for k in call]  # after the logcumsumexp
        for k in call[1:]:
            assert k.overhead_s in (cfg.launch_overhead_s, cfg.dispatch_overhead_s)
            assert k.time_s == pytest.approx(k.overhead_s + k.cycles / cfg.clock_hz)
        assert len(call) >= 3, [k.name for k in call]
    # one round trip per call: the logcumsumexp's operand down, its result up, the host op between
    assert prof.host_round_trips == 2
    one_way = cfg.host_link_latency_s + 8 * 128 / cfg.host_link_bytes_per_s  # 8 rows of one stick
    assert prof.host_round_trip_s == pytest.approx(2 * (2 * one_way + cfg.host_op_s))
    assert "host round trips: 2" in prof.table()


def test_profile_block_counts_host_transfers_at_the_link_rate():
    """A steady call moves x (32 x 256) in and y out: 2 x 32 rows x 4 sticks of 128 bytes,
    each direction at the host link's rate (PCIe Gen5 x16, DeviceConfig), each transfer after
    the link's latency; the weights were moved by the first call, outside the block. The
    kernels' total leaves the transfers out, and the call has no host round trip."""
    torch._dynamo.reset()
    f = torch.compile(mlp(), backend="spyre")
    x = torch.randn(32, 256)
    with torch.no_grad():
        f(x)
        with spyre_mlir.profile() as prof:
            f(x)
    moved = 2 * 32 * 4 * 128
    rate = DEFAULT_CONFIG.host_link_bytes_per_s
    assert prof.transfers_bytes == moved
    seconds = 2 * DEFAULT_CONFIG.host_link_latency_s + moved / rate
    assert prof.transfers_s == pytest.approx(seconds, rel=1e-12)
    assert prof.total_time_s == sum(k.time_s for k in prof.kernels)
    assert f"host transfers: {moved / 1e6:.3f} MB, {seconds * 1e6:.2f} us" in prof.table()
    assert prof.host_round_trips == 0 and prof.host_round_trip_s == 0


@pytest.mark.slow  # spyre-run in a subprocess
def test_spyre_run_writes_the_same_trace(tmp_path):
    path = tmp_path / "t.json"
    out = subprocess.run(
        [sys.executable, "-m", "spyre_mlir.tools.spyre_run", str(FIXTURE), "--trace", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"trace: {path}" in out.stdout
    check_trace(json.loads(path.read_text()), kernels=2)


def test_a_device_profile_keeps_its_last_records_and_counts_every_launch():
    """A device model's profile keeps a bounded log (a server's process does not grow with its
    launches); indices count every launch, so `log[before:]` after a call is that call's records
    as with a list, and a dropped record raises rather than a slice coming back short."""
    log = KernelLog(keep=3)
    records = [KernelRecord.copy(f"k{i}", 128, 128, DeviceConfig()) for i in range(10)]
    for r in records[:6]:
        log.append(r)
    assert len(log) == 6 and list(log) == records[:6]  # up to 2 * keep: nothing dropped
    log.append(records[6])
    assert len(log) == 7 and list(log) == records[4:7]  # the oldest beyond keep dropped at once
    before = len(log)
    for r in records[7:9]:
        log.append(r)
    assert log[before:] == records[7:9] and log[-1] is records[8] and log[5] is records[5]
    with pytest.raises(IndexError, match="kernel record 3 was dropped: the device profile keeps the last 3"):
        log[3:]
    with pytest.raises(IndexError, match="kernel record 0 was dropped"):
        log[-9]
    with pytest.raises(IndexError, match="kernel record 9 of 9"):
        log[9]
    del log[7:]  # as the vLLM clock forgets a step's records: a list's semantics
    assert len(log) == 7 and log[-1] is records[6]
    with pytest.raises(IndexError, match="forgets its last records only"):
        del log[2:]
    with pytest.raises(ValueError, match="at least one record"):
        KernelLog(0)
    assert isinstance(DeviceModel(DeviceConfig()).profile.kernels, KernelLog)
