"""The `spyre` dialect: value-semantics tensor programs on the Spyre device.

A device tensor is a builtin tensor whose encoding is a `#spyre.layout`: where each logical
element sits in the device's 128-byte sticks (see `spyre_mlir.layout` for the exact
meaning of `device_size` and `stride_map`). Host tensors carry no encoding. Device tensors
hold 16-bit floats, typed `f16`; the runtime's numerics mode decides their bits (DL16 by
default, IEEE fp16 on request).

    %d = spyre.to_device %x : tensor<100x256xf32> -> tensor<100x256xf16, #spyre.layout<...>>
    %c = spyre.matmul %a, %b : (...) -> tensor<100x512xf16, #spyre.layout<...>>
    %y = spyre.from_device %c : tensor<100x512xf16, #spyre.layout<...>> -> tensor<100x512xf32>

Views (`spyre.permute`, `spyre.reshape`) are free by construction: their result layout
describes the very same device bytes, and their verifiers insist on it. Data moves only in
`spyre.restickify` (same logical tensor, another layout) and in compute ops. After kernel
formation, `spyre.kernel` groups ops into one device program launch and carries its core
split and scratchpad plan.

This file defines; lowering lives in `spyre_mlir.lowering`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre_iteration import Box, IterDim, box_count, core_boxes, restickify_loops, transpose_row_dim
from spyre_mlir.dialects.spyre_marks import (
    MARKS,
    CoreOrderAttr,
    LxBudgetAttr,
    MulticastAttr,
    OnchipAttr,
    ResidentInAttr,
    ResidentOutAttr,
)
from spyre_mlir.layout import (
    Layout,
    LayoutError,
    LoopDim,
    broadcast_dim_map,
    loop_dims,
    loop_strides,
    matrix_strides,
    operand_strides,
)
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES, TRANSPOSE_BLOCK

T = TypeVar("T")

# region Attributes


def _parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


@irdl_attr_definition
class IntListAttr(ParametrizedAttribute):
    """A list of integers printed as `[1, 0]` (permutations, loop sizes, strides)."""

    name = "spyre.ints"
    values: ArrayAttr[IntAttr]

    def __init__(self, values: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(v) for v in values))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return (ArrayAttr(IntAttr(v) for v in _parse_int_list(parser)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("[" + ", ".join(str(v.data) for v in self.values) + "]")

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.values)

    def verify(self) -> None:
        for v in self.values:
            if not -(2**63) <= v.data < 2**63:
                raise VerifyException(f"#spyre.ints: {v.data} in {list(self.as_tuple())} does not fit in 64 bits")


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """`#spyre.layout<device_size = [4, 100, 64], stride_map = [64, 256, 1]>`.

    device_size: the row-major device array; the last dim is the 128-byte stick.
    stride_map:  host elements stepped per device dim (-1: padding/synthetic dim).
    Its meaning for a given logical shape is `spyre_mlir.layout.Layout`.
    """

    name = "spyre.layout"
    device_size: ArrayAttr[IntAttr]
    stride_map: ArrayAttr[IntAttr]

    def __init__(self, device_size: Sequence[int], stride_map: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(v) for v in device_size), ArrayAttr(IntAttr(v) for v in stride_map))

    @staticmethod
    def from_layout(layout: Layout) -> LayoutAttr:
        return LayoutAttr(layout.device_size, layout.stride_map)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("device_size")
            parser.parse_punctuation("=")
            size = _parse_int_list(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("stride_map")
            parser.parse_punctuation("=")
            strides = _parse_int_list(parser)
        return (ArrayAttr(IntAttr(v) for v in size), ArrayAttr(IntAttr(v) for v in strides))

    def print_parameters(self, printer: Printer) -> None:
        size = ", ".join(str(v.data) for v in self.device_size)
        strides = ", ".join(str(v.data) for v in self.stride_map)
        printer.print_string(f"<device_size = [{size}], stride_map = [{strides}]>")

    def verify(self) -> None:
        size = [v.data for v in self.device_size]
        strides = [v.data for v in self.stride_map]
        if len(size) != len(strides):
            raise VerifyException(f"#spyre.layout: device_size has {len(size)} dims but stride_map has {len(strides)}")
        if not size:
            raise VerifyException("#spyre.layout: needs at least the stick dim")
        if any(n < 1 for n in size):
            raise VerifyException(f"#spyre.layout: device_size {size} has a dim < 1")
        if any(s < -1 or s == 0 for s in strides[:-1]) or strides[-1] < -1:
            raise VerifyException(
                f"#spyre.layout: stride_map {strides} has a stride that is neither > 0 nor -1 (0 only on the lane dim: a splat)"
            )

    def layout_for(self, shape: Sequence[int], element_bytes: int) -> Layout:
        return Layout(
            tuple(shape),
            element_bytes,
            tuple(v.data for v in self.device_size),
            tuple(v.data for v in self.stride_map),
        )


@functools.lru_cache(maxsize=1 << 14)
def int_list(values: tuple[int, ...]) -> IntListAttr:
    """IntListAttr(values), built (and verified) once per distinct list: attributes are
    immutable values, and the ISA lowering spells the same sizes and strides many times."""
    return IntListAttr(values)


class _NamedIntsAttr(ParametrizedAttribute):
    """Base of `#spyre.split<m = 4, n = 8>`-style attributes: ordered name = int pairs."""

    names: ArrayAttr[StringAttr]
    values: ArrayAttr[IntAttr]

    def __init__(self, items: dict[str, int] | Sequence[tuple[str, int]]):
        pairs = list(items.items()) if isinstance(items, dict) else list(items)
        super().__init__(ArrayAttr(StringAttr(k) for k, _ in pairs), ArrayAttr(IntAttr(v) for _, v in pairs))

    def as_dict(self) -> dict[str, int]:
        return {k.data: v.data for k, v in zip(self.names, self.values)}

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def item() -> tuple[str, int]:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            return key, parser.parse_integer(allow_boolean=False)

        pairs = parser.parse_comma_separated_list(parser.Delimiter.ANGLE, item)
        return (ArrayAttr(StringAttr(k) for k, _ in pairs), ArrayAttr(IntAttr(v) for _, v in pairs))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + ", ".join(f"{k} = {v}" for k, v in self.as_dict().items()) + ">")

    def verify(self) -> None:
        if len(self.names) != len(self.values):
            raise VerifyException(f"#{self.name}: {len(self.names)} names but {len(self.values)} values")
        keys = [k.data for k in self.names]
        if len(set(keys)) != len(keys):
            raise VerifyException(f"#{self.name}: repeated name in {keys}")


@irdl_attr_definition
class SplitAttr(_NamedIntsAttr):
    """`#spyre.split<m = 4, n = 8>`: parts per iteration dim (divide-work: over cores;
    plan-scratchpad: sequential chunks per core). Every count is >= 1."""

    name = "spyre.split"

    def verify(self) -> None:
        super().verify()
        if any(v.data < 1 for v in self.values):
            raise VerifyException(f"#spyre.split: every count must be >= 1, got {self.as_dict()}")


@irdl_attr_definition
class LxPlanAttr(_NamedIntsAttr):
    """`#spyre.lx<in0 = 0, in1 = 12800, out0 = 25600>`: byte offset of each buffer in every
    core's LX scratchpad (128-byte aligned). Each buffer holds its own sticks for the kernel's
    whole run: the sizes follow from the kernel's split and chunks, so convert-spyre-to-isa,
    not this verifier, checks that buffers lie apart and inside LX."""

    name = "spyre.lx"

    def verify(self) -> None:
        super().verify()
        bad = {k: v for k, v in self.as_dict().items() if v < 0 or v % STICK_BYTES}
        if bad:
            raise VerifyException(f"#spyre.lx: offsets must be >= 0 and {STICK_BYTES}-byte aligned, got {bad}")


# endregion
# region Type helpers

DEVICE_ELEMENT_TYPES = (Float16Type,)
"""Element types a device tensor may hold today (16-bit floats: DL16 or IEEE fp16)."""

NUMERICS_ATTR = "spyre.numerics"
"""A module attribute (a string): the numerics mode ("dl16") the compiled module assumes, set
when a pass relied on it (transforms/spyre_fold_infinity_tests.py); without it the module's
results do not depend on the mode beyond its roundings, and any mode may run it."""

HOST_CONSTANT_ATTR = "spyre.host_constant"
"""A unit attribute of a torch op left on the host: it computes a constant from constants
built from shapes and numbers (set by convert-torch-to-spyre); the host runtime builds it at
the first call and keeps it, as it does the creation ops'."""


def element_bytes(t: Attribute) -> int:
    if isinstance(t, Float16Type):
        return 2
    if isinstance(t, Float32Type):
        return 4
    raise VerifyException(f"no device element size for {t}")


def is_device_tensor(t: Attribute) -> bool:
    return isinstance(t, TensorType) and isinstance(t.encoding, LayoutAttr)


def device_layout(t: Attribute, where: str | None = None) -> Layout:
    """The verified Layout of a device tensor type (raises VerifyException).

    Verifiers pass `where`, the op and value (`'spyre.matmul': lhs`), to prefix the message."""
    layout = _layout_by_id(t)
    if isinstance(layout, str):
        raise VerifyException(f"{where}: {layout}" if where else layout)
    return layout


def by_identity(fn: Callable[..., T], maxsize: int) -> Callable[..., T]:
    """`fn` (a pure function of attributes, itself cached by value) looked up first by its
    arguments' identities: hashing an attribute hashes its parameters recursively (~10 us), and
    analyses ask about the same few thousand values' types hundreds of thousands of times.
    An entry holds its arguments, so no id is reused while it lives; the table is emptied when
    it reaches `maxsize`.

        key = ids of args
        if table[key] holds these very objects: return its result
        table[key] = (args, fn(*args)); return fn(*args)"""
    table: dict[tuple[int, ...], tuple[tuple, T]] = {}

    def lookup(*args: Any) -> T:
        key = tuple(map(id, args))
        hit = table.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], args)):
            return hit[1]
        got = fn(*args)
        if len(table) >= maxsize:
            table.clear()
        table[key] = (args, got)
        return got

    return lookup


@functools.lru_cache(maxsize=1 << 14)
def _layout_of(t: Attribute) -> Layout | str:
    """device_layout without the prefix: the Layout, or why there is none (types are immutable
    values, and the analyses ask for the same few layouts millions of times)."""
    if not is_device_tensor(t):
        return f"expected a device tensor with a #spyre.layout encoding, got {t}"
    assert isinstance(t, TensorType) and isinstance(t.encoding, LayoutAttr)
    if not isinstance(t.element_type, DEVICE_ELEMENT_TYPES):
        return f"device tensors hold f16 (DL16) elements, got {t.element_type} in {t}"
    if not t.has_static_shape():
        return f"device tensors have a static shape, got {t}"
    layout = t.encoding.layout_for(t.get_shape(), element_bytes(t.element_type))
    try:
        layout.verify()
    except LayoutError as e:
        return f"layout of {t} is invalid: {e}"
    return layout


_layout_by_id = by_identity(_layout_of, 1 << 16)


def is_index_tensor(t: Attribute) -> bool:
    """A host tensor of integers (indices the runtime hands to a program at launch)."""
    return isinstance(t, TensorType) and t.encoding == NoneAttr() and isinstance(t.element_type, IntegerType)


def check_kernel_operand(t: Attribute, where: str) -> None:
    """Kernel and program operands: device tensors, or host index tensors."""
    if not is_index_tensor(t):
        device_layout(t, where)


ALIASING_OUTPUT = "spyre.aliasing_output"
"""A function argument's attribute, an i64 k: result k is the argument's new contents (the
graph wrote the argument in place, as `copy_` into a graph input): the caller writes result k
back into the argument, and the device may keep the argument's copy, updated, between calls.
(As MLIR's `tf.aliasing_output`, where the argument's buffer may hold result k.)"""


def aliased_arguments(fn: Operation) -> dict[int, int]:
    """A `func.func`'s mutated arguments: {argument index: result index} (ALIASING_OUTPUT)."""
    arg_attrs = getattr(fn, "arg_attrs", None)
    if arg_attrs is None:
        return {}
    found = {}
    for j, attrs in enumerate(arg_attrs.data):
        k = attrs.data.get(ALIASING_OUTPUT)
        if isinstance(k, IntegerAttr):
            found[j] = k.value.data
    return found


def device_tensor_type(shape: Sequence[int], layout: Layout | None = None) -> TensorType:
    """tensor<shape x f16, #spyre.layout<...>> (generic stick layout unless given)."""
    layout = layout or Layout.generic(tuple(shape), 2)
    return TensorType(Float16Type(), shape, LayoutAttr.from_layout(layout))


def _host_tensor(op: Operation, v: SSAValue, what: str) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType) or t.encoding != NoneAttr():
        raise VerifyException(f"'{op.name}': {what} must be a host tensor (no encoding), got {t}")
    return t


# endregion
# region Transfers


@irdl_op_definition
class ToDeviceOp(IRDLOperation):
    """Copy a host tensor into device memory in the result's layout.

    y = reshape(permute(x, permutation), result.shape)   # optional, free on the host
    for c in device coords of y:            # one DMA descriptor loop nest on the real runtime
        dev[c] = round_to_device(y.flat[host_offset(c)]) if valid(c) else 0
    """

    name = "spyre.to_device"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    permutation = opt_prop_def(IntListAttr)
    traits = traits_def(Pure())
    assembly_format = "$input (`permutation` $permutation^)? attr-dict `:` type($input) `->` type($result)"

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
# region Kernels


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One device program launch: the region's ops run on the cores, reading inputs from
    and writing results to DDR.

        split:  parts per iteration dim over the cores       (spyre-divide-work)
        chunks: sequential chunks per core per dim           (spyre-plan-scratchpad)
        lx:     LX byte offset of each buffer, on every core (spyre-plan-scratchpad)

    Marks (spyre_marks; each verifies itself, and is verified here against the kernel):

        multicast <chain = g>        B tiles passed down chains of g cores (a matmul; an
                                     attention kernel's K^T and V)
                                     (spyre-divide-work, spyre-resident-chains)
        core_order [c0, ...]         box j of the split (core_boxes order) on core c_j: as many
                                     cores as the split has boxes (spyre-resident-chains)
        resident_in <input = i, offset = off>
                                     input i (a matmul's A, or a pointwise kernel's input) read
                                     from LX at byte `off`, where an earlier launch left it
        resident_out <offset = off>  the result (a matmul's or a pointwise kernel's) kept in LX
                                     at byte `off` for a later launch; not stored to DDR
        onchip <...>                 the kernel's one restickify, a 2-D transpose of the generic
                                     layout, done in LX and over the ring; its bands hold every
                                     source row once, its boxes every result stick once
                                     (spyre-onchip-relayout)
        lx_budget <bytes = b>        LX the planner may use; the values resident while the
                                     kernel runs (its own resident_in, resident_out and onchip
                                     areas among them) lie above
    """

    name = "spyre.kernel"
    sym_name = prop_def(StringAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    split = opt_prop_def(SplitAttr)
    chunks = opt_prop_def(SplitAttr)
    lx = opt_prop_def(LxPlanAttr)
    multicast = opt_prop_def(MulticastAttr)
    core_order = opt_prop_def(CoreOrderAttr)
    resident_in = opt_prop_def(ResidentInAttr)
    resident_out = opt_prop_def(ResidentOutAttr)
    onchip = opt_prop_def(OnchipAttr)
    lx_budget = opt_prop_def(LxBudgetAttr)
    traits = traits_def(IsolatedFromAbove())
    assembly_format = (
        "$sym_name `(` $inputs `)` (`split` $split^)? (`chunks` $chunks^)? (`lx` $lx^)? "
        "(`multicast` $multicast^)? (`core_order` $core_order^)? (`resident_in` $resident_in^)? "
        "(`resident_out` $resident_out^)? (`onchip` $onchip^)? (`lx_budget` $lx_budget^)? attr-dict "
        "`:` functional-type($inputs, $outputs) $body"
    )

    def __init__(self, name: str, inputs: Sequence[SSAValue], output_types: Sequence[Attribute], body: Region):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            regions=[body],
            properties={"sym_name": StringAttr(name)},
        )

    @property
    def compute_op(self) -> Operation:
        """The kernel's single compute op (a row group has several: kernel_ops)."""
        ops = [op for op in self.body.block.ops if not isinstance(op, YieldOp | PermuteOp | ReshapeOp)]
        assert len(ops) == 1, f"kernel {self.sym_name.data} holds {len(ops)} compute ops"
        return ops[0]

    def verify_(self) -> None:
        block: Block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"'spyre.kernel' @{self.sym_name.data}: block arguments must match the inputs' types")
        for i, v in enumerate(self.inputs):
            check_kernel_operand(v.type, f"'spyre.kernel' @{self.sym_name.data}: input {i}")
        for i, v in enumerate(self.outputs):
            device_layout(v.type, f"'spyre.kernel' @{self.sym_name.data}: result {i}")
        term = block.last_op
        if not isinstance(term, YieldOp) or [v.type for v in term.values] != [r.type for r in self.outputs]:
            raise VerifyException(
                f"'spyre.kernel' @{self.sym_name.data}: must end with spyre.yield of the result types"
            )
        compute = [
            op
            for op in block.ops
            if isinstance(
                op, MatmulOp | PointwiseOp | ReduceOp | GatherOp | ScatterOp | SliceOp | ConcatOp | RestickifyOp
            )
        ]
        other = [
            op.name
            for op in block.ops
            if not isinstance(
                op,
                MatmulOp
                | PointwiseOp
                | ReduceOp
                | GatherOp
                | ScatterOp
                | SliceOp
                | ConcatOp
                | RestickifyOp
                | PermuteOp
                | ReshapeOp
                | YieldOp,
            )
        ]
        if other or not compute:
            raise VerifyException(
                f"'spyre.kernel' @{self.sym_name.data}: holds one compute op (spyre.matmul, spyre.pointwise, "
                f"spyre.reduce, spyre.gather, spyre.scatter, spyre.slice, spyre.concat or spyre.restickify), a matmul and its pointwise "
                f"epilogue, a concat and slices it reads, a pointwise op and the sliced concats it reads, a row group "
                f"of reductions and pointwise ops, or attention (a matmul, a row group, a matmul), and views; "
                f"found {len(compute)} compute op(s)" + (f" and {', '.join(other)}" if other else "")
            )
        try:
            form = kernel_form(kernel_ops(self))
            dims = form.dims()
        except ValueError as e:  # compute ops the kernel form cannot hold (layouts not established)
            raise VerifyException(f"'spyre.kernel' @{self.sym_name.data}: {e}") from None
        names = [d.name for d in dims]
        owner = form.compute.name if form.compute is not None else "attention" if form.attention else "row group"
        for what, attr in (("split", self.split), ("chunks", self.chunks)):
            if attr is not None and list(attr.as_dict()) != names:
                raise VerifyException(
                    f"'spyre.kernel' @{self.sym_name.data}: {what} names {list(attr.as_dict())} are not the "
                    f"iteration dims {names} of its {owner}"
                )
        self._verify_marks(compute, dims, form)

    def _verify_marks(self, compute: Sequence[Operation], dims: Sequence[IterDim], form: KernelForm) -> None:
        """The marks against the kernel: what each says alone its own verify() checks."""
        where = f"'spyre.kernel' @{self.sym_name.data}"
        for key in self.attributes:
            if key.startswith("spyre."):  # a mark spelled as a discardable attribute would be ignored
                raise VerifyException(
                    f"{where}: {key} is not an attribute of spyre.kernel (its marks are the properties multicast, "
                    "core_order, resident_in, resident_out, onchip and lx_budget)"
                )
        matmul = compute[0] if isinstance(compute[0], MatmulOp) and form.attention is None else None
        pointwise = compute[0] if len(compute) == 1 and isinstance(compute[0], PointwiseOp) else None
        if self.multicast is not None and matmul is None and form.attention is None:
            raise VerifyException(
                f"{where}: multicast passes a matmul's B tiles down the ring, and the kernel has no matmul"
            )
        if self.core_order is not None:
            if self.split is None:
                raise VerifyException(f"{where}: core_order places the boxes of a split, and the kernel has none")
            boxes = box_count(dims, self.split.as_dict())
            if len(self.core_order.cores) != boxes:
                raise VerifyException(
                    f"{where}: core_order names {len(self.core_order.cores)} cores, its split has {boxes} boxes"
                )
        if self.resident_in is not None:
            index = self.resident_in.input.data
            if index >= len(self.inputs):
                raise VerifyException(
                    f"{where}: resident_in names input {index}, the kernel has {len(self.inputs)} inputs"
                )
            if not (pointwise is not None or matmul is not None and self.body.block.args[index] is matmul.lhs):
                raise VerifyException(
                    f"{where}: resident_in: only a matmul's A operand or a pointwise kernel's input is read from LX"
                )
        if self.resident_out is not None:
            if matmul is None and pointwise is None:
                raise VerifyException(
                    f"{where}: resident_out: only a matmul's or a pointwise kernel's result stays in LX"
                )
            if matmul is not None and self.split is not None and self.split.as_dict().get("k", 1) > 1:
                raise VerifyException(f"{where}: resident_out: a matmul split along k cannot keep its result in LX")
        if self.onchip is not None:
            self._verify_onchip(compute)
        if self.lx_budget is not None:
            budget = self.lx_budget.bytes.data
            held = [(key, lo) for key, lo, _ in self.onchip.areas()] if self.onchip is not None else []
            if self.resident_in is not None:
                held.append(("resident_in", self.resident_in.offset.data))
            if self.resident_out is not None:
                held.append(("resident_out", self.resident_out.offset.data))
            for what, at in held:
                if at < budget:
                    raise VerifyException(
                        f"{where}: {what} at LX byte {at} lies below lx_budget {budget}, where the planner places "
                        "the kernel's buffers"
                    )

    def _verify_onchip(self, compute: Sequence[Operation]) -> None:
        """The onchip mark against the kernel's restickify: a 2-D f16 transpose from the generic
        layout's transposed view to the generic layout, whose bands hold every source row once
        and whose boxes hold every result stick once."""
        where = f"'spyre.kernel' @{self.sym_name.data}: onchip"
        mark = self.onchip
        assert mark is not None
        op = compute[0]
        if len(compute) != 1 or not isinstance(op, RestickifyOp):
            raise VerifyException(
                f"{where}: marks a kernel of one restickify, this one has {[o.name for o in compute]}"
            )
        src, dst = device_layout(op.input.type), device_layout(op.result.type)
        if len(dst.shape) != 2 or dst.element_bytes != 2:
            raise VerifyException(f"{where}: the result {dst.describe()} is not a rank-2 f16 tensor")
        cols, rows = dst.shape
        if (
            dst.canonical() != Layout.generic(dst.shape, 2).canonical()
            or src.canonical() != Layout.generic((rows, cols), 2).permuted((1, 0)).canonical()
        ):
            raise VerifyException(
                f"{where}: {src.describe()} to {dst.describe()} is not the generic layout's transposed view to the "
                "generic layout"
            )
        if rows % TRANSPOSE_BLOCK:
            raise VerifyException(f"{where}: the transposed dim ({rows}) is not a multiple of {TRANSPOSE_BLOCK}")
        bands = [list(b) for b in mark.bands]
        for core, (r0, r1) in enumerate(mark.bands):
            if r1 > rows:
                raise VerifyException(
                    f"{where}: src_rows of core {core}, [{r0}, {r1}), runs past the {rows} source rows"
                )
        at = 0
        for r0, r1 in sorted(b for b in mark.bands if b != (0, 0)):
            if r0 != at:
                break
            at = r1
        if at != rows or sum(r1 - r0 for r0, r1 in mark.bands) != rows:
            raise VerifyException(f"{where}: src_rows {bands} do not hold each of the {rows} source rows once")
        sticks = rows // TRANSPOSE_BLOCK
        boxes = [b for b in mark.boxes if b != (0, 0, 0, 0)]
        for core, (s0, s1, c0, c1) in enumerate(mark.boxes):
            if s1 > sticks or c1 > cols:
                raise VerifyException(
                    f"{where}: dst_boxes of core {core}, sticks [{s0}, {s1}) x rows [{c0}, {c1}), is not a box of "
                    f"the result's {sticks} x {cols}"
                )
        overlap = any(
            a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]
            for i, a in enumerate(boxes)
            for b in boxes[i + 1 :]
        )
        if overlap or sum((s1 - s0) * (c1 - c0) for s0, s1, c0, c1 in boxes) != sticks * cols:
            raise VerifyException(
                f"{where}: dst_boxes {[list(b) for b in mark.boxes]} do not hold each of the result's {sticks} x "
                f"{cols} sticks once"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of `spyre.pointwise` bodies and `spyre.kernel` regions."""

    name = "spyre.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure(), HasParent(PointwiseOp, KernelOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


# endregion
# region Iteration spaces: what a kernel's split and chunks name (spyre_iteration)


def kernel_ops(kernel: KernelOp) -> list[Operation]:
    """The compute ops of a kernel, in order (views and the yield excluded)."""
    return [op for op in kernel.body.block.ops if not isinstance(op, YieldOp | PermuteOp | ReshapeOp)]


def single_pointwise(kernel: Operation | None) -> PointwiseOp | None:
    """The pointwise op of a kernel of one compute op that is one (else None): the only kind
    whose lowering keeps its result in LX (resident_out) or reads an operand there
    (resident_in) in spyre-onchip-relayout's bands and boxes."""
    if not isinstance(kernel, KernelOp):
        return None
    ops = kernel_ops(kernel)
    return ops[0] if len(ops) == 1 and isinstance(ops[0], PointwiseOp) else None


@dataclass(frozen=True)
class KernelForm:
    """What a kernel's compute ops are: one op, a matmul and its epilogue, slices and the
    concat that reads them, a row group, or attention (`kernel_form`)."""

    compute: Operation | None
    """The op whose iteration dims the kernel takes and whose lowering it runs (the matmul
    of an epilogue, the concat of sliced parts); None for a row group and for attention."""
    epilogue: Epilogue | None = None
    group: RowGroup | None = None
    attention: Attention | None = None
    sliced_inputs: tuple[int, ...] = ()
    """Of a pointwise compute op, the inputs that are concats of slices in the kernel, each
    read part by part from its slices' inputs (`pointwise_sliced_inputs`)."""

    def dims(self) -> list[IterDim]:
        if self.group is not None:
            return self.group.dims()
        if self.attention is not None:
            return self.attention.dims()
        assert self.compute is not None
        return iteration_dims(self.compute)


def kernel_form(ops: Sequence[Operation]) -> KernelForm:
    """The form of a kernel's compute ops (`kernel_ops`), or ValueError saying why they form
    none."""
    if len(ops) == 1:
        return KernelForm(ops[0])
    matmul_last = isinstance(ops[-1], MatmulOp) or isinstance(ops[-1], RestickifyOp) and isinstance(ops[-2], MatmulOp)
    if isinstance(ops[0], MatmulOp) and matmul_last and len(ops) > 2:
        return KernelForm(None, attention=attention(ops))
    if isinstance(ops[0], MatmulOp):
        return KernelForm(ops[0], epilogue=epilogue(ops))
    if isinstance(ops[-1], ConcatOp):
        return KernelForm(sliced_concat(ops))
    if isinstance(ops[-1], PointwiseOp) and any(isinstance(o, ConcatOp) for o in ops):
        return KernelForm(ops[-1], sliced_inputs=pointwise_sliced_inputs(ops))
    return KernelForm(None, group=row_group(ops))


def kernel_iteration_dims(kernel: KernelOp) -> list[IterDim]:
    """The iteration dims a kernel's split and chunks name (spyre_iteration): its compute op's,
    its matmul's (an epilogue), its concat's (slices it reads) or its row group's; ValueError
    when its compute ops form none of these."""
    return kernel_form(kernel_ops(kernel)).dims()


def sliced_concat(ops: Sequence[Operation]) -> ConcatOp:
    """The concat of a kernel of slices and the concat that reads them (`ops` in order), or
    ValueError saying why they are not one. Each slice is read by the concat alone: its
    part is DMAed from the slice's input, from the slice's start, and never stored (the
    lowering refuses a slice whose input's sticks do not hold the part by one stride per
    loop)."""
    *slices, cat = ops
    if not isinstance(cat, ConcatOp) or not slices:
        raise ValueError("a sliced concat kernel holds slices and then the spyre.concat that reads them")
    for sl in slices:
        if not isinstance(sl, SliceOp) or sl.result not in cat.inputs:
            raise ValueError("a sliced concat kernel's ops before its concat are slices that the concat reads")
        if any(u.operation is not cat for u in sl.result.uses):
            raise ValueError("a sliced concat kernel's slices are read by its concat alone")
    return cat


def pointwise_sliced_inputs(ops: Sequence[Operation]) -> tuple[int, ...]:
    """The inputs of a kernel's pointwise op that are concats of slices in the kernel (`ops`
    in order: the slices, the concats that read them, the pointwise op last), or ValueError
    saying why the ops are not such a kernel. Each concat is placed as the pointwise op's
    result and read by it alone, each of its parts is a slice it alone reads, and the lowering
    DMAs each part of a tile from the slice's input (one stride per loop: it refuses a slice
    whose input's sticks do not hold the part so)."""
    *rest, pw = ops
    if not isinstance(pw, PointwiseOp):
        raise ValueError("a kernel of sliced concats read by a pointwise op ends with the spyre.pointwise")
    out = device_layout(pw.result.type).canonical()
    cats = [o for o in rest if isinstance(o, ConcatOp)]
    parts: list[Operation] = []
    for cat in cats:
        slices = [o for o in rest if isinstance(o, SliceOp) and o.result in cat.inputs]
        if any(not isinstance(v.owner, SliceOp) or v.owner not in slices for v in cat.inputs):
            raise ValueError("a concat a pointwise op reads in its kernel has slices in the kernel for parts")
        sliced_concat([*slices, cat])
        if any(u.operation is not pw for u in cat.result.uses) or device_layout(cat.result.type).canonical() != out:
            raise ValueError("a concat a pointwise op reads in its kernel is read by it alone, placed as its result")
        parts += slices
    if len(parts) + len(cats) != len(rest):
        raise ValueError("a kernel of sliced concats read by a pointwise op holds only those slices and concats")
    return tuple(i for i, v in enumerate(pw.inputs) if v.owner in cats)


def kernel_core_boxes(kernel: KernelOp, cores: int) -> list[Box | None]:
    """The box of each core of a kernel with a split: core_boxes, placed on the cores its
    `core_order` names (box i on core order[i]; spyre-resident-chains), if it has one."""
    assert kernel.split is not None
    boxes = core_boxes(kernel_iteration_dims(kernel), kernel.split.as_dict(), cores)
    if kernel.core_order is None:
        return boxes
    order = kernel.core_order.as_tuple()
    if max(order) >= cores:
        raise ValueError(f"core_order names core {max(order)}, the device has {cores}")
    placed: list[Box | None] = [None] * cores
    for i, core in enumerate(order):
        placed[core] = boxes[i]
    return placed


def iteration_dims(op: Operation) -> list[IterDim]:
    """The iteration dims of a kernel compute op, outer first (spyre_iteration says what each
    dim's unit is)."""
    if isinstance(op, MatmulOp):
        a, b = device_layout(op.lhs.type), device_layout(op.rhs.type)
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = [IterDim("b", a.shape[0])] if len(a.shape) == 3 else []
        return [
            *batch,
            IterDim("n", math.ceil(n / F16_LANES)),
            IterDim("m", m),
            IterDim("k", math.ceil(k / F16_LANES), parallel=False),
        ]
    if isinstance(op, PointwiseOp):
        return [IterDim(d.name, d.size) for d in pointwise_loops(op)[0]]
    if isinstance(op, GatherOp):
        return [IterDim("n", device_layout(op.result.type).shape[0])]
    if isinstance(op, ScatterOp):
        o, n, _ = device_layout(op.values.type).shape
        return [IterDim("o", o), IterDim("n", n)]
    if isinstance(op, SliceOp):
        return [IterDim(d.name, d.size) for d in slice_loops(op)]
    if isinstance(op, ConcatOp):
        return [IterDim(d.name, d.size) for d in loop_dims(device_layout(op.result.type))]
    if isinstance(op, ReduceOp):
        src = device_layout(op.input.type)
        tile = reduce_tile_dim(op)
        return [IterDim(d.name, d.size) for d in loop_dims(src) if d.device_dim != tile] + [
            IterDim("r", src.device_size[tile], parallel=False, chunkable=False)
        ]
    if isinstance(op, RestickifyOp):
        src, dst = device_layout(op.input.type), device_layout(op.result.type)
        row = transpose_row_dim(src, dst)
        return [
            IterDim(d.name, math.ceil(d.size / TRANSPOSE_BLOCK) if d.device_dim == row else d.size)
            for d in restickify_loops(src, dst)
        ]
    raise ValueError(f"'{op.name}' is not a kernel compute op")


def reduce_tile_dim(op: ReduceOp) -> int:
    """The input device dim holding the reduced (stick) dim's sticks; the input must be in the
    generic layout and the result its splat (spyre-propagate-layouts sees to it)."""
    src = device_layout(op.input.type)
    d = op.dim.value.data
    if src.stick_dim != d or len(src.digits[d]) > 2:
        raise ValueError(f"spyre.reduce along dim {d} needs its input sticked on that dim")
    if len(src.digits[d]) == 2:
        return src.digits[d][1].device_dim
    # extent <= 64: the tile digit has size 1 (synthetic): where the generic layout places it,
    # else any device dim of size 1 (a loop of one: its stride is never used)
    generic = Layout.generic(src.shape, src.element_bytes)
    at = len(generic.device_size) - 3 if len(src.shape) > 1 else 0
    ones = [j for j in range(len(src.device_size) - 1) if src.device_size[j] == 1]
    if not ones:
        raise ValueError(f"spyre.reduce along dim {d}: its input layout has no device dim for the reduced dim's sticks")
    return at if at in ones else ones[0]


def slice_loops(op: SliceOp) -> list[LoopDim]:
    """The result's loops, cut to nest inside the input's digits."""
    src, dst = device_layout(op.input.type), device_layout(op.result.type)
    return loop_dims(dst, [(src, list(range(len(dst.host_shape))))])


def pointwise_loops(op: PointwiseOp) -> tuple[list[LoopDim], list[list[int]]]:
    """The output's loops, cut to nest inside every input's digits, and each input's stick
    stride per loop (0 where it broadcasts)."""
    got = _loops_by_id(op.result.type, *(v.type for v in op.inputs))
    if isinstance(got, str):
        raise ValueError(got)
    loops, strides = got
    return list(loops), [list(s) for s in strides]


@functools.lru_cache(maxsize=1 << 12)
def _pointwise_loops(
    out_type: Attribute, *in_types: Attribute
) -> tuple[tuple[LoopDim, ...], tuple[tuple[int, ...], ...]] | str:
    """pointwise_loops by the op's types (all it depends on; spyre-fuse's row-group search asks
    again for the same ops' loops with every candidate member), or why there are none."""
    out = device_layout(out_type)
    ins = [device_layout(t) for t in in_types]
    maps = [broadcast_dim_map(out.shape, lay.shape) for lay in ins]
    loops = loop_dims(out, list(zip(ins, maps)))
    strides = []
    for i, (lay, m) in enumerate(zip(ins, maps)):
        st = operand_strides(out, lay, m, loops)
        if st is None:
            return (
                f"input {i} {lay.describe()} does not share the sticks of the output {out.describe()}: no stick "
                "stride per loop reads it (a stick along another dim, digits that do not nest in the output's, "
                "or an output padded past the input's extent)"
            )
        strides.append(tuple(st))
    return tuple(loops), tuple(strides)


_loops_by_id = by_identity(_pointwise_loops, 1 << 14)


@dataclass(frozen=True)
class RowGroup:
    """Reductions along the stick dim of one `full` layout and the pointwise ops around them
    (softmax, layer norm, RMS norm), computed in one kernel: each core takes whole rows, every
    intermediate stays in its LX, only the group's inputs and its result move through DDR.

        for each chunk of rows:                       (iteration dims: the outer loops, r)
            DMA the inputs' tiles in
            for op in ops: reduce / SFP steps, LX -> LX (each result rounded as if stored)
            DMA the last op's result out

    Values are `full` (the layout of the reduced tensor), `splat` (a reduction's result
    layout: one element per row, in every lane) or inputs read through their own strides."""

    ops: tuple[Operation, ...]
    full: Layout
    tile: int
    """The full layout's device dim of the reduced dim's sticks."""
    outer: tuple[LoopDim, ...]
    """The full layout's other loops, outer first."""
    splat: Layout

    @property
    def r(self) -> int:
        return self.full.device_size[self.tile]

    def dims(self) -> list[IterDim]:
        return [IterDim(d.name, d.size) for d in self.outer] + [IterDim("r", self.r, parallel=False, chunkable=False)]

    def is_full(self, v) -> bool:
        return device_layout(v.type) == self.full

    def strides(self, v, user: Operation) -> list[int]:
        """DDR stick strides of value `v` (read by `user`) per loop [*outer, r]; 0 = broadcast."""
        lay = device_layout(v.type)
        if lay == self.full:
            st = self.full.stick_strides
            return [st[d.device_dim] for d in self.outer] + [st[self.tile]]
        if lay == self.splat:  # by the splat's own digits: its device dims may be in another order
            return loop_strides(self.splat, self.outer) + [0]
        assert isinstance(user, PointwiseOp)
        loops, all_strides = pointwise_loops(user)
        by_dim = {d.device_dim: s for d, s in zip(loops, all_strides[list(user.inputs).index(v)])}
        return [by_dim.get(d.device_dim, 0) for d in self.outer] + [by_dim.get(self.tile, 0)]


def row_group(ops: Sequence[Operation]) -> RowGroup:
    """The row group of `ops` (a kernel's compute ops, in order), or ValueError saying why
    they cannot form one."""
    reduces = [o for o in ops if isinstance(o, ReduceOp)]
    if not reduces or any(not isinstance(o, ReduceOp | PointwiseOp) for o in ops):
        raise ValueError("a kernel of several compute ops holds reductions and pointwise ops only")
    first = reduces[0]
    full = device_layout(first.input.type)
    splat = device_layout(first.result.type)
    tile = reduce_tile_dim(first)
    for r in reduces[1:]:
        if (
            device_layout(r.input.type) != full
            or r.dim.value.data != first.dim.value.data
            or device_layout(r.result.type) != splat
        ):
            raise ValueError("the reductions of a row group reduce one layout along one dim")
    full_loops = loop_dims(full)
    outer = tuple(d for d in full_loops if d.device_dim != tile)
    if len(full_loops) != len(full.device_size) - 1:
        raise ValueError("a row group's layout has no refined loops")
    for o in ops:
        if not isinstance(o, PointwiseOp):
            continue
        out = device_layout(o.result.type)
        if out not in (full, splat):
            raise ValueError(f"a pointwise op of a row group computes the reduced layout or its splat, not {out}")
        loops, _ = pointwise_loops(o)
        if [(d.device_dim, d.size) for d in loops] != [
            (d.device_dim, d.size if out == full or d.device_dim != tile else 1) for d in full_loops
        ]:
            raise ValueError("a pointwise op of a row group must iterate the reduced layout's sticks")
    return RowGroup(tuple(ops), full, tile, outer, splat)


@dataclass(frozen=True)
class Epilogue:
    """A matmul and the pointwise op applied to its result (bias, activation, residual), in one
    kernel: after the last k chunk of an output tile the fp32 sums are rounded into the tile
    (as a store would), the pointwise steps run on it in LX with the other inputs' tiles, and
    only their result is stored. `strides[i]` is input i's DDR stick stride per (n stick,
    m row) of the output; `operand` the input that is the matmul's result."""

    matmul: MatmulOp
    pointwise: PointwiseOp
    operand: int
    strides: tuple[tuple[int, int], ...]


def epilogue(ops: Sequence[Operation]) -> Epilogue:
    """The epilogue form of `ops`, or ValueError saying why they are not one."""
    mm, pw = ops if len(ops) == 2 else (None, None)
    if not isinstance(mm, MatmulOp) or not isinstance(pw, PointwiseOp):
        raise ValueError("an epilogue kernel holds a spyre.matmul and then a spyre.pointwise")
    out = device_layout(mm.result.type)
    if len(out.shape) != 2 or device_layout(pw.result.type) != out:
        raise ValueError("an epilogue computes the (2-D) matmul result's layout")
    if mm.result not in pw.inputs or len([v for v in pw.inputs if v is mm.result]) != 1:
        raise ValueError("an epilogue reads the matmul's result once")
    loops, all_strides = pointwise_loops(pw)
    roles = [(1, F16_LANES), (0, 1)]  # the output's sticks, its rows
    at: dict[tuple[int, int], int] = {}
    for i, d in enumerate(loops):
        if d.host_dim is None and d.size == 1:
            continue  # a unit loop (one stick, or one row): its strides are never stepped
        role = (d.host_dim, d.weight)
        if role not in roles or role in at:
            raise ValueError("an epilogue iterates the output's sticks and rows")
        at[role] = i
    strides = tuple(
        (st[at[roles[0]]] if roles[0] in at else 0, st[at[roles[1]]] if roles[1] in at else 0) for st in all_strides
    )
    return Epilogue(mm, pw, list(pw.inputs).index(mm.result), strides)


@dataclass(frozen=True)
class Attention:
    """Attention in one kernel: a batched product (the scores, q @ k^T), a row group over its
    rows (the softmax, with a mask's add or a soft cap), and a batched product reading the
    group's result as its A (the context, p @ v), the two views between them looked through.
    Each core takes rows of one or more matrices: per chunk of rows it computes the scores'
    fp32 sums, rounds them as a store would, runs the group's steps and the second product on
    them in LX; only q's rows, each matrix's K^T and V once, the group's other inputs (the
    mask's rows) and the context move through DDR.

    `rows` is the group's outer loop that steps one row of the products (a matrix's rows may
    span several of its other loops: a query head's rows after another's); `row_stride` and
    `matrix_stride` are the scores' stick strides per row and per matrix, by which a row's
    first stick is decoded into the group's outer loops (`group_index`).

    Iteration dims: b (the matrices), p (a row's position along `rows`) and h (which run of
    `positions` rows: a query head of a GQA group), row m = h * positions + p. A core's box
    takes positions of every head of its matrices, so that the rows of a mask broadcast over
    the heads are read once for all of them; the lowering takes each matrix's chunks of
    positions in turn and, inside a chunk, each head (b and h are never chunked)."""

    scores: MatmulOp
    group: RowGroup
    context: MatmulOp
    rows: int
    """Index into group.outer of the loop that steps the products' rows."""
    row_stride: int
    matrix_stride: int
    relayout: RestickifyOp | None = None
    """A restickify that alone reads the context (through views) and moves whole sticks (the
    heads' contexts side by side for the output projection): the kernel stores each context
    stick where the restickify would put it (`out_stick`), and its result is the kernel's."""
    views: tuple[Operation, ...] = ()
    """The reshapes and permutes from the context to the relayout's input, in order."""

    @property
    def result(self) -> SSAValue:
        """The kernel's result: the relayout's, else the context's."""
        return self.relayout.result if self.relayout is not None else self.context.result

    def out_stick(self, b: int, m: int, stick: int) -> int:
        """The result's stick holding the context's stick `stick` of row m of matrix b."""
        if self.relayout is None:
            sb, sm, sn = matrix_strides(device_layout(self.context.result.type))
            return b * sb + m * sm + stick * sn
        return device_layout(self.relayout.result.type).element_stick(self.relayout_coords(b, m, stick * F16_LANES))

    def relayout_coords(self, b: int, m: int, e: int) -> tuple[int, ...]:
        """The relayout's coordinates of the context's element (b, m, e), through the views."""
        shape = device_layout(self.context.result.type).shape
        coords: tuple[int, ...] = (b, m, e) if len(shape) == 3 else (m, e)
        for view in self.views:
            if isinstance(view, PermuteOp):
                coords = tuple(coords[p] for p in view.permutation.as_tuple())
            else:
                assert isinstance(view, ReshapeOp)
                new = device_layout(view.result.type).shape
                flat = 0
                for x, n in zip(coords, shape):
                    flat = flat * n + x
                coords = tuple(int(x) for x in _unravel(flat, new))
            shape = device_layout(view.result.type).shape
        return coords

    @property
    def positions(self) -> int:
        """Rows per head: the row loop's extent where a matrix's rows are whole runs of it,
        else all its rows."""
        m = device_layout(self.scores.lhs.type).shape[-2]
        size = self.group.outer[self.rows].size
        return size if size <= m and m % size == 0 else m

    def dims(self) -> list[IterDim]:
        shape = device_layout(self.scores.lhs.type).shape
        b = shape[0] if len(shape) == 3 else 1
        return [
            IterDim("b", b, chunkable=False),
            IterDim("p", self.positions),
            IterDim("h", shape[-2] // self.positions, chunkable=False),
        ]

    def scores_value(self) -> SSAValue:
        """The value the group reads for the scores (the product's result or its view)."""
        uses = list(self.scores.result.uses)
        op = uses[0].operation
        return op.results[0] if isinstance(op, ReshapeOp) else self.scores.result

    def inputs(self) -> list[tuple[SSAValue, list[int]]]:
        """The values the row group reads from outside other than the scores (a mask, a bias),
        in order, with their DDR stick strides per [*group.outer, r] (0: broadcast)."""
        made, scores = {o.results[0] for o in self.group.ops}, self.scores_value()
        found: dict[SSAValue, list[int]] = {}
        for o in self.group.ops:
            for v in o.operands:
                if v not in made and v is not scores and v not in found:
                    found[v] = self.group.strides(v, o)
        return list(found.items())

    def same_for_every_head(self, strides: Sequence[int]) -> bool:
        """Whether an input with these strides (`inputs`) steps no loop of the group but the
        rows: the same for every matrix and head (a causal mask), read once per chunk of rows."""
        return not any(s for j, s in enumerate(strides[: len(self.group.outer)]) if j != self.rows)

    def group_index(self, b: int, m: int) -> list[int]:
        """The group's outer loop indices of row m of matrix b (ValueError: no row of the
        group's layout starts there; attention() checks the corners)."""
        at = b * self.matrix_stride + m * self.row_stride
        order = sorted(range(len(self.group.outer)), key=lambda j: -self.group.outer[j].stick_stride)
        idx = [0] * len(self.group.outer)
        for j in order:
            d = self.group.outer[j]
            if d.stick_stride > 0 and d.size > 1:
                idx[j], at = divmod(at, d.stick_stride)
        if at != 0:
            raise ValueError(f"row {m} of matrix {b} of the scores does not start a row of the row group's layout")
        return idx


def _unravel(flat: int, shape: Sequence[int]) -> list[int]:
    out = []
    for n in reversed(shape):
        flat, x = divmod(flat, n)
        out.append(x)
    return out[::-1]


def attention(ops: Sequence[Operation]) -> Attention:
    """The attention form of `ops` (a kernel's compute ops: two batched products and a row
    group between them, and maybe a restickify that moves the context's sticks), or
    ValueError saying why they are not one."""
    relayout = ops[-1] if isinstance(ops[-1], RestickifyOp) else None
    if relayout is not None:
        ops = ops[:-1]
    scores, context = ops[0], ops[-1]
    if not isinstance(scores, MatmulOp) or not isinstance(context, MatmulOp) or len(ops) < 3:
        raise ValueError("an attention kernel holds a spyre.matmul, a row group and a spyre.matmul")
    group = row_group(ops[1:-1])
    sa, sr, ca = (device_layout(v.type) for v in (scores.lhs, scores.result, context.lhs))
    if len(sa.shape) != len(ca.shape):
        raise ValueError("an attention kernel's products are both batched (3-d) or both not (2-d)")
    if sr.shape != ca.shape:
        raise ValueError("an attention kernel's second product reads the scores' shape as its A")

    def through_view(v: SSAValue) -> Operation | None:
        uses = list(v.uses)
        if len(uses) != 1:
            return None
        op = uses[0].operation
        if isinstance(op, ReshapeOp):
            uses = list(op.result.uses)
            return uses[0].operation if len(uses) == 1 else None
        return op

    inside = set(group.ops)
    seen = scores.result
    if len(list(seen.uses)) == 1 and isinstance(next(iter(seen.uses)).operation, ReshapeOp):
        seen = next(iter(seen.uses)).operation.results[0]
    if not device_layout(seen.type).places_like(group.full) or any(u.operation not in inside for u in seen.uses):
        raise ValueError("an attention kernel's row group alone reads the scores, in its reduced layout")
    last = group.ops[-1].results[0]
    if not group.is_full(last) or through_view(last) is not context:
        raise ValueError("an attention kernel's second product alone reads the row group's result")
    if context.lhs is not last and (
        not isinstance(context.lhs.owner, ReshapeOp) or context.lhs.owner.input is not last
    ):
        raise ValueError("an attention kernel's second product reads the row group's result as its A")
    strides = [matrix_strides(lay) for lay in (sr, ca)]
    if strides[0] != strides[1]:
        raise ValueError("an attention kernel's scores and the second product's A hold their rows alike")
    sb, sm, sn = strides[0]
    if group.r != math.ceil(sr.shape[-1] / F16_LANES) or group.r > 1 and group.full.stick_strides[group.tile] != sn:
        raise ValueError("an attention kernel's row group reduces along the scores' columns")
    rows = [j for j, d in enumerate(group.outer) if d.stick_stride == sm and d.size > 1]
    if len(rows) != 1:
        raise ValueError("an attention kernel's row group steps the scores' rows with one loop")
    views: list[Operation] = []
    if relayout is not None:
        out: SSAValue = context.result
        while len(uses := list(out.uses)) == 1 and isinstance(uses[0].operation, ReshapeOp | PermuteOp):
            views.append(uses[0].operation)
            out = uses[0].operation.results[0]
        if len(uses) != 1 or uses[0].operation is not relayout:
            raise ValueError("an attention kernel's restickify alone reads the context, through views")
    att = Attention(scores, group, context, rows[0], sm, sb, relayout, tuple(views))
    if relayout is not None:
        _check_stick_moves(att)
    b, m = (sr.shape[0] if len(sr.shape) == 3 else 1), sr.shape[-2]
    for corner in ((b - 1, m - 1), (b - 1, 0), (0, m - 1)):
        idx = att.group_index(*corner)  # every row decodes into the group's loops (else ValueError)
        if any(i >= d.size for i, d in zip(idx, group.outer)):
            raise ValueError("an attention kernel's scores rows lie outside its row group's loops")
    for i, (_, st) in enumerate(att.inputs()):
        if st[att.rows] == 0 and not att.same_for_every_head(st):
            raise ValueError(f"an attention kernel's row group input {i} varies along its loops but not along the rows")
    return att


def _check_stick_moves(att: Attention) -> None:
    """ValueError unless the relayout moves the context's sticks whole: each stick's lanes
    land in one stick of the result, in order (checked at the first and last rows, whose
    lanes and strides every other row shares in a layout)."""
    out = device_layout(att.relayout.result.type) if att.relayout is not None else None
    assert out is not None
    shape = device_layout(att.context.result.type).shape
    b, m, n = (shape[0] if len(shape) == 3 else 1), shape[-2], shape[-1]
    h = out.stick_dim
    for row in ((0, 0), (b - 1, m - 1)):
        for stick in range(math.ceil(n / F16_LANES)):
            first = att.relayout_coords(*row, stick * F16_LANES)
            last = att.relayout_coords(*row, min(n, (stick + 1) * F16_LANES) - 1)
            moved = [i for i, (x, y) in enumerate(zip(first, last)) if x != y]
            if h is None or first[h] % F16_LANES or moved not in ([h], []) or last[h] - first[h] != last_lane(n, stick):
                raise ValueError("an attention kernel's restickify moves whole sticks of the context")


def last_lane(n: int, stick: int) -> int:
    """The last lane of stick `stick` of a dim of n elements."""
    return min(n, (stick + 1) * F16_LANES) - 1 - stick * F16_LANES


# endregion

Spyre = Dialect(
    "spyre",
    [
        ToDeviceOp,
        FromDeviceOp,
        MatmulOp,
        PointwiseOp,
        ReduceOp,
        GatherOp,
        ScatterOp,
        SliceOp,
        ConcatOp,
        YieldOp,
        PermuteOp,
        ReshapeOp,
        RestickifyOp,
        KernelOp,
    ],
    [IntListAttr, LayoutAttr, SplitAttr, LxPlanAttr, *MARKS],
)

__all__ = [
    "Spyre",
    "IntListAttr",
    "LayoutAttr",
    "SplitAttr",
    "LxPlanAttr",
    "MulticastAttr",
    "CoreOrderAttr",
    "ResidentInAttr",
    "ResidentOutAttr",
    "OnchipAttr",
    "LxBudgetAttr",
    "ToDeviceOp",
    "FromDeviceOp",
    "MatmulOp",
    "PointwiseOp",
    "ReduceOp",
    "GatherOp",
    "ScatterOp",
    "SliceOp",
    "ConcatOp",
    "YieldOp",
    "PermuteOp",
    "ReshapeOp",
    "RestickifyOp",
    "KernelOp",
    "POINTWISE_BODY_OPS",
    "device_layout",
    "device_tensor_type",
    "rows_by_strides",
    "aliased_arguments",
    "ALIASING_OUTPUT",
    "is_device_tensor",
    "element_bytes",
    "kernel_ops",
    "single_pointwise",
    "kernel_iteration_dims",
    "kernel_core_boxes",
    "iteration_dims",
    "reduce_tile_dim",
    "slice_loops",
    "pointwise_loops",
    "RowGroup",
    "row_group",
    "Attention",
    "Epilogue",
    "attention",
    "epilogue",
]
