"""The DMA engine's instructions: whole sticks between a DDR tensor and LX, along an N-D loop
nest (`dma_load`, `dma_store`) or by row at host indices (`dma_gather`, `dma_scatter`).
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import BlockArgument, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import IntListAttr, device_layout, int_list
from spyre_mlir.dialects.spyre_isa.attrs import AccessAttr, PerCoreAttr, i64_attr
from spyre_mlir.dialects.spyre_isa.program import IsaInstruction, ProgramOp, parse_access, print_access, span

# region DMA


class DmaOp(IsaInstruction, ABC):
    """Move whole sticks between a DDR tensor and LX along a loop nest.

    for i in ndindex(sizes):
        lx_stick(ddr-access/lx-access per direction)        # 128 bytes per step
    """

    ENGINE: ClassVar[str] = "dma"
    ddr = operand_def(TensorType)
    ddr_access = prop_def(AccessAttr)
    lx_access = prop_def(AccessAttr)
    sizes = prop_def(IntListAttr)

    def __init__(self, ddr: SSAValue, ddr_access: AccessAttr, lx_access: AccessAttr, sizes: Sequence[int]):
        self._build(
            operands=[ddr],
            properties={"ddr_access": ddr_access, "lx_access": lx_access, "sizes": int_list(tuple(sizes))},
        )

    def verify_(self) -> None:
        sizes = self.sizes.as_tuple()
        self._check_sizes(self, sizes)
        self._check_access("the DDR access", self.ddr_access, sizes)
        self._check_access("the LX access", self.lx_access, sizes)
        for what, acc in (("the DDR access", self.ddr_access), ("the LX access", self.lx_access)):
            if acc.is_f32:
                raise VerifyException(
                    f"'{self.name}': {what} must be f16 (DMA copies whole sticks, it does not convert)"
                )
        layout = device_layout(self.ddr.type, f"'{self.name}': the DDR operand")
        for base in self.ddr_access.base.table(1 if self.ddr_access.base.is_uniform else self.n_cores()):
            _, last = span(self.ddr_access, sizes, base)
            if last >= layout.num_sticks:
                raise VerifyException(
                    f"'{self.name}': DDR sticks up to {last} are outside the tensor "
                    f"({layout.num_sticks} sticks of {self.ddr.type})"
                )


@irdl_op_definition
class DmaLoadOp(DmaOp):
    """DDR -> LX.  for i in ndindex(sizes): lx[lx.base + i.lx.strides] = ddr[ddr.base + i.ddr.strides]"""

    name = "spyre_isa.dma_load"

    @classmethod
    def parse(cls, parser: Parser) -> DmaLoadOp:
        pos = parser.pos
        ddr = parser.parse_unresolved_operand()
        ddr_acc = AccessAttr.new(AccessAttr.parse_parameters(parser))
        parser.parse_punctuation("->")
        lx = parse_access(parser)
        parser.parse_keyword("sizes")
        sizes = IntListAttr.new(IntListAttr.parse_parameters(parser))
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (operand,) = parser.resolve_operands([ddr], [t], pos)
        return cls.create(operands=[operand], properties={"ddr_access": ddr_acc, "lx_access": lx, "sizes": sizes})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ddr)
        self.ddr_access.print_parameters(printer)
        printer.print_string(" -> ")
        print_access(printer, "lx", self.lx_access)
        printer.print_string(" sizes ")
        self.sizes.print_parameters(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.ddr.type)


@irdl_op_definition
class DmaStoreOp(DmaOp):
    """LX -> DDR.  for i in ndindex(sizes): ddr[ddr.base + i.ddr.strides] = lx[lx.base + i.lx.strides]"""

    name = "spyre_isa.dma_store"

    def verify_(self) -> None:
        super().verify_()
        stream = self.parent_op()
        prog = stream.parent_op() if stream is not None else None
        if isinstance(prog, ProgramOp) and isinstance(self.ddr, BlockArgument):
            if self.ddr.owner is prog.body.block and self.ddr.index < prog.num_inputs.data:
                raise VerifyException(
                    f"'{self.name}': stores into input {self.ddr.index} of @{prog.sym_name.data}; "
                    f"a program writes only its outputs (arguments {prog.num_inputs.data} and up)"
                )

    @classmethod
    def parse(cls, parser: Parser) -> DmaStoreOp:
        pos = parser.pos
        lx = parse_access(parser)
        parser.parse_punctuation("->")
        ddr = parser.parse_unresolved_operand()
        ddr_acc = AccessAttr.new(AccessAttr.parse_parameters(parser))
        parser.parse_keyword("sizes")
        sizes = IntListAttr.new(IntListAttr.parse_parameters(parser))
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (operand,) = parser.resolve_operands([ddr], [t], pos)
        return cls.create(operands=[operand], properties={"ddr_access": ddr_acc, "lx_access": lx, "sizes": sizes})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, "lx", self.lx_access)
        printer.print_string(" -> ")
        printer.print_operand(self.ddr)
        self.ddr_access.print_parameters(printer)
        printer.print_string(" sizes ")
        self.sizes.print_parameters(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.ddr.type)


@irdl_op_definition
class DmaGatherOp(IsaInstruction):
    """Load table rows chosen at run time by host indices (patched at launch), whole sticks:
    `row_sticks` of each row from its stick `first_stick[core]` on (0 when absent: a row's
    first sticks, or all of them).

    for r in range(count):
        v = indices.flat[index_base[core] + r]                # 0 <= v < table rows
        for j in range(row_sticks):
            c = 64 * (first_stick[core] + j)
            lx[lx.base + r*lx.s0 + j*lx.s1] = table stick holding row v, columns c..c+63
    """

    name = "spyre_isa.dma_gather"
    ENGINE: ClassVar[str] = "dma"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    index_base = prop_def(PerCoreAttr)
    count = prop_def(IntegerAttr[I64])
    row_sticks = prop_def(IntegerAttr[I64])
    first_stick = opt_prop_def(PerCoreAttr)
    lx_access = prop_def(AccessAttr)
    assembly_format = (
        "$table `[` $indices `[` $index_base `]` `count` $count `row_sticks` $row_sticks (`from_stick` $first_stick^)? "
        "`]` `->` `lx` $lx_access attr-dict `:` type($table) `,` type($indices)"
    )

    def __init__(
        self,
        table: SSAValue,
        indices: SSAValue,
        index_base: PerCoreAttr,
        count: int,
        row_sticks: int,
        lx: AccessAttr,
        first_stick: PerCoreAttr | None = None,
    ):
        self._build(
            operands=[table, indices],
            properties={
                "index_base": index_base,
                "count": i64_attr(count),
                "row_sticks": i64_attr(row_sticks),
                "lx_access": lx,
                **({"first_stick": first_stick} if first_stick is not None else {}),
            },
        )

    def reads_as_table(self, v: SSAValue) -> bool:
        return self.table is v

    def verify_(self) -> None:
        layout = device_layout(self.table.type, f"'{self.name}': the table")
        if len(layout.shape) != 2:
            raise VerifyException(f"'{self.name}': the table must be 2-D, got {layout.shape}")
        self._check_indexed_rows(self.indices, self.index_base, self.count, self.row_sticks, self.lx_access)
        if self.first_stick is not None:
            self._check_table("first_stick", self.first_stick)
            sticks, row_sticks = -(-layout.shape[1] // layout.lanes), self.row_sticks.value.data
            firsts = self.first_stick.table(1 if self.first_stick.is_uniform else self.n_cores())
            if min(firsts) < 0:
                raise VerifyException(f"'{self.name}': first_stick must be >= 0, got {min(firsts)}")
            last = max(firsts)
            if last + row_sticks > sticks:
                raise VerifyException(
                    f"'{self.name}': {row_sticks} sticks from stick {last} of a row of {layout.shape[1]} ({sticks} sticks)"
                )


@irdl_op_definition
class DmaScatterOp(IsaInstruction):
    """Store LX rows into a 3-D DDR tensor (O, L, C) at rows chosen at run time by host indices
    (patched at launch), whole sticks: the inverse of dma_gather, a KV-cache update.

    for r in range(count):
        v = indices.flat[index_base[core] + r]                 # -L <= v < L (negative: v + L)
        for j in range(row_sticks):
            stick of out holding out[outer[core], v, 64j..64j+63] = lx[lx.base + r*lx.s0 + j*lx.s1]
    """

    name = "spyre_isa.dma_scatter"
    ENGINE: ClassVar[str] = "dma"
    out = operand_def(TensorType)
    indices = operand_def(TensorType)
    index_base = prop_def(PerCoreAttr)
    outer = prop_def(PerCoreAttr)
    count = prop_def(IntegerAttr[I64])
    row_sticks = prop_def(IntegerAttr[I64])
    lx_access = prop_def(AccessAttr)
    assembly_format = (
        "`lx` $lx_access `->` $out `[` $outer `,` $indices `[` $index_base `]` `count` $count `row_sticks` $row_sticks `]` "
        "attr-dict `:` type($out) `,` type($indices)"
    )

    def __init__(
        self,
        out: SSAValue,
        indices: SSAValue,
        index_base: PerCoreAttr,
        outer: PerCoreAttr,
        count: int,
        row_sticks: int,
        lx: AccessAttr,
    ):
        self._build(
            operands=[out, indices],
            properties={
                "index_base": index_base,
                "outer": outer,
                "count": i64_attr(count),
                "row_sticks": i64_attr(row_sticks),
                "lx_access": lx,
            },
        )

    def verify_(self) -> None:
        layout = device_layout(self.out.type, f"'{self.name}': the destination")
        if len(layout.shape) != 3:
            raise VerifyException(f"'{self.name}': the destination must be 3-D (O, L, C), got {layout.shape}")
        self._check_indexed_rows(self.indices, self.index_base, self.count, self.row_sticks, self.lx_access)
        self._check_table("outer", self.outer)
        row_sticks, sticks = self.row_sticks.value.data, -(-layout.shape[2] // layout.lanes)
        if row_sticks != sticks:
            raise VerifyException(
                f"'{self.name}': row_sticks {row_sticks}, but a row of {layout.shape[2]} holds {sticks}"
            )
        for o in self.outer.table(1 if self.outer.is_uniform else self.n_cores()):
            if not 0 <= o < layout.shape[0]:
                raise VerifyException(f"'{self.name}': outer {o} out of range for {layout.shape[0]} rows of (O, L, C)")


# endregion
