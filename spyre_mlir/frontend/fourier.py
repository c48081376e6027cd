"""A Fourier transform of real data whose real or imaginary part is read, as products with
the transform's cosine and sine tables: matmuls the device runs, in place of complex ops the
card has no format for (FNet's token mixing: `torch.fft.fftn(x).real`).

`real_fourier(gm)` rewrites, before import, each

    select(view_as_real(_fft_c2c(_to_copy(x, dtype=complex), dims, norm, forward)), -1, k)

with x a real float tensor, as the part k of the transform computed along each of `dims` in
turn from its real and imaginary parts (R, I), starting from (x, 0):

    forward:  R' = R C + I S,   I' = I C - R S        C[j, k] = cos(2 pi j k / n)
    inverse:  R' = R C - I S,   I' = I C + R S        S[j, k] = sin(2 pi j k / n)

each product along one dim (moved last, the rows flattened, an mm with the n x n table), then
the scale `norm` asks for (1, 1 / sqrt(N) or 1 / N, N the product of the dims' extents). The
tables are constants of the graph (float32; DL16 on the card: each entry within half a unit of
its 9-bit mantissa). A part nothing reads is dead code and dropped; a transform whose complex
value has other readers keeps its complex ops for them (on the host).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.fx
from torch._subclasses.fake_tensor import unset_fake_temporarily

from spyre_mlir.frontend.storage_views import fake_call

aten = torch.ops.aten

_REAL = (torch.float32, torch.float16, torch.bfloat16)


def real_fourier(gm: torch.fx.GraphModule) -> bool:
    """Rewrite each real or imaginary part of a Fourier transform of real data (module
    docstring), in place. True if anything changed."""
    found = [(node, match) for node in gm.graph.nodes if (match := _match(node)) is not None]
    with unset_fake_temporarily():  # (aot_autograd calls the compiler under its fake mode)
        for node, (x, dims, norm, forward, part) in found:
            _rewrite(gm, node, x, dims, norm, forward, part)
    if found:
        gm.graph.eliminate_dead_code()
        gm.graph.lint()
        gm.recompile()
    return bool(found)


def _match(node: torch.fx.Node) -> tuple[torch.fx.Node, list[int], int, bool, int] | None:
    """(x, dims, normalization, forward, part) when `node` selects part `part` (0: real, 1:
    imaginary) of a transform of the real tensor x; else None."""
    if node.op != "call_function" or node.target is not aten.select.int:
        return None
    if len(node.args) != 3:
        return None
    pairs, dim, part = node.args
    if not isinstance(pairs, torch.fx.Node) or pairs.target is not aten.view_as_real.default:
        return None
    if dim not in (-1, pairs.meta["val"].dim() - 1) or part not in (0, 1):
        return None
    fft = pairs.args[0]
    if not isinstance(fft, torch.fx.Node) or fft.target is not aten._fft_c2c.default or len(fft.args) != 4:
        return None
    src, dims, norm, forward = fft.args
    if not isinstance(src, torch.fx.Node) or src.target is not aten._to_copy.default or not src.args:
        return None
    if not isinstance(dims, list | tuple) or not isinstance(norm, int) or not isinstance(part, int):
        return None
    axes = [d for d in dims if isinstance(d, int)]
    if not axes or len(axes) != len(dims):
        return None
    x = src.args[0]
    if not isinstance(x, torch.fx.Node) or not src.meta["val"].is_complex():
        return None
    val = x.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dtype not in _REAL or norm not in (0, 1, 2):
        return None
    return x, [d % val.dim() for d in axes], norm, bool(forward), part


def _rewrite(
    gm: torch.fx.GraphModule,
    node: torch.fx.Node,
    x: torch.fx.Node,
    dims: list[int],
    norm: int,
    forward: bool,
    part: int,
) -> None:
    val = x.meta["val"]
    mode = getattr(val, "fake_mode", None)
    with gm.graph.inserting_before(node):
        real: torch.fx.Node = x
        imag: torch.fx.Node | None = None
        for d in dims:
            n = val.shape[d]
            cos, sin = _table(gm, n, "cos", mode, val.dtype), _table(gm, n, "sin", mode, val.dtype)
            rc, rs = _along(gm, real, d, cos, mode), _along(gm, real, d, sin, mode)
            if imag is None:
                real, imag = rc, fake_call(gm, aten.neg.default, (rs,), {}, mode) if forward else rs
                continue
            ic, is_ = _along(gm, imag, d, cos, mode), _along(gm, imag, d, sin, mode)
            sign = aten.add.Tensor if forward else aten.sub.Tensor
            real, imag = (
                fake_call(gm, sign, (rc, is_), {}, mode),
                fake_call(gm, aten.sub.Tensor if forward else aten.add.Tensor, (ic, rs), {}, mode),
            )
        out = real if part == 0 else imag
        assert out is not None  # (dims is not empty: _fft_c2c takes at least one)
        count = math.prod(val.shape[d] for d in dims)
        scale = {0: 1.0, 1: 1.0 / math.sqrt(count), 2: 1.0 / count}[norm]
        if scale != 1.0:
            out = fake_call(gm, aten.mul.Tensor, (out, scale), {}, mode)
    node.replace_all_uses_with(out)
    gm.graph.erase_node(node)


def _along(gm: torch.fx.GraphModule, v: torch.fx.Node, d: int, table: torch.fx.Node, mode: Any) -> torch.fx.Node:
    """v contracted along dim d with the symmetric n x n `table`: dim d moved last, the rows
    flattened, an mm, and back."""
    shape = list(v.meta["val"].shape)
    last = len(shape) - 1
    perm = list(range(len(shape)))
    perm[d], perm[last] = perm[last], perm[d]
    moved = v if d == last else fake_call(gm, aten.permute.default, (v, perm), {}, mode)
    if not moved.meta["val"].is_contiguous():
        moved = fake_call(gm, aten.clone.default, (moved,), {"memory_format": torch.contiguous_format}, mode)
    moved_shape = [shape[p] for p in perm]
    rows = fake_call(gm, aten.view.default, (moved, [math.prod(moved_shape[:-1]), shape[d]]), {}, mode)
    product = fake_call(gm, aten.mm.default, (rows, table), {}, mode)
    out = fake_call(gm, aten.view.default, (product, moved_shape), {}, mode)
    return out if d == last else fake_call(gm, aten.permute.default, (out, perm), {}, mode)


def _table(gm: torch.fx.GraphModule, n: int, kind: str, mode: Any, dtype: torch.dtype) -> torch.fx.Node:
    """The graph constant cos(2 pi j k / n) or sin(...) (n x n, in `dtype`), one per n and kind."""
    name = f"_spyre_dft_{kind}_{n}_{str(dtype).removeprefix('torch.')}"
    if not hasattr(gm, name):
        jk = torch.outer(torch.arange(n, dtype=torch.float64), torch.arange(n, dtype=torch.float64))
        angle = 2 * math.pi * torch.remainder(jk, n) / n  # (jk mod n: the angle stays exact for large n)
        gm.register_buffer(name, (torch.cos(angle) if kind == "cos" else torch.sin(angle)).to(dtype))
    node = gm.graph.get_attr(name)
    tensor = getattr(gm, name)
    node.meta["val"] = mode.from_tensor(tensor, static_shapes=True) if mode is not None else tensor
    return node
