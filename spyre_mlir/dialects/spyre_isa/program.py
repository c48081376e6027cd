"""The structure of a `spyre_isa` program: `spyre_isa.program` (one device program, its DDR
tensors its block arguments), `spyre_isa.stream` (the instructions a set of cores runs),
`IsaInstruction` (the base of every instruction: its engine, its checks), and the host's
`spyre_isa.launch` of a program.
"""

from __future__ import annotations

import functools
import math
from abc import ABC
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntAttr, IntegerAttr, StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    OptPropertyDef,
    VerificationContext,
    irdl_op_definition,
    opt_attr_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from spyre_mlir.dialects.spyre.attrs import check_kernel_operand, is_index_tensor
from spyre_mlir.dialects.spyre.ops import GatherTableReader
from spyre_mlir.dialects.spyre_isa.attrs import AccessAttr, CoreSetAttr, PerCoreAttr
from spyre_mlir.target.constants import MAX_LOOP_COUNT

# region Program structure


IN_PLACE_ATTR = "spyre.in_place"
"""A program's attribute: the input whose DDR buffer its one output is (ProgramOp.in_place)."""


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """One device program (a kernel launch): its DDR tensors are the block arguments,
    `inputs` of them read, the rest written; its body holds the streams of the cores.

        for each stream s, concurrently on its cores: run s's instructions in order
    """

    name = "spyre_isa.program"
    sym_name = prop_def(StringAttr)
    num_inputs = prop_def(IntAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[Attribute], num_inputs: int, body: Region | None = None):
        super().__init__(
            properties={"sym_name": StringAttr(name), "num_inputs": IntAttr(num_inputs)},
            regions=[body or Region(Block(arg_types=arg_types))],
        )

    @property
    def args(self):
        return self.body.block.args

    @property
    def in_place(self) -> int | None:
        """The input whose DDR buffer the output is (`spyre.in_place`: the program writes only part
        of it, such as a scatter's rows; the input is not read after the launch), or None."""
        attr = self.attributes.get(IN_PLACE_ATTR)
        return attr.value.data if isinstance(attr, IntegerAttr) else None

    @property
    def streams(self) -> list[StreamOp]:
        return [op for op in self.body.block.ops if isinstance(op, StreamOp)]

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        parser.parse_keyword("inputs")
        n = parser.parse_integer(allow_boolean=False, allow_negative=False)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(args)
        if not body.blocks:  # `{}` with no arguments: the program still has its (empty) block
            body.add_block(Block())
        op = cls.create(
            properties={"sym_name": StringAttr(name), "num_inputs": IntAttr(n)},
            regions=[body],
            attributes=attrs.data if attrs else {},
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data}(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(f") inputs {self.num_inputs.data}")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    def verify_(self) -> None:
        n_args = len(self.body.block.args)
        if not 0 <= self.num_inputs.data <= n_args:
            raise VerifyException(
                f"'spyre_isa.program' @{self.sym_name.data}: inputs = {self.num_inputs.data} but it has {n_args} arguments"
            )
        for i, a in enumerate(self.body.block.args):
            check_kernel_operand(a.type, f"'spyre_isa.program' @{self.sym_name.data}: argument {i}")
        for name in ("spyre.resident_in", "spyre.resident_out"):  # LX [lo, hi) sticks kept between launches
            attr = self.attributes.get(name)
            if attr is None:
                continue
            values = attr.get_values() if isinstance(attr, DenseArrayBase) else None
            if values is None or len(values) != 2 or not 0 <= values[0] < values[1]:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: {name} must be array<i64: lo, hi> with 0 <= lo < hi (LX sticks), got {attr}"
                )
        in_place = self.in_place
        if IN_PLACE_ATTR in self.attributes:
            outs = n_args - self.num_inputs.data
            if in_place is None or outs != 1 or not 0 <= in_place < self.num_inputs.data:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: {IN_PLACE_ATTR} must be an i64 input index of a "
                    f"program with one output, got {self.attributes[IN_PLACE_ATTR]}"
                )
            if self.args[in_place].type != self.args[-1].type:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: its output is written in input {in_place}'s buffer "
                    f"({IN_PLACE_ATTR}), so their types must be equal: {self.args[in_place].type} != {self.args[-1].type}"
                )
        seen: set[int] = set()
        for op in self.body.block.ops:
            if not isinstance(op, StreamOp):
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: only streams may appear at its top level, found '{op.name}'"
                )
            overlap = seen.intersection(op.core_list)
            if overlap:
                raise VerifyException(
                    f"'spyre_isa.program' @{self.sym_name.data}: core {min(overlap)} is in two streams"
                )
            seen.update(op.core_list)


@irdl_op_definition
class StreamOp(IRDLOperation):
    """The instruction list that each of a set of cores runs (SPMD); per-core operands
    (bases, ring shifts, tokens) are tables over `cores` in order.

    Each core runs the list in order at its own pace; cores meet only through tokens and
    barriers. A stream that does not both wait for tokens (`wait`, a ring send's `after`)
    and produce them (`signal`, `notify`), with one token per instruction for all its cores,
    runs the same as if its cores moved in lockstep (nothing it waits for can come from its
    own progress), and the device model runs it so; any other stream (a multicast chain,
    whose cores pass tiles on to each other) runs core by core."""

    name = "spyre_isa.stream"
    cores = prop_def(CoreSetAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), HasParent(ProgramOp))
    assembly_format = "`cores` $cores attr-dict-with-keyword $body"

    def __init__(self, cores: Sequence[int], instructions: Sequence[Operation] = ()):
        super().__init__(properties={"cores": CoreSetAttr(cores)}, regions=[Region(Block(instructions))])

    @property
    def core_list(self) -> tuple[int, ...]:
        return self.cores.as_tuple()

    def verify_(self) -> None:
        for op in self.body.block.ops:
            if not isinstance(op, IsaInstruction):
                raise VerifyException(
                    f"'spyre_isa.stream' on cores {list(self.core_list)}: only instructions may appear in a stream, "
                    f"found '{op.name}'"
                )


# endregion
# region Instruction bases


class IsaInstruction(IRDLOperation, ABC):
    """An instruction of a stream; `ENGINE` names the unit that executes it."""

    ENGINE: ClassVar[str]
    traits = traits_def(HasParent(StreamOp))
    OWN_CHECKS: ClassVar[Callable[[IsaInstruction], None]]
    """The instruction class's own verify_, before irdl_op_definition wraps it."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        # the instruction's own checks, before irdl_op_definition wraps them into verify_
        # with the generic ones (`verify` below calls them apart)
        super().__init_subclass__(**kwargs)
        cls.OWN_CHECKS = cls.verify_

    def reads_as_table(self, v: SSAValue) -> bool:
        """Whether the instruction reads `v` as a table whose rows it picks (a gather)."""
        return False

    def verify(self, verify_nested_ops: bool = True) -> None:
        """Operation.verify, with IRDL's generic checks done as an instruction's definition
        allows: a BERT layer's programs hold ~20k instructions, and the generic checks of
        operand, result, region and successor counts cost twice the rest. An instruction
        with no operands, results, regions or successors, only its defined properties (each
        of its kind) and a stream as parent takes its own checks alone; any other op, and
        any deviation, takes xDSL's whole verification, so the error is the usual one.

            well formed(op) = no operands, results, regions, successors
                              and every required property present, none undefined,
                              each meeting its constraint, parent a spyre_isa.stream
            verify(op)      = own checks of op          if well formed(op)
                              Operation.verify(op)      otherwise"""
        if not _well_formed(self):
            super().verify(verify_nested_ops)
            return
        try:
            type(self).OWN_CHECKS(self)
        except VerifyException as err:
            self.emit_error(f"Operation does not verify: {err}", err)

    def _build(self, properties: Mapping[str, Attribute | None], operands: Sequence[SSAValue] = ()) -> None:
        """The op from its properties (None: absent) and operands: Operation.__init__ without
        irdl_op_init's argument building, which costs more than the rest of an instruction's
        construction (a BERT layer's programs hold ~20k). Instructions have fixed operands
        and no results, regions, successors or segment sizes: both build the same op, and
        verify() checks it as for any op."""
        Operation.__init__(self, operands=operands, properties={k: v for k, v in properties.items() if v is not None})

    def n_cores(self) -> int:
        parent = self.parent_op()
        if not isinstance(parent, StreamOp):
            raise VerifyException(f"'{self.name}' must be inside a spyre_isa.stream")
        return len(parent.cores.cores.data)  # (not core_list: a tuple built per call)

    def _check_table(self, what: str, pc: PerCoreAttr) -> None:
        n = self.n_cores()
        if len(pc.values) not in (1, n):
            raise VerifyException(f"'{self.name}': {what} has {len(pc.values)} entries for a stream of {n} cores")

    def _check_tokens(self, what: str, tokens: PerCoreAttr) -> None:
        self._check_table(what, tokens)
        bad = [v.data for v in tokens.values if v.data < 0]
        if bad:
            name = what if what.endswith("token") else f"{what} token"
            raise VerifyException(f"'{self.name}': {name} must be >= 0, got {bad[0]}")

    def _check_access(self, what: str, acc: AccessAttr, sizes: Sequence[int]) -> None:
        self._check_table(f"{what} base", acc.base)
        if len(acc.strides.values) != len(sizes):
            raise VerifyException(
                f"'{self.name}': {what} has {len(acc.strides.values)} strides for a loop nest of {len(sizes)} dims"
            )

    @staticmethod
    def _check_sizes(op: Operation, sizes: Sequence[int]) -> None:
        if not sizes or any(s < 1 for s in sizes):
            raise VerifyException(f"'{op.name}': loop sizes must be >= 1, got {list(sizes)}")
        for i, s in enumerate(sizes):
            IsaInstruction._check_count(op, f"loop size {s} (dim {i} of {list(sizes)})", s)

    def _check_indexed_rows(
        self,
        indices: SSAValue,
        index_base: PerCoreAttr,
        count: IntegerAttr,
        row_sticks: IntegerAttr,
        lx_access: AccessAttr,
    ) -> None:
        """The checks of a DMA of `count` rows of `row_sticks` sticks each at host indices
        (dma_gather, dma_scatter): the indices a host integer tensor, each core's `count` of them
        from its `index_base` inside it, the LX access in bounds."""
        ty = indices.type
        if not is_index_tensor(ty) or not isinstance(ty, TensorType):
            raise VerifyException(f"'{self.name}': indices must be a host integer tensor, got {ty}")
        self._check_table("index base", index_base)
        n_rows, sticks = count.value.data, row_sticks.value.data
        if n_rows < 1 or sticks < 1:
            raise VerifyException(f"'{self.name}': count and row_sticks must be >= 1")
        self._check_count(self, f"count {n_rows}", n_rows)
        self._check_count(self, f"row_sticks {sticks}", sticks)
        self._check_access("the LX access", lx_access, [n_rows, sticks])
        n = math.prod(ty.get_shape())
        for base in index_base.table(1 if index_base.is_uniform else self.n_cores()):
            if base + n_rows > n:
                raise VerifyException(f"'{self.name}': indices {base}..{base + n_rows - 1} past the {n} given")

    @staticmethod
    def _check_count(op: Operation, what: str, value: int) -> None:
        if value > MAX_LOOP_COUNT:
            raise VerifyException(
                f"'{op.name}': {what} exceeds the instruction format: its 16-bit count fields hold at most {MAX_LOOP_COUNT}"
            )


@functools.cache
def _property_checks(cls: type[IsaInstruction]) -> tuple[frozenset[str], tuple[tuple[str, bool, Any], ...]] | None:
    """(defined property names, (name, required, base type or constraint) per property) of
    an instruction class, or None if its definition has anything else to check (operands,
    results, regions, successors, attributes, traits beyond its parent)."""
    d = cls.get_irdl_definition()
    if d.operands or d.results or d.regions or d.successors or d.attributes or d.options:
        return None
    if any(not (isinstance(t, HasParent) and t.op_types == (StreamOp,)) for t in d.traits):
        return None
    checks = tuple(
        (
            name,
            not isinstance(pdef, OptPropertyDef),
            pdef.constr.attr if isinstance(pdef.constr, BaseAttr) else pdef.constr,
        )
        for name, pdef in d.properties.items()
    )
    return frozenset(d.properties), checks


def _well_formed(op: IsaInstruction) -> bool:
    """Whether `op` passes IRDL's generic checks, tested the quick way (IsaInstruction.verify)."""
    checks = _property_checks(type(op))
    if checks is None or op.operands or op.results or op.regions or op.successors:
        return False
    if not isinstance(op.parent_op(), StreamOp):
        return False
    names, props = checks
    given = op.properties
    if not names.issuperset(given):
        return False
    for name, required, kind in props:
        value = given.get(name)
        if value is None:
            if required:
                return False
        elif isinstance(kind, type):
            if not isinstance(value, kind):
                return False
        elif not _meets(kind, value):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _meets(constraint: Any, value: Attribute) -> bool:
    """Whether an attribute meets a property's constraint (memoised: a program's integer
    properties take a few distinct values, and attributes are immutable)."""
    try:
        constraint.verify(value, VerificationContext())
    except VerifyException:
        return False
    return True


def print_access(printer: Printer, memory: str, acc: AccessAttr) -> None:
    printer.print_string(memory + " ")
    acc.print_parameters(printer)


def parse_access(parser: Parser) -> AccessAttr:
    parser.parse_keyword("lx")
    return AccessAttr.new(AccessAttr.parse_parameters(parser))


def span(acc: AccessAttr, sizes: Sequence[int], base: int) -> tuple[int, int]:
    """[first, last] stick an access touches for one core's base (f32 SFP steps add one)."""
    last = base + sum((n - 1) * s for n, s in zip(sizes, acc.strides.as_tuple()))
    return base, last


# endregion


# region Host side


@irdl_op_definition
class LaunchOp(IRDLOperation, GatherTableReader):
    """Run a program on the device (host side): allocate its outputs in DDR, patch its
    DDR arguments to the tensors given, execute its streams, return the outputs."""

    name = "spyre_isa.launch"
    program = prop_def(SymbolRefAttr)
    kernel = opt_attr_def(Attribute)
    """A string: the kernel this launch runs, when its program was lowered for an identical kernel of
    another name (a model's repeated layers share one program); profiles name the launch by it."""
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    assembly_format = "$program `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"

    def __init__(
        self, program: str, inputs: Sequence[SSAValue], output_types: Sequence[Attribute], kernel: str | None = None
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={"program": SymbolRefAttr(program)},
            attributes={"kernel": StringAttr(kernel)} if kernel is not None and kernel != program else {},
        )

    @property
    def kernel_name(self) -> str:
        """The name profiles give this launch: its kernel's, else its program's."""
        return self.kernel.data if isinstance(self.kernel, StringAttr) else self.program.root_reference.data

    def reads_only_as_table(self, operand: int) -> bool:
        """Whether the program reads input `operand` only as the table of its gathers."""
        prog = SymbolTable.lookup_symbol(self, self.program)
        if not isinstance(prog, ProgramOp) or operand >= prog.num_inputs.data:
            return False
        arg = prog.args[operand]
        return bool(arg.uses) and all(
            isinstance(u.operation, IsaInstruction) and u.operation.reads_as_table(arg) for u in arg.uses
        )

    def verify_(self) -> None:
        if self.kernel is not None and not isinstance(self.kernel, StringAttr):
            raise VerifyException(f"'{self.name}': kernel must be a string (the kernel's name), not {self.kernel}")
        prog = SymbolTable.lookup_symbol(self, self.program)
        if not isinstance(prog, ProgramOp):
            raise VerifyException(f"'{self.name}': no spyre_isa.program named {self.program}")
        want = [a.type for a in prog.args]
        have = [v.type for v in (*self.inputs, *self.outputs)]
        if want != have or len(self.inputs) != prog.num_inputs.data:
            raise VerifyException(
                f"'{self.name}': {self.program} takes {prog.num_inputs.data} inputs and "
                f"{len(want) - prog.num_inputs.data} outputs of types ({', '.join(map(str, want))})"
            )


# endregion
