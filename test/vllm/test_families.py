"""Decoder families through vLLM on the spyre platform, on both of vLLM's model paths: its own
model classes, and the hardware-agnostic path (`VLLM_USE_HW_AGNOSTIC=1`, the Transformers
backend `model_impl="transformers"`: transformers' modeling code with vLLM's attention and its
hardware-agnostic layers). Tiny random configs (2 layers, 4 heads, 2 KV heads), greedy tokens
as transformers' eager ones with chunked prefill, a batch and prefix caching; a decode step's
work grows with its context; no float op on the CPU (`check_family`). vLLM's own Llama is
test_llm.py's."""

from __future__ import annotations

import gc
import os

import pytest
import torch
import transformers

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

from conftest import eager_models, records

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.vllm.clock import StepTime

FAMILIES = {"llama": "Llama", "qwen3": "Qwen3", "gemma3": "Gemma3", "granite": "Granite"}
NEW_TOKENS = 6


def _config(prefix: str) -> transformers.PretrainedConfig:
    kw = dict(
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
        torch_dtype="float32",
    )
    if prefix == "Gemma3":
        # a window shorter than the prompt, on every other layer (Gemma 3's local layers)
        kw.update(head_dim=64, sliding_window=8, layer_types=["sliding_attention", "full_attention"])
        return transformers.Gemma3TextConfig(**kw)
    if prefix == "Granite":  # Granite's scalings of the embeddings, residuals, attention and logits
        kw.update(embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.1, logits_scaling=4.0)
    return getattr(transformers, f"{prefix}Config")(**kw)


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory):
    from conftest import char_tokenizer

    dirs = {}
    for family, prefix in FAMILIES.items():
        d = tmp_path_factory.mktemp(family)
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(_config(prefix)).eval()
        model.save_pretrained(d)
        char_tokenizer().save_pretrained(d)
        dirs[family] = d
    return dirs


def _eager(d, prompt: list[int]) -> list[int]:
    with eager_models():
        model = transformers.AutoModelForCausalLM.from_pretrained(d).eval()
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=NEW_TOKENS, do_sample=False)
    return out[0, len(prompt) :].tolist()


def _attention_macs_per_key(config: transformers.PretrainedConfig) -> int:
    """A decode token's multiply-adds per key it attends to: scores and context, in every layer."""
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return 2 * config.num_hidden_layers * config.num_attention_heads * head_dim


def _generate(llm, d, prompts: list[list[int]]) -> list[StepTime]:
    """Greedy tokens of the prompts as eager's; the steps' records."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    params = SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True, detokenize=False)
    with records() as got:
        outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
    for p, o in zip(prompts, outs):
        assert list(o.outputs[0].token_ids) == _eager(d, p), p
    return got.steps


def _hits(llm) -> float:
    return sum(m.value for m in llm.get_metrics() if m.name == "vllm:prefix_cache_hits")


def check_family(d, monkeypatch, hw_agnostic: bool) -> None:
    """Greedy tokens as eager's for a short prompt alone, a batch of a prompt longer than a step
    (prefilled in 16-token chunks) and a short one, and a second prompt sharing the long one's
    first block (prefix caching: 128 tokens hit); a decode step at a 2-page context does one
    page of attention's multiply-adds more than at a 1-page one, and takes longer, while its
    host-link bytes grow by a few numbers; no float op on the CPU."""
    from vllm import LLM

    if hw_agnostic:
        monkeypatch.setenv("VLLM_USE_HW_AGNOSTIC", "1")
    first = len(STATS.graphs)
    llm = LLM(
        model=str(d),
        max_model_len=256,
        max_num_seqs=2,
        max_num_batched_tokens=16,
        model_impl="transformers" if hw_agnostic else "vllm",
        disable_log_stats=False,
    )
    try:
        gen = torch.Generator().manual_seed(3)
        prefix, *short = (torch.randint(3, 256, (n,), generator=gen).tolist() for n in (130, 9, 11, 5, 9))
        alone, with_long, tail0, tail1 = short

        short_steps = _generate(llm, d, [alone])
        long_steps = _generate(llm, d, [prefix + tail0, with_long])
        assert max(s.tokens for s in long_steps) == 16 and len(long_steps) > (130 + 5) // 16  # chunked
        before = _hits(llm)
        shared_steps = _generate(llm, d, [prefix + tail1])
        assert _hits(llm) - before == 128  # the long prompt's first block, cached
        assert shared_steps[0].tokens == 130 + 9 - 128

        # the last decode steps: one request at a context of 1 page (9 + 5 tokens) and of 2 (139 + 5)
        one, two = short_steps[-1], shared_steps[-1]
        assert one.tokens == two.tokens == 1
        config = transformers.AutoConfig.from_pretrained(d)
        assert two.macs - one.macs == _attention_macs_per_key(config) * 128, (one.macs, two.macs)
        assert two.kernels_s > one.kernels_s
        graphs = STATS.graphs[first:]
        assert graphs and all(not g.cpu_fallback for g in graphs), [(g.name, g.cpu_fallback) for g in graphs]

        extra = sum(two.transfer_bytes.values()) - sum(one.transfer_bytes.values())
        assert 0 < extra <= 512, (one.transfer_bytes, two.transfer_bytes)  # a page's keys and values: 32 KiB a layer
        # the step's indices up, its visibility numbers, the sampled rows' logits down; on the
        # hardware-agnostic path also transformers' rotary embedding's float positions (the
        # host converts the integer positions, by design: a stick per token), the same at any context
        kinds = {"index", "argument", "result"} | ({"intermediate"} if hw_agnostic else set())
        assert set(two.transfer_bytes) <= kinds, two.transfer_bytes
        assert two.transfer_bytes.get("intermediate", 0) == one.transfer_bytes.get("intermediate", 0)
    finally:
        del llm
        gc.collect()


@pytest.mark.slow
def test_llama_through_the_hardware_agnostic_path(family_dirs, monkeypatch):
    check_family(family_dirs["llama"], monkeypatch, hw_agnostic=True)


@pytest.mark.full
@pytest.mark.parametrize("family", ["qwen3", "gemma3", "granite"])
def test_more_families_through_the_hardware_agnostic_path(family, family_dirs, monkeypatch):
    check_family(family_dirs[family], monkeypatch, hw_agnostic=True)


@pytest.mark.full
@pytest.mark.parametrize("family", ["qwen3", "gemma3", "granite"])
def test_a_family_through_vllms_own_model(family, family_dirs, monkeypatch):
    check_family(family_dirs[family], monkeypatch, hw_agnostic=False)
