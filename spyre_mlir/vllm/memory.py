"""The KV cache's size on the spyre platform: the card's DDR and the host's free memory
(docs/vllm.md, "Memory"). No vLLM import: the platform reads it while vLLM loads platforms."""

from __future__ import annotations

from spyre_mlir.target.config import DeviceConfig

DL16_BYTES = 2
"""A weight's bytes on the card: DL16, whatever the checkpoint's dtype."""

KV_CACHE_HOST_FRACTION = 0.25
"""The KV cache's largest share of the host memory free at start-up (vLLM's CPU default reserves
92% of all host memory and refuses to start on a busy machine)."""

AUTO = "auto"
"""`additional_config["spyre_kv_cache"]` when the KV cache is ours to size (platform.py)."""


class CardMemoryError(ValueError):
    """The model, or the KV cache asked for, does not fit the card or the host."""


def size(n: float) -> str:
    """Bytes for a message: in GiB from 1 GiB, else in MiB."""
    return f"{n / 1024**3:.2f} GiB" if n >= 1024**3 else f"{n / 1024**2:.1f} MiB"


def kv_cache_bytes(
    *,
    weight_bytes: int,
    one_request_bytes: int,
    max_model_len: int,
    max_num_seqs: int,
    block_bytes: int,
    host_free_bytes: int,
    card: DeviceConfig | None = None,
) -> int:
    """The KV cache's bytes: the smallest of the card's usable DDR less the weights (in DL16), a
    quarter of the host memory free, and what `max_num_seqs` requests of `max_model_len` tokens
    can fill (`one_request_bytes` each, plus vLLM's null block of `block_bytes`): more would never
    be used, and vLLM allocates it all at start-up.

    Raises `CardMemoryError` when the weights do not fit the card or the KV cache cannot hold one
    request of `max_model_len` tokens."""
    card = card or DeviceConfig()
    card_left = card.ddr_usable_bytes - weight_bytes
    if card_left <= 0:
        raise CardMemoryError(
            f"the model's weights need {size(weight_bytes)} in DL16 ({weight_bytes // DL16_BYTES:,} parameters x "
            f"{DL16_BYTES} bytes), more than the card's usable DDR ({size(card.ddr_usable_bytes)}): the model "
            "does not fit one simulated Spyre card"
        )
    host = int(host_free_bytes * KV_CACHE_HOST_FRACTION)
    budget = min(card_left, host)
    if budget < one_request_bytes + block_bytes:
        bound = "the card's DDR left after the weights" if card_left <= host else "a quarter of the host memory free"
        fits = max(0, budget - block_bytes) * max_model_len // one_request_bytes
        raise CardMemoryError(
            f"one request of max_model_len={max_model_len} tokens needs {size(one_request_bytes)} of KV cache, more "
            f"than the {size(budget)} the KV cache can have ({bound}; card: {size(card_left)} of "
            f"{size(card.ddr_usable_bytes)} usable DDR left after {size(weight_bytes)} of weights in DL16; host: "
            f"{size(host_free_bytes)} free): lower max_model_len (--max-model-len; about {fits} tokens fit) or free "
            "host memory"
        )
    return min(budget, max_num_seqs * one_request_bytes + block_bytes)
