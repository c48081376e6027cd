"""Convolution: taps as strided slices, matmuls over them."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.movement import concat, filled, permute, to_generic
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    NotOnDevice,
    addf,
    mulf,
    pointwise_append,
    result_shape,
    shape_of,
)
from spyre_mlir.target.constants import F16_LANES


def _pieces(ops: list[Operation], v: SSAValue, count: int) -> list[SSAValue]:
    """v cut into `count` equal slices along dim 0."""
    shape = shape_of(v)
    size = shape[0] // count
    out: list[SSAValue] = []
    for i in range(count):
        sl = spyre.SliceOp(v, [i * size] + [0] * (len(shape) - 1), spyre.device_tensor_type((size, *shape[1:])))
        ops.append(sl)
        out.append(sl.result)
    return out


def _sum_body(*args: SSAValue) -> SSAValue:
    total = args[0]
    for a in args[1:]:
        total = addf(total, a)
    return total


class LowerConvolution(Lowering):
    """convolution (1-d and 2-d; aot_autograd's `aten.convolution` of conv1d/conv2d) as matmuls
    over strided views of the input, channels last (the channels along the sticks, so that every
    tap is a strided copy along non-stick dims: no lane moves):

        x (N, C, *S) -> (G, N, *S, C/G)      one relayout (a host input's transfer lays it out so)
        zero border  -> spyre.concat with host-built zeros (`filled`) along each padded spatial dim
        tap k        -> spyre.slice start k * dilation, step stride: (G, N, *O, C/G), viewed (G, M, C/G)
        y            -> (G, M, C_out/G) viewed back as (N, C_out, *O) (a permute)

    The contraction over the taps, by the channels per group:

        C/G whole sticks, or one tap   im2col: the taps side by side along the contraction (whole
                                       sticks each), one spyre.matmul batched over the groups
        otherwise                      the taps stacked (T * G, M, C/G), one batched spyre.matmul
                                       with the weight (T * G, C/G, C_out/G), summed over the taps:
                                       without groups and with C_out whole sticks a matmul by ones
                                       (1, T) (the sum in fp32), else one spyre.pointwise over the
                                       T slices

    A patch embedding (stride = kernel, no padding or dilation, the image tiled exactly, channels
    not whole sticks, fewer rows of patches than taps) needs no taps: the image seen as
    (C * kh, N * Ho * Wo, kw) is a relayout of it (free in a host input's transfer), one batched
    matmul contracts each patch row (kw) and the sum above adds the C * kh rows. A depthwise
    convolution (groups = C = C_out) has no contraction: one spyre.pointwise of
    sum_k x_k * w_k (+ bias) over the taps and the weight's columns.

    Refused (the op runs on the host): transposed convolutions (each input element scatters
    into several outputs) and 3-d ones."""

    lowers = {
        "torch.aten.convolution": "1-d and 2-d, channels last: each tap a strided spyre.slice (a zero border by spyre.concat), spyre.matmul over the taps side by side or batched per tap and summed, batched over groups; a patch embedding one batched spyre.matmul over a relayout of the image; depthwise one spyre.pointwise multiply-add; transposed and 3-d on the host"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x_v, w_v, b_v, stride_v, padding_v, dilation_v, transposed_v, _, groups_v = op.operands
        transposed = transposed_v.owner
        if not isinstance(transposed, t.ConstantBoolOp):
            raise NotOnDevice("transposed is not a constant")
        if transposed.value.value.data:
            raise NotOnDevice(
                "a transposed convolution: each input element scatters into several outputs, which no device "
                "lowering expresses yet"
            )
        xs, ws = tuple(t.vtensor_type(x_v).get_shape()), tuple(t.vtensor_type(w_v).get_shape())
        spatial = len(xs) - 2
        if spatial not in (1, 2):
            raise NotOnDevice(f"a {spatial}-d convolution: the device lowers 1-d and 2-d ones")
        params: list[tuple[int, ...]] = []
        for what, v in (("stride", stride_v), ("padding", padding_v), ("dilation", dilation_v)):
            values = t.constant_list_ints(v)
            if values is None:
                raise NotOnDevice(f"{what} is not a constant list")
            params.append(tuple(values * spatial if len(values) == 1 else values))
        stride, padding, dilation = params
        groups = t.constant_int_value(groups_v)
        if groups is None:
            raise NotOnDevice("groups is not constant")
        n, c, *s = xs
        c_out, cg, *k = ws
        o = tuple(result_shape(op)[2:])
        bias = None if isinstance(b_v.type, t.NoneType) else b_v
        ops: list[Operation] = []
        if groups == c == c_out and cg == 1:
            y = self._depthwise(ops, op, x_v, w_v, bias, xs, k, o, stride, padding, dilation)
            return ops, permute(ops, y, (0, spatial + 1, *range(1, spatial + 1)))  # (N, *O, C) -> (N, C, *O)
        taps, cog, m = math.prod(k), c_out // groups, n * math.prod(o)
        operands = None
        if (
            groups == 1
            and stride == tuple(k)
            and not any(padding)
            and all(d == 1 for d in dilation)
            and all(si == oi * ki for si, oi, ki in zip(s, o, k))
            and c % F16_LANES
            and math.prod((c, *k[:-1])) < taps
        ):
            trial: list[Operation] = []
            try:
                operands = self._patches(trial, op, x_v, w_v, xs, ws, o)
                ops += trial
            except NotOnDevice:
                operands = None  # the taps below
        if operands is None:
            operands = self._taps(ops, op, x_v, w_v, xs, ws, o, groups, stride, padding, dilation)
        lhs, rhs = operands
        mm = spyre.MatmulOp(lhs, rhs, spyre.device_tensor_type((*shape_of(lhs)[:-1], shape_of(rhs)[-1])))
        ops.append(mm)
        b = None if bias is None else self._laid_out(ops, bias, op, (groups, 1, cog), (0, 1, 2))
        if shape_of(mm.result)[0] != groups:  # taps stacked along the batch
            y = self._sum_taps(ops, mm.result, groups, b)
        else:
            y = mm.result if b is None else pointwise_append(ops, [mm.result, b], (groups, m, cog), addf)
        y = self.reshape(ops, y, (groups, n, *o, cog))
        y = permute(ops, y, (1, 0, spatial + 2, *range(2, spatial + 2)))  # (N, G, C_out/G, *O)
        return ops, self.reshape(ops, y, (n, c_out, *o))

    def _laid_out(
        self,
        ops: list[Operation],
        v: SSAValue,
        op: Operation,
        shape: Sequence[int],
        perm: Sequence[int],
        final: Sequence[int] | None = None,
    ) -> SSAValue:
        """v (a torch value) seen as `shape`, permuted by `perm` and seen as `final` (default: as
        permuted), in the generic layout: a host tensor's transfer lays it out so (the host
        reshapes and permutes on the way in); a device value is reshaped, permuted (a view) and
        restickified where a view needs it."""
        x = self.dev(v, op)
        permuted = tuple(shape[p] for p in perm)
        final = tuple(final or permuted)
        owner = x.owner
        seen = Layout.generic(final, 2).reshaped(permuted)
        if isinstance(owner, spyre.ToDeviceOp) and owner.permutation is None and seen is not None:
            inverse = tuple(list(perm).index(d) for d in range(len(perm)))
            transfer = spyre.ToDeviceOp(owner.input, spyre.device_tensor_type(tuple(shape), seen.permuted(inverse)))
            ops.append(transfer)
            x = transfer.result
        else:
            x = self.reshape(ops, x, shape)
        x = to_generic(ops, permute(ops, x, perm)) if final == permuted else permute(ops, x, perm)
        return to_generic(ops, self.reshape(ops, x, final))

    def _padded(self, ops: list[Operation], x: SSAValue, first: int, padding: Sequence[int]) -> SSAValue:
        """x with a zero border of `padding[d]` along dim first + d (spyre.concat with host zeros)."""
        for d, p in enumerate(padding):
            if p == 0:
                continue
            shape = list(shape_of(x))
            border = filled(ops, tuple(p if i == first + d else e for i, e in enumerate(shape)), 0.0)
            shape[first + d] += 2 * p
            x = concat(ops, [border, x, border], first + d, tuple(shape), costs=self.costs)
        return x

    def _windows(
        self,
        ops: list[Operation],
        x: SSAValue,
        first: int,
        kernel: Sequence[int],
        o: Sequence[int],
        stride: Sequence[int],
        dilation: Sequence[int],
    ) -> list[SSAValue]:
        """Per tap (row-major over the kernel), the strided box of x's spatial dims (from `first`)
        that it reads: start tap * dilation, step stride, extent o."""
        rank = len(shape_of(x))
        out = []
        for tap in itertools.product(*(range(kd) for kd in kernel)):
            start, steps, box = [0] * rank, [1] * rank, list(shape_of(x))
            for d, (i, dl, st, od) in enumerate(zip(tap, dilation, stride, o)):
                start[first + d], steps[first + d], box[first + d] = i * dl, st, od
            if tuple(box) == shape_of(x):
                out.append(x)
                continue
            sl = spyre.SliceOp(x, start, spyre.device_tensor_type(box), steps)
            ops.append(sl)
            out.append(sl.result)
        return out

    def _taps(
        self,
        ops: list[Operation],
        op: Operation,
        x_v: SSAValue,
        w_v: SSAValue,
        xs: Sequence[int],
        ws: Sequence[int],
        o: Sequence[int],
        groups: int,
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
    ) -> tuple[SSAValue, SSAValue]:
        """The matmul operands over the taps: im2col (G, M, T * C/G) and (G, T * C/G, C_out/G), or
        the taps stacked (T * G, M, C/G) and (T * G, C/G, C_out/G)."""
        n, c, *s = xs
        c_out, cg, *k = ws
        spatial, taps, cog, m = len(s), math.prod(k), c_out // groups, n * math.prod(o)
        # x (N, C, *S) seen as (N, G, C/G, *S), permuted to (G, N, *S, C/G)
        x = self._laid_out(ops, x_v, op, (n, groups, cg, *s), (1, 0, *range(3, spatial + 3), 2))
        windows = self._windows(ops, self._padded(ops, x, 2, padding), 2, k, o, stride, dilation)
        # w (C_out, C/G, *K) seen as (G, C_out/G, C/G, *K)
        w_shape = (groups, cog, cg, *k)
        if taps == 1 or cg % F16_LANES == 0:  # whole sticks per tap: side by side along the contraction
            cols = concat(ops, windows, spatial + 2, (groups, n, *o, taps * cg), costs=self.costs)
            w_perm = (0, *range(3, spatial + 3), 2, 1)  # (G, *K, C/G, C_out/G)
            w = self._laid_out(ops, w_v, op, w_shape, w_perm, (groups, taps * cg, cog))
            return self.reshape(ops, cols, (groups, m, taps * cg)), w
        rows = concat(ops, windows, 0, (taps * groups, n, *o, cg), costs=self.costs)
        w_perm = (*range(3, spatial + 3), 0, 2, 1)  # (*K, G, C/G, C_out/G)
        w = self._laid_out(ops, w_v, op, w_shape, w_perm, (taps * groups, cg, cog))
        return self.reshape(ops, rows, (taps * groups, m, cg)), w

    def _patches(
        self,
        ops: list[Operation],
        op: Operation,
        x_v: SSAValue,
        w_v: SSAValue,
        xs: Sequence[int],
        ws: Sequence[int],
        o: Sequence[int],
    ) -> tuple[SSAValue, SSAValue]:
        """The matmul operands of a patch embedding: the image as (C * K[:-1], M, K[-1]) and the
        weight as (C * K[:-1], K[-1], C_out)."""
        n, c, *s = xs
        c_out, _, *k = ws
        spatial = len(s)
        rows, m = math.prod((c, *k[:-1])), n * math.prod(o)
        # x (N, C, *S) seen as (N, C, O0, K0, ...), permuted to (C, K0, .., N, O0, .., K_last)
        tiled = (n, c, *(e for od, kd in zip(o, k) for e in (od, kd)))
        kernel_dims = [3 + 2 * d for d in range(spatial)]
        perm = (1, *kernel_dims[:-1], 0, *(2 + 2 * d for d in range(spatial)), kernel_dims[-1])
        x = self._laid_out(ops, x_v, op, tiled, perm, (rows, m, k[-1]))
        # w (C_out, C, *K) permuted to (C, *K, C_out)
        w = self._laid_out(ops, w_v, op, ws, (*range(1, spatial + 2), 0), (rows, k[-1], c_out))
        return x, w

    def _sum_taps(self, ops: list[Operation], z: SSAValue, groups: int, bias: SSAValue | None) -> SSAValue:
        """z (T * G, M, N) summed over T (+ bias (G, 1, N)): (G, M, N)."""
        tg, m, n = shape_of(z)
        taps = tg // groups
        if groups == 1 and n % F16_LANES == 0:  # rows of whole sticks: a matmul by ones sums them in fp32
            flat = self.reshape(ops, z, (taps, m * n))
            mm = spyre.MatmulOp(filled(ops, (1, taps), 1.0), flat, spyre.device_tensor_type((1, m * n)))
            ops.append(mm)
            y = self.reshape(ops, mm.result, (1, m, n))
            return y if bias is None else pointwise_append(ops, [y, bias], (1, m, n), addf)
        parts = _pieces(ops, z, taps)
        return pointwise_append(ops, [*parts, *([bias] if bias is not None else [])], (groups, m, n), _sum_body)

    def _depthwise(
        self,
        ops: list[Operation],
        op: Operation,
        x_v: SSAValue,
        w_v: SSAValue,
        bias: SSAValue | None,
        xs: Sequence[int],
        k: Sequence[int],
        o: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
    ) -> SSAValue:
        """sum over taps of x_k * w_k (+ bias), channels last: (N, *O, C)."""
        n, c, *s = xs
        spatial, taps = len(s), math.prod(k)
        x = self._laid_out(ops, x_v, op, (n, c, *s), (0, *range(2, spatial + 2), 1))  # (N, *S, C)
        windows = self._windows(ops, self._padded(ops, x, 1, padding), 1, k, o, stride, dilation)
        w = self._laid_out(ops, w_v, op, (c, taps), (1, 0))  # w (C, 1, *K) as (T, C)
        columns = [w] if taps == 1 else _pieces(ops, w, taps)
        extra = [] if bias is None else [self.dev(bias, op)]

        def body(*args: SSAValue) -> SSAValue:
            products = [mulf(a, b) for a, b in zip(args[:taps], args[taps : 2 * taps])]
            return _sum_body(*products, *args[2 * taps :])

        return pointwise_append(ops, [*windows, *columns, *extra], (n, *o, c), body)
