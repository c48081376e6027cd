"""The KV cache on the spyre platform (spyre_mlir/vllm/memory.py, worker.py): sized by the card's
DDR, the host's free memory and what max_num_seqs requests can fill; a model or a KV cache that
does not fit is refused with a message that says which and by how much."""

from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.vllm.memory import CardMemoryError, kv_cache_bytes
from spyre_mlir.vllm.server import Server, ServerError

GiB = 1024**3
MiB = 1024**2


def _size(**given: int) -> int:
    args = dict(
        weight_bytes=270 * MiB,
        one_request_bytes=64 * MiB,
        max_model_len=8192,
        max_num_seqs=4,
        block_bytes=MiB,
        host_free_bytes=16 * GiB,
    )
    return kv_cache_bytes(**(args | given))


def test_the_kv_cache_is_what_the_requests_can_fill_at_most():
    assert _size() == 4 * 64 * MiB + MiB  # 4 requests and the null block, far below the card and the host
    assert _size(host_free_bytes=1 * GiB) == GiB // 4  # a quarter of the host's free memory
    card = DeviceConfig(ddr_usable_bytes=270 * MiB + 100 * MiB)
    assert _size(card=card) == 100 * MiB  # the card's DDR left after the weights


def test_a_model_the_card_cannot_hold_is_refused_with_its_size():
    with pytest.raises(CardMemoryError, match=r"weights need 8\.00 GiB in DL16 \(4,294,967,296 parameters"):
        _size(weight_bytes=8 * GiB, card=DeviceConfig(ddr_usable_bytes=4 * GiB))


def test_a_request_the_kv_cache_cannot_hold_is_refused_with_the_length_that_fits():
    with pytest.raises(CardMemoryError, match=r"max_model_len=8192 tokens needs 64\.0 MiB .* about 4096 tokens fit"):
        _size(card=DeviceConfig(ddr_usable_bytes=270 * MiB + 33 * MiB))  # 32 MiB left after the null block
    with pytest.raises(CardMemoryError, match=r"a quarter of the host memory free"):
        _size(host_free_bytes=128 * MiB)


@pytest.mark.full
def test_serve_refuses_a_context_beyond_the_card_with_the_reason(llama_dir, tmp_path):
    # 2**26 tokens of 2 KiB (2 layers x K and V x 2 heads x 64 x fp32) for one request: more than the
    # card's DDR, so more than any KV cache the platform sizes; one sequence (vLLM's buffers of a
    # sequence's tokens are max_model_len long)
    args = [
        "--max-model-len",
        str(2**26),
        "--max-num-seqs",
        "1",
        "--max-num-batched-tokens",
        "256",
        "--dtype",
        "float32",
    ]
    server = Server(llama_dir, args, tmp_path / "serve.log", env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    with pytest.raises(ServerError, match="exited with"):
        server.__enter__()
    assert server.process is not None and server.process.returncode != 0
    assert re.search(
        r"CardMemoryError: one request of max_model_len=67108864 tokens needs 128\.00 GiB of KV cache, more than "
        r"the [\d.]+ (GiB|MiB) the KV cache can have .* lower max_model_len \(--max-model-len; about \d+ tokens fit\)",
        server.log(),
    ), server.log()[-3000:]


def test_llm_refuses_a_kv_cache_beyond_the_card(llama_dir):
    from vllm import LLM

    with pytest.raises(
        CardMemoryError, match=r"asked for \(200\.00 GiB, --kv-cache-memory-bytes\) .* card's usable DDR"
    ):
        LLM(model=str(llama_dir), max_model_len=64, max_num_seqs=1, kv_cache_memory_bytes=200 * GiB, dtype="float32")
