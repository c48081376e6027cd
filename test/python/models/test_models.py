"""Ten Hugging Face architectures through torch.compile(backend="spyre") match eager PyTorch.

Each model is built offline from a tiny config (2 layers; no hub access) with seeded random
weights scaled so that every part of it shows in the output (spyre_mlir.testing.weights
`randomize_weights`: with the families' own std-0.02 init a lost attention mask would change
the output by a few u), and called once eagerly and once compiled, with the backend's defaults:
ops without a device lowering run on the CPU inside the compiled graph. The outputs must pass
the model criterion of spyre_mlir.testing.criteria (`compare_model_outputs`: cosine >= 0.999
and max error <= 16 u (layers + 1) of the output's scale, u = 2^-10), and the share of the
graph's ops that ran on the device is printed (run pytest with -s to see it) and held above a
weak floor.

Two shapes per architecture:

    hd64   hidden 128, 2 heads: head_dim 64, one head is exactly one 64-lane DL16 stick;
           100 tokens (ViT: 80 x 80 image in 8 x 8 patches, 100 patches + class token)
    hd16   hidden 64, 4 heads: head_dim 16 < 64, four heads share a stick;
           7 tokens (ViT: 24 x 24 image, 9 patches + class token)

Neither token count is a multiple of 64, so every sequence dimension ends in a partial stick.
Decoders with grouped-query attention use half as many key/value heads as query heads.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import warnings
from collections import Counter
from dataclasses import dataclass

import pytest
import torch
import transformers  # a test dependency (pyproject [test]): never skipped

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.testing.criteria import compare_model_outputs
from spyre_mlir.testing.weights import randomize_weights

pytestmark = pytest.mark.usefixtures("fresh_dynamo")

LAYERS = 2
VOCAB = 1000
POSITIONS = 128
MIN_DEVICE_FRACTION = 0.5
"""Weak floor on the share of a model's compute ops that run on the device. The float matmuls,
views and element-wise ops alone (without bmm, softmax, layer norm and embedding) are 58-75%
of each of these graphs' compute ops (counted on their aot_autograd graphs), and the other
lowerings only add to the share; below half means the linear layers or the element-wise ops
fell back to the CPU, not that one of the other lowerings is missing."""


@dataclass(frozen=True)
class Shape:
    hidden: int
    heads: int
    seq: int
    image: int
    """ViT image side (patches of 8)."""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def kv_heads(self) -> int:
        return max(1, self.heads // 2)


SHAPES = {
    "hd64": Shape(hidden=128, heads=2, seq=100, image=80),
    "hd16": Shape(hidden=64, heads=4, seq=7, image=24),
}


def _encoder(s: Shape, **extra):
    return dict(
        vocab_size=VOCAB,
        hidden_size=s.hidden,
        num_hidden_layers=LAYERS,
        num_attention_heads=s.heads,
        intermediate_size=2 * s.hidden,
        max_position_embeddings=POSITIONS,
        **extra,
    )


def _decoder(s: Shape, **extra):
    return _encoder(s, num_key_value_heads=s.kv_heads, pad_token_id=0, bos_token_id=1, eos_token_id=2, **extra)


ARCHITECTURES = {
    # name: (model class, config class, config kwargs of a shape, input kind)
    "bert": ("BertModel", "BertConfig", lambda s: _encoder(s), "tokens"),
    "roberta": ("RobertaModel", "RobertaConfig", lambda s: _encoder(s, pad_token_id=1), "tokens"),
    "distilbert": (
        "DistilBertModel",
        "DistilBertConfig",
        lambda s: dict(
            vocab_size=VOCAB,
            dim=s.hidden,
            n_layers=LAYERS,
            n_heads=s.heads,
            hidden_dim=2 * s.hidden,
            max_position_embeddings=POSITIONS,
        ),
        "tokens",
    ),
    "t5-encoder": (
        "T5EncoderModel",
        "T5Config",
        lambda s: dict(
            vocab_size=VOCAB, d_model=s.hidden, d_kv=s.head_dim, d_ff=2 * s.hidden, num_layers=LAYERS, num_heads=s.heads
        ),
        "tokens",
    ),
    "vit": (
        "ViTModel",
        "ViTConfig",
        lambda s: dict(
            hidden_size=s.hidden,
            num_hidden_layers=LAYERS,
            num_attention_heads=s.heads,
            intermediate_size=2 * s.hidden,
            image_size=s.image,
            patch_size=8,
        ),
        "pixels",
    ),
    "gpt2": (
        "GPT2Model",
        "GPT2Config",
        lambda s: dict(
            vocab_size=VOCAB,
            n_positions=POSITIONS,
            n_embd=s.hidden,
            n_layer=LAYERS,
            n_head=s.heads,
            bos_token_id=1,
            eos_token_id=2,
        ),
        "tokens",
    ),
    "llama": ("LlamaModel", "LlamaConfig", lambda s: _decoder(s), "tokens"),
    "qwen3": ("Qwen3Model", "Qwen3Config", lambda s: _decoder(s, head_dim=s.head_dim), "tokens"),
    "granite": (
        "GraniteModel",
        "GraniteConfig",
        # Granite 3's scalings (embedding x12, residual x0.22, attention 1/head_dim) instead of 1
        lambda s: _decoder(
            s, embedding_multiplier=12.0, residual_multiplier=0.22, attention_multiplier=1.0 / s.head_dim
        ),
        "tokens",
    ),
    "gemma3-text": (
        "Gemma3TextModel",
        "Gemma3TextConfig",
        # one sliding-window layer (window 32 < 100 tokens) and one global layer
        lambda s: _decoder(
            s,
            head_dim=s.head_dim,
            query_pre_attn_scalar=s.head_dim,
            sliding_window=32,
            layer_types=["sliding_attention", "full_attention"],
        ),
        "tokens",
    ),
}

QUICK = {("hd16", "bert")}
"""The (shape, architecture) case `make quick` runs. The others take 1-6 s each on a 2-core
machine (`pytest --durations=0` shows them), the file a minute and a half: they are marked
slow, for make test and CI."""


def build(name: str, shape: Shape):
    model_cls, config_cls, kwargs, kind = ARCHITECTURES[name]
    config = getattr(transformers, config_cls)(**kwargs(shape))
    torch.manual_seed(0)
    model = randomize_weights(getattr(transformers, model_cls)(config), seed=0).eval()
    gen = torch.Generator().manual_seed(1)
    if kind == "pixels":
        inputs = (torch.randn(1, 3, shape.image, shape.image, generator=gen),)
    else:
        inputs = (torch.randint(4, VOCAB, (1, shape.seq), generator=gen),)
    return model, inputs


def _cases():
    for shape in SHAPES:
        for name in ARCHITECTURES:
            marks = [] if (shape, name) in QUICK else [pytest.mark.slow]
            yield pytest.param(name, shape, id=f"{name}-{shape}", marks=marks)


@pytest.mark.parametrize(("name", "shape"), list(_cases()))
def test_model_matches_eager(name, shape, record_property):
    model, inputs = build(name, SHAPES[shape])
    graphs, compiles = len(STATS.graphs), STATS.compiles
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eager = model(*inputs)
        compiled = torch.compile(model, backend="spyre")(*inputs)
    reports = STATS.graphs[graphs:]
    whole = [str(w.message) for w in caught if "instead of the device" in str(w.message)]
    assert STATS.compiles > compiles, "the spyre backend compiled no graph"
    assert not whole and len(reports) == STATS.compiles - compiles, f"a graph ran wholly on the CPU: {whole}"

    ops = sum(g.torch_ops for g in reports)
    on_host = sum(sum(g.host_by_design.values()) + sum(g.cpu_fallback.values()) for g in reports)
    fraction = 1 - on_host / ops
    on_cpu = sum((g.cpu_fallback for g in reports), Counter())
    result = compare_model_outputs(compiled, eager, LAYERS)
    record_property("device_fraction", round(fraction, 4))
    record_property("max_error", result.max_error)
    record_property("cosine", result.cosine)
    print(
        f"\n{name}-{shape}: {ops - on_host}/{ops} ops on the device ({100 * fraction:.1f}%) in {len(reports)} graph(s); "
        f"{result}; on the CPU: {dict(on_cpu)}"
    )
    assert result.passed, str(result)
    assert fraction >= MIN_DEVICE_FRACTION, (
        f"{100 * fraction:.1f}% of the ops on the device; on the CPU: {dict(on_cpu)}"
    )
