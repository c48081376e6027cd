"""Random `*_like` ops in an aot_autograd graph, made to draw what eager PyTorch draws.

`aten.randn_like(x)` (and `rand_like`) gives its result `x`'s strides (`preserve_format`), and
the CPU generator fills a tensor by its layout: `randn` of a contiguous float tensor of 16
elements or more takes `normal_fill` (Box-Muller over blocks of 16), any other fill one draw per
element in storage order. The torch dialect has value semantics: the host executor runs a CPU op on a
contiguous copy of its operands, so a `randn_like` of a transposed tensor draws other numbers
than eager does, from the same generator state, and leaves the generator elsewhere (vits's
prior latents: a `randn_like` of a transposed (1, 192, frames) product; its compiled waveform
and eager's then share no noise).

`eager_draw_order(gm)` rewrites each such op whose result (its fake tensor, `node.meta["val"]`)
is dense but not contiguous before import, so that it draws in storage order as eager does,
whatever its operand's layout at run time:

    p       = x's dims by stride, outermost first (the result's storage order)
    m       = the result's shape in that order; c its last size other than 1, h = numel / c
    randn_like(x)
        ->  permute(view(permute(randn_like(empty([1, c, h, 1]), memory_format=channels_last),
                                 [0, 2, 3, 1]), m), p^-1)

A channels_last (1, c, h, 1) tensor is not contiguous (c, h > 1) and keeps its elements in the
order (h, c): its draws, one per element in storage order, read in that order, are eager's.
"""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily

from spyre_mlir.frontend.storage_views import fake_call

aten = torch.ops.aten

__all__ = ["eager_draw_order"]

RANDOM_LIKE = (aten.randn_like.default, aten.rand_like.default)
"""The random ops that take their result's layout from an operand."""


def eager_draw_order(gm: torch.fx.GraphModule) -> bool:
    """Rewrite every random `*_like` op of `gm` whose result eager PyTorch lays out other than
    contiguously (in place; the module docstring). True if anything changed."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in RANDOM_LIKE and _strided(n)]
    with unset_fake_temporarily():  # (aot_autograd calls the compiler under its fake mode)
        for node in nodes:
            _rewrite(gm, node)
    if nodes:
        gm.graph.lint()
        gm.recompile()
    return bool(nodes)


def _strided(node: torch.fx.Node) -> bool:
    """Whether the op's result is dense (its draws one per element) but not contiguous."""
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.layout != torch.strided or val.is_contiguous():
        return False
    return bool(torch._prims_common.is_non_overlapping_and_dense_or_false(val))


def _rewrite(gm: torch.fx.GraphModule, node: torch.fx.Node) -> None:
    """Rewrite one random `*_like` op (`eager_draw_order`)."""
    val = node.meta["val"]
    rank = val.dim()
    order = sorted(range(rank), key=lambda d: (-val.stride(d), d))
    shape = [int(val.shape[d]) for d in order]
    c = next(s for s in reversed(shape) if s != 1)
    h = val.numel() // c
    inverse = [order.index(d) for d in range(rank)]
    _, *rest = node.args  # (the operand gives the result its shape and layout alone)
    kwargs = {**node.kwargs, "memory_format": torch.channels_last}
    with gm.graph.inserting_before(node):
        mode = val.fake_mode
        out = fake_call(gm, aten.empty.memory_format, ([1, c, h, 1],), {"dtype": val.dtype, "device": val.device}, mode)
        for target, args, kw in (
            (node.target, tuple(rest), kwargs),
            (aten.permute.default, ([0, 2, 3, 1],), {}),
            (aten.view.default, (shape,), {}),
            (aten.permute.default, (inverse,), {}),
        ):
            out = fake_call(gm, target, (out, *args), kw, mode)
    node.replace_all_uses_with(out)
    gm.graph.erase_node(node)
