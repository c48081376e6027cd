"""Tensor parallelism over 1, 2 and 4 simulated cards for a Granite-3.3-8B-shaped layer stack:
simulated TTFT (1024-token prompt) and ITL, the collectives' share, the scaling, the memory
each card holds.

    python bench/tp.py            # a table
    python bench/tp.py --json     # {"itl_s": {"1": ..., "2": ..., "4": ...}, "ttft_s": {...}, ...}

How it is measured. Under the Megatron plan (spyre_mlir/distributed/tensor_parallel.py) every
rank holds the same shapes — 32/N query heads, 8/N KV heads, an FFN of 12800/N, the hidden size
4096 whole — so one rank's shard gives every rank's compute: a one-layer Granite with those
shapes is compiled and run through HF's `generate(..., cache_implementation="static")` as
bench/llm.py runs the whole layer (the same `generate_figures`), TTFT from a 1024-token prompt,
ITL from an 8-token one. Each layer adds two all-reduces of the (tokens x 4096) activations
(after the attention output and after the FFN's down projection), priced by the link model
the "spyre" process group charges (distributed/link.py; test_collectives.py checks that the
group charges exactly that). The stack is 40 such layers; the embedding and the LM head
(replicated, the same on every TP degree) are left out. Per card: the layer stack's DL16
weights over N, and the KV cache of a 1024-token context over N.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

os.environ.setdefault("SPYRE_CACHE", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm import GRANITE, GRANITE_LAYERS, generate_figures  # bench/llm.py, beside this file

DEGREES = (1, 2, 4)
PROMPT = 1024
HEAD_DIM = GRANITE["hidden_size"] // GRANITE["num_attention_heads"]


def shard(tp: int, tokens: int) -> dict[str, Any]:
    """One rank's shard of the layer at TP degree `tp`: its TTFT and ITL for a `tokens` prompt."""
    import warnings

    import torch
    from transformers import GraniteConfig, GraniteForCausalLM

    warnings.filterwarnings("ignore")
    cfg = GraniteConfig(
        num_hidden_layers=1,
        vocab_size=256,
        max_position_embeddings=4096,
        hidden_size=GRANITE["hidden_size"],
        num_attention_heads=GRANITE["num_attention_heads"] // tp,
        num_key_value_heads=GRANITE["num_key_value_heads"] // tp,
        intermediate_size=GRANITE["intermediate_size"] // tp,
        head_dim=HEAD_DIM,
    )
    torch.manual_seed(0)
    model = GraniteForCausalLM(cfg).eval()
    ids = torch.randint(0, 256, (1, tokens))
    figures = generate_figures(model, ids, 4)
    layer = model.model.layers[0]
    return {
        "ttft_s": figures["ttft_s"],
        "itl_s": figures["itl_s"],
        "layer_weight_bytes": 2 * sum(p.numel() for p in layer.parameters()),
    }


def _run(tp: int, tokens: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--worker", str(tp), str(tokens)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench/tp.py: the TP {tp} shard at {tokens} tokens failed:\n{done.stderr[-4000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"bench/tp.py: TP {tp}, {tokens} tokens: {json.dumps(result)}", file=sys.stderr, flush=True)
    return result


def measure() -> dict[str, Any]:
    from spyre_mlir.distributed.link import collective_seconds
    from spyre_mlir.target.config import DeviceConfig

    cfg = DeviceConfig()
    hidden = GRANITE["hidden_size"]
    r: dict[str, Any] = {k: {} for k in ("ttft_s", "itl_s", "ttft_collective_s", "itl_collective_s", "card_bytes")}
    for tp in DEGREES:
        prefill, decode = _run(tp, PROMPT), _run(tp, 8)
        ar_prefill = 2 * collective_seconds("all_reduce", PROMPT * hidden * 2, tp, cfg)
        ar_decode = 2 * collective_seconds("all_reduce", hidden * 2, tp, cfg)
        key = str(tp)
        r["ttft_s"][key] = GRANITE_LAYERS * (prefill["ttft_s"] + ar_prefill)
        r["itl_s"][key] = GRANITE_LAYERS * (decode["itl_s"] + ar_decode)
        r["ttft_collective_s"][key] = GRANITE_LAYERS * ar_prefill
        r["itl_collective_s"][key] = GRANITE_LAYERS * ar_decode
        kv = GRANITE_LAYERS * 2 * (GRANITE["num_key_value_heads"] // tp) * HEAD_DIM * 2 * PROMPT
        r["card_bytes"][key] = GRANITE_LAYERS * decode["layer_weight_bytes"] + kv
    base_itl, base_ttft = r["itl_s"]["1"], r["ttft_s"]["1"]
    r["itl_ratio"] = {str(tp): r["itl_s"][str(tp)] / base_itl for tp in DEGREES}
    r["itl_scaling_efficiency"] = {str(tp): base_itl / (tp * r["itl_s"][str(tp)]) for tp in DEGREES}
    r["ttft_scaling_efficiency"] = {str(tp): base_ttft / (tp * r["ttft_s"][str(tp)]) for tp in DEGREES}
    r["layers"], r["prompt_tokens"] = GRANITE_LAYERS, PROMPT
    return r


def table(r: dict[str, Any]) -> str:
    lines = [
        f"Granite-3.3-8B-shaped stack ({r['layers']} layers, random weights), TP over simulated cards",
        f"{'TP':>3}{'TTFT ms':>11}{'coll %':>8}{'eff':>6}{'ITL ms':>10}{'coll %':>8}{'eff':>6}{'x TP1':>7}{'GB/card':>9}",
    ]
    for tp in map(str, DEGREES):
        lines.append(
            f"{tp:>3}{r['ttft_s'][tp] * 1e3:>11.2f}{100 * r['ttft_collective_s'][tp] / r['ttft_s'][tp]:>8.1f}"
            f"{r['ttft_scaling_efficiency'][tp]:>6.2f}{r['itl_s'][tp] * 1e3:>10.3f}"
            f"{100 * r['itl_collective_s'][tp] / r['itl_s'][tp]:>8.1f}{r['itl_scaling_efficiency'][tp]:>6.2f}"
            f"{r['itl_ratio'][tp]:>7.3f}{r['card_bytes'][tp] / 1e9:>9.2f}"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--worker", nargs=2, type=int, metavar=("TP", "TOKENS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(shard(*a.worker)))
        return
    r = measure()
    print(json.dumps(r) if a.json else table(r))


if __name__ == "__main__":
    main()
