"""vLLM's offline `LLM` on the spyre platform (spyre_mlir/vllm): greedy tokens as transformers'
eager ones, the linears on the device model, and a bounded set of compiles for any prompt
lengths (the graph pieces run padded to the length buckets)."""

from __future__ import annotations

import os

import pytest
import torch
import transformers

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine in this process: STATS is ours

from helpers import tiny_llama

from spyre_mlir.frontend.backend import STATS, get_device


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory) -> str:
    """A 2-layer Llama (head dim 64: vLLM's CPU attention takes 32 and more), saved as HF does."""
    d = tmp_path_factory.mktemp("tiny_llama")
    tiny_llama(pad_token_id=0, bos_token_id=1, eos_token_id=2, torch_dtype="float32").save_pretrained(d)
    return str(d)


def test_llm_generates_eagers_tokens_with_the_linears_on_the_device(llama_dir):
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    import spyre_mlir.vllm.platform as platform

    llm = LLM(model=llama_dir, skip_tokenizer_init=True, max_model_len=64, dtype="float32", max_num_seqs=4)
    from vllm.platforms import current_platform

    assert type(current_platform) is platform.SpyrePlatform
    gen = torch.Generator().manual_seed(1)
    params = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True, detokenize=False)
    eager = transformers.LlamaForCausalLM.from_pretrained(llama_dir).eval()
    kernels = len(get_device().profile.kernels)
    compiles, tokens = [], 0
    for lengths in ((5, 9, 13), (6, 11, 3, 7)):
        tokens += sum(lengths) + 7 * len(lengths)  # each prompt, then 7 decode steps
        prompts = [torch.randint(3, 256, (n,), generator=gen).tolist() for n in lengths]
        outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params)
        for p, o in zip(prompts, outs):
            with torch.no_grad():
                want = eager.generate(torch.tensor([p]), max_new_tokens=8, do_sample=False)[0, len(p) :]
            assert list(o.outputs[0].token_ids) == want.tolist(), (p, o.outputs[0].token_ids, want)
        compiles.append(STATS.compiles)
    assert compiles[1] == compiles[0], compiles  # new prompt lengths, new batch sizes: no compile
    # the device did every token's linears: q, k, v, o and the MLP's three, in both layers
    per_token = 2 * (256 * 256 + 2 * 256 * 128 + 256 * 256 + 3 * 256 * 512)
    macs = sum(k.macs for k in get_device().profile.kernels[kernels:])
    assert macs >= tokens * per_token, (macs, tokens * per_token)
