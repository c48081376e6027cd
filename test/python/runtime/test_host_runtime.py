"""The host runtime on the simulated timeline (sim/host_timeline.py): a compiled graph's call in
each runtime mode, the order of its host lanes, and that an optimised mode is never slower."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import spyre_mlir
from spyre_mlir.sim.host_timeline import CORRECTION, GRAPH, PROGRAMS, HostOp, Launch, Transfer, schedule
from spyre_mlir.sim.profile import HOST_LANES
from spyre_mlir.target.config import DEFAULT_CONFIG, RUNTIME_MODES, DeviceConfig

EAGER, AHEAD, ONCE = RUNTIME_MODES


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()


def steady_call(mode, model=None, x=None):
    """A compiled MLP's second call in `mode` (the backend option), in a profile block."""
    torch._dynamo.reset()
    model = model or mlp()
    x = torch.randn(32, 256) if x is None else x
    f = torch.compile(model, backend="spyre", options={"runtime_mode": mode})
    with torch.no_grad():
        f(x)
        with spyre_mlir.profile() as prof:
            f(x)
    return prof


@pytest.mark.parametrize("mode", RUNTIME_MODES)
def test_a_compiled_call_in_each_mode(mode):
    """The call is recorded as its steps, laid out in the mode the backend option names. In
    eager-patching each launch's graph construction, then its program correction (the host
    step, then the patched program over the link), precede the kernel they patch, and the next
    launch's work waits for that kernel; in patched-once a steady call patches nothing and
    costs what the kernels and transfers cost, as the timing model charged before."""
    prof = steady_call(mode)
    assert len(prof.calls) == 1 and len(prof.kernels) == 2
    call = prof.calls[0]
    tl = call.timeline()
    assert tl.mode == mode and call.launches == 2
    assert prof.call_time_s == tl.total_s
    assert tl.total_s == pytest.approx(tl.kernels_s + tl.dispatch_s + tl.runtime_s + tl.link_s + tl.host_ops_s)
    kernel_time = sum(k.time_s for k in prof.kernels)
    if mode == ONCE:
        assert not any(s.patch for s in call.steps if isinstance(s, Launch))  # the addresses are the first call's
        assert tl.runtime_s == 0 and not [s for s in tl.spans if s.lane != "link: data"]
        assert tl.total_s == pytest.approx(kernel_time + prof.transfers_s, rel=1e-12)
        assert prof.host_runtime_share == 0
        return
    by_lane = {lane: [s for s in tl.spans if s.lane == lane] for lane in (GRAPH, CORRECTION, PROGRAMS)}
    kernels = [k for k in prof.kernels]
    assert len(by_lane[CORRECTION]) == len(by_lane[PROGRAMS]) == 2
    tensor_nodes = 1 if mode == EAGER else 0
    assert len(by_lane[GRAPH]) == 2 + 2 * tensor_nodes  # a node per launch; in eager-patching per transfer too
    cfg = DEFAULT_CONFIG
    previous_end = 0.0
    for i, k in enumerate(kernels):
        graph = [s for s in by_lane[GRAPH] if s.name == k.name][0]
        correct, program = by_lane[CORRECTION][i], by_lane[PROGRAMS][i]
        start, seconds = tl.launches[i]
        assert previous_end <= graph.start  # the launch before has finished
        assert graph.start + graph.seconds <= correct.start + 1e-15
        assert correct.start + correct.seconds <= program.start + 1e-15
        assert program.start + program.seconds <= start + 1e-15
        assert graph.seconds == pytest.approx(cfg.graph_kernel_s + tensor_nodes * k.arguments * cfg.graph_tensor_s)
        assert correct.seconds == pytest.approx(k.ddr_addresses * cfg.patch_address_s)
        assert program.seconds == pytest.approx(
            cfg.host_link_latency_s + k.instructions * cfg.instruction_bytes / cfg.host_link_bytes_per_s
        )
        assert seconds == pytest.approx(cfg.launch_overhead_s + k.time_s - k.overhead_s)  # the host starts each
        previous_end = start + seconds
    assert 0 < prof.host_runtime_share < 1 and tl.runtime_s > 0
    assert f"host runtime {tl.runtime_s * 1e6:.2f}" in prof.table()
    # the trace shows the host lanes, each piece before the kernel it patches
    trace = prof.chrome_trace()["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in trace if e.get("name") == "thread_name"}
    host = [e for e in trace if e.get("cat") == "host"]
    launches = [e for e in trace if e.get("cat") == "kernel"]
    assert {names[e["tid"]] for e in host} >= {GRAPH, CORRECTION, PROGRAMS, "link: data"}
    assert all(e["tid"] >= HOST_LANES for e in host)
    for i, k in enumerate(launches):
        program = [e for e in host if names[e["tid"]] == PROGRAMS][i]
        assert program["name"] == k["name"] and program["ts"] + program["dur"] <= k["ts"] + 1e-6


def test_the_optimised_modes_are_never_slower():
    """For the same call, a steady one and a first one (which patches every program in
    patched-once too): patched-once < transfers-ahead < eager-patching."""
    torch._dynamo.reset()
    f = torch.compile(mlp(), backend="spyre")
    x = torch.randn(32, 256)
    with torch.no_grad(), spyre_mlir.profile() as prof:
        f(x)
        f(x)
    first, steady = prof.calls
    assert all(s.patch for s in first.steps if isinstance(s, Launch))
    for call in (first, steady):
        e, a, o = (call.timeline(m).total_s for m in RUNTIME_MODES)
        assert o < a < e, (o, a, e)
    # patched-once corrects every program at the first call (while the weights go up: off the
    # critical path here), none at the next
    assert first.timeline(ONCE).work_s[CORRECTION] > 0 and CORRECTION not in steady.timeline(ONCE).work_s


def test_patched_once_patches_where_a_native_tensor_moved():
    """A compiled graph on native device tensors reads them where they are: its programs are
    patched again when a tensor is another one (a new place in DDR), not when it is the same.
    A host tensor's value has the graph's own place: sent anew, it corrects nothing."""
    torch._dynamo.reset()
    model = mlp()
    f = torch.compile(model, backend="spyre")
    x = torch.randn(32, 256)
    with torch.no_grad():
        f(x)
        model[2].weight.mul_(0.5)  # sent again, into its place
        with spyre_mlir.profile() as host:
            f(torch.randn(32, 256))
        xs = torch.randn(32, 256).to("spyre")
        d = torch.compile(lambda a, b: (a @ b).relu(), backend="spyre")
        w = torch.randn(256, 128).to("spyre")
        d(xs, w)
        with spyre_mlir.profile() as same:
            d(xs, w)
        with spyre_mlir.profile() as moved:
            d(torch.randn(32, 256).to("spyre"), w)
    assert not any(s.patch for s in host.calls[0].steps if isinstance(s, Launch))
    assert [s.patch for s in same.calls[0].steps if isinstance(s, Launch)] == [False]
    assert [s.patch for s in moved.calls[0].steps if isinstance(s, Launch)] == [True]
    tl = moved.calls[0].timeline()
    assert tl.mode == ONCE and tl.runtime_s > 0 and [s.lane for s in tl.spans] == [CORRECTION, PROGRAMS]


def test_the_native_device_charges_its_launch_path_to_the_stream():
    """An eager op on spyre tensors is a call of a one-op graph: the stream's clock advances by
    the call's end-to-end time in the device's runtime mode (`torch.spyre.configure`, at any
    time for the host runtime's parameters), which in eager-patching holds the graph
    construction and the program's correction before the kernel; in patched-once the first
    call patches, a repeat on the same tensors does not."""
    a = torch.randn(128, 256).to("spyre")
    b = torch.randn(256, 128).to("spyre")
    mode = torch.spyre.configure().runtime_mode
    assert mode == ONCE
    times = {}
    try:
        for m in (EAGER, ONCE):
            torch.spyre.configure(runtime_mode=m)
            for _ in range(2):
                start = torch.spyre.clock()
                with spyre_mlir.profile() as prof:
                    a @ b
                elapsed = torch.spyre.clock() - start
                (call,) = prof.calls
                tl = call.timeline()
                # (the op's out= form copies the product into its destination: a copy on the card)
                (k,) = [k for k in prof.kernels if k.call == call.number]
                rest = sum(k.time_s for k in prof.kernels if k.call is None)
                assert tl.mode == m and elapsed == pytest.approx(tl.total_s + rest, rel=1e-12)
                assert k.start_s == pytest.approx(start + tl.launches[0][0], rel=1e-12)
                times.setdefault(m, []).append((elapsed - rest, tl.runtime_s, k.time_s))
    finally:
        torch.spyre.configure(runtime_mode=mode)
    (e1, r1, k1), (e2, r2, k2) = times[EAGER]
    assert r1 > 0 and r2 > 0 and e2 == pytest.approx(r2 + k2 - k.overhead_s + DEFAULT_CONFIG.launch_overhead_s)
    (o1, q1, _), (o2, q2, k2) = times[ONCE]
    assert q1 > 0 and q2 == 0 and o2 == pytest.approx(k2, rel=1e-12)  # (as before the host runtime was modelled)
    assert o2 < e2


def launch_steps():
    launch = st.builds(
        Launch,
        name=st.just("k"),
        compute_s=st.floats(0, 1e-3),
        overhead_s=st.sampled_from([DEFAULT_CONFIG.launch_overhead_s, DEFAULT_CONFIG.dispatch_overhead_s]),
        arguments=st.integers(1, 8),
        addresses=st.integers(0, 10_000),
        instructions=st.integers(0, 50_000),
        host_started=st.booleans(),
        patch=st.booleans(),
    )
    transfer = st.builds(Transfer, nbytes=st.integers(0, 1 << 24), kind=st.just("argument"), to_device=st.booleans())
    host_op = st.builds(HostOp, seconds=st.floats(0, 1e-4))
    return st.lists(st.one_of(launch, transfer, host_op), max_size=30)


@settings(max_examples=200, deadline=None)
@given(steps=launch_steps(), scale=st.floats(0, 10))
def test_no_call_is_slower_in_a_more_optimised_mode(steps, scale):
    """Whatever a call's steps and the host runtime's costs: patched-once <= transfers-ahead
    <= eager-patching, and each mode's time is the sum of its parts."""
    cfg = DeviceConfig(
        graph_kernel_s=scale * 1e-5, graph_tensor_s=scale * 1e-6, patch_address_s=scale * 1e-8, instruction_bytes=32
    )
    tls = [schedule(steps, cfg, m) for m in RUNTIME_MODES]
    e, a, o = (tl.total_s for tl in tls)
    assert o <= a * (1 + 1e-12) and a <= e * (1 + 1e-12)
    for tl in tls:
        parts = tl.kernels_s + tl.dispatch_s + tl.runtime_s + tl.link_s + tl.host_ops_s
        assert tl.total_s == pytest.approx(parts, rel=1e-9, abs=1e-15)
        assert all(start >= 0 and seconds >= 0 for start, seconds in tl.launches)


@pytest.mark.slow  # a Llama generating
def test_a_resident_kv_cache_keeps_a_decode_step_patched():
    """Generation with a static cache: the weights and the KV cache keep the graph's places, so
    in patched-once a warm generate's calls correct no program and cost their kernels and
    transfers alone."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch._dynamo.reset()
    cfg = LlamaConfig(
        vocab_size=256,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).eval()
    model.forward = torch.compile(model.forward, backend="spyre")
    ids = torch.randint(0, 256, (1, 8))
    with torch.no_grad():
        model.generate(ids, max_new_tokens=4, do_sample=False, cache_implementation="static")
        with spyre_mlir.profile() as prof:
            model.generate(ids, max_new_tokens=4, do_sample=False, cache_implementation="static")
    assert len(prof.calls) == 4  # the prefill and three decode steps
    for call in prof.calls:
        assert not any(s.patch for s in call.steps if isinstance(s, Launch))
        tl = call.timeline()
        assert tl.runtime_s == 0 and tl.total_s == pytest.approx(tl.kernels_s + tl.dispatch_s + tl.link_s)
        assert call.timeline(EAGER).total_s > 2 * tl.total_s  # (tiny kernels: the host runtime dominates)
