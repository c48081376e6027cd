"""The decoder families of the corpus generate on the device model with a static KV cache:
no CPU op in prefill or decode, and each decode step's logits, teacher forced on the device's
own tokens, as eager PyTorch's (cosine >= 0.999).

The sliding-window families (Mistral, Gemma 2 and 3) decode with a window of 4 rows, shorter
than the prompt: HF's sliding-window cache rolls its rows every step (a device cat of two
slices) and keeps its length in a Python int that each graph returns (the host computes it)."""

from __future__ import annotations

import warnings

import pytest
import torch
import transformers

from spyre_mlir.frontend.backend import STATS

FAMILIES = {
    "llama": "Llama",
    "qwen2": "Qwen2",
    "qwen3": "Qwen3",
    "phi3": "Phi3",
    "gemma": "Gemma",
    "granite": "Granite",
    "olmo2": "Olmo2",
    "stablelm": "StableLm",
    "starcoder2": "Starcoder2",
    "gpt_neox": "GPTNeoX",
    "mistral": "Mistral",
    "gemma2": "Gemma2",
    "gemma3": "Gemma3",
}
SLIDING = {"Mistral", "Gemma2", "Gemma3"}
PROMPT, STEPS = 7, 10


def _model(prefix: str, window: int = 4) -> torch.nn.Module:
    """Two layers, hidden 256, 4 heads of 64 (2 KV heads where the family has GQA), vocab 256;
    a sliding window of `window` rows where the family has one."""
    kw = dict(
        vocab_size=256,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=128,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=None,
    )
    if prefix != "GPTNeoX":
        kw["num_key_value_heads"] = 2
    if prefix in SLIDING:
        kw["sliding_window"] = window
    config = getattr(transformers, f"{prefix}TextConfig" if prefix == "Gemma3" else f"{prefix}Config")
    cfg = config(**kw)
    torch.manual_seed(0)
    return getattr(transformers, f"{prefix}ForCausalLM")(cfg).eval()


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_decoder_family_decodes_on_the_device(family):
    torch._dynamo.reset()  # the families share transformers' code: one's shapes must not make another's dynamic
    model = _model(FAMILIES[family])
    ids = torch.randint(2, 256, (1, PROMPT), generator=torch.Generator().manual_seed(1))
    eager_forward = model.forward
    with torch.no_grad():
        model.forward = torch.compile(model.forward, backend="spyre")
        first = len(STATS.graphs)
        out = model.generate(
            ids,
            max_new_tokens=STEPS + 1,
            do_sample=False,
            cache_implementation="static",
            output_logits=True,
            return_dict_in_generate=True,
        )
        graphs = STATS.graphs[first:]
        model.forward = eager_forward
        seq = out.sequences
        for g in graphs:
            assert not g.cpu_fallback, (g.name, g.cpu_fallback)
        assert len(graphs) == 2, [g.name for g in graphs]  # prefill and decode
        for step in range(1, STEPS + 1):  # the decode steps: logits after PROMPT + step tokens
            want = model(seq[:, : PROMPT + step]).logits[0, -1]
            got = out.logits[step][0]
            cos = torch.nn.functional.cosine_similarity(got.double(), want.double(), dim=0)
            assert cos >= 0.999, (family, step, float(cos))


EVERY_COMMIT_BUCKETS = {"gemma3", "gpt_neox"}
"""The families whose bucketed prefill `make test` checks (a sliding window, and a family with
neither GQA nor a gated MLP; test_buckets.py checks Llama's); `make test-full` checks all."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "family", [f if f in EVERY_COMMIT_BUCKETS else pytest.param(f, marks=pytest.mark.full) for f in sorted(FAMILIES)]
)
def test_prompts_of_one_bucket_share_a_prefill_program(family):
    """Prompt lengths 5, 9, 11, 14 with a 19-row cache: the static prefill at 5, one bucket-16
    prefill (no warning that lengths compile apart) and the decode graph; every prompt's
    next-token logits as eager's (cosine >= 0.999), no CPU op. (A sliding window covers the
    cache here: a full window's prefill keeps the prompt's last rows, which padding would move.)"""
    torch._dynamo.reset()
    model = _model(FAMILIES[family], window=32)
    gen = torch.Generator().manual_seed(2)
    prompts = [torch.randint(2, 256, (1, n), generator=gen) for n in (5, 9, 11, 14)]
    run = dict(max_length=20, do_sample=False, cache_implementation="static", output_logits=True)
    eager_forward = model.forward
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = [model.generate(p, return_dict_in_generate=True, **run).logits[0][0] for p in prompts]
        model.forward = torch.compile(model.forward, backend="spyre")
        first, compiles = len(STATS.graphs), STATS.compiles
        got = [model.generate(p, return_dict_in_generate=True, **run).logits[0][0] for p in prompts]
        model.forward = eager_forward
    assert STATS.compiles - compiles == 3, STATS.compiles - compiles
    assert not [str(w.message) for w in caught if "no length buckets" in str(w.message)]
    for g in STATS.graphs[first:]:
        assert not g.cpu_fallback, (g.name, g.cpu_fallback)
    for p, g, w in zip(prompts, got, want):
        cos = torch.nn.functional.cosine_similarity(g.double(), w.double(), dim=0)
        assert cos >= 0.999, (family, p.shape[1], float(cos))
