"""Every text architecture the installed transformers can build: the generic sweep that
`bench/coverage.py --sweep` compiles, beside the hand-picked corpus (bench/corpus.py).

    from sweep import model_types, build        # from a script in bench/ (its folder is on sys.path)
    names = model_types()                       # every model type whose base model takes input_ids
    built = build("llama")                      # eval mode, random weights (seed 0)
    built.model(**built.inputs)

The model types are the keys of transformers' `MODEL_MAPPING_NAMES` (the base model of each
family, what `AutoModel` builds) whose class's `forward` takes `input_ids`. Each is built from
its config class's defaults shrunk by one rule (`shrink`), applied to the config and to every
config nested in it (a vision tower, a text model):

    layers          the fewest that hold every kind of layer the defaults name: per-layer lists
                    (layer_types, mlp_layer_types, ...) cut to their shortest prefix holding
                    each distinct value, at least 2 (LAYERS); layer counts set to that; the
                    "every n layers" integers (a period, an offset, the first dense layers)
                    brought below it, so the kinds they choose still occur
    widths          hidden 64, feed-forward 128 (MoE experts 64), head dims 16, low ranks 16,
                    state and convolution sizes left as they are
    heads           4 attention heads; key/value heads 2 (4 where the defaults have as many
                    as query heads, 1 where they have 1); every other head count at most 4
    experts         at most 4, 2 of them per token, 1 shared, one group
    vocabulary      1000 (every `*vocab_size` past it), special token ids moved into 0-31
    windows         sliding and local windows at most 16, so sequence 23 crosses them
    positions       tables of positions at most 4096
    caches          use_cache off: the output is the forward's tensors, not a cache object

Inputs: input_ids (1, SEQ) drawn from [32, 1000) with their own seeded generator, so no id is a
special token; an encoder-decoder (`config.is_encoder_decoder`) also gets decoder_input_ids (1,
DECODER_SEQ) from the same range. Weights are the family's initialisation under
`torch.manual_seed(0)`, then redrawn by spyre_mlir.testing.weights `randomize_weights`, as the
corpus's are. A model type is *buildable* when its model builds and runs eagerly on these
inputs alone; one that needs more (pixels, boxes, audio) or whose shrunk config the family
refuses is reported as not buildable, with the reason, and is not counted.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

LAYERS = 2
MAX_LAYERS = 8
"""At most this many layers, whatever the per-layer lists hold."""
HIDDEN = 64
INTERMEDIATE = 128
EXPERT_INTERMEDIATE = 64
HEAD_DIM = 16
RANK = 16
HEADS = 4
KV_HEADS = 2
EXPERTS, EXPERTS_PER_TOKEN = 4, 2
VOCAB = 1000
SPECIAL_IDS = 32
"""Token ids below this are special tokens' (moved there from past the vocabulary); inputs are
drawn above it."""
WINDOW = 16
POSITIONS = 4096
SEQ = 23
DECODER_SEQ = 11
SEED = 0

_LAYER_COUNTS = {
    "num_hidden_layers",
    "num_layers",
    "n_layer",
    "n_layers",
    "encoder_layers",
    "decoder_layers",
    "num_encoder_layers",
    "num_decoder_layers",
    "text_layers",
}
_HIDDEN = {
    "hidden_size",
    "d_model",
    "n_embd",
    "dim",
    "embed_dim",
    "embedding_size",
    "embedding_dim",
    "word_embed_proj_dim",
    "d_embed",
    "projection_dim",
    "hidden_size_per_layer_input",
}
_HEAD_DIMS = {"head_dim", "d_kv", "d_head", "kv_channels", "attention_head_size", "head_size", "qk_head_dim"}
_KV_HEADS = {"multi_query_group_num", "num_key_value_groups"}
"""(and every `*key_value_heads` and `*kv_heads`)"""
_EXPERTS = {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "num_routed_experts"}
_EXPERTS_PER_TOKEN = {
    "num_experts_per_tok",
    "num_experts_per_token",
    "moe_topk",
    "moe_k",
    "num_selected_experts",
    "top_k",
    "topk",
}
_GROUPS = {"n_group", "topk_group", "num_expert_group", "topk_groups"}
_SHARED_EXPERTS = {"n_shared_experts", "num_shared_experts", "moe_num_shared_experts"}
_WINDOWS = {"sliding_window", "attention_window", "window_size", "local_attention", "sliding_window_size"}
_SKIP = {"transformers_version", "architectures", "id2label", "label2id", "model_type", "_name_or_path", "dtype"}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _layers_needed(d: dict[str, Any], count: int) -> int:
    """The fewest layers whose per-layer lists (any list as long as the layer count) still hold
    every distinct value they hold in full."""
    need = LAYERS
    for k, v in d.items():
        if k in _SKIP or not isinstance(v, list) or len(v) != count or count <= LAYERS:
            continue
        try:
            kinds = {repr(x) for x in v}
        except Exception:
            continue
        seen: set[str] = set()
        for i, x in enumerate(v):
            seen.add(repr(x))
            if seen == kinds:
                need = max(need, i + 1)
                break
    return min(need, MAX_LAYERS)


def _token_key(k: str) -> bool:
    return k.endswith("_token_id") or k.endswith("_token_index") or k.endswith("_token_ids") or k == "image_token_id"


def shrink(d: dict[str, Any]) -> dict[str, Any]:
    """A config's dict (`PretrainedConfig.to_dict()`) shrunk by the rule of this module's
    docstring; nested configs (dicts with a `model_type`) shrunk too."""
    out = dict(d)
    counts = [v for k, v in d.items() if k in _LAYER_COUNTS and _is_int(v) and v > 0]
    count = max(counts, default=0)
    layers = _layers_needed(d, count) if count else LAYERS
    heads = max((v for k, v in d.items() if _is_head_count(k) and _is_int(v)), default=0)
    next_special = 3
    for k, v in d.items():
        if k in _SKIP:
            continue
        if isinstance(v, dict) and "model_type" in v:
            out[k] = shrink(v)
        elif k in _LAYER_COUNTS and _is_int(v):
            out[k] = min(v, layers)
        elif isinstance(v, list) and count > layers and len(v) == count:
            out[k] = v[:layers]
        elif _token_key(k):
            small = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}.get(k)
            if _is_int(v) and v >= VOCAB:
                out[k] = small if small is not None else next_special
            elif isinstance(v, list) and any(_is_int(x) and x >= VOCAB for x in v):
                out[k] = [
                    x if not _is_int(x) or x < VOCAB else (small if small is not None else next_special) for x in v
                ]
            else:
                continue
            if small is None:
                next_special = next_special + 1 if next_special + 1 < SPECIAL_IDS else 3
        elif not _is_int(v) and not (isinstance(v, list) and v and all(_is_int(x) for x in v)):
            continue
        else:
            new = (
                _shrink_int(k, v, layers, count, heads)
                if _is_int(v)
                else [_shrink_int(k, x, layers, count, heads) for x in v]
            )
            if new != v:
                out[k] = new
    if "use_cache" in out:
        out["use_cache"] = False
    _keep_derived(d, out, layers, count)
    return out


def _keep_derived(d: dict[str, Any], out: dict[str, Any], layers: int, count: int) -> None:
    """The sizes a family derives from others, derived again from the shrunk ones (in place)."""
    # multi-head latent attention: the rotary part half the head, a query head both parts
    if _is_int(d.get("qk_rope_head_dim")) and _is_int(d.get("qk_nope_head_dim")) and d["qk_rope_head_dim"] > 0:
        rope = HEAD_DIM // 2
        nope = min(HEAD_DIM, rope * d["qk_nope_head_dim"] // d["qk_rope_head_dim"])
        out["qk_rope_head_dim"], out["qk_nope_head_dim"] = rope, nope
        for k in ("qk_head_dim", "head_dim"):
            if _is_int(d.get(k)):
                full = {d["qk_rope_head_dim"]: rope, d["qk_rope_head_dim"] + d["qk_nope_head_dim"]: rope + nope}
                out[k] = full.get(d[k], out[k])
    # state-space heads: heads x head dim = expand x hidden, where the defaults have it so
    for heads, dim, expand in (
        ("mamba_n_heads", "mamba_d_head", "mamba_expand"),
        ("mamba_num_heads", "mamba_head_dim", "mamba_expand"),
        ("num_heads", "head_dim", "expand"),
    ):
        hidden = "hidden_size" if "hidden_size" in d else "d_model"
        if all(_is_int(d.get(k)) for k in (heads, dim, expand, hidden)) and d[heads] * d[dim] == d[expand] * d[hidden]:
            out[heads] = max(out[expand] * out[hidden] // out[dim], 1)
    for k in ("n_groups", "mamba_n_groups", "ssm_n_groups"):
        if _is_int(out.get(k)):
            out[k] = 1
    # rotary sections (multimodal rope): the same proportions of the shrunk rotary half
    for k, v in d.items():
        if isinstance(v, dict) and isinstance(v.get("mrope_section"), list):
            out[k] = {**v, "mrope_section": _sections(v["mrope_section"], d, out)}
        # per-layer settings keyed by layer index: those of the kept layers
        if isinstance(v, dict) and v and all(isinstance(i, int) or (isinstance(i, str) and i.isdigit()) for i in v):
            if count > layers:
                out[k] = {i: x for i, x in v.items() if int(i) < layers}
    # lists of layer indices: brought into the kept layers, in proportion
    for k, v in d.items():
        if count > layers and isinstance(v, list) and v and all(_is_int(x) for x in v) and len(v) != count:
            if "layer" in k and any(w in k for w in ("idx", "indices", "ids", "index")):
                out[k] = sorted({min(x * layers // count, layers - 1) for x in v})


def _sections(sections: list[int], d: dict[str, Any], out: dict[str, Any]) -> list[int]:
    """Rotary sections scaled as the head dim was, summing to an integer (largest remainders)."""
    old, new = d.get("head_dim"), out.get("head_dim")
    if not (_is_int(old) and _is_int(new)):
        heads, hidden = d.get("num_attention_heads"), d.get("hidden_size")
        old = hidden // heads if _is_int(heads) and _is_int(hidden) else None
        heads, hidden = out.get("num_attention_heads"), out.get("hidden_size")
        new = hidden // heads if _is_int(heads) and _is_int(hidden) else None
    if not old or not new or old == new:
        return sections
    total = sum(sections) * new // old
    exact = [x * new / old for x in sections]
    got = [int(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: got[i] - exact[i])[: total - sum(got)]:
        got[i] += 1
    return got


def _is_head_count(k: str) -> bool:
    return k in {"num_attention_heads", "n_head", "n_heads", "num_heads", "attention_heads"} or k.endswith(
        "_attention_heads"
    )


def _shrink_int(k: str, v: int, layers: int, count: int, heads: int) -> int:
    """One integer of a config under the rule (unchanged where no part of the rule names it)."""
    if v <= 0:
        return v
    if k in _HIDDEN or k.endswith("hidden_size"):
        return min(v, HIDDEN)
    if "intermediate" in k or "ffn" in k or k in {"d_ff", "d_inner", "n_inner", "hidden_dim", "ffn_hidden_size"}:
        return min(v, EXPERT_INTERMEDIATE if ("moe" in k or "expert" in k) else INTERMEDIATE)
    if k in _HEAD_DIMS or k.endswith("_head_dim"):
        return min(v, HEAD_DIM)
    if k == "rotary_dim":
        return min(v, HEAD_DIM // 2)
    if k.endswith("_rank") or k.endswith("_lora_rank"):
        return min(v, RANK)
    if _is_head_count(k):
        return min(v, HEADS)
    if k in _KV_HEADS or "key_value_heads" in k or k.endswith("kv_heads"):
        if v == 1:
            return 1
        return HEADS if v >= heads else min(v, KV_HEADS)
    if re.fullmatch(r"(linear|index|ssm|mamba|lin)_(num_)?(n_)?(key_|value_)?heads", k) or k.endswith("_num_heads"):
        return min(v, HEADS)
    if k in _EXPERTS:
        return min(v, EXPERTS)
    if k in _EXPERTS_PER_TOKEN:
        return min(v, EXPERTS_PER_TOKEN)
    if k in _GROUPS:
        return 1
    if k in _SHARED_EXPERTS:
        return min(v, 1)
    if "vocab_size" in k and k != "type_vocab_size":
        return min(v, VOCAB)
    if k in _WINDOWS:
        return min(v, WINDOW)
    if "position" in k:
        return min(v, POSITIONS)
    if k.endswith("_period") or "every_n" in k or k.endswith("_interval") or k.endswith("_step"):
        return min(v, layers)
    if k.endswith("_offset") or k.startswith("first_k"):
        return min(v, layers - 1)
    if "shared_layers" in k:  # the last v of `count` layers reuse the others' caches: as large a share
        return v * layers // count if count else v
    if k == "block_sizes":  # funnel: layers per block
        return 1
    return v


def base_model_class(model_type: str) -> Any:
    """The base model class of a model type (the first where the mapping names several)."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES[model_type]
    return getattr(transformers, name[0] if isinstance(name, list | tuple) else name)


def model_types() -> list[str]:
    """Every model type in transformers' auto mapping whose base model's forward takes
    input_ids, sorted (imports torch and transformers)."""
    import inspect

    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    names = []
    for model_type in MODEL_MAPPING_NAMES:
        try:
            params = inspect.signature(base_model_class(model_type).forward).parameters
        except Exception:  # a backend the environment lacks (torchaudio, ...): not buildable here
            continue
        if "input_ids" in params:
            names.append(model_type)
    return sorted(names)


@dataclass
class Built:
    model: torch.nn.Module
    inputs: dict[str, torch.Tensor]
    depth: int
    """Layers on the longest path (an encoder-decoder's encoder and decoder layers added): the
    depth the model criterion's tolerance grows with."""
    config: Any


def config(model_type: str) -> Any:
    """The shrunk config of a model type."""
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # the full-size defaults warn about themselves
    try:
        defaults = cls()
        cfg = cls.from_dict(shrink(defaults.to_dict()))
    finally:
        transformers.logging.set_verbosity(verbosity)
    _mrope_sections(cfg)
    return cfg


def _mrope_sections(cfg: Any) -> None:
    """Multimodal rotary families split the rotary half of a head into (time, height, width)
    sections, by default sized for the full head (modeling code's constants): given here for
    the shrunk head, in the same 2:3:3 proportion (in place, in the config and its sub-configs)."""
    for name in getattr(cfg, "sub_configs", {}) or {}:
        sub = getattr(cfg, name, None)
        if sub is not None and hasattr(sub, "to_dict"):
            _mrope_sections(sub)
    rope = getattr(cfg, "rope_parameters", None)
    if "mrope_section" not in getattr(type(cfg), "ignore_keys_at_rope_validation", ()) or not isinstance(rope, dict):
        return
    if "mrope_section" in rope:
        return
    head = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    half = int(head * rope.get("partial_rotary_factor", getattr(cfg, "partial_rotary_factor", 1.0) or 1.0)) // 2
    rope["mrope_section"] = [half - 2 * (3 * half // 8), 3 * half // 8, 3 * half // 8]


def _depth(cfg: Any) -> int:
    d = cfg.to_dict()
    text = d.get("text_config") if isinstance(d.get("text_config"), dict) else d
    enc = max([text.get(k) or 0 for k in ("encoder_layers", "num_layers", "num_encoder_layers")] + [0])
    dec = max([text.get(k) or 0 for k in ("decoder_layers", "num_decoder_layers")] + [0])
    if getattr(cfg, "is_encoder_decoder", False) and dec:
        return enc + dec
    blocks = sum(text.get("block_sizes") or [])  # funnel's blocks, before its decoder layers
    return blocks + max([text.get(k) or 0 for k in _LAYER_COUNTS] + [0 if blocks else LAYERS])


def build(model_type: str, seq: int = SEQ) -> Built:
    """The model of a model type in eval mode, and its inputs; deterministic."""
    import inspect

    import torch
    import transformers

    from spyre_mlir.testing.weights import randomize_weights

    cfg = config(model_type)
    torch.manual_seed(SEED)
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        model = base_model_class(model_type)._from_config(cfg)  # as AutoModel.from_config builds it
    finally:
        transformers.logging.set_verbosity(verbosity)
    randomize_weights(model, SEED)
    model.eval()
    gen = torch.Generator().manual_seed(SEED + 1)
    vocab = _vocab(cfg)
    inputs = {"input_ids": torch.randint(SPECIAL_IDS, vocab, (1, seq), generator=gen)}
    params = inspect.signature(model.forward).parameters
    if getattr(cfg, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        inputs["decoder_input_ids"] = torch.randint(SPECIAL_IDS, vocab, (1, DECODER_SEQ), generator=gen)
    return Built(model, inputs, _depth(cfg), cfg)


def _vocab(cfg: Any) -> int:
    return int(getattr(cfg.get_text_config(), "vocab_size", None) or getattr(cfg, "vocab_size", None) or VOCAB)
