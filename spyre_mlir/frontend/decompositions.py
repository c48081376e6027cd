"""The ATen decompositions the backend traces with: PyTorch's core-ATen table, with the ops the
device takes better in another form.

    roll(x, shifts, dims)   cat of two slices per rolled dim (core ATen: index_select at
                            computed positions, a gather): the slices and the cat are DMA copies
                            into offsets of one buffer on the device, and no index crosses the
                            host link (HF's sliding-window KV cache rolls its rows every step)

Mixture-of-experts routing and dispatch (transformers' `grouped_mm` experts: topk over the
router's probabilities, a sort of the expert ids, gathers into and out of expert order, a
grouped matmul, a sum over the k experts of each token). The integer work (the ids, their
order, the counts and offsets, the masks made from them) is host work by design; every float
value is computed on the device from masks the host builds:

    topk(x, k, d)           along a dim of at most TOPK_RANKED elements: each element's rank
                            (how many beat it, ties to the lower index), from comparisons of
                            every pair (boolean and integer work: the host), the indices where
                            the rank is 0 .. k-1; the values where(rank == j, x, 0) summed along
                            d (one term is x, the others 0: exact, inf included). The order of
                            NaNs (topk puts them first) is not kept. n * n comparisons and
                            k * n device element operations per row of n
    grouped_mm_fallback(a, w, offs)
                            (transformers' custom op: rows offs[e-1] <= r < offs[e] of a times
                            w[e]) dense: for each expert e, a @ w[e] over every row, the rows of
                            group e selected by a host mask (where, not a product: other rows'
                            values never mix in). Exact per row; it costs E times the expert
                            matmuls' MACs (S rows each instead of S in all): 8x for Mixtral
                            8x7B, where a device grouped matmul (row ranges at launch from the
                            host's offsets) would cost 1x; with more than DENSE_EXPERTS_MAX
                            experts (Qwen3-MoE-30B's 128) the op stays on the CPU
    avg_pool2d(x, k, s, p)  a convolution with a window of ones, one group per channel, times
                            1 / (kh kw): the sums in the PT's float32, the ones exact (where every
                            window counts kh kw elements; adaptive pooling where the windows tile
                            the input)
    addbmm(s, a, b)         the batch's products summed: bmm, then a sum over the batch dim
    slice_scatter(x, src, d, start, end)
                            with step 1: the cat of x's rows before start, src and x's rows
                            from end along d (DMA copies into one buffer, as roll's); what
                            functionalisation makes of `x[..., a:b] = y` (Longformer's and
                            LED's sliding chunks, linear attention's chunked states)
    native_batch_norm and its _native_batch_norm_legit forms, in training
                            PyTorch's decompositions (not in core ATen's table): var_mean over
                            the dims but the channels', element-wise ops, the running
                            statistics' update
    _native_batch_norm_legit_no_training, native_batch_norm in inference
                            (x - mean) * rsqrt(var + eps) * weight + bias, each statistic
                            viewed at the channels' broadcast shape (1, C, 1, ...) before any
                            arithmetic: rsqrt(var + eps) is then computed one element per stick
                            (a splat), which x's scaling broadcasts along the stick dim (from
                            var's (C,) sticks it would need a relayout the device lacks)
    nll_loss_forward        PyTorch's decomposition (a gather along at most 16 classes)
    _batch_norm_with_update_functional
                            PyTorch's decomposition (a batch norm in training)
    _cdist_forward          the p-norm of the broadcast differences along the last dim
    prod(x, dim), cumprod, cumsum
                            along dims of at most 16 elements: products (sums) of slices (a
                            pointwise chain in float32), the prefixes joined for cumprod and cumsum
    cumsum(x, dim)          along a longer dim of at most CUMSUM_MATMUL_MAX elements: x (that dim
                            moved last) times the upper triangle of ones (a host mask), so the
                            PT sums each prefix in float32 and rounds it once (the gated delta
                            rule's log decays over a 64-token chunk, Mamba's)
    gather(x, d, index)     along a dim of at most 16 elements: where(index == j, x's slice j, ...)
                            over the slices (the dim moved first: slices of the stick dim would
                            split sticks), the masks host work: an exact selection (an index out
                            of range picks the last slice, where PyTorch raises on the CPU)
    sum(x, dims)            over dims other than the last whose extents multiply to at most 16:
                            adds of the slices along them (the device reduces along the stick
                            dim only); the same sum in another order (fp32 rounding)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import torch

aten = torch.ops.aten


def _roll(x: torch.Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> Any:
    if not dims or len(shifts) != len(dims):  # a roll of the flattened tensor: core ATen's form
        return NotImplemented
    out = x
    for shift, d in zip(shifts, dims):
        length = out.shape[d]
        s = shift % length if length else 0
        if s:
            out = torch.cat([out.narrow(d, length - s, s), out.narrow(d, 0, length - s)], d)
    return out.clone() if out is x else out  # a cat is a new tensor already


TOPK_RANKED = 256
"""The longest dim `topk` is decomposed along (its ranks compare every pair: n * n per row)."""


def _topk(x: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    if not x.is_floating_point() or x.dim() == 0 or x.shape[dim] > TOPK_RANKED:
        return NotImplemented
    d = dim % x.dim()
    n = x.shape[d]
    moved = x.movedim(d, -1)
    a, b = moved.unsqueeze(-1), moved.unsqueeze(-2)  # [..., e, f]: x[e] against x[f]
    position = torch.arange(n, device=x.device)
    beaten = (b > a) if largest else (b < a)
    tied_before = (b == a) & (position < position.unsqueeze(-1))
    rank = (beaten | tied_before).sum(-1)  # [..., e]: the place of x[e] in the order
    hot = rank.unsqueeze(-2) == torch.arange(k, device=x.device).unsqueeze(-1)  # [..., j, e]
    indices = (hot * position).sum(-1)
    values = torch.where(hot, moved.unsqueeze(-2), torch.zeros((), dtype=x.dtype, device=x.device)).sum(-1)
    return values.movedim(-1, d), indices.movedim(-1, d)


DENSE_EXPERTS_MAX = 8
"""The most experts `grouped_mm_fallback` runs densely (every row through every expert): 8
(Mixtral's) costs 8 times the grouped form's multiply-adds; beyond it the op stays one op, on
the CPU (warned), rather than cost more (Qwen3-MoE-30B's 128 experts: 128 times)."""


def _grouped_mm(a: torch.Tensor, w: torch.Tensor, offs: torch.Tensor) -> Any:
    if a.dim() != 2 or w.dim() != 3 or not a.is_floating_point() or w.shape[0] > DENSE_EXPERTS_MAX:
        return NotImplemented
    experts = w.shape[0]
    every = torch.bmm(a.expand(experts, *a.shape), w)  # (E, S, N): every row through every expert
    products = [every[e] for e in range(experts)]
    rows = torch.arange(a.shape[0], device=a.device)
    out = torch.zeros((), dtype=a.dtype, device=a.device)  # rows past offs[-1] stay 0, as the op leaves them
    for e in range(experts - 1, -1, -1):
        start = offs[e - 1] if e else torch.zeros((), dtype=offs.dtype, device=offs.device)
        group = ((rows >= start) & (rows < offs[e])).unsqueeze(-1)
        out = torch.where(group, products[e], out)
    return out.expand(a.shape[0], w.shape[2]).clone() if out.dim() == 0 else out


SUMMED_SLICES = 16
"""The most slices `sum` over dims other than the last is unrolled into (adds of slices)."""


def _sum(x: torch.Tensor, dims: Sequence[int] | None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    if dtype is not None or not dims or not x.is_floating_point() or x.dim() < 2:
        return NotImplemented
    reduced = sorted({d % x.dim() for d in dims})
    if x.dim() - 1 in reduced or math.prod(x.shape[d] for d in reduced) > SUMMED_SLICES:
        return NotImplemented
    if any(x.shape[d] == 0 for d in reduced):
        return NotImplemented
    acc = x
    for d in reduced:
        total = acc.narrow(d, 0, 1)
        for i in range(1, acc.shape[d]):
            total = total + acc.narrow(d, i, 1)
        acc = total
    return acc if keepdim else acc.squeeze(reduced)


def _prod(x: torch.Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """prod along a dim (every dim for None) of at most SUMMED_SLICES elements, as products of
    its slices (the dim moved first: slices of the stick dim would split sticks): one
    pointwise chain, its intermediates in float32."""
    if dtype is not None and dtype != x.dtype or not x.is_floating_point() or x.numel() == 0 or x.dim() == 0:
        return NotImplemented
    dims = list(range(x.dim())) if dim is None else [dim % x.dim()]
    if any(x.shape[d] > SUMMED_SLICES for d in dims):
        return NotImplemented
    acc = x
    for d in dims:
        rows = acc.movedim(d, 0)
        total = rows[0:1]
        for i in range(1, rows.shape[0]):
            total = total * rows[i : i + 1]
        acc = total.movedim(0, d)
    if dim is None:
        return acc.reshape(())
    return acc if keepdim else acc.squeeze(dims)


def _cumulative(combine: Any) -> Any:
    """cumsum / cumprod (`combine`: add / mul) along a dim of at most SUMMED_SLICES elements
    (moved first, as for prod): each prefix the one before combined with the next slice, joined
    (a cat); of a 0-d tensor, the tensor."""

    def decomposed(x: torch.Tensor, dim: int, *, dtype: Any = None) -> Any:
        if dtype is not None and dtype != x.dtype or not x.is_floating_point() or x.numel() == 0:
            return NotImplemented
        if x.dim() == 0:
            return x.clone()
        d = dim % x.dim()
        if x.shape[d] > SUMMED_SLICES:
            return NotImplemented
        rows = x.movedim(d, 0)
        prefixes = [rows[0:1]]
        for i in range(1, rows.shape[0]):
            prefixes.append(combine(prefixes[-1], rows[i : i + 1]))
        return torch.cat(prefixes, 0).movedim(0, d)

    return decomposed


CUMSUM_MATMUL_MAX = 1024
"""The longest dim a cumsum is a matmul along: its mask of ones is n x n (2 MiB in DL16 at 1024)."""


def _cumsum(x: torch.Tensor, dim: int, *, dtype: Any = None) -> Any:
    out = _cumulative(torch.add)(x, dim, dtype=dtype)
    if out is not NotImplemented or dtype is not None and dtype != x.dtype:
        return out
    if not x.is_floating_point() or x.dim() == 0 or x.numel() == 0 or x.shape[dim] > CUMSUM_MATMUL_MAX:
        return NotImplemented
    positions = torch.arange(x.shape[dim], device=x.device)
    upper = (positions.unsqueeze(1) <= positions.unsqueeze(0)).to(x.dtype)  # upper[j, k]: j <= k
    return torch.matmul(x.movedim(dim, -1), upper).movedim(-1, dim)


def _gather(x: torch.Tensor, dim: int, index: torch.Tensor, *, sparse_grad: bool = False) -> Any:
    """gather(x, d, index) along a dim of at most SUMMED_SLICES elements: x's slices along d (cut
    to index's extents on the other dims) chosen by host masks, where(index == j, x_j, ...) (an
    exact selection: the device computes no value)."""
    if not x.is_floating_point() or x.dim() == 0 or index.dim() != x.dim() or index.numel() == 0:
        return NotImplemented
    d = dim % x.dim()
    n = x.shape[d]
    if n == 0 or n > SUMMED_SLICES or any(index.shape[m] > x.shape[m] for m in range(x.dim()) if m != d):
        return NotImplemented
    if x.dim() == 1:  # slices of the stick dim would hold one element per stick: a column instead
        return _gather(x.unsqueeze(1), 0, index.unsqueeze(1)).squeeze(1)
    if d == x.dim() - 1:  # the same, its slices along the first dim
        return _gather(x.movedim(d, 0), 0, index.movedim(d, 0)).movedim(0, d)
    cut = x
    for m in range(x.dim()):
        if m != d and index.shape[m] < x.shape[m]:
            cut = cut.narrow(m, 0, index.shape[m])
    out = cut.narrow(d, n - 1, 1).expand(index.shape)
    for j in range(n - 2, -1, -1):
        out = torch.where(index == j, cut.narrow(d, j, 1), out)
    return out if n > 1 else out.clone()


def _avg_pool2d(
    x: torch.Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Any:
    kh, kw = (list(kernel_size) * 2)[:2]
    sh, sw = (list(stride or kernel_size) * 2)[:2]
    ph, pw = (list(padding) * 2)[:2]
    h, w = x.shape[-2], x.shape[-1]
    if ceil_mode and ((h + 2 * ph - kh) % sh or (w + 2 * pw - kw) % sw):
        return NotImplemented  # a last window past the end: its own count
    if (ph or pw) and not count_include_pad and divisor_override is None:
        return NotImplemented  # windows over the padding count fewer elements
    if not x.is_floating_point() or x.dim() not in (3, 4) or x.numel() == 0:
        return NotImplemented
    batched = x if x.dim() == 4 else x.unsqueeze(0)
    channels = batched.shape[1]
    ones = torch.ones(channels, 1, kh, kw, dtype=x.dtype, device=x.device)
    sums = aten.convolution(batched, ones, None, [sh, sw], [ph, pw], [1, 1], False, [0, 0], channels)
    out = sums * (1.0 / (divisor_override or kh * kw))
    return out if x.dim() == 4 else out.squeeze(0)


def _slice_scatter(
    x: torch.Tensor, src: torch.Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Any:
    n = x.shape[dim]
    first = 0 if start is None else max(0, min(start + n if start < 0 else start, n))
    last = n if end is None else max(0, min(end + n if end < 0 else end, n))
    if step != 1 or last <= first:
        return NotImplemented
    pieces = [p for p in (x.narrow(dim, 0, first), src, x.narrow(dim, last, n - last)) if p.shape[dim] > 0]
    return torch.cat(pieces, dim) if len(pieces) > 1 else src.clone()


def _addbmm(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *, beta: Any = 1, alpha: Any = 1) -> Any:
    if not batch1.is_floating_point():
        return NotImplemented
    summed = torch.bmm(batch1, batch2).sum(0)
    return summed * alpha + self * beta if beta != 0 else summed * alpha


def _adaptive_avg_pool2d(x: torch.Tensor, output_size: Sequence[int]) -> Any:
    h, w = x.shape[-2], x.shape[-1]
    oh, ow = output_size
    if not oh or not ow or h % oh or w % ow:
        return NotImplemented  # windows of unequal sizes
    return _avg_pool2d(x, [h // oh, w // ow], [h // oh, w // ow])


_BATCH_NORMS = (
    aten.native_batch_norm.default,
    aten._native_batch_norm_legit_functional.default,
    aten._native_batch_norm_legit.no_stats,
)


def _pytorch_decomposition(op: Any) -> Any:
    """PyTorch's decomposition of a batch norm in training (the batch's statistics, reductions
    the device takes); native_batch_norm in inference is `_batch_norm_inference`, the other
    forms' inference stays one op."""
    from torch._decomp import decomposition_table

    decompose = decomposition_table[op]

    def by_mode(*args: Any, **kwargs: Any) -> Any:
        training = kwargs.get("training", args[5] if op is not aten._native_batch_norm_legit.no_stats else args[3])
        if training:
            return decompose(*args, **kwargs)
        if op is aten.native_batch_norm.default:
            x, weight, bias, running_mean, running_var, _, momentum, eps = args
            if running_mean is not None and running_var is not None:
                return _batch_norm_inference(x, weight, bias, running_mean, running_var, momentum, eps)
        return NotImplemented

    return by_mode


def _batch_norm_inference(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    running_mean: torch.Tensor,
    running_var: torch.Tensor,
    momentum: float,
    eps: float,
) -> Any:
    """A batch norm by its running statistics, the statistics viewed at the channels' broadcast
    shape first (the module docstring says why); no saved statistics (empty, as PyTorch's)."""
    shape = [1, -1] + [1] * (x.dim() - 2)
    out = (x - running_mean.view(shape)) * torch.rsqrt(running_var.view(shape) + eps)
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    return out, x.new_empty(0), x.new_empty(0)


def _batch_norm_with_update(*args: Any, **kwargs: Any) -> Any:
    """PyTorch's decomposition of a batch norm that updates its running statistics (training
    always), as native_batch_norm's in training."""
    from torch._decomp import decomposition_table

    return decomposition_table[aten._batch_norm_with_update_functional.default](*args, **kwargs)


def _cdist(x1: torch.Tensor, x2: torch.Tensor, p: float, compute_mode: int | None = None) -> Any:
    """cdist as the p-norm of the broadcast differences along the last dim: (sum |x1_i - x2_j|^p)^(1/p);
    p = 0 counts the nonzero differences, p = inf takes the largest."""
    if not x1.is_floating_point() or x1.dim() < 2 or x1.numel() == 0 or x2.numel() == 0:
        return NotImplemented
    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (diff != 0).to(x1.dtype).sum(-1)
    if p == math.inf:
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    if p == 2:
        return diff.square().sum(-1).sqrt()
    return diff.pow(p).sum(-1).pow(1.0 / p)


def _nll_loss(x: torch.Tensor, target: torch.Tensor, weight: Any, reduction: int, ignore_index: int) -> Any:
    """PyTorch's decomposition of nll_loss (not in core ATen's table): the target's log
    probabilities gathered along the classes (a gather: `_gather`), weighted, reduced; where the
    classes are more than `_gather` takes, the op as it is."""
    from torch._decomp import decomposition_table

    if x.dim() == 0 or x.shape[-1 if x.dim() == 1 else 1] > SUMMED_SLICES:
        return NotImplemented
    return decomposition_table[aten.nll_loss_forward.default](x, target, weight, reduction, ignore_index)


@functools.lru_cache(maxsize=4)
def _core_aten_table(registered_ops: int) -> dict[Any, Any]:
    """PyTorch's core-ATen table for the ops registered now (`registered_ops` of them): building
    it walks every namespace's CompositeImplicitAutograd ops (~35 ms), once per graph otherwise.
    Registrations only grow, so their count keys it; a library loaded later gets a new table."""
    from torch._decomp import core_aten_decompositions

    del registered_ops  # the key
    return dict(core_aten_decompositions())


def decompositions() -> dict[Any, Any]:
    """PyTorch's core-ATen decomposition table with ours in place of its entries."""
    table = dict(_core_aten_table(len(torch._C._dispatch_get_all_op_names())))
    table[aten.roll.default] = _roll
    table[aten.topk.default] = _topk
    table[aten.sum.dim_IntList] = _sum
    table[aten.addbmm.default] = _addbmm
    table[aten.slice_scatter.default] = _slice_scatter
    for norm in _BATCH_NORMS:
        table[norm] = _pytorch_decomposition(norm)
    table[aten.nll_loss_forward.default] = _nll_loss
    table[aten._batch_norm_with_update_functional.default] = _batch_norm_with_update
    table[aten._native_batch_norm_legit_no_training.default] = _batch_norm_inference
    table[aten._cdist_forward.default] = _cdist
    table[aten.prod.default] = _prod
    table[aten.prod.dim_int] = _prod
    table[aten.cumprod.default] = _cumulative(torch.mul)
    table[aten.cumsum.default] = _cumsum
    table[aten.gather.default] = _gather
    table[aten.avg_pool2d.default] = _avg_pool2d
    table[aten._adaptive_avg_pool2d.default] = _adaptive_avg_pool2d
    grouped_mm = getattr(getattr(torch.ops, "transformers", None), "grouped_mm_fallback", None)
    if grouped_mm is not None:  # registered when transformers' MoE integration is imported
        table[grouped_mm.default] = _grouped_mm
    return table
