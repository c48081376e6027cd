"""The host-speed machinery computes exactly what the definitions compute (docs/performance.md).

- DL16 by table and in 32-bit arithmetic = the field-by-field definitions;
- host <-> device transfers through strided views = the element-wise layout map;
- batched launches (sim/batch.py) = the cooperative execution, bit for bit, with the same
  simulated time;
- bench/host.py runs (`--quick --json`) and reports numbers (no wall time is asserted);
- bench/host_floor.py (`--seq 32`) records every product the device does.
"""

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.layout import Layout
from spyre_mlir.report.sweep import load_bench
from spyre_mlir.sim import interpreter
from spyre_mlir.sim.memory import DeviceMemory, LazyRowsTensor
from spyre_mlir.sim.numerics import (
    IEEE_FP16,
    dl16_decode,
    dl16_decode_reference,
    dl16_encode,
    dl16_encode_reference,
    fp16_decode,
)
from spyre_mlir.target.config import DeviceConfig

BENCH = Path(__file__).parents[3] / "bench" / "host.py"


# region numerics


def test_dl16_decode_table_is_the_definition():
    allbits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    ref = dl16_decode_reference(allbits)
    assert np.array_equal(dl16_decode(allbits).view(np.uint32), ref.view(np.uint32))
    with np.errstate(invalid="ignore"):
        half = fp16_decode(allbits)
    assert np.array_equal(IEEE_FP16.decode(allbits).view(np.uint32), half.view(np.uint32))
    assert dl16_decode(np.array(0x3E00, dtype=np.uint16)).shape == ()


def test_dl16_encode_is_the_definition():
    """Every exponent and sign with the fraction bits around each rounding boundary, plus a
    million random patterns (all 2^32 patterns were compared once, offline)."""
    high = np.arange(1 << 16, dtype=np.uint64) << 16  # sign, exponent, top 7 fraction bits
    low = np.array(
        [0, 1, 0x1FFF, 0x2000, 0x2001, 0x3FFF, 0x4000, 0x5FFF, 0x6000, 0x6001, 0xBFFF, 0xE000, 0xFFFF], dtype=np.uint64
    )
    bits = (high[:, None] | low[None, :]).reshape(-1)
    rng = np.random.default_rng(8)
    bits = np.concatenate([bits, rng.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64)]).astype(np.uint32)
    x = bits.view(np.float32)
    assert np.array_equal(dl16_encode(x), dl16_encode_reference(x))
    assert dl16_encode(np.float32(1.5)).shape == dl16_encode_reference(np.float32(1.5)).shape == ()


# endregion
# region transfers


def elementwise_to_device(mem: DeviceMemory, x: np.ndarray, lay: Layout) -> np.ndarray:
    off, valid = lay.index_arrays()
    off, valid = off.reshape(-1), valid.reshape(-1)
    bits = np.zeros(lay.num_sticks * lay.lanes, dtype=np.uint16)
    bits[np.flatnonzero(valid)] = mem.numerics.encode(np.ascontiguousarray(x, dtype=np.float32).reshape(-1)[off[valid]])
    return bits


def elementwise_from_device(mem: DeviceMemory, bits: np.ndarray, lay: Layout) -> np.ndarray:
    off, valid = lay.index_arrays()
    off, valid = off.reshape(-1), valid.reshape(-1)
    out = np.empty(max(1, math.prod(lay.shape)), dtype=np.float32)
    out[off[valid]] = mem.numerics.decode(bits[np.flatnonzero(valid)])
    return out.reshape(lay.shape)


shapes = st.lists(st.sampled_from([1, 2, 3, 63, 64, 65, 100, 150]), min_size=1, max_size=4).filter(
    lambda s: math.prod(s) <= 100_000
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(shapes, st.randoms(use_true_random=False))
def test_transfers_are_the_elementwise_layout_map(shape, rnd):
    shape = tuple(shape)
    mem = DeviceMemory(DeviceConfig())
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    generic = Layout.generic(shape, 2)
    layouts = [generic, generic.permuted(tuple(perm))]
    layouts += [
        v for cut in range(len(shape)) if (v := generic.reshaped(shape[:cut] + (math.prod(shape[cut:]),))) is not None
    ]
    if shape[-1] == 1:
        layouts.append(Layout.splat(shape, 2))
    for lay in layouts:
        x = (rng.standard_normal(lay.shape) * 10).astype(np.float32)
        want = elementwise_to_device(mem, x, lay)
        t = mem.to_device(x, lay)
        assert np.array_equal(t.data.reshape(-1).view(np.uint16), want)
        # a source copied whole anyway (permuted, or float64) is rounded before it is placed
        q = list(range(x.ndim))
        rnd.shuffle(q)
        for src, permutation in (
            (np.ascontiguousarray(x.transpose(np.argsort(q))), tuple(q)),
            (x.astype(np.float64), None),
        ):
            other = mem.to_device(src, lay, permutation)
            assert np.array_equal(other.data.reshape(-1).view(np.uint16), want)
            mem.free(other)
        bits = rng.integers(0, 0x7FFE, size=lay.num_sticks * lay.lanes).astype(np.uint16)  # any contents, padding too
        t.data[...] = bits.view(np.uint8).reshape(t.data.shape)
        assert np.array_equal(
            mem.from_device(t).view(np.uint32), elementwise_from_device(mem, bits, lay).view(np.uint32)
        )
        mem.free(t)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([1, 5, 64, 300]), st.sampled_from([1, 32, 63, 64, 65, 100, 384]), st.randoms(use_true_random=False)
)
def test_a_gather_table_uploaded_row_by_row_holds_what_to_device_writes(rows, width, rnd):
    """memory.LazyRowsTensor: the rows a gather reads, and the whole table once anything else
    reads it, are bit for bit what to_device writes (NaN, infinities and values DL16
    saturates or flushes included); rows not yet read are not written."""
    mem = DeviceMemory(DeviceConfig())
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    lay = Layout.generic((rows, width), 2)
    x = (rng.standard_normal((rows, width)) * 10.0 ** rng.integers(-8, 8, size=(rows, width))).astype(np.float32)
    x.reshape(-1)[rng.integers(0, x.size, size=3)] = [np.nan, np.inf, -np.inf]
    eager = mem.to_device(x, lay)
    lazy = mem.to_device_rows(x, lay)
    assert isinstance(lazy, LazyRowsTensor)
    picked = rng.integers(0, rows, size=(3, 4))
    sticks = lay.device_size[0]
    pos = (np.arange(sticks)[None, None, :] * rows + picked[:, :, None]).reshape(3, -1)
    assert np.array_equal(lazy.read_rows(picked, pos), eager.data.take(pos, axis=0))
    unread = np.setdiff1d(np.arange(rows), picked)
    if unread.size:  # not written yet: DDR still zero there
        assert not lazy._data.view(np.uint16).reshape(-1, 64)[np.arange(sticks)[:, None] * rows + unread[None, :]].any()
    assert np.array_equal(lazy.data, eager.data)  # any other read: the whole table
    assert lazy.nbytes == eager.nbytes


def test_only_gather_tables_are_uploaded_row_by_row():
    """The host executor uploads row by row a table that only gathers read, and nothing else:
    here an embedding table (gathered) and a linear layer's weight (loaded by DMA). The
    output is bit for bit the one of whole-table uploads (the same program, its tables
    unmarked: `spyre.to_device gather_table`, spyre-mark-gather-tables)."""
    import dataclasses

    from spyre_mlir.runtime.host_program import HostProgram

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(1000, 128), torch.nn.Linear(128, 64)).eval()
    ids = torch.randint(0, 1000, (1, 32))
    made: list = []
    original_rows, original_of = DeviceMemory.to_device_rows, HostProgram.of

    def spy(self, host, layout, name=""):
        made.append(original_rows(self, host, layout, name))
        return made[-1]

    def run() -> torch.Tensor:
        torch._dynamo.reset()
        with torch.no_grad():
            return torch.compile(model, backend="spyre")(ids)

    DeviceMemory.to_device_rows = spy
    try:
        lazy = run()
        HostProgram.of = staticmethod(  # type: ignore[method-assign]  # every table uploaded whole
            lambda fn, programs: dataclasses.replace(original_of(fn, programs), gather_tables=frozenset())
        )
        whole = run()
    finally:
        DeviceMemory.to_device_rows, HostProgram.of = original_rows, staticmethod(original_of)
    assert len(made) == 1 and isinstance(made[0], LazyRowsTensor) and made[0].layout.shape == (1000, 128)
    assert int(made[0]._filled.sum()) == len(torch.unique(ids))  # only the rows the gather read
    assert torch.equal(lazy, whole)


# endregion
# region batched launches


def tiny_bert() -> torch.nn.Module:
    import transformers  # a test dependency: never skipped

    transformers.utils.logging.set_verbosity_error()
    config = transformers.BertConfig(
        hidden_size=128,
        num_attention_heads=2,
        intermediate_size=512,
        num_hidden_layers=2,
        vocab_size=500,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


def mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()


def model_and_inputs(which: str) -> tuple[torch.nn.Module, dict]:
    if which == "mlp":
        return mlp(), {"input": torch.randn(100, 256, generator=torch.Generator().manual_seed(1))}
    ids = torch.randint(0, 500, (2, 40), generator=torch.Generator().manual_seed(1))
    return tiny_bert(), {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def outputs(model, inputs: dict, calls: int, batch: bool, disable: list[str]):
    """Each call's output (first element) and per-kernel simulated times, on a fresh device,
    and the device's plans of the compiled programs (taken before the reset: they go with the
    compiled graphs)."""
    torch._dynamo.reset()
    interpreter.BATCH = batch
    device = get_device_model()
    device._plans.clear()
    compiled = torch.compile(model, backend="spyre", options={"disable": disable})
    got = []
    try:
        with torch.no_grad():
            for _ in range(calls):
                before = len(device.profile.kernels)
                out = compiled(**inputs)
                out = out.last_hidden_state if hasattr(out, "last_hidden_state") else out
                times = [
                    (k.time_s, k.cycles, k.ddr_bytes, k.ring_bytes, k.macs, k.engine_cycles)
                    for k in device.profile.kernels[before:]
                ]
                got.append((out.numpy().copy(), times))
        plans = list(device._plans.values())
    finally:
        interpreter.BATCH = True
        torch._dynamo.reset()
    return got, plans


@pytest.mark.parametrize("which", ["mlp", pytest.param("bert", marks=pytest.mark.slow)])
@pytest.mark.parametrize("disable", [[], ["multicast"]], ids=["multicast", "spmd"])
def test_batched_launches_are_bit_identical_to_the_cooperative_run(which, disable):
    """With multicast a matmul's chains run core by core (ring sends, per-core tokens); without,
    the programs are SPMD. Every program but a data-dependent one (a gather) runs batched."""
    import warnings

    model, inputs = model_and_inputs(which)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched, plans = outputs(model, inputs, 3, batch=True, disable=disable)
        cooperative, _ = outputs(model, inputs, 2, batch=False, disable=disable)
    reference, times = cooperative[0]
    # calls 2 and 3 run the batched steps; the cooperative run is the definition
    unbatched = [p.name for p in plans if p.batched is None and not p.data_dependent]
    assert plans and not unbatched
    for out, t in batched + cooperative[1:]:
        assert np.array_equal(out.view(np.uint32), reference.view(np.uint32))
        assert t == times  # simulated time per kernel: unchanged


@pytest.mark.parametrize(
    "which, disable",
    [
        ("mlp", []),
        pytest.param("bert", [], marks=pytest.mark.slow),
        pytest.param("bert", ["resident_chains"], marks=pytest.mark.slow),
    ],
)
def test_waves_are_cut_into_parts_that_touch_nothing_in_common(which, disable):
    """A wave of a batched program (sim/batch.py) is cut into consecutive parts, each run
    as steps at once: no two instructions of a part may touch one LX row or DDR stick with
    one of them writing it (checked here on exact rows; the cut compares intervals). With
    multicast, ring sends make some waves conflict: they are cut. (The tiny BERT's cut waves
    are in its output dense, multicast while its MLP is not a resident chain; as a chain it
    has none.)"""
    import warnings

    from spyre_mlir.sim import batch, plans, regroup

    model, inputs = model_and_inputs(which)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, prepared = outputs(model, inputs, 1, batch=True, disable=disable)
    cuts = 0
    for plan in [p for p in prepared if not p.data_dependent]:
        streams = plan.stream_plans()
        for wave in batch.schedule(streams):
            parts = batch._conflict_free(streams, wave)
            assert [x for part in parts for x in part] == wave
            cuts += len(parts) - 1
            for part in parts:
                read: set = set()
                written: set = set()
                for si, pc in part:
                    ins = streams[si].instrs[pc]
                    node = regroup.Node.of(ins, streams[si].cores, 0)  # the rows it reads and writes
                    r = {int(x) for a in node.reads for x in a.reshape(-1)}
                    w = set() if node.write is None else {int(x) for x in node.write.reshape(-1)}
                    if isinstance(ins, plans.DmaPlan):
                        ddr = {("ddr", ins.arg, int(x)) for x in ins.ddr_pos.reshape(-1)}
                        (r if ins.load else w).update(ddr)
                    assert not w & (read | written) and not r & written, (
                        f"{plan.name}: {ins.where} conflicts within a part"
                    )
                    read |= r
                    written |= w
    assert cuts > 0 or (which, disable) == ("bert", [])


# endregion
# region bench


def tiny_bert_of_the_bench(layers: int) -> torch.nn.Module:
    """BERT of bench/host.py's vocabulary (its workers draw token ids from it), otherwise tiny."""
    import transformers

    transformers.utils.logging.set_verbosity_error()
    config = transformers.BertConfig(
        hidden_size=64,
        num_attention_heads=1,
        intermediate_size=128,
        num_hidden_layers=layers,
        vocab_size=30522,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


@pytest.mark.full  # every worker of the bench, on tiny models
def test_bench_host_quick_reports_numbers(monkeypatch, tmp_path):
    """`bench/host.py --quick --repeat 2 --json` reports every figure, the repeated ones as the
    medians of their runs. Its workers run in this process, each through its command line
    (`--worker ...`) and the JSON line it prints, on a tiny BERT of the bench's vocabulary in
    place of BERT-base and MiniLM, and the Inductor worker's compile ends in aot_eager
    (Dynamo and AOTAutograd, as Inductor starts, without its code generation): the bench's
    figures are under test, not the models or PyTorch's compiler (test_bench_host_floor loads
    MiniLM through bench/host.py's `minilm`)."""
    import contextlib
    import io

    import torch._inductor.config as inductor_config

    host = load_bench("host")

    def minilm(seq: int) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
        ids = torch.randint(0, 30522, (1, seq), generator=torch.Generator().manual_seed(0))
        return tiny_bert_of_the_bench(1), {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    def run_worker(*args: str) -> dict:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert host.main(["--worker", *args]) == 0
        torch._dynamo.reset()
        return json.loads(out.getvalue().strip().splitlines()[-1])

    monkeypatch.setattr(host, "_bert", tiny_bert_of_the_bench)
    monkeypatch.setattr(host, "minilm", minilm)
    monkeypatch.setattr(host, "_run_worker", run_worker)
    compile_with = torch.compile

    def compile_without_codegen(model: torch.nn.Module, backend: str = "inductor", **options: object) -> object:
        return compile_with(model, backend="aot_eager" if backend == "inductor" else backend, **options)

    monkeypatch.setattr(torch, "compile", compile_without_codegen)
    # what the Inductor worker changes for itself, restored after the test
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(inductor_config, "fx_graph_cache", inductor_config.fx_graph_cache)
    grad = torch.is_grad_enabled()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            assert host.main(["--quick", "--repeat", "2", "--json"]) == 0
    finally:
        torch.set_grad_enabled(grad)
        torch._dynamo.reset()
    r = json.loads(out.getvalue())
    assert set(r["compile_s_by_layers"]) == {"1", "2"}
    # --repeat: the largest encoder and Inductor measured twice each, reported as medians
    assert r["repeat"] == 2 and len(r["compile_s_2_runs"]) == len(r["inductor_compile_s_2_runs"]) == 2
    assert r["compile_s_by_layers"]["2"] == statistics.median(r["compile_s_2_runs"])
    assert r["inductor_compile_s_2"] == statistics.median(r["inductor_compile_s_2_runs"])
    assert len(r["minilm_device_s_runs"]) == len(r["minilm_eager_s_runs"]) == 2  # MiniLM twice too
    assert r["minilm_device_s"] == statistics.median(r["minilm_device_s_runs"])
    keys = [
        "minilm_device_s",
        "minilm_eager_s",
        "peak_rss_bytes",
        "weight_bytes",
        "fixed_rss_bytes",
        f"inductor_compile_s_{r['inductor_layers']}",
    ]
    keys += ["compile_vs_inductor", "compile_growth", "minilm_vs_eager", "rss_over_fixed_vs_weights"]
    for k in keys:
        assert isinstance(r[k], int | float) and math.isfinite(r[k]), (k, r[k])
    assert all(isinstance(v, float) for v in r["compile_s_by_layers"].values())
    assert r["weight_bytes"] > 0 and r["peak_rss_bytes"] >= r["fixed_rss_bytes"] > 0
    assert host.table(r).startswith("Host speed (python bench/host.py --quick --repeat 2;")


@pytest.mark.full  # MiniLM compiled, run and replayed in a subprocess
def test_bench_host_floor_records_the_forwards_arithmetic():
    """bench/host_floor.py records every product the device does (its multiply-adds are the
    profile's) and some decodes, encodes and stores, and its floor is the sum of its parts."""
    out = subprocess.run(
        [
            sys.executable,
            str(BENCH.parent / "host_floor.py"),
            "--seq",
            "32",
            "--calls",
            "1",
            "--replays",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=3000,
    )
    r = json.loads(out.stdout)
    assert r["seq"] == 32 and r["launches"] > 0
    assert r["product_macs"] == r["device_macs"] > 0
    assert r["decode_elements"] >= r["decode_calls"] > 0 and r["encode_elements"] >= r["encode_calls"] > 0
    # values kept decoded for the steps that read them (some stored without their bits)
    assert r["store_elements"] >= r["store_values_only_elements"] > 0 and r["store_calls"] > 0
    assert r["floor_s"] == r["decode_s"] + r["encode_s"] + r["store_s"] + r["products_f32_s"]
    for k in (
        "decode_s",
        "encode_s",
        "decode_2_threads_s",
        "products_f64_s",
        "products_f32_s",
        "minilm_device_s",
        "minilm_eager_s",
    ):
        assert math.isfinite(r[k]) and r[k] > 0, (k, r[k])


# endregion


def test_gc_pause_restores_the_collector_and_its_cycles_are_collected_after():
    """The compiler holds off CPython's cyclic collector while it builds IR (gc_pause.py):
    it must come back on (but stay off if the caller had turned it off), and cycles made
    during a compile must be collectable afterwards, not leaked."""
    import gc
    import weakref

    from spyre_mlir.gc_pause import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost pause turns it back on
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU()).eval()
    with torch.no_grad():
        compiled = torch.compile(model, backend="spyre")
        compiled(torch.randn(4, 64))  # compiles, then prepares its programs: both paused
    assert gc.isenabled()

    class Node:
        pass

    with gc_paused():
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle made while paused
        ref = weakref.ref(a)
        del a, b
        assert ref() is not None  # not collected during the pause (refcounts cannot free a cycle)
    gc.collect()
    assert ref() is None


def test_host_threads_hand_torchs_threads_to_blas_and_give_them_back():
    """While the device model runs, torch rests on one thread and numpy's BLAS takes the
    threads torch had (interpreter.host_threads); nested uses change nothing more, and both
    are as before afterwards, also when the device model raises."""
    from threadpoolctl import ThreadpoolController

    blas = ThreadpoolController().select(internal_api="openblas")

    def blas_threads() -> int:
        return blas.info()[0]["num_threads"]

    torch_before, blas_before = torch.get_num_threads(), blas_threads()
    try:
        torch.set_num_threads(2)
        with interpreter.host_threads():
            assert (torch.get_num_threads(), blas_threads()) == (1, 2)
            with interpreter.host_threads():
                assert (torch.get_num_threads(), blas_threads()) == (1, 2)
            assert (torch.get_num_threads(), blas_threads()) == (1, 2)
        assert (torch.get_num_threads(), blas_threads()) == (2, blas_before)
        with pytest.raises(RuntimeError), interpreter.host_threads():
            raise RuntimeError("a device error")
        assert (torch.get_num_threads(), blas_threads()) == (2, blas_before)
    finally:
        torch.set_num_threads(torch_before)


def test_a_compiled_graph_leaves_no_source_lines_in_linecache():
    """Dynamo reads the source of the frames it traces into linecache, and again when it builds
    the guards after the backend returns; the backend drops the lines of source files after
    compiling and at the graph's first call (backend._drop_source_lines), so they do not stay
    for the life of the process. The lines registered for generated code (no file behind
    them) stay: a traceback through it still shows them."""
    import linecache

    def file_lines() -> list[str]:
        return [name for name, entry in linecache.cache.items() if len(entry) == 4 and entry[1] is not None]

    generated = "<spyre-test-generated>"
    linecache.cache[generated] = (4, None, ["x = 1\n"], generated)
    try:
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU()).eval()
        torch._dynamo.reset()
        with torch.no_grad():
            torch.compile(model, backend="spyre")(torch.randn(4, 64))
        assert file_lines() == []
        assert linecache.getline(generated, 1) == "x = 1\n"
        assert linecache.getline(__file__, 1) != ""  # read again from the file when asked
    finally:
        linecache.cache.pop(generated, None)
