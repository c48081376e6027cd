"""vLLM's offline `LLM` on the spyre platform (spyre_mlir/vllm): each step one program on the
card, attention and the paged KV cache included. Greedy tokens as transformers' eager ones
for batches, a prompt longer than a step (chunked prefill) and prompts sharing a prefix
(prefix caching); no float op on the CPU; the KV cache never crosses the host link; a decode
step's work grows with its context as attention's does; each step's and each request's
simulated device time in the log."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine in this process: STATS is ours

from conftest import greedy_tokens, llama_greedy, random_prompts, records

from spyre_mlir.frontend.backend import STATS

pytestmark = pytest.mark.slow  # the module's LLM starts in about 90 s: every step bucket compiled

MAX_MODEL_LEN, MAX_NUM_SEQS, STEP_TOKENS = 512, 4, 64
BLOCK = 128
"""The CPU platform's block size, which the spyre platform keeps."""


@pytest.fixture(scope="module")
def llm(llama_dir):
    from vllm import LLM

    llm = LLM(
        model=str(llama_dir),
        max_model_len=MAX_MODEL_LEN,
        max_num_seqs=MAX_NUM_SEQS,
        max_num_batched_tokens=STEP_TOKENS,
        disable_log_stats=False,
    )
    llm.startup_compiles = STATS.compiles  # type: ignore[attr-defined]
    llm.startup_programs = STATS.compiles + STATS.cache_loads  # type: ignore[attr-defined]
    llm.startup_graphs = len(STATS.graphs)  # type: ignore[attr-defined]
    return llm


@pytest.fixture(scope="module")
def eager(llama_dir):
    return llama_greedy(llama_dir)


def _cache_bytes(llm) -> int:
    """One layer's key cache on the card (DL16)."""
    runner = llm.llm_engine.model_executor.driver_worker.worker.model_runner
    return runner.kv_caches[0][0].numel() * 2


def test_llm_generates_eagers_tokens_with_every_step_on_the_card(llm, eager):
    from vllm.platforms import current_platform

    import spyre_mlir.vllm.platform as platform

    assert type(current_platform) is platform.SpyrePlatform
    config = llm.llm_engine.vllm_config
    assert config.model_config.dtype == torch.float32  # dtype auto: the checkpoint's
    # the KV cache holds max_num_seqs requests of max_model_len and vLLM's null block: 4 x 4 + 1
    # blocks of 128 tokens, not the quarter of the host memory it may have
    assert config.cache_config.num_gpu_blocks == MAX_NUM_SEQS * MAX_MODEL_LEN // BLOCK + 1
    # start-up compiled (or loaded) every bucket: serving compiles nothing
    assert llm.startup_programs > 0
    tokens = 0
    batches = ((5, 9, 13), (6, 11, 3, 7))
    with records() as got:
        for lengths in batches:
            tokens += sum(lengths) + 7 * len(lengths)  # each prompt, then 7 decode steps
            prompts = random_prompts(lengths)
            for p, o in zip(prompts, greedy_tokens(llm, prompts, 8)):
                assert o == eager(p, 8), (p, o)
    assert STATS.compiles == llm.startup_compiles  # new prompt lengths, new batch sizes: no compile
    # no float op of any graph the worker compiled runs on the CPU
    assert STATS.graphs and all(not g.cpu_fallback for g in STATS.graphs), [
        (g.name, g.cpu_fallback) for g in STATS.graphs if g.cpu_fallback
    ]
    steps = got.steps
    assert sum(s.tokens for s in steps) == tokens
    assert all(s.compiles == 0 and s.device_s > 0 for s in steps)
    # the device did every token's linears: q, k, v, o and the MLP's three, in both layers
    per_token = 2 * (256 * 256 + 2 * 256 * 128 + 256 * 256 + 3 * 256 * 512)
    assert sum(s.macs for s in steps) >= tokens * per_token, (sum(s.macs for s in steps), tokens * per_token)
    # what crosses the host link per step: the step's indices and visibility numbers, the
    # sampled rows' logits; never a KV cache (nor the weights)
    cache = _cache_bytes(llm)
    for s in steps:
        assert set(s.transfer_bytes) <= {"index", "argument", "result"}, s.transfer_bytes
        assert s.transfer_bytes.get("argument", 0) < cache // 8, s.transfer_bytes
        assert s.transfer_bytes["result"] <= MAX_NUM_SEQS * 256 * 2, s.transfer_bytes  # rows of 256 logits, DL16
    # vLLM tells the worker a request finished at its next step: the first batch's, here
    first = got.requests
    assert sorted(r.tokens for r in first) == sorted(n + 7 for n in batches[0])
    assert all(r.steps == 8 for r in first)  # the prompt's step, then one per decoded token
    # a request's time is its steps' time: the first batch ran alone, in the first 8 steps
    assert sum(r.device_s for r in first) == pytest.approx(sum(s.device_s * s.requests for s in steps[:8]))


def test_a_prompt_longer_than_a_step_is_prefilled_in_chunks(llm, eager):
    (prompt,) = random_prompts([150], seed=2)
    with records() as got:
        (out,) = greedy_tokens(llm, [prompt], 6)
    assert out == eager(prompt, 6)
    # 150 prompt tokens in steps of at most 64 (max_num_batched_tokens), then a token per step
    assert [s.tokens for s in got.steps] == [64, 64, 22, 1, 1, 1, 1, 1]


def test_prompts_sharing_a_prefix_reuse_its_cached_pages(llm, eager):
    (prefix,) = random_prompts([300], seed=3)
    tails = random_prompts([4, 9], seed=4)
    before = _metric(llm, "vllm:prefix_cache_hits")
    with records() as got:
        first = greedy_tokens(llm, [prefix + tails[0]], 5)
        second = greedy_tokens(llm, [prefix + tails[1]], 5)
    assert first[0] == eager(prefix + tails[0], 5)
    assert second[0] == eager(prefix + tails[1], 5)
    # the second prompt's first two blocks (256 tokens) are the first's, cached: its prefill
    # computes the other 53 tokens only
    assert _metric(llm, "vllm:prefix_cache_hits") - before == 2 * BLOCK
    assert got.steps[-5].tokens == 300 + 9 - 2 * BLOCK


def _metric(llm, name: str) -> float:
    return sum(m.value for m in llm.get_metrics() if m.name == name)


def test_a_decode_step_grows_with_its_context_as_attention_does(llm):
    """One request's decode step at a 12-token and at a 404-token context: its multiply-adds
    and kernel time grow by attention's over the pages (1 and 4 of 128 slots); its bytes over
    the host link by a number per page only (its id, and its visibility from the token), not by
    the pages' keys and values (64 KiB a page here)."""
    decode = {}
    for n in (12, 404):
        with records() as got:
            greedy_tokens(llm, random_prompts([n], seed=5), 3)
        decode[n] = got.steps[-1]
    short, long = decode[12], decode[404]
    # scores and context, per layer: heads x head dim multiply-adds per key, 384 keys more
    assert long.macs - short.macs == 2 * 2 * 4 * 64 * 3 * BLOCK, (short.macs, long.macs)
    assert long.kernels_s > short.kernels_s
    extra = {k: long.transfer_bytes.get(k, 0) - short.transfer_bytes.get(k, 0) for k in long.transfer_bytes}
    assert extra["index"] == 3 * 8, extra  # three page numbers (int64) more
    assert extra.get("argument", 0) == 3 * 128 and extra.get("result", 0) == 0, extra  # a stick per page's number
