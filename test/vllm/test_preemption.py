"""A KV cache too small for the running batch on the spyre platform: vLLM preempts requests
(their blocks freed, recomputed later), and every request still finishes with transformers'
eager tokens; the card's programs serve the recomputation as any prefill."""

from __future__ import annotations

import os

import pytest
import torch
import transformers

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

from conftest import eager_models

BLOCK_BYTES = 2 * 2 * 128 * 2 * 64 * 4
"""A block of the tiny Llama's KV cache as vLLM counts it: 2 layers x keys and values x 128
slots x 2 KV heads x 64 x float32."""


@pytest.mark.full
def test_a_cache_too_small_for_the_batch_preempts_and_finishes_every_request(llama_dir):
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    # 4 blocks: vLLM's null block and 3 of 128 tokens, for 4 requests that grow to 2 blocks each
    llm = LLM(
        model=str(llama_dir),
        max_model_len=256,
        max_num_seqs=4,
        max_num_batched_tokens=64,
        kv_cache_memory_bytes=4 * BLOCK_BYTES,
        disable_log_stats=False,
    )
    assert llm.llm_engine.vllm_config.cache_config.num_gpu_blocks == 4
    gen = torch.Generator().manual_seed(7)
    prompts = [torch.randint(3, 256, (n,), generator=gen).tolist() for n in (100, 90, 110, 95)]
    params = SamplingParams(temperature=0, max_tokens=40, ignore_eos=True, detokenize=False)
    outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
    preempted = sum(m.value for m in llm.get_metrics() if m.name == "vllm:num_preemptions")
    assert preempted > 0
    with eager_models():
        eager = transformers.LlamaForCausalLM.from_pretrained(llama_dir).eval()
    for p, o in zip(prompts, outs):
        with torch.no_grad():
            want = eager.generate(torch.tensor([p]), max_new_tokens=40, do_sample=False)[0, len(p) :].tolist()
        assert list(o.outputs[0].token_ids) == want, p
