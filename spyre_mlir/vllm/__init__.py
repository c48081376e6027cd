"""vLLM on the device model: an out-of-tree platform plugin (docs/vllm.md).

vLLM finds it through the `vllm.platform_plugins` entry point (`register`) and loads
`plain_linears` in every process (`vllm.general_plugins`: plain linears and our out-of-tree
layers); SPYRE_VLLM=0 turns both off (vLLM then runs on its own CPU platform)."""

from __future__ import annotations

import os


def register() -> str | None:
    """The platform's qualified name for vLLM, or None when switched off."""
    if os.environ.get("SPYRE_VLLM", "1") == "0":
        return None
    return "spyre_mlir.vllm.platform.SpyrePlatform"


def plain_linears() -> None:
    """The general plugin (every vLLM process loads it): vLLM's CPU linear hook and our forms of
    vLLM's layers, registered out of tree (layers.py)."""
    if register() is None:
        return
    import torch
    from vllm.model_executor.layers import utils

    from spyre_mlir.vllm import layers

    def dispatch(layer: torch.nn.Module, remove_weight: bool) -> None:
        setattr(layer, "cpu_linear", layers.linear(layer, remove_weight))  # noqa: B010  # a Module attribute vLLM reads

    utils.dispatch_cpu_unquantized_gemm = dispatch
    layers.register()
