"""Slices, concatenation, reversals, embedding lookups and index_put (a KV-cache update)."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import IntegerType, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue

from spyre_mlir.analysis.sticks import slice_strides
from spyre_mlir.dialects import spyre
from spyre_mlir.dialects import torch as t
from spyre_mlir.lowering.convert_torch_to_spyre.border import Lowering
from spyre_mlir.lowering.convert_torch_to_spyre.movement import (
    as_column,
    concat,
    constant,
    from_column,
    permute,
    positive_dim,
    stick_partner,
    swap,
    to_generic,
)
from spyre_mlir.lowering.convert_torch_to_spyre.utils import (
    InconsistentResult,
    NotOnDevice,
    is_int,
    is_vtensor,
    layout_of,
    result_shape,
    shape_of,
)
from spyre_mlir.target.constants import F16_LANES


class LowerSlice(Lowering):
    """slice.Tensor and select.int: spyre.slice of the box (+ a view dropping the dim); a step
    along a dim other than the stick dim strides the copy."""

    lowers = {
        "torch.aten.slice.Tensor": "spyre.slice (a step strides the copy); along the stick dim with a step or off a stick boundary: transposed to another dim, sliced there and transposed back",
        "torch.aten.select.int": "spyre.slice of one row + spyre.reshape dropping the dim; along the stick dim: transposed to another dim first",
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x = self.dev(op.operands[0], op)
        shape = shape_of(x)
        dim = t.constant_int_value(op.operands[1])
        if dim is None:
            raise NotOnDevice("dim is not constant")
        dim = positive_dim(dim, shape)
        if op.name == "torch.aten.select.int":
            index = t.constant_int_value(op.operands[2])
            if index is None:
                raise NotOnDevice("index is not constant")
            if not -shape[dim] <= index < shape[dim]:
                raise InconsistentResult(f"index {index} is out of range for dim {dim} of {shape}")
            begin, end, step = index % shape[dim], index % shape[dim] + 1, 1
        else:
            begin_v, end_v, step_v = (
                t.constant_int_value(v) if not isinstance(v.type, t.NoneType) else None for v in op.operands[2:5]
            )
            step = step_v or 1
            begin = 0 if begin_v is None else min(max(begin_v + shape[dim] if begin_v < 0 else begin_v, 0), shape[dim])
            end = shape[dim] if end_v is None else min(max(end_v + shape[dim] if end_v < 0 else end_v, 0), shape[dim])
        if step < 1:
            raise InconsistentResult(f"step {step} must be positive")
        select_lanes = op.name == "torch.aten.select.int" and len(shape) > 1  # the kept elements sit one per stick
        ops: list[Operation] = []
        out = self._box(ops, op, x, dim, begin, end, step, select_lanes)
        return ops, self.reshape(ops, out, result_shape(op))

    def _box(
        self,
        ops: list[Operation],
        op: Operation,
        x: SSAValue,
        dim: int,
        begin: int,
        end: int,
        step: int,
        select_lanes: bool,
    ) -> SSAValue:
        """x's box [begin, end) by step along dim (the dim kept, extent count)."""
        shape = shape_of(x)
        count = len(range(begin, end, step))
        if count <= 1:
            step = 1  # one element (or none: an empty result stays on the host)
        last = len(shape) - 1
        perm: list[int] | None = None
        if dim == last and shape[dim] > 1 and (step != 1 or begin % F16_LANES or select_lanes):
            # the kept elements change lanes: transpose the stick dim with another dim (a device
            # block transpose), take the rows there with a strided copy, and transpose back
            partner = stick_partner(shape)
            if partner is None:  # one row: sliced as a column (`as_column`)
                col = as_column(ops, x)
                box = (count, *shape_of(col)[1:])
                sl = spyre.SliceOp(
                    col, [begin] + [0] * len(shape), spyre.device_tensor_type(box), [step] + [1] * len(shape)
                )
                ops.append(sl)
                return from_column(ops, sl.result)
            perm = swap(len(shape), partner, last)
            x = permute(ops, x, perm)
            shape, dim = shape_of(x), partner
        box = tuple(count if i == dim else n for i, n in enumerate(shape))
        if box == shape:  # select of an extent-1 dim still drops it (never after the transpose: extent > 1)
            return x
        # a slice reads its input as it is where the input's sticks hold the box's by one
        # stride per loop (a rotary embedding's half of transposed heads), else in the generic
        # layout (spyre-propagate-layouts' rule; the starts are checked against the layout read)
        start = [begin if i == dim else 0 for i in range(len(shape))]
        steps = [step if i == dim else 1 for i in range(len(shape))]
        sl = spyre.SliceOp(x, start, spyre.device_tensor_type(box), steps)
        if slice_strides(sl) is None:
            sl.operands[0] = to_generic(ops, x)
        ops.append(sl)
        return sl.result if perm is None else permute(ops, sl.result, perm)  # a swap undoes itself


FLIP_MAX = 2048
"""The longest dim flip reverses on the device: a product with the n x n reversal costs n^2
multiply-adds per row (n = 2048: 4M)."""


class LowerFlip(Lowering):
    """flip along dims: along the stick dim, the product with the reversal matrix J (J[i, n-1-i]
    = 1: each result element the one product x * 1, exact in the PT's float32 sums); along
    another dim, that dim moved to the stick dim and back (a transpose on the card)."""

    lowers = {"torch.aten.flip": "spyre.matmul with the reversal matrix, along each dim (moved to the stick dim)"}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        dims = t.constant_list_ints(op.operands[1])
        if dims is None:
            raise NotOnDevice("the flipped dims are not constant")
        x = self.dev(op.operands[0], op)
        shape = shape_of(x)
        ops: list[Operation] = []
        for d in sorted({positive_dim(d, shape) for d in dims}):
            if shape[d] == 1:
                continue
            if shape[d] > FLIP_MAX:
                raise NotOnDevice(
                    f"a reversal of {shape[d]} elements (more than {FLIP_MAX}: the product costs n^2 per row)"
                )
            last = len(shape) - 1
            perm = swap(len(shape), d, last)
            moved = x if d == last else to_generic(ops, permute(ops, x, perm))
            x = self._reverse_last(ops, moved)
            if d != last:
                x = permute(ops, x, perm)
        return ops, x

    def _reverse_last(self, ops: list[Operation], x: SSAValue) -> SSAValue:
        shape = shape_of(x)
        n = shape[-1]
        rows = math.prod(shape[:-1])
        flat = self.reshape(ops, x, (rows, n))
        reversal = constant(ops, [1.0 if j == n - 1 - i else 0.0 for i in range(n) for j in range(n)], (n, n))
        mm = spyre.MatmulOp(flat, reversal, spyre.device_tensor_type((rows, n)))
        ops.append(mm)
        return self.reshape(ops, mm.result, shape)


class LowerCat(Lowering):
    """cat: spyre.concat of the non-empty pieces. Along the stick dim, when a piece other than
    the last does not end at a stick boundary, the pieces are transposed to another dim (a
    device block transpose each), joined there and transposed back, as a slice of the stick
    dim is (rotary embeddings' halves of a head)."""

    lowers = {
        "torch.aten.cat": "spyre.concat (DMA copies of each piece to its offset); along the stick dim with a piece ending inside a stick: transposed to another dim, joined there and transposed back"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        listed = op.operands[0].owner
        if not isinstance(listed, t.PrimListConstructOp):
            raise NotOnDevice("the tensors are not a list built in the graph")
        dim_v = t.constant_int_value(op.operands[1]) if len(op.operands) > 1 else 0
        if dim_v is None:
            raise NotOnDevice("dim is not constant")
        shape = result_shape(op)
        dim = positive_dim(dim_v, shape)
        pieces = [
            v
            for v in listed.elements
            if not (isinstance(v.type, t.ValueTensorType) and v.type.has_sizes and 0 in v.type.get_shape())
        ]  # PyTorch skips empty pieces (a 1-d empty tensor of any length among them too)
        if not pieces:
            raise NotOnDevice("every piece is empty")
        xs = [self.dev(v, op) for v in pieces]
        for x in xs:
            if len(shape_of(x)) != len(shape) or any(
                a != b for j, (a, b) in enumerate(zip(shape_of(x), shape)) if j != dim
            ):
                raise InconsistentResult(
                    f"a piece of shape {shape_of(x)} does not fit the result {shape} along dim {dim}"
                )
        if sum(shape_of(x)[dim] for x in xs) != shape[dim]:
            raise InconsistentResult(f"the pieces' extents along dim {dim} do not sum to the result's {shape[dim]}")
        ops: list[Operation] = []
        return ops, concat(ops, xs, dim, shape, costs=self.costs)


class LowerEmbedding(Lowering):
    """embedding(weight, indices): spyre.gather of the rows, then a free view to the shape."""

    lowers = {"torch.aten.embedding": "spyre.gather: row DMAs at indices the host hands over at launch"}

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        weight, indices = op.operands[0], op.operands[1]
        index_type = t.vtensor_type(indices).get_dtype()
        if len(t.vtensor_type(weight).get_shape()) != 2 or not (
            isinstance(index_type, IntegerType) and index_type.width.data > 1
        ):
            raise NotOnDevice("embedding needs a 2-D table and integer indices")
        table = self.dev(weight, op)
        idx = self.border.host_tensor(indices, op)
        n = math.prod(shape_of(idx))
        g = spyre.GatherOp(table, idx, spyre.device_tensor_type((n, shape_of(table)[1])))
        ops: list[Operation] = [g]
        return ops, self.reshape(ops, g.result, result_shape(op))


class LowerIndexPut(Lowering):
    """index_put(x, [None, ..., idx], v) with one 1-D host integer index tensor at dim d, without
    accumulation (a KV-cache update: HF's `index_copy_` at `cache_position`): x seen as
    (O, L, C) (the dims before d, d, the dims after; a free view) and v as (O, n, C), a
    spyre.scatter of v's rows into x's buffer in place. Only where nothing else reads x: the
    scatter writes its buffer."""

    lowers = {
        "torch.aten.index_put": "spyre.scatter: rows at host indices along one dim, written in place into the destination (a KV-cache update); the destination read by nothing else"
    }

    def lower(self, op: Operation) -> tuple[list[Operation], SSAValue]:
        x, index_list, v, accumulate = op.operands
        if not (isinstance(accumulate.owner, t.ConstantBoolOp) and not accumulate.owner.value.value.data):
            raise NotOnDevice("index_put with accumulate (a scatter-add) has no device lowering yet")
        if not isinstance(index_list.owner, t.PrimListConstructOp):
            raise NotOnDevice("its indices are not a list built in the graph")
        indexed = [i for i, e in enumerate(index_list.owner.elements) if not isinstance(e.owner, t.ConstantNoneOp)]
        shape = tuple(t.vtensor_type(x).get_shape())
        if len(indexed) != 1 or not shape:
            raise NotOnDevice("the device scatters rows along one dim (one index tensor, the others None)")
        d = indexed[0]
        index = index_list.owner.elements[d]
        if not is_vtensor(index) or not is_int(index) or len(index.type.get_shape()) != 1:
            raise NotOnDevice("the index is not a 1-D integer tensor")
        n = index.type.get_shape()[0]
        if d == len(shape) - 1:
            raise NotOnDevice("rows along the stick dim (the last) are single elements; the device scatters whole rows")
        rows, given = (*shape[:d], n, *shape[d + 1 :]), tuple(t.vtensor_type(v).get_shape())
        if given != rows and not (math.prod(given) == math.prod(rows) and rows[len(rows) - len(given) :] == given):
            raise NotOnDevice(f"values {given} broadcast to the rows {rows}")  # (leading 1s are a view)
        dest = self._written_in_place(x, op)
        o, length, c = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1 :])
        view = layout_of(dest).reshaped((o, length, c))
        if view is None or not spyre.rows_by_strides(view):
            raise NotOnDevice(
                f"{shape} seen as (O, L, C) = {(o, length, c)} is not a free view of its layout with rows by strides"
            )
        ops: list[Operation] = []
        dest3 = spyre.ReshapeOp(dest, spyre.device_tensor_type((o, length, c), view))
        ops.append(dest3)
        values = self.reshape(ops, self.dev(v, op), (o, n, c))
        sc = spyre.ScatterOp(dest3.result, self.border.host_tensor(index, op), values)
        back = spyre.ReshapeOp(sc.result, dest.type)
        ops += [sc, back]
        return ops, back.result

    def _written_in_place(self, x: SSAValue, op: Operation) -> SSAValue:
        """x's device value, for a write in place: x read by `op` alone, and that value by nothing
        else, nor a view of another value; or x a host-made constant (zeros of a new cache, which
        cse may have made one value for several: the host executor copies a destination a later
        step reads before writing it, `HostProgram.copy_first`)."""
        owner = x.owner
        if isinstance(owner, Operation) and owner.name in t.CREATION_OPS:
            return self.dev(x, op)
        if x.uses.get_length() != 1:
            raise NotOnDevice("its destination is read elsewhere too (the device scatter writes it in place)")
        if isinstance(owner, UnrealizedConversionCastOp) and spyre.is_device_tensor(owner.inputs[0].type):
            dest = owner.inputs[0]
            if dest.uses.get_length() != 1 or isinstance(dest.owner, spyre.PermuteOp | spyre.ReshapeOp):
                raise NotOnDevice("its destination is a view of, or read with, another value (written in place)")
            return dest
        if x in self.border.on_device:
            raise NotOnDevice("its destination is read on the device too (the scatter writes it in place)")
        return self.dev(x, op)
