"""Tiny Hugging Face models, built offline from configs: the corpus that bench/coverage.py
compiles with `torch.compile(backend="spyre")`.

    from corpus import CORPUS, build        # from a script in bench/ (its folder is on sys.path)
    model, example_inputs = build("llama")  # eval mode, random weights (seed 0)
    model(*example_inputs)

Every entry is a `transformers` architecture built from a config (no hub access: nothing is
downloaded, HF_HUB_OFFLINE=1 is set here), 2 layers, hidden 64, 4 heads (head_dim 16; 2
key/value heads where the family has grouped-query attention), intermediate 128, vocabulary
1000, batch 1, sequence 23 (not a multiple of 64, the stick width, nor of 8). Weights are
random and seeded: the family's initialisation under `torch.manual_seed(0)`, then redrawn by
spyre_mlir.testing.weights `randomize_weights` so that attention, masks and biases show in the
output (the families' std-0.02 init hides them behind the residual stream). Token ids are drawn
from [4, vocab) with their own seeded generator, so no id is a pad/bos/eos token. Vision entries
take one 3 x 40 x 40 image in patches of 8 (25 patches + a class token: 26 tokens). Encoder-decoder
families contribute their encoder (`encoder=True`). The base model class is used (no LM or
classification head): the output is the last hidden state (and a pooler output where the
family has one).

Attention uses each family's default implementation (SDPA in transformers 5), which is what a
user of `torch.compile` gets; aot_autograd decomposes it into bmm, softmax and masks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("SPYRE_CACHE", "0")  # compile times and counts are of compiles, not cache loads

VOCAB = 1000
HIDDEN = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
INTERMEDIATE = 128
POSITIONS = 128
SEQ = 23
IMAGE, PATCH = 40, 8
SEED = 0


@dataclass(frozen=True)
class Spec:
    config: str
    """`transformers` config class name."""
    model: str
    """`transformers` model class name (the base model)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: str = "tokens"
    """"tokens": input_ids (1, SEQ); "pixels": pixel_values (1, 3, IMAGE, IMAGE); "audio": log-mel
    input_features (1, mel bins, 2 * SEQ)."""
    encoder: bool = False
    """Use `model.get_encoder()` (encoder-decoder families)."""


def _bert_like(**extra: Any) -> dict[str, Any]:
    return dict(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=INTERMEDIATE,
        max_position_embeddings=POSITIONS,
        **extra,
    )


def _decoder(**extra: Any) -> dict[str, Any]:
    """Llama-style decoders: rotary positions, RMSNorm, gated MLP, grouped-query attention."""
    return _bert_like(num_key_value_heads=KV_HEADS, **extra)


def _vision(**extra: Any) -> dict[str, Any]:
    return dict(
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=INTERMEDIATE,
        image_size=IMAGE,
        patch_size=PATCH,
        num_channels=3,
        **extra,
    )


CORPUS: dict[str, Spec] = {
    # ---------------------------------------------------------------- encoders
    "albert": Spec("AlbertConfig", "AlbertModel", _bert_like(embedding_size=32)),
    "bart-encoder": Spec(
        "BartConfig",
        "BartModel",
        dict(
            vocab_size=VOCAB,
            d_model=HIDDEN,
            encoder_layers=LAYERS,
            decoder_layers=LAYERS,
            encoder_attention_heads=HEADS,
            decoder_attention_heads=HEADS,
            encoder_ffn_dim=INTERMEDIATE,
            decoder_ffn_dim=INTERMEDIATE,
            max_position_embeddings=POSITIONS,
        ),
        encoder=True,
    ),
    "bert": Spec("BertConfig", "BertModel", _bert_like()),
    "camembert": Spec("CamembertConfig", "CamembertModel", _bert_like()),
    "convbert": Spec("ConvBertConfig", "ConvBertModel", _bert_like(embedding_size=HIDDEN)),
    "deberta": Spec("DebertaConfig", "DebertaModel", _bert_like(relative_attention=True, pos_att_type=["c2p", "p2c"])),
    "deberta-v2": Spec(
        "DebertaV2Config",
        "DebertaV2Model",
        _bert_like(relative_attention=True, pos_att_type=["c2p", "p2c"], position_buckets=32),
    ),
    "distilbert": Spec(
        "DistilBertConfig",
        "DistilBertModel",
        dict(
            vocab_size=VOCAB,
            dim=HIDDEN,
            n_layers=LAYERS,
            n_heads=HEADS,
            hidden_dim=INTERMEDIATE,
            max_position_embeddings=POSITIONS,
        ),
    ),
    "electra": Spec("ElectraConfig", "ElectraModel", _bert_like(embedding_size=32)),
    "ernie": Spec("ErnieConfig", "ErnieModel", _bert_like()),
    "megatron-bert": Spec("MegatronBertConfig", "MegatronBertModel", _bert_like()),
    "mobilebert": Spec(
        "MobileBertConfig",
        "MobileBertModel",
        _bert_like(embedding_size=32, intra_bottleneck_size=32, true_hidden_size=32, num_feedforward_networks=2),
    ),
    "modernbert": Spec(
        "ModernBertConfig", "ModernBertModel", _bert_like(global_attn_every_n_layers=2, local_attention=16)
    ),
    "mpnet": Spec("MPNetConfig", "MPNetModel", _bert_like()),
    "roberta": Spec("RobertaConfig", "RobertaModel", _bert_like()),
    "roformer": Spec("RoFormerConfig", "RoFormerModel", _bert_like(embedding_size=HIDDEN)),
    "squeezebert": Spec(
        "SqueezeBertConfig", "SqueezeBertModel", _bert_like(embedding_size=HIDDEN, q_groups=2, k_groups=2, v_groups=2)
    ),
    "t5-encoder": Spec(
        "T5Config",
        "T5EncoderModel",
        dict(
            vocab_size=VOCAB,
            d_model=HIDDEN,
            d_kv=HIDDEN // HEADS,
            d_ff=INTERMEDIATE,
            num_layers=LAYERS,
            num_heads=HEADS,
        ),
    ),
    "xlm-roberta": Spec("XLMRobertaConfig", "XLMRobertaModel", _bert_like()),
    "clip-text": Spec("CLIPTextConfig", "CLIPTextModel", _bert_like()),
    "siglip-text": Spec("SiglipTextConfig", "SiglipTextModel", _bert_like()),
    "whisper-encoder": Spec(
        "WhisperConfig",
        "WhisperModel",
        dict(
            vocab_size=VOCAB,
            num_mel_bins=16,
            d_model=HIDDEN,
            encoder_layers=LAYERS,
            decoder_layers=LAYERS,
            encoder_attention_heads=HEADS,
            decoder_attention_heads=HEADS,
            encoder_ffn_dim=INTERMEDIATE,
            decoder_ffn_dim=INTERMEDIATE,
            max_source_positions=SEQ,
            max_target_positions=POSITIONS,
        ),
        inputs="audio",
        encoder=True,
    ),
    # ---------------------------------------------------------------- vision encoders
    "vit": Spec("ViTConfig", "ViTModel", _vision(), inputs="pixels"),
    "deit": Spec("DeiTConfig", "DeiTModel", _vision(), inputs="pixels"),
    "dinov2": Spec("Dinov2Config", "Dinov2Model", _vision(mlp_ratio=2), inputs="pixels"),
    # ---------------------------------------------------------------- decoders
    "biogpt": Spec("BioGptConfig", "BioGptModel", _bert_like()),
    "bloom": Spec(
        "BloomConfig", "BloomModel", dict(vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=LAYERS, n_head=HEADS)
    ),
    "codegen": Spec(
        "CodeGenConfig",
        "CodeGenModel",
        dict(
            vocab_size=VOCAB,
            n_positions=POSITIONS,
            n_ctx=POSITIONS,
            n_embd=HIDDEN,
            n_layer=LAYERS,
            n_head=HEADS,
            rotary_dim=8,
        ),
    ),
    "cohere": Spec("CohereConfig", "CohereModel", _decoder()),
    "falcon": Spec(
        "FalconConfig",
        "FalconModel",
        dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS),
    ),
    "gemma": Spec("GemmaConfig", "GemmaModel", _decoder(head_dim=HIDDEN // HEADS)),
    "gemma2": Spec("Gemma2Config", "Gemma2Model", _decoder(head_dim=HIDDEN // HEADS, sliding_window=16)),
    "gemma3-text": Spec("Gemma3TextConfig", "Gemma3TextModel", _decoder(head_dim=HIDDEN // HEADS, sliding_window=16)),
    "glm": Spec("GlmConfig", "GlmModel", _decoder(head_dim=HIDDEN // HEADS)),
    "gpt2": Spec(
        "GPT2Config",
        "GPT2Model",
        dict(vocab_size=VOCAB, n_positions=POSITIONS, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS),
    ),
    "gpt-bigcode": Spec(
        "GPTBigCodeConfig",
        "GPTBigCodeModel",
        dict(vocab_size=VOCAB, n_positions=POSITIONS, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS),
    ),
    "gpt-neo": Spec(
        "GPTNeoConfig",
        "GPTNeoModel",
        dict(
            vocab_size=VOCAB,
            max_position_embeddings=POSITIONS,
            hidden_size=HIDDEN,
            num_layers=LAYERS,
            num_heads=HEADS,
            attention_types=[[["global", "local"], 1]],
            window_size=16,
        ),
    ),
    "gpt-neox": Spec("GPTNeoXConfig", "GPTNeoXModel", _bert_like()),
    "gptj": Spec(
        "GPTJConfig",
        "GPTJModel",
        dict(vocab_size=VOCAB, n_positions=POSITIONS, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, rotary_dim=8),
    ),
    "granite": Spec("GraniteConfig", "GraniteModel", _decoder()),
    "helium": Spec("HeliumConfig", "HeliumModel", _decoder(head_dim=HIDDEN // HEADS)),
    "llama": Spec("LlamaConfig", "LlamaModel", _decoder()),
    "mistral": Spec("MistralConfig", "MistralModel", _decoder(sliding_window=16)),
    "olmo": Spec("OlmoConfig", "OlmoModel", _decoder()),
    "olmo2": Spec("Olmo2Config", "Olmo2Model", _decoder()),
    "opt": Spec(
        "OPTConfig",
        "OPTModel",
        dict(
            vocab_size=VOCAB,
            hidden_size=HIDDEN,
            num_hidden_layers=LAYERS,
            ffn_dim=INTERMEDIATE,
            num_attention_heads=HEADS,
            max_position_embeddings=POSITIONS,
            word_embed_proj_dim=HIDDEN,
        ),
    ),
    "persimmon": Spec("PersimmonConfig", "PersimmonModel", _bert_like()),
    "phi": Spec("PhiConfig", "PhiModel", _decoder()),
    "phi3": Spec("Phi3Config", "Phi3Model", _decoder(pad_token_id=0)),
    "qwen2": Spec("Qwen2Config", "Qwen2Model", _decoder()),
    "qwen3": Spec("Qwen3Config", "Qwen3Model", _decoder(head_dim=HIDDEN // HEADS)),
    "smollm3": Spec("SmolLM3Config", "SmolLM3Model", _decoder(pad_token_id=0)),
    "stablelm": Spec("StableLmConfig", "StableLmModel", _decoder()),
    "starcoder2": Spec("Starcoder2Config", "Starcoder2Model", _decoder()),
    "exaone4": Spec("Exaone4Config", "Exaone4Model", _decoder(sliding_window=16)),
    "lfm2": Spec("Lfm2Config", "Lfm2Model", _decoder(full_attn_idxs=[1])),
    "ministral3": Spec("Ministral3Config", "Ministral3Model", _decoder(head_dim=HIDDEN // HEADS)),
    "nemotron": Spec("NemotronConfig", "NemotronModel", _decoder(head_dim=HIDDEN // HEADS)),
    "mixtral": Spec(
        "MixtralConfig", "MixtralModel", _decoder(head_dim=HIDDEN // HEADS, num_local_experts=4, num_experts_per_tok=2)
    ),
    "qwen3-moe": Spec(
        "Qwen3MoeConfig",
        "Qwen3MoeModel",
        _decoder(head_dim=HIDDEN // HEADS, moe_intermediate_size=64, num_experts=4, num_experts_per_tok=2),
    ),
    "granitemoe": Spec("GraniteMoeConfig", "GraniteMoeModel", _decoder(num_local_experts=4, num_experts_per_tok=2)),
    "xglm": Spec(
        "XGLMConfig",
        "XGLMModel",
        dict(
            vocab_size=VOCAB,
            d_model=HIDDEN,
            num_layers=LAYERS,
            attention_heads=HEADS,
            ffn_dim=INTERMEDIATE,
            max_position_embeddings=POSITIONS,
        ),
    ),
}
"""Architecture name -> how to build it."""


SPECIAL_TOKENS = {
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "cls_token_id": 1,
    "sep_token_id": 2,
    "decoder_start_token_id": 1,
}
"""Special token ids of the full-size vocabularies, moved into the tiny one (ids 0-3)."""


def config(name: str, **overrides: Any) -> Any:
    """The tiny `transformers` config of a corpus entry (overrides replace its fields)."""
    import transformers

    spec = CORPUS[name]
    kwargs = {**spec.kwargs, **overrides}
    cls = getattr(transformers, spec.config)
    vocab = kwargs.get("vocab_size")
    if vocab is not None:
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()  # the full-size defaults warn about themselves
        try:
            defaults = cls()
        finally:
            transformers.logging.set_verbosity(verbosity)
        for key, small in SPECIAL_TOKENS.items():
            value = getattr(defaults, key, None)
            if key not in kwargs and isinstance(value, int) and value >= vocab:
                kwargs[key] = small
    return cls(**kwargs)


def build(name: str, seq: int = SEQ, **overrides: Any) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """(model in eval mode, example positional inputs) of a corpus entry; deterministic.
    `seq` is the token count of text entries; overrides replace config fields. (torch and
    transformers are imported here: a process that only reads the table does not load them.)"""
    import torch
    import transformers

    from spyre_mlir.testing.weights import randomize_weights

    spec = CORPUS[name]
    cfg = config(name, **overrides)
    torch.manual_seed(SEED)
    model = getattr(transformers, spec.model)(cfg)
    if spec.encoder:
        model = model.get_encoder()
    randomize_weights(model, SEED)
    model.eval()
    gen = torch.Generator().manual_seed(SEED + 1)
    if spec.inputs == "pixels":
        size = cfg.image_size
        inputs: tuple[torch.Tensor, ...] = (torch.randn(1, cfg.num_channels, size, size, generator=gen),)
    elif spec.inputs == "audio":  # log-mel frames: the encoder's two convolutions halve them
        inputs = (torch.randn(1, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=gen),)
    else:
        inputs = (torch.randint(4, cfg.vocab_size, (1, seq), generator=gen),)
    return model, inputs
