"""Indexing, repeats and padding: rows at host indices, copies into offsets."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Operation, SSAValue

from spyre_mlir.analysis.views import transfer_permutation
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.layout import Layout
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.movement import (
    as_column,
    concat,
    filled,
    from_column,
    permute,
    positive_dim,
    swap,
)
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    InconsistentResult,
    NotOnDevice,
    host_tensor_type,
    is_vtensor,
    layout_of,
    scalar_of,
    shape_of,
)


def _host_op(
    host: list[Operation], name: str, operands: Sequence[SSAValue], shape: Sequence[int], dtype: Attribute
) -> SSAValue:
    """A torch op on integer/boolean tensors, appended to `host` (index arithmetic runs on the
    host by design)."""
    op = t.torch_op_class(name).create(operands=list(operands), result_types=[t.ValueTensorType(list(shape), dtype)])
    host.append(op)
    return op.results[0]


def _host_int(host: list[Operation], value: int) -> SSAValue:
    c = t.ConstantIntOp(value)
    host.append(c)
    return c.result


INDEX_TYPES = (IntegerType(64, Signedness.SIGNED), IntegerType(32, Signedness.SIGNED))
"""Element types of index tensors that pick rows (PyTorch's long and int; bool and uint8 are masks)."""


def _row_numbers(host: list[Operation], indices: Sequence[SSAValue], extents: Sequence[int], outer: int) -> SSAValue:
    """Host ops computing the rows of a table (outer * L_0 * ... * L_k-1, C) that index tensors
    i_0 ... i_k-1 pick, for each of the `outer` blocks of L_0 * ... * L_k-1 rows: a tensor
    (outer, B...) (B the indices' broadcast shape; (B...) when outer is 1),

        row[o, b] = o * L_0 * ... * L_k-1 + sum_j w_j[b] * L_j+1 * ... * L_k-1,
        w_j = i_j + L_j if i_j < 0 else i_j          (counted from the end, as in PyTorch)

    and -1 where some w_j is outside [0, L_j) (when that could pick another valid row: k > 1 or
    outer > 1), which the device gather refuses as PyTorch does."""
    zero, one = _host_int(host, 0), _host_int(host, 1)
    guard = len(indices) > 1 or outer > 1
    row: SSAValue | None = None
    bad: SSAValue | None = None
    stride = math.prod(extents)
    picked = _broadcast(*indices)
    for n, (i, extent) in enumerate(zip(indices, extents, strict=True)):
        it = t.vtensor_type(i)
        shape, dtype = it.get_shape(), it.get_dtype()
        assert dtype is not None
        stride //= extent
        bounds = _index_bounds(i)
        others = [v for m, v in enumerate(indices) if m != n]
        if bounds == (0, 0) and others and _broadcast(*others) == picked:
            continue  # all zeros: adds nothing, and the others give the shape
        length = _host_int(host, extent)
        w = i
        if bounds is None or bounds[0] < 0:
            negative = _host_op(host, "torch.aten.lt.Scalar", [i, zero], shape, IntegerType(1))
            wrapped = _host_op(host, "torch.aten.add.Scalar", [i, length, one], shape, dtype)
            w = _host_op(host, "torch.aten.where.self", [negative, wrapped, i], shape, dtype)
        if guard and (bounds is None or not -extent <= bounds[0] <= bounds[1] < extent):
            low = _host_op(host, "torch.aten.lt.Scalar", [w, zero], shape, IntegerType(1))
            high = _host_op(host, "torch.aten.ge.Scalar", [w, length], shape, IntegerType(1))
            out = _host_op(host, "torch.aten.logical_or", [low, high], shape, IntegerType(1))
            if bad is not None:
                out = _host_op(host, "torch.aten.logical_or", [bad, out], _broadcast(bad, out), IntegerType(1))
            bad = out
        term = w if stride == 1 else _host_op(host, "torch.aten.mul.Scalar", [w, _host_int(host, stride)], shape, dtype)
        row = term if row is None else _host_add(host, row, term, one)
    assert row is not None
    if outer > 1:
        picked = t.vtensor_type(row).get_shape()
        offsets_shape = (outer, *(1 for _ in picked))
        step = math.prod(extents)
        offsets = t.ValueTensorLiteralOp(
            DenseIntOrFPElementsAttr.from_list(
                TensorType(INDEX_TYPES[0], offsets_shape), [o * step for o in range(outer)]
            ),
            t.ValueTensorType(offsets_shape, INDEX_TYPES[0]),
        )
        host.append(offsets)
        row = _host_add(host, offsets.result, row, one)
    if bad is not None:
        dtype = t.vtensor_type(row).get_dtype()
        assert dtype is not None  # an index's
        minus_one = _host_int(host, -1)
        row = _host_op(host, "torch.aten.where.ScalarSelf", [bad, minus_one, row], _broadcast(bad, row), dtype)
    return row


_SAME_VALUES = frozenset(
    f"torch.aten.{name}"
    for name in (
        "unsqueeze",
        "view",
        "reshape",
        "_unsafe_view",
        "expand",
        "clone",
        "squeeze.dim",
        "squeeze.dims",
        "permute",
        "slice.Tensor",
        "select.int",
    )
)
"""Ops whose result holds some of their first operand's values (views and copies)."""


def _index_bounds(v: SSAValue) -> tuple[int, int] | None:
    """Bounds (lo, hi) of an integer tensor's values where the graph fixes them: aranges of
    constants, argmax/argmin (positions along a dim), integer literals, and views, copies and
    sums of those; None where it does not."""
    op = v.owner
    if not isinstance(op, Operation):
        return None
    if op.name in ("torch.aten.arange", "torch.aten.arange.start", "torch.aten.arange.start_step"):
        count = {"torch.aten.arange": 1, "torch.aten.arange.start": 2}.get(op.name, 3)
        args = [t.constant_int_value(a) for a in op.operands[:count]]
        if any(a is None for a in args):
            return None
        values = range(*(a for a in args if a is not None))
        if not values:
            return None
        return (values[0], values[-1]) if values.step > 0 else (values[-1], values[0])  # not a walk of every value
    if op.name in ("torch.aten.argmax", "torch.aten.argmin"):
        shape = t.vtensor_type(op.operands[0]).get_shape()
        dim = t.constant_int_value(op.operands[1]) if len(op.operands) > 1 else None
        extent = math.prod(shape) if dim is None else shape[dim % max(len(shape), 1)] if shape else 1
        return (0, extent - 1) if extent > 0 else None
    if op.name in _SAME_VALUES:
        return _index_bounds(op.operands[0])
    if op.name in ("torch.aten.add.Tensor", "torch.aten.add.Scalar"):
        a = _index_bounds(op.operands[0])
        alpha = t.constant_int_value(op.operands[2])
        b = (c, c) if (c := t.constant_int_value(op.operands[1])) is not None else _index_bounds(op.operands[1])
        if a is None or b is None or alpha is None:
            return None
        ends = (b[0] * alpha, b[1] * alpha)
        return (a[0] + min(ends), a[1] + max(ends))
    if isinstance(op, t.ValueTensorLiteralOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        literal = [int(x) for x in op.value.get_values()]
        return (min(literal), max(literal)) if literal else None
    return None


def _host_add(host: list[Operation], a: SSAValue, b: SSAValue, one: SSAValue) -> SSAValue:
    """a + b on the host, broadcast (int32 with int64 adds in int64)."""
    dtypes = (t.vtensor_type(a).get_dtype(), t.vtensor_type(b).get_dtype())
    dtype = INDEX_TYPES[0] if INDEX_TYPES[0] in dtypes else dtypes[0]
    assert dtype is not None
    return _host_op(host, "torch.aten.add.Tensor", [a, b, one], _broadcast(a, b), dtype)


def _broadcast(*vs: SSAValue) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(t.vtensor_type(v).get_shape() for v in vs)))


class LowerIndex(Lowering):
    """index.Tensor(x, [None, ..., i_0, ..., i_k-1, ...]) with k >= 1 integer index tensors
    broadcasting together to B, and index_select(x, d, i) (B = (len(i),)): rows of x at host
    indices, by spyre.gather,

        r[a..., b..., c...] = x[a..., i_0[b], ..., i_k-1[b], c...]     (indexed dims adjacent)
        r[b..., a..., c...]                                             (not adjacent, as PyTorch)

    x viewed as a table (A * L_0 * ... * L_k-1, C) of rows of the trailing dims' C elements, for
    the A leading elements a; the host computes the rows (`_row_numbers`); the gathered rows
    (A * |B|, C) are viewed as the result. When the indexed dims end with the stick dim, it is
    first swapped with the dim before them (a free view; the gather's table is restickified,
    a block transpose); indexed dims not adjacent are moved first; rows of single elements
    sharing sticks are gathered as columns (`as_column`)."""

    lowers = {
        "torch.aten.index.Tensor": "spyre.gather: rows at host indices (integer index tensors on any dims; the row numbers computed on the host) of the tensor with the indexed dims moved first, viewed and permuted to the result",
        "torch.aten.index_select": "spyre.gather: rows at host indices along the dim, as index.Tensor",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        shape = tuple(t.vtensor_type(op.operands[0]).get_shape())
        given = self._indices(op, shape)
        dims = sorted(given)
        for j, i in given.items():
            it = t.vtensor_type(i)
            if not it.has_sizes or any(s < 0 for s in it.get_shape()) or it.get_dtype() not in INDEX_TYPES:
                raise NotOnDevice(
                    f"index {j} is {it}, not an int64/int32 tensor of static shape (a boolean or uint8 index is a mask: "
                    "a data-dependent number of rows)"
                )
        try:
            picked = tuple(np.broadcast_shapes(*(t.vtensor_type(given[j]).get_shape() for j in dims)))
        except ValueError:
            raise InconsistentResult("its index tensors do not broadcast together") from None
        if op.name == "torch.aten.index_select":
            picked = (math.prod(picked),)  # a 0-d index keeps the dim, of extent 1
        rank, lead, k = len(shape), dims[0], len(dims)
        x = self.dev(op.operands[0], op)
        ops: list[Operation] = []
        host: list[Operation] = []
        try:
            if dims != list(range(lead, lead + k)):  # B first, then the other dims in order
                rest = [d for d in range(rank) if d not in given]
                out = self._rows(ops, host, permute(ops, x, dims + rest), 0, [given[j] for j in dims], picked)
            elif lead + k < rank or lead == 0:  # rows of the trailing dims (or of single elements)
                out = self._rows(ops, host, x, lead, [given[j] for j in dims], picked)
            else:  # the stick dim indexed: swapped with dim lead - 1, which then holds the rows
                p = lead - 1
                xs = permute(ops, x, swap(rank, p, rank - 1))
                order = [rank - 1, *dims[:-1]]  # the indexed dims as they sit in xs
                out = self._rows(ops, host, xs, p, [given[j] for j in order], picked)
                nb = len(picked)
                # xs's result is (S[:p], B, S[p]): S[p] back before B
                out = permute(ops, out, [*range(p), p + nb, *range(p, p + nb)])
            lay = layout_of(out)
            if len(lay.shape) > 1 and lay.shape[-1] == 1 and not (lay.is_sparse or lay.is_splat):
                raise NotOnDevice(
                    f"a {lay.shape} result whose elements would sit along the sticks of dim {lay.stick_dim}: its "
                    "readers take one element per stick, and no device relayout puts them there yet"
                )
        except NotOnDevice:
            for dead in reversed([*host, *ops]):
                dead.erase(safe_erase=False)  # the indices' uses go with them
            raise
        return [*host, *ops], out  # the index arithmetic first: the device ops read its rows

    def _rows(
        self,
        ops: list[Operation],
        host: list[Operation],
        x: SSAValue,
        lead: int,
        indices: Sequence[SSAValue],
        picked: tuple[int, ...],
    ) -> SSAValue:
        """x[a..., i_0[b], ..., i_k-1[b], c...] for indexed dims lead ... lead + k - 1 of x:
        (S[:lead], B, S[lead + k:])."""
        shape, k = shape_of(x), len(indices)
        outer, extents, trailing = shape[:lead], shape[lead : lead + k], shape[lead + k :]
        rows, cols = math.prod(outer) * math.prod(extents), math.prod(trailing)
        n = math.prod(outer) * math.prod(picked)
        table, columns = self._table(ops, x, rows, cols)
        row = _row_numbers(host, indices, extents, math.prod(outer))
        cast = UnrealizedConversionCastOp.get([row], [host_tensor_type(row.type, host[-1])])
        host.append(cast)
        g = spyre.GatherOp(table, cast.results[0], spyre.device_tensor_type((n, shape_of(table)[1])))
        ops.append(g)
        got = from_column(ops, g.result) if columns else g.result
        return self.reshape(ops, got, (*outer, *picked, *trailing))

    def _table(self, ops: list[Operation], x: SSAValue, rows: int, cols: int) -> tuple[SSAValue, bool]:
        """x as a gather table (rows, cols) in (or viewed from a transfer into) the generic
        layout; or, when its rows are single elements that share sticks, as two columns of
        `rows` rows (`as_column`), which the second value says."""
        if cols > 1:
            return self.reshape(ops, x, (rows, cols)), False
        trial: list[Operation] = []
        try:
            table = self.reshape(trial, x, (rows, 1))
        except NotOnDevice:
            pass
        else:
            lay = layout_of(table)
            # (one element per stick already, e.g. a reduction's splat viewed: a MoE's routing weights)
            if (
                lay.canonical() == Layout.generic((rows, 1), 2)
                or lay.is_splat
                or transfer_permutation(table) is not None
            ):
                ops.extend(trial)
                return table, False
        return as_column(ops, self.reshape(ops, x, (rows,))), True

    @staticmethod
    def _indices(op: Operation, shape: tuple[int, ...]) -> dict[int, SSAValue]:
        """The index tensors by the dim they index."""
        if op.name == "torch.aten.index_select":
            if not shape:
                raise NotOnDevice("index_select of a 0-d tensor (one element picked or repeated: nothing to gather)")
            d = t.constant_int_value(op.operands[1])
            if d is None:
                raise NotOnDevice("dim is not constant")
            i = op.operands[2]
            if is_vtensor(i) and i.type.has_sizes and len(i.type.get_shape()) > 1:
                raise InconsistentResult("index_select takes a 0-d or 1-d index")
            return {positive_dim(d, shape): i}
        listed = op.operands[1].owner
        if not isinstance(listed, t.PrimListConstructOp):
            raise NotOnDevice("its indices are not a list built in the graph")
        given = {j: e for j, e in enumerate(listed.elements) if not isinstance(e.type, t.NoneType)}
        if not given or len(listed.elements) > len(shape):
            raise InconsistentResult(f"{len(listed.elements)} indices for a tensor of rank {len(shape)}")
        return given


class LowerRepeat(Lowering):
    """repeat(x, r): x tiled r_j times along each dim j (x first viewed with leading 1s to
    len(r) dims): a spyre.concat of r_j copies along each dim with r_j > 1 (`concat`)."""

    lowers = {"torch.aten.repeat": "spyre.concat of the copies along each repeated dim (as cat)"}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        reps = t.constant_list_ints(op.operands[1])
        if reps is None:
            raise NotOnDevice("the repeats are not constant")
        x = self.dev(op.operands[0], op)
        if len(reps) < len(shape_of(x)):
            raise InconsistentResult(f"{len(reps)} repeats for a tensor of rank {len(shape_of(x))}")
        ops: list[Operation] = []
        shape = (1,) * (len(reps) - len(shape_of(x))) + shape_of(x)
        x = self.reshape(ops, x, shape)
        if any(r > 1 for r in reps):
            x = _joinable(x)
        for j, r in enumerate(reps):
            if r > 1:
                shape = (*shape[:j], shape[j] * r, *shape[j + 1 :])
                x = concat(ops, [x] * r, j, shape, costs=self.costs)
        return ops, x


def _joinable(x: SSAValue) -> SSAValue:
    """x, when a concat can read it in the generic layout: a (..., 1) tensor's holds one element
    per stick, and no device relayout moves elements that share sticks there yet."""
    shape, lay = shape_of(x), layout_of(x)
    if shape and shape[-1] == 1 and not (lay.is_sparse or lay.is_splat) and transfer_permutation(x) is None:
        raise NotOnDevice(
            f"a {shape} tensor whose elements sit along the sticks of dim {lay.stick_dim}: a concat reads one "
            "element per stick, and no device relayout puts them there yet"
        )
    return x


class LowerConstantPad(Lowering):
    """constant_pad_nd(x, pad, value), pad = (before, after) per dim from the last dim
    backwards: along each padded dim, a spyre.concat of x between blocks of `value`
    (`filled`)."""

    lowers = {
        "torch.aten.constant_pad_nd": "spyre.concat of the tensor between host-built constant blocks (sent once) along each padded dim; negative padding stays on the host"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        pads = t.constant_list_ints(op.operands[1])
        if pads is None:
            raise NotOnDevice("the padding is not constant")
        value = scalar_of(op.operands[2], op, "the padding value") if len(op.operands) > 2 else 0.0
        x = self.dev(op.operands[0], op)
        shape = shape_of(x)
        if len(pads) % 2 or len(pads) // 2 > len(shape):
            raise InconsistentResult(f"padding {pads} for a tensor of rank {len(shape)}")
        if any(p < 0 for p in pads):
            raise NotOnDevice(f"negative padding {pads} (a crop) has no device lowering yet")
        ops: list[Operation] = []
        if any(pads):
            x = _joinable(x)
        for j in range(len(pads) // 2):
            dim, before, after = len(shape) - 1 - j, pads[2 * j], pads[2 * j + 1]
            if not before and not after:
                continue
            blocks = [(*shape[:dim], n, *shape[dim + 1 :]) for n in (before, after)]
            pieces = [filled(ops, b, value) if b[dim] else None for b in blocks]
            shape = (*shape[:dim], before + shape[dim] + after, *shape[dim + 1 :])
            x = concat(ops, [v for v in (pieces[0], x, pieces[1]) if v is not None], dim, shape, self.costs)
        return ops, x
