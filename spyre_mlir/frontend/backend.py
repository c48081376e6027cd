"""`torch.compile(model, backend="spyre")`: Dynamo -> aot_autograd (core-ATen decompositions,
inference) -> FX importer -> spyre-pipeline -> the reference device model.

    torch.compile(model, backend="spyre", options={
        "strict": False,          # True: an unsupported op raises, naming it
        "numerics": "dl16",       # or "ieee-fp16"
        "cores": 32,              # any DeviceConfig field may be set here
        "dump_ir": "dir",         # IR after each stage, in dir/g<N>/ (also SPYRE_DUMP_IR=dir)
        "report": "r.html",       # each graph's explorer report, written at its first call
    })

Each graph is compiled once (Dynamo caches per graph and guards; `STATS.compiles` counts our
compilations). Parameters stay resident on the device model after the first call; a parameter updated in
place or replaced is sent again and its old copy freed (`ParamKey` says what is seen: a write
through `p.data` to part of a tensor may not be).
Outputs come back in the dtype eager PyTorch would give.

Ops the device cannot take run on the CPU (PyTorch eager) inside the compiled graph, with one
warning per graph naming them and their counts; integer/boolean index and mask ops stay on the
host by design, silently. `strict=True` raises instead, naming the op and why.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import linecache
import os
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.common_subexpression_elimination import cse

from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as torch_dialect
from spyre_mlir.frontend.buckets import (
    BucketPlan,
    NotBucketable,
    host_int_outputs,
    ints_as_tensors,
    plan_buckets,
    symbolic_sizes,
)
from spyre_mlir.frontend.compile_cache import (
    CachedGraph,
    CompileCache,
    cache_dir,
    cache_enabled,
    graph_key,
    rename_graph,
)
from spyre_mlir.frontend.decompositions import decompositions
from spyre_mlir.frontend.fourier import real_fourier
from spyre_mlir.frontend.fx_importer import import_fx_graph
from spyre_mlir.frontend.random_layout import eager_draw_order
from spyre_mlir.frontend.storage_views import rebase_as_strided
from spyre_mlir.gc_pause import gc_paused
from spyre_mlir.lowering.convert_torch_to_spyre import host_ops
from spyre_mlir.pipeline import KernelRefused, Optimizations, run_pipeline
from spyre_mlir.report.capture import Capture
from spyre_mlir.runtime.host import Executable
from spyre_mlir.runtime.resident import ResidentArguments, SharedKey
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.transforms.spyre_track_origins import SpyreTrackOriginsPass


class SpyreCompileError(RuntimeError):
    """The device path cannot take this graph (strict mode); the message names the op."""


@dataclass
class GraphReport:
    """Where the ops of one compiled graph run."""

    name: str
    torch_ops: int
    """Compute ops in the imported graph (constants and lists not counted), equal pure
    computations counted once (the pipeline's cse makes them one value, which runs where it runs)."""
    host_by_design: Counter
    """Ops on integer/boolean tensors, left on the host as on the real stack."""
    cpu_fallback: Counter
    """Float ops without a device lowering, run on the CPU."""
    cpu_reasons: dict[str, str] = dataclasses.field(default_factory=dict)
    """Why each of them runs on the CPU: op name -> reason (the first op's of that name)."""
    report: str | None = None
    """Where its explorer report was written (the `report` option), once it was."""
    module: Callable[[], ModuleOp | None] = dataclasses.field(default=lambda: None, repr=False, compare=False)
    """Its compiled module while the compiled graph lives (a weak reference), for inspection."""

    @property
    def device_fraction(self) -> float:
        """Share of the graph's compute ops that run on the device."""
        on_host = sum(self.host_by_design.values()) + sum(self.cpu_fallback.values())
        return 1.0 - on_host / self.torch_ops if self.torch_ops else 1.0


@dataclass
class CompileStats:
    compiles: int = 0
    """Graphs compiled by the spyre backend (a cached call adds nothing)."""
    cache_loads: int = 0
    """Graphs loaded from the compile cache on disk instead of compiled."""
    fallbacks: int = 0
    """Graphs with ops that ran on the CPU because the device path could not take them."""
    graphs: list[GraphReport] = dataclasses.field(default_factory=list)
    """One report per compiled graph, in compile order."""
    compile_s: float = 0.0
    """Seconds the backend spent compiling those graphs itself: the import into xDSL and the
    pipeline (not Dynamo's trace, aot_autograd, a cache load or the first call)."""


STATS = CompileStats()
_DEVICES: dict[DeviceConfig, DeviceModel] = {}


def _distinct_compute_ops(module: ModuleOp) -> int:
    """The torch compute ops of an imported module, equal pure computations counted once (as
    the pipeline's cse leaves them): otherwise an op merged into an equal one would count as
    neither on the host nor the CPU, that is, as a device op."""
    merged = module.clone()
    cse(merged)
    return len(host_ops(merged.walk()))


def get_device_model(config: DeviceConfig | None = None) -> DeviceModel:
    """The process-wide device model for a configuration (shared by every compiled graph)."""
    config = config or DeviceConfig()
    if config not in _DEVICES:
        _DEVICES[config] = DeviceModel(config)
    return _DEVICES[config]


@dataclasses.dataclass(frozen=True)
class BackendOptions:
    """The spyre backend's options (torch.compile(..., options={...})) besides DeviceConfig's fields."""

    strict: bool = False
    """Refuse a graph with any op on the CPU (SpyreCompileError) instead of running it there."""
    dump_ir: str | None = None
    """A directory for every pass's IR (as SPYRE_DUMP_IR)."""
    optimizations: Optimizations = Optimizations()
    """`disable`: a list of Optimizations switches to turn off, or "all"."""
    buckets: bool = True
    """Run a graph whose length Dynamo made symbolic padded to a length bucket where the padding
    is proven harmless (frontend/buckets.py): one compile per bucket, not per length."""
    cache: bool = True
    """Keep compiled graphs in the compile cache on disk, and load them (frontend/compile_cache.py;
    SPYRE_CACHE=0 turns it off for the process)."""
    report: str | None = None
    """A path: each graph's explorer report (spyre_mlir/report/), written when the graph is first
    called, the first graph's at the path, later ones' beside it named after the graph. A
    reported graph is compiled with its torch ops numbered (spyre-track-origins), never loaded
    from the compile cache."""

    @property
    def dump_dir(self) -> str | None:
        """Where every pass's IR goes: `dump_ir`, else SPYRE_DUMP_IR, else nowhere."""
        return self.dump_ir or os.environ.get("SPYRE_DUMP_IR") or None


def _parse_options(options: dict[str, Any] | None) -> tuple[DeviceConfig, BackendOptions]:
    opts = dict(options or {})
    strict = bool(opts.pop("strict", False))
    dump_ir = opts.pop("dump_ir", None)
    report = opts.pop("report", None)
    if report is not None and not isinstance(report, str | os.PathLike):
        raise SpyreCompileError(f"spyre backend option report: a file path, got {report!r}")
    disable = opts.pop("disable", ())
    cache = opts.pop("cache", True)
    buckets = opts.pop("buckets", True)
    for name, value in (("cache", cache), ("buckets", buckets)):
        if not isinstance(value, bool):
            raise SpyreCompileError(f"spyre backend option {name}: True or False, got {value!r}")
    fields = {f.name for f in dataclasses.fields(DeviceConfig)}
    unknown = sorted(set(opts) - fields)
    if unknown:
        raise SpyreCompileError(
            f"unknown spyre backend option(s) {unknown}; known: strict, dump_ir, disable, cache, buckets, report, "
            f"{', '.join(sorted(fields))}"
        )
    config = DeviceConfig().replace(**opts)
    config.validate()
    try:
        optimizations = Optimizations.none() if disable == "all" else Optimizations().without(*disable)
    except ValueError as e:
        raise SpyreCompileError(f"spyre backend option disable: {e}") from None
    return config, BackendOptions(
        strict, dump_ir, optimizations, buckets, cache, None if report is None else str(report)
    )


PARAM_SAMPLE_RUNS, PARAM_SAMPLE_RUN = 4, 64
"""A parameter's residency key holds 4 runs of 64 consecutive values of the flattened tensor,
at its start, a third, two thirds and its end: a few pages of it (spread single values would
touch a page each, and a page read of a mapped weights file brings its neighbours: 16 MiB
more peak memory for MiniLM, whose 30522-row embedding table is otherwise read a row at a
time, memory.LazyRowsTensor)."""


@functools.lru_cache(maxsize=256)
def _sample_positions(size: int) -> np.ndarray:
    starts = np.linspace(0, max(size - PARAM_SAMPLE_RUN, 0), PARAM_SAMPLE_RUNS).astype(np.int64)
    return (
        np.unique(np.minimum(starts[:, None] + np.arange(PARAM_SAMPLE_RUN), size - 1).reshape(-1))
        if size
        else np.zeros(0, np.int64)
    )


class ParamKey(SharedKey):
    """What a parameter's device copy stands for; equal keys = the copy is still right.

        key(p) = (p by weak reference, p._version, p's data pointer, p's values at
                  _sample_positions (4 runs of 64, spread over it), as bits)

    Equal only for the same live tensor: a new tensor is another one even where it took a
    freed tensor's id (a key of (id, version) would give it the freed one's stale copy). An in-place
    update through the parameter bumps its version; `p.data = t` moves its data pointer; a
    write through `p.data` (which bypasses the version counter: `p.data.normal_()`,
    `p.data += delta`) changes the sampled values unless it changes none of them: such a
    write of a part of the tensor is not seen, and the device keeps the old copy (write through
    the parameter under torch.no_grad() instead)."""

    __slots__ = ("ref", "version", "data_ptr", "sample", "identity")

    def __init__(self, p: torch.Tensor, host: np.ndarray, bumps: int = 0):
        """The key of `p` as it is, or as it will be after `bumps` more version bumps that
        change nothing (aot_autograd's, for an input the graph wrote and we wrote back)."""
        self.ref = weakref.ref(p)
        self.identity = id(p)
        """The tensor's: its device copies are shared by every graph on the device model
        (runtime/resident.py `ResidentArguments`); equal keys also need the same live tensor."""
        self.version = p._version + bumps
        self.data_ptr = p.data_ptr()
        flat = host.reshape(-1)
        self.sample = flat.take(_sample_positions(flat.size)).tobytes()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParamKey):
            return False
        if (self.version, self.data_ptr, self.sample) != (other.version, other.data_ptr, other.sample):
            return False
        mine = self.ref()
        return mine is not None and mine is other.ref()

    __hash__ = None  # type: ignore[assignment]  # compared, never hashed: None is Python's mark of that

    def owner(self) -> torch.Tensor | None:
        return self.ref()


def refresh_resident(t: torch.Tensor, config: DeviceConfig | None = None) -> int:
    """`t` changed on the host outside any program (a KV cache's pages received from another
    card): its device copies on the device model are written from it in place, in their
    layouts, and keep serving under its new key, so the next program does not upload it over
    the host link (the caller charges how the values reached the card). Returns the copies
    written (0: the card holds none; the next program uploads it). The new key is the
    tensor's as it is: right for a program compiled outside aot_autograd (vLLM's steps), whose
    runtime bumps a written input's version once more before the next call (that call then
    finds the key stale and uploads the tensor: a transfer, never a stale value)."""
    model = get_device_model(config)
    table = ResidentArguments.of(model)
    host = _host_array(t)
    written = 0
    for slot, (key, dev) in list(table.held.items()):
        if slot[0] != id(t) or key.owner() is not t:
            continue
        _, _, permutation, rows = slot
        if rows:  # a table uploaded row by row as gathers read it: dropped, read again from the host
            del table.held[slot]
            model.memory.free(dev)
            continue
        model.memory.write(dev, host, permutation)
        table.held[slot] = (ParamKey(t, host), dev)
        written += 1
    return written


def compile_graph(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    config: DeviceConfig,
    options: BackendOptions = BackendOptions(),
    mutated_inputs_seen: set[int] | None = None,
) -> Callable[..., Any]:
    """Compile one aot_autograd inference graph for the device model (or load it from the
    compile cache: STATS.cache_loads counts those, STATS.compiles the others).
    `mutated_inputs_seen`: the inputs aot_autograd bumps the version of (read from its tracing
    context when None: a graph compiled later than aot_autograd's trace passes them)."""
    try:  # (in place: the rewritten graph computes what the graph did, and runs if ours does not)
        rebase_as_strided(gm)
        real_fourier(gm)
        eager_draw_order(gm)
    except Unsupported as e:
        if options.strict:
            raise SpyreCompileError(f"spyre (strict): {e}") from None
        STATS.fallbacks += 1
        warnings.warn(f"spyre: this graph runs on the CPU instead of the device: {e}", stacklevel=2)
        return gm.forward
    eager = gm.forward
    gm, host_values = host_int_outputs(gm)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    keep = [i for i, n in enumerate(placeholders) if n.users or isinstance(n.meta.get("val"), torch.Tensor)]
    if len(keep) < len(placeholders):  # unused size symbols of a specialised dynamic graph
        gm = copy.deepcopy(gm)
        for i, n in enumerate([n for n in gm.graph.nodes if n.op == "placeholder"]):
            if i not in keep:
                gm.graph.erase_node(n)
        gm.recompile()
    # a dump shows every pass, a report every stage: such a graph is compiled, never loaded
    fresh = options.dump_dir or options.report
    cache = CompileCache(cache_dir()) if options.cache and cache_enabled() and not fresh else None
    key = graph_key(gm, config, options.strict, options.optimizations) if cache is not None else ""
    entry = cache.load(key) if cache is not None else None
    capture = None
    if entry is not None:
        STATS.cache_loads += 1
        rename_graph(entry, f"g{STATS.compiles + STATS.cache_loads}")
    else:
        capture = Capture() if options.report else None
        entry = _compile(gm, config, options, capture)
        if entry is None:
            return eager
        if cache is not None:
            cache.store(key, entry)
    module, ctx, graph = entry.module, entry.ctx, entry.graph
    placed = host_ops(module.walk())
    on_cpu = Counter(op.name for op, _, by_design in placed if not by_design)
    reasons: dict[str, str] = {}
    for op, text, by_design in placed:
        if not by_design:
            reasons.setdefault(op.name, text)
    STATS.graphs.append(
        GraphReport(
            graph,
            entry.torch_ops,
            Counter(op.name for op, _, d in placed if d),
            on_cpu,
            reasons,
            module=weakref.ref(module),
        )
    )
    if on_cpu:
        STATS.fallbacks += 1
        listed = ", ".join(f"{name} x{n}" for name, n in sorted(on_cpu.items()))
        why = sorted({f"'{op.name}': {text}" for op, text, d in placed if not d and text != "no device lowering yet"})
        if why:  # not just a missing lowering: say why (an f64 dtype, a layout, ...)
            warnings.warn(
                f"spyre: {sum(on_cpu.values())} op(s) of this graph run on the CPU: {listed}; {'; '.join(why)}",
                stacklevel=2,
            )
        else:
            warnings.warn(
                f"spyre: {sum(on_cpu.values())} op(s) of this graph run on the CPU (no device lowering yet): {listed}",
                stacklevel=2,
            )
    exe = Executable(module, ctx, get_device_model(config))
    out_dtypes = entry.out_dtypes
    mutated = spyre.aliased_arguments(exe.function)
    """Graph inputs the graph writes in place ({argument: the result with their new contents})."""
    seen = _mutated_inputs_seen() if mutated_inputs_seen is None else mutated_inputs_seen
    bumped = {j for j, i in enumerate(keep) if i in seen}
    """The kept inputs aot_autograd bumps the version of after each call."""

    first = True

    def run(*all_args: Any) -> tuple[torch.Tensor, ...]:
        nonlocal first
        args = [all_args[i] for i in keep]
        report_now = first and capture is not None
        if first:  # Dynamo has built the graph's guards, reading source lines again
            first = False
            _drop_source_lines()
        if any(isinstance(a, torch.Tensor) and a.device.type == "spyre" for a in args):
            from spyre_mlir.torch_device import resident  # the native device's tensors, used where they are

            return resident.run(exe, args, mutated, out_dtypes)
        host = [_host_array(a) for a in args]
        if report_now and capture is not None and options.report is not None:
            _write_report(module, ctx, capture, host, config, options.report, graph)
        keys = [
            ParamKey(a, h) if (isinstance(a, torch.nn.Parameter) or i in mutated) and not a.is_inference() else None
            for i, (a, h) in enumerate(zip(args, host))
        ]
        outs = exe(*host, arg_keys=keys)
        for j, k in mutated.items():  # the new contents into the caller's tensor, then its device copy rekeyed
            a, new = args[j], torch.from_numpy(np.asarray(outs[k]))
            with torch.no_grad():  # one version bump for the write: aot_autograd's where it makes one, else ours
                (a.data if j in bumped else a).copy_(new)
            exe.written_back(j, None if a.is_inference() else ParamKey(a, _host_array(a), bumps=int(j in bumped)))
        # np.asarray keeps 0-d outputs 0-d (ascontiguousarray would make them 1-d)
        return tuple(torch.from_numpy(np.array(o, order="C")).to(dt) for o, dt in zip(outs, out_dtypes))

    run.module = module  # type: ignore[attr-defined]  # the compiled IR, for inspection
    return _with_outputs(run, host_values) if host_values else run


def _write_report(
    module: ModuleOp, ctx: Any, capture: Capture, inputs: list[np.ndarray], config: DeviceConfig, path: str, graph: str
) -> None:
    """A graph's explorer report, from a call of its own on a device model of its own (the
    caller's device copies untouched)."""
    from spyre_mlir.report.write import graph_report_path, write_report

    where = graph_report_path(path, graph)
    write_report(module, ctx, capture, inputs, config, where, title=f"graph {graph}")
    for g in reversed(STATS.graphs):
        if g.name == graph:
            g.report = str(where)
            break


def _with_outputs(fn: Callable[..., Any], extra: Callable[..., dict[int, Any]]) -> Callable[..., Any]:
    """`fn` with the values `extra` gives for the call's arguments (position -> value) put back
    among its outputs (`host_int_outputs`)."""

    def run(*args: Any) -> tuple[Any, ...]:
        outs = list(fn(*args))
        for i, v in sorted(extra(*args).items()):
            outs.insert(i, v)
        return tuple(outs)

    for name in ("module", "plan"):  # (what fn carries for inspection)
        if hasattr(fn, name):
            setattr(run, name, getattr(fn, name))
    return run


def _mutated_inputs_seen() -> set[int]:
    """The graph inputs whose version counter aot_autograd's runtime wrapper bumps after each
    call, because the graph writes them (its metadata, read while it compiles the graph: a
    graph compiled outside aot_autograd has none)."""
    tracing = torch._guards.TracingContext.try_get()
    meta = tracing.fw_metadata if tracing is not None else None
    return set(meta.mutated_graph_handled_indices_seen_by_autograd) if meta is not None else set()


def _host_array(a: torch.Tensor) -> np.ndarray:
    """A graph input as the Executable takes it: bf16 has no numpy type, so it is widened to f32
    (exact); f64 stays f64 for the host ops that take it."""
    return np.asarray((a.detach().float() if a.dtype == torch.bfloat16 else a.detach()).cpu().numpy(), order="C")


def _compile(
    gm: torch.fx.GraphModule, config: DeviceConfig, options: BackendOptions, capture: Capture | None = None
) -> CachedGraph | None:
    """The graph imported and through the pipeline (None: it runs on the CPU instead, warned).
    `capture`: its torch ops numbered and every stage kept, for a report."""
    STATS.compiles += 1
    start = time.perf_counter()
    try:
        # aot_autograd calls the compiler under its fake mode; the graph's constants are real
        with torch._subclasses.fake_tensor.unset_fake_temporarily():
            module, info = import_fx_graph(gm)
        torch_ops = _distinct_compute_ops(module)
        if capture is not None:
            SpyreTrackOriginsPass().apply(info.ctx, module)
        dump = options.dump_dir
        graph = f"g{STATS.compiles + STATS.cache_loads}"  # graphs are numbered in the order they come
        module = _split_at_refused_kernels(info.ctx, module, config, options, graph, dump, capture)
    except Unsupported as e:  # (UnsupportedGraphError among them) any other failure is a bug: it propagates
        if options.strict:
            raise SpyreCompileError(f"spyre (strict): {e}") from None
        STATS.fallbacks += 1
        warnings.warn(f"spyre: this graph runs on the CPU instead of the device: {e}", stacklevel=3)
        return None
    finally:
        STATS.compile_s += time.perf_counter() - start
    return CachedGraph(module, info.ctx, [o.dtype for o in info.outputs], torch_ops, graph)


MAX_SPLITS = 32
"""Compiles of one graph, each with one more refused kernel's torch ops on the host, before
the graph is left to the CPU whole."""


def _split_at_refused_kernels(
    ctx: Any,
    module: ModuleOp,
    config: DeviceConfig,
    options: BackendOptions,
    graph: str,
    dump: str | None,
    capture: Capture | None,
) -> ModuleOp:
    """The module through the pipeline. Where a pass refuses it (Unsupported), compiled again
    with its torch ops numbered, and where the refusal comes from a pass after
    convert-torch-to-spyre (KernelRefused), again from its torch form with the torch ops of that
    kernel on the host, so the graph splits there (pipeline.py, "Splitting a graph"). Strict
    mode refuses instead."""
    refuse: dict[int, str] | None = None  # the first compile numbers nothing
    alike = _alike_torch_ops(module)
    for _ in range(MAX_SPLITS + 1):
        attempt = module.clone()
        try:
            run_pipeline(
                ctx,
                attempt,
                config,
                dump and os.path.join(dump, graph),
                kernel_prefix=f"{graph}_k",
                strict=options.strict,
                opts=options.optimizations,
                on_stage=capture,
                refuse=refuse,
            )
            return attempt
        except KernelRefused as e:
            assert refuse is not None
            reason = f"a device kernel it becomes is refused: {e}"
            refuse.update({m: reason for n in e.origins for m in alike.get(n, (n,))})
        except Unsupported:
            if options.strict or refuse is not None:
                raise
            refuse = {}
    raise Unsupported(f"more than {MAX_SPLITS} kernels refused ({len(refuse or ())} torch ops on the host so far)")


def _alike_torch_ops(module: ModuleOp) -> dict[int, tuple[int, ...]]:
    """For each torch op (by its number, in spyre-track-origins' order), the ops that are
    the same computation on the same types (name, operand and result types, attributes and the
    constant operands): what refuses one kernel of them refuses the others', so they go to the
    host together, in one more compile instead of one each."""

    def const(v: Any) -> str:
        owner = v.owner
        if isinstance(owner, torch_dialect.PrimListConstructOp):
            return "[" + ",".join(const(e) for e in owner.operands) + "]"
        if isinstance(owner, torch_dialect.VALUE_OPS) and not isinstance(owner, torch_dialect.ValueTensorLiteralOp):
            return str(owner.properties)
        return str(v.type)

    keys: list[str] = []
    for op in module.walk():
        if spyre.is_torch_compute(op):
            keys.append(f"{op.name} {[const(v) for v in op.operands]} {[str(r.type) for r in op.results]}")
    groups: dict[str, list[int]] = {}
    for n, k in enumerate(keys):
        groups.setdefault(k, []).append(n)
    return {n: tuple(groups[k]) for n, k in enumerate(keys)}


def _training_unsupported(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    raise SpyreCompileError("the spyre backend compiles inference only: call the model under torch.no_grad()")


def spyre_backend(
    gm: torch.fx.GraphModule, example_inputs: Sequence[Any], options: dict[str, Any] | None = None, **_: Any
) -> Callable[..., Any]:
    """The `torch_dynamo_backends` entry point named "spyre"."""
    from torch._dynamo.backends.common import aot_autograd

    config, backend_options = _parse_options(options)
    if not any(_is_symbolic(x) for x in example_inputs):
        fw_compiler = functools.partial(compile_graph, config=config, options=backend_options)
    else:
        # Dynamo generalised a shape (it saw a second size): programs are compiled for static
        # shapes, so the symbolic ATen graph is compiled once per length bucket
        # (frontend/buckets.py) or, where padding is not proven harmless, once per signature.
        fw_compiler = functools.partial(_per_length, config=config, options=backend_options)
    with gc_paused():  # aot_autograd's tracing and our compile (spyre_mlir/gc_pause.py)
        compiled = aot_autograd(
            fw_compiler=fw_compiler,
            bw_compiler=_training_unsupported,
            decompositions=decompositions(),
            # a graph input written in place stays a `copy_` in the graph: the compiled graph
            # writes it back itself, and may keep its device copy (a KV cache) between calls
            keep_inference_input_mutations=True,
        )(gm, list(example_inputs))
    # the trace's lines; the guards' are dropped at the first call of a graph of ours
    # (`compile_graph`), which a graph left to the CPU does not have
    _drop_source_lines()
    return compiled


def _drop_source_lines() -> None:
    """Drop the lines of source files from linecache. Dynamo reads the source of every frame
    it traces into it, and again when it builds a graph's guards after the backend returns
    (~4.5 MiB for a MiniLM, kept for the life of the process otherwise); linecache is a cache,
    read again from the file when a traceback needs a line. The lines of generated code
    (FX's and Dynamo's, registered with no file behind them: no modification time) stay."""
    for name, entry in list(linecache.cache.items()):  # (a snapshot: other threads may read lines meanwhile)
        if len(entry) == 4 and entry[1] is not None:
            linecache.cache.pop(name, None)


def _per_length(
    fx: torch.fx.GraphModule, inputs: Sequence[Any], config: DeviceConfig, options: BackendOptions
) -> Callable[..., Any]:
    """A symbolic inference graph as one program per bucket of its symbolic length (or per
    concrete signature), each traced at its static shapes and compiled at its first call."""
    from torch.fx.experimental.proxy_tensor import make_fx

    seen = _mutated_inputs_seen()
    fx, host_ints = host_int_outputs(fx)
    fx, int_tensors = ints_as_tensors(fx, inputs)
    unused = {i for i, n in enumerate(p for p in fx.graph.nodes if p.op == "placeholder") if not n.users}
    plan: BucketPlan | None = None
    if options.buckets and symbolic_sizes(fx):
        try:
            plan = plan_buckets(fx, inputs)
        except NotBucketable as e:
            warnings.warn(f"spyre: each length of this graph compiles apart (no length buckets): {e}", stacklevel=2)
    programs: dict[Any, Callable[..., Any]] = {}

    def compiled(graph: torch.fx.GraphModule, args: Sequence[Any]) -> Callable[..., Any]:
        with gc_paused():
            traced = make_fx(graph, decomposition_table=decompositions(), tracing_mode="fake")(*args)
            return compile_graph(traced, args, config, options, mutated_inputs_seen=seen)

    def run(*args: Any) -> Any:
        if int_tensors:
            args = tuple(torch.tensor(a, dtype=torch.int64) if i in int_tensors else a for i, a in enumerate(args))
        if plan is None:  # (an input no op reads, a host int's, makes no new program)
            key = tuple(
                (tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else None if i in unused else a
                for i, a in enumerate(args)
            )
            if key not in programs:
                programs[key] = compiled(fx, args)
            return programs[key](*args)
        n = plan.length(args)
        b = plan.bucket(args, n)
        padded = plan.pad(args, n, b)
        if b not in programs:
            programs[b] = compiled(plan.graph, padded)
        return plan.unpad(programs[b](*padded), n)

    run.plan = plan  # type: ignore[attr-defined]  # for inspection: None where lengths compile apart
    return _with_outputs(run, host_ints) if host_ints else run


def _is_symbolic(x: Any) -> bool:
    if isinstance(x, torch.SymInt | torch.SymFloat):
        return True
    return isinstance(x, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in x.shape)
