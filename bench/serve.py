"""Serving SmolLM2-135M-Instruct (real weights) through vLLM on the spyre platform: every step one
program on the card, attention and the paged KV cache included (docs/vllm.md).

    python bench/serve.py            # a table
    python bench/serve.py --json     # the same figures as one JSON object
    python bench/serve.py --quick    # concurrency 1 only, 8 new tokens, no server, no HF-path ITL
    python bench/serve.py --contexts # a decode step of a tiny Llama at two contexts, both model paths
    python bench/serve.py --scale    # a Granite-shaped model at TP 1, 2, 4 and DP 2 (bench/serve_scale.py)

Runs in the vLLM environment (.venv-vllm). What is measured:

- In simulated time, vLLM's engine in this process (`LLM`, no multiprocessing) driven as a
  closed loop at concurrency 1, 4 and 16 (that many requests in flight, a new one as one
  finishes) over a fixed set of prompts: short ones, ones longer than a step
  (`max_num_batched_tokens`, so prefilled in chunks) and groups that share a long prefix (so
  prefix caching reuses its pages). The clock is the sum of the engine steps' simulated device
  time (each step's kernels and host-link transfers: `StepTime.device_s`), the steps back to
  back. Per request: TTFT (from its arrival to the end of the step that sampled its first
  token), ITL (the mean gap between its later tokens); per concurrency: tokens/s (new tokens
  over the clock), the median TTFT and ITL.
- The decode step's share of the DDR roofline at concurrency 1 (`decode_roofline_c1`): the
  bytes a decode step must move over DDR (every weight once in DL16, and the request's keys and
  values so far) over `ddr_bytes_per_s`, divided by the step's simulated time; the median over
  the decode steps.
- Attention's share of a decode step: its attention kernels' time (spyre_mlir/vllm/kernels.py)
  over the step's kernel time; host-link bytes per decode step (the step's indices and
  visibility numbers up, the sampled logits down: `StepTime.transfer_bytes`).
- `tokens_per_s_scaling_c16`: tokens/s at concurrency 16 over tokens/s at concurrency 1.
- `itl_vs_hf_c1`: the served ITL at concurrency 1 over bench/llm.py's HF-path ITL for the
  same model (run in the main environment, `--hf-python`, default ../.venv/bin/python beside
  this environment).
- Host side: `vllm bench serve` (`python -m spyre_mlir.vllm bench serve`) against the OpenAI
  server on the same model and options, at concurrency 4: wall time, completed and failed
  requests, requests/s. Its start-up loads the programs the first part compiled (the compile
  cache).

Start-up compiles every bucket of the options below (35 programs, 9 of them decode, for
SmolLM2's 30 layers; the compile cache keeps them for the next run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine in this process: its steps' records
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")  # stdout holds the table or the JSON only

OPTIONS = {"max_model_len": 512, "max_num_seqs": 16, "max_num_batched_tokens": 64, "dtype": "float32"}
CONCURRENCY = (1, 4, 16)
NEW_TOKENS = 32
PREFIX = (
    "You are a careful assistant for a city library. Answer in plain English, cite the shelf of every book you "
    "name, and keep each answer short. The library opens at nine and closes at six; its reading rooms are on "
    "the second floor, its archive in the basement, and its map collection in the east wing. Questions about "
    "the archive go to the archivist. The library lends up to twelve books for three weeks; maps and archive "
    "papers stay in the building. "
)
QUESTIONS = (
    "Where are the maps kept?",
    "How long can I keep a book?",
    "Who answers questions about old newspapers?",
    "When does the library close on weekdays?",
)
SHORT = (
    "The history of the city begins with",
    "Water boils at a temperature of",
    "def fibonacci(n):",
    "The capital of France is",
    "A haiku about autumn leaves:",
    "List three prime numbers:",
)
LONG = (
    "Summarise the following: The river that runs through the valley was once the main road of the region. "
    "Boats carried grain, wool and timber down to the coast, and the towns along its banks grew rich on the "
    "trade. When the railway came, the river traffic faded within a generation, the warehouses emptied, and "
    "the towns turned to the new stations at their edges. Today the old quays are parks.",
    "Explain step by step how a compiler turns a loop over an array into vector instructions, from the "
    "intermediate representation to the instructions the processor runs, and say what can stop it.",
)


class Steps(logging.Handler):
    """The spyre_step records of the worker's log (vLLM's "vllm.spyre" logger)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.steps: list[Any] = []

    def emit(self, record: logging.LogRecord) -> None:
        if hasattr(record, "spyre_step"):
            self.steps.append(record.spyre_step)


@contextlib.contextmanager
def steps_logged():
    logger = logging.getLogger("vllm.spyre")
    handler, level = Steps(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def prompts(tok: Any) -> list[list[int]]:
    """The fixed prompts as token ids: each question after the shared prefix (twice, so later
    ones find its pages cached), the long ones, the short ones."""
    texts = [PREFIX + q for q in QUESTIONS] * 2 + list(LONG) * 2 + list(SHORT) * 2
    return [tok(t).input_ids for t in texts]


def closed_loop(llm: Any, ids: list[list[int]], concurrency: int, new_tokens: int) -> dict[str, Any]:
    """The prompts served with `concurrency` requests in flight; figures in simulated time."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    engine = llm.llm_engine
    params = SamplingParams(temperature=0, max_tokens=new_tokens, ignore_eos=True, detokenize=False)
    clock = 0.0
    pending = list(enumerate(ids))
    arrival: dict[str, float] = {}
    token_times: dict[str, list[float]] = {}
    prompt_len: dict[str, int] = {}
    decode_steps: list[tuple[Any, int]] = []  # (step, context) of concurrency-1 decode steps
    all_steps: list[Any] = []
    with steps_logged() as log:
        while pending or engine.has_unfinished_requests():
            while pending and len(arrival) - sum(len(t) >= new_tokens for t in token_times.values()) < concurrency:
                i, p = pending.pop(0)
                rid = f"c{concurrency}-{i}"
                engine.add_request(rid, TokensPrompt(prompt_token_ids=p), params)
                arrival[rid], token_times[rid], prompt_len[rid] = clock, [], len(p)
            before = len(log.steps)
            outs = engine.step()
            new = log.steps[before:]
            clock += sum(s.device_s for s in new)
            all_steps += new
            for o in outs:
                times = token_times[o.request_id]
                while len(times) < len(o.outputs[0].token_ids):
                    times.append(clock)
            if concurrency == 1 and len(new) == 1 and new[0].requests == 1 and new[0].tokens == 1:
                rid = next(reversed(arrival))  # the one request in flight, the last one added
                decode_steps.append((new[0], prompt_len[rid] + len(token_times[rid]) - 1))
    ttft = [token_times[r][0] - arrival[r] for r in arrival]
    itl = [statistics.mean(b - a for a, b in zip(t, t[1:])) for t in token_times.values() if len(t) > 1]
    decodes = [s for s in all_steps if s.tokens == s.requests]
    return {
        "requests": len(arrival),
        "new_tokens": sum(len(t) for t in token_times.values()),
        "simulated_s": clock,
        "tokens_per_s": sum(len(t) for t in token_times.values()) / clock,
        "ttft_ms": 1e3 * statistics.median(ttft),
        "itl_ms": 1e3 * statistics.median(itl),
        "steps": len(all_steps),
        "decode_steps": len(decodes),
        "attention_share": sum(s.attention_s for s in decodes) / sum(s.kernels_s for s in decodes),
        "link_bytes_per_decode_step": statistics.mean(sum(s.transfer_bytes.values()) for s in decodes),
        "link_bytes_by_kind_per_decode_step": {
            k: statistics.mean(s.transfer_bytes.get(k, 0) for s in decodes)
            for k in sorted({k for s in decodes for k in s.transfer_bytes})
        },
        "_decode_steps_c1": decode_steps,
    }


def roofline(llm: Any, decode_steps: list[tuple[Any, int]]) -> dict[str, Any]:
    """The median DDR roofline attainment of concurrency 1's decode steps (module docstring)."""
    from spyre_mlir.frontend.backend import get_device_model

    runner = llm.llm_engine.model_executor.driver_worker.worker.model_runner
    model = runner.get_model()
    weight_bytes = 2 * sum(p.numel() for p in model.parameters())
    cfg = llm.llm_engine.vllm_config.model_config.hf_config
    layers, kv_width = cfg.num_hidden_layers, cfg.num_key_value_heads * (cfg.hidden_size // cfg.num_attention_heads)
    bandwidth = get_device_model().config.ddr_bytes_per_s
    shares = []
    for step, context in decode_steps:
        kv_bytes = 2 * layers * (context + 1) * kv_width * 2  # keys and values read, the new row's written
        shares.append((weight_bytes + kv_bytes) / bandwidth / step.device_s)
    block = runner.step_shapes.block_size
    by_pages: dict[int, list[tuple[Any, int]]] = {}
    for step, context in decode_steps:
        by_pages.setdefault(-(-(context + 1) // block), []).append((step, context))
    return {
        "decode_c1_by_pages": {
            pages: {
                "contexts": [min(c for _, c in found), max(c for _, c in found)],
                "steps": len(found),
                "macs": statistics.median(s.macs for s, _ in found),
                "kernels_ms": 1e3 * statistics.median(s.kernels_s for s, _ in found),
                "attention_ms": 1e3 * statistics.median(s.attention_s for s, _ in found),
                "link_bytes": statistics.median(sum(s.transfer_bytes.values()) for s, _ in found),
            }
            for pages, found in sorted(by_pages.items())
        },
        "decode_roofline_c1": statistics.median(shares),
        "decode_step_ms_c1": 1e3 * statistics.median(s.device_s for s, _ in decode_steps),
        "weight_bytes": weight_bytes,
    }


def hf_itl_ms(hf_python: str) -> float | None:
    """bench/llm.py's HF-path ITL of SmolLM2 (its SmolLM2 measurement: a 128-token prompt, 16
    new tokens), run in the main environment."""
    if not Path(hf_python).exists():
        return None
    bench = Path(__file__).with_name("llm.py")
    cmd = [hf_python, str(bench), "--worker", "smollm2", "False"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
    if out.returncode != 0:
        print(f"bench/llm.py failed ({out.returncode}):\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return 1e3 * float(json.loads(out.stdout.strip().splitlines()[-1])["itl_s"])


def served(model: Path, workdir: Path) -> dict[str, Any]:
    """`vllm bench serve` against the OpenAI server on the same model and options (module docstring)."""
    from spyre_mlir.vllm.server import Server

    flat = [a for k, v in OPTIONS.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    log = workdir / "serve.log"
    started = time.perf_counter()
    with Server(model, flat, log, start_timeout=3600) as server:
        startup_s = time.perf_counter() - started
        cmd = [
            sys.executable,
            "-m",
            "spyre_mlir.vllm",
            "bench",
            "serve",
            "--backend",
            "vllm",
            "--base-url",
            server.url,
            "--model",
            str(model),
            "--dataset-name",
            "random",
            "--random-input-len",
            "128",
            "--random-output-len",
            str(NEW_TOKENS),
            "--num-prompts",
            "16",
            "--max-concurrency",
            "4",
            "--ignore-eos",
            "--save-result",
            "--result-dir",
            str(workdir),
            "--result-filename",
            "bench.json",
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
    if out.returncode != 0:
        return {"error": f"vllm bench serve exited with {out.returncode}: {out.stderr[-1500:]}"}
    result = json.loads((workdir / "bench.json").read_text())
    return {
        "startup_s": startup_s,
        "duration_s": result.get("duration"),
        "completed": result.get("completed"),
        "failed": result.get("failed", result.get("num_failed", 0)),
        "requests_per_s": result.get("request_throughput"),
        "output_tokens_per_s_wall": result.get("output_throughput"),
    }


def run(quick: bool, hf_python: str, serve: bool) -> dict[str, Any]:
    from transformers import AutoTokenizer
    from vllm import LLM

    from spyre_mlir.frontend.backend import STATS
    from spyre_mlir.frontend.compile_cache import cache_dir
    from spyre_mlir.vllm import models

    model = models.smollm2(cache_dir() / "models" / models.NAME)
    tok = AutoTokenizer.from_pretrained(model)
    started = time.perf_counter()
    llm = LLM(model=str(model), **OPTIONS)
    figures: dict[str, Any] = {
        "model": models.NAME,
        "options": OPTIONS,
        "startup_s": time.perf_counter() - started,
        "compiles": STATS.compiles,
        "cache_loads": STATS.cache_loads,
        "cpu_fallback_graphs": sum(bool(g.cpu_fallback) for g in STATS.graphs),
    }
    ids = prompts(tok)
    levels = (1,) if quick else CONCURRENCY
    new_tokens = 8 if quick else NEW_TOKENS
    for c in levels:
        figures[f"c{c}"] = closed_loop(llm, ids if c > 1 else ids[:: 4 if quick else 2], c, new_tokens)
        shown = {k: v for k, v in figures[f"c{c}"].items() if not k.startswith("_")}
        print(f"concurrency {c}: {json.dumps(shown)}", file=sys.stderr, flush=True)  # progress
    figures.update(roofline(llm, figures["c1"].pop("_decode_steps_c1")))
    for c in levels[1:]:
        figures[f"c{c}"].pop("_decode_steps_c1")
    if 16 in levels:
        figures["tokens_per_s_scaling_c16"] = figures["c16"]["tokens_per_s"] / figures["c1"]["tokens_per_s"]
    if not quick:
        hf = hf_itl_ms(hf_python)
        figures["hf_itl_ms"] = hf
        figures["itl_vs_hf_c1"] = figures["c1"]["itl_ms"] / hf if hf else None
    if serve and not quick:
        del llm
        with tempfile.TemporaryDirectory(prefix="spyre-bench-serve-") as d:
            figures["vllm_bench_serve"] = served(model, Path(d))
    return figures


def table(f: dict[str, Any]) -> str:
    rows = [
        f"SmolLM2-135M-Instruct served on the spyre platform ({', '.join(f'{k} {v}' for k, v in f['options'].items())})",
        f"start-up: {f['startup_s']:.0f} s, {f['compiles']} programs compiled, {f['cache_loads']} loaded; "
        f"graphs with a CPU op: {f['cpu_fallback_graphs']}",
        "",
        "| concurrency | requests | TTFT (ms) | ITL (ms) | tokens/s | attention share | link bytes / decode step |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in CONCURRENCY:
        if (r := f.get(f"c{c}")) is None:
            continue
        rows.append(
            f"| {c} | {r['requests']} | {r['ttft_ms']:.3f} | {r['itl_ms']:.3f} | {r['tokens_per_s']:.0f} | "
            f"{r['attention_share']:.2f} | {r['link_bytes_per_decode_step']:.0f} |"
        )
    rows += [
        "",
        f"decode roofline at concurrency 1: {f['decode_roofline_c1']:.3f} (a step {f['decode_step_ms_c1']:.3f} ms; "
        f"{f['weight_bytes'] / 1e6:.0f} MB of weights in DL16)",
    ]
    for pages, d in f["decode_c1_by_pages"].items():
        rows.append(
            f"a decode step at concurrency 1 over {pages} page(s) (contexts {d['contexts'][0]}-{d['contexts'][1]}): "
            f"{d['macs']:,.0f} MACs, kernels {d['kernels_ms']:.3f} ms (attention {d['attention_ms']:.3f} ms), "
            f"{d['link_bytes']:.0f} bytes over the host link"
        )
    if "tokens_per_s_scaling_c16" in f:
        rows.append(f"tokens/s at concurrency 16 over concurrency 1: {f['tokens_per_s_scaling_c16']:.2f}")
    if f.get("itl_vs_hf_c1"):
        rows.append(
            f"served ITL at concurrency 1 over bench/llm.py's HF-path ITL ({f['hf_itl_ms']:.3f} ms): "
            f"{f['itl_vs_hf_c1']:.3f}"
        )
    if (s := f.get("vllm_bench_serve")) is not None:
        rows.append(f"vllm bench serve (host wall time, concurrency 4): {s}")
    return "\n".join(rows)


TINY_LLAMA = dict(
    vocab_size=256,
    hidden_size=256,
    intermediate_size=512,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=1024,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)
"""The tests' tiny Llama (test/vllm: 2 layers, 4 heads of 64, 2 KV heads), random weights."""
CONTEXT_PROMPTS = (12, 404)


def context_step(path: str) -> list[dict[str, Any]]:
    """One request's last decode step of the tiny Llama after prompts of CONTEXT_PROMPTS tokens
    (3 new tokens each), on vLLM's own model (`path` "vllm") or the hardware-agnostic path
    ("hw_agnostic"); a process of its own per path (vLLM's Transformers backend decorates
    transformers' classes for good)."""
    import torch
    import transformers
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    if path == "hw_agnostic":
        os.environ["VLLM_USE_HW_AGNOSTIC"] = "1"
    with tempfile.TemporaryDirectory(prefix="spyre-bench-llama-") as d:
        torch.manual_seed(0)
        transformers.LlamaForCausalLM(transformers.LlamaConfig(**TINY_LLAMA)).save_pretrained(d)
        llm = LLM(
            model=d,
            skip_tokenizer_init=True,
            max_model_len=512,
            max_num_seqs=1,
            max_num_batched_tokens=64,
            dtype="float32",
            model_impl="transformers" if path == "hw_agnostic" else "vllm",
        )
        params = SamplingParams(temperature=0, max_tokens=3, ignore_eos=True, detokenize=False)
        gen = torch.Generator().manual_seed(5)
        found = []
        for n in CONTEXT_PROMPTS:
            prompt = torch.randint(3, 256, (n,), generator=gen).tolist()
            with steps_logged() as log:
                llm.generate([TokensPrompt(prompt_token_ids=prompt)], params, use_tqdm=False)
            s = log.steps[-1]
            found.append(
                {
                    "context": n + 2,
                    "macs": s.macs,
                    "kernels_us": 1e6 * s.kernels_s,
                    "attention_us": 1e6 * s.attention_s,
                    "link_bytes": dict(s.transfer_bytes),
                }
            )
        return found


def contexts() -> dict[str, Any]:
    """`context_step` on both model paths, each in a process of its own."""
    out = {}
    for path in ("vllm", "hw_agnostic"):
        cmd = [sys.executable, __file__, "--context-worker", path]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {done.returncode}:\n{done.stderr[-3000:]}")
        out[path] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def contexts_table(f: dict[str, Any]) -> str:
    rows = [
        "| model path | context | MACs | kernels (µs) | attention (µs) | host-link bytes by kind |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for path, steps in f.items():
        for s in steps:
            rows.append(
                f"| {path} | {s['context']} | {s['macs']:,} | {s['kernels_us']:.1f} | {s['attention_us']:.1f} | "
                f"{s['link_bytes']} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--quick", action="store_true", help="concurrency 1 only, 8 new tokens, no server")
    ap.add_argument("--no-serve", action="store_true", help="leave out `vllm bench serve` against the server")
    ap.add_argument(
        "--hf-python",
        default=str(Path(sys.prefix).parent / ".venv" / "bin" / "python"),
        help="the main environment's python, for bench/llm.py's HF-path ITL",
    )
    ap.add_argument(
        "--contexts",
        action="store_true",
        help="only a decode step of the tests' tiny Llama at two contexts, on both model paths",
    )
    ap.add_argument(
        "--scale",
        action="store_true",
        help="only the Granite-shaped workload at TP 1, 2, 4 and DP 2 (bench/serve_scale.py)",
    )
    ap.add_argument("--configs", help="with --scale: the configurations to run, comma-separated (default: all)")
    ap.add_argument("--context-worker", choices=["vllm", "hw_agnostic"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.scale:
        import serve_scale  # bench/serve_scale.py, beside this file

        found = serve_scale.scale(args.configs.split(",") if args.configs else None)
        print(json.dumps(found, indent=1) if args.json else serve_scale.table(found))
        return 0
    if args.context_worker:
        print(json.dumps(context_step(args.context_worker)))
        return 0
    if args.contexts:
        found = contexts()
        print(json.dumps(found, indent=1) if args.json else contexts_table(found))
        return 0
    figures = run(args.quick, args.hf_python, not args.no_serve)
    print(json.dumps(figures, indent=1, default=str) if args.json else table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
