"""`python bench/serve.py --scale`: one workload served through vLLM's engine on one card and
past it — tensor parallel over 1, 2 and 4 cards, data parallel over 2 — on a model of
Granite-3.3-8B's layer shapes, in simulated time, with the host's wall time beside.

    python bench/serve.py --scale           # a table
    python bench/serve.py --scale --json    # the same figures as one JSON object
    python bench/serve.py --scale --configs tp1,disagg   # those configurations only

The model: `GraniteForCausalLM` with Granite 3.3 8B's layer shapes (hidden 4096, 32 heads, 8 KV
heads, FFN 12800) and random weights, `LAYERS` layers (the 40 of the
real model would hold 32 GB of float32 weights in each worker process on a 24 GB host; every
layer has the same shapes and the same two all-reduces, so each one adds the same time per
token at every degree), and a vocabulary of 256 (as bench/tp.py: the embedding and the LM head
are left out of the comparison, their share of the real model's step being a 40th of a
layer's).

The workload: `REQUESTS` prompts of 20 to 100 tokens (random ids), `NEW_TOKENS` greedy tokens
each, at most `CONCURRENCY` in flight (a new one as one finishes), vLLM's engine in the bench's
process driven step by step (`LLMEngine.step`). After each engine step every worker hands over
its card's step record (`SpyreWorker.take_steps`, through `LLM.collective_rpc`); the cards of a
tensor-parallel engine run each step together, so the step's time is the slowest card's, and
the clock is the steps' times back to back. Per configuration: TTFT (a request's arrival to the
end of the step that sampled its first token) and ITL (the mean gap between its later tokens),
medians over the requests; tokens/s over the clock and per card; the collectives' share of the
step time and their bytes over the card link per token; the host's wall time of the loop.

Disaggregated ("disagg"): a prefill and a decode instance, each its own card, through the
Spyre KV connector (spyre_mlir/vllm/connector.py). The prefill instance serves the workload
first, one token each with `do_remote_decode`, at `CONCURRENCY` in flight; a request's KV rows
cross the card link in its prompt's last step (on both cards' clocks), and its prefill time
is from its sending to the end of that step. The decode instance then serves the same closed
loop, each request reaching it its prefill time after the client sent it (its clock jumps
ahead when it has nothing to run), and decodes from the rows; TTFT runs from the sending to
the decode instance's first token. The prefill card's clock runs beside the decode card's
(the simulated time is the later one's).

Data parallel 2: two engines, each its own card, the requests alternated between them (vLLM's
load balancing on an even load) at half the concurrency each; each engine runs in a process of
its own (as vLLM's data-parallel engines do), the clock is the later engine's, TTFT and ITL
medians over all requests. Each configuration runs in processes of its own; the compile cache
keeps its programs for the next run (a first run compiles about 10 minutes per configuration
on the 2-core machine).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GRANITE = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, intermediate_size=12800)
"""Granite 3.3 8B's layer shapes, as bench/llm.py's (not imported: it turns the compile cache off)."""
LAYERS = 2
VOCAB = 256
REQUESTS = 8
CONCURRENCY = 4
NEW_TOKENS = 16
OPTIONS = {"max_model_len": 256, "max_num_seqs": CONCURRENCY, "max_num_batched_tokens": 64, "dtype": "float32"}
CONFIGS = (("tp1", 1, 1), ("tp2", 2, 1), ("tp4", 4, 1), ("dp2", 1, 2), ("disagg", 1, 1))
"""(name, tensor parallel size, data parallel size); "disagg": a prefill and a decode instance."""


def model_dir(where: Path) -> Path:
    """The Granite-shaped model (module docstring), saved once as a Hugging Face directory."""
    if (where / "config.json").is_file():
        return where
    import torch
    from transformers import GraniteConfig, GraniteForCausalLM

    cfg = GraniteConfig(
        num_hidden_layers=LAYERS,
        vocab_size=VOCAB,
        max_position_embeddings=OPTIONS["max_model_len"],
        head_dim=GRANITE["hidden_size"] // GRANITE["num_attention_heads"],
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        **GRANITE,
    )
    torch.manual_seed(0)
    partial = Path(tempfile.mkdtemp(prefix=".granite-", dir=where.parent))
    GraniteForCausalLM(cfg).save_pretrained(partial)
    os.replace(partial, where)
    return where


def prompts(seed: int = 0) -> list[list[int]]:
    import torch

    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(20, 101, (REQUESTS,), generator=gen).tolist()
    return [torch.randint(3, VOCAB, (n,), generator=gen).tolist() for n in lengths]


def closed_loop(
    llm: Any,
    ids: list[list[int]],
    concurrency: int,
    new_tokens: int = NEW_TOKENS,
    delay: list[float] | None = None,
    transfer: list[dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """`ids` served with `concurrency` requests in flight (a client sends the next as one
    finishes); the per-request token times in simulated time, and the steps' figures (module
    docstring). `delay`: the time from a request's sending to its reaching this engine (a
    disaggregated prefill's, on the other card; the clock jumps ahead when the engine has
    nothing to run); `transfer`: each request's `kv_transfer_params`."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    engine = llm.llm_engine
    llm.collective_rpc("take_steps")  # start-up's warm-up steps are not the workload's
    clock, collectives_s, link_bytes, steps = 0.0, 0.0, 0, 0
    pending = list(range(len(ids)))
    sent: list[tuple[float, int]] = []  # (when it reaches the engine, request) for those not yet added
    arrival: dict[str, float] = {}
    times: dict[str, list[float]] = {}
    handed: dict[str, Any] = {}
    started = time.perf_counter()
    while pending or sent or engine.has_unfinished_requests():
        while pending and len(arrival) - len(handed) < concurrency:
            i = pending.pop(0)
            arrival[f"r{i}"], times[f"r{i}"] = clock, []
            sent.append((clock + (delay[i] if delay else 0.0), i))
        if sent and not engine.has_unfinished_requests():
            clock = max(clock, min(t for t, _ in sent))
        for t, i in sorted(sent):
            if t <= clock:
                sent.remove((t, i))
                extra = {"kv_transfer_params": transfer[i]} if transfer and transfer[i] else None
                params = SamplingParams(
                    temperature=0, max_tokens=new_tokens, ignore_eos=True, detokenize=False, extra_args=extra
                )
                engine.add_request(f"r{i}", TokensPrompt(prompt_token_ids=ids[i]), params)
        outs = engine.step()
        cards = llm.collective_rpc("take_steps")
        if len({len(c) for c in cards}) != 1:
            raise RuntimeError(f"the cards ran different numbers of steps: {[len(c) for c in cards]}")
        for together in zip(*cards):
            slowest = max(together, key=lambda s: s["device_s"])
            clock += slowest["device_s"]
            collectives_s += slowest["collectives_s"]
            link_bytes += sum(s["link_bytes"] for s in together)
            steps += 1
        for o in outs:
            t = times[o.request_id]
            while len(t) < len(o.outputs[0].token_ids):
                t.append(clock)
            if o.finished:
                handed[o.request_id] = o.kv_transfer_params
    return {
        "arrival": arrival,
        "times": times,
        "handed": handed,
        "clock_s": clock,
        "collectives_s": collectives_s,
        "link_bytes": link_bytes,
        "steps": steps,
        "wall_s": time.perf_counter() - started,
        "cards": len(cards),
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One configuration's figures from its engines' loops (one, or one per data-parallel engine)."""
    ttft = [t[0] - r["arrival"][k] for r in runs for k, t in r["times"].items()]
    itl = [statistics.mean(b - a for a, b in zip(t, t[1:])) for r in runs for t in r["times"].values()]
    tokens = sum(len(t) for r in runs for t in r["times"].values())
    clock = max(r["clock_s"] for r in runs)
    cards = sum(r["cards"] for r in runs)
    return {
        "cards": cards,
        "requests": sum(len(r["times"]) for r in runs),
        "new_tokens": tokens,
        "simulated_s": clock,
        "ttft_ms": 1e3 * statistics.median(ttft),
        "itl_ms": 1e3 * statistics.median(itl),
        "tokens_per_s": tokens / clock,
        "tokens_per_s_per_card": tokens / clock / cards,
        "collectives_share": sum(r["collectives_s"] for r in runs) / sum(r["clock_s"] for r in runs),
        "link_bytes_per_token": sum(r["link_bytes"] for r in runs) / tokens,
        "wall_s": max(r["wall_s"] for r in runs),
        "steps": sum(r["steps"] for r in runs),
    }


def worker(model: str, tp: int, part: int, parts: int) -> dict[str, Any]:
    """One engine (in this process) at tensor parallel size `tp`, serving every `parts`-th
    request from the `part`-th."""
    from vllm import LLM

    started = time.perf_counter()
    llm = LLM(model=model, tensor_parallel_size=tp, skip_tokenizer_init=True, **OPTIONS)  # token ids in and out
    startup_s = time.perf_counter() - started
    ids = prompts()[part::parts]
    run = closed_loop(llm, ids, max(1, CONCURRENCY // parts))
    return {**run, "startup_s": startup_s}


def disaggregated(model: str, role: str, where: str) -> dict[str, Any]:
    """One instance of the disaggregated pair (in this process), sharing the transfer
    directory `where`: the prefill instance serves every prompt for one token and hands its
    KV rows over (connector.py); the decode instance takes each request when the prefill
    card has finished it (`where`/prefill.json: the prefill run's figures), from its rows."""
    from vllm import LLM
    from vllm.config import KVTransferConfig

    from spyre_mlir.vllm.connector import transfer_config

    kv_role = "kv_producer" if role == "prefill" else "kv_consumer"
    started = time.perf_counter()
    llm = LLM(
        model=model,
        skip_tokenizer_init=True,
        kv_transfer_config=KVTransferConfig(**transfer_config(kv_role, where)),
        **OPTIONS,
    )
    startup_s = time.perf_counter() - started
    ids = prompts()
    if role == "prefill":
        hand_over = [{"do_remote_decode": True}] * len(ids)
        run = closed_loop(llm, ids, CONCURRENCY, new_tokens=1, transfer=hand_over)
    else:
        first = json.loads((Path(where) / "prefill.json").read_text())
        rids = [f"r{i}" for i in range(len(ids))]
        delay = [first["times"][r][0] - first["arrival"][r] for r in rids]
        transfer = [first["handed"][r] for r in rids]
        run = closed_loop(llm, ids, CONCURRENCY, delay=delay, transfer=transfer)
    return {**run, "startup_s": startup_s}


def _engine(what: str, *args: str) -> dict[str, Any]:
    """This file run as one engine's process (its `__main__`), the engine in that process: the
    JSON figures it prints last."""
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_LOGGING_STREAM": "ext://sys.stderr"}
    p = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env, timeout=7200)
    if p.returncode != 0:
        raise RuntimeError(f"{what} exited with {p.returncode}:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_disaggregated(model: Path) -> dict[str, Any]:
    """The prefill instance's run, then the decode instance's on its hand-overs (module
    docstring): TTFT, ITL and tokens are the decode instance's, the cards both."""
    with tempfile.TemporaryDirectory(prefix="spyre-bench-disagg-") as where:
        runs = {}
        for role in ("prefill", "decode"):
            runs[role] = _engine(f"the {role} instance", "--disaggregated", str(model), role, where)
            (Path(where) / f"{role}.json").write_text(json.dumps(runs[role]))
    prefill, decode = runs["prefill"], runs["decode"]
    figures = summary([decode])
    both = prefill["clock_s"] + decode["clock_s"]
    figures.update(
        cards=2,
        simulated_s=max(prefill["clock_s"], decode["clock_s"]),
        collectives_share=(prefill["collectives_s"] + decode["collectives_s"]) / both,
        link_bytes_per_token=(prefill["link_bytes"] + decode["link_bytes"]) / figures["new_tokens"],
        wall_s=prefill["wall_s"] + decode["wall_s"],
        steps=prefill["steps"] + decode["steps"],
        startup_s=max(prefill["startup_s"], decode["startup_s"]),
        prefill_steps=prefill["steps"],
    )
    figures["tokens_per_s"] = figures["new_tokens"] / figures["simulated_s"]
    figures["tokens_per_s_per_card"] = figures["tokens_per_s"] / 2
    return figures


def run_config(model: Path, tp: int, dp: int) -> dict[str, Any]:
    """A configuration's engines, each in a process of its own, one after the other (the host
    holds one engine's weights at a time; the figures are simulated, each engine's wall time
    its own loop's)."""
    runs = [
        _engine(f"the engine of tp {tp}", "--worker", str(model), str(tp), str(part), str(dp)) for part in range(dp)
    ]
    figures = summary(runs)
    figures["startup_s"] = max(r["startup_s"] for r in runs)
    return figures


def scale(only: list[str] | None = None) -> dict[str, Any]:
    """The configurations (`only` those named) and their ratios to TP 1's (when it ran)."""
    from spyre_mlir.frontend.compile_cache import cache_dir

    where = cache_dir() / "models" / f"granite-8b-shaped-{LAYERS}-layers"
    where.parent.mkdir(parents=True, exist_ok=True)
    model = model_dir(where)
    figures: dict[str, Any] = {
        "model": f"Granite-3.3-8B layer shapes, {LAYERS} layers, vocabulary {VOCAB}",
        "options": OPTIONS,
        "workload": {"requests": REQUESTS, "concurrency": CONCURRENCY, "new_tokens": NEW_TOKENS},
    }
    known = [name for name, _, _ in CONFIGS]
    if only is not None and set(only) - set(known):
        raise SystemExit(f"--configs: unknown {sorted(set(only) - set(known))}; known: {', '.join(known)}")
    names = [name for name in known if only is None or name in only]
    for name, tp, dp in CONFIGS:
        if name in names:
            figures[name] = run_disaggregated(model) if name == "disagg" else run_config(model, tp, dp)
            print(f"{name}: {json.dumps(figures[name])}", file=sys.stderr, flush=True)  # progress
    base = figures.get("tp1")
    for name in names:
        f = figures[name]
        f["itl_vs_tp1"] = f["itl_ms"] / base["itl_ms"] if base else None
        f["ttft_vs_tp1"] = f["ttft_ms"] / base["ttft_ms"] if base else None
        f["tokens_per_s_vs_tp1"] = f["tokens_per_s"] / base["tokens_per_s"] if base else None
    if base and "tp4" in figures:
        figures["itl_tp4_vs_tp1"] = figures["tp4"]["itl_vs_tp1"]
    return figures


def table(f: dict[str, Any]) -> str:
    w = f["workload"]
    rows = [
        f"{f['model']}: {w['requests']} requests, {w['concurrency']} in flight, {w['new_tokens']} new tokens each "
        f"({', '.join(f'{k} {v}' for k, v in f['options'].items())})",
        "",
        "| config | cards | TTFT ms | ITL ms | ITL x TP1 | tokens/s | per card | card link % | card link B/new token | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, _, _ in CONFIGS:
        if name not in f:
            continue
        c = f[name]
        ratio = "" if c["itl_vs_tp1"] is None else f"{c['itl_vs_tp1']:.3f}"
        rows.append(
            f"| {name} | {c['cards']} | {c['ttft_ms']:.2f} | {c['itl_ms']:.3f} | {ratio} | "
            f"{c['tokens_per_s']:.0f} | {c['tokens_per_s_per_card']:.0f} | {100 * c['collectives_share']:.1f} | "
            f"{c['link_bytes_per_token']:.0f} | {c['wall_s']:.0f} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":  # one engine of a configuration (run_config, run_disaggregated)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))))
    elif len(sys.argv) == 5 and sys.argv[1] == "--disaggregated":
        print(json.dumps(disaggregated(sys.argv[2], sys.argv[3], sys.argv[4])))
