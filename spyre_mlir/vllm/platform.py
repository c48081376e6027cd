"""The spyre platform for vLLM: vLLM's CPU platform with each step one program on the card
(runner.py), attention of plain PyTorch ops over the paged KV cache (attention.py), and its
worker `SpyreWorker` (worker.py: the buckets compiled at start-up, the device's time per step,
the card's memory)."""

from __future__ import annotations

import os
from typing import Any

import psutil
import torch
from vllm.platforms.cpu import CpuPlatform
from vllm.platforms.interface import PlatformEnum

from spyre_mlir.vllm.memory import AUTO, KV_CACHE_HOST_FRACTION


class SpyrePlatform(CpuPlatform):
    """Keeps the CPU platform's enum: vLLM tests `is_cpu()` in its worker, allocator and
    attention code, and every one of those CPU paths is right for the host side of the device
    model (an OOT enum would need each of them overridden)."""

    _enum = PlatformEnum.CPU
    device_name = "cpu"
    device_type = "cpu"

    @property
    def supported_dtypes(self) -> list[torch.dtype]:
        """float32 first: vLLM's `--dtype auto` keeps a float32 checkpoint in float32 (the CPU
        platform's bfloat16 would put casts on the CPU between the device's islands; the device
        computes in DL16 either way)."""
        return [torch.float32, *(d for d in super().supported_dtypes if d != torch.float32)]

    @classmethod
    def get_attn_backend_cls(
        cls, selected_backend: Any, attn_selector_config: Any, num_heads: int | None = None
    ) -> str:
        """The spyre attention backend (attention.py) when the model runs on the card; the
        CPU platform's otherwise (enforce_eager, LoRA)."""
        from vllm.config import get_current_vllm_config_or_none

        config = get_current_vllm_config_or_none()
        if config is None or not on_device(config) or attn_selector_config.use_mla or attn_selector_config.use_sparse:
            return super().get_attn_backend_cls(selected_backend, attn_selector_config, num_heads)
        return "spyre_mlir.vllm.attention.SpyreAttentionBackend"

    @classmethod
    def opaque_attention_op(cls) -> bool:
        """Attention is the attention layer's own Python on the card (traced into the step's
        program), not vLLM's opaque custom op; the CPU platform's otherwise."""
        from vllm.config import get_current_vllm_config_or_none

        config = get_current_vllm_config_or_none()
        return config is None or not on_device(config)

    dist_backend = "spyre"
    """The tensor-parallel groups' device process group: the "spyre" c10d backend
    (spyre_mlir/distributed), through which a step's collectives reach the other cards."""

    @classmethod
    def use_custom_op_collectives(cls) -> bool:
        """vLLM's collectives as its custom ops (`torch.ops.vllm.all_reduce` ...), which a step's
        trace keeps as ops of its program (CPU platform: called on the traced values, where a
        trace would drop them)."""
        return True

    @classmethod
    def get_device_communicator_cls(cls) -> str:
        """Collectives charged to the card (communicator.py) when the model runs on it."""
        from vllm.config import get_current_vllm_config_or_none

        config = get_current_vllm_config_or_none()
        if config is not None and not on_device(config):
            return super().get_device_communicator_cls()
        return "spyre_mlir.vllm.communicator.SpyreDeviceCommunicator"

    @classmethod
    def support_hybrid_kv_cache(cls) -> bool:
        """One KV-cache group: sliding-window layers keep every page and mask by their window
        (attention.py), so every layer reads one block table."""
        return False

    @classmethod
    def validate_request(cls, processed_inputs: Any, params: Any) -> None:
        """A step's program gives the logits of each request's last token only."""
        if getattr(params, "prompt_logprobs", None) is not None:
            raise ValueError(
                "prompt_logprobs: the spyre platform computes the logits of each request's last token only"
            )

    @classmethod
    def check_and_update_config(cls, vllm_config: Any) -> None:
        from vllm.config import CompilationMode
        from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

        parallel = vllm_config.parallel_config
        if parallel.world_size > 1 and "VLLM_CPU_OMP_THREADS_BIND" not in os.environ:
            # vLLM's CPU workers bind their OpenMP threads one NUMA node per local rank and
            # refuse more ranks than nodes; a rank's work here is its simulated card, whose time
            # no host thread binding changes, so its threads are left unbound (a binding the user
            # sets is kept)
            os.environ["VLLM_CPU_OMP_THREADS_BIND"] = "nobind"
        if parallel.worker_cls == "auto":
            parallel.worker_cls = "spyre_mlir.vllm.worker.SpyreWorker"
        super().check_and_update_config(vllm_config)
        cc = vllm_config.compilation_config
        if on_device(vllm_config):
            # the worker traces and compiles each step itself (runner.py): vLLM compiles nothing
            register_backend(AttentionBackendEnum.CUSTOM, "spyre_mlir.vllm.attention.SpyreAttentionBackend")
            cc.mode = CompilationMode.NONE
            cc.custom_ops = ["none"]  # PyTorch-native layers: ops the compiler takes
            cc.compile_sizes = []
            cc.cudagraph_capture_sizes = []
        cache = vllm_config.cache_config
        if cache.kv_cache_memory_bytes is None and isinstance(vllm_config.additional_config, dict):
            # sized by the worker once the weights are loaded (memory.kv_cache_bytes); until then at
            # most a quarter of the host memory free (vLLM's CPU worker checks it when it starts)
            vllm_config.additional_config["spyre_kv_cache"] = AUTO
            cache.kv_cache_memory_bytes = int(psutil.virtual_memory().available * KV_CACHE_HOST_FRACTION)


def on_device(vllm_config: Any) -> bool:
    """Whether the model's steps run on the card: not with enforce_eager or LoRA (vLLM's CPU
    path then runs as it is)."""
    model = vllm_config.model_config
    return not (model is not None and model.enforce_eager) and vllm_config.lora_config is None
