"""vLLM's layers in the forms the spyre compiler takes best, registered out of tree the way
vLLM's registry expects (`CustomOp.register_oot`: vLLM then builds ours wherever a model
builds its own; docs/vllm.md, "Layers"), and the CPU platform's linear hook (`linear`).

- Linears: `torch.nn.functional.linear` (vLLM's CPU linears call oneDNN kernels on pre-packed
  weights). A merged linear (q, k and v in one; gate and up in one) is the `cat` of a
  product per part, each part's rows a parameter of its own (a view of the loaded weight):
  the model splits the result again, and the compiler takes each slice of the cat as its
  part (torch-adapt SliceOfCat). So each part is a product whose result is where its reader
  wants it, as with a model's separate projections, and no slice kernel copies it out. The
  same values: each output element is the same row's dot product.

- Rotary embeddings (neox style): vLLM's PyTorch form splits the rotated dims into halves
  and joins `x1 * cos - x2 * sin` and `x2 * cos + x1 * sin`; ours is transformers' form,
  `x * cos + rotate_half(x) * sin` with cos and sin each its half twice (a table of the
  model's positions built once), which the compiler turns into one product with a signed
  permutation or one swap of the stick dim (torch-adapt LaneMovesAsProduct,
  LaneMovesInOneSwap). The same values: each output is the same two products and one sum.
"""

from __future__ import annotations

from typing import Any

import torch


class HFRotary:
    """The forward of a rotary embedding in transformers' form (module docstring), for the
    rotary embedding classes whose `_compute_cos_sin_cache` is all they change."""

    rotary_dim: int
    head_size: int
    is_neox_style: bool
    cos_sin_cache: torch.Tensor
    spyre_inputs: tuple[torch.Tensor, torch.Tensor] | None = None
    """`hf_inputs` as the step's program has them: its inputs, set while it is traced."""

    def hf_inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The table, (positions, 2 * rotary_dim): cos then sin, each its half of the rotated
        dims twice; and rotate_half as a linear's weight, (rotary_dim, rotary_dim): the
        signed permutation W with linear(x, W) = x @ W.T = cat(-x2, x1)."""
        cos, sin = self.cos_sin_cache.chunk(2, dim=-1)
        dims, half = self.rotary_dim, self.rotary_dim // 2
        swap = torch.zeros(dims, dims, dtype=self.cos_sin_cache.dtype)
        lanes = torch.arange(half)
        swap[lanes, lanes + half] = -1.0
        swap[lanes + half, lanes] = 1.0
        return torch.cat([cos, cos, sin, sin], dim=-1), swap

    def forward_native(
        self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if not self.is_neox_style:
            return super().forward_native(positions, query, key)  # type: ignore[misc]
        positions = positions.flatten()
        rot = self.rotary_dim
        # the step's program hands these in as inputs (runner.py); eagerly, they are made here
        table, swap = self.hf_inputs() if self.spyre_inputs is None else self.spyre_inputs
        cos_sin = table.index_select(0, positions)
        cos, sin = cos_sin[:, None, :rot], cos_sin[:, None, rot:]

        def rotated(x: torch.Tensor) -> torch.Tensor:
            shape = x.shape
            x = x.view(positions.shape[0], -1, self.head_size)
            part = x[..., :rot] if rot < self.head_size else x
            turned = torch.nn.functional.linear(part.reshape(-1, rot), swap).view(part.shape)
            out = part * cos + turned * sin
            if rot < self.head_size:
                out = torch.cat([out, x[..., rot:]], dim=-1)
            return out.reshape(shape)

        return rotated(query), None if key is None else rotated(key)


def linear(layer: torch.nn.Module, remove_weight: bool) -> Any:
    """The layer's `cpu_linear` (vLLM's CPU hook, `dispatch_cpu_unquantized_gemm`): plain, or
    for a merged linear the cat of its parts' products (module docstring). A merged layer's
    parts are parameters of their own; its weight then goes where vLLM lets it go
    (`remove_weight`, as vLLM's CPU path does once it has packed a weight)."""
    sizes = getattr(layer, "output_sizes", None)
    weight = getattr(layer, "weight", None)
    if (
        not isinstance(sizes, list | tuple)
        or len(sizes) < 2
        or not isinstance(weight, torch.Tensor)
        or weight.dim() != 2
        or sum(sizes) != weight.shape[0]
    ):
        return torch.nn.functional.linear
    bias = getattr(layer, "bias", None)
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    for i, (start, size) in enumerate(zip(starts, sizes)):
        # a copy, not a view: a graph's inputs must not alias one another (functionalization)
        part = weight.data[start : start + size].clone()
        layer.register_parameter(f"spyre_weight{i}", torch.nn.Parameter(part, requires_grad=False))
        if isinstance(bias, torch.Tensor):
            layer.register_parameter(
                f"spyre_bias{i}", torch.nn.Parameter(bias.data[start : start + size].clone(), requires_grad=False)
            )
    if remove_weight:
        layer.weight = torch.nn.Parameter(torch.empty(0, dtype=weight.dtype), requires_grad=False)
    n = len(sizes)

    def merged(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        parts = [
            torch.nn.functional.linear(
                x, getattr(layer, f"spyre_weight{i}"), None if bias is None else getattr(layer, f"spyre_bias{i}")
            )
            for i in range(n)
        ]
        return torch.cat(parts, dim=-1)

    return merged


def register() -> None:
    """Our forms of vLLM's layers, registered out of tree (`CustomOp.register_oot` by the name of
    the class they take the place of)."""
    from vllm.model_executor.custom_op import op_registry_oot
    from vllm.model_executor.layers.rotary_embedding import base

    rotary = [base.RotaryEmbedding]
    from vllm.model_executor.layers.rotary_embedding import (
        dynamic_ntk_scaling_rope,
        linear_scaling_rope,
        llama3_rope,
    )

    rotary += [
        linear_scaling_rope.LinearScalingRotaryEmbedding,
        dynamic_ntk_scaling_rope.DynamicNTKScalingRotaryEmbedding,
        llama3_rope.Llama3RotaryEmbedding,
    ]
    for cls in rotary:
        if cls.__name__ in op_registry_oot:
            continue
        # ours only where the class computes its table and keeps RotaryEmbedding's forward
        if any("forward_native" in vars(c) for c in cls.__mro__[: cls.__mro__.index(base.RotaryEmbedding)]):
            continue
        ours = type(f"Spyre{cls.__name__}", (HFRotary, cls), {"__doc__": f"{cls.__name__} in transformers' form"})
        cls.register_oot(ours, name=cls.__name__)
