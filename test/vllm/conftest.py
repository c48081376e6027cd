"""The vLLM tests run in the vLLM environment (`make vllm-test`: .venv-vllm, its own pins).

Set-up for every test, as test/python's: the compile cache on disk off (SPYRE_CACHE=0: each test
compiles what it checks; a test that checks the cache turns it on in its own temporary
directory), no hub download (HF_HUB_OFFLINE=1), no usage report from vLLM, and vLLM's own
cache (VLLM_CACHE_ROOT) in a temporary directory."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest

os.environ["SPYRE_CACHE"] = "0"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["VLLM_NO_USAGE_STATS"] = "1"

SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def char_tokenizer():
    """A tokenizer of one token per character, built offline: the 4 special tokens (pad 0, bos 1,
    eos 2, unk 3), printable ASCII and then Latin letters up to 256 tokens, a BOS before each
    text, and a chat template ("role: content" lines, then "assistant:")."""
    from tokenizers import Tokenizer, decoders, models, processors
    from transformers import PreTrainedTokenizerFast

    chars = [c for c in string.printable if c not in "\t\r\x0b\x0c"]
    chars += [chr(c) for c in range(0xA1, 0x250) if chr(c).isprintable()][: 256 - len(SPECIALS) - len(chars)]
    vocab = {t: i for i, t in enumerate((*SPECIALS, *chars))}
    assert len(vocab) == 256
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))  # no merges: a token per character
    tok.decoder = decoders.Fuse()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


@pytest.fixture(scope="package", autouse=True)
def vllm_cache_root(tmp_path_factory) -> None:
    os.environ["VLLM_CACHE_ROOT"] = str(tmp_path_factory.mktemp("vllm_cache"))


@pytest.fixture(scope="package")
def llama_dir(tmp_path_factory) -> Path:
    """The 2-layer Llama of test/python/helpers.py (head dim 64), vocabulary 256, positions up to
    1024, saved as HF does, with `char_tokenizer`."""
    from helpers import tiny_llama

    d = tmp_path_factory.mktemp("tiny_llama")
    tiny_llama(
        pad_token_id=0, bos_token_id=1, eos_token_id=2, torch_dtype="float32", max_position_embeddings=1024
    ).save_pretrained(d)
    char_tokenizer().save_pretrained(d)
    return d
