"""The `spyre` dialect's operations but the kernel: transfers between host and device, compute
(matmul, pointwise, reduce, gather), views (permute, reshape) and relayouts (restickify,
slice, concat, scatter), and the terminator `spyre.yield`. Every op verifies its operands'
layouts (`spyre.attrs.device_layout`) and the shapes its semantics need; `spyre.kernel` is in
`kernel.py`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    NoneAttr,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import IntListAttr, device_layout, is_index_tensor
from spyre_mlir.layout import Layout, LayoutError


def _host_tensor(op: Operation, v: SSAValue, what: str) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType) or t.encoding != NoneAttr():
        raise VerifyException(f"'{op.name}': {what} must be a host tensor (no encoding), got {t}")
    return t


# region Transfers


class GatherTableReader(ABC):
    """An op that may read an operand only as a table whose rows gathers pick
    (`ToDeviceOp.gather_table`): `spyre_isa.launch`, whose program says how it reads each input."""

    @abstractmethod
    def reads_only_as_table(self, operand: int) -> bool:
        """Whether the op reads its operand `operand` only as rows a gather picks."""


@irdl_op_definition
class ToDeviceOp(IRDLOperation):
    """Copy a host tensor into device memory in the result's layout.

    y = reshape(permute(x, permutation), result.shape)   # optional, free on the host
    for c in device coords of y:            # one DMA descriptor loop nest on the real runtime
        dev[c] = round_to_device(y.flat[host_offset(c)]) if valid(c) else 0

    `gather_table` (spyre-mark-gather-tables): only gathers read the result, each some rows of
    it (`GatherTableReader`); the host may upload the rows as the gathers read them, the bits
    the gathers see the same.
    """

    name = "spyre.to_device"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    permutation = opt_prop_def(IntListAttr)
    gather_table = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = "$input (`permutation` $permutation^)? (`gather_table` $gather_table^)? attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: TensorType, permutation: Sequence[int] | None = None):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"permutation": IntListAttr(permutation) if permutation is not None else None},
        )

    def verify_(self) -> None:
        src = _host_tensor(self, self.input, "the input")
        device_layout(self.result.type, "'spyre.to_device': the result")
        shape = src.get_shape()
        if self.permutation is not None:
            perm = self.permutation.as_tuple()
            if sorted(perm) != list(range(len(shape))):
                raise VerifyException(f"'spyre.to_device': {list(perm)} is not a permutation of rank {len(shape)}")
            shape = tuple(shape[p] for p in perm)
        res = self.result.type
        assert isinstance(res, TensorType)
        if math.prod(res.get_shape()) != math.prod(shape):
            raise VerifyException(
                f"'spyre.to_device': result shape {res.get_shape()} does not hold the {math.prod(shape)} elements of {shape}"
            )
        if self.gather_table is not None:
            if self.permutation is not None:
                raise VerifyException("'spyre.to_device': a gather_table is uploaded as it is, with no permutation")
            if not only_gathered(self):
                raise VerifyException(
                    "'spyre.to_device': gather_table, but its result is read other than as the table of gathers"
                )


def only_gathered(op: ToDeviceOp) -> bool:
    """Whether only gathers read the result of `op`: it has readers, each a `GatherTableReader`
    that reads it only as a gather's table."""
    uses = op.result.uses
    return bool(uses) and all(
        isinstance(u.operation, GatherTableReader) and u.operation.reads_only_as_table(u.index) for u in uses
    )


@irdl_op_definition
class FromDeviceOp(IRDLOperation):
    """Copy a device tensor back to host memory, in the host element type.

    for c in device coords of x where valid(c):
        y.flat[host_offset(c)] = convert(dev[c], y.element_type)
    """

    name = "spyre.from_device"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    mirror = opt_prop_def(UnitAttr)
    """The new contents of a function argument the device keeps (a KV cache written in place):
    the host copy that keeps the caller's tensor equal to the device's, which the card would not
    make (the tensor would live on the device alone). Not a transfer: no link time is charged."""
    traits = traits_def(Pure())
    assembly_format = "(`mirror` $mirror^)? $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: TensorType, mirror: bool = False):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"mirror": UnitAttr()} if mirror else {}
        )

    def verify_(self) -> None:
        device_layout(self.input.type, "'spyre.from_device': the input")
        res = _host_tensor(self, self.result, "the result")
        src = self.input.type
        assert isinstance(src, TensorType)
        if res.get_shape() != src.get_shape():
            raise VerifyException(
                f"'spyre.from_device': result shape {res.get_shape()} != input shape {src.get_shape()}"
            )


# endregion
# region Compute


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """Batched matrix product on the PT array, fp32 partial sums.

        c[..., m, n] = round(sum_k a[..., m, k] * b[..., k, n])      (products of device values, fp32 sums)

    Layout contract (established by spyre-propagate-layouts): a sticked on K, b and c on N;
    b's padding along K reads as zero.
    """

    name = "spyre.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a, b, c = (
            device_layout(v.type, f"'spyre.matmul': {what}").shape
            for what, v in (("lhs", self.lhs), ("rhs", self.rhs), ("the result", self.result))
        )
        if len(a) < 2 or len(b) != len(a) or len(c) != len(a):
            raise VerifyException(f"'spyre.matmul': operands must have the same rank >= 2, got {a}, {b} -> {c}")
        if a[:-2] != b[:-2] or a[:-2] != c[:-2]:
            raise VerifyException(f"'spyre.matmul': batch dims differ: {a}, {b} -> {c}")
        if a[-1] != b[-2]:
            raise VerifyException(f"'spyre.matmul': contracting dims differ: {a} @ {b}")
        if c[-2:] != (a[-2], b[-1]):
            raise VerifyException(f"'spyre.matmul': result shape {c} != {(*a[:-2], a[-2], b[-1])}")


POINTWISE_BODY_OPS: dict[str, str] = {
    "arith.addf": "add",
    "arith.subf": "sub",
    "arith.mulf": "mul",
    "arith.divf": "div",
    "arith.maximumf": "max",
    "arith.minimumf": "min",
    "arith.negf": "neg",
    "math.exp": "exp",
    "math.erf": "erf",
    "math.tanh": "tanh",
    "math.log": "log",
    "math.sqrt": "sqrt",
    "math.rsqrt": "rsqrt",
    "math.sin": "sin",
    "math.cos": "cos",
    "math.absf": "abs",
    "arith.constant": "constant",
    "arith.cmpf": "cmp",
    "arith.select": "select",
}
"""Scalar ops a `spyre.pointwise` body may hold, and the SFP function each one becomes."""


@irdl_op_definition
class PointwiseOp(IRDLOperation):
    """Element-wise computation on the SFP: the body is a scalar f32 function of the
    inputs' elements, inputs broadcast to the result shape (right-aligned, numpy rules).

        for idx in result.shape:
            r[idx] = round(body(inputs[0][bcast(idx)], inputs[1][bcast(idx)], ...))

    One op with a body (rather than one op per function) so that fusing pointwise chains is
    concatenating bodies; each body op becomes one SFP instruction.
    """

    name = "spyre.pointwise"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result) $body"

    def __init__(self, inputs: Sequence[SSAValue], result_type: Attribute, body: Region):
        super().__init__(operands=[inputs], result_types=[result_type], regions=[body])

    def verify_(self) -> None:
        out = self.result.type
        device_layout(out, "'spyre.pointwise': the result")
        assert isinstance(out, TensorType)
        shape = out.get_shape()
        for i, v in enumerate(self.inputs):
            s = device_layout(v.type, f"'spyre.pointwise': input {i}").shape
            if len(s) > len(shape) or any(a not in (1, b) for a, b in zip(reversed(s), reversed(shape))):
                raise VerifyException(f"'spyre.pointwise': input {i} of shape {s} does not broadcast to {shape}")
        block = self.body.block
        if len(block.args) != len(self.inputs) or any(not isinstance(a.type, Float32Type) for a in block.args):
            raise VerifyException(
                f"'spyre.pointwise': the body takes one f32 argument per input ({len(self.inputs)}), "
                f"got ({', '.join(str(a.type) for a in block.args)})"
            )
        for op in block.ops:
            for v in op.operands:  # the SFP program reads only the inputs and its own results
                owner = v.owner
                if (owner if isinstance(owner, Block) else owner.parent_block()) is not block:
                    what = f"%{v.name_hint}" if v.name_hint else f"a {v.type} value"
                    raise VerifyException(
                        f"'spyre.pointwise': body op '{op.name}' uses {what} defined outside the body"
                    )
            if isinstance(op, YieldOp):
                if len(op.values) != 1 or not isinstance(op.values[0].type, Float32Type):
                    raise VerifyException("'spyre.pointwise': the body must yield exactly one f32")
            elif op.name not in POINTWISE_BODY_OPS:
                raise VerifyException(
                    f"'spyre.pointwise': '{op.name}' has no SFP instruction "
                    f"(supported: {', '.join(sorted(POINTWISE_BODY_OPS))})"
                )
            elif op.name == "arith.cmpf":
                if not all(u.operation.name == "arith.select" and u.index == 0 for u in op.results[0].uses):
                    raise VerifyException(
                        "'spyre.pointwise': an arith.cmpf may only feed the condition of arith.select"
                    )
                rhs = op.operands[1].owner
                zero = (
                    isinstance(rhs, arith.ConstantOp) and isinstance(rhs.value, FloatAttr) and rhs.value.value.data == 0
                )
                if not (zero and op.predicate.value.data in (6, 13)):
                    raise VerifyException(
                        "'spyre.pointwise': the SFP selects on (mask != 0): arith.cmpf one/une %mask, 0.0"
                    )
            elif any(not isinstance(r.type, Float32Type) for r in op.results):
                raise VerifyException(f"'spyre.pointwise': body op '{op.name}' must compute f32")
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException("'spyre.pointwise': the body must end with spyre.yield")


REDUCE_KINDS = ("sum", "mean", "max", "min")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce one dim to extent 1 (keepdim), on the SFP.

        r[..., 0, ...] = reduce(kind, x[..., i, ...] for i in range(x.shape[dim]))
                                       kind: sum | mean (sum / n) | max | min

    Along the stick dim the result is a splat (the value in every lane of its stick), ready
    to be broadcast back; padding lanes of the input are masked (0 for sum, -inf for max).
    """

    name = "spyre.reduce"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(StringAttr)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$kind $input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: str, input: SSAValue, dim: int, result_type: Attribute):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"kind": StringAttr(kind), "dim": IntegerAttr(dim, 64)},
        )

    def verify_(self) -> None:
        src = device_layout(self.input.type, "'spyre.reduce': input")
        res = device_layout(self.result.type, "'spyre.reduce': result")
        if self.kind.data not in REDUCE_KINDS:
            raise VerifyException(
                f"'spyre.reduce': kind must be one of {', '.join(REDUCE_KINDS)}, got '{self.kind.data}'"
            )
        d = self.dim.value.data
        if not 0 <= d < len(src.shape):
            raise VerifyException(f"'spyre.reduce': dim {d} is out of range for shape {src.shape}")
        want = tuple(1 if i == d else n for i, n in enumerate(src.shape))
        if res.shape != want:
            raise VerifyException(
                f"'spyre.reduce': result shape {res.shape} != {want} (the reduced dim is kept, extent 1)"
            )


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Rows of a device table picked by host indices (an embedding lookup), by DMA.

        r[i, :] = table[indices.flat[i], :]     (indices: a host integer tensor, any rank)

    The runtime hands the indices to the program at launch, as it patches DDR addresses;
    each row is a strided DMA of its sticks."""

    name = "spyre.gather"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$table `[` $indices `]` attr-dict `:` `(` type($table) `,` type($indices) `)` `->` type($result)"

    def __init__(self, table: SSAValue, indices: SSAValue, result_type: Attribute):
        super().__init__(operands=[table, indices], result_types=[result_type])

    @property
    def row_sticks(self) -> int:
        """The sticks a row of the table spans (what a gather moves per index), whatever the
        table's layout."""
        tab = device_layout(self.table.type)
        return -(-tab.shape[1] // tab.lanes)

    def verify_(self) -> None:
        tab = device_layout(self.table.type, "'spyre.gather': table")
        res = device_layout(self.result.type, "'spyre.gather': result")
        n = _index_count(self, self.indices)
        if len(tab.shape) != 2 or res.shape != (n, tab.shape[1]):
            raise VerifyException(
                f"'spyre.gather': table {tab.shape} and {n} indices give ({n}, {tab.shape[-1]}), not {res.shape}"
            )


# endregion
# region Views and relayout


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """A free transposition: the same device bytes read through permuted coordinates.

        r[i_perm[0], ..., i_perm[n-1]] = x[i_0, ..., i_n-1]       (no data moves)

    The result layout must be exactly `Layout.permuted(permutation)` of the input's.
    """

    name = "spyre.permute"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    permutation = prop_def(IntListAttr)
    traits = traits_def(Pure())
    assembly_format = "$input `permutation` $permutation attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, permutation: Sequence[int], result_type: Attribute):
        super().__init__(
            operands=[input], result_types=[result_type], properties={"permutation": IntListAttr(permutation)}
        )

    def verify_(self) -> None:
        src = device_layout(self.input.type, f"'{self.name}': the input")
        res = device_layout(self.result.type, f"'{self.name}': the result")
        perm = self.permutation.as_tuple()
        if sorted(perm) != list(range(len(src.shape))):
            raise VerifyException(f"'spyre.permute': {list(perm)} is not a permutation of rank {len(src.shape)}")
        expect = src.permuted(perm).canonical()
        if res.canonical() != expect:
            raise VerifyException(
                f"'spyre.permute' is a free view: its result must be {expect.shape} with "
                f"device_size = {list(expect.device_size)}, stride_map = {list(expect.stride_map)}"
            )


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """A free reshape: the same device bytes read with another logical shape.

        r.flat[i] = x.flat[i]     (row-major; no data moves)

    The result layout must place every element where `Layout.reshaped(shape)` of the input's
    does (`Layout.places_like`: its device dims of size 1 may differ); a reshape that would
    move padding or split a stick is not a view (spyre.restickify first).
    """

    name = "spyre.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        src = device_layout(self.input.type, f"'{self.name}': the input")
        res = device_layout(self.result.type, f"'{self.name}': the result")
        try:
            expect = src.reshaped(res.shape)
        except LayoutError as e:
            raise VerifyException(f"'spyre.reshape': {e}") from None
        if expect is None:
            raise VerifyException(
                f"'spyre.reshape': {src.shape} -> {res.shape} is not a free view of this layout "
                f"(it would move padding or split a stick)"
            )
        if not res.places_like(expect):
            raise VerifyException(
                f"'spyre.reshape' is a free view: its result layout must be device_size = "
                f"{list(expect.device_size)}, stride_map = {list(expect.stride_map)}"
            )


@irdl_op_definition
class ScatterOp(IRDLOperation):
    """Rows of a device tensor replaced, at host indices, by the rows of another (the inverse
    of spyre.gather: a KV-cache update), by DMA:

        r = dest;  r[o, indices.flat[i], :] = values[o, i, :]     (dest (O, L, C), values (O, n, C))

    An index may be negative (it counts from the end, as PyTorch's); one out of [-L, L) is
    refused at launch. The lowering writes the rows into dest's DDR buffer in place (the
    program's output is dest's buffer, `spyre_isa.program ... in_place`): the other rows are
    neither read nor copied, so nothing may read dest after the scatter. Repeated indices: one
    of their rows is written, the same one on every run (PyTorch leaves which undefined)."""

    name = "spyre.scatter"
    dest = operand_def(TensorType)
    indices = operand_def(TensorType)
    values = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$dest `[` $indices `]` `=` $values attr-dict `:` `(` type($dest) `,` type($indices) `,` type($values) `)` "
        "`->` type($result)"
    )

    def __init__(self, dest: SSAValue, indices: SSAValue, values: SSAValue):
        super().__init__(operands=[dest, indices, values], result_types=[dest.type])

    def verify_(self) -> None:
        dst = device_layout(self.dest.type, "'spyre.scatter': dest")
        val = device_layout(self.values.type, "'spyre.scatter': values")
        if self.result.type != self.dest.type:
            raise VerifyException(
                f"'spyre.scatter': the result is dest's buffer, so its type must be dest's {self.dest.type}, "
                f"got {self.result.type}"
            )
        n = _index_count(self, self.indices)
        if len(dst.shape) != 3 or val.shape != (dst.shape[0], n, dst.shape[2]):
            raise VerifyException(
                f"'spyre.scatter': dest (O, L, C) {dst.shape} and {n} indices take values "
                f"{(dst.shape[0], n, dst.shape[2]) if len(dst.shape) == 3 else '(O, n, C)'}, got {val.shape}"
            )
        if not rows_by_strides(dst):
            raise VerifyException(
                f"'spyre.scatter': dest {dst.describe()}: the scatter writes the rows in place, so each of "
                "O, L and C's sticks must step by one stick stride, with C along the sticks"
            )


def rows_by_strides(layout: Layout) -> bool:
    """Whether a 3-D (O, L, C) layout holds C along its sticks (C of one element: any stick
    dim, or none) and steps each dim (C by sticks) by one stick stride, as a scatter reads and
    writes rows (Layout.dim_stick_steps)."""
    if len(layout.shape) != 3 or not (layout.stick_dim == 2 or (layout.shape[2] == 1 and layout.stick_dim is None)):
        return False
    return layout.dim_stick_steps() is not None


def table_rows(layout: Layout) -> tuple[int, int] | None:
    """(row step, stick step) in sticks of a 2-D gather table (R, C) whose rows a gather reads
    as they are: C along the sticks, each dim stepped by one stick stride (the generic layout,
    or a view of another tensor's, such as a paged KV cache's rows of pages). None otherwise."""
    if len(layout.shape) != 2 or layout.stick_dim != 1:
        return None
    steps = layout.dim_stick_steps()
    return None if steps is None else (steps[0], steps[1])


def _index_count(op: Operation, indices: SSAValue) -> int:
    """The number of indices of a gather or scatter, whose indices must be a host integer tensor."""
    if not is_index_tensor(indices.type):
        raise VerifyException(f"'{op.name}': indices must be a host integer tensor, got {indices.type}")
    assert isinstance(indices.type, TensorType)  # is_index_tensor
    return math.prod(indices.type.get_shape())


@irdl_op_definition
class SliceOp(IRDLOperation):
    """A box of a tensor, copied, with an optional step (>= 1) per dim:

        r[i0, i1, ...] = x[start0 + i0 * step0, start1 + i1 * step1, ...]

    The start along the input's stick dim must be a multiple of the stick (64) and the step
    along it 1: the copy moves whole sticks (a step along another dim strides the DMA)."""

    name = "spyre.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    start = prop_def(IntListAttr)
    step = opt_prop_def(IntListAttr)
    traits = traits_def(Pure())
    assembly_format = "$input `start` $start (`step` $step^)? attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue, start: Sequence[int], result_type: Attribute, step: Sequence[int] | None = None
    ):
        props: dict[str, Attribute] = {"start": IntListAttr(start)}
        if step is not None and any(s != 1 for s in step):
            props["step"] = IntListAttr(step)
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    @property
    def steps(self) -> tuple[int, ...]:
        """The step per dim (1 where none is given)."""
        return self.step.as_tuple() if self.step is not None else (1,) * len(self.start.as_tuple())

    def verify_(self) -> None:
        src = device_layout(self.input.type, "'spyre.slice': input")
        res = device_layout(self.result.type, "'spyre.slice': result")
        start = self.start.as_tuple()
        if len(start) != len(src.shape) or len(res.shape) != len(src.shape):
            raise VerifyException(
                f"'spyre.slice': start {list(start)} and result {res.shape} must have the rank of {src.shape}"
            )
        step = self.steps
        if len(step) != len(start):
            raise VerifyException(f"'spyre.slice': step {list(step)} must have the rank of {src.shape}")
        if any(k < 1 for k in step):
            raise VerifyException(f"'spyre.slice': step {list(step)} must be >= 1 along every dim")
        if any(s < 0 or s + (n - 1) * k >= m for s, n, k, m in zip(start, res.shape, step, src.shape)):
            raise VerifyException(
                f"'spyre.slice': the box at {list(start)} of size {res.shape}"
                + (f" with step {list(step)}" if self.step is not None else "")
                + f" leaves {src.shape}"
            )
        h = src.stick_dim
        if h is not None and start[h] % src.lanes:
            raise VerifyException(
                f"'spyre.slice': start {start[h]} along the stick dim {h} is not a multiple of {src.lanes}"
            )
        if h is not None and step[h] != 1 and res.shape[h] > 1:
            raise VerifyException(
                f"'spyre.slice': step {step[h]} along the stick dim {h}: the copy moves whole sticks, "
                f"so the step along the stick dim must be 1"
            )


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """Tensors joined along one dim, copied (torch.cat):

        r[..., o_k + i, ...] = inputs[k][..., i, ...]     o_k = the extents of inputs[:k] along dim

    The result is in the generic layout, and so are the inputs when it is lowered
    (spyre-propagate-layouts restickifies them); along the stick dim every input but
    the last holds whole sticks (an extent that is a multiple of 64), so that each copy moves
    whole sticks to a stick boundary (a cat of smaller pieces of the stick dim is transposed to
    another dim first)."""

    name = "spyre.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())
    assembly_format = "$inputs `dim` $dim attr-dict `:` `(` type($inputs) `)` `->` type($result)"

    def __init__(self, inputs: Sequence[SSAValue], dim: int, result_type: Attribute):
        super().__init__(operands=[list(inputs)], result_types=[result_type], properties={"dim": IntegerAttr(dim, 64)})

    def offsets(self) -> list[int]:
        """Where each input starts along `dim` in the result."""
        d, out, at = self.dim.value.data, [], 0
        for v in self.inputs:
            out.append(at)
            at += device_layout(v.type).shape[d]
        return out

    def verify_(self) -> None:
        res = device_layout(self.result.type, "'spyre.concat': result")
        srcs = [device_layout(v.type, f"'spyre.concat': input {i}") for i, v in enumerate(self.inputs)]
        d = self.dim.value.data
        if not srcs:
            raise VerifyException("'spyre.concat': needs at least one input")
        if not 0 <= d < len(res.shape):
            raise VerifyException(f"'spyre.concat': dim {d} is out of range for the result {res.shape}")
        for i, src in enumerate(srcs):
            if len(src.shape) != len(res.shape) or any(
                a != b for j, (a, b) in enumerate(zip(src.shape, res.shape)) if j != d
            ):
                raise VerifyException(
                    f"'spyre.concat': input {i} {src.shape} differs from the result {res.shape} along a dim other than {d}"
                )
        if sum(src.shape[d] for src in srcs) != res.shape[d]:
            raise VerifyException(
                f"'spyre.concat': the inputs' extents {[src.shape[d] for src in srcs]} along dim {d} do not sum to "
                f"the result's {res.shape[d]}"
            )
        if res.canonical() != Layout.generic(res.shape, res.element_bytes).canonical():
            raise VerifyException(f"'spyre.concat': the result must be in the generic layout, got {res.describe()}")
        if d == len(res.shape) - 1:
            for i, src in enumerate(srcs[:-1]):
                if src.shape[d] % res.lanes:
                    raise VerifyException(
                        f"'spyre.concat': input {i} holds {src.shape[d]} elements of the stick dim {d}, not whole sticks "
                        f"of {res.lanes}: the next input would start inside a stick"
                    )


@irdl_op_definition
class RestickifyOp(IRDLOperation):
    """Move a tensor into another layout (data moves: DDR -> LX -> shuffle -> DDR).

    for idx in x.shape: r[idx] = x[idx]          (only the placement changes)
    """

    name = "spyre.restickify"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        src = device_layout(self.input.type, f"'{self.name}': the input")
        res = device_layout(self.result.type, f"'{self.name}': the result")
        if src.shape != res.shape:
            raise VerifyException(f"'spyre.restickify': shapes differ: {src.shape} -> {res.shape}")


# endregion
# region Terminator

YIELD_PARENTS = ("spyre.pointwise", "spyre.kernel")
"""The ops `spyre.yield` terminates. Named, not typed as xDSL's HasParent would: `spyre.kernel`
is defined in kernel.py, which imports this module."""


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of `spyre.pointwise` bodies and `spyre.kernel` regions."""

    name = "spyre.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        parent = self.parent_op()
        if parent is not None and parent.name not in YIELD_PARENTS:
            raise VerifyException(
                "'spyre.yield' expects parent op to be one of " + ", ".join(f"'{p}'" for p in YIELD_PARENTS)
            )


# endregion
