"""The `torch` ops with torch-mlir's default syntax (`parseDefaultTorchOp`):
`%r = torch.aten.foo %a, %b {attrs} : !ta, !tb -> !tr`.

The ops that rewrites match on have dedicated classes, with operands named after the PyTorch
schema (`self` becomes `self_`) and verifiers of their shapes. Any other `torch.*` name gets a
catch-all class (`make_default_op`), with variadic operands and results, `Pure` when the name is
in `PURE_OPS`.
"""

import math
from collections.abc import Sequence
from functools import cache

from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.torch.names import PURE_OPS
from spyre_mlir.dialects.torch.ops import ConstantBoolOp, constant_int_value, constant_list_ints, constant_str_value
from spyre_mlir.dialects.torch.types import (
    BoolType,
    FloatType,
    IntType,
    ListType,
    NoneType,
    NumberType,
    StrType,
    ValueTensorType,
)


class DefaultFormatOp(IRDLOperation):
    """Base of the ops with torch-mlir's default syntax (`parseDefaultTorchOp`):
    `%r = torch.aten.foo %a, %b {attrs} : !ta, !tb -> !tr`, or `: !tr` without operands and
    `: !ta, !tb` without results."""

    @classmethod
    def parse(cls, parser: Parser) -> "DefaultFormatOp":
        pos = parser.pos
        args = (
            parser.parse_optional_undelimited_comma_separated_list(
                parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
            )
            or []
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        arg_types: list[Attribute] = []
        result_types: list[Attribute] = []
        if args:
            arg_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if parser.parse_optional_punctuation("->") is not None:
                result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        else:
            result_types = (
                parser.parse_optional_undelimited_comma_separated_list(parser.parse_optional_type, parser.parse_type)
                or []
            )
        return cls.create(
            operands=parser.resolve_operands(args, arg_types, pos),
            result_types=result_types,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        # Spacing as in torch-mlir's printDefaultTorchOp (two spaces before `:` without operands).
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list(self.operand_types, printer.print_attribute)
        if self.operands and self.results:
            printer.print_string(" -> ")
        printer.print_list(self.result_types, printer.print_attribute)


_TENSOR = ValueTensorType
"""Constraint of tensor operands and results."""
_SCALAR = IntType | FloatType | NumberType | BoolType
"""Constraint of schema `Scalar` operands (torch-mlir's `AnyTorchScalarType`)."""
_INT_LIST = ListType(IntType())
"""Constraint of schema `int[]` operands."""


def sizes_of(value: SSAValue) -> tuple[int, ...] | None:
    """The sizes of a ranked vtensor value (-1 for unknown), else None."""
    t = value.type
    return t.get_shape() if isinstance(t, ValueTensorType) and t.has_sizes else None


def vtensor_type(value: SSAValue) -> ValueTensorType:
    """The type of a value that its op's definition constrains to a `!torch.vtensor` (in
    verified IR, every tensor operand and result of a torch op)."""
    vt = value.type
    assert isinstance(vt, ValueTensorType), f"expected a !torch.vtensor, got {vt}"
    return vt


def _verify_rank(op: Operation, operand: str, value: SSAValue, ranks: Sequence[int]) -> None:
    sizes = sizes_of(value)
    if sizes is not None and len(sizes) not in ranks:
        expected = ", ".join(str(r) for r in ranks[:-1]) + (" or " if len(ranks) > 1 else "") + str(ranks[-1])
        raise VerifyException(f"{op.name}: operand '{operand}' must have rank {expected}, got {value.type}")


def _verify_sizes_agree(op: Operation, what: str, a: int, b: int, operands: Sequence[tuple[str, SSAValue]]) -> None:
    if a != -1 and b != -1 and a != b:
        which = ", ".join(f"'{name}' is {value.type}" for name, value in operands)
        raise VerifyException(f"{op.name}: {what} differ ({a} vs {b}): {which}")


def _verify_matmul(op: Operation, names: tuple[str, str], lhs: SSAValue, rhs: SSAValue, rank: int) -> None:
    """Check `lhs @ rhs` for rank-`rank` operands: contracting sizes (and batch sizes) agree."""
    _verify_rank(op, names[0], lhs, (rank,))
    _verify_rank(op, names[1], rhs, (rank,))
    a, b = sizes_of(lhs), sizes_of(rhs)
    if a is None or b is None:
        return
    operands = ((names[0], lhs), (names[1], rhs))
    _verify_sizes_agree(op, "contracting sizes", a[-1], b[-2], operands)
    if rank == 3:
        _verify_sizes_agree(op, "batch sizes", a[0], b[0], operands)


def _verify_size_list(op: Operation, value: SSAValue, sizes_value: SSAValue, result: SSAValue | None = None) -> None:
    """For view/reshape: at most one -1, a constant size list keeps the element count, and a
    static result type has the elements of the input and the sizes of the list."""
    in_sizes = sizes_of(value)
    sizes = constant_list_ints(sizes_value)
    if sizes is not None:
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise VerifyException(f"{op.name}: invalid size list {sizes}")
        if in_sizes is not None and -1 not in in_sizes and -1 not in sizes and math.prod(in_sizes) != math.prod(sizes):
            raise VerifyException(f"{op.name}: cannot view {value.type} with {math.prod(in_sizes)} elements as {sizes}")
    out_sizes = sizes_of(result) if result is not None else None
    if result is None or out_sizes is None:
        return
    if (
        in_sizes is not None
        and -1 not in in_sizes
        and -1 not in out_sizes
        and math.prod(in_sizes) != math.prod(out_sizes)
    ):
        raise VerifyException(f"{op.name}: cannot view {value.type} ({math.prod(in_sizes)} elements) as {result.type}")
    if sizes is not None and (
        len(out_sizes) != len(sizes) or any(s != -1 and o != -1 and s != o for s, o in zip(sizes, out_sizes))
    ):
        raise VerifyException(f"{op.name}: result {result.type} does not have the sizes {sizes}")


def _verify_broadcast(op: Operation, operands: Sequence[SSAValue], result: SSAValue) -> None:
    """Element-wise ops: static operand sizes broadcast (right-aligned, equal or 1), and a
    static result has the broadcast sizes."""
    shapes = [s for s in (sizes_of(v) for v in operands) if s is not None and -1 not in s]
    if len(shapes) != len(operands):
        return
    rank = max(len(s) for s in shapes)
    out: list[int] = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0} - {1}
        if len(dims) > 1:
            raise VerifyException(f"{op.name}: operands {', '.join(str(v.type) for v in operands)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    got = sizes_of(result)
    if got is not None and -1 not in got and tuple(got) != tuple(out):
        raise VerifyException(f"{op.name}: result {result.type} does not have the broadcast sizes {out}")


@irdl_op_definition
class AtenMmOp(DefaultFormatOp):
    """`torch.aten.mm`: `result = self @ mat2` for 2-D `self` (M×K) and `mat2` (K×N)."""

    name = "torch.aten.mm"
    self_ = operand_def(_TENSOR)
    mat2 = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_matmul(self, ("self", "mat2"), self.self_, self.mat2, 2)


@irdl_op_definition
class AtenBmmOp(DefaultFormatOp):
    """`torch.aten.bmm`: `result[b] = self[b] @ mat2[b]` for 3-D `self` (B×M×K) and `mat2` (B×K×N)."""

    name = "torch.aten.bmm"
    self_ = operand_def(_TENSOR)
    mat2 = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_matmul(self, ("self", "mat2"), self.self_, self.mat2, 3)


@irdl_op_definition
class AtenAddmmOp(DefaultFormatOp):
    """`torch.aten.addmm`: `result = beta * self + alpha * (mat1 @ mat2)`, `self` broadcast to M×N."""

    name = "torch.aten.addmm"
    self_ = operand_def(_TENSOR)
    mat1 = operand_def(_TENSOR)
    mat2 = operand_def(_TENSOR)
    beta = operand_def(_SCALAR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_matmul(self, ("mat1", "mat2"), self.mat1, self.mat2, 2)


@irdl_op_definition
class AtenLinearOp(DefaultFormatOp):
    """`torch.aten.linear`: `result = input @ weight.T + bias`; `bias` may be `!torch.none`."""

    name = "torch.aten.linear"
    input = operand_def(_TENSOR)
    weight = operand_def(_TENSOR)
    bias = operand_def(_TENSOR | NoneType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_rank(self, "weight", self.weight, (1, 2))
        x, w = sizes_of(self.input), sizes_of(self.weight)
        if x and w:
            operands = (("input", self.input), ("weight", self.weight))
            _verify_sizes_agree(self, "in-features", x[-1], w[-1], operands)


@irdl_op_definition
class AtenTOp(DefaultFormatOp):
    """`torch.aten.t`: transpose of a tensor of rank at most 2."""

    name = "torch.aten.t"
    self_ = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_rank(self, "self", self.self_, (0, 1, 2))


@irdl_op_definition
class AtenPermuteOp(DefaultFormatOp):
    """`torch.aten.permute`: `result.shape[i] = self.shape[dims[i]]` (negative dims count from the end)."""

    name = "torch.aten.permute"
    self_ = operand_def(_TENSOR)
    dims = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        dims, sizes = constant_list_ints(self.dims), sizes_of(self.self_)
        if dims is None or sizes is None:
            return
        rank = len(sizes)
        if (
            len(dims) != rank
            or any(not -rank <= d < rank for d in dims)
            or sorted(d % rank for d in dims) != list(range(rank))
        ):
            raise VerifyException(
                f"{self.name}: dims {dims} are not a permutation of the {rank} dims of {self.self_.type}"
            )


@irdl_op_definition
class AtenTransposeIntOp(DefaultFormatOp):
    """`torch.aten.transpose.int`: swap dims `dim0` and `dim1` (negative dims count from the end)."""

    name = "torch.aten.transpose.int"
    self_ = operand_def(_TENSOR)
    dim0 = operand_def(IntType)
    dim1 = operand_def(IntType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        sizes = sizes_of(self.self_)
        if sizes is None:
            return
        rank = max(len(sizes), 1)
        for dim in (self.dim0, self.dim1):
            if (d := constant_int_value(dim)) is not None and not -rank <= d < rank:
                raise VerifyException(f"{self.name}: dim {d} is out of range for {self.self_.type}")


@irdl_op_definition
class AtenAddTensorOp(DefaultFormatOp):
    """`torch.aten.add.Tensor`: `result = self + alpha * other`, broadcasting."""

    name = "torch.aten.add.Tensor"
    self_ = operand_def(_TENSOR)
    other = operand_def(_TENSOR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_, self.other], self.result)


@irdl_op_definition
class AtenAddScalarOp(DefaultFormatOp):
    """`torch.aten.add.Scalar`: `result = self + alpha * other` for a scalar `other`."""

    name = "torch.aten.add.Scalar"
    self_ = operand_def(_TENSOR)
    other = operand_def(_SCALAR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenSubTensorOp(DefaultFormatOp):
    """`torch.aten.sub.Tensor`: `result = self - alpha * other`, broadcasting."""

    name = "torch.aten.sub.Tensor"
    self_ = operand_def(_TENSOR)
    other = operand_def(_TENSOR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_, self.other], self.result)


@irdl_op_definition
class AtenSubScalarOp(DefaultFormatOp):
    """`torch.aten.sub.Scalar`: `result = self - alpha * other` for a scalar `other`."""

    name = "torch.aten.sub.Scalar"
    self_ = operand_def(_TENSOR)
    other = operand_def(_SCALAR)
    alpha = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenMulTensorOp(DefaultFormatOp):
    """`torch.aten.mul.Tensor`: `result = self * other`, broadcasting."""

    name = "torch.aten.mul.Tensor"
    self_ = operand_def(_TENSOR)
    other = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_, self.other], self.result)


@irdl_op_definition
class AtenMulScalarOp(DefaultFormatOp):
    """`torch.aten.mul.Scalar`: `result = self * other` for a scalar `other`."""

    name = "torch.aten.mul.Scalar"
    self_ = operand_def(_TENSOR)
    other = operand_def(_SCALAR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenReluOp(DefaultFormatOp):
    """`torch.aten.relu`: `result = max(self, 0)`."""

    name = "torch.aten.relu"
    self_ = operand_def(_TENSOR)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_broadcast(self, [self.self_], self.result)


@irdl_op_definition
class AtenGeluOp(DefaultFormatOp):
    """`torch.aten.gelu`: `result = self * Φ(self)`, with `approximate` "none" (erf) or "tanh"."""

    name = "torch.aten.gelu"
    self_ = operand_def(_TENSOR)
    approximate = operand_def(StrType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        mode = constant_str_value(self.approximate)
        if mode is not None and mode not in ("none", "tanh"):
            raise VerifyException(f'{self.name}: approximate must be "none" or "tanh", got "{mode}"')


@irdl_op_definition
class AtenViewOp(DefaultFormatOp):
    """`torch.aten.view`: `self` with sizes `size` (one may be -1), same elements in row-major order."""

    name = "torch.aten.view"
    self_ = operand_def(_TENSOR)
    size = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_size_list(self, self.self_, self.size, self.result)


@irdl_op_definition
class AtenReshapeOp(DefaultFormatOp):
    """`torch.aten.reshape`: `self` with sizes `shape` (one may be -1), same elements in row-major order."""

    name = "torch.aten.reshape"
    self_ = operand_def(_TENSOR)
    shape = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_size_list(self, self.self_, self.shape, self.result)


@irdl_op_definition
class AtenUnsafeViewOp(DefaultFormatOp):
    """`torch.aten._unsafe_view`: as `torch.aten.view` (the result is not tracked as an alias)."""

    name = "torch.aten._unsafe_view"
    self_ = operand_def(_TENSOR)
    size = operand_def(_INT_LIST)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_size_list(self, self.self_, self.size, self.result)


@irdl_op_definition
class AtenCloneOp(DefaultFormatOp):
    """`torch.aten.clone`: a copy of `self`; `memory_format` is an int or `!torch.none`."""

    name = "torch.aten.clone"
    self_ = operand_def(_TENSOR)
    memory_format = operand_def(IntType | NoneType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())


@irdl_op_definition
class AtenConvolutionOp(DefaultFormatOp):
    """`torch.aten.convolution` (aot_autograd's form of conv1d/conv2d/conv3d and their
    transposes): for `input` (N, C, *S), `weight` (C_out, C / groups, *K), group g of
    C_out / groups output channels reading the g-th C / groups input channels, and
    `bias` (C_out) or `!torch.none`:

        result[n, o, *p] = bias[o] + sum over c, *k of
            input_padded[n, g(o) * C/groups + c, *(p * stride + k * dilation)] * weight[o, c, *k]
        O_d = (S_d + 2 padding_d - dilation_d (K_d - 1) - 1) // stride_d + 1

    `transposed` swaps the roles (weight (C, C_out / groups, *K)); `output_padding` applies
    to transposed convolutions only."""

    name = "torch.aten.convolution"
    input = operand_def(_TENSOR)
    weight = operand_def(_TENSOR)
    bias = operand_def(_TENSOR | NoneType)
    stride = operand_def(_INT_LIST)
    padding = operand_def(_INT_LIST)
    dilation = operand_def(_INT_LIST)
    transposed = operand_def(BoolType)
    output_padding = operand_def(_INT_LIST)
    groups = operand_def(IntType)
    result = result_def(_TENSOR)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        _verify_rank(self, "input", self.input, (3, 4, 5))
        _verify_rank(self, "weight", self.weight, (3, 4, 5))
        x, w = sizes_of(self.input), sizes_of(self.weight)
        if x is None or w is None:
            return
        if len(x) != len(w):
            raise VerifyException(f"{self.name}: input {self.input.type} and weight {self.weight.type} differ in rank")
        spatial = len(x) - 2
        lists = {name: constant_list_ints(getattr(self, name)) for name in ("stride", "padding", "dilation")}
        for name, values in lists.items():
            if values is not None and len(values) not in (1, spatial):
                raise VerifyException(f"{self.name}: {name} {values} has neither 1 nor {spatial} entries")
        groups = constant_int_value(self.groups)
        if groups is not None and groups < 1:
            raise VerifyException(f"{self.name}: groups {groups} must be positive")
        transposed = self.transposed.owner
        if groups is None or not isinstance(transposed, ConstantBoolOp) or transposed.value.value.data:
            return
        operands = (("input", self.input), ("weight", self.weight))
        if w[0] != -1 and w[0] % groups:
            raise VerifyException(f"{self.name}: {w[0]} output channels do not split into {groups} groups")
        if w[1] != -1:
            _verify_sizes_agree(self, "input channels", x[1], w[1] * groups, operands)
        out = sizes_of(self.result)
        given = [v for v in lists.values() if v is not None]
        if out is None or -1 in x or -1 in w or len(given) != 3:
            return
        stride, padding, dilation = ([v[0]] * spatial if len(v) == 1 else v for v in given)
        want = [x[0], w[0]] + [
            (s + 2 * p - d * (k - 1) - 1) // st + 1 for s, k, st, p, d in zip(x[2:], w[2:], stride, padding, dilation)
        ]
        if any(o != -1 and o != e for o, e in zip(out, want)) or len(out) != len(want):
            raise VerifyException(f"{self.name}: result {self.result.type} is not the convolution's shape {want}")


@cache
def make_default_op(op_name: str) -> type[DefaultFormatOp]:
    """The catch-all class for a torch op without a dedicated definition: variadic operands
    `args` and results `res`, torch-mlir's default syntax; `Pure` if the name is in
    `PURE_OPS`, else no traits (effects unknown). Cached, so every context shares one class
    per name."""
    cls = type(
        "".join(part[:1].upper() + part[1:] for part in op_name.split(".")) + "Op",
        (DefaultFormatOp,),
        {
            "__doc__": f"`{op_name}`: no dedicated definition; see the PyTorch schema.",
            "__module__": __name__,
            "name": op_name,
            "args": var_operand_def(),
            "res": var_result_def(),
            **({"traits": traits_def(Pure())} if op_name in PURE_OPS else {}),
        },
    )
    return irdl_op_definition(cls)
