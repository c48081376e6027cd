"""The optimisation table in simulated device time (docs/optimizations.md).

    python bench/ablation.py                    # the table
    python bench/ablation.py --json             # {"rows": [...]}, one object per kernel
    python bench/ablation.py --only softmax_512x1024_1core,mlp_512x768x3072

Every row compiles one workload twice with `torch.compile(backend="spyre")` on the reference
device model (sanitizer on, DL16): once with the row's optimisations switched off (the
baseline: this same compiler, options={"disable": [...]}) and once with everything on. Times
are simulated (sum of the launches' kernel times, launch overhead included), never wall time.

    change       = optimized_us / baseline_us - 1           (negative: faster)
    utilization  = MACs / (PT MACs per cycle x clock x cores x optimized time)   (null: no MACs)
    attainment   = roofline time / optimized time, where a kernel's roofline time is
                   max(2 MACs / peak FLOP/s, DDR bytes / DDR bandwidth), summed over kernels
    seed_change  = what IBM published for the same kind of kernel on the real card (null: none)
    transfers_us = host <-> device transfers of a second, steady call (baseline, optimized), at
                   the host link's rate (`Profile.transfers_s`): not in the times above, so a
                   change that moves work between the host and the device shows here

Both outputs are also compared: each must match PyTorch eager within the DL16 bound of the row
(test/python/transforms/test_optimizations.py asserts the same for small shapes); the table prints the
max |error| of each so a wrong optimised program cannot hide behind a good time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch

import spyre_mlir
from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.target.config import DeviceConfig

os.environ.setdefault("SPYRE_CACHE", "0")  # compile times and counts are of compiles, not cache loads

MATMUL_OFF = ["cost_split", "multicast", "double_buffer", "cost_chunks"]
"""The even-split, DDR-streaming matmul: every core loads its own A and B tiles, one buffer each."""


@dataclass
class Workload:
    kernel: str
    build: Callable[[], tuple[torch.nn.Module | Callable, tuple]]
    baseline_off: list[str] | str
    """Optimisations off in the baseline ("all": every one)."""
    seed_change: float | None
    seed_note: str
    cores: int = 32


def _matmul(m: int, k: int, n: int) -> Callable:
    def build():
        g = torch.Generator().manual_seed(0)
        return (lambda a, b: a @ b), (torch.randn(m, k, generator=g), torch.randn(k, n, generator=g) / k**0.5)

    return build


def _softmax():
    g = torch.Generator().manual_seed(0)
    return (lambda x: torch.softmax(x, -1)), (3 * torch.randn(512, 1024, generator=g),)


def _mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(768, 3072), torch.nn.GELU(), torch.nn.Linear(3072, 768)).eval()
    return model, (torch.randn(512, 768),)


def _bert_layer():
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer

    torch.manual_seed(0)
    config = BertConfig(hidden_size=768, num_attention_heads=12, intermediate_size=3072, attn_implementation="eager")
    layer = BertLayer(config).eval()  # (the attention named: else a logged warning breaks the graph in three places)

    def run(x):
        out = layer(x)
        return out[0] if isinstance(out, tuple) else out

    return run, (torch.randn(1, 128, 768),)


def _minilm():
    from spyre_mlir.demo import load_minilm

    tokenizer, model = load_minilm()
    text = ["The quick brown fox jumps over the lazy dog. " * 12]
    batch = tokenizer(text, padding="max_length", truncation=True, max_length=128, return_tensors="pt")

    def run(input_ids, attention_mask):
        return model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return run, (batch["input_ids"], batch["attention_mask"])


def _paged_decode():
    """A decode step's paged attention as spyre_mlir/vllm/attention.py traces it, at SmolLM2's
    shape: 16 requests of 4 pages of 128 slots, 3 KV heads of 64, 3 query heads each."""
    requests, pages, block, kv_heads, n_rep, dim = 16, 4, 128, 3, 3, 64
    g = torch.Generator().manual_seed(0)
    caches = [torch.randn(1, (requests * pages + 8) * block, kv_heads * dim, generator=g) for _ in "kv"]
    q = torch.randn(requests, kv_heads * n_rep, dim, generator=g)
    page_ids = torch.randperm(requests * pages + 8, generator=g)[: requests * pages]

    def run(q, k_cache, v_cache, page_ids):
        def per_head(cache):  # (KV heads, requests, keys, dim)
            rows = cache.view(-1, block, kv_heads * dim)[page_ids[:, None], torch.arange(block)[None, :]]
            return rows.view(requests, pages * block, kv_heads, dim).permute(2, 0, 1, 3)

        query = q.view(requests, kv_heads, n_rep, dim).permute(1, 0, 2, 3)
        out = torch.nn.functional.scaled_dot_product_attention(query, per_head(k_cache), per_head(v_cache), scale=0.125)
        return out.permute(1, 0, 2, 3).reshape(requests, kv_heads * n_rep, dim)

    return run, (q, *caches, page_ids)


WORKLOADS = [
    Workload("matmul_512x4096x4096", _matmul(512, 4096, 4096), MATMUL_OFF, -0.69, "matmul tiling/layout, best shape"),
    Workload("matmul_128x768x3072", _matmul(128, 768, 3072), MATMUL_OFF, -0.29, "matmul tiling/layout, least gain"),
    Workload("matmul_2048x2048x2048", _matmul(2048, 2048, 2048), MATMUL_OFF, None, ""),
    Workload(
        "softmax_512x1024_1core", _softmax, ["row_groups"], -0.27, "softmax 32.51 -> 23.67 us, LX scheduling", cores=1
    ),
    Workload("softmax_512x1024_32core", _softmax, ["row_groups"], -0.27, "softmax 32.51 -> 23.67 us, LX scheduling"),
    Workload("mlp_512x768x3072", _mlp, ["epilogues"], -0.17, "fused MLP-style kernel, util ~2/3 -> ~80%"),
    Workload("paged_decode_16x4", _paged_decode, ["gathered_operands"], None, ""),
    Workload("bert_layer_seq128", _bert_layer, "all", None, ""),
    Workload("minilm_seq128", _minilm, "all", None, ""),
]


def measure(fn, inputs: tuple, cores: int, disable) -> tuple[list, torch.Tensor, float]:
    """Compile and run once: the kernel records of that run and the output; then run a
    second (steady) call for its host transfers' time (the first call's include the weights)."""
    torch._dynamo.reset()
    dev = get_device_model(DeviceConfig(cores=cores))
    start = len(dev.profile.kernels)
    compiled = torch.compile(fn, backend="spyre", options={"cores": cores, "disable": disable})
    with torch.no_grad():
        out = compiled(*inputs)
        kernels = dev.profile.kernels[start:]
        with spyre_mlir.profile() as steady:
            compiled(*inputs)
    return kernels, out, steady.transfers_s


def summarize(kernels: list) -> dict:
    time_s = sum(k.time_s for k in kernels)
    macs = sum(k.macs for k in kernels)
    cfg = kernels[0].config if kernels else DeviceConfig()
    roofline = sum(max(2 * k.macs / k.peak_flops, k.ddr_bytes / k.config.ddr_bytes_per_s) for k in kernels)
    util = macs / (cfg.pt_macs_per_cycle * cfg.clock_hz * cfg.cores * time_s) if macs and time_s else None
    return {
        "us": time_s * 1e6,
        "utilization": util,
        "attainment": roofline / time_s if time_s else None,
        "launches": len(kernels),
    }


def run_row(w: Workload) -> dict:
    fn, inputs = w.build()
    with torch.no_grad():
        ref = fn(*inputs)
    t0 = time.perf_counter()
    base_k, base_out, base_tr = measure(fn, inputs, w.cores, w.baseline_off)
    opt_k, opt_out, opt_tr = measure(fn, inputs, w.cores, [])
    base, opt = summarize(base_k), summarize(opt_k)
    return {
        "kernel": w.kernel,
        "baseline_us": round(base["us"], 2),
        "optimized_us": round(opt["us"], 2),
        "change": round(opt["us"] / base["us"] - 1, 4),
        "seed_change": w.seed_change,
        "utilization": None if opt["utilization"] is None else round(opt["utilization"], 4),
        "attainment": None if opt["attainment"] is None else round(opt["attainment"], 4),
        "baseline_off": w.baseline_off,
        "launches": [base["launches"], opt["launches"]],
        "baseline_utilization": None if base["utilization"] is None else round(base["utilization"], 4),
        "baseline_attainment": None if base["attainment"] is None else round(base["attainment"], 4),
        "max_abs_error": [float((base_out - ref).abs().max()), float((opt_out - ref).abs().max())],
        "transfers_us": [round(base_tr * 1e6, 2), round(opt_tr * 1e6, 2)],
        "cores": w.cores,
        "seed_note": w.seed_note,
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def table(rows: list[dict]) -> str:
    pct = lambda v: "-" if v is None else f"{100 * v:+.1f}%"  # noqa: E731
    frac = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    head = (
        f"{'kernel':<26}{'baseline us':>12}{'optimized us':>14}{'change':>9}{'seed':>8}{'PT util':>9}{'attain':>8}"
        f"{'transfers us':>14}  baseline: off"
    )
    lines = [head, "-" * (len(head) + 30)]
    for r in rows:
        off = r["baseline_off"] if isinstance(r["baseline_off"], str) else ",".join(r["baseline_off"])
        lines.append(
            f"{r['kernel']:<26}{r['baseline_us']:>12.1f}{r['optimized_us']:>14.1f}{pct(r['change']):>9}{pct(r['seed_change']):>8}"
            f"{frac(r['utilization']):>9}{frac(r['attainment']):>8}{r['transfers_us'][0]:>6.1f} /{r['transfers_us'][1]:>6.1f}  {off}"
        )
    cfg = DeviceConfig()
    lines.append("")
    lines.append(
        f"PT peak as modeled: {cfg.cores} cores x {cfg.pt_macs_per_cycle} MAC/cycle x {cfg.clock_hz / 1e9:.3f} GHz = "
        f"{cfg.cores * cfg.pt_macs_per_cycle * cfg.clock_hz / 1e12:.2f} TMAC/s (corelets_used={cfg.corelets_used})"
    )
    lines.append(
        "max |error| vs eager (baseline, optimized): "
        + ", ".join(f"{r['kernel']} {r['max_abs_error'][0]:.2g}/{r['max_abs_error'][1]:.2g}" for r in rows)
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/ablation.py", description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help='print {"rows": [...]}')
    ap.add_argument("--only", help="comma-separated kernel names")
    args = ap.parse_args(argv)
    chosen = WORKLOADS
    if args.only:
        names = args.only.split(",")
        unknown = sorted(set(names) - {w.kernel for w in WORKLOADS})
        if unknown:
            ap.error(f"unknown kernel(s) {unknown}; known: {', '.join(w.kernel for w in WORKLOADS)}")
        chosen = [w for w in WORKLOADS if w.kernel in names]
    rows = []
    for w in chosen:
        rows.append(run_row(w))
        if not args.json:
            print(f"... {w.kernel}: {rows[-1]['wall_s']} s", file=sys.stderr, flush=True)
    print(json.dumps({"rows": rows}, indent=1) if args.json else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
