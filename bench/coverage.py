"""How much of the corpus (bench/corpus.py) the spyre backend compiles, runs on the device and
gets right, in one run.

    python bench/coverage.py                 # the table, totals and failures
    python bench/coverage.py --json          # the same as one JSON object
    python bench/coverage.py llama bert      # only these entries
    python bench/coverage.py --jobs 1        # in this process (default: one worker process per CPU)
    python bench/coverage.py --sweep         # every text architecture transformers builds (bench/sweep.py)
    python bench/coverage.py --sweep llama led --timeout 300

The sweep (`--sweep`) measures, in place of the corpus, every model type of the installed
transformers whose base model takes input_ids, each built from its default config shrunk by one
rule (bench/sweep.py). A model type that does not build or does not run eagerly on input_ids
alone is not buildable: listed with its reason, not counted. The totals give the share of the
buildable ones that pass, the wrong answers (compiled and run, outside the criterion) apart
from the crashes, and the float ops on the device, mean and lowest.

A model outside the criterion is run eagerly with DL16's rounding too (16 runs:
spyre_mlir.testing.dl16_eager `dl16_spread`). Where some of those runs fail the criterion as well
and the compiled result lies within their range, the row is "beyond DL16" (the `pass` column's
`DL16`): the model's error is DL16 arithmetic's on it, not the compiler's. Such a row is not a
pass and not a wrong answer; the totals count it apart (`beyond_dl16`).

For every corpus entry: build it, run it eagerly, compile it with
`torch.compile(backend="spyre")` (default options: ops without a device lowering run on the
CPU inside the compiled graph), run it, and compare with eager under the model criterion of
spyre_mlir.testing.criteria (`compare_model_outputs`: the same function the model tests use).
Where that fails, PyTorch's own trace of the model (`backend="aot_eager"`) is compared with
eager too: a model that computes something else when traced (transformers skips PaliGemma's
attention mask in eager mode and builds it under a trace) is judged against that trace, its
row saying so (`reference`). A second call runs under `spyre_mlir.profile()`: its kernel
times add up to the simulated device latency of one forward (host ops and transfers are not in it); its host transfers (bytes both
ways, at the host link's rate: `Profile.transfers_s`) are a column of their own, so a change
that moves work between the host and the device shows on both sides.

Columns: compiles (yes, or no and why: an exception, or a graph that ran wholly on the CPU),
float ops on the device (share of the compiled graphs' float compute ops that run on the
device, summed over the model's graphs: `STATS.graphs`; the integer/boolean index and mask ops
the host runs by design are not float ops), max error (max |compiled - eager| / max |eager|,
worst output), cosine (lowest over outputs), simulated latency, kernel launches, host transfers,
host round trips per call and their priced time (`Profile.host_round_trips`: each a CPU op
between device kernels, priced as analysis/cost.py `host_round_trip_seconds` prices one; the
new launch after it is in the latency), pass. One model's failure, whatever it is, is caught
and reported; the run goes on.

Entries are independent, so they are measured in worker processes, one per CPU the process may
run on (`--jobs`), each entry in one worker from build to profile (`measure_all`); the rows come back in corpus
order and are the same as in one process (`wall s` is each entry's own time in its worker). When
a worker dies (killed, out of memory), the entries not measured yet are measured again, each in
a worker of its own; one whose worker dies again fails with that reason, and the run goes on.

Where an entry's host time goes (the JSON's rows, summed in its totals and on the table's
last lines): `first_call_s`, the first compiled call (Dynamo's trace, aot_autograd, the
backend's compile, the first run); `spyre_compile_s`, the backend's own compile within it
(import and pipeline, `STATS.compile_s`); `call_s`, the second call. The rest of `wall_s` is
building the model and running it eagerly.
"""

from __future__ import annotations

import argparse
import atexit
import json
import multiprocessing
import os
import signal
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from corpus import CORPUS, LAYERS, build  # bench/corpus.py, beside this script (it imports no torch)

if TYPE_CHECKING:
    import torch

os.environ.setdefault("SPYRE_CACHE", "0")  # compile times and counts are of compiles, not cache loads


@dataclass
class Row:
    name: str
    compiles: bool = False
    reason: str = ""
    """Why it does not compile or does not pass."""
    stage: str = ""
    """Where a crash happened: build, eager, compile, first call, profiled call."""
    where: str = ""
    """Innermost spyre_mlir source line of a crash."""
    graphs: int = 0
    torch_ops: int = 0
    device_ops: int = 0
    device_fraction: float | None = None
    """Share of all compute ops on the device (the host's index and mask ops count against it)."""
    float_ops: int = 0
    """Compute ops on float data: all but the host's by design."""
    float_device_fraction: float | None = None
    """Share of the float ops that run on the device."""
    max_error: float | None = None
    cosine: float | None = None
    latency_us: float | None = None
    kernels: int = 0
    transfers_us: float | None = None
    """Host transfers of the profiled call over the host link (not in `latency_us`)."""
    round_trips: int = 0
    """Host round trips of the profiled call: CPU ops between device kernels."""
    round_trip_us: float | None = None
    """Their priced time: transfers both ways and the host ops (not in `latency_us`)."""
    call_us: float | None = None
    """The profiled call end to end as the card and the host pay it: kernels, transfers, and
    `host_op_s` per round trip."""
    tolerance: float | None = None
    """The criterion's bound on max error (x max |eager|) the entry is judged by."""
    layers: int = LAYERS
    """The depth the criterion's tolerance is for (an encoder-decoder's two stacks added)."""
    reference: str = "eager"
    """What the compiled model is judged against: "eager", or "aot_eager" where PyTorch's own
    trace of the model (`torch.compile(backend="aot_eager")`) fails the criterion against eager:
    the model computes something else when traced, and the compiler's task is the trace."""
    dl16: str = ""
    """For a model outside the criterion: how its DL16 runs on eager PyTorch compare
    (spyre_mlir.testing.dl16_eager `dl16_spread`)."""
    beyond_dl16: bool = False
    """Outside the criterion, within what DL16 arithmetic itself gives on the model (`dl16`):
    not counted among the wrong answers."""
    buildable: bool = True
    """False: the model did not build or did not run eagerly (a sweep entry so is not counted)."""
    passed: bool = False
    cpu_ops: dict[str, int] = field(default_factory=dict)
    """Float ops without a device lowering, run on the CPU: op -> count."""
    cpu_reasons: dict[str, str] = field(default_factory=dict)
    """Why each of them stays on the CPU: op -> reason (the first graph's, where graphs differ)."""
    host_by_design: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    """The entry from build to profile, in its process."""
    first_call_s: float = 0.0
    """Its first compiled call: Dynamo's trace, aot_autograd, the backend's compile, the first run."""
    spyre_compile_s: float = 0.0
    """Of the first call, the backend's own compile: import and pipeline (`STATS.compile_s`)."""
    call_s: float = 0.0
    """The second, profiled call."""


class _Timeout(Exception):
    pass


@contextmanager
def _deadline(seconds: float):
    if seconds <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def fire(*_):
        raise _Timeout(f"timed out after {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _root(e: BaseException) -> BaseException:
    """The original exception under Dynamo's wrappers (BackendCompilerFailed and the like)."""
    while True:
        inner = getattr(e, "inner_exception", None) or e.__cause__
        if inner is None or inner is e:
            return e
        e = inner


def _describe(e: BaseException) -> tuple[str, str]:
    """(where: the innermost spyre_mlir frame, or ""; one line: type and message)."""
    root = _root(e)
    text = " ".join(str(root).split())
    text = text.split(" Set TORCHDYNAMO_VERBOSE=1")[0]
    line = f"{type(root).__name__}: {text[:240]}{'...' if len(text) > 240 else ''}" if text else type(root).__name__
    frames = [f for f in traceback.extract_tb(root.__traceback__) if "spyre_mlir" in f.filename]
    if not frames:  # the wrapper's own traceback may hold them
        frames = [f for f in traceback.extract_tb(e.__traceback__) if "spyre_mlir" in f.filename]
    if not frames:
        return "", line
    f = frames[-1]
    rel = f.filename[f.filename.rindex("spyre_mlir") :]
    return f"{rel}:{f.lineno} ({f.name})", line


def measure(name: str, timeout_s: float = 600.0, sweep: bool = False) -> Row:
    """Compile and check one corpus entry (a model type of the sweep: `sweep`); never raises.
    torch, transformers and spyre_mlir are imported here, at the first entry: a process that
    hands the entries to workers never loads them, so its workers start at once and it ends at
    once."""
    with _watchdog(timeout_s):
        return _measure(name, timeout_s, sweep)


def _measure(name: str, timeout_s: float, sweep: bool) -> Row:
    import logging

    import torch

    import spyre_mlir
    from spyre_mlir.frontend.backend import STATS
    from spyre_mlir.testing.criteria import compare_model_outputs, model_tolerance
    from spyre_mlir.testing.dl16_eager import dl16_spread

    row = Row(name, tolerance=model_tolerance(LAYERS))
    start = time.perf_counter()
    for noisy in ("torch._dynamo", "transformers", "huggingface_hub", "kernels"):  # graph breaks, fallbacks
        logging.getLogger(noisy).setLevel(logging.ERROR)  # (the rows say what matters)
    torch._dynamo.reset()
    graphs_before, compiles_before, compile_s_before = len(STATS.graphs), STATS.compiles, STATS.compile_s
    stage = "build"
    try:
        with _deadline(timeout_s), warnings.catch_warnings(record=True) as caught, torch.no_grad():
            warnings.simplefilter("always")
            if sweep:
                from sweep import build as build_type  # bench/sweep.py

                built = build_type(name)
                model, inputs, kwargs = built.model, (), built.inputs
                row.layers = built.depth
                row.tolerance = model_tolerance(built.depth)
            else:
                model, inputs = build(name)
                kwargs = {}
            stage = "eager"
            rng = torch.get_rng_state()  # every run of the model draws what eager drew (_same_draws)
            eager = model(*inputs, **kwargs)
            stage = "compile"
            compiled_fn = torch.compile(model, backend="spyre")
            t = time.perf_counter()
            compiled = _same_draws(rng, compiled_fn, *inputs, **kwargs)
            row.first_call_s = time.perf_counter() - t
            stage = "profiled call"
            t = time.perf_counter()
            with spyre_mlir.profile() as prof:
                _same_draws(rng, compiled_fn, *inputs, **kwargs)
            row.call_s = time.perf_counter() - t
        reports = STATS.graphs[graphs_before:]
        whole = [str(w.message) for w in caught if "runs on the CPU instead of the device" in str(w.message)]
        row.graphs = STATS.compiles - compiles_before
        row.torch_ops = sum(g.torch_ops for g in reports)
        on_host = sum(sum(g.host_by_design.values()) + sum(g.cpu_fallback.values()) for g in reports)
        row.device_ops = row.torch_ops - on_host
        row.float_ops = row.torch_ops - sum(sum(g.host_by_design.values()) for g in reports)
        row.cpu_ops = dict(sum((g.cpu_fallback for g in reports), Counter()))
        for g in reports:
            for op, why in g.cpu_reasons.items():
                row.cpu_reasons.setdefault(op, why)
        row.host_by_design = dict(sum((g.host_by_design for g in reports), Counter()))
        if whole or not reports:
            row.reason = (
                "a graph ran wholly on the CPU (documented fallback): "
                + whole[0].split("instead of the device: ", 1)[-1]
                if whole
                else "no graph reached the spyre backend"
            )
            row.device_fraction = row.float_device_fraction = 0.0
        else:
            row.compiles = True
            row.device_fraction = row.device_ops / row.torch_ops if row.torch_ops else 1.0
            row.float_device_fraction = row.device_ops / row.float_ops if row.float_ops else 1.0
        row.latency_us = prof.total_time_s * 1e6
        row.kernels = len(prof.kernels)
        row.transfers_us = prof.transfers_s * 1e6
        row.round_trips, row.round_trip_us = prof.host_round_trips, prof.host_round_trip_s * 1e6
        row.call_us = (prof.total_time_s + prof.transfers_s + prof.host_ops_s) * 1e6
        cmp = compare_model_outputs(compiled, eager, row.layers)
        if row.compiles and not cmp.passed:  # is it the model that differs when traced?
            stage = "aot_eager reference"
            torch._dynamo.reset()
            with _deadline(timeout_s), torch.no_grad():
                traced = _same_draws(rng, torch.compile(model, backend="aot_eager"), *inputs, **kwargs)
            drift = compare_model_outputs(traced, eager, row.layers)
            if not drift.passed:
                row.reference = "aot_eager"
                row.reason = f"eager and its aot_eager trace differ ({drift}); judged against the trace"
                cmp = compare_model_outputs(compiled, traced, row.layers)
        row.max_error, row.cosine = cmp.max_error, cmp.cosine
        row.passed = row.compiles and cmp.passed
        if row.compiles and not cmp.passed:  # the compiler's error, or DL16's on this model?
            judged_by = traced if row.reference == "aot_eager" else eager
            try:
                with _deadline(timeout_s):
                    spread = dl16_spread(lambda: _same_draws(rng, model, *inputs, **kwargs), judged_by, row.layers)
                row.dl16, row.beyond_dl16 = str(spread), spread.explains(cmp)
            except Exception as e:  # eager PyTorch's runs, not the compiler's: the row stays a wrong answer
                row.dl16 = f"no DL16 runs: {type(e).__name__}: {str(e)[:200]}"
            against = " against aot_eager" if row.reference != "eager" else ""
            outcome = "beyond DL16" if row.beyond_dl16 else "wrong answer"
            row.reason = f"{outcome}{against}: {cmp}; {row.dl16}"
    except Exception as e:
        row.compiles = False
        where, what = _describe(e)
        if stage == "compile" and "/runtime/" in where:
            stage = "first call (device model / host executor)"
        elif stage == "compile":
            stage = "compile" if where or "BackendCompilerFailed" in type(e).__name__ else "compile or first call"
        row.stage, row.where = stage, where
        row.buildable = stage not in ("build", "eager")
        row.reason = f"{stage}: {what}" + (f" [at {where}]" if where else "")
    finally:
        row.spyre_compile_s = STATS.compile_s - compile_s_before
        torch._dynamo.reset()
    row.wall_s = time.perf_counter() - start
    return row


def _same_draws(rng: torch.Tensor, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs) from the CPU generator's state `rng`: a model that draws random
    numbers in eval mode (vits: its durations and latents are sampled) draws the same ones in
    every run, so its runs compute the same function and can be compared. (Unseeded, vits's
    second draw gives 12,640 frames, a 3.2 M-sample waveform, where eager's gave 405 frames.)"""
    import torch

    torch.set_rng_state(rng)
    return fn(*args, **kwargs)


@contextmanager
def _watchdog(timeout_s: float):
    """Ends this process (os._exit) if the entry outlives its deadline by a minute: the
    deadline's alarm interrupts Python code, not a loop inside a C extension. The pool sees the
    worker die and measures the entries left in fresh workers (`measure_all`)."""
    import threading

    if timeout_s <= 0:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        if not done.wait(timeout_s + 60):
            print(f"coverage: an entry outlived its {timeout_s:.0f} s deadline; ending its worker", file=sys.stderr)
            os._exit(3)

    threading.Thread(target=watch, daemon=True).start()
    try:
        yield
    finally:
        done.set()


def measure_all(
    names: list[str], timeout_s: float, jobs: int, progress: bool = False, sweep: bool = False
) -> list[Row]:
    """`measure` for every name, in `jobs` worker processes, or in this process when `jobs` is 1;
    rows in the order of `names`. Workers are spawned: each imports torch and the rest itself
    (~3 s; this process has not loaded them, so they start at once), and its entries then take
    the time they take in one process (forked workers, with the imports shared, took ~8% longer
    per entry, in system time). A worker ends without the interpreter's teardown
    (`_worker_start`)."""

    def report(row: Row) -> None:
        if progress:
            print(f"  {row.name}: {'PASS' if row.passed else 'FAIL'} ({row.wall_s:.1f} s)", file=sys.stderr, flush=True)

    if jobs == 1 or len(names) == 1:
        rows = []
        for name in names:
            rows.append(_measure(name, timeout_s, sweep))  # (no watchdog: it would end this process)
            report(rows[-1])
        return rows
    done: dict[str, Row] = {}
    with _workers(min(jobs, len(names))) as pool:
        futures = {pool.submit(measure, name, timeout_s, sweep): name for name in names}
        for future in as_completed(futures):
            try:
                done[futures[future]] = future.result()
            except BrokenProcessPool:  # a worker died (measure never raises): which entry killed it?
                break
            report(done[futures[future]])
    for name in [n for n in names if n not in done]:  # each alone, so a death is its own
        with _workers(1) as pool:
            try:
                done[name] = pool.submit(measure, name, timeout_s, sweep).result()
            except BrokenProcessPool as e:
                done[name] = Row(name, stage="worker", reason=f"worker: its process died measuring this entry ({e})")
        report(done[name])
    return [done[name] for name in names]


def _workers(n: int) -> ProcessPoolExecutor:
    """n spawned worker processes (a fork would copy BLAS's and torch's thread state)."""
    return ProcessPoolExecutor(
        max_workers=n, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start
    )


def _worker_start() -> None:
    """A worker's exit skips the interpreter's teardown: freeing torch's, Dynamo's and the
    models' objects one by one after the last entry takes 1-3 s, and the pool's shutdown waits
    for it. By then every result is sent (the pool's result queue writes as it is put), and the
    worker holds nothing else."""
    atexit.register(_exit_now)


def _exit_now() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def table(rows: list[Row]) -> str:
    w = max([16, *(len(r.name) + 1 for r in rows)])
    head = (
        f"{'architecture':<{w}}{'compiles':<10}{'graphs':>6}{'float ops on dev':>18}{'max error':>11}{'cosine':>10}"
        f"{'latency us':>12}{'kernels':>8}{'transfers us':>14}{'round trips':>12}{'rt us':>8}  {'pass':<5}{'wall s':>7}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        ops = (
            f"{r.device_ops}/{r.float_ops} {100 * r.float_device_fraction:5.1f}%"
            if r.float_device_fraction is not None and r.float_ops
            else "-"
        )
        lines.append(
            f"{r.name:<{w}}{'yes' if r.compiles else 'no':<10}{r.graphs:>6}{ops:>18}{_fmt(r.max_error, '.2e'):>11}"
            f"{_fmt(r.cosine, '.6f'):>10}{_fmt(r.latency_us, '.1f'):>12}{r.kernels:>8}{_fmt(r.transfers_us, '.1f'):>14}"
            f"{r.round_trips:>12}{_fmt(r.round_trip_us, '.1f'):>8}  "
            f"{'PASS' if r.passed else 'DL16' if r.beyond_dl16 else 'FAIL':<5}{r.wall_s:>7.1f}"
        )
    lines.append("-" * len(head))
    return "\n".join(lines)


COSINE_FLOOR = 0.999
"""spyre_mlir.testing.criteria.COSINE_MIN (this module's top level imports no torch)."""


def totals(rows: list[Row], sweep: bool = False) -> dict:
    """The run's figures. The corpus counts every entry; the sweep counts the buildable model
    types only (`Row.buildable`), and lists the others apart."""
    counted = [r for r in rows if r.buildable or not sweep]
    n = len(counted)
    compiled = [r for r in counted if r.compiles]
    fractions = [r.device_fraction for r in compiled if r.device_fraction is not None]
    float_fractions = [r.float_device_fraction for r in compiled if r.float_device_fraction is not None]
    # (a structural mismatch, an output's shape other than eager's, has cosine 0)
    cosine_right = [r for r in compiled if not r.stage and r.cosine is not None and r.cosine >= COSINE_FLOOR]
    cpu = Counter()
    models_per_op = Counter()
    reasons: dict[str, str] = {}
    for r in counted:
        cpu.update(r.cpu_ops)
        models_per_op.update(r.cpu_ops.keys())
        for op, why in r.cpu_reasons.items():
            reasons.setdefault(op, why)
    return {
        "models": n,
        "not_buildable": len(rows) - n,
        "compile": len(compiled),
        "pass": sum(r.passed for r in counted),
        "pass_percent": 100.0 * sum(r.passed for r in counted) / n if n else 0.0,
        "wrong_answers": sum(
            r.compiles and not r.passed and not r.stage and not r.beyond_dl16 for r in counted
        ),  # ran, outside the criterion, and DL16 arithmetic does not account for it
        "beyond_dl16": sum(r.beyond_dl16 for r in counted),
        # the cosine half of the criterion alone (every output's cosine >= 0.999 against eager):
        # the rows beyond DL16 whose max error alone is past the bound count here
        "cosine_right": len(cosine_right),
        "cosine_right_percent": 100.0 * len(cosine_right) / n if n else 0.0,
        "crashes": sum(bool(r.stage) for r in counted),
        "whole_graph_on_cpu": sum(not r.compiles and not r.stage for r in counted),
        "mean_device_fraction": sum(fractions) / len(fractions) if fractions else 0.0,
        "mean_float_device_fraction": sum(float_fractions) / len(float_fractions) if float_fractions else 0.0,
        "min_float_device_fraction": min(float_fractions, default=0.0),
        "latency_us": sum(r.latency_us or 0.0 for r in rows),
        "transfers_us": sum(r.transfers_us or 0.0 for r in rows),
        "round_trips": sum(r.round_trips for r in rows),
        "round_trip_us": sum(r.round_trip_us or 0.0 for r in rows),
        "call_us": sum(r.call_us or 0.0 for r in rows),
        "entries_s": sum(r.wall_s for r in rows),
        "first_calls_s": sum(r.first_call_s for r in rows),
        "spyre_compile_s": sum(r.spyre_compile_s for r in rows),
        "calls_s": sum(r.call_s for r in rows),
        "tolerance": next((r.tolerance for r in rows if r.tolerance is not None), None),
        "layers": LAYERS if not sweep else None,
        "cpu_fallback_ops": {
            op: {"models": models_per_op[op], "nodes": cpu[op], "reason": reasons.get(op, "")}
            for op, _ in models_per_op.most_common()
        },
    }


def _sweep_types(jobs: int) -> list[str]:
    """bench/sweep.py `model_types()`, listed in a worker unless this process measures (the
    listing imports torch and every model class: ~20 s)."""
    if jobs == 1:
        from sweep import model_types

        return model_types()
    with _workers(1) as pool:
        return pool.submit(_list_types).result()


def _list_types() -> list[str]:
    from sweep import model_types

    return model_types()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="corpus entries, or model types with --sweep (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="every text model type transformers builds (bench/sweep.py), not the corpus",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model (0: none)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="worker processes (default: the CPUs this process may run on; 1: measure in this process)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    known = _sweep_types(args.jobs) if args.sweep else list(CORPUS)
    unknown = sorted(set(args.names) - set(known))
    if unknown:
        what = "model types the sweep takes" if args.sweep else "the corpus"
        parser.error(f"not in {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    names = args.names or known
    rows = measure_all(names, args.timeout, args.jobs, progress=True, sweep=args.sweep)  # (progress: stderr)
    tot = totals(rows, sweep=args.sweep)
    failures = {r.name: r.reason or "fails the criterion" for r in rows if not r.passed and r.buildable}
    not_buildable = {r.name: r.reason for r in rows if not r.buildable}
    if args.json:
        out = {"models": [asdict(r) for r in rows], "totals": tot, "failures": failures}
        if args.sweep:
            out["not_buildable"] = not_buildable
        else:
            out["failures"] = {r.name: r.reason or "fails the criterion" for r in rows if not r.passed}
        print(json.dumps(out, indent=1))
        return 0
    print(table([r for r in rows if r.buildable or not args.sweep]))
    what = "buildable model types" if args.sweep else "models"
    print(
        f"{what}: {tot['models']}   compile: {tot['compile']}   match eager: {tot['pass']} ({tot['pass_percent']:.1f}%)   "
        f"wrong answers: {tot['wrong_answers']}   beyond DL16: {tot['beyond_dl16']}   crashes: {tot['crashes']}   "
        f"cosine >= 0.999 alone: {tot['cosine_right']} ({tot['cosine_right_percent']:.1f}%)   "
        f"wholly on the CPU: {tot['whole_graph_on_cpu']}"
    )
    print(
        f"float ops on the device (compiled models): mean {100 * tot['mean_float_device_fraction']:.1f}%, "
        f"lowest {100 * tot['min_float_device_fraction']:.1f}%"
    )
    print(
        f"summed: latency {tot['latency_us']:.1f} us, transfers {tot['transfers_us']:.1f} us, "
        f"{tot['round_trips']} host round trips {tot['round_trip_us']:.1f} us; calls end to end {tot['call_us']:.1f} us"
    )
    print(
        f"host time, summed over the entries: {tot['entries_s']:.1f} s, of which first compiled calls "
        f"{tot['first_calls_s']:.1f} s (the backend's own compile in them: {tot['spyre_compile_s']:.1f} s; the rest "
        f"is Dynamo, aot_autograd and the first runs) and second calls {tot['calls_s']:.1f} s"
    )
    depth = "each model's depth" if args.sweep else f"{LAYERS} layers"
    print(
        f"criterion: cosine >= 0.999 and max error <= 16 u (layers + 1) x max |eager| "
        f"({depth}; spyre_mlir.testing.criteria: compare_model_outputs)"
    )
    if tot["cpu_fallback_ops"]:
        print("\nfloat ops run on the CPU: op  models  nodes  why")
        for op, c in tot["cpu_fallback_ops"].items():
            print(f"  {op:<40}{c['models']:>4}{c['nodes']:>7}  {c['reason'][:160]}")
    crashes: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        if not r.passed and r.stage and r.buildable:
            crashes.setdefault((r.where, r.reason.split(": ", 1)[1].split(" [at ")[0][:120]), []).append(r.name)
    if crashes:
        print(f"\ncrashes by place ({len(crashes)}):")
        for (where, what), names in sorted(crashes.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(names):>3} x {where or '(outside spyre_mlir)'}: {what}\n        {', '.join(names)}")
    traced = [r.name for r in rows if r.reference != "eager"]
    if traced:
        print(f"\njudged against PyTorch's own trace (aot_eager), eager computing otherwise: {', '.join(traced)}")
    print(f"\nfailures ({len(failures)}):" if failures else "\nfailures: none")
    flag = " --sweep" if args.sweep else ""
    for name, reason in failures.items():
        print(f"  {name}: {reason}")
        print(f"      reproduce: python bench/coverage.py{flag} {name}")
    if not_buildable:
        print(f"\nnot buildable from input_ids alone ({len(not_buildable)}), not counted:")
        for name, reason in not_buildable.items():
            print(f"  {name}: {reason[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
