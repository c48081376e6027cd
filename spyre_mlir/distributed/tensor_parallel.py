"""Tensor parallelism for decoder LLMs (Llama, Granite, Mistral, Qwen2 … : HF models whose
attention infers its heads from the projections' widths), the Megatron plan applied by hand:

    q, k, v, gate, up   column-parallel: each rank keeps 1/N of the output features (whole
                        heads: a rank's query heads and their KV heads stay together)
    o, down             row-parallel: each rank keeps the matching 1/N of the input features;
                        the partial products are summed by an all-reduce (then the bias, once)

Everything else (embeddings, norms, the LM head) is replicated. Each rank's shard is an ordinary
HF model with narrower projections, so `torch.compile(model, backend="spyre")` compiles it as it
compiles any model; the all-reduces are graph breaks (`torch._dynamo.disable`), run eagerly by
the "spyre" process group between the compiled pieces.

Why not `torch.distributed.tensor.parallel` (ColwiseParallel/RowwiseParallel on a DeviceMesh):
DTensor's collectives are the functional `_c10d_functional` ops, which reach a process group
through its C++ interface, and a process group written in Python (backend.py) answers only to
Python calls; and a DTensor graph under torch.compile would hand our backend those ops too. The
plan by hand gives the same shards and the same two all-reduces per layer (docs/distributed.md).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F


class TensorParallelError(ValueError):
    """A model the plan cannot split over this many ranks."""


@torch._dynamo.disable
def _all_reduce(y: torch.Tensor, group: Any) -> torch.Tensor:
    dist.all_reduce(y, group=group)
    return y


class RowParallelLinear(torch.nn.Module):
    """A row-parallel shard of a Linear: this rank's input features, summed over the group."""

    def __init__(self, full: torch.nn.Linear, rank: int, world: int, group: Any):
        super().__init__()
        n = full.in_features // world
        self.weight = torch.nn.Parameter(
            full.weight.detach()[:, rank * n : (rank + 1) * n].clone(), requires_grad=False
        )
        self.bias = None if full.bias is None else torch.nn.Parameter(full.bias.detach().clone(), requires_grad=False)
        self.group = group
        self.in_features, self.out_features = n, full.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _all_reduce(F.linear(x, self.weight), self.group)
        return y if self.bias is None else y + self.bias


def _column(full: torch.nn.Linear, rank: int, world: int) -> torch.nn.Linear:
    n = full.out_features // world
    part = torch.nn.Linear(full.in_features, n, bias=full.bias is not None, device=full.weight.device)
    with torch.no_grad():
        part.weight.copy_(full.weight[rank * n : (rank + 1) * n])
        if full.bias is not None:
            part.bias.copy_(full.bias[rank * n : (rank + 1) * n])
    return part.to(full.weight.dtype).requires_grad_(False)


def parallelize(model: Any, group: Any = None) -> Any:
    """Replace `model`'s decoder projections by this rank's shards (in place; returned)."""
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    cfg = model.config
    heads, kv_heads = cfg.num_attention_heads, getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    for name, n in (("attention heads", heads), ("KV heads", kv_heads), ("FFN width", cfg.intermediate_size)):
        if n % world:
            raise TensorParallelError(
                f"tensor parallelism over {world} ranks splits {name}, but {n} is not a multiple of {world}"
            )
    if world == 1:
        return model
    for layer in model.model.layers:
        attn, mlp = layer.self_attn, layer.mlp
        for proj in ("q_proj", "k_proj", "v_proj"):
            setattr(attn, proj, _column(getattr(attn, proj), rank, world))
        attn.o_proj = RowParallelLinear(attn.o_proj, rank, world, group)
        for proj in ("gate_proj", "up_proj"):
            setattr(mlp, proj, _column(getattr(mlp, proj), rank, world))
        mlp.down_proj = RowParallelLinear(mlp.down_proj, rank, world, group)
    return model
