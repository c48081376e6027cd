"""The compute engines' instructions: the PT array's matmul (16-bit products, fp32 partial
sums in LX) and the SFP's element-wise functions, selects, transposes and reductions on 64-lane
vectors.
"""

from __future__ import annotations

import struct
from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, FloatAttr, IntegerAttr, UnitAttr, f32
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import IntListAttr, int_list
from spyre_mlir.dialects.spyre_isa.attrs import AccessAttr, i64_attr
from spyre_mlir.dialects.spyre_isa.program import IsaInstruction, parse_access, print_access
from spyre_mlir.target.constants import F16_LANES, TRANSPOSE_BLOCK

# region PT


@irdl_op_definition
class PtMatmulOp(IsaInstruction):
    """Matrix product on the PT systolic array, 16-bit inputs, fp32 partial sums in LX.

    A[m, k] = lx16[lhs.base + m*lhs.s0 + (k // 64)*lhs.s1][k % 64]
    B[k, n] = lx16[rhs.base + k*rhs.s0 + (n // 64)*rhs.s1][n % 64]
    C[m, n] = lx32[acc.base + m*acc.s0 + (n // 64)*acc.s1 + (n % 64) // 32][n % 32]
                              (a 64-lane f32 vector is two consecutive sticks, as in the SFP)
    C = (C if accumulate else 0) + A @ B           # exact products, fp32 sums
    """

    name = "spyre_isa.pt_matmul"
    ENGINE: ClassVar[str] = "pt"
    lhs = prop_def(AccessAttr)
    rhs = prop_def(AccessAttr)
    acc = prop_def(AccessAttr)
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    accumulate = opt_prop_def(UnitAttr)
    assembly_format = (
        "`lx` $lhs `,` `lx` $rhs `->` `lx` $acc `m` `=` $m `n` `=` $n `k` `=` $k (`accumulate` $accumulate^)? attr-dict"
    )

    def __init__(self, lhs: AccessAttr, rhs: AccessAttr, acc: AccessAttr, m: int, n: int, k: int, accumulate: bool):
        self._build(
            properties={
                "lhs": lhs,
                "rhs": rhs,
                "acc": acc,
                "m": i64_attr(m),
                "n": i64_attr(n),
                "k": i64_attr(k),
                "accumulate": UnitAttr() if accumulate else None,
            }
        )

    def verify_(self) -> None:
        if min(self.m.value.data, self.n.value.data, self.k.value.data) < 1:
            raise VerifyException(
                f"'{self.name}': m, n, k must be >= 1, got {self.m.value.data}, {self.n.value.data}, {self.k.value.data}"
            )
        for what, v in (("m", self.m), ("n", self.n), ("k", self.k)):
            self._check_count(self, f"{what} = {v.value.data}", v.value.data)
        for what, acc, f32_ in (("lhs", self.lhs, False), ("rhs", self.rhs, False), ("acc", self.acc, True)):
            self._check_table(f"{what} base", acc.base)
            if len(acc.strides.values) != 2:
                raise VerifyException(
                    f"'{self.name}': {what} needs 2 strides (row, stick), got {len(acc.strides.values)}"
                )
            if acc.is_f32 != f32_:
                raise VerifyException(f"'{self.name}': {what} must be {'f32' if f32_ else 'f16'}")


# endregion
# region SFP


SFP_TRANSCENDENTAL = frozenset({"exp", "erf", "tanh", "log", "sqrt", "rsqrt", "sin", "cos", "recip"})
"""SFP functions that take the transcendental (multi-cycle) path."""


class SfpUnaryOp(IsaInstruction, ABC):
    """dst = f(src) on 64-lane vectors along the loop nest `sizes`."""

    ENGINE: ClassVar[str] = "sfp"
    FUNCTION: ClassVar[str]
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)
    assembly_format = "`lx` $src `->` `lx` $dst `sizes` $sizes attr-dict"

    def __init__(self, src: AccessAttr, dst: AccessAttr, sizes: Sequence[int]):
        self._build(properties={"src": src, "dst": dst, "sizes": int_list(tuple(sizes))})

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("src", self.src, sizes)
        self._check_access("dst", self.dst, sizes)


class SfpBinaryOp(IsaInstruction, ABC):
    """dst = f(lhs, rhs) on 64-lane vectors; `rhs` is an LX access or an f32 immediate."""

    ENGINE: ClassVar[str] = "sfp"
    FUNCTION: ClassVar[str]
    lhs = prop_def(AccessAttr)
    rhs = opt_prop_def(AccessAttr)
    imm = opt_prop_def(FloatAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)

    def __init__(self, lhs: AccessAttr, rhs: AccessAttr | float, dst: AccessAttr, sizes: Sequence[int]):
        props: dict[str, Attribute | None] = {"lhs": lhs, "dst": dst, "sizes": int_list(tuple(sizes))}
        if isinstance(rhs, AccessAttr):
            props["rhs"] = rhs
        else:
            props["imm"] = FloatAttr(float(rhs), f32)
        self._build(properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> SfpBinaryOp:
        lhs = parse_access(parser)
        parser.parse_punctuation(",")
        props: dict[str, Attribute] = {"lhs": lhs}
        if parser.parse_optional_keyword("lx") is not None:
            props["rhs"] = AccessAttr.new(AccessAttr.parse_parameters(parser))
        elif parser._current_token.text.lower().startswith("0x"):  # inf and NaN print as their f32 bits
            bits = parser.parse_integer(allow_boolean=False, allow_negative=False)
            props["imm"] = FloatAttr(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0], f32)
        else:
            props["imm"] = FloatAttr(parser.parse_float(), f32)
        parser.parse_punctuation("->")
        props["dst"] = parse_access(parser)
        parser.parse_keyword("sizes")
        props["sizes"] = IntListAttr.new(IntListAttr.parse_parameters(parser))
        return cls.create(properties=props)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, "lx", self.lhs)
        printer.print_string(", ")
        if self.rhs is not None:
            print_access(printer, "lx", self.rhs)
        else:
            assert self.imm is not None
            printer.print_float(self.imm.value.data, f32)
        printer.print_string(" -> ")
        print_access(printer, "lx", self.dst)
        printer.print_string(" sizes ")
        self.sizes.print_parameters(printer)

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("lhs", self.lhs, sizes)
        self._check_access("dst", self.dst, sizes)
        if (self.rhs is None) == (self.imm is None):
            raise VerifyException(f"'{self.name}': needs exactly one of an LX rhs and an immediate")
        if self.imm is not None and not isinstance(self.imm.type, Float32Type):
            raise VerifyException(f"'{self.name}': the immediate must be f32, got {self.imm}")
        if self.rhs is not None:
            self._check_access("rhs", self.rhs, sizes)


def _unary(name: str, fn: str, doc: str) -> type[SfpUnaryOp]:
    cls = type(
        f"Sfp{fn.capitalize()}Op",
        (SfpUnaryOp,),
        {
            "name": name,
            "FUNCTION": fn,
            "__annotations__": {"FUNCTION": ClassVar[str]},
            "__doc__": doc,
            "__module__": __name__,
        },
    )
    return irdl_op_definition(cls)


def _binary(name: str, fn: str, doc: str) -> type[SfpBinaryOp]:
    cls = type(
        f"Sfp{fn.capitalize()}Op",
        (SfpBinaryOp,),
        {
            "name": name,
            "FUNCTION": fn,
            "__annotations__": {"FUNCTION": ClassVar[str]},
            "__doc__": doc,
            "__module__": __name__,
        },
    )
    return irdl_op_definition(cls)


SfpCopyOp = _unary("spyre_isa.sfp_copy", "copy", "dst = src   (converts between f32 and f16 on the way)")
SfpNegOp = _unary("spyre_isa.sfp_neg", "neg", "dst = -src")
SfpExpOp = _unary("spyre_isa.sfp_exp", "exp", "dst = exp(src)   (transcendental path)")
SfpErfOp = _unary("spyre_isa.sfp_erf", "erf", "dst = erf(src)   (transcendental path)")
SfpTanhOp = _unary("spyre_isa.sfp_tanh", "tanh", "dst = tanh(src)   (transcendental path)")
SfpLogOp = _unary("spyre_isa.sfp_log", "log", "dst = log(src)   (transcendental path)")
SfpSqrtOp = _unary("spyre_isa.sfp_sqrt", "sqrt", "dst = sqrt(src)   (transcendental path)")
SfpRsqrtOp = _unary("spyre_isa.sfp_rsqrt", "rsqrt", "dst = 1 / sqrt(src)   (transcendental path)")
SfpSinOp = _unary("spyre_isa.sfp_sin", "sin", "dst = sin(src)   (transcendental path)")
SfpCosOp = _unary("spyre_isa.sfp_cos", "cos", "dst = cos(src)   (transcendental path)")
SfpAbsOp = _unary("spyre_isa.sfp_abs", "abs", "dst = |src|")
SfpRecipOp = _unary("spyre_isa.sfp_recip", "recip", "dst = 1 / src   (transcendental path)")
SfpAddOp = _binary("spyre_isa.sfp_add", "add", "dst = lhs + rhs")
SfpSubOp = _binary("spyre_isa.sfp_sub", "sub", "dst = lhs - rhs")
SfpMulOp = _binary("spyre_isa.sfp_mul", "mul", "dst = lhs * rhs")
SfpDivOp = _binary("spyre_isa.sfp_div", "div", "dst = lhs / rhs")
SfpMaxOp = _binary("spyre_isa.sfp_max", "max", "dst = max(lhs, rhs)   (NaN-propagating)")
SfpMinOp = _binary("spyre_isa.sfp_min", "min", "dst = min(lhs, rhs)   (NaN-propagating)")

SFP_UNARY: dict[str, type[SfpUnaryOp]] = {
    c.FUNCTION: c
    for c in (
        SfpCopyOp,
        SfpNegOp,
        SfpExpOp,
        SfpErfOp,
        SfpTanhOp,
        SfpLogOp,
        SfpSqrtOp,
        SfpRsqrtOp,
        SfpSinOp,
        SfpCosOp,
        SfpAbsOp,
        SfpRecipOp,
    )
}
SFP_BINARY: dict[str, type[SfpBinaryOp]] = {
    c.FUNCTION: c for c in (SfpAddOp, SfpSubOp, SfpMulOp, SfpDivOp, SfpMaxOp, SfpMinOp)
}


@irdl_op_definition
class SfpSelectOp(IsaInstruction):
    """dst = (mask != 0) ? lhs : rhs on 64-lane vectors (masks are 0/1 tensors)."""

    name = "spyre_isa.sfp_select"
    ENGINE: ClassVar[str] = "sfp"
    mask = prop_def(AccessAttr)
    lhs = prop_def(AccessAttr)
    rhs = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)
    assembly_format = "`lx` $mask `?` `lx` $lhs `:` `lx` $rhs `->` `lx` $dst `sizes` $sizes attr-dict"

    def __init__(self, mask: AccessAttr, lhs: AccessAttr, rhs: AccessAttr, dst: AccessAttr, sizes: Sequence[int]):
        self._build(properties={"mask": mask, "lhs": lhs, "rhs": rhs, "dst": dst, "sizes": int_list(tuple(sizes))})

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        for what, acc in (("mask", self.mask), ("lhs", self.lhs), ("rhs", self.rhs), ("dst", self.dst)):
            self._check_access(what, acc, sizes)


@irdl_op_definition
class SfpTransposeOp(IsaInstruction):
    """Transpose 64 x 64 blocks of 16-bit lanes (a stick shuffle through the SFP).

        for b in range(sizes[0]):
            for i, j in 64 x 64:
                lx16[dst.base + b*dst.s0 + j*dst.s1][i] = lx16[src.base + b*src.s0 + i*src.s1][j]
    `rows` (<= 64) source sticks per block are read; missing rows read as 0.
    """

    name = "spyre_isa.sfp_transpose"
    ENGINE: ClassVar[str] = "sfp"
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    blocks = prop_def(IntegerAttr[I64])
    rows = prop_def(IntegerAttr[I64])
    cols = prop_def(IntegerAttr[I64])
    assembly_format = "`lx` $src `->` `lx` $dst `blocks` `=` $blocks `rows` `=` $rows `cols` `=` $cols attr-dict"

    def __init__(
        self, src: AccessAttr, dst: AccessAttr, blocks: int, rows: int = TRANSPOSE_BLOCK, cols: int = TRANSPOSE_BLOCK
    ):
        self._build(
            properties={
                "src": src,
                "dst": dst,
                "blocks": i64_attr(blocks),
                "rows": i64_attr(rows),
                "cols": i64_attr(cols),
            }
        )

    def verify_(self) -> None:
        block = TRANSPOSE_BLOCK
        if (
            self.blocks.value.data < 1
            or not 1 <= self.rows.value.data <= block
            or not 1 <= self.cols.value.data <= block
        ):
            raise VerifyException(
                f"'{self.name}': need blocks >= 1 and 1 <= rows, cols <= {block}, got "
                f"{self.blocks.value.data}, {self.rows.value.data}, {self.cols.value.data}"
            )
        self._check_count(self, f"blocks {self.blocks.value.data}", self.blocks.value.data)
        for what, acc in (("src", self.src), ("dst", self.dst)):
            self._check_table(f"{what} base", acc.base)
            if len(acc.strides.values) != 2 or acc.is_f32:
                raise VerifyException(f"'{self.name}': {what} must be f16 with 2 strides (block, row)")


class SfpReduceOp(IsaInstruction, ABC):
    """Reduce along the innermost loop dim and the 64 lanes; the result fills every lane.

        for outer in ndindex(sizes[:-1]):
            v = reduce(src[outer, j][l] for j < sizes[-1], l < 64 if j < sizes[-1] - 1 else l < tail)
            dst[outer][:] = v                       # lane-replicated (dst's last stride is unused)
    `tail` (<= 64) masks the padding lanes of each reduction's last vector.
    """

    ENGINE: ClassVar[str] = "sfp"
    FUNCTION: ClassVar[str]
    src = prop_def(AccessAttr)
    dst = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)
    tail = prop_def(IntegerAttr[I64])
    assembly_format = "`lx` $src `->` `lx` $dst `sizes` $sizes `tail` $tail attr-dict"

    def __init__(self, src: AccessAttr, dst: AccessAttr, sizes: Sequence[int], tail: int = F16_LANES):
        self._build(properties={"src": src, "dst": dst, "sizes": int_list(tuple(sizes)), "tail": i64_attr(tail)})

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("src", self.src, sizes)
        self._check_access("dst", self.dst, sizes)
        if not 1 <= self.tail.value.data <= F16_LANES:
            raise VerifyException(f"'{self.name}': tail must be in 1..{F16_LANES}, got {self.tail.value.data}")


@irdl_op_definition
class SfpReduceMaxOp(SfpReduceOp):
    """dst[outer][:] = max over the innermost loop and the lanes (padding lanes masked as -inf)."""

    name = "spyre_isa.sfp_reduce_max"
    FUNCTION: ClassVar[str] = "max"


@irdl_op_definition
class SfpReduceMinOp(SfpReduceOp):
    """dst[outer][:] = min over the innermost loop and the lanes (padding lanes masked as +inf)."""

    name = "spyre_isa.sfp_reduce_min"
    FUNCTION: ClassVar[str] = "min"


@irdl_op_definition
class SfpReduceSumOp(SfpReduceOp):
    """dst[outer][:] = sum over the innermost loop and the lanes in f32 (padding lanes masked as 0)."""

    name = "spyre_isa.sfp_reduce_sum"
    FUNCTION: ClassVar[str] = "sum"


# endregion
