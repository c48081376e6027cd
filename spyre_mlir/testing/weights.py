"""Random weights for the tiny model tests. This module needs only torch (it imports nothing of
spyre_mlir), so test/fixtures/make_torch_mlir_models.py, run where spyre_mlir is not installed,
loads this file by its path and draws the same weights as the tests and bench/corpus.py."""

from __future__ import annotations

import math

import torch


def randomize_weights(model: torch.nn.Module, seed: int = 0, spread: float = 0.2) -> torch.nn.Module:
    """Redraw a model's parameters so that every part of it shows in its output (in place;
    deterministic for a seed). Matrices and kernels: N(0, 1/fan_in), so each projection keeps
    its input's scale and attention logits are O(1); vectors (biases, norm scales and shifts):
    their initial value + N(0, spread^2).

    Why: the families' own initialisation (std 0.02, zero biases) leaves a tiny model's output
    almost entirely to the embeddings and the final norm. With it, a lost attention mask, a
    dropped bias or a swapped head changes BERT's output by 0-30 u, inside any DL16 tolerance;
    with these weights by 280-1300 u, while the compiled model stays within ~5 u."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() >= 2:
                fan_in = p.shape[1] * math.prod(p.shape[2:])
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float32).to(p.dtype) / math.sqrt(fan_in))
            else:
                p.add_(spread * torch.randn(p.shape, generator=gen, dtype=torch.float32).to(p.dtype))
    return model
