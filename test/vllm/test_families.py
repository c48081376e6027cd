"""Decoder families through vLLM on the spyre platform, on both of vLLM's model paths: its own
model classes, and the hardware-agnostic path (`VLLM_USE_HW_AGNOSTIC=1`, the Transformers
backend `model_impl="transformers"`: transformers' modeling code with vLLM's attention and its
hardware-agnostic layers). Tiny random configs (2 layers, 4 heads of 64, 2 KV heads), greedy
tokens as transformers' eager ones, for a prompt prefilled in two chunks and a batch of two;
no float op on the CPU."""

from __future__ import annotations

import gc
import os

import pytest
import torch
import transformers

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

from spyre_mlir.frontend.backend import STATS

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
    model = transformers.AutoModelForCausalLM.from_pretrained(d).eval()
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=NEW_TOKENS, do_sample=False)
    return out[0, len(prompt) :].tolist()


def check_family(d, monkeypatch, hw_agnostic: bool) -> None:
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    if hw_agnostic:
        monkeypatch.setenv("VLLM_USE_HW_AGNOSTIC", "1")
    first = len(STATS.graphs)
    llm = LLM(
        model=str(d),
        max_model_len=128,
        max_num_seqs=2,
        max_num_batched_tokens=16,
        model_impl="transformers" if hw_agnostic else "vllm",
    )
    try:
        gen = torch.Generator().manual_seed(3)
        prompts = [torch.randint(3, 256, (n,), generator=gen).tolist() for n in (23, 9)]
        params = SamplingParams(temperature=0, max_tokens=NEW_TOKENS, ignore_eos=True, detokenize=False)
        outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
        for p, o in zip(prompts, outs):
            assert list(o.outputs[0].token_ids) == _eager(d, p), p
        graphs = STATS.graphs[first:]
        assert graphs and all(not g.cpu_fallback for g in graphs), [(g.name, g.cpu_fallback) for g in graphs]
    finally:
        del llm
        gc.collect()


@pytest.mark.parametrize("family", ["llama", "qwen3"])
def test_a_family_through_the_hardware_agnostic_path(family, family_dirs, monkeypatch):
    check_family(family_dirs[family], monkeypatch, hw_agnostic=True)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gemma3", "granite"])
def test_more_families_through_the_hardware_agnostic_path(family, family_dirs, monkeypatch):
    check_family(family_dirs[family], monkeypatch, hw_agnostic=True)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["qwen3", "gemma3", "granite"])
def test_a_family_through_vllms_own_model(family, family_dirs, monkeypatch):
    check_family(family_dirs[family], monkeypatch, hw_agnostic=False)
