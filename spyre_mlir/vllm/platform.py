"""The spyre platform for vLLM: vLLM's CPU platform with the model's graph pieces compiled for
the device model (`SpyreCompiler`), attention on the CPU (vLLM's CPU attention backend), and
its worker `SpyreWorker` (worker.py: the device's time per step, the card's memory)."""

from __future__ import annotations

import dataclasses
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
    def get_compile_backend(cls) -> str:
        """The compiler interface for the model's graph pieces (vLLM's small helper functions
        keep the CPU platform's `simple_compile_backend`)."""
        return "spyre_mlir.vllm.compiler.SpyreCompiler"

    @classmethod
    def check_and_update_config(cls, vllm_config: Any) -> None:
        from vllm.config import CompilationMode

        parallel = vllm_config.parallel_config
        if parallel.worker_cls == "auto":
            parallel.worker_cls = "spyre_mlir.vllm.worker.SpyreWorker"
        super().check_and_update_config(vllm_config)
        cc = vllm_config.compilation_config
        if cc.mode != CompilationMode.NONE:
            # piecewise: vLLM splits the graph at attention and hands each piece to SpyreCompiler
            cc.mode = CompilationMode.VLLM_COMPILE
            cc.backend = "spyre"
            cc.custom_ops = ["none"]
            cc.compile_sizes = []
            cc.cudagraph_capture_sizes = []
            # vLLM's fusion passes rewrite to its CUDA/CPU kernels, which the device has not
            for name in dataclasses.fields(cc.pass_config):
                if name.name.startswith("fuse_"):
                    setattr(cc.pass_config, name.name, False)
            # its AOT path serialises the compiled callable; the backend caches programs itself
            os.environ["VLLM_USE_AOT_COMPILE"] = "0"
        cache = vllm_config.cache_config
        if cache.kv_cache_memory_bytes is None and isinstance(vllm_config.additional_config, dict):
            # sized by the worker once the weights are loaded (memory.kv_cache_bytes); until then at
            # most a quarter of the host memory free (vLLM's CPU worker checks it when it starts)
            vllm_config.additional_config["spyre_kv_cache"] = AUTO
            cache.kv_cache_memory_bytes = int(psutil.virtual_memory().available * KV_CACHE_HOST_FRACTION)
